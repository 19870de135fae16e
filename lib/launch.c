/*
** launch.c -- fa4_forward: fill the kernel's argument block from the plan
** and the caller's pointers, and queue the kernel.  Takes no lock.
*/
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "plan.h"
#include "launch_sm90.h"
#include "../kernels/common/params.h"

void launch_grid(const fa4_plan *plan, unsigned grid[3])
{
    const fa4_problem *p = &plan->problem;
    unsigned m_blocks = (unsigned)((p->seqlen_q + plan->config.bm - 1) / plan->config.bm);
    unsigned tiles = m_blocks * (unsigned)p->heads_q * (unsigned)p->batch;

    if (plan->config.scheduler != FA4_SCHED_PLAIN) {
        unsigned sms = (unsigned)plan->ctx->limits.sm_count;
        grid[0] = tiles < sms ? tiles : sms;
        grid[1] = grid[2] = 1;
        return;
    }
    grid[0] = m_blocks;
    grid[1] = (unsigned)p->heads_q;
    grid[2] = (unsigned)p->batch;
}

/* The argument block for PLAN and T. */
static void fill_params(fa4_params *k, const fa4_plan *plan, const fa4_tensors *t)
{
    const fa4_problem *p = &plan->problem;

    memset(k, 0, sizeof *k);
    k->q = (unsigned long long)(uintptr_t)t->q;
    k->k = (unsigned long long)(uintptr_t)t->k;
    k->v = (unsigned long long)(uintptr_t)t->v;
    k->o = (unsigned long long)(uintptr_t)t->o;
    k->lse = (unsigned long long)(uintptr_t)t->lse;
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
    k->window_left = p->window_left;
    k->window_right = p->window_right;
    k->m_blocks = (p->seqlen_q + plan->config.bm - 1) / plan->config.bm;
    k->total_tiles = k->m_blocks * p->heads_q * p->batch;
}

/* 1 when PTR is NULL or not 16-byte aligned. */
static int bad_pointer(const void *ptr)
{
    return !ptr || ((uintptr_t)ptr & 15) != 0;
}

fa4_status fa4_forward(const fa4_plan *plan, const fa4_tensors *t, fa4_stream stream)
{
    fa4_context *ctx;
    const cuda_api *cu;
    fa4_params params;
    CUtensorMap maps[4];
    void *args[5];
    unsigned grid[3];
    CUresult res;
    char why[512], txt[256];
    fa4_status st;

    if (!plan)
        return FA4_EINVAL;
    ctx = plan->ctx;
    cu = ctx->cu;
    if (!t || t->struct_size < offsetof(fa4_tensors, cu_seqlens_q))
        return error_set(ctx, FA4_EINVAL, "tensors is NULL or its struct_size is too small; use FA4_TENSORS_INIT");
    if (!plan->fn)
        return error_set(ctx, FA4_ENOTSUP, "plan was made in a plan_only context for %s: it cannot be launched",
                         ctx->limits.arch);
    if (plan->config.family == FA4_FAMILY_SM100)
        return error_set(ctx, FA4_ENOTSUP, "sm100 kernels are compiled and budget-checked only: "
                         "they have not run on an sm_100 GPU, so this version does not launch them");
    if (bad_pointer(t->q) || bad_pointer(t->k) || bad_pointer(t->v) || bad_pointer(t->o))
        return error_set(ctx, FA4_EINVAL, "%s pointer is NULL or not 16-byte aligned",
                         bad_pointer(t->q) ? "q" : bad_pointer(t->k) ? "k" : bad_pointer(t->v) ? "v" : "o");
    if (plan->problem.return_lse && bad_pointer(t->lse))
        return error_set(ctx, FA4_EINVAL, "problem.return_lse=1 but lse is NULL or not 16-byte aligned");
    fill_params(&params, plan, t);
    if (!plan->problem.return_lse)
        params.lse = 0;
    if (plan->config.scheduler == FA4_SCHED_DYNAMIC) {
        const void *ws = t->struct_size > offsetof(fa4_tensors, workspace) ? t->workspace : NULL;
        if (ws && ((uintptr_t)ws & 15) != 0)
            return error_set(ctx, FA4_EINVAL, "workspace is not 16-byte aligned");
        params.tile_counter = ws ? (unsigned long long)(uintptr_t)ws : plan->tile_counter;
    }
    launch_grid(plan, grid);
    args[0] = &params;
    if (plan->config.family != FA4_FAMILY_SM80) {
        if ((st = launch_sm90_maps(maps, cu, &plan->problem, &plan->config, &params, why, sizeof why)) != FA4_OK)
            return error_set(ctx, st, "%s", why);
        args[1] = &maps[0];
        args[2] = &maps[1];
        args[3] = &maps[2];
        args[4] = &maps[3];
    }
    if ((st = context_push(ctx)) != FA4_OK)
        return st;
    res = cu->cuLaunchKernel(plan->fn, grid[0], grid[1], grid[2], (unsigned)plan->layout.threads, 1, 1,
                             (unsigned)plan->layout.smem_bytes, (CUstream)stream, args, NULL);
    context_pop(ctx);
    if (res != CUDA_SUCCESS)
        return error_set(ctx, FA4_ECUDA, "cuLaunchKernel (grid %u x %u x %u, %d threads, %d B smem): %s",
                         grid[0], grid[1], grid[2], plan->layout.threads, plan->layout.smem_bytes,
                         cuda_error_text(res, txt, sizeof txt));
    return FA4_OK;
}
