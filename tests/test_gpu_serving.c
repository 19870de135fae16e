/*
** test_gpu_serving.c -- serving shapes against the float64 CPU reference:
** decode (one and a few query tokens, GQA groups 1..16 packed or not),
** split-KV with 1..many splits, variable-length batches (empty, single-
** token and ragged sequences, one 100x longer than the others), paged KV
** caches (pages out of order, pages shared between sequences, the last
** page partly used, page sizes 16..256; dense and varlen queries over
** them, the sm90 family's plain grid among the configs), seqused_k,
** per-call sizes under one plan, CUDA-graph capture, and the host and
** opt-in device checks of bad input; sm80 tiles of 16 and of 32 query rows
** per warp.  Without a
** GPU the variants are compiled for sm_90a only.  FA4_TEST_SHAPES=A,B
** runs only the shapes whose names contain A or B (a focused run on the GPU).
**
** Each sequence b is computed by the reference as a dense problem of its
** own (batch 1, its lengths) on gathered inputs, so the reference needs
** no notion of packing or pages.
*/
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "fa4.h"
#include "context.h"
#include "reference.h"
#include "gpu_check.h"

/* One serving layout to test. */
typedef struct serve_shape {
    const char *name;
    int batch, heads_q, heads_kv, d;
    int causal;
    int varlen;             /* 1: packed Q/O with cu_seqlens_q */
    int kv_mode;            /* 0 dense [B, Sk, H, D]; 1 varlen packed; 2 paged */
    int page_size;
    int use_seqused;        /* 1: pass seqused_k (dense/paged caches with room) */
    int lq[8], lk[8];       /* per-sequence lengths (dense: all equal) */
    int kv_room;            /* varlen K/V: rows after each sequence's keys,
                               filled with NaN (seqused_k gives the lengths) */
    int capped;             /* 1: softcap 2 (scale 0.25) and attention sinks */
} serve_shape;

/* Device buffers and the reference of one shape. */
typedef struct serve_data {
    fa4_problem p;
    size_t nq, no, nkv_rows;     /* query rows (total), key rows allocated */
    uint16_t *q, *k, *v;         /* host, in the device layout */
    double *ref_o, *ref_lse;     /* [total_q][heads_q][d], [heads_q][total_q] */
    int32_t cu_q[9], cu_k[9], used[8], *table;
    float sinks[64];
    int total_q, table_stride, num_pages;
    CUdeviceptr dq, dk, dv, dout, dlse, dcu_q, dcu_k, dused, dtable, dsinks;
} serve_data;

static uint64_t seed = 0x5e55f00dULL;

static size_t qrow_of(const serve_data *s, const serve_shape *sh, int b, int i)
{
    return sh->varlen ? (size_t)s->cu_q[b] + i : (size_t)b * s->p.seqlen_q + i;
}

/* Index of (head H, query row I of sequence B) in the LSE output:
 * [heads_q, total_q] varlen, [batch, heads_q, seqlen_q] dense. */
static size_t lse_of(const serve_data *s, const serve_shape *sh, int b, int i, int h)
{
    return sh->varlen ? (size_t)h * s->total_q + s->cu_q[b] + i
                      : ((size_t)b * s->p.heads_q + h) * s->p.seqlen_q + i;
}

/* Host row index (in the K/V arrays as laid out) of key J of sequence B. */
static size_t krow_of(const serve_data *s, const serve_shape *sh, int b, int j)
{
    if (sh->kv_mode == 1)
        return (size_t)s->cu_k[b] + j;
    if (sh->kv_mode == 2)
        return (size_t)s->table[b * s->table_stride + j / sh->page_size] * sh->page_size +
               j % sh->page_size;
    return (size_t)b * s->p.seqlen_k + j;
}

