/*
** serving.c -- decode, speculative and paged-KV timings through the public
** API (fa4_plan_create + fa4_forward), the way an inference engine calls
** the library: one plan per shape and config, launches back to back (10
** calls between two CUDA events, median of 15 such groups), inputs random.
** A shape's plans (the default and FA4_CONFIGS's) take their groups in
** turn, the order rotated each round, so clock and thermal drift fall on
** all of them alike.
**
**   serving [--fp8] [SHAPE_FILTER]   FA4_CONFIGS="cfg1;cfg2" also times those,
**                                    FA4_SOFTCAP=X caps every shape's scores,
**                                    FA4_NO_DEFAULT=1 times FA4_CONFIGS's alone
**                                    (a plan timed beside another reads a few
**                                    percent slower: compare across processes)
**
** Prints per shape and config: microseconds per call, TB/s of K and V read
** (each byte once; a rough figure for the prefill chunks), and the config.
** The varlen chunk shapes pack Q (cu_seqlens_q) over the paged cache with
** seqused_k, as a mixed batch of an engine does.  --fp8 times every shape twice, bf16
** then e4m3 Q, K and V (bf16 O, descales of 1; inputs from
** ref_fill_inputs).  bench/NOTES.md has the results.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fa4.h"
#include "context.h"
#include "config.h"
#include "reference.h"
#include "dtype.h"

typedef struct shape {
    const char *name;
    int batch, sq, sk, hq, hkv, d, causal, page;
    int varlen;   /* 1: packed Q (cu_seqlens_q, every sequence sq rows) and seqused_k */
} shape;

static const shape shapes[] = {
    { "decode b64 32/4 kv4k", 64, 1, 4096, 32, 4, 128, 0, 0, 0 },
    { "decode b64 32/4 kv4k page16", 64, 1, 4096, 32, 4, 128, 0, 16, 0 },
    { "decode b64 32/4 kv32k", 64, 1, 32768, 32, 4, 128, 0, 0, 0 },
    { "decode b64 32/4 kv32k page16", 64, 1, 32768, 32, 4, 128, 0, 16, 0 },
    { "decode b8 64/8 kv64k", 8, 1, 65536, 64, 8, 128, 0, 0, 0 },
    { "decode b1 32/8 kv128k", 1, 1, 131072, 32, 8, 128, 0, 0, 0 },
    { "decode b4 32/8 kv64k", 4, 1, 65536, 32, 8, 128, 0, 0, 0 },
    { "spec b32 q4 32/4 kv8k", 32, 4, 8192, 32, 4, 128, 1, 0, 0 },
    { "spec b32 q8 32/4 kv8k", 32, 8, 8192, 32, 4, 128, 1, 0, 0 },
    { "decode b32 q1 32/4 kv8k", 32, 1, 8192, 32, 4, 128, 1, 0, 0 },
    { "chunk b8 q512 32/8 kv8k", 8, 512, 8192, 32, 8, 128, 1, 0, 0 },
    { "chunk b8 q512 32/8 kv8k page16", 8, 512, 8192, 32, 8, 128, 1, 16, 0 },
    { "chunk b8 q512 32/8 kv8k page64", 8, 512, 8192, 32, 8, 128, 1, 64, 0 },
    { "chunk varlen b8 q512 kv8k page16", 8, 512, 8192, 32, 8, 128, 1, 16, 1 },
    { "chunk varlen b8 q512 kv8k page64", 8, 512, 8192, 32, 8, 128, 1, 64, 1 },
    { "chunk varlen b8 q512 64/8 kv8k page16", 8, 512, 8192, 64, 8, 128, 1, 16, 1 },
    { "prefill varlen b4 q4k 32/8 page64", 4, 4096, 4096, 32, 8, 128, 1, 64, 1 },
    { "prefill varlen b4 q4k 32/8 page64 nc", 4, 4096, 4096, 32, 8, 128, 0, 64, 1 },
    { "prefill varlen b4 q4k 64/8 page64", 4, 4096, 4096, 64, 8, 128, 1, 64, 1 },
};

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

#define GROUPS 15        /* event pairs per plan */
#define MAX_PLANS 16     /* the default and up to 15 of FA4_CONFIGS */

/* Median microseconds per call of each of the N PLANS on T into US: 10
 * calls per event pair, GROUPS rounds, each round every plan once in an
 * order rotated by the round. */
