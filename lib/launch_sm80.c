/*
** launch_sm80.c -- host side of the sm80 family: the serving block
** (kernels/common/serving.h), the number of KV splits of this call, and
** the two launches of a split call (fa4_fwd, then fa4_combine; the split
** helpers are launch.c's, shared with the sm100 decode mode).
*/
#include <stdint.h>
#include <string.h>
#include "plan.h"
#include "config.h"

fa4_status launch_sm80(const fa4_plan *plan, const launch_call *call, fa4_stream stream)
{
    const fa4_problem *p = &call->problem;
    fa4_params params = call->params;
    fa4_serving s;
    void *args[2];
    unsigned grid[3];
    const int heads_grid = plan->config.pack_gqa ? p->heads_kv : p->heads_q;
    const long long m_blocks = launch_m_blocks(p, &plan->config);
    const long long tiles = m_blocks * heads_grid * p->batch;
    size_t ws_bytes = call->workspace ? plan->workspace_bytes : 0;
    fa4_status st;

    launch_serving_block(&s, p, call->tensors);
    launch_split_setup(&s, plan, p, tiles, ws_bytes, call->workspace);
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
    return launch_combine(plan, p, args, stream);
}
