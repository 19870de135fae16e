/*
** launch.c -- fa4_forward: this call's sizes against the plan's class,
** the kernel's argument block, the workspace, then the family's launch
** (launch_sm80.c, launch_sm90.c, launch_sm100.c).  Takes no lock,
** allocates nothing.
*/
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "plan.h"
#include "check_inputs.h"
#include "launch_sm90.h"
#include "config.h"
#include "jit.h"

typedef fa4_status (*family_launch)(const fa4_plan *, const launch_call *, fa4_stream);

/* Each family's launch.  sm100 plans exist on a real device only with the
** opt-in (budget_fit()), as its kernels have never run on one. */
static const struct {
    fa4_family family;
    family_launch launch;
} launchers[] = {
    { FA4_FAMILY_SM80, launch_sm80 },
    { FA4_FAMILY_SM90, launch_sm90 },
    { FA4_FAMILY_SM100, launch_sm100 },
};

fa4_status launch_kernel_cluster(const fa4_plan *plan, CUfunction fn, const unsigned grid[3],
                                 unsigned cluster, int threads, int smem, fa4_stream stream,
                                 void **args, const char *what)
{
    fa4_context *ctx = plan->ctx;
    CUlaunchAttribute attr;
    CUlaunchConfig lc;
    char txt[256];
    CUresult res;

    if (cluster <= 1)
        res = ctx->cu->cuLaunchKernel(fn, grid[0], grid[1], grid[2], (unsigned)threads, 1, 1,
                                      (unsigned)smem, (CUstream)stream, args, NULL);
    else {
        if (ctx->cu->cuLaunchKernelEx == NULL)
            return error_set(ctx, FA4_ENOTSUP, "cuLaunchKernelEx unavailable in this driver (%s "
                             "launches as clusters of %u)", what, cluster);
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr.value.clusterDim.x = cluster;
        attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
        memset(&lc, 0, sizeof lc);
        lc.gridDimX = grid[0];
        lc.gridDimY = grid[1];
        lc.gridDimZ = grid[2];
        lc.blockDimX = (unsigned)threads;
        lc.blockDimY = lc.blockDimZ = 1;
        lc.sharedMemBytes = (unsigned)smem;
        lc.hStream = (CUstream)stream;
        lc.attrs = &attr;
        lc.numAttrs = 1;
        res = ctx->cu->cuLaunchKernelEx(&lc, fn, args, NULL);
    }
    if (res != CUDA_SUCCESS) {
        char shape[64] = "";
        if (cluster > 1)
            snprintf(shape, sizeof shape, " in clusters of %u x 1 x 1", cluster);
        return error_set(ctx, FA4_ECUDA, "%s %s (grid %u x %u x %u%s, %d threads, %d B smem): %s",
                         cluster <= 1 ? "cuLaunchKernel" : "cuLaunchKernelEx", what, grid[0],
                         grid[1], grid[2], shape, threads, smem,
                         cuda_error_text(res, txt, sizeof txt));
    }
    return FA4_OK;
}

fa4_status launch_kernel(const fa4_plan *plan, CUfunction fn, const unsigned grid[3],
                         int threads, int smem, fa4_stream stream, void **args,
                         const char *what)
{
    return launch_kernel_cluster(plan, fn, grid, 1, threads, smem, stream, args, what);
}

/* ------------------------------------------------------------ split-KV */

#define LAUNCH_COMBINE_ROWS 4    /* kernels/common/combine.cuh FA4_COMBINE_ROWS */

/* CTAs of PLAN's kernel that fit on the whole GPU at once: by shared
** memory (1 KiB of each SM's is the system's per CTA) and, for kernels
** that allocate tensor memory (sm100), by its columns. */
static long long split_slots(const fa4_plan *plan)
{
    const device_limits *d = &plan->ctx->limits;
    int per_sm = d->smem_per_sm / (plan->layout.smem_bytes + DEVICE_SMEM_PER_CTA_RESERVED);

    if (plan->layout.tmem_columns > 0) {
        int by_tmem = (d->tmem_columns > 0 ? d->tmem_columns : 512) / plan->layout.tmem_columns;
        if (by_tmem < per_sm)
            per_sm = by_tmem;
    }
    return (long long)d->sm_count * (per_sm > 1 ? per_sm : 1);
}