static void time_plans(fa4_context *ctx, fa4_plan *const *plans, int n, const fa4_tensors *t,
                       double *us)
{
    const cuda_api *cu = ctx->cu;
    static float ms[MAX_PLANS][GROUPS];
    CUevent e0, e1;
    int g, i, k;

    cu->cuEventCreate(&e0, 0);
    cu->cuEventCreate(&e1, 0);
    for (k = 0; k < n; k++)
        for (i = 0; i < 5; i++)
            fa4_forward(plans[k], t, NULL);
    for (g = 0; g < GROUPS; g++)
        for (k = 0; k < n; k++) {
            const int j = (k + g) % n;
            cu->cuEventRecord(e0, NULL);
            for (i = 0; i < 10; i++)
                fa4_forward(plans[j], t, NULL);
            cu->cuEventRecord(e1, NULL);
            cu->cuEventSynchronize(e1);
            cu->cuEventElapsedTime(&ms[j][g], e0, e1);
        }
    cu->cuEventDestroy(e0);
    cu->cuEventDestroy(e1);
    for (k = 0; k < n; k++) {
        qsort(ms[k], GROUPS, sizeof ms[k][0], cmp_float);
        us[k] = ms[k][GROUPS / 2] * 100.0;   /* ms per 10 calls -> us per call */
    }
}

