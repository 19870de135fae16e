/*
** test_gpu_fp8_serving.c -- fp8 e4m3 inputs in serving layouts against
** the float64 reference on the dequantised inputs: variable-length
** batches (ragged lengths 1, 17, 300, 1000 in one batch, seqlen_q !=
** seqlen_k per sequence, a sequence without keys, seqused_k over a cache
** whose spare rows hold NaN), dense queries over a paged cache (8..256-row
** pages out of order, a page shared by two sequences, the last page partly
** used and its unused rows NaN; one-row decode steps) and varlen queries
** over one, causal and not, GQA and MQA, per-(batch, KV head) descale
** factors and NULL ones, bf16 and fp16 O, the heuristic and explicit
** configs of both families that take fp8: sm90 (bn 192: a varlen V^T
** padded to whole key blocks of a width no power of two; three consumer
** warpgroups; the fused ring; the dynamic scheduler) and sm80 (decode
** tiles splitting the keys over warps and over CTAs with packed GQA heads,
** packed 64-row tiles, 32-row prefill tiles with 64 B swizzle, the fused
** K/V schedule).
**
** Each run poisons O and LSE (NaN) and the V^T part of a caller-owned
** workspace (e4m3 NaN bytes), so a column of V^T the copy did not write
** and the kernel read shows as NaN.  Every sequence is checked on its own
** with lib/verify.c's fp8 tolerance (O within 4e-2 relative over the
** sequence's checked rows, LSE within 2^-8 (1 + |ref|), -inf where the
** row sees no key); no NaN anywhere in O or LSE.  Also: the workspace
** size a plan reports (no GPU needed), a workspace_size below what a
** call needs, a call smaller than the plan, the opt-in input check, and
** the family each layout plans with (sm80: pages under 16 rows, varlen
** head_dim_v 256; sm90's plain grid: varlen queries over 16-row pages).  Without an
** sm_90a GPU every variant is compiled for sm_90a instead (no spills).
** FA4_TEST_SHAPES=A,B runs only the shapes whose names contain A or B.
*/
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "fa4.h"
#include "config.h"
#include "context.h"
#include "dtype.h"
#include "reference.h"
#include "gpu_check.h"
#include "verify.h"

#define MAXB 6
#define VT_OFFSET 256        /* V^T's offset in the workspace (fa4_forward(3)) */

/* One serving layout. */
typedef struct fs_shape {
    const char *name;
    int batch, hq, hkv, d, dv, causal;
    int paged;              /* 0: varlen Q and K/V (cu_seqlens); 1: dense Q over pages;
                               2: varlen Q (cu_seqlens_q) over pages */
    int page_size;
    int use_seqused;        /* pass seqused_k (varlen: with kv_room NaN rows after each) */
    int kv_room;
    int null_descale;       /* descale arrays NULL (factor 1) */
    fa4_dtype out;
    int lq[MAXB], lk[MAXB]; /* paged 1: lq[0] for every sequence (dense Q) */
} fs_shape;

static const fs_shape shapes[] = {
    { "varlen ragged GQA", 4, 8, 2, 128, 128, 0, 0, 0, 0, 0, 0, FA4_DTYPE_BF16,
      {1, 17, 300, 1000}, {1, 17, 300, 1000} },
    { "varlen ragged GQA causal", 4, 8, 2, 128, 128, 1, 0, 0, 0, 0, 0, FA4_DTYPE_BF16,
      {1, 17, 300, 1000}, {1, 17, 300, 1000} },
    { "varlen causal sq != sk, seqused_k over NaN spare rows, empty sequences", 6, 8, 2, 128,
      128, 1, 0, 0, 1, 100, 0, FA4_DTYPE_BF16,
      {1, 17, 300, 200, 0, 5}, {40, 17, 1000, 300, 9, 0} },
    { "varlen sq > sk d64 no GQA, NULL descales", 4, 4, 4, 64, 64, 0, 0, 0, 0, 0, 1,
      FA4_DTYPE_BF16, {1000, 300, 17, 1}, {1, 300, 17, 1000} },
    { "varlen d192/128 causal GQA 4, fp16 O", 3, 8, 2, 192, 128, 1, 0, 0, 0, 0, 0,
      FA4_DTYPE_FP16, {129, 1000, 64}, {129, 1000, 300} },
    { "varlen d96 causal", 3, 4, 2, 96, 96, 1, 0, 0, 0, 0, 0, FA4_DTYPE_BF16,
      {300, 17, 1000}, {300, 17, 1000} },
    { "paged 16 causal chunked prefill, NaN in unused page rows", 3, 8, 2, 128, 128, 1, 1, 16,
      1, 0, 0, FA4_DTYPE_BF16, {256}, {1000, 300, 33} },
    { "paged 64 non-causal GQA 4", 3, 8, 2, 128, 128, 0, 1, 64, 1, 0, 0, FA4_DTYPE_BF16,
      {200}, {1000, 17, 700} },
    { "paged 256 causal (blocks inside a page)", 2, 8, 1, 128, 128, 1, 1, 256, 1, 0, 0,
      FA4_DTYPE_BF16, {300}, {1000, 600} },
    { "paged 32 d64, NULL descales, fp16 O", 3, 4, 2, 64, 64, 1, 1, 32, 1, 0, 1,
      FA4_DTYPE_FP16, {128}, {512, 1, 700} },
    { "paged 16 d256 seqlen_k lengths", 2, 4, 2, 256, 256, 0, 1, 16, 0, 0, 0, FA4_DTYPE_BF16,
      {100}, {700, 700} },
    /* One query row per sequence: decode steps (the sm80 family's decode
       tiles, split over the keys where they are long). */
    { "paged 16 decode step MQA", 4, 8, 1, 128, 128, 0, 1, 16, 1, 0, 0, FA4_DTYPE_BF16,
      {1}, {1000, 33, 16, 1} },
    { "paged 8 decode step GQA 4, fp16 O", 4, 8, 2, 128, 128, 0, 1, 8, 1, 0, 0, FA4_DTYPE_FP16,
      {1}, {3000, 33, 8, 1} },
    { "varlen decode step GQA 8 d64, NULL descales", 4, 16, 2, 64, 64, 1, 0, 0, 1, 40, 1,
      FA4_DTYPE_BF16, {1, 1, 1, 1}, {4000, 1, 17, 600} },
    /* Layouts the sm90 family does not read. */
    { "varlen queries over 16-row pages, causal chunked prefill", 3, 8, 2, 128, 128, 1, 2, 16,
      1, 0, 0, FA4_DTYPE_BF16, {17, 1, 300}, {300, 1000, 300} },
    { "varlen d256 causal", 3, 4, 2, 256, 256, 1, 0, 0, 0, 0, 0, FA4_DTYPE_BF16,
      {1, 17, 300}, {1, 300, 1000} },
};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

