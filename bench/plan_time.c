/*
** plan_time.c -- how long fa4_plan_create takes in a fresh process, and
** whether it compiled anything.  Run it twice on one database: the first
** run is cold (NVRTC), the second warm (cubin from the database).
**
**   plan_time DB_PATH [HEAD_DIM]
**   plan_time DB_PATH decode [SEQLEN_K]
**
** Prints: context ms, plan ms, NVRTC compiles, config and its source.
** "decode" plans a decode step (batch 64, one query, SEQLEN_K keys
** (4096), 32 / 4 heads, d128) and also times fa4_forward's host cost: the
** median over 5 rounds of 200 back-to-back calls (asynchronous: the GPU
** queue absorbs them) of the host time per call.
*/
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fa4.h"
#include "jit.h"
#include "context.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median host microseconds per fa4_forward of PLAN (problem P). */
static double forward_host_us(fa4_context *ctx, const fa4_plan *plan, const fa4_problem *p)
{
    const cuda_api *cu = ctx->cu;
    const size_t nq = (size_t)p->batch * p->seqlen_q * p->heads_q * p->head_dim_qk * 2;
    const size_t nk = (size_t)p->batch * p->seqlen_k * p->heads_kv * p->head_dim_qk * 2;
    fa4_tensors t = FA4_TENSORS_INIT;
    CUdeviceptr q = 0, k = 0, v = 0, o = 0;
    double us[5];
    int r, i;

    context_push(ctx);
    if (cu->cuMemAlloc(&q, nq) || cu->cuMemAlloc(&k, nk) || cu->cuMemAlloc(&v, nk) ||
        cu->cuMemAlloc(&o, nq)) {
        context_pop(ctx);
        return -1;
    }
    cu->cuMemsetD8(q, 0x3c, nq);   /* 0x3c3c: a finite bf16 */
    cu->cuMemsetD8(k, 0x3c, nk);
    cu->cuMemsetD8(v, 0x3c, nk);
    context_pop(ctx);
    t.q = (void *)(uintptr_t)q;
    t.k = (void *)(uintptr_t)k;
    t.v = (void *)(uintptr_t)v;
    t.o = (void *)(uintptr_t)o;
    for (i = 0; i < 20; i++)
        fa4_forward(plan, &t, NULL);
    for (r = 0; r < 5; r++) {
        double t0;
        context_push(ctx);
        cu->cuCtxSynchronize();
        context_pop(ctx);
        t0 = now_ms();
        for (i = 0; i < 200; i++)
            if (fa4_forward(plan, &t, NULL) != FA4_OK)
                return -1;
        us[r] = (now_ms() - t0) * 1e3 / 200;
    }
    context_push(ctx);
    cu->cuCtxSynchronize();
    cu->cuMemFree(q); cu->cuMemFree(k); cu->cuMemFree(v); cu->cuMemFree(o);
    context_pop(ctx);
    qsort(us, 5, sizeof us[0], cmp_double);
    return us[2];
}

int main(int argc, char **argv)
{
    fa4_context_options co = FA4_CONTEXT_OPTIONS_INIT;
    fa4_problem p = FA4_PROBLEM_INIT;
    fa4_context *ctx;
    fa4_plan *plan;
    fa4_config cfg = FA4_CONFIG_INIT;
    fa4_config_source src;
    char text[256];
    double t0, t1, t2;

    const int decode = argc > 2 && strcmp(argv[2], "decode") == 0;

    if (argc < 2) {
        fprintf(stderr, "usage: plan_time DB_PATH [HEAD_DIM | decode [SEQLEN_K]]\n");
        return 2;
    }
    co.db_path = argv[1];
    if (decode) {
        p.batch = 64; p.seqlen_q = 1; p.heads_q = 32; p.heads_kv = 4; p.head_dim_qk = 128;
        p.seqlen_k = argc > 3 ? atoi(argv[3]) : 4096;
    } else {
        p.batch = 4; p.seqlen_q = p.seqlen_k = 4096; p.heads_q = 16; p.heads_kv = 16;
        p.head_dim_qk = argc > 2 ? atoi(argv[2]) : 128;
    }
    t0 = now_ms();
    if (fa4_context_create(&ctx, 0, &co) != FA4_OK) {
        fprintf(stderr, "plan_time: %s\n", fa4_context_last_error());
        return 1;
    }
    t1 = now_ms();
    if (fa4_plan_create(&plan, ctx, &p, NULL) != FA4_OK) {
        fprintf(stderr, "plan_time: %s\n", fa4_context_errmsg(ctx));
        return 1;
    }
    t2 = now_ms();
    fa4_plan_config(plan, &cfg, &src);
    printf("context %.2f ms, plan %.2f ms, NVRTC compiles %ld, config [%s] from %s%s%s\n", t1 - t0, t2 - t1,
           jit_compile_count(), fa4_config_format(&cfg, text, sizeof text), fa4_config_source_string(src),
           fa4_context_warnings(ctx)[0] ? ", warnings: " : "", fa4_context_warnings(ctx));
    if (decode)
        printf("fa4_forward host time: %.2f us per call (median of 5 x 200)\n",
               forward_host_us(ctx, plan, &p));
    fa4_plan_destroy(plan);
    fa4_context_destroy(ctx);
    return 0;
}