/* Bytes of the split buffers per (split, head, row): float32 O and LSE. */
static size_t split_bytes(const fa4_problem *p, int splits, long long rows_cap)
{
    size_t per = (size_t)splits * (size_t)p->heads_q * (size_t)rows_cap;
    size_t o = per * (size_t)p->head_dim_v * 4;
    return (o + 15) / 16 * 16 + per * 4;
}

/* The splits of one call: the config's, or (0) as many as keep the CTAs
** within one wave of the GPU's slots (floor: a 1.2-wave grid runs at the
** speed of two) when the tiles alone fill less than half of it.  Never
** more than the workspace of WS_BYTES holds. */
static int split_count(const fa4_plan *plan, const fa4_problem *p, long long tiles,
                       long long rows_cap, size_t ws_bytes)
{
    long long slots = split_slots(plan);
    long long blocks = ((long long)p->seqlen_k + plan->config.bn - 1) / plan->config.bn;
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
    while (s > 1 && split_bytes(p, (int)s, rows_cap) > ws_bytes)
        s--;
    return s < 1 ? 1 : (int)s;
}

size_t launch_split_workspace(const fa4_plan *plan)
{
    const fa4_problem *p = &plan->problem;
    long long rows_cap = (long long)p->batch * p->seqlen_q;
    long long bound;

    if (plan->config.splits == 1)
        return 0;
    if (plan->config.splits > 1)
        return split_bytes(p, plan->config.splits, rows_cap);
    /* Chosen per call: s * tiles <= slots, and a tile covers at most bm
       (row, head) pairs, so splits * heads_q * rows is at most slots * bm
       (and never above 128 splits of the plan's largest call). */
    bound = split_slots(plan) * plan->config.bm;
    if (bound > (long long)CONFIG_MAX_SPLITS * p->heads_q * rows_cap)
        bound = (long long)CONFIG_MAX_SPLITS * p->heads_q * rows_cap;
    return split_bytes(p, 1, (bound + p->heads_q - 1) / p->heads_q);
}

void launch_split_setup(fa4_serving *s, const fa4_plan *plan, const fa4_problem *p,
                        long long tiles, size_t ws_bytes, unsigned long long workspace)
{
    const long long rows_cap = (long long)p->batch * p->seqlen_q;

    s->num_splits = split_count(plan, p, tiles, rows_cap, ws_bytes);
    s->rows_cap = (int)rows_cap;
    if (s->num_splits > 1) {
        size_t o_bytes = (size_t)s->num_splits * p->heads_q * rows_cap * p->head_dim_v * 4;
        s->o_partial = workspace;
        s->lse_partial = workspace + (o_bytes + 15) / 16 * 16;
    }
}

fa4_status launch_combine_rows(const fa4_plan *plan, long long rows, unsigned gy, unsigned gz,
                               void **args, fa4_stream stream)
{
    const unsigned grid[3] = {
        (unsigned)((rows + LAUNCH_COMBINE_ROWS - 1) / LAUNCH_COMBINE_ROWS), gy, gz
    };

    return launch_kernel(plan, plan->fn_combine, grid, 32 * LAUNCH_COMBINE_ROWS, 0, stream, args,
                         JIT_COMBINE_NAME);
}

fa4_status launch_combine(const fa4_plan *plan, const fa4_problem *p, void **args,
                          fa4_stream stream)
{
    return launch_combine_rows(plan, p->seqlen_q, (unsigned)p->heads_q, (unsigned)p->batch, args,
                               stream);
}

void launch_serving_block(fa4_serving *s, const fa4_problem *p, const fa4_tensors *t)
{
    memset(s, 0, sizeof *s);
    if (p->varlen) {
        s->cu_seqlens_q = (unsigned long long)(uintptr_t)t->cu_seqlens_q;
        if (!p->page_size)
            s->cu_seqlens_k = (unsigned long long)(uintptr_t)t->cu_seqlens_k;
    }
    s->seqused_k = (unsigned long long)(uintptr_t)TENSORS_FIELD(t, seqused_k);
    if (p->page_size) {
        s->block_table = (unsigned long long)(uintptr_t)t->block_table;
        s->block_table_stride = p->block_table_stride;
        while ((1 << s->page_shift) < p->page_size)
            s->page_shift++;
    }
    s->num_splits = 1;
}