/* Build the layout, fill it with fresh random values, compute the reference. */
static int serve_prepare(serve_data *s, const serve_shape *sh, const cuda_api *cu)
{
    const int d = sh->d, hq = sh->heads_q, hk = sh->heads_kv;
    int b, i, j, h, maxq = 1, maxk = 1, e;

    memset(s, 0, sizeof *s);
    for (b = 0; b < sh->batch; b++) {
        maxq = sh->lq[b] > maxq ? sh->lq[b] : maxq;
        maxk = sh->lk[b] > maxk ? sh->lk[b] : maxk;
        s->cu_q[b + 1] = s->cu_q[b] + sh->lq[b];
        s->cu_k[b + 1] = s->cu_k[b] + sh->lk[b] + sh->kv_room;
        s->used[b] = sh->lk[b];
    }
    s->p = (fa4_problem)FA4_PROBLEM_INIT;
    s->p.batch = sh->batch;
    s->p.heads_q = hq;
    s->p.heads_kv = hk;
    s->p.head_dim_qk = d;
    s->p.causal = sh->causal;
    s->p.return_lse = 1;
    s->p.varlen = sh->varlen || sh->kv_mode == 1;
    s->p.seqlen_q = maxq;
    s->p.seqlen_k = maxk;
    s->p.softmax_scale = (float)(1.0 / sqrt((double)d));
    if (sh->capped) {
        s->p.softmax_scale = 0.25f;
        s->p.softcap = 2.0f;
        s->p.attention_sinks = 1;
        for (h = 0; h < hq && h < 64; h++)
            s->sinks[h] = (float)((h * 37) % 17) / 4.0f - 2.0f;   /* -2 .. 2 */
    }
    s->total_q = sh->varlen ? s->cu_q[sh->batch] : sh->batch * maxq;
    s->nq = (size_t)s->total_q;
    if (sh->kv_mode == 1) {
        s->nkv_rows = (size_t)s->cu_k[sh->batch];
    } else if (sh->kv_mode == 2) {
        /* Pages in reverse order of use, and sequence 1 shares sequence
           0's first page when both have one (its keys then equal 0's). */
        int ps = sh->page_size, next;
        s->p.page_size = ps;
        s->table_stride = (maxk + ps - 1) / ps + 1;
        s->p.block_table_stride = s->table_stride;
        s->num_pages = 0;
        for (b = 0; b < sh->batch; b++)
            s->num_pages += (sh->lk[b] + ps - 1) / ps;
        s->num_pages += 2;   /* unused pages in the pool */
        s->p.num_pages = s->num_pages;
        s->table = calloc((size_t)sh->batch * s->table_stride, sizeof *s->table);
        next = s->num_pages - 1;
        for (b = 0; b < sh->batch; b++)
            for (i = 0; i < (sh->lk[b] + ps - 1) / ps; i++)
                s->table[b * s->table_stride + i] =
                    (b == 1 && i == 0 && sh->lk[0] >= ps && sh->lk[1] >= ps) ? s->table[0] : next--;
        s->nkv_rows = (size_t)s->num_pages * ps;
    } else {
        s->nkv_rows = (size_t)sh->batch * maxk;
    }
    s->q = malloc(s->nq * hq * d * 2 + 2);
    s->k = malloc(s->nkv_rows * hk * d * 2 + 2);
    s->v = malloc(s->nkv_rows * hk * d * 2 + 2);
    s->ref_o = calloc(s->nq * hq * d + 1, sizeof(double));
    s->ref_lse = calloc(s->nq * hq + 1, sizeof(double));
    ref_fill_random(s->q, s->nq * hq * d, FA4_DTYPE_BF16, &seed);
    ref_fill_random(s->k, s->nkv_rows * hk * d, FA4_DTYPE_BF16, &seed);
    ref_fill_random(s->v, s->nkv_rows * hk * d, FA4_DTYPE_BF16, &seed);
    /* A cache's spare rows may hold anything: NaN must not leak from them. */
    for (b = 0; b < sh->batch && sh->kv_mode == 1; b++)
        for (j = sh->lk[b]; j < sh->lk[b] + sh->kv_room; j++)
            for (e = 0; e < hk * d; e++) {
                s->k[((size_t)s->cu_k[b] + j) * hk * d + e] = 0x7fc0;
                s->v[((size_t)s->cu_k[b] + j) * hk * d + e] = 0x7fc0;
            }

    for (b = 0; b < sh->batch; b++) {
        int lq = sh->lq[b], lk = sh->lk[b];
        fa4_problem rp = s->p;
        uint16_t *gq, *gk, *gv;
        double *o, *lse;
        if (lq == 0)
            continue;
        if (lk == 0) {   /* no key: O = 0, LSE = -inf */
            for (i = 0; i < lq; i++)
                for (h = 0; h < hq; h++)
                    s->ref_lse[lse_of(s, sh, b, i, h)] = -INFINITY;
            continue;
        }
        rp.batch = 1; rp.seqlen_q = lq; rp.seqlen_k = lk; rp.varlen = 0; rp.page_size = 0;
        rp.block_table_stride = 0; rp.num_pages = 0;
        gq = malloc((size_t)lq * hq * d * 2);
        gk = malloc((size_t)lk * hk * d * 2);
        gv = malloc((size_t)lk * hk * d * 2);
        o = malloc(sizeof(double) * lq * hq * d);
        lse = malloc(sizeof(double) * lq * hq);
        for (i = 0; i < lq; i++)
            memcpy(gq + (size_t)i * hq * d, s->q + qrow_of(s, sh, b, i) * hq * d, (size_t)hq * d * 2);
        for (j = 0; j < lk; j++) {
            memcpy(gk + (size_t)j * hk * d, s->k + krow_of(s, sh, b, j) * hk * d, (size_t)hk * d * 2);
            memcpy(gv + (size_t)j * hk * d, s->v + krow_of(s, sh, b, j) * hk * d, (size_t)hk * d * 2);
        }
        ref_attention_sinks(o, lse, &rp, gq, gk, gv, s->sinks);
        for (i = 0; i < lq; i++)
            for (h = 0; h < hq; h++) {
                memcpy(s->ref_o + (qrow_of(s, sh, b, i) * hq + h) * d, o + ((size_t)i * hq + h) * d,
                       sizeof(double) * d);
                s->ref_lse[lse_of(s, sh, b, i, h)] = lse[(size_t)h * lq + i];
            }
        free(gq); free(gk); free(gv); free(o); free(lse);
    }
    e = cu->cuMemAlloc(&s->dq, s->nq * hq * d * 2 + 16) | cu->cuMemAlloc(&s->dk, s->nkv_rows * hk * d * 2 + 16) |
        cu->cuMemAlloc(&s->dv, s->nkv_rows * hk * d * 2 + 16) | cu->cuMemAlloc(&s->dout, s->nq * hq * d * 2 + 16) |
        cu->cuMemAlloc(&s->dlse, s->nq * hq * 4 + 16) | cu->cuMemAlloc(&s->dcu_q, sizeof s->cu_q) |
        cu->cuMemAlloc(&s->dcu_k, sizeof s->cu_k) | cu->cuMemAlloc(&s->dused, sizeof s->used) |
        cu->cuMemAlloc(&s->dtable, s->table ? (size_t)sh->batch * s->table_stride * 4 : 16) |
        cu->cuMemAlloc(&s->dsinks, sizeof s->sinks);
    if (e)
        return -1;
    cu->cuMemcpyHtoD(s->dq, s->q, s->nq * hq * d * 2);
    cu->cuMemcpyHtoD(s->dk, s->k, s->nkv_rows * hk * d * 2);
    cu->cuMemcpyHtoD(s->dv, s->v, s->nkv_rows * hk * d * 2);
    cu->cuMemcpyHtoD(s->dcu_q, s->cu_q, sizeof s->cu_q);
    cu->cuMemcpyHtoD(s->dcu_k, s->cu_k, sizeof s->cu_k);
    cu->cuMemcpyHtoD(s->dused, s->used, sizeof s->used);
    if (s->table)
        cu->cuMemcpyHtoD(s->dtable, s->table, (size_t)sh->batch * s->table_stride * 4);
    cu->cuMemcpyHtoD(s->dsinks, s->sinks, sizeof s->sinks);
    return 0;
}

