/*
** sweep.c -- the correctness sweep: every enumerated variant of a family,
** for head dims, dtypes and causal/non-causal, on random inputs with
** ragged sequence lengths, against the float64 CPU reference.
**
**   sweep FAMILY [DIMS] [SEQLENS]     e.g.  sweep sm90 64,96,128,192/128,256 1,17,129,1000
**
** FAMILY: sm80, sm90 or sm100 (which opts in to the sm100 family: this
** sweep is how its kernels get validated; bench/b200.sh).  A family that
** has no variant on this GPU is an error, not an empty pass.
** DIMS: head_dim_qk[/head_dim_v], comma-separated.  SWEEP_ONLY=WORDS keeps
** the variants whose config text (fa4_config_format) contains each of the
** space-separated WORDS, e.g. "swizzle=32" or "swizzle=128 late_k=1";
** SWEEP_DTYPE=bf16|fp16 and SWEEP_CAUSAL=0|1 keep one dtype or one masking;
** SWEEP_WINDOW=LEFT,RIGHT puts that sliding window in place of the causal
** mask.  SWEEP_HEADS=HQ/HKV sets the heads (default 4/2).
** SWEEP_DECODE=T1,T2,.. sweeps decode steps instead: the space of a
** problem of max(T) query tokens over max(SEQLENS) keys (so the decode
** variants -- sm80's serving tiles, sm100's decode mode -- are in it),
** each case T query tokens over SEQLENS keys.  Plans are compiled by 16
** threads (fa4_plan_create is thread-safe) in the order the main thread
** runs them, so the GPU checks overlap the compiles.  Prints one line per
** failure and a summary:
** variants, cases, failures.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define GPU_CHECK_BUDGET 3.0e8   /* sampled rows at 4096: keeps the sweep minutes long */
#include "../tests/gpu_check.h"
#include "config.h"
#include "family.h"

typedef struct job {
    fa4_context *ctx;
    fa4_problem problem;
    fa4_config config;
    fa4_plan *plan;
    int compiled;                /* set under job_lock when plan/err is final */
    char err[512];
} job;

static job *jobs;
static int njobs, next_job;
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_done = PTHREAD_COND_INITIALIZER;

/* 1 when config text CS contains every space-separated word of ONLY. */
static int config_has_all(const char *cs, const char *only)
{
    char word[64];
    int n;
    while (sscanf(only, " %63s%n", word, &n) == 1) {
        if (!strstr(cs, word))
            return 0;
        only += n;
    }
    return 1;
}

/* "causal=0", "causal=1" or "window=L,R": the mask of P, for the report. */
static const char *mask_name(const fa4_problem *p, char *buf, size_t n)
{
    if (p->window_left >= 0 || p->window_right >= 0)
        snprintf(buf, n, "window=%d,%d", p->window_left, p->window_right);
    else
        snprintf(buf, n, "causal=%d", p->causal);
    return buf;
}

static void *compile_worker(void *arg)
{
    for (;;) {
        job *j;
        fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
        pthread_mutex_lock(&job_lock);
        j = next_job < njobs ? &jobs[next_job++] : NULL;
        pthread_mutex_unlock(&job_lock);
        if (!j)
            return arg;
        po.config = &j->config;
        if (fa4_plan_create(&j->plan, j->ctx, &j->problem, &po) != FA4_OK)
            snprintf(j->err, sizeof j->err, "%s", fa4_context_errmsg(j->ctx));
        pthread_mutex_lock(&job_lock);
        j->compiled = 1;
        pthread_cond_broadcast(&job_done);
        pthread_mutex_unlock(&job_lock);
    }
}

/* Wait until jobs [0, END) are compiled. */
static void wait_compiled(int end)
{
    int i;
    pthread_mutex_lock(&job_lock);
    for (i = 0; i < end; i++)
        while (!jobs[i].compiled)
            pthread_cond_wait(&job_done, &job_lock);
    pthread_mutex_unlock(&job_lock);
}

/* Parse "D" or "D/DV" at S into *D, *DV. */
static void parse_dims(const char *s, int *d, int *dv)
{
    char *end;
    *d = (int)strtol(s, &end, 10);
    *dv = *end == '/' ? atoi(end + 1) : *d;
}

static int parse_list(int *out, int max, const char *s)
{
    int n = 0;
    while (s && *s && n < max) {
        out[n++] = atoi(s);
        s = strchr(s, ',');
        if (s)
            s++;
    }
    return n;
}

