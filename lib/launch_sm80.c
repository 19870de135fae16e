/*
** launch_sm80.c -- host side of the sm80 family: the serving block
** (kernels/common/serving.h), the number of KV splits of this call, and
** the two launches of a split call (fa4_fwd, then fa4_combine).
*/
#include <stdint.h>
#include <string.h>
#include "plan.h"
#include "config.h"

#define SM80_COMBINE_ROWS 4    /* kernels/common/combine.cuh FA4_COMBINE_ROWS */

/* CTAs of PLAN's kernel that fit on the whole GPU at once. */
static long long sm80_slots(const fa4_plan *plan)
{
    const device_limits *d = &plan->ctx->limits;
    /* 1 KiB of each SM's shared memory is the system's per CTA. */
    int per_sm = d->smem_per_sm / (plan->layout.smem_bytes + 1024);
    return (long long)d->sm_count * (per_sm > 1 ? per_sm : 1);
}

/* Query rows of one tile's row group: packed GQA puts group heads in M. */
static int sm80_group(const fa4_plan *plan, const fa4_problem *p)
{
    return plan->config.pack_gqa ? p->heads_q / p->heads_kv : 1;
}

/* Float32 entries of the split buffers per (split, head, row): O and LSE. */
static size_t sm80_split_bytes(const fa4_problem *p, int splits, long long rows_cap)
{
    size_t per = (size_t)splits * (size_t)p->heads_q * (size_t)rows_cap;
    size_t o = per * (size_t)p->head_dim_v * 4;
    return (o + 15) / 16 * 16 + per * 4;
}

/* The splits of one call: the config's, or (0) as many as keep the CTAs
** within one wave of the GPU's slots (floor: a 1.2-wave grid runs at the
** speed of two) when the tiles alone fill less than half of it.  Never
** more than the workspace of WS_BYTES holds. */
static int sm80_splits(const fa4_plan *plan, const fa4_problem *p, long long tiles,
                       long long rows_cap, size_t ws_bytes)
{
    long long slots = sm80_slots(plan), blocks = ((long long)p->seqlen_k + plan->config.bn - 1) / plan->config.bn;
    long long s = plan->config.splits;

    if (s == 0) {
        if (tiles * 2 > slots)
            return 1;
        s = slots / tiles;
    }
    if (s > blocks)
        s = blocks;
    if (s > CONFIG_MAX_SPLITS)
        s = CONFIG_MAX_SPLITS;
    while (s > 1 && sm80_split_bytes(p, (int)s, rows_cap) > ws_bytes)
        s--;
    return s < 1 ? 1 : (int)s;
}

size_t launch_sm80_workspace(const fa4_plan *plan)
{
    const fa4_problem *p = &plan->problem;
    long long rows_cap = (long long)p->batch * p->seqlen_q;
    long long bound;

    if (plan->config.splits == 1)
        return 0;
    if (plan->config.splits > 1)
        return sm80_split_bytes(p, plan->config.splits, rows_cap);
    /* Chosen per call: s * tiles <= slots, and a tile covers at most bm
       (row, head) pairs, so splits * heads_q * rows is at most slots * bm
       (and never above 128 splits of the plan's largest call). */
    bound = sm80_slots(plan) * plan->config.bm;
    if (bound > (long long)CONFIG_MAX_SPLITS * p->heads_q * rows_cap)
        bound = (long long)CONFIG_MAX_SPLITS * p->heads_q * rows_cap;
    return sm80_split_bytes(p, 1, (bound + p->heads_q - 1) / p->heads_q);
}

fa4_status launch_sm80(const fa4_plan *plan, const launch_call *call, fa4_stream stream)
{
    const fa4_problem *p = &call->problem;
    fa4_params params = call->params;
    fa4_serving s;
    void *args[2];
    unsigned grid[3];
    const int group = sm80_group(plan, p);
    const int heads_grid = plan->config.pack_gqa ? p->heads_kv : p->heads_q;
    const long long m_blocks = ((long long)p->seqlen_q * group + plan->config.bm - 1) / plan->config.bm;
    const long long rows_cap = (long long)p->batch * p->seqlen_q;
    const long long tiles = m_blocks * heads_grid * p->batch;
    size_t ws_bytes = call->workspace ? plan->workspace_bytes : 0;
    fa4_status st;

    launch_serving_block(&s, p, call->tensors);
    s.num_splits = sm80_splits(plan, p, tiles, rows_cap, ws_bytes);
    s.rows_cap = (int)rows_cap;
    if (s.num_splits > 1) {
        size_t o_bytes = (size_t)s.num_splits * p->heads_q * rows_cap * p->head_dim_v * 4;
        s.o_partial = call->workspace;
        s.lse_partial = call->workspace + (o_bytes + 15) / 16 * 16;
    }
    if (m_blocks > 0x7fffffffLL || (long long)heads_grid * s.num_splits > 65535 || p->batch > 65535)
        return error_set(plan->ctx, FA4_EINVAL, "grid %lld x %lld x %d exceeds the launch limits "
                         "(x < 2^31, y and z <= 65535)", m_blocks,
                         (long long)heads_grid * s.num_splits, p->batch);
    grid[0] = (unsigned)m_blocks;
    grid[1] = (unsigned)(heads_grid * s.num_splits);
    grid[2] = (unsigned)p->batch;
    args[0] = &params;
    args[1] = &s;
    if ((st = launch_kernel(plan, plan->fn, grid, plan->layout.threads, plan->layout.smem_bytes,
                            stream, args, "fa4_fwd")) != FA4_OK || s.num_splits == 1)
        return st;
    grid[0] = (unsigned)((p->seqlen_q + SM80_COMBINE_ROWS - 1) / SM80_COMBINE_ROWS);
    grid[1] = (unsigned)p->heads_q;
    return launch_kernel(plan, plan->fn_combine, grid, 32 * SM80_COMBINE_ROWS, 0, stream, args,
                         "fa4_combine");
}