static void serve_free(serve_data *s, const cuda_api *cu)
{
    CUdeviceptr *p[] = { &s->dq, &s->dk, &s->dv, &s->dout, &s->dlse, &s->dcu_q, &s->dcu_k,
                         &s->dused, &s->dtable, &s->dsinks };
    size_t i;
    for (i = 0; i < sizeof p / sizeof p[0]; i++)
        if (*p[i])
            cu->cuMemFree(*p[i]);
    free(s->q); free(s->k); free(s->v); free(s->ref_o); free(s->ref_lse); free(s->table);
}

static void serve_tensors(fa4_tensors *t, const serve_data *s, const serve_shape *sh)
{
    *t = (fa4_tensors)FA4_TENSORS_INIT;
    t->q = (void *)(uintptr_t)s->dq;
    t->k = (void *)(uintptr_t)s->dk;
    t->v = (void *)(uintptr_t)s->dv;
    t->o = (void *)(uintptr_t)s->dout;
    t->lse = (float *)(uintptr_t)s->dlse;
    if (s->p.varlen) {
        t->cu_seqlens_q = (const int32_t *)(uintptr_t)s->dcu_q;
        t->cu_seqlens_k = (const int32_t *)(uintptr_t)s->dcu_k;
    }
    if (sh->kv_mode == 2)
        t->block_table = (const int32_t *)(uintptr_t)s->dtable;
    if (sh->capped)
        t->sinks = (const float *)(uintptr_t)s->dsinks;
    if (sh->use_seqused)
        t->seqused_k = (const int32_t *)(uintptr_t)s->dused;
}

/* The largest ||O_row - ref_row|| / (||ref_row|| + 1e-3) over the (query
 * row, head) vectors of S's device output, +inf on any NaN or Inf: one
 * wrong row of a short sequence is not hidden by a long one. */
static double serve_output_error(const serve_data *s, const serve_shape *sh, const cuda_api *cu)
{
    const size_t n = s->nq * sh->heads_q * sh->d;
    uint16_t *o = malloc(n * 2 + 2);
    double worst = 0;
    size_t r;
    int c;

    cu->cuMemcpyDtoH(o, s->dout, n * 2);
    for (r = 0; r < s->nq * sh->heads_q; r++) {
        double diff = 0, norm = 0, e;
        for (c = 0; c < sh->d; c++) {
            double x = ref_half_to_float(o[r * sh->d + c], FA4_DTYPE_BF16);
            double y = s->ref_o[r * sh->d + c];
            diff += (x - y) * (x - y);
            norm += y * y;
        }
        e = sqrt(diff) / (sqrt(norm) + 1e-3);
        if (!(e <= worst))
            worst = isnan(e) ? INFINITY : e;
    }
    free(o);
    return worst;
}

