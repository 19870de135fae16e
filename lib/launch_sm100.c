/*
** launch_sm100.c -- the TMA maps and the launch of the sm100 family
** (launch_sm100.h).  The layout they describe is the kernel's:
** kernels/sm100/kernel.cuh.  The kernel has never run on real hardware
** (README.md, "Blackwell"); plans reach this launch only with the opt-in.
** CTA pairs (config cluster 2) launch through cuLaunchKernelEx with a
** cluster of 2 x 1 x 1, equally untested on hardware.  fp8 inputs are
** mapped as bytes (UINT8) in the config's 64 or 128 B swizzle; O in its
** 16-bit out_dtype; no workspace (V is read as stored, MN-major).
*/
#include <stdio.h>
#include <string.h>

#include "launch_sm100.h"
#include "budget_sm100.h"
#include "dtype.h"
#include "plan.h"
#include "problem.h"
#include "sm100/decode_rows.h"

long long launch_sm100_box_bytes(const sm100_map *m)
{
    return (long long)m->box[0] * m->box[1] * m->box[2] * m->box[3] * m->esize;
}

/* The axes of the maps' dims 1..3: {seq, heads, batch}, or for the decode
** mode's Q {heads, seq, batch}. */
static const char *const seq_axes[3] = { "row", "head", "batch" };
static const char *const head_axes[3] = { "head", "row", "batch" };

/* Fill one map over ADDR of a tensor with dims {DIM, D1, D2, BATCH}
** (element strides S1, S2, BSTRIDE; AXES names them), box {SWIZZLE bytes
** of elements, ROWS, 1, 1} in SWIZZLE-byte swizzle.  FA4_EINVAL with WHY
** when a stride breaks a TMA rule. */
static fa4_status describe(sm100_map *m, const char *name, const dtype_info *dt,
                           unsigned long long addr, int dim, int seq, int heads, int batch,
                           long long row, long long head, long long bstride, int rows,
                           int swizzle, const char *const axes[3], char *why, size_t wn)
{
    const long long el[3] = { row, head, bstride };
    int i;

    memset(m, 0, sizeof *m);
    m->name = name;
    m->tma_type = dt->tma_type;
    m->esize = dt->bytes;
    m->addr = addr;
    m->dims[0] = dim;
    m->dims[1] = seq;
    m->dims[2] = heads;
    m->dims[3] = batch;
    m->box[0] = swizzle / dt->bytes;
    m->box[1] = rows;
    m->box[2] = m->box[3] = 1;
    m->swizzle = swizzle;
    if (addr % 16 != 0) {
        snprintf(why, wn, "%s address 0x%llx is not 16-byte aligned (TMA)", name, addr);
        return FA4_EINVAL;
    }
    for (i = 0; i < 3; i++) {
        long long bytes = el[i] * dt->bytes;
        /* A stride over a dimension of extent 1 is never used: any legal value will do. */
        if (m->dims[i + 1] <= 1 && (bytes <= 0 || bytes % 16 != 0))
            bytes = 16;
        if (bytes <= 0 || bytes % 16 != 0 || bytes >= (1LL << 40)) {
            snprintf(why, wn, "%s %s stride %lld elements = %lld B; TMA needs a positive "
                     "multiple of 16 B below 2^40", name, axes[i], el[i], bytes);
            return FA4_EINVAL;
        }
        m->strides[i] = bytes;
    }
    return FA4_OK;
}

fa4_status launch_sm100_runs(const fa4_problem *pb, char *why, size_t wn)
{
    const dtype_info *dt = dtype_of(pb->dtype);

    if (!dt) {
        snprintf(why, wn, "sm100 kernels run bf16, fp16 and fp8 e4m3 inputs (dtype %d)",
                 (int)pb->dtype);
        return FA4_ENOTSUP;
    }
    if (pb->varlen || pb->page_size) {
        snprintf(why, wn, "sm100 kernels run dense batches only (varlen=%d page_size=%d); "
                 "plan with the sm80 or sm90 family", pb->varlen, pb->page_size);
        return FA4_ENOTSUP;
    }
    return FA4_OK;
}