/* Explicit configs beside the heuristic (not every one fits every shape). */
static const char *configs[] = {
    "sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 pingpong=1 sched=plain rescale=8",
    "sm90 bm=128 bn=192 stages=2 swizzle=64 wgs=2 regs=24/240 pingpong=1 sched=plain rescale=8",
    "sm90 bm=192 bn=64 stages=3 swizzle=64 wgs=3 regs=32/160 pingpong=0 sched=dynamic rescale=8",
    "sm90 bm=128 bn=128 stages=2 swizzle=128 fused_kv=1 wgs=2 regs=24/240 pingpong=0 "
    "sched=dynamic rescale=8",
    "sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 pingpong=1 sched=plain rescale=8 "
    "pack_gqa=1",
    "sm80 bm=16 bn=64 stages=3 swizzle=128 warps=4 kv_split_warps=1 pack_gqa=1 splits=3",
    "sm80 bm=16 bn=128 stages=4 swizzle=64 warps=4 kv_split_warps=1",
    "sm80 bm=64 bn=64 stages=2 swizzle=128 warps=4 pack_gqa=1",
    "sm80 bm=128 bn=32 stages=2 swizzle=64 warps=4",
    "sm80 bm=128 bn=64 stages=2 swizzle=128 warps=8 fused_kv=1",
};
#define NCONFIGS ((int)(sizeof configs / sizeof configs[0]))

/* A shape's host data, device buffers and reference. */
typedef struct fs_data {
    fa4_problem p;
    int lq[MAXB], lk[MAXB];     /* per-sequence lengths (keys used) */
    int32_t cu_q[MAXB + 1], cu_k[MAXB + 1], used[MAXB], *table;
    int table_stride, num_pages, total_q;
    size_t q_rows, kv_rows;     /* rows of Q/O and of K/V as allocated */
    uint8_t *q, *k, *v;
    float *descale;             /* [3][batch][hkv], NULL with null_descale */
    int nrows, *row_b, *row_i;  /* checked rows */
    double *ref_o, *ref_lse;    /* [nrows][hq][dv], [nrows][hq] */
    CUdeviceptr dq, dk, dv, dout, dlse, dcu_q, dcu_k, dused, dtable, ddescale;
} fs_data;

/* Row of Q/O holding query I of sequence B. */
static size_t q_row(const fs_data *s, const fs_shape *sh, int b, int i)
{
    return sh->paged == 1 ? (size_t)b * s->p.seqlen_q + i : (size_t)s->cu_q[b] + i;
}

/* Row of K/V holding key J of sequence B. */
static size_t k_row(const fs_data *s, const fs_shape *sh, int b, int j)
{
    if (sh->paged)
        return (size_t)s->table[b * s->table_stride + j / sh->page_size] * sh->page_size +
               (size_t)(j % sh->page_size);
    return (size_t)s->cu_k[b] + j;
}

/* LSE index of (query I of sequence B, head H). */
static size_t lse_index(const fs_data *s, const fs_shape *sh, int b, int i, int h)
{
    if (sh->paged == 1)
        return ((size_t)b * s->p.heads_q + h) * s->p.seqlen_q + i;
    return (size_t)h * s->total_q + s->cu_q[b] + i;
}

/* The problem of SH (maxima from its lengths). */
static fa4_problem shape_problem(const fs_shape *sh)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    int b;

    p.dtype = FA4_DTYPE_FP8_E4M3;
    p.out_dtype = sh->out;
    p.batch = sh->batch;
    p.heads_q = sh->hq;
    p.heads_kv = sh->hkv;
    p.head_dim_qk = sh->d;
    p.head_dim_v = sh->dv;
    p.causal = sh->causal;
    p.return_lse = 1;
    p.seqlen_q = p.seqlen_k = 1;
    for (b = 0; b < sh->batch; b++) {
        int lq = sh->paged == 1 ? sh->lq[0] : sh->lq[b];
        p.seqlen_q = lq > p.seqlen_q ? lq : p.seqlen_q;
        p.seqlen_k = sh->lk[b] > p.seqlen_k ? sh->lk[b] : p.seqlen_k;
    }
    if (sh->paged) {
        p.page_size = sh->page_size;
        p.block_table_stride = (p.seqlen_k + sh->page_size - 1) / sh->page_size + 1;
    }
    p.varlen = sh->paged != 1;
    return p;
}

