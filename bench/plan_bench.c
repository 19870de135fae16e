/*
** plan_bench.c -- time plans as an application gets them, in a fresh
** process: each SOURCE is a context (a database, no database = the
** heuristic, or an explicit config), fa4_plan_create() picks the config
** as it would for the application, and fa4_forward() is launched back to
** back, N launches between two events.  The sources are timed in
** alternation, ROUNDS rounds of one group each, the order rotated every
** round, so that clock and temperature drift reach all alike.  The
** tuner's figures can be checked against these (bench/tune_quality.sh,
** bench/tune_check.sh); this file shares no timing code with the tuner.
**
**   plan_bench [--device N] [--l2 warm|rotate] [--rounds R] [--reps N] [--trace 1]
**              [--host-time 1]
**              --batch B --seqlen-q S [--seqlen-k S] --heads-q H
**              [--heads-kv H] --head-dim D [--head-dim-v D] [--dtype fp16|fp8]
**              [--causal] [--return-lse] [--softcap X] [--sinks]
**              SOURCE...   (--db PATH | --heuristic | --config "TEXT")
**
** Prints one line per source:
**   source=LABEL ms=MEDIAN min=MIN max=MAX from=SOURCE config=[...]
** (a source whose plan cannot be made -- a config the budget refuses --
** is named on stderr with the reason and left out; the others still run)
** and the gain of each over the first --heuristic source; --trace 1 also
** prints every round's time with the wall clock (to line up with
** nvidia-smi's clock samples).  --host-time 1 also prints each source's host
** time per fa4_forward() call (bursts of 100 calls, median over 20 bursts;
** the GPU drains between bursts) and what one cuTensorMapEncodeTiled()
** costs on this host (the sm90 family encodes 4 maps per call, fp8 5).
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fa4.h"
#include "config.h"
#include "context.h"
#include "reference.h"
#include "dtype.h"

#define MAX_SOURCES 8

typedef struct source {
    const char *label;
    const char *db;              /* NULL: see heuristic / config */
    int heuristic;
    fa4_config config;           /* with explicit */
    int explicit_config;
    fa4_context *ctx;
    fa4_plan *plan;
    double *ms;                  /* per round; sorted at the end */
    double med;
} source;

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

/* --host-time: host microseconds per fa4_forward() of each source, and of
** one tensor-map encode (a Q map of this problem's shape). */
static void print_host_time(source *src, int nsrc, const cuda_api *cu, CUdeviceptr b,
                            size_t q, size_t kk, size_t vv, CUdeviceptr sinks,
                            const fa4_problem *p)
{
    enum { BURSTS = 20, CALLS = 100, ENCODES = 10000 };
    double us[BURSTS], t0;
    int i, j, n;

    if (p->return_lse) {
        printf("host --host-time skipped: no LSE buffer is set up for it\n");
        return;
    }
    for (i = 0; i < nsrc; i++) {
        fa4_tensors tn = FA4_TENSORS_INIT;
        tn.q = (void *)(uintptr_t)b;
        tn.k = (void *)(uintptr_t)(b + q);
        tn.v = (void *)(uintptr_t)(b + q + kk);
        tn.o = (void *)(uintptr_t)(b + q + kk + vv);
        tn.lse = NULL;
        tn.sinks = (const float *)(uintptr_t)sinks;
        for (j = 0; j < BURSTS; j++) {
            t0 = now_us();
            for (n = 0; n < CALLS; n++)
                fa4_forward(src[i].plan, &tn, NULL);
            us[j] = (now_us() - t0) / CALLS;
            cu->cuCtxSynchronize();
        }
        qsort(us, BURSTS, sizeof us[0], cmp);
        printf("host source=%s us_per_call=%.2f min=%.2f max=%.2f\n", src[i].label,
               0.5 * (us[BURSTS / 2 - 1] + us[BURSTS / 2]), us[0], us[BURSTS - 1]);
    }
    {
        CUtensorMap map;
        const cuuint64_t dims[4] = { (cuuint64_t)p->head_dim_qk, (cuuint64_t)p->heads_q,
                                     (cuuint64_t)p->seqlen_q, (cuuint64_t)p->batch };
        const cuuint64_t strides[3] = { (cuuint64_t)p->head_dim_qk * 2,
                                        (cuuint64_t)p->head_dim_qk * 2 * p->heads_q,
                                        (cuuint64_t)p->head_dim_qk * 2 * p->heads_q * p->seqlen_q };
        const cuuint32_t box[4] = { 64, 1, 128, 1 }, one[4] = { 1, 1, 1, 1 };
        t0 = now_us();
        for (n = 0; n < ENCODES; n++)
            cu->cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, (void *)(uintptr_t)b,
                                       dims, strides, box, one, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                       CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                       CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        printf("host tensor_map_encode_us=%.3f\n", (now_us() - t0) / ENCODES);
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: plan_bench [--device N] [--l2 warm|rotate] "
            "[--rounds R] [--reps N] [--trace 1] [--host-time 1] SHAPE SOURCE...\n"
            "  SHAPE: --batch B --seqlen-q S [--seqlen-k S] --heads-q H "
            "[--heads-kv H] --head-dim D [--head-dim-v D] [--dtype fp16] "
            "[--causal] [--return-lse] [--softcap X] [--sinks]\n"
            "  SOURCE: --db PATH | --heuristic | --config \"TEXT\"\n");
    exit(2);
}