/* launch_sm100_describe() of a decode-mode config (bm 32): Q's map over
** {dim, heads_q, seqlen_q, batch} with the box {64, H, T, 1} of
** kernels/sm100/decode_rows.h, K and V as the prefill's with boxes {64,
** bn}; MAPS[3] unused (O leaves by st.global). */
static fa4_status describe_decode(sm100_map maps[4], const fa4_problem *pb,
                                  const fa4_config *cfg, const fa4_params *p, char *why,
                                  size_t wn)
{
    const dtype_info *dt = dtype_of(pb->dtype);
    const int d = pb->head_dim_qk, dv = problem_head_dim_v(pb);
    const int pg = cfg->pack_gqa ? p->group : 1;
    fa4_status st;

    if (dt->bytes != 2 || cfg->swizzle != 128 || (cfg->bn != 64 && cfg->bn != 128 &&
                                                   cfg->bn != 256)) {
        snprintf(why, wn, "sm100 decode config: dtype %d, swizzle=%d, bn=%d; a launch needs "
                 "16-bit inputs, swizzle 128 and bn 64, 128 or 256 (tcgen05.mma.ws N)",
                 (int)pb->dtype, cfg->swizzle, cfg->bn);
        return FA4_EINVAL;
    }
    memset(&maps[3], 0, sizeof maps[3]);
    if ((st = describe(&maps[0], "q", dt, p->q, d, p->heads_q, p->seqlen_q, p->batch,
                       p->q_head_stride, p->q_row_stride, p->q_batch_stride,
                       sm100_decode_heads(pg), 128, head_axes, why, wn)) != FA4_OK ||
        (st = describe(&maps[1], "k", dt, p->k, d, p->seqlen_k, p->heads_kv, p->batch,
                       p->k_row_stride, p->k_head_stride, p->k_batch_stride, cfg->bn, 128,
                       seq_axes, why, wn)) != FA4_OK ||
        (st = describe(&maps[2], "v", dt, p->v, dv, p->seqlen_k, p->heads_kv, p->batch,
                       p->v_row_stride, p->v_head_stride, p->v_batch_stride, cfg->bn, 128,
                       seq_axes, why, wn)) != FA4_OK)
        return st;
    maps[0].box[2] = sm100_decode_tokens(pg);
    return FA4_OK;
}