/*
** Run PLAN on S (output poisoned with NaN first) and compare: O within
** 2e-2 relative (Frobenius) and every LSE within 1e-3 (1 + |ref|), -inf
** exactly where the reference has it, no NaN.  Writes the figures to MSG.
*/
static int serve_check(fa4_context *ctx, const fa4_plan *plan, serve_data *s, const serve_shape *sh,
                       char *msg, size_t mn)
{
    const cuda_api *cu = ctx->cu;
    const int hq = sh->heads_q, d = sh->d;
    const size_t no = s->nq * hq * d, nl = s->nq * hq;
    float *lse = malloc(nl * 4 + 4);
    fa4_tensors t;
    double err, lerr = 0;
    size_t i;
    int bad_lse = 0, rc;

    serve_tensors(&t, s, sh);
    context_push(ctx);
    cu->cuMemsetD8(s->dout, 0xff, no * 2);   /* 0xffff is NaN in bf16 */
    cu->cuMemsetD8(s->dlse, 0xff, nl * 4);
    context_pop(ctx);
    if (fa4_forward(plan, &t, NULL) != FA4_OK) {
        snprintf(msg, mn, "fa4_forward: %s", fa4_context_errmsg(ctx));
        free(lse);
        return 0;
    }
    context_push(ctx);
    rc = cu->cuCtxSynchronize();
    err = serve_output_error(s, sh, cu);
    cu->cuMemcpyDtoH(lse, s->dlse, nl * 4);
    context_pop(ctx);
    if (rc) {
        snprintf(msg, mn, "kernel failed: CUDA error %d", rc);
        free(lse);
        return 0;
    }
    for (i = 0; i < nl; i++) {
        double r = s->ref_lse[i], x = lse[i];
        if (isnan(x) || (isinf(r) != isinf(x))) { bad_lse++; continue; }
        if (!isinf(r) && fabs(x - r) / (1 + fabs(r)) > lerr)
            lerr = fabs(x - r) / (1 + fabs(r));
    }
    free(lse);
    snprintf(msg, mn, "rel err %.2e, lse err %.2e%s", err, lerr, bad_lse ? ", LSE -inf/NaN mismatch" : "");
    return err < 2e-2 && lerr < 1e-3 && !bad_lse;
}

static const serve_shape shapes[] = {
    /* name, batch, hq, hkv, d, causal, varlen, kv_mode, page, seqused, lq, lk */
    { "decode group 8 d128", 3, 16, 2, 128, 0, 0, 0, 0, 0, {1, 1, 1}, {1000, 1000, 1000}, 0, 0 },
    { "decode group 4 seqused_k", 4, 8, 2, 128, 1, 0, 0, 0, 1, {1, 1, 1, 1}, {1000, 17, 1, 0}, 0, 0 },
    { "decode group 1 d64", 2, 4, 4, 64, 0, 0, 0, 0, 0, {1, 1}, {777, 777}, 0, 0 },
    { "decode group 16 d128", 2, 32, 2, 128, 0, 0, 0, 0, 0, {1, 1}, {4096, 4096}, 0, 0 },
    { "speculative 8 tokens causal", 2, 16, 2, 128, 1, 0, 0, 0, 0, {8, 8}, {1000, 1000}, 0, 0 },
    { "varlen causal ragged", 5, 8, 2, 128, 1, 1, 1, 0, 0, {0, 1, 17, 1000, 10}, {0, 5, 17, 1000, 12}, 0, 0 },
    { "varlen 100x longer", 3, 4, 4, 64, 1, 1, 1, 0, 0, {10, 1000, 9}, {10, 1000, 9}, 0, 0 },
    { "paged 16 decode", 4, 16, 2, 128, 0, 0, 2, 16, 1, {1, 1, 1, 1}, {1000, 33, 16, 1}, 0, 0 },
    { "paged 64 varlen causal", 3, 8, 2, 128, 1, 1, 2, 64, 1, {17, 1, 100}, {300, 64, 1000}, 0, 0 },
    { "paged 256 decode", 2, 8, 1, 128, 0, 0, 2, 256, 1, {1, 1}, {1000, 600}, 0, 0 },
    { "paged 32 d64 chunked prefill", 2, 4, 2, 64, 1, 1, 2, 32, 1, {64, 129}, {512, 700}, 0, 0 },
    /* Varlen prefill (the sm90 family on sm_90a): tile-ragged lengths, a
       sequence shorter than any tile after a cache's NaN-filled spare
       rows, seqused_k, GQA 4 and none. */
    { "varlen prefill ragged", 8, 8, 2, 128, 0, 1, 1, 0, 0,
      {1, 17, 1000, 300, 129, 0, 64, 2000}, {1, 17, 1000, 300, 129, 0, 64, 2000}, 0, 0 },
    { "varlen prefill causal seqused_k spare rows", 6, 8, 2, 128, 1, 1, 1, 0, 1,
      {17, 1000, 5, 130, 1, 257}, {40, 1000, 3, 300, 1, 257}, 100, 0 },
    { "varlen prefill d64 causal 100x", 4, 4, 4, 64, 1, 1, 1, 0, 0,
      {3000, 30, 191, 193}, {3000, 30, 191, 193}, 0, 0 },
    /* Short varlen batches with enough tiles that every CTA of the dynamic
       scheduler runs several: causal up to 512 keys, GQA 4 packed, takes
       two Q slots (both turn); non-causal d64 in three consumer warpgroups
       keeps one. */
    { "varlen prefill causal short q slots", 8, 16, 4, 128, 1, 1, 1, 0, 0,
      {512, 300, 17, 129, 1, 500, 64, 257}, {512, 300, 17, 129, 1, 500, 64, 257}, 0, 0 },
    { "varlen prefill d64 short many tiles", 8, 16, 16, 64, 0, 1, 1, 0, 0,
      {2048, 1000, 17, 1, 700, 1500, 129, 64}, {2048, 1000, 17, 1, 700, 1500, 129, 64}, 0, 0 },
    /* Paged prefill on the sm90 family: pages smaller than a key block,
       dense queries, the last page partly used. */
    { "paged 16 chunked prefill d128", 2, 8, 2, 128, 1, 0, 2, 16, 1, {256, 256}, {2000, 700}, 0, 0 },
    /* Pages larger than a key block: with bn 176 (below) a block spans two
       pages, loaded in 16-row boxes. */
    { "paged 256 chunked prefill d128", 2, 8, 2, 128, 1, 0, 2, 256, 1, {200, 200}, {1000, 600}, 0, 0 },
    /* Varlen queries over pages (a mixed prefill and decode batch; the
       sm90 family's plain grid, the sm80 family's tiles): ragged chunks
       and a decode row, the last pages partly used. */
    { "paged 16 varlen chunked prefill d128 ragged", 4, 8, 2, 128, 1, 1, 2, 16, 1,
      {300, 17, 1, 1000}, {2000, 700, 64, 1000}, 0, 0 },
    /* Softcap and sinks: a split decode (the merge adds the sink), varlen
       prefill, and a causal d128 chunk over a paged cache, whose default
       takes half of the tanh on the FMA pipe (budget_sm90.c). */
    { "decode group 8 softcap sinks", 3, 16, 2, 128, 0, 0, 0, 0, 1,
      {1, 1, 1}, {3000, 1, 700}, 0, 1 },
    { "paged 16 decode softcap sinks", 2, 8, 2, 128, 0, 0, 2, 16, 1, {1, 1}, {1000, 40}, 0, 1 },
    { "varlen prefill causal softcap sinks", 3, 8, 2, 128, 1, 1, 1, 0, 0,
      {17, 1000, 130}, {40, 1000, 130}, 0, 1 },
    { "paged 64 chunked prefill d128 softcap sinks", 2, 8, 2, 128, 1, 0, 2, 64, 1,
      {256, 256}, {2000, 700}, 0, 1 },
};

