/*
** gpu_check.h -- run plans on random inputs and compare them with the
** float64 CPU reference.  Shared by the GPU tests and bench/sweep.
**
** A gpu_case holds one problem's inputs (host and device) and the
** reference for the rows it checks, so many variants can be checked
** against one reference: gpu_case_prepare() (or gpu_case_prepare_inputs()
** with the caller's inputs), gpu_case_run() per plan, gpu_case_free().
** gpu_check() does all three for one plan.  Inputs of any dtype: fp8
** ones come with their descale factors, and O is read in dtype_out().
**
** The comparison and its tolerance are lib/verify.c's, the same the tuner
** applies to every candidate: r.pass says whether the plan is correct
** (O and LSE within verify_tolerance_of(dtype), no NaN or Inf anywhere in
** the output).
*/
#ifndef FA4_GPU_CHECK_H
#define FA4_GPU_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fa4.h"
#include "config.h"
#include "context.h"
#include "dtype.h"
#include "reference.h"
#include "verify.h"

#ifndef GPU_CHECK_BUDGET
#define GPU_CHECK_BUDGET 2.0e9   /* reference multiply-adds before rows are sampled */
#endif

typedef struct gpu_check_result {
    int pass;            /* 1: within lib/verify.c's tolerance of the dtype */
    double rel_err;      /* ||o - ref|| / ||ref|| over the checked rows */
    double lse_err;      /* max |lse - ref| / (1 + |ref|) over checked finite rows */
    int rows_checked;
    int lse_bad;         /* LSE -inf/finite mismatch, NaN, or beyond tolerance */
    char msg[512];       /* failure detail, or the passing figures */
} gpu_check_result;

typedef struct gpu_case {
    fa4_context *ctx;
    fa4_problem p;
    int dv;
    fa4_dtype out;           /* O's element type: dtype_out(&p) */
    size_t nq, nk, nv, no, nl; /* elements of Q, K, V, O and LSE */
    size_t nd;               /* descale factors per tensor: batch x heads_kv */
    void *o;                 /* host copy of the output */
    float *lse;
    int *rows;               /* checked (b, i) pairs, flattened b * seqlen_q + i */
    int nrows;
    double *ref_o;           /* [nrows][heads_q][dv] */
    double *ref_lse;         /* [nrows][heads_q] */
    float *sinks;            /* attention_sinks: [heads_q] logits */
    float *descale[3];       /* fp8: Q, K, V factors [batch, heads_kv]; NULL: 1 */
    CUdeviceptr dq, dk, dv_, dout, dl, dsinks, ddescale[3];
    CUdeviceptr workspace;   /* passed as fa4_tensors.workspace; 0: none (the caller owns it) */
} gpu_case;


/* 1 when section NAME of a GPU test runs: FA4_TEST_ONLY unset or empty, or
 * naming it among a list of sections, to re-run a part (each test lists its
 * own). */
static inline int gpu_test_section(const char *name)
{
    const char *only = getenv("FA4_TEST_ONLY");
    return !only || !*only || strstr(only, name) != NULL;
}

/* 1 when the test shape NAME runs: FA4_TEST_SHAPES unset or empty, or one
 * of its comma-separated parts found in NAME (a focused run on the GPU). */
static inline int gpu_test_shape(const char *name)
{
    const char *only = getenv("FA4_TEST_SHAPES"), *part = only;
    if (!only || !*only)
        return 1;
    while (part && *part) {
        const char *end = strchr(part, ',');
        const size_t n = end ? (size_t)(end - part) : strlen(part);
        const char *at;
        for (at = name; n && *at; at++)
            if (strncmp(at, part, n) == 0)
                return 1;
        part = end ? end + 1 : NULL;
    }
    return 0;
}

/* Plan P on CTX with the config written as CONFIG (NULL: the heuristic);
 * FA4_EINVAL when the text does not parse. */
static inline fa4_status gpu_plan_config_text(fa4_plan **plan, fa4_context *ctx,
                                              const fa4_problem *p, const char *config)
{
    fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
    fa4_config cfg;
    char why[256];

    *plan = NULL;
    if (config) {
        if (config_parse(&cfg, config, why, sizeof why) != FA4_OK)
            return FA4_EINVAL;
        po.config = &cfg;
    }
    return fa4_plan_create(plan, ctx, p, &po);
}

