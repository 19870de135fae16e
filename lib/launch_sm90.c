/*
** launch_sm90.c -- the TMA maps of the sm90 family (launch_sm90.h).  The
** layout they describe is the kernel's: kernels/sm90/kernel.cuh.
*/
#include <stdio.h>
#include <string.h>

#include "launch_sm90.h"
#include "dtype.h"
#include "jit.h"
#include "plan.h"
#include "problem.h"

/* Varlen maps cover the packed tensors, {dim, heads, rows, 1}, with a row
** extent the kernel never reaches: the host does not know total_q /
** total_k, and the kernel's boxes end at their sequence's last row
** (kernels/sm90/seqlen.cuh).  The largest such extent: int32 coordinates,
** and rows x the row stride within TMA's 2^40-byte stride limit (the
** batch stride, over an extent of 1, is set to that product so that the
** map's dimensions do not overlap). */
static int varlen_rows(long long row_stride)
{
    long long rows = ((1LL << 40) - 16) / (row_stride * 2 > 0 ? row_stride * 2 : 1);
    return rows > 0x7fffffffLL ? 0x7fffffff : (int)rows;
}

/* Encode one map of RANK (4 or 5) dims over ADDR: DIMS innermost first,
** element STRIDES of dims 1..RANK-1 (AXES names them for messages), BOX,
** elements of TYPE (ESIZE bytes), SWIZZLE bytes (128, 64 or 32).  NAME
** ("q") for messages. */
static fa4_status encode_map(CUtensorMap *map, const cuda_api *cu, const char *name, int rank,
                             const char *const axes[], int type, int esize,
                             unsigned long long addr, const long long dims[],
                             const long long strides[], const int box[], int swizzle,
                             char *why, size_t wn)
{
    cuuint64_t gdim[5], gstride[4];
    cuuint32_t cbox[5], estride[5] = { 1, 1, 1, 1, 1 };
    CUresult res;
    int i;

    if (addr % 16 != 0) {
        snprintf(why, wn, "%s address 0x%llx is not 16-byte aligned (TMA)", name, addr);
        return FA4_EINVAL;
    }
    for (i = 0; i < rank - 1; i++) {
        long long bytes = strides[i] * esize;
        /* A stride over a dimension of extent 1 is never used: any legal value will do. */
        if (dims[i + 1] <= 1 && (bytes <= 0 || bytes % 16 != 0))
            bytes = 16;
        if (bytes <= 0 || bytes % 16 != 0 || bytes >= (1LL << 40)) {
            snprintf(why, wn, "%s %s stride %lld elements = %lld B; TMA needs a positive "
                     "multiple of 16 B below 2^40", name, axes[i], strides[i], bytes);
            return FA4_EINVAL;
        }
        gstride[i] = (cuuint64_t)bytes;
    }
    for (i = 0; i < rank; i++) {
        gdim[i] = (cuuint64_t)dims[i];
        cbox[i] = (cuuint32_t)box[i];
    }
    memset(map, 0, sizeof(*map));
    res = cu->cuTensorMapEncodeTiled(map, (CUtensorMapDataType)type, (cuuint32_t)rank,
                                     (void *)(size_t)addr,
                                     gdim, gstride, cbox, estride,
                                     CU_TENSOR_MAP_INTERLEAVE_NONE,
                                     swizzle == 32   ? CU_TENSOR_MAP_SWIZZLE_32B
                                     : swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                     : CU_TENSOR_MAP_SWIZZLE_128B,
                                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (res != CUDA_SUCCESS) {
        char text[128];
        snprintf(why, wn, "cuTensorMapEncodeTiled(%s: dims %lld %lld %lld %lld%s, box %d %d "
                 "%d %d%s, swizzle %d B): %s", name, dims[0], dims[1], dims[2], dims[3],
                 rank > 4 ? " ..." : "", box[0], box[1], box[2], box[3],
                 rank > 4 ? " ..." : "", swizzle, cuda_error_text(res, text, sizeof text));
        return FA4_ECUDA;
    }
    return FA4_OK;
}

/* A map {dim, heads, seq, batch} of a BSHD tensor, box {SWIZZLE / ESIZE, 1,
** ROWS, 1}: one box row is one swizzle span.  GROUP > 1 (packed GQA's Q and
** O): {dim, head in group, seq, KV head, batch} over HEADS = KV heads x
** GROUP, box {SWIZZLE / ESIZE, GROUP, ROWS / GROUP, 1, 1}, so the ROWS box
** rows come in the packed order (query-major, then head;
** kernels/sm90/seqlen.cuh). */
static fa4_status encode_bshd(CUtensorMap *map, const cuda_api *cu, const char *name,
                              const dtype_info *dt, unsigned long long addr, int dim, int heads,
                              int group, int seq, int batch, long long head_stride,
                              long long row_stride, long long batch_stride, int rows,
                              int swizzle, char *why, size_t wn)
{
    static const char *const axes[3] = { "head", "row", "batch" };
    static const char *const packed_axes[4] = { "head", "row", "KV head", "batch" };
    const long long dims[4] = { dim, heads, seq, batch };
    const long long strides[3] = { head_stride, row_stride, batch_stride };
    const int box[4] = { swizzle / dt->bytes, 1, rows, 1 };
    const long long pdims[5] = { dim, group, seq, heads / group, batch };
    const long long pstrides[4] = { head_stride, row_stride, head_stride * group, batch_stride };
    const int pbox[5] = { swizzle / dt->bytes, group, rows / group, 1, 1 };

    if (group > 1)
        return encode_map(map, cu, name, 5, packed_axes, dt->tma_type, dt->bytes, addr, pdims,
                          pstrides, pbox, swizzle, why, wn);
    return encode_map(map, cu, name, 4, axes, dt->tma_type, dt->bytes, addr, dims, strides,
                      box, swizzle, why, wn);
}

size_t launch_sm90_vt_bytes(const fa4_problem *pb, const fa4_config *cfg)
{
    const int dv = problem_head_dim_v(pb);

    if (pb->dtype != FA4_DTYPE_FP8_E4M3)
        return 0;
    return (size_t)pb->batch * pb->heads_kv * dv * (size_t)sm90_vt_cols(pb, cfg, pb->seqlen_k);
}

size_t launch_sm90_workspace(const fa4_problem *pb, const fa4_config *cfg, int sms)
{
    const size_t data = sm90_tail_bytes(pb, cfg, sms) + launch_sm90_vt_bytes(pb, cfg);

    return data ? SM90_DATA_OFFSET + data : 0;
}

fa4_status launch_sm90_maps(CUtensorMap maps[4], const cuda_api *cu,
                            const fa4_problem *pb, const fa4_config *cfg,
                            const fa4_params *p, unsigned long long vt, char *why, size_t wn)
{
    const int d = pb->head_dim_qk, dv = problem_head_dim_v(pb);
    const dtype_info *in = dtype_of(pb->dtype);
    const dtype_info *out = dtype_of(dtype_out(pb));
    /* Every map in the config's swizzle: the kernel stores O in Q's layout. */
    const int sw = cfg->swizzle == 32 || cfg->swizzle == 64 ? cfg->swizzle : 128;
    const int rows_q = pb->varlen ? varlen_rows(p->q_row_stride) : p->seqlen_q;
    /* Paged K/V: {dim, heads, page_size, pages}, the page stride as the batch's. */
    const int paged = pb->page_size > 0;
    const int pages_k = !paged ? 0 : pb->num_pages > 0 ? pb->num_pages : varlen_rows(p->k_batch_stride);
    const int pages_v = !paged ? 0 : pb->num_pages > 0 ? pb->num_pages : varlen_rows(p->v_batch_stride);
    const int box_kv = paged ? sm90_page_box(pb->page_size, cfg->bn) : cfg->bn;
    const int rows_k = pb->varlen ? varlen_rows(p->k_row_stride) : p->seqlen_k;
    const int rows_o = pb->varlen ? varlen_rows(p->o_row_stride) : p->seqlen_q;
    const int rows_v = pb->varlen ? varlen_rows(p->v_row_stride) : p->seqlen_k;
    const int batch = pb->varlen ? 1 : p->batch;
    const int fp8 = pb->dtype == FA4_DTYPE_FP8_E4M3;
    const int pg = cfg->pack_gqa ? p->group : 1;   /* packed GQA: Q and O in groups */
    /* Varlen: past the one batch entry's rows, never read. */
#define BATCH_STRIDE(x, rows) (pb->varlen ? (long long)(rows) * p->x##_row_stride : p->x##_batch_stride)
    char dummy[8];
    fa4_status st;

    if (why == NULL || wn == 0) {
        why = dummy;
        wn = sizeof(dummy);
    }
    why[0] = '\0';
    if (cu == NULL || cu->cuTensorMapEncodeTiled == NULL) {
        snprintf(why, wn, "cuTensorMapEncodeTiled unavailable in this driver");
        return FA4_ENOTSUP;
    }
    if (!in || !out) {
        snprintf(why, wn, "dtype %d / out_dtype %d: no TMA type", (int)pb->dtype,
                 (int)pb->out_dtype);
        return FA4_EINVAL;
    }
    if ((st = encode_bshd(&maps[0], cu, "q", in, p->q, d, p->heads_q, pg, rows_q, batch,
                          p->q_head_stride, p->q_row_stride, BATCH_STRIDE(q, rows_q), cfg->bm,
                          sw, why, wn)) != FA4_OK)
        return st;
    if (paged) {
        /* (fp8: V is read by the V^T copy, not by TMA.) */
        if ((st = encode_bshd(&maps[1], cu, "k", in, p->k, d, p->heads_kv, 1, pb->page_size,
                              pages_k, p->k_head_stride, p->k_row_stride, p->k_batch_stride,
                              box_kv, sw, why, wn)) != FA4_OK ||
            (!fp8 &&
             (st = encode_bshd(&maps[2], cu, "v", in, p->v, dv, p->heads_kv, 1, pb->page_size,
                               pages_v, p->v_head_stride, p->v_row_stride, p->v_batch_stride,
                               box_kv, sw, why, wn)) != FA4_OK))
            return st;
    } else if ((st = encode_bshd(&maps[1], cu, "k", in, p->k, d, p->heads_kv, 1, rows_k, batch,
                                 p->k_head_stride, p->k_row_stride, BATCH_STRIDE(k, rows_k),
                                 cfg->bn, sw, why, wn)) != FA4_OK)
        return st;
    if (fp8) {
        /* V^T in the workspace, {keys, dim, heads, batch}, dense for every
           batch layout (the sequences' keys at column 0, batch the
           sequence); box: a chunk of swizzle-many keys x the padded dim
           (kernels/sm90/vtranspose.cuh). */
        static const char *const axes[3] = { "dim", "head", "batch" };
        const long long skp = sm90_vt_cols(pb, cfg, p->seqlen_k);
        const long long dims[4] = { skp, dv, p->heads_kv, p->batch };
        const long long strides[3] = { skp, skp * dv, skp * dv * p->heads_kv };
        const int box[4] = { sw, sm90_pad_dim(dv, sw / 2), 1, 1 };
        if ((st = encode_map(&maps[2], cu, "v^t", 4, axes, in->tma_type, 1, vt, dims, strides,
                             box, sw, why, wn)) != FA4_OK)
            return st;
    } else if (!paged &&
               (st = encode_bshd(&maps[2], cu, "v", in, p->v, dv, p->heads_kv, 1, rows_v, batch,
                                 p->v_head_stride, p->v_row_stride, BATCH_STRIDE(v, rows_v),
                                 cfg->bn, sw, why, wn)) != FA4_OK)
        return st;
    st = encode_bshd(&maps[3], cu, "o", out, p->o, dv, p->heads_q, pg, rows_o, batch,
                     p->o_head_stride, p->o_row_stride, BATCH_STRIDE(o, rows_o), 64, sw, why, wn);
#undef BATCH_STRIDE
    return st;
}

/* Launch geometry (kernels/README.md "Grid"): a tile per CTA, or one CTA
** per SM walking the tiles (for varlen, of at most batch x heads_q x
** ceil(seqlen_q / bm) tiles); with the tail split a 1-D grid of the whole
** tiles and the last wave's parts (PARAMS->tail_first, tail_splits). */
static void sm90_grid(unsigned grid[3], const fa4_plan *plan, const fa4_problem *p,
                      const fa4_params *params)
{
    const unsigned tiles = (unsigned)params->total_tiles;

    grid[1] = grid[2] = 1;
    if (plan->config.scheduler != FA4_SCHED_PLAIN) {
        unsigned sms = (unsigned)plan->ctx->limits.sm_count;
        grid[0] = tiles < sms ? tiles : sms;
        return;
    }
    if (plan->config.splits == 0) {
        grid[0] = (unsigned)params->tail_first +
                  (tiles - (unsigned)params->tail_first) * (unsigned)params->tail_splits;
        return;
    }
    grid[0] = (unsigned)params->m_blocks;
    grid[1] = (unsigned)(plan->config.pack_gqa ? p->heads_kv : p->heads_q);
    grid[2] = (unsigned)p->batch;
    if (plan->layout.head_group) {   /* kernels/sm90/scheduler.cuh: FA4_HEAD_GROUP */
        grid[0] *= (unsigned)plan->layout.head_group;
        grid[1] /= (unsigned)plan->layout.head_group;
    }
}

/* The tail split's parameters for this call (sm90_tail_split()), its
** records at WORKSPACE + SM90_DATA_OFFSET. */
static void tail_params(fa4_params *params, const fa4_plan *plan, const fa4_problem *p,
                        unsigned long long workspace)
{
    const int n_blocks = (int)(((long long)p->seqlen_k + plan->config.bn - 1) / plan->config.bn);

    sm90_tail_split(params->total_tiles, plan->ctx->limits.sm_count, n_blocks,
                    &params->tail_first, &params->tail_splits);
    params->tail_partial = workspace + SM90_DATA_OFFSET;
}

/* fp8: write V^T for this call into the workspace at VT (grid and layout:
** kernels/sm90/vtranspose.cuh); SV: the serving block of varlen and paged
** problems (NULL otherwise). */
static fa4_status launch_vt(const fa4_plan *plan, const launch_call *call, unsigned long long vt,
                            const fa4_serving *sv, fa4_stream stream)
{
    const fa4_params *p = &call->params;
    const long long cols = sm90_vt_cols(&call->problem, &plan->config, p->seqlen_k);
    int skp = (int)cols;
    unsigned grid[3];
    void *args[4] = { (void *)p, &vt, &skp, (void *)sv };

    if (!plan->fn_prepare)
        return error_set(plan->ctx, FA4_ECOMPILE, "the fp8 kernel module has no %s",
                         JIT_VT_NAME);
    if (cols > 0x7fffffffLL)
        return error_set(plan->ctx, FA4_EINVAL, "fp8 V^T of %lld keys per row: over the "
                         "int32 coordinates of TMA", cols);
    grid[0] = (unsigned)((skp / SM90_VT_KEYS + SM90_VT_BLOCKS - 1) / SM90_VT_BLOCKS);
    grid[1] = (unsigned)p->heads_kv;
    grid[2] = (unsigned)p->batch;
    return launch_kernel(plan, plan->fn_prepare, grid, 256, 0, stream, args, JIT_VT_NAME);
}

fa4_status launch_sm90(const fa4_plan *plan, const launch_call *call, fa4_stream stream)
{
    fa4_params params = call->params;
    fa4_serving sv;
    const int serving = call->problem.varlen || call->problem.page_size;
    CUtensorMap maps[4];
    unsigned long long vt = 0;
    void *args[6];
    unsigned grid[3];
    char why[512];
    fa4_status st;

    if (plan->config.scheduler == FA4_SCHED_DYNAMIC)
        params.tile_counter = call->workspace;
    if (serving)
        launch_serving_block(&sv, &call->problem, call->tensors);
    if (plan->config.splits == 0)
        tail_params(&params, plan, &call->problem, call->workspace);
    if (call->problem.dtype == FA4_DTYPE_FP8_E4M3)   /* after the tail's records */
        vt = call->workspace + SM90_DATA_OFFSET +
             sm90_tail_bytes(&call->problem, &plan->config, plan->ctx->limits.sm_count);
    /* The driver encodes maps only with a context current: fa4_forward
       has pushed the plan's (the caller's thread may have none).  Before
       the V^T copy: a map the driver refuses queues nothing. */
    st = launch_sm90_maps(maps, plan->ctx->cu, &call->problem, &plan->config, &params, vt, why,
                          sizeof why);
    if (st != FA4_OK)
        return error_set(plan->ctx, st, "%s", why);
    if (vt && (st = launch_vt(plan, call, vt, serving ? &sv : NULL, stream)) != FA4_OK)
        return st;
    sm90_grid(grid, plan, &call->problem, &params);
    args[0] = &params;
    args[1] = &maps[0];
    args[2] = &maps[1];
    args[3] = &maps[2];
    args[4] = &maps[3];
    if (serving)
        args[5] = &sv;
    st = launch_kernel(plan, plan->fn, grid, plan->layout.threads, plan->layout.smem_bytes,
                       stream, args, "fa4_fwd");
    if (st == FA4_OK && plan->config.splits == 0 && params.tail_splits > 1) {
        /* a warp per row of the tail's tiles (kernels/common/combine.cuh) */
        void *combine_args[1] = { &params };
        st = launch_combine_rows(plan, (long long)(params.total_tiles - params.tail_first) *
                                 plan->config.bm, 1, 1, combine_args, stream);
    }
    return st;
}