int main(int argc, char **argv)
{
    fa4_context *ctx = NULL;
    fa4_context_options co = FA4_CONTEXT_OPTIONS_INIT;
    const int fp8 = argc > 1 && !strcmp(argv[1], "--fp8");
    const char *filter = argc > 1 + fp8 ? argv[1 + fp8] : NULL;
    const char *extra = getenv("FA4_CONFIGS");
    const char *cap = getenv("FA4_SOFTCAP");
    const char *only = getenv("FA4_NO_DEFAULT");
    const int no_default = extra && only && atoi(only);
    uint64_t seed = 42;
    size_t si;

    co.no_database = getenv("FA4_BENCH_DB") == NULL;
    if (fa4_context_create(&ctx, 0, &co) != FA4_OK) {
        fprintf(stderr, "no GPU: %s\n", fa4_context_last_error());
        return 77;
    }
    context_push(ctx);
    printf("%-30s %5s %9s %8s  %s\n", "shape", "dtype", "us", "TB/s", "config");
    for (si = 0; si < (sizeof shapes / sizeof shapes[0]) * (fp8 ? 2 : 1); si++) {
        const shape *s = &shapes[fp8 ? si / 2 : si];
        const fa4_dtype dt = fp8 && si % 2 ? FA4_DTYPE_FP8_E4M3 : FA4_DTYPE_BF16;
        const size_t eb = (size_t)dtype_bytes(dt);
        const cuda_api *cu = ctx->cu;
        fa4_problem p = FA4_PROBLEM_INIT;
        fa4_tensors t = FA4_TENSORS_INIT;
        size_t nq = (size_t)s->batch * s->sq * s->hq * s->d;
        size_t nkv = (size_t)s->batch * s->sk * s->hkv * s->d;
        double bytes = 2.0 * nkv * eb;
        CUdeviceptr dq, dk, dv, dout, dtable = 0, dcu = 0, dused = 0;
        /* One host buffer of random values for Q, K and V: the larger of
           the two sizes (prefill shapes have more queries than keys). */
        const size_t nh = nq > nkv ? nq : nkv;
        void *h = malloc(nh * eb);
        char list[2048], *tok, *save = NULL;
        fa4_plan *plans[MAX_PLANS];
        double us[MAX_PLANS];
        int c, nplans = 0;

        if (filter && !strstr(s->name, filter))
            continue;
        p.batch = s->batch; p.seqlen_q = s->sq; p.seqlen_k = s->sk; p.heads_q = s->hq;
        p.heads_kv = s->hkv; p.head_dim_qk = s->d; p.causal = s->causal; p.page_size = s->page;
        p.dtype = dt;
        p.softcap = cap ? (float)atof(cap) : 0.0f;
        cu->cuMemAlloc(&dq, nq * eb);
        cu->cuMemAlloc(&dk, nkv * eb);
        cu->cuMemAlloc(&dv, nkv * eb);
        cu->cuMemAlloc(&dout, nq * 2);
        if (!h) {
            fprintf(stderr, "serving: cannot allocate %zu B of host memory\n", nh * eb);
            return 1;
        }
        ref_fill_inputs(h, nh, dt, &seed);
        cu->cuMemcpyHtoD(dk, h, nkv * eb);
        cu->cuMemcpyHtoD(dv, h, nkv * eb);
        cu->cuMemcpyHtoD(dq, h, nq * eb);
        if (s->page) {
            /* Pages in a shuffled order, as a cache that has been in use. */
            int per = s->sk / s->page, n = s->batch * per, i;
            int32_t *table = malloc(sizeof *table * n);
            for (i = 0; i < n; i++)
                table[i] = i;
            for (i = n - 1; i > 0; i--) {
                int j = (int)(((seed = seed * 6364136223846793005ULL + 1) >> 33) % (unsigned)(i + 1));
                int32_t x = table[i]; table[i] = table[j]; table[j] = x;
            }
            cu->cuMemAlloc(&dtable, sizeof *table * n);
            cu->cuMemcpyHtoD(dtable, table, sizeof *table * n);
            free(table);
            p.num_pages = n;
            t.block_table = (const int32_t *)(uintptr_t)dtable;
        }
        if (s->varlen) {
            /* Every sequence sq queries over sk keys: cu_seqlens_q and seqused_k. */
            int32_t cu_q[65], used[64];
            int b;
            for (b = 0; b <= s->batch && b < 65; b++)
                cu_q[b] = b * s->sq;
            for (b = 0; b < s->batch && b < 64; b++)
                used[b] = s->sk;
            cu->cuMemAlloc(&dcu, sizeof cu_q);
            cu->cuMemAlloc(&dused, sizeof used);
            cu->cuMemcpyHtoD(dcu, cu_q, sizeof cu_q);
            cu->cuMemcpyHtoD(dused, used, sizeof used);
            p.varlen = 1;
            t.cu_seqlens_q = (const int32_t *)(uintptr_t)dcu;
            t.seqused_k = (const int32_t *)(uintptr_t)dused;
        }
        t.q = (void *)(uintptr_t)dq; t.k = (void *)(uintptr_t)dk; t.v = (void *)(uintptr_t)dv;
        t.o = (void *)(uintptr_t)dout;
        snprintf(list, sizeof list, "%s%s%s", no_default ? "" : "default",
                 extra && !no_default ? ";" : "", extra ? extra : "");
        for (c = 0, tok = strtok_r(list, ";", &save); tok && nplans < MAX_PLANS;
             tok = strtok_r(NULL, ";", &save), c++) {
            fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
            fa4_config cfg = FA4_CONFIG_INIT;
            char why[256];
            if (strcmp(tok, "default")) {
                if (config_parse(&cfg, tok, why, sizeof why) != FA4_OK) {
                    printf("%-30s %5s bad config: %s\n", s->name, dtype_of(dt)->name, why);
                    continue;
                }
                po.config = &cfg;
            }
            if (fa4_plan_create(&plans[nplans], ctx, &p, &po) != FA4_OK) {
                printf("%-30s %5s plan failed: %s\n", s->name, dtype_of(dt)->name,
                       fa4_context_errmsg(ctx));
                continue;
            }
            nplans++;
        }
        time_plans(ctx, plans, nplans, &t, us);
        if (cu->cuCtxSynchronize() != CUDA_SUCCESS) {
            printf("%-30s launch failed\n", s->name);
            return 1;
        }
        for (c = 0; c < nplans; c++) {
            fa4_config got = FA4_CONFIG_INIT;
            char desc[256];
            fa4_plan_config(plans[c], &got, NULL);
            fa4_config_format(&got, desc, sizeof desc);
            printf("%-30s %5s %9.1f %8.3f  %s\n", s->name, dtype_of(dt)->name, us[c],
                   bytes / us[c] * 1e-6, desc);
            fa4_plan_destroy(plans[c]);
        }
        fflush(stdout);
        cu->cuMemFree(dq); cu->cuMemFree(dk); cu->cuMemFree(dv); cu->cuMemFree(dout);
        if (dtable)
            cu->cuMemFree(dtable);
        if (dcu) {
            cu->cuMemFree(dcu);
            cu->cuMemFree(dused);
        }
        free(h);
    }
    context_pop(ctx);
    fa4_context_destroy(ctx);
    return 0;
}