/* Free everything CASE holds; safe on a zeroed or half-built case. */
static inline void gpu_case_free(gpu_case *c)
{
    const cuda_api *cu = c->ctx ? c->ctx->cu : NULL;
    int x;

    if (cu && context_push(c->ctx) == FA4_OK) {
        if (c->dq) cu->cuMemFree(c->dq);
        if (c->dk) cu->cuMemFree(c->dk);
        if (c->dv_) cu->cuMemFree(c->dv_);
        if (c->dout) cu->cuMemFree(c->dout);
        if (c->dl) cu->cuMemFree(c->dl);
        if (c->dsinks) cu->cuMemFree(c->dsinks);
        for (x = 0; x < 3; x++)
            if (c->ddescale[x]) cu->cuMemFree(c->ddescale[x]);
        context_pop(c->ctx);
    }
    free(c->o); free(c->lse); free(c->rows); free(c->ref_o); free(c->ref_lse); free(c->sinks);
    for (x = 0; x < 3; x++)
        free(c->descale[x]);
    memset(c, 0, sizeof *c);
}

/* A copy of N floats at SRC in *DST (NULL stays NULL); 0 or -1. */
static inline int gpu_case_copy(float **dst, const float *src, size_t n)
{
    *dst = NULL;
    if (!src)
        return 0;
    if (!(*dst = malloc(sizeof **dst * (n ? n : 1))))
        return -1;
    memcpy(*dst, src, sizeof **dst * n);
    return 0;
}

/*
** Set CASE up for P0 on the caller's host inputs: Q, K, V contiguous BSHD
** in P0's dtype, SINKS ([heads_q] logits, used when attention_sinks is
** set) and for fp8 the descale factors Q_DESCALE, K_DESCALE, V_DESCALE
** ([batch, heads_kv] each, any of them NULL: 1).  CASE keeps copies of
** the factors and logits, the reference of every row (small problems) or
** of sampled rows, and the device copies; the inputs stay the caller's.
** Returns 0, or -1 with the reason in MSG.
*/
static inline int gpu_case_prepare_inputs(gpu_case *c, fa4_context *ctx, const fa4_problem *p0,
                                          const void *q, const void *k, const void *v,
                                          const float *sinks, const float *q_descale,
                                          const float *k_descale, const float *v_descale,
                                          char *msg, size_t msg_size)
{
    fa4_problem p = *p0;
    const int d = p.head_dim_qk;
    const cuda_api *cu = ctx->cu;
    const void *host[3] = { q, k, v };
    const float *scales[3] = { q_descale, k_descale, v_descale };
    CUdeviceptr *dev[3];
    size_t bytes[3], ob, eb;
    double work;
    int b, i, h, x, step, r;

    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    if (p.softmax_scale == 0)
        p.softmax_scale = (float)(1.0 / sqrt((double)d));
    c->p = p;
    c->out = dtype_out(&p);
    c->dv = p.head_dim_v ? p.head_dim_v : d;
    c->nq = (size_t)p.batch * p.seqlen_q * p.heads_q * d;
    c->nk = (size_t)p.batch * p.seqlen_k * p.heads_kv * d;
    c->nv = (size_t)p.batch * p.seqlen_k * p.heads_kv * c->dv;
    c->no = (size_t)p.batch * p.seqlen_q * p.heads_q * c->dv;
    c->nl = (size_t)p.batch * p.heads_q * p.seqlen_q;
    c->nd = (size_t)p.batch * p.heads_kv;
    eb = (size_t)dtype_bytes(p.dtype);
    ob = (size_t)dtype_bytes(c->out);
    work = (double)p.batch * p.heads_q * p.seqlen_q * p.seqlen_k * d;
    step = work < GPU_CHECK_BUDGET ? 1 : (int)(work / GPU_CHECK_BUDGET) + 1;
    c->o = malloc(c->no * ob);
    c->lse = malloc(c->nl * 4);
    c->rows = malloc(sizeof *c->rows * (size_t)p.batch * p.seqlen_q);
    if (!c->o || !c->lse || !c->rows ||
        gpu_case_copy(&c->sinks, p.attention_sinks ? sinks : NULL, (size_t)p.heads_q) != 0) {
        snprintf(msg, msg_size, "host allocation failed");
        return -1;
    }
    for (x = 0; x < 3; x++)
        if (gpu_case_copy(&c->descale[x], p.dtype == FA4_DTYPE_FP8_E4M3 ? scales[x] : NULL,
                          c->nd) != 0) {
            snprintf(msg, msg_size, "host allocation failed");
            return -1;
        }
    /* Rows 0, 1, the last, and every step-th: ragged tails stay covered. */
    for (b = 0; b < p.batch; b++)
        for (i = 0; i < p.seqlen_q; i++)
            if (i % step == 0 || i == 1 || i == p.seqlen_q - 1)
                c->rows[c->nrows++] = b * p.seqlen_q + i;
    c->ref_o = malloc(sizeof(double) * (size_t)c->nrows * p.heads_q * c->dv);
    c->ref_lse = malloc(sizeof(double) * (size_t)c->nrows * p.heads_q);
    if (!c->ref_o || !c->ref_lse) {
        snprintf(msg, msg_size, "host allocation failed");
        return -1;
    }
    for (r = 0; r < c->nrows; r++)
        for (h = 0; h < p.heads_q; h++)
            ref_attention_row_scaled(c->ref_o + ((size_t)r * p.heads_q + h) * c->dv,
                                     &c->ref_lse[(size_t)r * p.heads_q + h], &p, q, k, v,
                                     c->sinks, c->descale[0], c->descale[1], c->descale[2],
                                     c->rows[r] / p.seqlen_q, c->rows[r] % p.seqlen_q, h);
    if (context_push(ctx) != FA4_OK) {
        snprintf(msg, msg_size, "context_push: %s", fa4_context_errmsg(ctx));
        return -1;
    }
    dev[0] = &c->dq; dev[1] = &c->dk; dev[2] = &c->dv_;
    bytes[0] = c->nq * eb; bytes[1] = c->nk * eb; bytes[2] = c->nv * eb;
    for (x = 0; x < 3; x++)
        if (cu->cuMemAlloc(dev[x], bytes[x]) != CUDA_SUCCESS ||
            cu->cuMemcpyHtoD(*dev[x], host[x], bytes[x]) != CUDA_SUCCESS ||
            (c->descale[x] &&
             (cu->cuMemAlloc(&c->ddescale[x], c->nd * 4) != CUDA_SUCCESS ||
              cu->cuMemcpyHtoD(c->ddescale[x], c->descale[x], c->nd * 4) != CUDA_SUCCESS))) {
            snprintf(msg, msg_size, "cuMemAlloc or cuMemcpyHtoD failed");
            context_pop(ctx);
            return -1;
        }
    if (cu->cuMemAlloc(&c->dout, c->no * ob) != CUDA_SUCCESS ||
        cu->cuMemAlloc(&c->dl, c->nl * 4) != CUDA_SUCCESS ||
        (c->sinks && (cu->cuMemAlloc(&c->dsinks, sizeof(float) * (size_t)p.heads_q) ||
                      cu->cuMemcpyHtoD(c->dsinks, c->sinks, sizeof(float) * (size_t)p.heads_q)))) {
        snprintf(msg, msg_size, "cuMemAlloc failed");
        context_pop(ctx);
        return -1;
    }
    context_pop(ctx);
    return 0;
}