static void fs_free(fs_data *s, const cuda_api *cu)
{
    CUdeviceptr *d[] = { &s->dq, &s->dk, &s->dv, &s->dout, &s->dlse, &s->dcu_q, &s->dcu_k,
                         &s->dused, &s->dtable, &s->ddescale };
    size_t i;

    for (i = 0; cu && i < sizeof d / sizeof d[0]; i++)
        if (*d[i])
            cu->cuMemFree(*d[i]);
    free(s->table); free(s->q); free(s->k); free(s->v); free(s->descale);
    free(s->row_b); free(s->row_i); free(s->ref_o); free(s->ref_lse);
    memset(s, 0, sizeof *s);
}

/* Fill rows [R0, R1) of a [rows, heads, dim] e4m3 tensor with NaN (0x7f). */
static void nan_rows(uint8_t *x, size_t r0, size_t r1, int heads, int dim)
{
    memset(x + r0 * heads * dim, 0x7f, (r1 - r0) * heads * dim);
}

/* The reference of the checked rows of sequence B (gathered into a dense
** problem of its own, batch 1, with the sequence's descale factors). */
static int reference_sequence(fs_data *s, const fs_shape *sh, int b, int first_row)
{
    const int hq = sh->hq, hk = sh->hkv, d = sh->d, dv = sh->dv, lq = s->lq[b], lk = s->lk[b];
    const size_t nd = (size_t)sh->batch * hk;
    fa4_problem rp = s->p;
    uint8_t *gq = malloc((size_t)(lq ? lq : 1) * hq * d);
    uint8_t *gk = malloc((size_t)(lk ? lk : 1) * hk * d);
    uint8_t *gv = malloc((size_t)(lk ? lk : 1) * hk * dv);
    const float *qd = s->descale ? s->descale + (size_t)b * hk : NULL;
    const float *kd = s->descale ? s->descale + nd + (size_t)b * hk : NULL;
    const float *vd = s->descale ? s->descale + 2 * nd + (size_t)b * hk : NULL;
    int r, i, j, h;

    if (!gq || !gk || !gv) {
        free(gq); free(gk); free(gv);
        return -1;
    }
    rp.batch = 1; rp.seqlen_q = lq; rp.seqlen_k = lk; rp.varlen = 0; rp.page_size = 0;
    rp.block_table_stride = 0; rp.num_pages = 0;
    rp.softmax_scale = (float)(1.0 / sqrt((double)d));
    for (i = 0; i < lq; i++)
        memcpy(gq + (size_t)i * hq * d, s->q + q_row(s, sh, b, i) * hq * d, (size_t)hq * d);
    for (j = 0; j < lk; j++) {
        memcpy(gk + (size_t)j * hk * d, s->k + k_row(s, sh, b, j) * hk * d, (size_t)hk * d);
        memcpy(gv + (size_t)j * hk * dv, s->v + k_row(s, sh, b, j) * hk * dv, (size_t)hk * dv);
    }
    for (r = first_row; r < s->nrows && s->row_b[r] == b; r++)
        for (h = 0; h < hq; h++) {
            double *o = s->ref_o + ((size_t)r * hq + h) * dv;
            double *lse = &s->ref_lse[(size_t)r * hq + h];
            if (lk == 0) {   /* no key: O = 0, LSE = -inf */
                memset(o, 0, sizeof *o * (size_t)dv);
                *lse = -INFINITY;
                continue;
            }
            ref_attention_row_scaled(o, lse, &rp, gq, gk, gv, NULL, qd, kd, vd, 0, s->row_i[r], h);
        }
    free(gq); free(gk); free(gv);
    return 0;
}