/* Config overrides tried on every shape (beside the heuristic): split-key
   decode tiles, 16 query rows per warp (no warps: the text of configs
   stored before 32-row warps) and 32 rows per warp (warps = bm / 32;
   bn 64 at 32 rows fits d64 only, so d128 shapes skip that one). */
static const char *configs[] = {
    "sm80 bm=16 bn=64 stages=3 swizzle=128 warps=4 splits=1 pack_gqa=1 kv_split_warps=1",
    "sm80 bm=16 bn=128 stages=2 swizzle=128 warps=4 splits=3 pack_gqa=1 kv_split_warps=1",
    "sm80 bm=16 bn=32 stages=4 swizzle=128 warps=2 splits=16 pack_gqa=0 kv_split_warps=1",
    "sm80 bm=64 bn=64 stages=2 swizzle=128 splits=2 pack_gqa=1",
    "sm80 bm=64 bn=64 stages=2 swizzle=128 splits=1 pack_gqa=0",
    "sm80 bm=128 bn=64 stages=2 swizzle=128 splits=0 pack_gqa=1",
    "sm80 bm=128 bn=32 stages=2 swizzle=128 warps=4 splits=0 pack_gqa=0",
    "sm80 bm=128 bn=32 stages=3 swizzle=128 warps=4 splits=2 pack_gqa=1",
    "sm80 bm=64 bn=64 stages=2 swizzle=128 warps=2 splits=0 pack_gqa=1",
};
#define NCONFIGS ((int)(sizeof configs / sizeof configs[0]))

/* sm90 overrides tried on the prefill shapes (varlen or paged): the plain
   grid, three consumer warpgroups, the fused ring with 64 B swizzle, a key
   block that is no power of two (176: paged boxes of 16 rows), GQA heads
   packed into the tiles (under the dynamic scheduler and the plain grid,
   which varlen queries over pages take). */