/*
** Draw fresh random inputs for P from *SEED (ref_fill_inputs(): 16-bit
** uniform in [-1, 1), fp8 N(0, 1); sink logits in [-2, 2); fp8 descale
** factors in [0.5, 2)), and set CASE up with them (gpu_case_prepare_inputs).
** Returns 0, or -1 with the reason in MSG.
*/
static inline int gpu_case_prepare(gpu_case *c, fa4_context *ctx, const fa4_problem *p,
                                   uint64_t *seed, char *msg, size_t msg_size)
{
    const int d = p->head_dim_qk, dv = p->head_dim_v ? p->head_dim_v : d;
    const size_t eb = (size_t)dtype_bytes(p->dtype);
    const size_t nq = (size_t)p->batch * p->seqlen_q * p->heads_q * d;
    const size_t nk = (size_t)p->batch * p->seqlen_k * p->heads_kv * d;
    const size_t nv = (size_t)p->batch * p->seqlen_k * p->heads_kv * dv;
    const size_t nd = (size_t)p->batch * p->heads_kv;
    const int fp8 = p->dtype == FA4_DTYPE_FP8_E4M3;
    void *q = malloc(nq * eb), *k = malloc(nk * eb), *v = malloc(nv * eb);
    float *sinks = NULL, *descale = NULL;
    int h, rc = -1;

    memset(c, 0, sizeof *c);
    if (!q || !k || !v) {
        snprintf(msg, msg_size, "host allocation failed");
        goto done;
    }
    ref_fill_inputs(q, nq, p->dtype, seed);
    ref_fill_inputs(k, nk, p->dtype, seed);
    ref_fill_inputs(v, nv, p->dtype, seed);
    if (p->attention_sinks) {
        uint16_t *raw = malloc(sizeof *raw * (size_t)p->heads_q);
        sinks = malloc(sizeof *sinks * (size_t)p->heads_q);
        if (!raw || !sinks) {
            free(raw);
            snprintf(msg, msg_size, "host allocation failed");
            goto done;
        }
        ref_fill_random(raw, (size_t)p->heads_q, FA4_DTYPE_BF16, seed);
        for (h = 0; h < p->heads_q; h++)
            sinks[h] = 2.0f * ref_half_to_float(raw[h], FA4_DTYPE_BF16);
        free(raw);
    }
    if (fp8) {
        if (!(descale = malloc(sizeof *descale * 3 * nd))) {
            snprintf(msg, msg_size, "host allocation failed");
            goto done;
        }
        ref_fill_descale(descale, 3 * nd, seed);
    }
    rc = gpu_case_prepare_inputs(c, ctx, p, q, k, v, sinks, fp8 ? descale : NULL,
                                 fp8 ? descale + nd : NULL, fp8 ? descale + 2 * nd : NULL,
                                 msg, msg_size);
done:
    free(q); free(k); free(v); free(sinks); free(descale);
    return rc;
}