/* Build SH's layout with fresh random inputs (N(0,1) e4m3 from *SEED,
** descale factors in [0.5, 2)), the reference of its checked rows, and
** (with CU) the device copies.  0 or -1. */
static int fs_prepare(fs_data *s, const fs_shape *sh, const cuda_api *cu, uint64_t *seed)
{
    const int hq = sh->hq, hk = sh->hkv, d = sh->d, dv = sh->dv;
    size_t nd = (size_t)sh->batch * hk;
    int b, i, r, e = 0;

    memset(s, 0, sizeof *s);
    s->p = shape_problem(sh);
    for (b = 0; b < sh->batch; b++) {
        s->lq[b] = sh->paged == 1 ? s->p.seqlen_q : sh->lq[b];
        s->lk[b] = sh->paged && !sh->use_seqused ? s->p.seqlen_k : sh->lk[b];
        s->cu_q[b + 1] = s->cu_q[b] + s->lq[b];
        s->cu_k[b + 1] = s->cu_k[b] + s->lk[b] + sh->kv_room;
        s->used[b] = s->lk[b];
    }
    s->total_q = sh->paged == 1 ? sh->batch * s->p.seqlen_q : s->cu_q[sh->batch];
    s->q_rows = (size_t)s->total_q;
    if (sh->paged) {
        /* Pages in reverse order of use; sequence 1 shares sequence 0's
           first page when both fill one (its first keys are then 0's). */
        int ps = sh->page_size, next;
        s->table_stride = s->p.block_table_stride;
        for (b = 0; b < sh->batch; b++)
            s->num_pages += (s->lk[b] + ps - 1) / ps;
        s->num_pages += 2;   /* unused pages */
        s->p.num_pages = s->num_pages;
        if (!(s->table = calloc((size_t)sh->batch * s->table_stride, sizeof *s->table)))
            return -1;
        next = s->num_pages - 1;
        for (b = 0; b < sh->batch; b++)
            for (i = 0; i < (s->lk[b] + ps - 1) / ps; i++)
                s->table[b * s->table_stride + i] =
                    (b == 1 && i == 0 && s->lk[0] >= ps && s->lk[1] >= ps) ? s->table[0] : next--;
        s->kv_rows = (size_t)s->num_pages * ps;
    } else {
        s->kv_rows = (size_t)s->cu_k[sh->batch];
    }
    s->q = malloc(s->q_rows * hq * d + 16);
    s->k = malloc(s->kv_rows * hk * d + 16);
    s->v = malloc(s->kv_rows * hk * dv + 16);
    if (!sh->null_descale)
        s->descale = malloc(sizeof *s->descale * 3 * nd);
    if (!s->q || !s->k || !s->v || (!sh->null_descale && !s->descale))
        return -1;
    ref_fill_inputs(s->q, s->q_rows * hq * d, FA4_DTYPE_FP8_E4M3, seed);
    ref_fill_inputs(s->k, s->kv_rows * hk * d, FA4_DTYPE_FP8_E4M3, seed);
    ref_fill_inputs(s->v, s->kv_rows * hk * dv, FA4_DTYPE_FP8_E4M3, seed);
    if (s->descale)
        ref_fill_descale(s->descale, 3 * nd, seed);
    /* Rows no sequence uses may hold anything: NaN must not reach O. */
    if (sh->paged) {
        uint8_t *mark = calloc((size_t)s->num_pages, 1);
        int pg;
        if (!mark)
            return -1;
        for (b = 0; b < sh->batch; b++)
            for (i = 0; i < (s->lk[b] + sh->page_size - 1) / sh->page_size; i++)
                mark[s->table[b * s->table_stride + i]] = 1;
        for (pg = 0; pg < s->num_pages; pg++)
            if (!mark[pg]) {
                const size_t r0 = (size_t)pg * sh->page_size, r1 = r0 + sh->page_size;
                nan_rows(s->k, r0, r1, hk, d);
                nan_rows(s->v, r0, r1, hk, dv);
            }
        free(mark);
        for (b = 0; b < sh->batch; b++) {   /* the last page's unused rows */
            int last = (s->lk[b] + sh->page_size - 1) / sh->page_size - 1, pg0;
            if (last < 0 || s->lk[b] % sh->page_size == 0 ||
                (b == 1 && last == 0 && s->lk[0] >= sh->page_size))
                continue;   /* a full page, or sequence 0's shared first page */
            pg0 = s->table[b * s->table_stride + last];
            nan_rows(s->k, (size_t)pg0 * sh->page_size + s->lk[b] % sh->page_size,
                     (size_t)(pg0 + 1) * sh->page_size, hk, d);
            nan_rows(s->v, (size_t)pg0 * sh->page_size + s->lk[b] % sh->page_size,
                     (size_t)(pg0 + 1) * sh->page_size, hk, dv);
        }
    } else {
        for (b = 0; b < sh->batch; b++) {
            nan_rows(s->k, (size_t)s->cu_k[b] + s->lk[b], (size_t)s->cu_k[b + 1], hk, d);
            nan_rows(s->v, (size_t)s->cu_k[b] + s->lk[b], (size_t)s->cu_k[b + 1], hk, dv);
        }
    }
    /* Checked rows: the first and last 24 of each sequence and every
       step-th between, step from the reference's cost. */
    s->row_b = malloc(sizeof *s->row_b * (s->q_rows + 1));
    s->row_i = malloc(sizeof *s->row_i * (s->q_rows + 1));
    if (!s->row_b || !s->row_i)
        return -1;
    for (b = 0; b < sh->batch; b++) {
        const int step = 1 + (int)((long long)s->lq[b] * s->lk[b] / 40000);
        for (i = 0; i < s->lq[b]; i++)
            if (i < 24 || i >= s->lq[b] - 24 || i % step == 0) {
                s->row_b[s->nrows] = b;
                s->row_i[s->nrows++] = i;
            }
    }
    s->ref_o = malloc(sizeof(double) * ((size_t)s->nrows * hq * dv + 1));
    s->ref_lse = malloc(sizeof(double) * ((size_t)s->nrows * hq + 1));
    if (!s->ref_o || !s->ref_lse)
        return -1;
    for (r = 0, b = 0; b < sh->batch; b++) {
        if (reference_sequence(s, sh, b, r) != 0)
            return -1;
        while (r < s->nrows && s->row_b[r] == b)
            r++;
    }
    if (!cu)
        return 0;
    e |= cu->cuMemAlloc(&s->dq, s->q_rows * hq * d + 16);
    e |= cu->cuMemAlloc(&s->dk, s->kv_rows * hk * d + 16);
    e |= cu->cuMemAlloc(&s->dv, s->kv_rows * hk * dv + 16);
    e |= cu->cuMemAlloc(&s->dout, s->q_rows * hq * dv * 2 + 16);
    e |= cu->cuMemAlloc(&s->dlse, s->q_rows * hq * 4 + 16);
    e |= cu->cuMemAlloc(&s->dcu_q, sizeof s->cu_q);
    e |= cu->cuMemAlloc(&s->dcu_k, sizeof s->cu_k);
    e |= cu->cuMemAlloc(&s->dused, sizeof s->used);
    e |= cu->cuMemAlloc(&s->dtable, s->table ? (size_t)sh->batch * s->table_stride * 4 : 16);
    e |= cu->cuMemAlloc(&s->ddescale, sizeof(float) * 3 * nd);
    if (e)
        return -1;
    cu->cuMemcpyHtoD(s->dq, s->q, s->q_rows * hq * d);
    cu->cuMemcpyHtoD(s->dk, s->k, s->kv_rows * hk * d);
    cu->cuMemcpyHtoD(s->dv, s->v, s->kv_rows * hk * dv);
    cu->cuMemcpyHtoD(s->dcu_q, s->cu_q, sizeof s->cu_q);
    cu->cuMemcpyHtoD(s->dcu_k, s->cu_k, sizeof s->cu_k);
    cu->cuMemcpyHtoD(s->dused, s->used, sizeof s->used);
    if (s->table)
        cu->cuMemcpyHtoD(s->dtable, s->table, (size_t)sh->batch * s->table_stride * 4);
    if (s->descale)
        cu->cuMemcpyHtoD(s->ddescale, s->descale, sizeof(float) * 3 * nd);
    return 0;
}

