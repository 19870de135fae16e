/*
** gpu_check.h -- run one plan on random inputs and compare it with the
** float64 CPU reference.  Shared by the GPU tests and bench/sweep.
*/
#ifndef FA4_GPU_CHECK_H
#define FA4_GPU_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fa4.h"
#include "context.h"
#include "reference.h"

typedef struct gpu_check_result {
    double rel_err;      /* ||o - ref|| / ||ref|| over the checked rows */
    double lse_err;      /* max |lse - ref| over checked rows (finite ones) */
    int rows_checked;
    int lse_bad;         /* LSE -inf/finite mismatch or NaN */
    char msg[512];       /* failure detail */
} gpu_check_result;

/* Device buffer helpers on the context's CUDA context. */
static CUdeviceptr gc_alloc(fa4_context *ctx, size_t n)
{
    CUdeviceptr p = 0;
    if (ctx->cu->cuMemAlloc(&p, n ? n : 16) != CUDA_SUCCESS)
        return 0;
    return p;
}

/*
** Run PLAN (made for P) once on fresh random inputs from *SEED with O and
** LSE poisoned (all ones bits = NaN), then compare with the reference on
** every row when the problem is small, else on sampled rows.
** Returns 0 when the run itself worked (the numbers are in R).
*/
static int gpu_check(gpu_check_result *r, fa4_context *ctx, const fa4_plan *plan,
                     const fa4_problem *p0, uint64_t *seed)
{
    fa4_problem p = *p0;
    const int dv = p.head_dim_v ? p.head_dim_v : p.head_dim_qk, d = p.head_dim_qk;
    size_t nq = (size_t)p.batch * p.seqlen_q * p.heads_q * d;
    size_t nk = (size_t)p.batch * p.seqlen_k * p.heads_kv * d;
    size_t nv = (size_t)p.batch * p.seqlen_k * p.heads_kv * dv;
    size_t no = (size_t)p.batch * p.seqlen_q * p.heads_q * dv;
    size_t nl = (size_t)p.batch * p.heads_q * p.seqlen_q;
    uint16_t *q = malloc(nq * 2), *k = malloc(nk * 2), *v = malloc(nv * 2), *o = malloc(no * 2);
    float *lse = malloc(nl * 4);
    double *ref = malloc(sizeof(double) * (size_t)dv), num = 0, den = 0;
    CUdeviceptr dq = 0, dk = 0, dvp = 0, dout = 0, dl = 0;
    fa4_tensors t = FA4_TENSORS_INIT;
    const cuda_api *cu = ctx->cu;
    fa4_status st;
    int rc = -1, b, i, h, x, step;
    double work = (double)p.batch * p.heads_q * p.seqlen_q * p.seqlen_k * d;

    memset(r, 0, sizeof *r);
    if (p.softmax_scale == 0)
        p.softmax_scale = (float)(1.0 / sqrt((double)d));
    if (!q || !k || !v || !o || !lse || !ref) {
        snprintf(r->msg, sizeof r->msg, "host allocation failed");
        goto done;
    }
    ref_fill_random(q, nq, p.dtype, seed);
    ref_fill_random(k, nk, p.dtype, seed);
    ref_fill_random(v, nv, p.dtype, seed);
    if (context_push(ctx) != FA4_OK) {
        snprintf(r->msg, sizeof r->msg, "context_push: %s", fa4_context_errmsg(ctx));
        goto done;
    }
    dq = gc_alloc(ctx, nq * 2); dk = gc_alloc(ctx, nk * 2); dvp = gc_alloc(ctx, nv * 2);
    dout = gc_alloc(ctx, no * 2); dl = gc_alloc(ctx, nl * 4);
    if (!dq || !dk || !dvp || !dout || !dl) {
        snprintf(r->msg, sizeof r->msg, "cuMemAlloc failed");
        goto pop;
    }
    cu->cuMemcpyHtoD(dq, q, nq * 2);
    cu->cuMemcpyHtoD(dk, k, nk * 2);
    cu->cuMemcpyHtoD(dvp, v, nv * 2);
    cu->cuMemsetD8(dout, 0xff, no * 2);      /* poison: NaN unless written */
    cu->cuMemsetD8(dl, 0xff, nl * 4);
    t.q = (void *)dq; t.k = (void *)dk; t.v = (void *)dvp; t.o = (void *)dout;
    t.lse = p.return_lse ? (float *)dl : NULL;
    if ((st = fa4_forward(plan, &t, NULL)) != FA4_OK) {
        snprintf(r->msg, sizeof r->msg, "fa4_forward: %s: %s", fa4_status_string(st), fa4_context_errmsg(ctx));
        goto pop;
    }
    if (cu->cuCtxSynchronize() != CUDA_SUCCESS) {
        snprintf(r->msg, sizeof r->msg, "kernel failed at run time (cuCtxSynchronize)");
        goto pop;
    }
    cu->cuMemcpyDtoH(o, dout, no * 2);
    cu->cuMemcpyDtoH(lse, dl, nl * 4);
    /* Whole reference up to ~2^31 multiply-adds, else every step-th row. */
    step = work < 2.0e9 ? 1 : (int)(work / 2.0e9) + 1;
    for (b = 0; b < p.batch; b++)
        for (i = 0; i < p.seqlen_q; i++) {
            if (i % step != 0 && i != p.seqlen_q - 1 && i != 1)
                continue;
            for (h = 0; h < p.heads_q; h++) {
                double l;
                const uint16_t *row = o + (((size_t)b * p.seqlen_q + i) * p.heads_q + h) * dv;
                ref_attention_row(ref, &l, &p, q, k, v, b, i, h);
                for (x = 0; x < dv; x++) {
                    double got = ref_half_to_float(row[x], p.dtype);
                    if (isnan(got) || isinf(got)) {
                        num = INFINITY;
                        if (!r->msg[0])
                            snprintf(r->msg, sizeof r->msg, "o[b=%d,i=%d,h=%d,x=%d] is %g (unwritten or NaN)",
                                     b, i, h, x, got);
                    }
                    num += (got - ref[x]) * (got - ref[x]);
                    den += ref[x] * ref[x];
                }
                if (p.return_lse) {
                    double g = lse[((size_t)b * p.heads_q + h) * p.seqlen_q + i];
                    if (isnan(g) || (isinf(l) != isinf(g))) {
                        if (!r->lse_bad++)
                            snprintf(r->msg + strlen(r->msg), sizeof r->msg - strlen(r->msg),
                                     " lse[b=%d,h=%d,i=%d]=%g want %g", b, h, i, g, l);
                    } else if (!isinf(l) && fabs(g - l) > r->lse_err) {
                        r->lse_err = fabs(g - l);
                    }
                }
                r->rows_checked++;
            }
        }
    r->rel_err = den > 0 ? sqrt(num / den) : sqrt(num);
    if (isnan(r->rel_err))
        r->rel_err = INFINITY;
    rc = 0;
pop:
    if (dq) cu->cuMemFree(dq);
    if (dk) cu->cuMemFree(dk);
    if (dvp) cu->cuMemFree(dvp);
    if (dout) cu->cuMemFree(dout);
    if (dl) cu->cuMemFree(dl);
    context_pop(ctx);
done:
    free(q); free(k); free(v); free(o); free(lse); free(ref);
    return rc;
}

/* Tolerance on ||o - ref|| / ||ref||: bf16 output keeps 8 bits (2^-8
   relative rounding) and P is rounded to 16 bits before P.V. */
static double gpu_check_tolerance(fa4_dtype dt)
{
    return dt == FA4_DTYPE_BF16 ? 1e-2 : 2e-3;
}

#endif