/* Run PLAN on CASE with O and LSE poisoned (all-ones bits = NaN) and
   compare.  Returns 0 when the run itself worked (numbers in R). */
static inline int gpu_case_run(gpu_check_result *r, gpu_case *c, const fa4_plan *plan)
{
    const fa4_problem *p = &c->p;
    const cuda_api *cu = c->ctx->cu;
    fa4_tensors t = FA4_TENSORS_INIT;
    verify_result v;
    size_t bad, first = 0;
    const size_t ob = (size_t)dtype_bytes(c->out);
    fa4_status st;
    int k, h;

    memset(r, 0, sizeof *r);
    if (context_push(c->ctx) != FA4_OK) {
        snprintf(r->msg, sizeof r->msg, "context_push: %s", fa4_context_errmsg(c->ctx));
        return -1;
    }
    cu->cuMemsetD8(c->dout, 0xff, c->no * ob);
    cu->cuMemsetD8(c->dl, 0xff, c->nl * 4);
    t.q = (void *)c->dq; t.k = (void *)c->dk; t.v = (void *)c->dv_; t.o = (void *)c->dout;
    t.lse = p->return_lse ? (float *)c->dl : NULL;
    t.workspace = (void *)c->workspace;
    t.sinks = (const float *)c->dsinks;
    t.q_descale = (const float *)c->ddescale[0];
    t.k_descale = (const float *)c->ddescale[1];
    t.v_descale = (const float *)c->ddescale[2];
    st = fa4_forward(plan, &t, NULL);
    if (st != FA4_OK) {
        snprintf(r->msg, sizeof r->msg, "fa4_forward: %s: %s", fa4_status_string(st), fa4_context_errmsg(c->ctx));
        context_pop(c->ctx);
        return -1;
    }
    if (cu->cuCtxSynchronize() != CUDA_SUCCESS) {
        snprintf(r->msg, sizeof r->msg, "kernel failed at run time (cuCtxSynchronize)");
        context_pop(c->ctx);
        return -1;
    }
    cu->cuMemcpyDtoH(c->o, c->dout, c->no * ob);
    cu->cuMemcpyDtoH(c->lse, c->dl, c->nl * 4);
    context_pop(c->ctx);
    verify_init(&v, p->dtype, c->out);
    /* Every output, not only the checked rows: an unwritten tile keeps
       the NaN poison. */
    bad = verify_nonfinite(c->o, c->no, c->out, &first);
    verify_add_nonfinite(&v, bad, first, "o");
    for (k = 0; k < c->nrows; k++) {
        int b = c->rows[k] / p->seqlen_q, i = c->rows[k] % p->seqlen_q;
        for (h = 0; h < p->heads_q; h++) {
            const char *row = (const char *)c->o +
                              (((size_t)b * p->seqlen_q + i) * p->heads_q + h) * c->dv * ob;
            const double *ref = c->ref_o + ((size_t)k * p->heads_q + h) * c->dv;
            const float *lse = p->return_lse ? &c->lse[((size_t)b * p->heads_q + h) * p->seqlen_q + i] : NULL;
            verify_row(&v, row, ref, c->dv, lse, c->ref_lse[(size_t)k * p->heads_q + h], b, i, h);
        }
    }
    verify_finish(&v);
    r->pass = v.pass;
    r->rel_err = v.o_rel_err;
    r->lse_err = v.lse_err;
    r->lse_bad = (int)v.lse_bad;
    r->rows_checked = (int)v.rows;
    snprintf(r->msg, sizeof r->msg, "%s", v.msg);
    return 0;
}

/* One plan on fresh inputs: prepare, run, free. */
static inline int gpu_check(gpu_check_result *r, fa4_context *ctx, const fa4_plan *plan,
                     const fa4_problem *p, uint64_t *seed)
{
    gpu_case c;
    int rc;

    memset(r, 0, sizeof *r);
    if (gpu_case_prepare(&c, ctx, p, seed, r->msg, sizeof r->msg) != 0) {
        gpu_case_free(&c);
        return -1;
    }
    rc = gpu_case_run(r, &c, plan);
    gpu_case_free(&c);
    return rc;
}

/* The tolerance on ||o - ref|| / ||ref||: lib/verify.h's (bf16 2^-7,
   fp16 2^-9, fp8 4e-2; why is written there).  Prefer r.pass, which also
   covers LSE and unwritten outputs. */
static inline double gpu_check_tolerance(fa4_dtype dt)
{
    return verify_tolerance_of(dt).o_rel;
}

#endif