/* The tensors of S's device buffers, WS (WS_SIZE bytes) as the workspace. */
static fa4_tensors fs_tensors(const fs_data *s, const fs_shape *sh, CUdeviceptr ws, size_t ws_size)
{
    fa4_tensors t = FA4_TENSORS_INIT;
    const size_t nd = (size_t)sh->batch * sh->hkv;

    t.q = (void *)(uintptr_t)s->dq;
    t.k = (void *)(uintptr_t)s->dk;
    t.v = (void *)(uintptr_t)s->dv;
    t.o = (void *)(uintptr_t)s->dout;
    t.lse = (float *)(uintptr_t)s->dlse;
    if (sh->paged != 1)
        t.cu_seqlens_q = (const int32_t *)(uintptr_t)s->dcu_q;
    if (!sh->paged)
        t.cu_seqlens_k = (const int32_t *)(uintptr_t)s->dcu_k;
    else
        t.block_table = (const int32_t *)(uintptr_t)s->dtable;
    if (sh->use_seqused)
        t.seqused_k = (const int32_t *)(uintptr_t)s->dused;
    if (s->descale) {
        t.q_descale = (const float *)(uintptr_t)s->ddescale;
        t.k_descale = (const float *)(uintptr_t)(s->ddescale + nd * 4);
        t.v_descale = (const float *)(uintptr_t)(s->ddescale + 2 * nd * 4);
    }
    t.workspace = (void *)(uintptr_t)ws;
    t.workspace_size = ws_size;
    return t;
}

/*
** Check O (S's output, host copy in SH's out dtype) and LSE: no NaN or
** Inf anywhere (LSE -inf allowed), and every sequence's checked rows
** within lib/verify.c's fp8 tolerance on their own.  1 when all pass;
** MSG says how.
*/
static int fs_check(const fs_data *s, const fs_shape *sh, const void *o, const float *lse,
                    char *msg, size_t mn)
{
    const int hq = sh->hq, dv = sh->dv;
    const size_t ob = (size_t)dtype_bytes(sh->out), no = s->q_rows * hq * dv, nl = s->q_rows * hq;
    double worst = 0, worst_lse = 0;
    size_t bad, first = 0, nan_lse = 0, x;
    int b, r, pass = 1;

    bad = verify_nonfinite(o, no, sh->out, &first);
    for (x = 0; x < nl; x++)
        nan_lse += isnan(lse[x]) != 0;
    if (bad || nan_lse) {
        snprintf(msg, mn, "%zu NaN/Inf outputs (the first at o[%zu]), %zu NaN LSE", bad, first,
                 nan_lse);
        return 0;
    }
    for (r = 0, b = 0; b < sh->batch; b++) {
        verify_result v;
        verify_init(&v, FA4_DTYPE_FP8_E4M3, sh->out);
        for (; r < s->nrows && s->row_b[r] == b; r++) {
            int h, i = s->row_i[r];
            for (h = 0; h < hq; h++)
                verify_row(&v, (const char *)o + (q_row(s, sh, b, i) * hq + h) * dv * ob,
                           s->ref_o + ((size_t)r * hq + h) * dv, dv,
                           &lse[lse_index(s, sh, b, i, h)], s->ref_lse[(size_t)r * hq + h], b,
                           i, h);
        }
        if (!v.rows)
            continue;
        verify_finish(&v);
        worst = v.o_rel_err > worst ? v.o_rel_err : worst;
        worst_lse = v.lse_err > worst_lse ? v.lse_err : worst_lse;
        if (!v.pass && pass) {
            pass = 0;
            snprintf(msg, mn, "sequence %d (lq %d, lk %d): %s", b, s->lq[b], s->lk[b], v.msg);
        }
    }
    if (pass)
        snprintf(msg, mn, "worst sequence: rel err %.2e (tol 4e-2), lse err %.1e", worst,
                 worst_lse);
    return pass;
}