static const char *sm90_configs[] = {
    "sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 pingpong=1 sched=plain",
    "sm90 bm=192 bn=64 stages=3 swizzle=128 wgs=3 regs=32/160 pingpong=0 sched=dynamic",
    "sm90 bm=128 bn=96 stages=2 swizzle=64 fused_kv=1 wgs=2 regs=24/240 pingpong=1 sched=dynamic",
    "sm90 bm=128 bn=176 stages=2 swizzle=128 wgs=2 regs=24/240 pingpong=1 sched=plain",
    "sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 pingpong=1 sched=dynamic "
    "late_k=1 pack_gqa=1",
    "sm90 bm=192 bn=64 stages=3 swizzle=128 wgs=3 regs=32/160 pingpong=0 sched=plain pack_gqa=1",
};
#define NSM90CONFIGS ((int)(sizeof sm90_configs / sizeof sm90_configs[0]))
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))



/* Bad input: each inconsistent field gets FA4_EINVAL naming it. */
static void check_host_errors(void)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    char why[256];

    p.batch = 2; p.seqlen_q = 1; p.seqlen_k = 100; p.heads_q = 8; p.heads_kv = 2; p.head_dim_qk = 128;
    p.page_size = 24;
    ok(fa4_problem_check(&p, why, sizeof why) == FA4_EINVAL && strstr(why, "page_size"),
       "page_size 24 (not a power of two) is refused: %s", why);
    p.page_size = 16;
    p.block_table_stride = 3;
    ok(fa4_problem_check(&p, why, sizeof why) == FA4_EINVAL && strstr(why, "block_table_stride"),
       "a block table too narrow for seqlen_k is refused: %s", why);
    p.block_table_stride = 0;
    ok(fa4_problem_check(&p, why, sizeof why) == FA4_OK, "a paged problem with defaults is valid");
    p.page_size = 0; p.num_pages = 4;
    ok(fa4_problem_check(&p, why, sizeof why) == FA4_EINVAL && strstr(why, "num_pages"),
       "num_pages without page_size is refused: %s", why);
    p.num_pages = 0; p.varlen = 2;
    ok(fa4_problem_check(&p, why, sizeof why) == FA4_EINVAL && strstr(why, "varlen"),
       "varlen=2 is refused: %s", why);
    p.varlen = 1; p.seqlen_q = 0;
    ok(fa4_problem_check(&p, why, sizeof why) == FA4_EINVAL && strstr(why, "seqlen_q"),
       "varlen with seqlen_q (the maximum) 0 is refused: %s", why);
}

/* Launch-time checks on a GPU: missing pointers, sizes over the plan's,
   and the opt-in check of the index arrays' contents. */
static void check_launch_errors(fa4_context *ctx, const cuda_api *cu)
{
    const serve_shape *sh = &shapes[8];   /* paged, varlen */
    serve_data s;
    fa4_plan *plan = NULL;
    fa4_tensors t;
    int32_t bad_cu[4] = { 0, 17, 10, 110 }, bad_page = 999;

    context_push(ctx);
    if (serve_prepare(&s, sh, cu) != 0 || gpu_plan_config_text(&plan, ctx, &s.p, NULL) != FA4_OK) {
        ok(0, "launch-error setup: %s", fa4_context_errmsg(ctx));
        context_pop(ctx);
        return;
    }
    serve_tensors(&t, &s, sh);
    t.cu_seqlens_q = NULL;
    ok(fa4_forward(plan, &t, NULL) == FA4_EINVAL && strstr(fa4_context_errmsg(ctx), "cu_seqlens_q"),
       "varlen without cu_seqlens_q: %s", fa4_context_errmsg(ctx));
    serve_tensors(&t, &s, sh);
    t.block_table = NULL;
    ok(fa4_forward(plan, &t, NULL) == FA4_EINVAL && strstr(fa4_context_errmsg(ctx), "block_table"),
       "paged without block_table: %s", fa4_context_errmsg(ctx));
    serve_tensors(&t, &s, sh);
    t.seqlen_k = s.p.seqlen_k + 1;
    ok(fa4_forward(plan, &t, NULL) == FA4_EINVAL && strstr(fa4_context_errmsg(ctx), "seqlen_k"),
       "a call longer than the plan: %s", fa4_context_errmsg(ctx));
    setenv("FA4_CHECK_INPUTS", "1", 1);
    serve_tensors(&t, &s, sh);
    ok(fa4_forward(plan, &t, NULL) == FA4_OK, "good index arrays pass the opt-in check");
    cu->cuMemcpyHtoD(s.dcu_q, bad_cu, sizeof bad_cu);
    ok(fa4_forward(plan, &t, NULL) == FA4_EINVAL && strstr(fa4_context_errmsg(ctx), "cu_seqlens_q[2]"),
       "decreasing cu_seqlens_q is named: %s", fa4_context_errmsg(ctx));
    cu->cuMemcpyHtoD(s.dcu_q, s.cu_q, sizeof s.cu_q);
    cu->cuMemcpyHtoD(s.dtable + 4 * (s.table_stride * 2 + 1), &bad_page, 4);
    ok(fa4_forward(plan, &t, NULL) == FA4_EINVAL && strstr(fa4_context_errmsg(ctx), "block_table[2][1]"),
       "a page index out of range is named: %s", fa4_context_errmsg(ctx));
    unsetenv("FA4_CHECK_INPUTS");
    fa4_plan_destroy(plan);
    serve_free(&s, cu);
    context_pop(ctx);
}