int main(int argc, char **argv)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    source src[MAX_SOURCES];
    int nsrc = 0, device = 0, rounds = 7, reps = 20, warm = 0, trace = 0, host_time = 0, i, j, k, r;
    size_t q, kk, vv, o, l, set, nsets, total;
    CUdeviceptr base = 0, sinks = 0;
    const cuda_api *cu;
    CUevent e0, e1;
    uint16_t *host;
    uint64_t seed = 42;
    int next = 0, ref = -1, dv;
    char text[256];

    memset(src, 0, sizeof src);
    p.heads_kv = 0;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--causal")) { p.causal = 1; p.window_right = 0; continue; }
        if (!strcmp(a, "--return-lse")) { p.return_lse = 1; continue; }
        if (!strcmp(a, "--sinks")) { p.attention_sinks = 1; continue; }
        if (!strcmp(a, "--softcap") && i + 1 < argc) { p.softcap = (float)atof(argv[++i]); continue; }
        if (!strcmp(a, "--heuristic")) {
            if (nsrc == MAX_SOURCES) usage();
            src[nsrc].label = "heuristic";
            src[nsrc++].heuristic = 1;
            continue;
        }
        if (!v)
            usage();
        i++;
        if (!strcmp(a, "--device")) device = atoi(v);
        else if (!strcmp(a, "--l2")) warm = !strcmp(v, "warm");
        else if (!strcmp(a, "--rounds")) rounds = atoi(v);
        else if (!strcmp(a, "--reps")) reps = atoi(v);
        else if (!strcmp(a, "--trace")) trace = atoi(v);
        else if (!strcmp(a, "--host-time")) host_time = atoi(v);
        else if (!strcmp(a, "--batch")) p.batch = atoi(v);
        else if (!strcmp(a, "--seqlen-q")) p.seqlen_q = atoi(v);
        else if (!strcmp(a, "--seqlen-k")) p.seqlen_k = atoi(v);
        else if (!strcmp(a, "--heads-q")) p.heads_q = atoi(v);
        else if (!strcmp(a, "--heads-kv")) p.heads_kv = atoi(v);
        else if (!strcmp(a, "--head-dim")) p.head_dim_qk = atoi(v);
        else if (!strcmp(a, "--head-dim-v")) p.head_dim_v = atoi(v);
        else if (!strcmp(a, "--dtype"))
            p.dtype = !strcmp(v, "fp16") ? FA4_DTYPE_FP16
                      : !strcmp(v, "fp8") ? FA4_DTYPE_FP8_E4M3 : FA4_DTYPE_BF16;
        else if (!strcmp(a, "--db") || !strcmp(a, "--config")) {
            if (nsrc == MAX_SOURCES) usage();
            src[nsrc].label = v;
            if (!strcmp(a, "--db")) {
                src[nsrc].db = v;
            } else {
                char why[512];
                if (config_parse(&src[nsrc].config, v, why, sizeof why) != FA4_OK) {
                    fprintf(stderr, "plan_bench: --config: %s\n", why);
                    return 2;
                }
                src[nsrc].explicit_config = 1;
            }
            nsrc++;
        } else usage();
    }
    if (!p.seqlen_k) p.seqlen_k = p.seqlen_q;
    if (!p.heads_kv) p.heads_kv = p.heads_q;
    if (nsrc == 0 || rounds < 1 || reps < 1 || fa4_problem_check(&p, text, sizeof text) != FA4_OK) {
        if (nsrc) fprintf(stderr, "plan_bench: %s\n", text);
        usage();
    }

    for (i = j = 0; i < nsrc; i++) {
        fa4_context_options co = FA4_CONTEXT_OPTIONS_INIT;
        fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
        co.db_path = src[i].db;
        co.system_db_path = "";
        co.no_database = src[i].db == NULL;
        if (fa4_context_create(&src[i].ctx, device, &co) != FA4_OK) {
            fprintf(stderr, "plan_bench: %s\n", fa4_context_last_error());
            return 1;
        }
        if (src[i].explicit_config)
            po.config = &src[i].config;
        if (fa4_plan_create(&src[i].plan, src[i].ctx, &p, &po) != FA4_OK) {
            /* A config the budget or the compiler refuses is left out with
               the reason; the other sources are still compared. */
            fprintf(stderr, "plan_bench: %s: skipped: %s\n", src[i].label,
                    fa4_context_errmsg(src[i].ctx));
            fa4_context_destroy(src[i].ctx);
            continue;
        }
        if (!(src[i].ms = calloc((size_t)rounds, sizeof(double))))
            return 1;
        if (src[i].heuristic && ref < 0)
            ref = j;
        src[j++] = src[i];
    }
    if ((nsrc = j) == 0) {
        fprintf(stderr, "plan_bench: no source left to time\n");
        return 1;
    }

    /* Buffers: one set (warm) or sets beyond twice L2 (rotate). */
    cu = src[0].ctx->cu;
    dv = p.head_dim_v ? p.head_dim_v : p.head_dim_qk;
    q = (((size_t)p.batch * p.seqlen_q * p.heads_q * p.head_dim_qk * 2) + 255) & ~(size_t)255;
    kk = (((size_t)p.batch * p.seqlen_k * p.heads_kv * p.head_dim_qk * 2) + 255) & ~(size_t)255;
    vv = (((size_t)p.batch * p.seqlen_k * p.heads_kv * dv * 2) + 255) & ~(size_t)255;
    o = (((size_t)p.batch * p.seqlen_q * p.heads_q * dv * 2) + 255) & ~(size_t)255;
    l = (((size_t)p.batch * p.heads_q * p.seqlen_q * 4) + 255) & ~(size_t)255;
    set = q + kk + vv + o + l;
    nsets = warm ? 1 : (size_t)(2.0 * src[0].ctx->limits.l2_bytes / set) + 2;
    total = nsets * set;
    if (context_push(src[0].ctx) != FA4_OK || cu->cuMemAlloc(&base, total) != CUDA_SUCCESS) {
        fprintf(stderr, "plan_bench: cannot allocate %.2f GiB\n", total / 1073741824.0);
        return 1;
    }
    if (p.attention_sinks) {   /* one sink logit of 0 per head */
        if (cu->cuMemAlloc(&sinks, (size_t)p.heads_q * 4) != CUDA_SUCCESS)
            return 1;
        cu->cuMemsetD8(sinks, 0, (size_t)p.heads_q * 4);
    }
    if (!(host = malloc(set)))
        return 1;
    ref_fill_random(host, set / 2, p.dtype, &seed);   /* fp8: e4m3 N(0, 1), no NaN */
    for (i = 0; i < (int)nsets; i++)
        cu->cuMemcpyHtoD(base + (size_t)i * set, host, set);
    free(host);
    cu->cuEventCreate(&e0, CU_EVENT_DEFAULT);
    cu->cuEventCreate(&e1, CU_EVENT_DEFAULT);

    /* Warm-up, then ROUNDS rounds, the order rotated each round. */
    for (r = -1; r < rounds; r++)
        for (k = 0; k < nsrc; k++) {
            source *s = &src[(k + (r < 0 ? 0 : r)) % nsrc];
            int n = r < 0 ? 5 : reps;
            float t;
            cu->cuEventRecord(e0, NULL);
            for (i = 0; i < n; i++) {
                fa4_tensors tn = FA4_TENSORS_INIT;
                CUdeviceptr b = base + (size_t)(next++ % nsets) * set;
                tn.q = (void *)(uintptr_t)b;
                tn.k = (void *)(uintptr_t)(b + q);
                tn.v = (void *)(uintptr_t)(b + q + kk);
                tn.o = (void *)(uintptr_t)(b + q + kk + vv);
                tn.lse = p.return_lse ? (float *)(uintptr_t)(b + q + kk + vv + o) : NULL;
                tn.sinks = (const float *)(uintptr_t)sinks;
                if (fa4_forward(s->plan, &tn, NULL) != FA4_OK) {
                    fprintf(stderr, "plan_bench: %s: %s\n", s->label, fa4_context_errmsg(s->ctx));
                    return 1;
                }
            }
            cu->cuEventRecord(e1, NULL);
            if (cu->cuEventSynchronize(e1) != CUDA_SUCCESS) {
                fprintf(stderr, "plan_bench: %s: kernel failed\n", s->label);
                return 1;
            }
            cu->cuEventElapsedTime(&t, e0, e1);
            if (r >= 0)
                s->ms[r] = t / n;
            if (r >= 0 && trace) {   /* wall time: lines up with nvidia-smi's samples */
                struct timespec now;
                clock_gettime(CLOCK_REALTIME, &now);
                printf("# round %d source %d ms %.4f at %.3f\n", r, (int)(s - src), t / n,
                       now.tv_sec + now.tv_nsec * 1e-9);
            }
        }
    if (host_time)
        print_host_time(src, nsrc, cu, base, q, kk, vv, sinks, &p);
    context_pop(src[0].ctx);

    printf("# %s b=%d sq=%d sk=%d hq=%d hkv=%d d=%d dv=%d%s%s; %s L2; %d rounds of %d launches\n",
           dtype_of(p.dtype)->name, p.batch, p.seqlen_q, p.seqlen_k, p.heads_q,
           p.heads_kv, p.head_dim_qk, dv, p.causal ? " causal" : "", p.return_lse ? " lse" : "",
           warm ? "warm" : "rotated", rounds, reps);
    for (i = 0; i < nsrc; i++) {
        qsort(src[i].ms, (size_t)rounds, sizeof(double), cmp);
        src[i].med = rounds % 2 ? src[i].ms[rounds / 2]
                     : 0.5 * (src[i].ms[rounds / 2 - 1] + src[i].ms[rounds / 2]);
    }
    for (i = 0; i < nsrc; i++) {
        fa4_config c = FA4_CONFIG_INIT;
        fa4_config_source from;
        fa4_plan_config(src[i].plan, &c, &from);
        printf("source=%s ms=%.4f min=%.4f max=%.4f from=%s config=[%s]", src[i].label, src[i].med,
               src[i].ms[0], src[i].ms[rounds - 1], fa4_config_source_string(from),
               fa4_config_format(&c, text, sizeof text));
        if (ref >= 0 && i != ref)
            printf(" vs_heuristic=%+.1f%%", (src[ref].med / src[i].med - 1) * 100);
        printf("\n");
    }
    cu->cuEventDestroy(e0);
    cu->cuEventDestroy(e1);
    cu->cuMemFree(base);
    for (i = 0; i < nsrc; i++) {
        fa4_plan_destroy(src[i].plan);
        fa4_context_destroy(src[i].ctx);
        free(src[i].ms);
    }
    return 0;
}