/*
** Run PLAN on S with O, LSE and WS's V^T part poisoned (WS: WS_SIZE bytes,
** its first 256 zero for the dynamic scheduler's counter) and check it
** (fs_check).  T: the tensors (fs_tensors).  1 when all pass.
*/
static int fs_run(fa4_context *ctx, const fa4_plan *plan, fs_data *s, const fs_shape *sh,
                  const fa4_tensors *t, CUdeviceptr ws, size_t ws_size, char *msg, size_t mn)
{
    const cuda_api *cu = ctx->cu;
    const size_t ob = (size_t)dtype_bytes(sh->out), no = s->q_rows * sh->hq * sh->dv;
    const size_t nl = s->q_rows * sh->hq;
    void *o = malloc(no * ob + 16);
    float *lse = malloc(nl * 4 + 16);
    fa4_status st;
    int rc, pass;

    if (!o || !lse) {
        snprintf(msg, mn, "host allocation failed");
        free(o); free(lse);
        return 0;
    }
    context_push(ctx);
    cu->cuMemsetD8(s->dout, 0xff, no * ob);
    cu->cuMemsetD8(s->dlse, 0xff, nl * 4);
    if (ws) {
        cu->cuMemsetD8(ws, 0, VT_OFFSET);
        if (ws_size > VT_OFFSET)
            cu->cuMemsetD8(ws + VT_OFFSET, 0x7f, ws_size - VT_OFFSET);   /* e4m3 NaN */
    }
    st = fa4_forward(plan, t, NULL);
    rc = st == FA4_OK ? (int)cu->cuCtxSynchronize() : 0;
    if (st == FA4_OK && rc == 0) {
        cu->cuMemcpyDtoH(o, s->dout, no * ob);
        cu->cuMemcpyDtoH(lse, s->dlse, nl * 4);
    }
    context_pop(ctx);
    if (st != FA4_OK || rc != 0) {
        snprintf(msg, mn, "%s: %s", st != FA4_OK ? "fa4_forward" : "kernel failed",
                 st != FA4_OK ? fa4_context_errmsg(ctx) : "cuCtxSynchronize");
        free(o); free(lse);
        return 0;
    }
    pass = fs_check(s, sh, o, lse, msg, mn);
    free(o); free(lse);
    return pass;
}


/* 1 when CONFIG cannot run SH by the budget's rules (a skip, not a failure). */
static int config_skipped(fa4_status st)
{
    return st == FA4_ENOFIT || st == FA4_EINVAL || st == FA4_ENOTSUP;
}

/* The V^T bytes (plus its offset) a plan of P with config C needs, by the
** rule of fa4_plan_workspace_size(3): keys rounded up to 64, for varlen to
** whole key blocks of bn. */
static size_t expected_workspace(const fa4_problem *p, const fa4_config *c)
{
    long long keys = p->varlen ? ((long long)p->seqlen_k + c->bn - 1) / c->bn * c->bn
                               : ((long long)p->seqlen_k + 63) / 64 * 64;
    const int dv = p->head_dim_v ? p->head_dim_v : p->head_dim_qk;
    return VT_OFFSET + (size_t)p->batch * p->heads_kv * dv * (size_t)keys;
}

/* Without a GPU: plan (compile for sm_90a) and the budget's answers. */
static void check_plans(fa4_context *pc)
{
    fa4_problem p;
    fa4_plan *plan = NULL;
    fa4_config c = FA4_CONFIG_INIT;
    size_t ws = 0;
    fa4_status st;
    int i;

    for (i = 0; i < 2; i++) {
        /* A varlen plan and a paged one: V^T for the plan's maxima. */
        p = shape_problem(&shapes[i == 0 ? 0 : 6]);
        st = gpu_plan_config_text(&plan, pc, &p, i == 0 ? configs[1] : NULL);
        if (!ok(st == FA4_OK, "fp8 %s plan (plan_only, sm_90a)%s%s", i ? "paged" : "varlen",
                st ? ": " : "", st ? fa4_context_errmsg(pc) : ""))
            continue;
        fa4_plan_config(plan, &c, NULL);
        fa4_plan_workspace_size(plan, &ws);
        if (!ok(ws == expected_workspace(&p, &c), "fp8 %s bn=%d: fa4_plan_workspace_size %zu B "
                "= 256 + batch x heads_kv x dv x %s", i ? "paged" : "varlen", c.bn, ws,
                i ? "seqlen_k rounded up to 64" : "seqlen_k rounded up to bn"))
            diag("  want %zu", expected_workspace(&p, &c));
        fa4_plan_destroy(plan);
    }
    /* The layouts sm90 does not read plan with the sm80 family; varlen
       queries over 16-row pages with sm90's plain grid. */
    for (i = 0; i < 3; i++) {
        static const char *what[] = { "8-row pages", "varlen queries over 16-row pages",
                                      "varlen with head_dim_v 256" };
        const fa4_family want = i == 1 ? FA4_FAMILY_SM90 : FA4_FAMILY_SM80;
        p = shape_problem(&shapes[i < 2 ? 6 : 0]);
        if (i == 0) {
            p.page_size = 8;
            p.block_table_stride = (p.seqlen_k + 7) / 8;
        } else if (i == 1) {
            p.varlen = 1;
        } else {
            p.head_dim_qk = p.head_dim_v = 256;
        }
        st = gpu_plan_config_text(&plan, pc, &p, NULL);
        if (st == FA4_OK)
            fa4_plan_config(plan, &c, NULL);
        ok(st == FA4_OK && c.family == want && (i != 1 || c.scheduler == FA4_SCHED_PLAIN),
           "fp8 %s plans with the %s family%s%s", what[i], i == 1 ? "sm90 (plain grid)" : "sm80",
           st ? ": " : "", st ? fa4_context_errmsg(pc) : "");
        fa4_plan_destroy(plan);
        plan = NULL;
    }
    p = shape_problem(&shapes[0]);
    {
        fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
        char why[256];
        c = (fa4_config)FA4_CONFIG_INIT;
        config_parse(&c, "sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 "
                     "sched=persistent rescale=8", why, sizeof why);
        po.config = &c;
        st = fa4_plan_create(&plan, pc, &p, &po);
        ok(st == FA4_EINVAL && strstr(fa4_context_errmsg(pc), "dynamic scheduler"),
           "fp8 varlen with the static persistent scheduler is malformed: %s",
           fa4_context_errmsg(pc));
        fa4_plan_destroy(plan);
    }
}