/* One plan for a decode loop: contiguous K/V of growing length (per-call
   seqlen_k, strides follow), and the same launch captured in a graph. */
static void check_plan_class(fa4_context *ctx, const cuda_api *cu)
{
    serve_shape sh = { "decode class", 2, 16, 2, 128, 0, 0, 0, 0, 0, {1, 1}, {300, 300}, 0, 0 };
    serve_data s;
    fa4_problem big;
    fa4_plan *plan = NULL;
    char msg[256];
    int n;

    context_push(ctx);
    if (serve_prepare(&s, &sh, cu) != 0) {
        ok(0, "plan-class setup");
        context_pop(ctx);
        return;
    }
    big = s.p;
    big.seqlen_k = 4096;
    big.batch = 8;
    if (fa4_plan_create(&plan, ctx, &big, NULL) != FA4_OK) {
        ok(0, "plan for seqlen_k 4096: %s", fa4_context_errmsg(ctx));
    } else {
        /* serve_check passes the plan's sizes; set this call's instead. */
        fa4_tensors t;
        serve_tensors(&t, &s, &sh);
        t.seqlen_k = 300;
        t.batch = 2;
        cu->cuMemsetD8(s.dout, 0xff, s.nq * sh.heads_q * sh.d * 2);
        n = fa4_forward(plan, &t, NULL) == FA4_OK;
        cu->cuCtxSynchronize();
        {
            double err = serve_output_error(&s, &sh, cu);
            snprintf(msg, sizeof msg, "rel err %.2e", err);
            ok(n && err < 2e-2, "a plan for seqlen_k <= 4096, batch <= 8 runs a call with "
               "seqlen_k 300, batch 2 (contiguous strides follow the call): %s", msg);
        }
        fa4_plan_destroy(plan);
    }
    serve_free(&s, cu);
    context_pop(ctx);
}

/* A split-KV decode step (main kernel + combine) captured in a CUDA graph
   and replayed: fa4_forward must neither allocate nor synchronise. */
static void check_graph_capture(fa4_context *ctx, const cuda_api *cu)
{
    serve_shape sh = { "graph", 1, 16, 2, 128, 0, 0, 0, 0, 0, {1}, {4000}, 0, 0 };
    CUresult (*stream_create)(CUstream *, unsigned);
    CUresult (*begin)(CUstream, CUstreamCaptureMode);
    CUresult (*end)(CUstream, CUgraph *);
    CUresult (*instantiate)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*launch)(CUgraphExec, CUstream);
    CUresult (*sync)(CUstream);
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    serve_data s;
    fa4_plan *plan = NULL;
    fa4_tensors t;
    CUstream stream = NULL;
    CUgraph graph = NULL;
    CUgraphExec exec = NULL;
    size_t ws = 0;
    double err;
    int captured;

    if (!h) {
        ok(0, "dlopen libcuda for graph capture");
        return;
    }
    *(void **)&stream_create = dlsym(h, "cuStreamCreate");
    *(void **)&begin = dlsym(h, "cuStreamBeginCapture_v2");
    *(void **)&end = dlsym(h, "cuStreamEndCapture");
    *(void **)&instantiate = dlsym(h, "cuGraphInstantiateWithFlags");
    *(void **)&launch = dlsym(h, "cuGraphLaunch");
    *(void **)&sync = dlsym(h, "cuStreamSynchronize");
    context_push(ctx);
    if (!stream_create || !begin || !end || !instantiate || !launch || !sync ||
        serve_prepare(&s, &sh, cu) != 0 || gpu_plan_config_text(&plan, ctx, &s.p, NULL) != FA4_OK) {
        ok(0, "graph-capture setup: %s", fa4_context_errmsg(ctx));
        context_pop(ctx);
        return;
    }
    fa4_plan_workspace_size(plan, &ws);
    stream_create(&stream, 1 /* non-blocking */);
    serve_tensors(&t, &s, &sh);
    cu->cuMemsetD8(s.dout, 0xff, s.nq * sh.heads_q * sh.d * 2);
    captured = begin(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS &&
               fa4_forward(plan, &t, (fa4_stream)stream) == FA4_OK &&
               end(stream, &graph) == CUDA_SUCCESS &&
               instantiate(&exec, graph, 0) == CUDA_SUCCESS &&
               launch(exec, stream) == CUDA_SUCCESS && sync(stream) == CUDA_SUCCESS;
    err = serve_output_error(&s, &sh, cu);
    ok(captured && ws > 0 && err < 2e-2,
       "a split-KV decode step (workspace %zu B) is captured in a CUDA graph and replays "
       "correctly (rel err %.2e)", ws, err);
    fa4_plan_destroy(plan);
    serve_free(&s, cu);
    context_pop(ctx);
    dlclose(h);
}

