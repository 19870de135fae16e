/*
** timing.c -- device-event timing of plans, launches back to back, inputs
** rotated beyond L2 or warm.  See timing.h.
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
                                 const fa4_problem *p, timing_l2 l2,
                                 uint64_t *seed, char *why, size_t why_size)
{
    const cuda_api *cu = ctx->cu;
    const tune_layout *lay = &out->layout;
    size_t q, k, v, o, lse, set, total, chunk, off, eb;
    double want;
    void *host = NULL;
    CUresult res;
    fa4_status st = FA4_OK;
    int n;

    memset(out, 0, sizeof *out);
    out->ctx = ctx;
    if (layout_build(&out->layout, p, LAYOUT_FULL) != 0) {
        snprintf(why, why_size, "out of host memory (the layout of %d "
                 "sequences), or more than 2^31 packed rows", p->batch);
        return FA4_ENOMEM;
    }
    eb = (size_t)lay->in_bytes;
    q = align256(lay->nq * eb);
    k = align256(lay->nk * eb);
    v = align256(lay->nv * eb);
    o = align256(lay->no * (size_t)lay->out_bytes);
    lse = p->return_lse ? align256(lay->nlse * 4) : 0;
    set = q + k + v + o + lse;
    /* At least two sets and more than twice L2 in all: a launch never
       finds its inputs left in L2 by the previous one. */
    want = 2.0 * (ctx->limits.l2_bytes > 0 ? ctx->limits.l2_bytes : 64 << 20);
    n = (int)(want / (double)set) + 1;
    if (n < 2)
        n = 2;
    if (l2 == TIMING_L2_WARM)
        n = 1;
    total = (size_t)n * set;
    if ((res = cu->cuMemAlloc(&out->base, total)) != CUDA_SUCCESS) {
        char text[256];
        snprintf(why, why_size, "the problem needs %.2f GiB of device memory "
                 "(%d input set%s of %.1f MiB%s): cuMemAlloc: %s",
                 total / 1073741824.0, n, n == 1 ? "" : "s", set / 1048576.0,
                 n > 1 ? ", rotated beyond L2" : "", cuda_error_text(res, text, sizeof text));
        out->base = 0;
        layout_free(&out->layout);
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
    if ((st = layout_upload(&out->index, lay, cu, why, why_size)) != FA4_OK)
        goto done;

    /* Fill everything with random inputs (ref_fill_inputs: 16-bit values
       in [-1, 1), fp8 N(0, 1)): one host chunk, copied over the whole range
       (the values repeat, O's bytes are overwritten; the timing does not
       depend on them, only the verification does, on its own inputs). */
    chunk = total < ((size_t)16 << 20) ? total : ((size_t)16 << 20);
    if (!(host = malloc(chunk))) {
        snprintf(why, why_size, "out of host memory (%zu bytes)", chunk);
        st = FA4_ENOMEM;
        goto done;
    }
    ref_fill_inputs(host, chunk / eb, p->dtype, seed);
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
    if (b->ctx && b->ctx->cu) {
        if (b->base)
            b->ctx->cu->cuMemFree(b->base);
        if (b->index)
            b->ctx->cu->cuMemFree(b->index);
    }
    b->base = 0;
    b->index = 0;
    layout_free(&b->layout);
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
    layout_tensors(&t, &b->layout, b->index);
    return t;
}

fa4_status timing_interleaved(timing_pair *out, fa4_context *ctx,
                              const fa4_plan *const plans[2],
                              timing_buffers *b, int warmup, int reps,
                              int rounds, char *why, size_t why_size)
{
    double est[2], *ms[2] = { NULL, NULL };
    fa4_status st = FA4_OK;
    int n, k, x;

    memset(out, 0, sizeof *out);
    if (rounds < 1)
        rounds = 1;
    if (rounds > TIMING_MAX_ROUNDS)
        rounds = TIMING_MAX_ROUNDS;
    for (x = 0; x < 2; x++)
        if ((st = timing_group(&est[x], ctx, plans[x], b,
                               warmup > 0 ? warmup : 1, why, why_size)) != FA4_OK)
            return st;
    n = timing_group_size(est[0] > est[1] ? est[0] : est[1], reps);
    ms[0] = calloc((size_t)rounds, sizeof(double));
    ms[1] = calloc((size_t)rounds, sizeof(double));
    if (!ms[0] || !ms[1]) {
        snprintf(why, why_size, "out of host memory");
        st = FA4_ENOMEM;
        goto done;
    }
    for (k = 0; k < rounds; k++)
        for (x = 0; x < 2; x++) {
            int which = (k % 2) ? 1 - x : x;
            if ((st = timing_group(&ms[which][k], ctx, plans[which], b, n,
                                   why, why_size)) != FA4_OK)
                goto done;
        }
    timing_pair_from_rounds(out, ms[0], ms[1], rounds);
    out->reps = n;
done:
    free(ms[0]);
    free(ms[1]);
    return st;
}