/* Without an sm_90a GPU: every shape's default and override variants
** compile for sm_90a without spills. */
static void compile_all(fa4_context *pc)
{
    int i, c;

    for (i = 0; i < NSHAPES; i++) {
        const fa4_problem p = shape_problem(&shapes[i]);
        for (c = -1; c < NCONFIGS; c++) {
            fa4_plan *plan = NULL;
            fa4_config got = FA4_CONFIG_INIT;
            char desc[256] = "";
            fa4_status st = gpu_plan_config_text(&plan, pc, &p, c < 0 ? NULL : configs[c]);
            if (c >= 0 && config_skipped(st)) {
                skip("%s [%s]: %s", shapes[i].name, configs[c], fa4_context_errmsg(pc));
                continue;
            }
            if (st == FA4_OK) {
                fa4_plan_config(plan, &got, NULL);
                fa4_config_format(&got, desc, sizeof desc);
            }
            ok(st == FA4_OK, "%s [%s] compiles for sm_90a without spills%s%s", shapes[i].name,
               st == FA4_OK ? desc : c < 0 ? "default" : configs[c], st ? ": " : "",
               st ? fa4_context_errmsg(pc) : "");
            fa4_plan_destroy(plan);
        }
    }
}

/* A call's workspace below what it needs is refused; exactly enough runs.
** A plan whose maxima exceed the call (batch, seqlen_k) runs it in the
** call's smaller workspace. */
static void check_workspace(fa4_context *ctx, uint64_t *seed)
{
    const fs_shape *sh = &shapes[1];
    const cuda_api *cu = ctx->cu;
    fs_data s;
    fa4_problem big;
    fa4_plan *plan = NULL;
    fa4_config c = FA4_CONFIG_INIT;
    CUdeviceptr ws = 0;
    size_t plan_ws = 0, need;
    fa4_tensors t;
    fa4_status st;
    char msg[512];

    context_push(ctx);
    if (fs_prepare(&s, sh, cu, seed) != 0) {
        ok(0, "workspace setup: allocation");
        fs_free(&s, cu);
        context_pop(ctx);
        return;
    }
    context_pop(ctx);
    big = s.p;
    big.batch = MAXB;
    big.seqlen_k = 2000;
    if ((st = gpu_plan_config_text(&plan, ctx, &big, NULL)) != FA4_OK) {
        ok(0, "plan for batch %d, seqlen_k 2000: %s", MAXB, fa4_context_errmsg(ctx));
        goto done;
    }
    fa4_plan_config(plan, &c, NULL);
    fa4_plan_workspace_size(plan, &plan_ws);
    need = expected_workspace(&s.p, &c);   /* the call's sizes */
    context_push(ctx);
    st = cu->cuMemAlloc(&ws, plan_ws) == CUDA_SUCCESS ? FA4_OK : FA4_ENOMEM;
    context_pop(ctx);
    if (st != FA4_OK) {
        ok(0, "workspace of %zu B: allocation", plan_ws);
        goto done;
    }
    t = fs_tensors(&s, sh, ws, need - 1);
    t.batch = sh->batch;
    t.seqlen_q = s.p.seqlen_q;
    t.seqlen_k = s.p.seqlen_k;
    st = fa4_forward(plan, &t, NULL);
    ok(st == FA4_EINVAL && strstr(fa4_context_errmsg(ctx), "workspace_size"),
       "a workspace_size 1 B below the call's need (%zu B) is FA4_EINVAL: %s", need,
       fa4_context_errmsg(ctx));
    t.workspace_size = need;
    ok(fs_run(ctx, plan, &s, sh, &t, ws, need, msg, sizeof msg),
       "a plan for batch %d x 2000 keys runs a call of batch %d x %d keys in the call's "
       "workspace (%zu of %zu B): %s", MAXB, sh->batch, s.p.seqlen_k, need, plan_ws, msg);
done:
    context_push(ctx);
    if (ws)
        cu->cuMemFree(ws);
    fs_free(&s, cu);
    context_pop(ctx);
    fa4_plan_destroy(plan);
}

