/*
** timing.c -- device-event timing of one plan with inputs rotated beyond
** L2.  See timing.h.
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "family.h"
#include "reference.h"
#include "timing.h"

/* Round N up to a multiple of 256 bytes (TMA wants 16; 256 keeps sets
** on separate cache lines and sectors). */
static size_t align256(size_t n)
{
    return (n + 255) & ~(size_t)255;
}

/* Put "CALL: NAME: description" into WHY and return FA4_ECUDA. */
static fa4_status cuda_fail(CUresult res, const char *call, char *why,
                            size_t why_size)
{
    char text[256];

    snprintf(why, why_size, "%s: %s", call,
             cuda_error_text(res, text, sizeof text));
    return FA4_ECUDA;
}

fa4_status timing_buffers_create(timing_buffers *out, fa4_context *ctx,
                                 const fa4_problem *p, uint64_t *seed,
                                 char *why, size_t why_size)
{
    const cuda_api *cu = ctx->cu;
    int eb = family_dtype_bytes(p->dtype);
    int dv = p->head_dim_v ? p->head_dim_v : p->head_dim_qk;
    size_t q, k, v, o, lse, set, total, chunk, off;
    double want;
    uint16_t *host = NULL;
    CUresult res;
    fa4_status st = FA4_OK;
    int n;

    memset(out, 0, sizeof *out);
    out->ctx = ctx;
    q = align256((size_t)p->batch * p->seqlen_q * p->heads_q * p->head_dim_qk * eb);
    k = align256((size_t)p->batch * p->seqlen_k * p->heads_kv * p->head_dim_qk * eb);
    v = align256((size_t)p->batch * p->seqlen_k * p->heads_kv * dv * eb);
    o = align256((size_t)p->batch * p->seqlen_q * p->heads_q * dv * eb);
    lse = p->return_lse ? align256((size_t)p->batch * p->heads_q * p->seqlen_q * 4) : 0;
    set = q + k + v + o + lse;
    /* At least two sets and more than twice L2 in all: a launch never
       finds its inputs left in L2 by the previous one. */
    want = 2.0 * (ctx->limits.l2_bytes > 0 ? ctx->limits.l2_bytes : 64 << 20);
    n = (int)(want / (double)set) + 1;
    if (n < 2)
        n = 2;
    total = (size_t)n * set;
    if ((res = cu->cuMemAlloc(&out->base, total)) != CUDA_SUCCESS) {
        char text[256];
        snprintf(why, why_size, "the problem needs %.2f GiB of device memory "
                 "(%d input sets of %.1f MiB, rotated beyond L2): cuMemAlloc: %s",
                 total / 1073741824.0, n, set / 1048576.0,
                 cuda_error_text(res, text, sizeof text));
        out->base = 0;
        return res == CUDA_ERROR_OUT_OF_MEMORY ? FA4_ENOMEM : FA4_ECUDA;
    }
    out->set_bytes = set;
    out->q_off = 0;
    out->k_off = q;
    out->v_off = q + k;
    out->o_off = q + k + v;
    out->lse_off = q + k + v + o;
    out->nsets = n;
    out->has_lse = p->return_lse;

    /* Fill everything with random values in [-1, 1): one host chunk,
       copied over the whole range (the values repeat; the timing does not
       depend on them, only the verification does, on its own inputs). */
    chunk = total < ((size_t)16 << 20) ? total : ((size_t)16 << 20);
    if (!(host = malloc(chunk))) {
        snprintf(why, why_size, "out of host memory (%zu bytes)", chunk);
        st = FA4_ENOMEM;
        goto done;
    }
    ref_fill_random(host, chunk / 2, p->dtype, seed);
    for (off = 0; off < total; off += chunk) {
        size_t len = total - off < chunk ? total - off : chunk;
        if ((res = cu->cuMemcpyHtoD(out->base + off, host, len)) != CUDA_SUCCESS) {
            st = cuda_fail(res, "cuMemcpyHtoD", why, why_size);
            goto done;
        }
    }
done:
    free(host);
    if (st != FA4_OK)
        timing_buffers_free(out);
    return st;
}