/* Contiguous BSHD strides of a [*, ROWS, HEADS, DIM] tensor. */
static void contiguous(int64_t s[3], int rows, int heads, int dim)
{
    s[2] = dim;
    s[1] = (int64_t)heads * dim;
    s[0] = (int64_t)rows * heads * dim;
}

/* CALL->problem: the plan's, with T's sizes (each at most the plan's). */
static fa4_status call_problem(launch_call *call, const fa4_plan *plan, const fa4_tensors *t)
{
    const fa4_problem *pp = &plan->problem;
    fa4_problem *p = &call->problem;
    const int sizes[3] = { TENSORS_FIELD(t, seqlen_q), TENSORS_FIELD(t, seqlen_k),
                           TENSORS_FIELD(t, batch) };
    const int limits[3] = { pp->seqlen_q, pp->seqlen_k, pp->batch };
    static const char *names[3] = { "seqlen_q", "seqlen_k", "batch" };
    int i, kv_rows;

    for (i = 0; i < 3; i++)
        if (sizes[i] < 0 || sizes[i] > limits[i])
            return error_set(plan->ctx, FA4_EINVAL, "tensors.%s=%d: must be 0 (the plan's) or "
                             "1..%d (the plan's %s)", names[i], sizes[i], limits[i], names[i]);
    *p = *pp;
    if (sizes[0])
        p->seqlen_q = sizes[0];
    if (sizes[1])
        p->seqlen_k = sizes[1];
    if (sizes[2])
        p->batch = sizes[2];
    kv_rows = p->page_size > 0 ? p->page_size : p->seqlen_k;
    if (plan->default_strides[0])
        contiguous(p->q_strides, p->seqlen_q, p->heads_q, p->head_dim_qk);
    if (plan->default_strides[1])
        contiguous(p->k_strides, kv_rows, p->heads_kv, p->head_dim_qk);
    if (plan->default_strides[2])
        contiguous(p->v_strides, kv_rows, p->heads_kv, p->head_dim_v);
    if (plan->default_strides[3])
        contiguous(p->o_strides, p->seqlen_q, p->heads_q, p->head_dim_v);
    return FA4_OK;
}

/* The argument block of the dense kernels for problem P and tensors T. */
static void fill_params(fa4_params *k, const fa4_problem *p, const fa4_config *cfg,
                        const fa4_tensors *t)
{
    memset(k, 0, sizeof *k);
    k->q = (unsigned long long)(uintptr_t)t->q;
    k->k = (unsigned long long)(uintptr_t)t->k;
    k->v = (unsigned long long)(uintptr_t)t->v;
    k->o = (unsigned long long)(uintptr_t)t->o;
    k->lse = p->return_lse ? (unsigned long long)(uintptr_t)t->lse : 0;
    k->q_batch_stride = p->q_strides[0];
    k->q_row_stride = p->q_strides[1];
    k->q_head_stride = p->q_strides[2];
    k->k_batch_stride = p->k_strides[0];
    k->k_row_stride = p->k_strides[1];
    k->k_head_stride = p->k_strides[2];
    k->v_batch_stride = p->v_strides[0];
    k->v_row_stride = p->v_strides[1];
    k->v_head_stride = p->v_strides[2];
    k->o_batch_stride = p->o_strides[0];
    k->o_row_stride = p->o_strides[1];
    k->o_head_stride = p->o_strides[2];
    k->batch = p->batch;
    k->seqlen_q = p->seqlen_q;
    k->seqlen_k = p->seqlen_k;
    k->heads_q = p->heads_q;
    k->heads_kv = p->heads_kv;
    k->group = p->heads_q / p->heads_kv;
    k->scale_log2 = (float)(p->softmax_scale * 1.4426950408889634);
    if (p->softcap > 0) {
        k->scale_log2 = (float)(p->softcap * 1.4426950408889634);
        k->softcap_pre = p->softmax_scale / p->softcap;
    }
    k->sinks = p->attention_sinks ? (unsigned long long)(uintptr_t)TENSORS_FIELD(t, sinks) : 0;
    if (p->dtype == FA4_DTYPE_FP8_E4M3) {
        k->q_descale = (unsigned long long)(uintptr_t)TENSORS_FIELD(t, q_descale);
        k->k_descale = (unsigned long long)(uintptr_t)TENSORS_FIELD(t, k_descale);
        k->v_descale = (unsigned long long)(uintptr_t)TENSORS_FIELD(t, v_descale);
    }
    if (p->token_scales) {
        k->q_token_scale = (unsigned long long)(uintptr_t)TENSORS_FIELD(t, q_token_scale);
        k->k_token_scale = (unsigned long long)(uintptr_t)TENSORS_FIELD(t, k_token_scale);
    }
    k->window_left = p->window_left;
    k->window_right = p->window_right;
    /* Within int for the sm90 family's tiles (bm >= 64): problem_resolve()
       bounds batch x heads_q x ceil(seqlen_q / 64) below 2^31.  The sm80
       grid checks its own (bm 16 and 32). */
    k->m_blocks = (int)launch_m_blocks(p, cfg);
    k->total_tiles = k->m_blocks * (cfg->pack_gqa ? p->heads_kv : p->heads_q) * p->batch;
}