int main(void)
{
    fa4_context *ctx = NULL;
    fa4_context_options co = FA4_CONTEXT_OPTIONS_INIT;
    const cuda_api *cu;
    int i, c;

    co.no_database = 1;
    check_host_errors();
    if (fa4_context_create(&ctx, 0, &co) != FA4_OK) {
        /* No GPU: every shape's default and override variants must compile. */
        fa4_context *pc = NULL;
        co.plan_only = 1;
        co.arch = "sm_90a";
        if (fa4_context_create(&pc, -1, &co) != FA4_OK) {
            ok(0, "plan_only context: %s", fa4_context_last_error());
            return done_testing();
        }
        for (i = 0; i < NSHAPES; i++) {
            serve_data s;
            fa4_plan *plan = NULL;
            const serve_shape *sh = &shapes[i];
            memset(&s, 0, sizeof s);
            /* The problem alone (no buffers): reuse the layout code's sizes. */
            s.p = (fa4_problem)FA4_PROBLEM_INIT;
            s.p.batch = sh->batch; s.p.heads_q = sh->heads_q; s.p.heads_kv = sh->heads_kv;
            s.p.head_dim_qk = sh->d; s.p.causal = sh->causal; s.p.seqlen_q = 1; s.p.seqlen_k = 1;
            for (c = 0; c < sh->batch; c++) {
                s.p.seqlen_q = sh->lq[c] > s.p.seqlen_q ? sh->lq[c] : s.p.seqlen_q;
                s.p.seqlen_k = sh->lk[c] > s.p.seqlen_k ? sh->lk[c] : s.p.seqlen_k;
            }
            s.p.varlen = sh->varlen || sh->kv_mode == 1;
            if (sh->capped) {
                s.p.softcap = 2.0f;
                s.p.attention_sinks = 1;
            }
            s.p.page_size = sh->kv_mode == 2 ? sh->page_size : 0;
            {
                fa4_status st = gpu_plan_config_text(&plan, pc, &s.p, NULL);
                ok(st == FA4_OK, "%s: the default variant compiles for sm_90a%s%s", sh->name,
                   st ? ": " : "", st ? fa4_context_errmsg(pc) : "");
            }
            fa4_plan_destroy(plan);
            if (i < 3)
                for (c = 0; c < NCONFIGS; c++) {
                    fa4_status st;
                    plan = NULL;
                    st = gpu_plan_config_text(&plan, pc, &s.p, configs[c]);
                    if (st == FA4_ENOFIT) {
                        skip("%s [%s]: does not fit", sh->name, configs[c]);
                        continue;
                    }
                    ok(st == FA4_OK, "%s [%s] compiles%s%s", sh->name, configs[c], st ? ": " : "",
                       st ? fa4_context_errmsg(pc) : "");
                    fa4_plan_destroy(plan);
                }
        }
        fa4_context_destroy(pc);
        return done_testing();
    }
    cu = ctx->cu;
    for (i = 0; i < NSHAPES; i++) {
        const serve_shape *sh = &shapes[i];
        serve_data s;
        char msg[256];
        if (!gpu_test_shape(sh->name))
            continue;
        context_push(ctx);
        if (serve_prepare(&s, sh, cu) != 0) {
            ok(0, "%s: allocation", sh->name);
            context_pop(ctx);
            continue;
        }
        context_pop(ctx);
        for (c = -1; c < NCONFIGS + NSM90CONFIGS; c++) {
            fa4_plan *plan = NULL;
            fa4_config got = FA4_CONFIG_INIT;
            char desc[256];
            const char *cfg = c < 0 ? NULL : c < NCONFIGS ? configs[c] : sm90_configs[c - NCONFIGS];
            fa4_status st;
            if (c >= NCONFIGS && (s.p.seqlen_q == 1 || (!sh->varlen && sh->kv_mode != 2)))
                continue;
            st = gpu_plan_config_text(&plan, ctx, &s.p, cfg);
            if (st == FA4_ENOFIT || ((st == FA4_ENOTSUP || st == FA4_EINVAL) && c >= NCONFIGS)) {
                skip("%s [%s]: does not fit: %s", sh->name, cfg, fa4_context_errmsg(ctx));
                continue;
            }
            if (st != FA4_OK) {
                ok(0, "%s [%s]: plan: %s", sh->name, cfg ? cfg : "default", fa4_context_errmsg(ctx));
                continue;
            }
            fa4_plan_config(plan, &got, NULL);
            fa4_config_format(&got, desc, sizeof desc);
            ok(serve_check(ctx, plan, &s, sh, msg, sizeof msg), "%s [%s]: %s", sh->name,
               desc, msg);
            fa4_plan_destroy(plan);
        }
        context_push(ctx);
        serve_free(&s, cu);
        context_pop(ctx);
    }
    check_plan_class(ctx, cu);
    check_launch_errors(ctx, cu);
    check_graph_capture(ctx, cu);
    fa4_context_destroy(ctx);
    return done_testing();
}