int main(int argc, char **argv)
{
    fa4_context_options co = FA4_CONTEXT_OPTIONS_INIT;
    fa4_context *ctx;
    fa4_family fam = FA4_FAMILY_SM80;
    const char *only = getenv("SWEEP_ONLY"), *dl;
    int dims[8], dvs[8], nd = 0, seqs[8], ns, di, dt, causal, i, s, cap = 0;
    int window = 0, wl = -1, wr = -1;
    char mn[32];
    int cases = 0, failures = 0, compile_fail = 0, g, gend;
    int toks[8], nt = 0, hq = 4, hkv = 2;      /* SWEEP_DECODE, SWEEP_HEADS */
    double worst = 0;
    uint64_t seed = 12345;
    pthread_t th[16];

    if (argc > 1 && !strcmp(argv[1], "sm90"))
        fam = FA4_FAMILY_SM90;
    else if (argc > 1 && !strcmp(argv[1], "sm100"))
        fam = FA4_FAMILY_SM100;
    for (dl = argc > 2 ? argv[2] : "64,128,256"; dl && *dl && nd < 8; nd++) {
        parse_dims(dl, &dims[nd], &dvs[nd]);
        dl = strchr(dl, ',');
        if (dl)
            dl++;
    }
    ns = parse_list(seqs, 8, argc > 3 ? argv[3] : "1,17,129,1000,4096");
    if (getenv("SWEEP_DECODE"))
        nt = parse_list(toks, 8, getenv("SWEEP_DECODE"));
    if (getenv("SWEEP_WINDOW")) {
        if (sscanf(getenv("SWEEP_WINDOW"), "%d,%d", &wl, &wr) != 2 || wl < -1 || wr < -1) {
            fprintf(stderr, "sweep: SWEEP_WINDOW=%s is not LEFT,RIGHT (-1: unbounded)\n",
                    getenv("SWEEP_WINDOW"));
            return 2;
        }
        window = 1;
    }
    if (getenv("SWEEP_HEADS") &&
        (sscanf(getenv("SWEEP_HEADS"), "%d/%d", &hq, &hkv) != 2 || hq < 1 || hkv < 1 || hq % hkv)) {
        fprintf(stderr, "sweep: SWEEP_HEADS=%s; want HQ/HKV with HKV dividing HQ\n",
                getenv("SWEEP_HEADS"));
        return 2;
    }
    co.no_database = 1;
    co.enable_sm100 = fam == FA4_FAMILY_SM100;
    if (fa4_context_create(&ctx, 0, &co) != FA4_OK) {
        fprintf(stderr, "sweep: %s\n", fa4_context_last_error());
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (getenv("FA4_TEST_SEED"))
        seed = strtoull(getenv("FA4_TEST_SEED"), NULL, 10);
    printf("sweep %s on %s, seed %llu%s%s\n", config_family_name(fam), ctx->limits.name,
           (unsigned long long)seed, only ? ", only " : "", only ? only : "");
    for (di = 0; di < nd; di++)
        for (dt = 1; dt <= 2; dt++)
            for (causal = 0; causal <= 1; causal++) {
                const char *want_dt = getenv("SWEEP_DTYPE"), *want_causal = getenv("SWEEP_CAUSAL");
                fa4_problem p = FA4_PROBLEM_INIT;
                config_space sp;
                char why[512], cs[256];
                if ((want_dt && strcmp(want_dt, dt == 1 ? "bf16" : "fp16")) ||
                    (want_causal && atoi(want_causal) != causal))
                    continue;
                p.dtype = (fa4_dtype)dt; p.batch = 1; p.heads_q = hq; p.heads_kv = hkv;
                p.head_dim_qk = dims[di]; p.head_dim_v = dvs[di]; p.causal = causal;
                if (causal && window) {   /* the masked half takes the window */
                    p.causal = 0;
                    p.window_left = wl;
                    p.window_right = wr;
                }
                p.return_lse = 1;
                p.seqlen_q = p.seqlen_k = 1024;
                if (nt > 0) {           /* decode steps: the longest of each list */
                    p.seqlen_q = p.seqlen_k = 1;
                    for (i = 0; i < nt; i++)
                        p.seqlen_q = toks[i] > p.seqlen_q ? toks[i] : p.seqlen_q;
                    for (i = 0; i < ns; i++)
                        p.seqlen_k = seqs[i] > p.seqlen_k ? seqs[i] : p.seqlen_k;
                }
                if (config_enumerate(&sp, &ctx->limits, &p, fam, why, sizeof why) != FA4_OK) {
                    printf("SKIP d%d/%d %s causal=%d: %s\n", dims[di], dvs[di],
                           dt == 1 ? "bf16" : "fp16", causal, why);
                    continue;
                }
                if (njobs + sp.count > cap) {
                    cap = (njobs + sp.count) * 2;
                    jobs = realloc(jobs, sizeof *jobs * (size_t)cap);
                }
                for (i = 0; i < sp.count; i++) {
                    fa4_config_format(&sp.configs[i], cs, sizeof cs);
                    if (only && !config_has_all(cs, only))
                        continue;
                    memset(&jobs[njobs], 0, sizeof *jobs);
                    jobs[njobs].ctx = ctx;
                    jobs[njobs].problem = p;
                    jobs[njobs++].config = sp.configs[i];
                }
                config_space_free(&sp);
            }
    if (njobs == 0) {
        printf("SWEEP %s: no variant runs on %s\n", config_family_name(fam), ctx->limits.name);
        fa4_context_destroy(ctx);
        return 2;
    }
    printf("%d variants; compiling on 16 threads while checking\n", njobs);
    fflush(stdout);
    for (i = 0; i < 16; i++)
        pthread_create(&th[i], NULL, compile_worker, NULL);
    /* Jobs come grouped by (head dims, dtype, mask): one set of inputs and
       one reference per group and shape, every variant of the group on it. */
    for (g = 0; g < njobs; g = gend) {
        for (gend = g + 1; gend < njobs && jobs[gend].problem.head_dim_qk == jobs[g].problem.head_dim_qk &&
                           jobs[gend].problem.head_dim_v == jobs[g].problem.head_dim_v &&
                           jobs[gend].problem.dtype == jobs[g].problem.dtype &&
                           jobs[gend].problem.causal == jobs[g].problem.causal &&
                           jobs[gend].problem.window_left == jobs[g].problem.window_left &&
                           jobs[gend].problem.window_right == jobs[g].problem.window_right; gend++)
            ;
        wait_compiled(gend);
        for (i = g; i < gend; i++) {
            char cs[256];
            if (jobs[i].plan)
                continue;
            fa4_config_format(&jobs[i].config, cs, sizeof cs);
            compile_fail++;
            printf("COMPILE FAIL d%d/%d %s causal=%d [%s]: %s\n", jobs[i].problem.head_dim_qk,
                   jobs[i].problem.head_dim_v, jobs[i].problem.dtype == 1 ? "bf16" : "fp16",
                   jobs[i].problem.causal, cs, jobs[i].err);
        }
        for (s = 0; s < ns; s++) {
            int v;
            for (v = 0; v < (nt > 0 ? nt : 2); v++) {
                fa4_problem p = jobs[g].problem;
                gpu_case gc;
                char msg[512];
                p.seqlen_q = seqs[s];
                p.seqlen_k = v == 0 ? seqs[s] : (seqs[s] > 1 ? seqs[s] / 2 + 3 : 5);   /* seqlen_q != seqlen_k */
                if (nt > 0) {           /* a decode step of toks[v] tokens over seqs[s] keys */
                    p.seqlen_q = toks[v];
                    p.seqlen_k = seqs[s];
                }
                if (gpu_case_prepare(&gc, ctx, &p, &seed, msg, sizeof msg) != 0) {
                    printf("PREPARE FAIL d%d sq=%d sk=%d: %s\n", p.head_dim_qk, p.seqlen_q, p.seqlen_k, msg);
                    failures++;
                    gpu_case_free(&gc);
                    continue;
                }
                for (i = g; i < gend; i++) {
                    fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
                    fa4_plan *plan = NULL;
                    gpu_check_result r;
                    char cs[256];
                    if (!jobs[i].plan)
                        continue;
                    fa4_config_format(&jobs[i].config, cs, sizeof cs);
                    po.config = &jobs[i].config;
                    cases++;
                    if (fa4_plan_create(&plan, ctx, &p, &po) != FA4_OK || gpu_case_run(&r, &gc, plan) != 0) {
                        failures++;
                        printf("FAIL d%d/%d %s %s sq=%d sk=%d [%s]: %s\n", p.head_dim_qk,
                               p.head_dim_v, p.dtype == 1 ? "bf16" : "fp16",
                               mask_name(&p, mn, sizeof mn), p.seqlen_q,
                               p.seqlen_k, cs, plan ? r.msg : fa4_context_errmsg(ctx));
                    } else if (!r.pass) {
                        failures++;
                        printf("FAIL d%d/%d %s %s sq=%d sk=%d [%s]: rel err %.3e lse err %.2e %s\n",
                               p.head_dim_qk, p.head_dim_v, p.dtype == 1 ? "bf16" : "fp16",
                               mask_name(&p, mn, sizeof mn),
                               p.seqlen_q, p.seqlen_k, cs, r.rel_err, r.lse_err, r.msg);
                    } else if (r.rel_err > worst) {
                        worst = r.rel_err;
                    }
                    fa4_plan_destroy(plan);
                }
                gpu_case_free(&gc);
            }
        }
        printf("group d%d/%d %s %s: %d variants done, %d cases, %d failures so far\n",
               jobs[g].problem.head_dim_qk, jobs[g].problem.head_dim_v,
               jobs[g].problem.dtype == 1 ? "bf16" : "fp16",
               mask_name(&jobs[g].problem, mn, sizeof mn), gend - g,
               cases, failures);
        /* Release the group's plans (their kernels stay in the context's cache). */
        for (i = g; i < gend; i++) {
            fa4_plan_destroy(jobs[i].plan);
            jobs[i].plan = NULL;
        }
    }
    for (i = 0; i < 16; i++)
        pthread_join(th[i], NULL);
    printf("SWEEP %s: %d variants (%d failed to compile), %d cases, %d failures, worst passing rel err %.2e\n",
           config_family_name(fam), njobs, compile_fail, cases, failures, worst);
    fa4_context_destroy(ctx);
    return failures || compile_fail ? 1 : 0;
}