/* The opt-in input check (FA4_CHECK_INPUTS=1) names bad index entries of
** an fp8 varlen call before anything is launched. */
static void check_inputs_fp8(fa4_context *ctx, uint64_t *seed)
{
    const fs_shape *sh = &shapes[2];
    const cuda_api *cu = ctx->cu;
    fs_data s;
    fa4_plan *plan = NULL;
    fa4_tensors t;
    int32_t bad_cu[3] = { 0, 40, 20 }, bad_used = 9999;

    context_push(ctx);
    if (fs_prepare(&s, sh, cu, seed) != 0 || gpu_plan_config_text(&plan, ctx, &s.p, NULL) != FA4_OK) {
        ok(0, "input-check setup: %s", fa4_context_errmsg(ctx));
        goto done;
    }
    setenv("FA4_CHECK_INPUTS", "1", 1);
    t = fs_tensors(&s, sh, 0, 0);
    ok(fa4_forward(plan, &t, NULL) == FA4_OK, "good index arrays pass the opt-in check");
    cu->cuMemcpyHtoD(s.dcu_k, bad_cu, sizeof bad_cu);
    ok(fa4_forward(plan, &t, NULL) == FA4_EINVAL &&
       strstr(fa4_context_errmsg(ctx), "cu_seqlens_k[2]"),
       "decreasing cu_seqlens_k is named: %s", fa4_context_errmsg(ctx));
    cu->cuMemcpyHtoD(s.dcu_k, s.cu_k, sizeof s.cu_k);
    cu->cuMemcpyHtoD(s.dused + 4, &bad_used, 4);
    ok(fa4_forward(plan, &t, NULL) == FA4_EINVAL && strstr(fa4_context_errmsg(ctx), "seqused_k[1]"),
       "seqused_k past its sequence is named: %s", fa4_context_errmsg(ctx));
    cu->cuMemcpyHtoD(s.dused, s.used, sizeof s.used);
    /* Inside the sequence's room (1100 rows) but past seqlen_k (1000): V^T
       is sized by seqlen_k. */
    bad_used = s.p.seqlen_k + 50;
    cu->cuMemcpyHtoD(s.dused + 8, &bad_used, 4);
    ok(fa4_forward(plan, &t, NULL) == FA4_EINVAL &&
       strstr(fa4_context_errmsg(ctx), "seqused_k[2]") && strstr(fa4_context_errmsg(ctx), "seqlen_k"),
       "seqused_k past seqlen_k inside the sequence's room is named: %s", fa4_context_errmsg(ctx));
    unsetenv("FA4_CHECK_INPUTS");
done:
    fa4_plan_destroy(plan);
    fs_free(&s, cu);
    context_pop(ctx);
}

int main(void)
{
    fa4_context_options co = FA4_CONTEXT_OPTIONS_INIT;
    fa4_context *ctx = NULL, *pc = NULL;
    uint64_t seed;
    int i, c;

    co.no_database = 1;
    co.plan_only = 1;
    co.arch = "sm_90a";
    if (fa4_context_create(&pc, -1, &co) != FA4_OK)
        skip_all("no plan_only context: %s", fa4_context_last_error());
    check_plans(pc);
    co.plan_only = 0;
    co.arch = NULL;
    if (fa4_context_create(&ctx, 0, &co) != FA4_OK || strcmp(ctx->limits.arch, "sm_90a") != 0) {
        diag("no sm_90a GPU (%s): compiling every variant for sm_90a instead",
             ctx ? ctx->limits.arch : fa4_context_last_error());
        fa4_context_destroy(ctx);
        compile_all(pc);
        fa4_context_destroy(pc);
        return done_testing();
    }
    fa4_context_destroy(pc);
    seed = tap_seed() * 0x9E3779B97F4A7C15ULL + 11;
    for (i = 0; i < NSHAPES; i++) {
        const fs_shape *sh = &shapes[i];
        fs_data s;
        if (!gpu_test_shape(sh->name))
            continue;
        context_push(ctx);
        if (fs_prepare(&s, sh, ctx->cu, &seed) != 0) {
            ok(0, "%s: allocation", sh->name);
            fs_free(&s, ctx->cu);
            context_pop(ctx);
            continue;
        }
        context_pop(ctx);
        for (c = -1; c < NCONFIGS; c++) {
            fa4_plan *plan = NULL;
            fa4_config got = FA4_CONFIG_INIT;
            CUdeviceptr ws = 0;
            size_t ws_size = 0;
            char desc[256], msg[512];
            fa4_tensors t;
            fa4_status st = gpu_plan_config_text(&plan, ctx, &s.p, c < 0 ? NULL : configs[c]);
            if (c >= 0 && config_skipped(st)) {
                skip("%s [%s]: %s", sh->name, configs[c], fa4_context_errmsg(ctx));
                continue;
            }
            if (st != FA4_OK) {
                ok(0, "%s [%s]: plan: %s", sh->name, c < 0 ? "default" : configs[c],
                   fa4_context_errmsg(ctx));
                continue;
            }
            fa4_plan_config(plan, &got, NULL);
            fa4_config_format(&got, desc, sizeof desc);
            fa4_plan_workspace_size(plan, &ws_size);
            context_push(ctx);
            if (ws_size && ctx->cu->cuMemAlloc(&ws, ws_size) != CUDA_SUCCESS)
                ws = 0;
            context_pop(ctx);
            if (ws_size && !ws) {
                ok(0, "%s [%s]: workspace of %zu B", sh->name, desc, ws_size);
                fa4_plan_destroy(plan);
                continue;
            }
            t = fs_tensors(&s, sh, ws, ws_size);
            ok(fs_run(ctx, plan, &s, sh, &t, ws, ws_size, msg, sizeof msg), "fp8 %s [%s]: %s",
               sh->name, desc, msg);
            context_push(ctx);
            if (ws)
                ctx->cu->cuMemFree(ws);
            context_pop(ctx);
            fa4_plan_destroy(plan);
        }
        context_push(ctx);
        fs_free(&s, ctx->cu);
        context_pop(ctx);
    }
    check_workspace(ctx, &seed);
    check_inputs_fp8(ctx, &seed);
    fa4_context_destroy(ctx);
    return done_testing();
}