fa4_status launch_sm100_describe(sm100_map maps[4], const fa4_problem *pb,
                                 const fa4_config *cfg, const fa4_params *p,
                                 char *why, size_t wn)
{
    const dtype_info *dt = dtype_of(pb->dtype), *ot = dtype_of(dtype_out(pb));
    const int d = pb->head_dim_qk, dv = problem_head_dim_v(pb);
    char dummy[8];
    fa4_status st;

    if (why == NULL || wn == 0) {
        why = dummy;
        wn = sizeof dummy;
    }
    why[0] = '\0';
    if ((st = launch_sm100_runs(pb, why, wn)) != FA4_OK)
        return st;
    if (cfg->bm == SM100_DECODE_BM)
        return describe_decode(maps, pb, cfg, p, why, wn);
    /* The K/V box is the kernel's FA4_BN (budget_defines() writes config->bn);
       a CTA of a pair loads FA4_BN / 2 keys of each K tile. */
    if (cfg->bn < 64 || cfg->bn > 256 || cfg->bn % 16 != 0) {
        snprintf(why, wn, "sm100 config bn=%d; a launch needs the resolved key block, a "
                 "multiple of 16 in 64..256", cfg->bn);
        return FA4_EINVAL;
    }
    if (cfg->cluster > 2) {
        snprintf(why, wn, "sm100 config cluster=%d; a launch runs one CTA (1) or a CTA pair "
                 "(2) per MMA", cfg->cluster);
        return FA4_EINVAL;
    }
    /* The box rows are the kernel's swizzle spans (FA4_SWIZZLE): 128 B for
       16-bit inputs, 64 or 128 B for fp8; O's box is one span of its
       16-bit values (kernels/sm100/correction.cuh). */
    if (dt->bytes == 2 ? cfg->swizzle != 128 : cfg->swizzle != 64 && cfg->swizzle != 128) {
        snprintf(why, wn, "sm100 config swizzle=%d; a launch needs the resolved swizzle "
                 "(%s)", cfg->swizzle, dt->bytes == 2 ? "128 for 16-bit inputs"
                                                      : "64 or 128 for fp8");
        return FA4_EINVAL;
    }
    if (!ot || ot->bytes != 2) {
        snprintf(why, wn, "sm100: out_dtype %d; O is bf16 or fp16", (int)dtype_out(pb));
        return FA4_EINVAL;
    }
    if ((st = describe(&maps[0], "q", dt, p->q, d, p->seqlen_q, p->heads_q, p->batch,
                       p->q_row_stride, p->q_head_stride, p->q_batch_stride,
                       SM100_Q_BOX_ROWS, cfg->swizzle, seq_axes, why, wn)) != FA4_OK ||
        (st = describe(&maps[1], "k", dt, p->k, d, p->seqlen_k, p->heads_kv, p->batch,
                       p->k_row_stride, p->k_head_stride, p->k_batch_stride,
                       cfg->bn / launch_sm100_pair(cfg), cfg->swizzle, seq_axes, why,
                       wn)) != FA4_OK ||
        (st = describe(&maps[2], "v", dt, p->v, dv, p->seqlen_k, p->heads_kv, p->batch,
                       p->v_row_stride, p->v_head_stride, p->v_batch_stride,
                       cfg->bn, cfg->swizzle, seq_axes, why, wn)) != FA4_OK ||
        (st = describe(&maps[3], "o", ot, p->o, dv, p->seqlen_q, p->heads_q, p->batch,
                       p->o_row_stride, p->o_head_stride, p->o_batch_stride,
                       SM100_O_BOX_ROWS, cfg->swizzle, seq_axes, why, wn)) != FA4_OK)
        return st;
    return FA4_OK;
}