void timing_pair_from_rounds(timing_pair *out, double *ms0, double *ms1,
                             int rounds)
{
    double g[TIMING_MAX_ROUNDS];
    double *ms[2] = { ms0, ms1 };
    int k, n = rounds < TIMING_MAX_ROUNDS ? rounds : TIMING_MAX_ROUNDS, x;

    memset(out, 0, sizeof *out);
    if (n < 1)
        return;
    for (k = 0; k < n; k++) {
        g[k] = ms0[k] > 0 ? ms1[k] / ms0[k] - 1 : 0;
        out->wins += ms0[k] < ms1[k];
    }
    out->gain = timing_median(g, n);        /* sorts g */
    out->gain_lo = g[0];
    out->gain_hi = g[n - 1];
    for (x = 0; x < 2; x++) {
        out->ms[x] = timing_median(ms[x], n);    /* sorts */
        out->spread[x] = out->ms[x] > 0 ? (ms[x][n - 1] - ms[x][0]) / out->ms[x] : 0;
    }
    out->rounds = n;
}

timing_verdict timing_pair_verdict(const timing_pair *tp)
{
    /* No rounds leave the gain at 0: lost. */
    if (tp->gain < TIMING_MIN_GAIN)
        return TIMING_LOST;
    return tp->wins == tp->rounds ? TIMING_HOLDS : TIMING_NOISY;
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

fa4_status timing_group(double *ms, fa4_context *ctx, const fa4_plan *plan,
                        timing_buffers *b, int n, char *why, size_t why_size)
{
    const cuda_api *cu = ctx->cu;
    CUevent ev[2] = { NULL, NULL };
    fa4_status st = FA4_OK;
    CUresult res;
    float t = 0;
    int i, made;

    *ms = 0;
    for (made = 0; made < 2; made++)
        if ((res = cu->cuEventCreate(&ev[made], CU_EVENT_DEFAULT)) != CUDA_SUCCESS) {
            st = cuda_fail(res, "cuEventCreate", why, why_size);
            goto done;
        }
    if ((res = cu->cuEventRecord(ev[0], NULL)) != CUDA_SUCCESS) {
        st = cuda_fail(res, "cuEventRecord", why, why_size);
        goto done;
    }
    /* Queued back to back, as a model's layers queue them: no event or
       host work between two launches of the group. */
    for (i = 0; i < n; i++) {
        fa4_tensors tn = timing_tensors(b, b->next++);
        if ((st = fa4_forward(plan, &tn, NULL)) != FA4_OK) {
            snprintf(why, why_size, "fa4_forward: %s", fa4_context_errmsg(ctx));
            goto done;
        }
    }
    if ((res = cu->cuEventRecord(ev[1], NULL)) != CUDA_SUCCESS) {
        st = cuda_fail(res, "cuEventRecord", why, why_size);
        goto done;
    }
    if ((res = cu->cuEventSynchronize(ev[1])) != CUDA_SUCCESS) {
        st = cuda_fail(res, "kernel execution (cuEventSynchronize)", why,
                       why_size);
        goto done;
    }
    if ((res = cu->cuEventElapsedTime(&t, ev[0], ev[1])) != CUDA_SUCCESS) {
        st = cuda_fail(res, "cuEventElapsedTime", why, why_size);
        goto done;
    }
    *ms = (double)t / (n > 0 ? n : 1);
done:
    for (i = 0; i < made; i++)
        cu->cuEventDestroy(ev[i]);
    return st;
}

int timing_group_size(double est_ms, int reps)
{
    int n = reps > 0 ? reps : 1;

    if (est_ms > 0 && 0.5 / est_ms > n)
        n = 0.5 / est_ms < 1000 ? (int)(0.5 / est_ms) + 1 : 1000;
    return n;
}

fa4_status timing_measure(timing_result *out, fa4_context *ctx,
                          const fa4_plan *plan, timing_buffers *b,
                          const timing_opts *o, char *why, size_t why_size)
{
    double est = 0, *ms = NULL;
    fa4_status st;
    int groups = o->groups > 0 ? o->groups : 1, n, i;

    memset(out, 0, sizeof *out);
    /* The warm-up (timed as one group) sizes the groups. */
    if ((st = timing_group(&est, ctx, plan, b, o->warmup > 0 ? o->warmup : 1,
                           why, why_size)) != FA4_OK)
        return st;
    n = timing_group_size(est, o->reps);
    if (!(ms = calloc((size_t)groups, sizeof *ms))) {
        snprintf(why, why_size, "out of host memory");
        return FA4_ENOMEM;
    }
    for (i = 0; i < groups; i++)
        if ((st = timing_group(&ms[i], ctx, plan, b, n, why, why_size)) != FA4_OK)
            goto done;
    out->reps = n;
    out->groups = groups;
    out->median_ms = timing_median(ms, groups);   /* sorts ms */
    out->min_ms = ms[0];
    out->max_ms = ms[groups - 1];
done:
    free(ms);
    return st;
}