void timing_buffers_free(timing_buffers *b)
{
    if (b->base && b->ctx && b->ctx->cu)
        b->ctx->cu->cuMemFree(b->base);
    b->base = 0;
}

fa4_tensors timing_tensors(const timing_buffers *b, int i)
{
    fa4_tensors t = FA4_TENSORS_INIT;
    CUdeviceptr s = b->base + (size_t)(i % b->nsets) * b->set_bytes;

    t.q = (const void *)(uintptr_t)(s + b->q_off);
    t.k = (const void *)(uintptr_t)(s + b->k_off);
    t.v = (const void *)(uintptr_t)(s + b->v_off);
    t.o = (void *)(uintptr_t)(s + b->o_off);
    t.lse = b->has_lse ? (float *)(uintptr_t)(s + b->lse_off) : NULL;
    return t;
}

/* Order doubles ascending, for qsort. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double timing_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

fa4_status timing_measure(timing_result *out, fa4_context *ctx,
                          const fa4_plan *plan, const timing_buffers *b,
                          int warmup, int reps, char *why, size_t why_size)
{
    const cuda_api *cu = ctx->cu;
    CUevent *ev = NULL;
    double *ms = NULL;
    fa4_status st = FA4_OK;
    CUresult res;
    int i, made = 0, set = 0;

    memset(out, 0, sizeof *out);
    if (reps < 1)
        reps = 1;
    ev = calloc((size_t)2 * reps, sizeof *ev);
    ms = calloc((size_t)reps, sizeof *ms);
    if (!ev || !ms) {
        snprintf(why, why_size, "out of host memory");
        st = FA4_ENOMEM;
        goto done;
    }
    for (made = 0; made < 2 * reps; made++)
        if ((res = cu->cuEventCreate(&ev[made], CU_EVENT_DEFAULT)) != CUDA_SUCCESS) {
            st = cuda_fail(res, "cuEventCreate", why, why_size);
            goto done;
        }
    for (i = 0; i < warmup; i++) {
        fa4_tensors t = timing_tensors(b, set++);
        if ((st = fa4_forward(plan, &t, NULL)) != FA4_OK) {
            snprintf(why, why_size, "fa4_forward: %s", fa4_context_errmsg(ctx));
            goto done;
        }
    }
    for (i = 0; i < reps; i++) {
        fa4_tensors t = timing_tensors(b, set++);
        if ((res = cu->cuEventRecord(ev[2 * i], NULL)) != CUDA_SUCCESS) {
            st = cuda_fail(res, "cuEventRecord", why, why_size);
            goto done;
        }
        if ((st = fa4_forward(plan, &t, NULL)) != FA4_OK) {
            snprintf(why, why_size, "fa4_forward: %s", fa4_context_errmsg(ctx));
            goto done;
        }
        if ((res = cu->cuEventRecord(ev[2 * i + 1], NULL)) != CUDA_SUCCESS) {
            st = cuda_fail(res, "cuEventRecord", why, why_size);
            goto done;
        }
    }
    if ((res = cu->cuEventSynchronize(ev[2 * reps - 1])) != CUDA_SUCCESS) {
        st = cuda_fail(res, "kernel execution (cuEventSynchronize)", why,
                       why_size);
        goto done;
    }
    for (i = 0; i < reps; i++) {
        float t;
        if ((res = cu->cuEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1])) != CUDA_SUCCESS) {
            st = cuda_fail(res, "cuEventElapsedTime", why, why_size);
            goto done;
        }
        ms[i] = t;
    }
    out->reps = reps;
    out->median_ms = timing_median(ms, reps);   /* sorts ms */
    out->min_ms = ms[0];
    out->max_ms = ms[reps - 1];
done:
    for (i = 0; i < made; i++)
        cu->cuEventDestroy(ev[i]);
    free(ev);
    free(ms);
    return st;
}