long long launch_m_blocks(const fa4_problem *p, const fa4_config *cfg)
{
    const long long rows = (long long)p->seqlen_q * (cfg->pack_gqa ? problem_group(p) : 1);
    return (rows + cfg->bm - 1) / cfg->bm;
}

/* 1 when PTR is NULL or not ALIGN-byte aligned. */
static int bad_pointer(const void *ptr, unsigned align)
{
    return !ptr || ((uintptr_t)ptr & (align - 1)) != 0;
}

/* The serving pointers PROBLEM needs are present and int32-aligned. */
static fa4_status check_serving_pointers(const fa4_plan *plan, const fa4_tensors *t)
{
    const fa4_problem *p = &plan->problem;
    const int32_t *used = TENSORS_FIELD(t, seqused_k);

    if (p->varlen && bad_pointer(t->cu_seqlens_q, 4))
        return error_set(plan->ctx, FA4_EINVAL, "problem.varlen=1 but tensors.cu_seqlens_q is NULL or not 4-byte aligned");
    if (p->varlen && !p->page_size && bad_pointer(t->cu_seqlens_k, 4))
        return error_set(plan->ctx, FA4_EINVAL, "problem.varlen=1 (K/V not paged) but tensors.cu_seqlens_k is "
                         "NULL or not 4-byte aligned");
    if (p->page_size && bad_pointer(t->block_table, 4))
        return error_set(plan->ctx, FA4_EINVAL, "problem.page_size=%d but tensors.block_table is NULL or not "
                         "4-byte aligned", p->page_size);
    if (p->attention_sinks && bad_pointer(TENSORS_FIELD(t, sinks), 4))
        return error_set(plan->ctx, FA4_EINVAL, "problem.attention_sinks=1 but tensors.sinks is NULL "
                         "or not 4-byte aligned");
    if (p->token_scales && (bad_pointer(TENSORS_FIELD(t, q_token_scale), 4) ||
                            bad_pointer(TENSORS_FIELD(t, k_token_scale), 4)))
        return error_set(plan->ctx, FA4_EINVAL, "problem.token_scales=1 but tensors.%s is "
                         "NULL or not 4-byte aligned",
                         bad_pointer(TENSORS_FIELD(t, q_token_scale), 4) ? "q_token_scale"
                                                                         : "k_token_scale");
    if (used && ((uintptr_t)used & 3) != 0)
        return error_set(plan->ctx, FA4_EINVAL, "tensors.seqused_k is not 4-byte aligned");
    if (p->dtype == FA4_DTYPE_FP8_E4M3 &&
        (((uintptr_t)TENSORS_FIELD(t, q_descale) | (uintptr_t)TENSORS_FIELD(t, k_descale) |
          (uintptr_t)TENSORS_FIELD(t, v_descale)) & 3) != 0)
        return error_set(plan->ctx, FA4_EINVAL, "tensors.q_descale, k_descale or v_descale is "
                         "not 4-byte aligned");
    if (used && plan->config.family != FA4_FAMILY_SM80 && !p->varlen && !p->page_size)
        return error_set(plan->ctx, FA4_ENOTSUP, "tensors.seqused_k: the %s family reads it for "
                         "varlen and paged problems only; plan with the sm80 family",
                         plan->config.family == FA4_FAMILY_SM90 ? "sm90" : "sm100");
    return FA4_OK;
}