fa4_status launch_sm100_encode(CUtensorMap out[4], const cuda_api *cu,
                               const sm100_map maps[4], int n, char *why, size_t wn)
{
    int m, i;

    if (cu == NULL || cu->cuTensorMapEncodeTiled == NULL) {
        snprintf(why, wn, "cuTensorMapEncodeTiled unavailable in this driver");
        return FA4_ENOTSUP;
    }
    for (m = 0; m < n; m++) {
        const sm100_map *d = &maps[m];
        cuuint64_t gdim[4], gstride[3];
        cuuint32_t box[4], estride[4] = { 1, 1, 1, 1 };
        CUresult res;

        for (i = 0; i < 4; i++) {
            gdim[i] = (cuuint64_t)d->dims[i];
            box[i] = (cuuint32_t)d->box[i];
        }
        for (i = 0; i < 3; i++)
            gstride[i] = (cuuint64_t)d->strides[i];
        memset(&out[m], 0, sizeof out[m]);
        res = cu->cuTensorMapEncodeTiled(&out[m], (CUtensorMapDataType)d->tma_type, 4,
                                         (void *)(size_t)d->addr, gdim, gstride, box, estride,
                                         CU_TENSOR_MAP_INTERLEAVE_NONE,
                                         d->swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                          : CU_TENSOR_MAP_SWIZZLE_128B,
                                         CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (res != CUDA_SUCCESS) {
            char text[128];
            snprintf(why, wn, "cuTensorMapEncodeTiled(%s: dims %lld %lld %lld %lld, strides "
                     "%lld %lld %lld B, box %d %d %d %d, swizzle %d B): %s", d->name,
                     d->dims[0], d->dims[1], d->dims[2], d->dims[3], d->strides[0],
                     d->strides[1], d->strides[2], d->box[0], d->box[1], d->box[2],
                     d->box[3], d->swizzle, cuda_error_text(res, text, sizeof text));
            return FA4_ECUDA;
        }
    }
    return FA4_OK;
}

int launch_sm100_pair(const fa4_config *cfg)
{
    return cfg->cluster == 2 ? 2 : 1;
}

void launch_sm100_grid(unsigned grid[3], const fa4_params *p, int pair)
{
    /* ceil(seqlen_q / bm): 256 rows (2Q) or 128 (1Q) a CTA; a pair's two
       CTAs take consecutive blocks, so the count is rounded up to even */
    grid[0] = (unsigned)((p->m_blocks + pair - 1) / pair * pair);
    grid[1] = (unsigned)p->heads_q;
    grid[2] = (unsigned)p->batch;
}

int launch_sm100_decode_grid(unsigned grid[3], const fa4_params *p, const fa4_config *cfg,
                             int splits)
{
    const int pg = cfg->pack_gqa ? p->group : 1;
    const long long y = (long long)(cfg->pack_gqa ? p->heads_kv : p->heads_q) * splits;

    grid[0] = (unsigned)sm100_decode_m_tiles(p->seqlen_q, pg);
    grid[1] = (unsigned)y;
    grid[2] = (unsigned)p->batch;
    return y <= 65535 && p->batch <= 65535;
}

/* launch_sm100() of a decode-mode plan: three maps, the serving block
** with this call's splits, fa4_fwd, then fa4_combine when it split. */
static fa4_status launch_decode(const fa4_plan *plan, const launch_call *call,
                                fa4_stream stream)
{
    const fa4_problem *p = &call->problem;
    fa4_params params = call->params;
    fa4_serving s;
    sm100_map desc[4];
    CUtensorMap maps[4];
    void *args[5], *combine_args[2];
    unsigned grid[3];
    char why[512];
    fa4_status st;

    if ((st = launch_sm100_describe(desc, p, &plan->config, &params, why, sizeof why)) != FA4_OK ||
        (st = launch_sm100_encode(maps, plan->ctx->cu, desc, 3, why, sizeof why)) != FA4_OK)
        return error_set(plan->ctx, st, "%s", why);
    launch_serving_block(&s, p, call->tensors);
    launch_sm100_decode_grid(grid, &params, &plan->config, 1);
    launch_split_setup(&s, plan, p, (long long)grid[0] * grid[1] * grid[2],
                       call->workspace ? plan->workspace_bytes : 0, call->workspace);
    if (!launch_sm100_decode_grid(grid, &params, &plan->config, s.num_splits))
        return error_set(plan->ctx, FA4_EINVAL, "grid %u x %u x %u exceeds the launch limits "
                         "(y and z <= 65535)", grid[0], grid[1], grid[2]);
    args[0] = &params;
    args[1] = &maps[0];
    args[2] = &maps[1];
    args[3] = &maps[2];
    args[4] = &s;
    if ((st = launch_kernel(plan, plan->fn, grid, plan->layout.threads, plan->layout.smem_bytes,
                            stream, args, "fa4_fwd")) != FA4_OK || s.num_splits == 1)
        return st;
    combine_args[0] = &params;
    combine_args[1] = &s;
    return launch_combine(plan, p, combine_args, stream);
}

fa4_status launch_sm100(const fa4_plan *plan, const launch_call *call, fa4_stream stream)
{
    fa4_params params = call->params;
    sm100_map desc[4];
    CUtensorMap maps[4];
    void *args[5];
    unsigned grid[3];
    char why[512];
    fa4_status st;

    if (sm100_is_decode(&plan->config))
        return launch_decode(plan, call, stream);
    if ((st = launch_sm100_describe(desc, &call->problem, &plan->config, &params, why,
                                    sizeof why)) != FA4_OK ||
        (st = launch_sm100_encode(maps, plan->ctx->cu, desc, 4, why, sizeof why)) != FA4_OK)
        return error_set(plan->ctx, st, "%s", why);
    launch_sm100_grid(grid, &params, launch_sm100_pair(&plan->config));
    args[0] = &params;
    args[1] = &maps[0];
    args[2] = &maps[1];
    args[3] = &maps[2];
    args[4] = &maps[3];
    return launch_kernel_cluster(plan, plan->fn, grid, (unsigned)launch_sm100_pair(&plan->config),
                                 plan->layout.threads, plan->layout.smem_bytes, stream, args,
                                 "fa4_fwd");
}