/* The workspace bytes the call of problem P needs: the sm90 family's at
** this call's sizes (launch_sm90.h), else the plan's size. */
static size_t workspace_need(const fa4_plan *plan, const fa4_problem *p)
{
    const size_t ws90 = plan->config.family == FA4_FAMILY_SM90
                        ? launch_sm90_workspace(p, &plan->config, plan->ctx->limits.sm_count) : 0;
    return ws90 ? ws90 : plan->workspace_bytes;
}

fa4_status fa4_forward(const fa4_plan *plan, const fa4_tensors *t, fa4_stream stream)
{
    fa4_context *ctx;
    launch_call call;
    const void *ws;
    size_t i;
    fa4_status st;

    if (!plan)
        return FA4_EINVAL;
    ctx = plan->ctx;
    if (!t || t->struct_size < offsetof(fa4_tensors, cu_seqlens_q))
        return error_set(ctx, FA4_EINVAL, "tensors is NULL or its struct_size is too small; use FA4_TENSORS_INIT");
    if (!plan->fn)
        return error_set(ctx, FA4_ENOTSUP, "plan was made in a plan_only context for %s: it cannot be launched",
                         ctx->limits.arch);
    if (bad_pointer(t->q, 16) || bad_pointer(t->k, 16) || bad_pointer(t->v, 16) || bad_pointer(t->o, 16))
        return error_set(ctx, FA4_EINVAL, "%s pointer is NULL or not 16-byte aligned",
                         bad_pointer(t->q, 16) ? "q" : bad_pointer(t->k, 16) ? "k" : bad_pointer(t->v, 16) ? "v" : "o");
    if (plan->problem.return_lse && bad_pointer(t->lse, 16))
        return error_set(ctx, FA4_EINVAL, "problem.return_lse=1 but lse is NULL or not 16-byte aligned");
    if ((st = check_serving_pointers(plan, t)) != FA4_OK)
        return st;
    ws = TENSORS_FIELD(t, workspace);
    if (ws && ((uintptr_t)ws & 15) != 0)
        return error_set(ctx, FA4_EINVAL, "workspace is not 16-byte aligned");
    if ((st = call_problem(&call, plan, t)) != FA4_OK)
        return st;
    if (ws && TENSORS_FIELD(t, workspace_size) &&
        TENSORS_FIELD(t, workspace_size) < workspace_need(plan, &call.problem))
        return error_set(ctx, FA4_EINVAL, "tensors.workspace_size=%zu B < %zu B this call needs "
                         "(fa4_plan_workspace_size: %zu B for the plan's maxima)",
                         TENSORS_FIELD(t, workspace_size), workspace_need(plan, &call.problem),
                         plan->workspace_bytes);
    if (check_inputs_enabled(ctx) && (st = check_inputs(plan, &call.problem, t, stream)) != FA4_OK)
        return st;
    fill_params(&call.params, &call.problem, &plan->config, t);
    call.tensors = t;
    call.workspace = ws ? (unsigned long long)(uintptr_t)ws : plan->workspace;
    for (i = 0; i < sizeof launchers / sizeof launchers[0]; i++)
        if (launchers[i].family == plan->config.family) {
            /* One push for the call's map encodes and launches: each pair
               costs host time a decode step cannot spare. */
            if ((st = context_push(ctx)) != FA4_OK)
                return st;
            st = launchers[i].launch(plan, &call, stream);
            context_pop(ctx);
            return st;
        }
    return error_set(ctx, FA4_ENOTSUP, "no launch for kernel family %d", (int)plan->config.family);
}
