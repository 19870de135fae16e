/*
** test_tune_gpu.c -- a tiny end-to-end tune on the GPU: a few candidates
** of a small problem are built, verified against the CPU reference, timed
** and stored; a later fa4_plan_create() then takes the stored winner from
** the user database (FA4_SOURCE_USER_EXACT).  The same for the serving
** layouts: a varlen prefill and a paged decode (verified on ragged
** sequences and shuffled pages, timed on full ones), and for softcapping
** with attention sinks (the tuner's sink logits in the reference and on
** the device), whose winners a plain problem does not take.  Also the CLI
** path with --json, for a shape, a paged preset's row and --softcap with
** --sinks.  fp8 (sm90 family): a coarse tune of a small problem whose
** stored winner a later plan takes and runs correctly through the public
** API (tests/gpu_check.h), the CLI's --dtype fp8, and `fa4-tune verify`
** re-timing the fp8 winners, in a database of their own.  Skips when
** there is no GPU.
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "tap.h"
#include "config.h"
#include "context.h"
/* The fp8 reference decodes every element: sample rows past 5e8
   multiply-adds (tests/gpu_check.h). */
#define GPU_CHECK_BUDGET 5.0e8
#include "gpu_check.h"
#include "tune_test_util.h"
#include "../tuner/args.h"
#include "../tuner/commands.h"
#include "../tuner/search.h"

static char dir[64], dbpath[128], fp8path[128];

/* Remove the test databases and their directory. */
static void cleanup(void)
{
    char path[192];
    static const char *ext[] = { "", "-wal", "-shm", "-journal" };
    size_t i;

    for (i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        snprintf(path, sizeof path, "%s%s", dbpath, ext[i]);
        unlink(path);
        snprintf(path, sizeof path, "%s%s", fp8path, ext[i]);
        unlink(path);
    }
    rmdir(dir);
}

/*
** Tune P (NAME in messages) on CTX with MAX_TRIALS candidates chosen by
** STRATEGY; a winner must be stored and a later plan for P must take it
** from the user database.  That plan goes to *OUT when OUT is not NULL
** (the caller destroys it).
*/
static void tune_one(fa4_context *ctx, const fa4_problem *p, const char *name,
                     unsigned seed, tune_strategy strategy, int max_trials,
                     fa4_plan **out)
{
    search_result r;
    search_opts o;
    fa4_plan *plan = NULL;
    fa4_config got = FA4_CONFIG_INIT;
    fa4_config_source src = 0;
    fa4_status st;
    char cfg[256];
    int i;

    st = search_space(&r, &ctx->limits, p, 0);
    if (!ok(st == FA4_OK && r.ntrials > 0,
            "%s: the device's space is not empty (%d)", name, r.ntrials)) {
        diag("  %s", r.error);
        search_result_free(&r);
        return;
    }
    snprintf(r.name, sizeof r.name, "%s", name);
    memset(&o, 0, sizeof o);
    o.jobs = 4;
    o.max_trials = max_trials;
    o.strategy = strategy;
    o.warmup = 2;
    o.reps = 10;
    o.groups = 3;
    o.retime = 2;
    o.confirm_rounds = 3;
    o.seed = seed;
    o.store = 1;
    st = search_tune(&r, ctx, &o, NULL);
    for (i = 0; i < r.ntrials; i++)
        if (r.trials[i].state == TRIAL_FAILED)
            diag("  candidate %d (%s): %s", i,
                 fa4_config_format(&r.trials[i].config, cfg, sizeof cfg),
                 r.trials[i].failure);
    if (!ok(st == FA4_OK && r.winner >= 0 && r.winner_stored &&
            r.wrong == 0 && r.timed >= 1,
            "%s: %d candidates matched the per-sequence reference (tolerance "
            "%g) and were timed; a winner is stored", name, r.timed,
            search_tolerance(p->dtype)))
        diag("  status %s: %s", fa4_status_string(st), r.error);
    if (r.winner >= 0)
        diag("%s winner: %s, %.4f ms", name,
             fa4_config_format(&r.trials[r.winner].config, cfg, sizeof cfg),
             r.winner_ms);
    st = fa4_plan_create(&plan, ctx, p, NULL);
    if (st == FA4_OK)
        fa4_plan_config(plan, &got, &src);
    else
        diag("  %s", fa4_context_errmsg(ctx));
    ok(st == FA4_OK && src == FA4_SOURCE_USER_EXACT && r.stored_index >= 0 &&
       config_equal(&got, &r.trials[r.stored_index].config),
       "%s: a later plan takes the stored config from the user database "
       "(source %d)", name, (int)src);
    if (out)
        *out = plan;
    else
        fa4_plan_destroy(plan);
    search_result_free(&r);
}

/*
** Run `fa4-tune` with ARGV (ARGC arguments, the last one the --seed value,
** filled in here from SEED) and --json: one ok line PARSE_WHAT for the
** argument parse; *DOC the parsed report (NULL if it is not JSON), *PROB
** its first problem.  Returns cmd_tune's exit status.
*/
static int tune_json(char **argv, int argc, unsigned seed, const char *parse_what,
                     json_t **doc, json_t **prob)
{
    char seedtxt[32], err[1024];
    FILE *out = tmpfile(), *errf = tmpfile();
    json_error_t je;
    tune_args a;
    int rc;

    snprintf(seedtxt, sizeof seedtxt, "%u", seed);
    argv[argc - 1] = seedtxt;
    ok(tune_args_parse(&a, argc, argv, err, sizeof err) == 0, "%s", parse_what);
    rc = cmd_tune(&a, out, errf);
    rewind(out);
    *doc = json_loadf(out, 0, &je);
    if (!*doc)
        diag("  report: %s", je.text);
    *prob = json_array_get(json_object_get(*doc, "problems"), 0);
    fclose(out);
    fclose(errf);
    return rc;
}

/*
** The run's time per worker (one here): its phases account for most of
** its wall time, never more, and every NVRTC compile of the run was one of the build threads'
** (none on the thread that times).
*/
static void check_workers(json_t *doc)
{
    json_t *w = json_array_get(json_object_get(doc, "workers"), 0);
    json_t *ph = json_object_get(w, "phases"), *b = json_object_get(w, "builds");
    static const char *const names[] = { "prepare", "waiting", "loading",
                                         "timing", "database" };
    double sum = 0, secs = json_real_value(json_object_get(w, "seconds"));
    size_t i;

    if (!ok(json_array_size(json_object_get(doc, "workers")) == 1 && ph && b &&
            json_integer_value(json_object_get(w, "problems")) == 1,
            "--json has one worker's breakdown, for its one problem")) {
        return;
    }
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        sum += json_real_value(json_object_get(ph, names[i]));
    ok(secs > 0 && sum > 0.7 * secs && sum <= 1.01 * secs + 0.001,
       "its phases account for its wall time (%.3f of %.3f s)", sum, secs);
    is_int(json_integer_value(json_object_get(doc, "compiles")),
           json_integer_value(json_object_get(b, "compiles")),
           "every NVRTC compile of the run was a build thread's");
}

/* The ok lines of tune_fp8(), skipped together off the sm90 family. */
#define FP8_TESTS 7

/*
** fp8 e4m3 (sm90 family): a coarse tune of b1 s1000, 8 heads, d128 (four
** candidates) into the database at FP8PATH; the later plan takes the
** stored config and its output on fresh inputs with descale factors is
** within the fp8 tolerance; the CLI tunes --dtype fp8 into the same
** database, and `fa4-tune verify` re-times the winners there.
*/
static void tune_fp8(unsigned seed)
{
    fa4_context_options co = FA4_CONTEXT_OPTIONS_INIT;
    fa4_context *ctx = NULL;
    fa4_problem p = FA4_PROBLEM_INIT;
    fa4_plan *plan = NULL;
    gpu_check_result chk;
    uint64_t s64 = (uint64_t)seed * 0x9E3779B97F4A7C15ULL + 3;
    int i;

    co.db_path = fp8path;
    co.system_db_path = "/nonexistent/fa4-system.db";
    if (fa4_context_create(&ctx, 0, &co) != FA4_OK) {
        diag("  %s", fa4_context_last_error());
        for (i = 0; i < FP8_TESTS; i++)
            skip("no context for the fp8 database");
        return;
    }
    if (strcmp(ctx->limits.arch, "sm_90a") != 0) {
        for (i = 0; i < FP8_TESTS; i++)
            skip("fp8 runs on the sm90 family (sm_90a); this GPU is %s", ctx->limits.arch);
        fa4_context_destroy(ctx);
        return;
    }
    p.dtype = FA4_DTYPE_FP8_E4M3;
    p.batch = 1; p.seqlen_q = p.seqlen_k = 1000;
    p.heads_q = p.heads_kv = 8; p.head_dim_qk = 128;
    tune_one(ctx, &p, "fp8 d128", seed, TUNE_STRATEGY_COARSE, 4, &plan);
    memset(&chk, 0, sizeof chk);
    if (plan && gpu_check(&chk, ctx, plan, &p, &s64) == 0) {
        if (!ok(chk.pass, "fp8: the stored config's plan is correct through "
                "fa4_forward with descale factors (rel err %.2e, lse err %.1e)",
                chk.rel_err, chk.lse_err))
            diag("  %s", chk.msg);
    } else {
        ok(0, "fp8: the stored config's plan runs (%s)", plan ? chk.msg : "no plan");
    }
    fa4_plan_destroy(plan);
    fa4_context_destroy(ctx);

    /* the command line: --dtype fp8, causal, a second winner */
    {
        char *argv[] = { "fa4-tune", "tune", "--batch", "1", "--seqlen-q", "1000",
                         "--heads-q", "8", "--head-dim", "128", "--dtype", "fp8",
                         "--causal", "--max-trials", "2", "--strategy", "coarse", "-j",
                         "4", "--db", fp8path, "--json", "--quiet", "--seed", NULL,
                         NULL };
        json_t *doc, *prob;
        int rc = tune_json(argv, 25, seed, "fp8 tune arguments parse", &doc, &prob);
        const char *dt = json_string_value(json_object_get(json_object_get(prob, "problem"),
                                                           "dtype"));

        if (!ok(rc == 0 && dt && !strcmp(dt, "fp8") &&
                json_is_true(json_object_get(prob, "stored")),
                "fa4-tune tune --dtype fp8 stores a winner"))
            diag("  exit %d, json %s", rc, doc ? "parsed" : "unparsed");
        json_decref(doc);
    }
    /* fa4-tune verify re-times the fp8 winners */
    {
        static char out[1 << 16], err[4096];
        json_error_t je;
        json_t *doc, *ws;
        size_t k, n = 0, timed = 0;

        tune_run(out, sizeof out, err, sizeof err, "verify", "--db", fp8path, "--json",
                 "--quiet", NULL);
        doc = json_loads(out, 0, &je);
        ws = json_object_get(doc, "winners");
        for (k = 0; k < json_array_size(ws); k++) {
            json_t *w = json_array_get(ws, k);
            const char *v = json_string_value(json_object_get(w, "verdict"));
            const char *pr = json_string_value(json_object_get(w, "problem"));
            n += pr && !strncmp(pr, "fp8 ", 4);
            /* holds, lost, noisy: timed; default: nothing to time against */
            timed += v && (!strcmp(v, "holds") || !strcmp(v, "lost") ||
                           !strcmp(v, "noisy") || !strcmp(v, "default"));
            if (v && strcmp(v, "holds") && strcmp(v, "lost") && strcmp(v, "noisy") &&
                strcmp(v, "default"))
                diag("  %s: %s (%s)", pr ? pr : "?", v,
                     json_string_value(json_object_get(w, "note"))
                     ? json_string_value(json_object_get(w, "note")) : "");
        }
        if (!ok(n >= 1 && n == json_array_size(ws) && timed == n,
                "fa4-tune verify re-times the %zu fp8 winners (%zu judged)", n, timed))
            diag("  %s", doc ? "" : err);
        json_decref(doc);
    }
}

int main(void)
{
    fa4_context_options co = FA4_CONTEXT_OPTIONS_INIT;
    fa4_context *ctx = NULL;
    fa4_problem p = FA4_PROBLEM_INIT;
    fa4_plan *plan = NULL;
    fa4_config got;
    fa4_config_source src = 0;
    search_result r;
    search_opts o;
    fa4_status st;
    unsigned seed;
    char cfg[256];
    int i, ok_trials;

    strcpy(dir, "/tmp/fa4-tune-gpu-XXXXXX");
    if (!mkdtemp(dir))
        skip_all("cannot make a temporary directory");
    snprintf(dbpath, sizeof dbpath, "%s/tune.db", dir);
    snprintf(fp8path, sizeof fp8path, "%s/fp8.db", dir);
    co.db_path = dbpath;
    co.system_db_path = "/nonexistent/fa4-system.db";
    st = fa4_context_create(&ctx, 0, &co);
    if (st == FA4_ENODEV) {
        rmdir(dir);
        skip_all("no CUDA device (%s)", fa4_context_last_error());
    }
    plan_lazy();
    if (!ok(st == FA4_OK, "context on device 0 with a fresh database")) {
        diag("  %s", fa4_context_last_error());
        cleanup();
        return done_testing();
    }
    seed = tap_seed();
    diag("device: %s (%s), database %s", ctx->limits.name, ctx->limits.arch,
         dbpath);

    p.batch = 2; p.seqlen_q = p.seqlen_k = 512;
    p.heads_q = 4; p.heads_kv = 2; p.head_dim_qk = 64; p.causal = 1;
    ok(search_space(&r, &ctx->limits, &p, 0) == FA4_OK && r.ntrials > 0,
       "the device's space for bf16 d64 causal GQA is not empty (%d)",
       r.ntrials);
    snprintf(r.name, sizeof r.name, "tiny");
    memset(&o, 0, sizeof o);
    o.jobs = 4;
    o.max_trials = 3;
    o.strategy = TUNE_STRATEGY_EXHAUSTIVE;
    o.warmup = 2;
    o.reps = 10;
    o.groups = 3;
    o.retime = 2;
    o.confirm_rounds = 3;
    o.seed = seed;
    o.store = 1;
    st = search_tune(&r, ctx, &o, NULL);
    if (!ok(st == FA4_OK && r.winner >= 0 && r.winner_stored,
            "a three-candidate tune finds and stores a winner"))
        diag("  status %s: %s", fa4_status_string(st), r.error);
    for (i = 0, ok_trials = 0; i < r.ntrials; i++) {
        if (r.trials[i].state == TRIAL_TIMED)
            ok_trials++;
        if (r.trials[i].state == TRIAL_FAILED)
            diag("  candidate %d (%s): %s", i,
                 fa4_config_format(&r.trials[i].config, cfg, sizeof cfg),
                 r.trials[i].failure);
    }
    ok(ok_trials >= 1 && r.timed == ok_trials,
       "%d candidates passed verification (tolerance %g) and were timed",
       ok_trials, search_tolerance(p.dtype));
    if (r.winner >= 0) {
        const search_trial *w = &r.trials[r.winner];
        ok(w->timing.groups == 3 && w->timing.reps >= 10 &&
           w->timing.min_ms > 0 &&
           w->timing.min_ms <= w->timing.median_ms &&
           w->timing.median_ms <= w->timing.max_ms,
           "the winner's timing: 3 groups of %d launches, min <= median <= "
           "max (%.4f ms)", w->timing.reps, w->timing.median_ms);
        ok(w->rel_err <= search_tolerance(p.dtype),
           "the winner matched the reference (relative error %.2e)",
           w->rel_err);
        diag("winner: %s", fa4_config_format(&w->config, cfg, sizeof cfg));
        ok((r.confirm == CONFIRM_HELD && r.stored_index == r.winner &&
            r.confirm_wins == r.confirm_rounds && r.confirm_gain >= TIMING_MIN_GAIN) ||
           (r.confirm == CONFIRM_REJECTED && r.rival_index >= 0 &&
            r.stored_index == r.rival_index) ||
           ((r.confirm == CONFIRM_DEFAULT_WON || r.confirm == CONFIRM_IN_USE_WON) &&
            r.stored_index == r.winner) ||
           r.confirm == CONFIRM_NO_DEFAULT,
           "the confirmation decides what is stored (state %d, gain %+.1f%%, "
           "won %d of %d rounds)", (int)r.confirm, 100 * r.confirm_gain,
           r.confirm_wins, r.confirm_rounds);
    } else {
        skip("no winner");
        skip("no winner");
        skip("no winner");
    }

    /* a later plan takes the stored winner */
    st = fa4_plan_create(&plan, ctx, &p, NULL);
    if (ok(st == FA4_OK, "fa4_plan_create after the tune")) {
        fa4_plan_config(plan, &got, &src);
        is_int(src, FA4_SOURCE_USER_EXACT,
               "its config comes from the user database (exact)");
        ok(r.stored_index >= 0 &&
           config_equal(&got, &r.trials[r.stored_index].config),
           "and it is the stored config (%s)", r.stored_index == r.winner
           ? "the winner" : "the default: the winner's gain did not hold");
    } else {
        diag("  %s", fa4_context_errmsg(ctx));
        skip("no plan");
        skip("no plan");
    }
    fa4_plan_destroy(plan);
    search_result_free(&r);

    /* serving layouts */
    {
        fa4_problem vp = FA4_PROBLEM_INIT, pp = FA4_PROBLEM_INIT;

        vp.batch = 6; vp.seqlen_q = vp.seqlen_k = 512; vp.varlen = 1;
        vp.heads_q = 8; vp.heads_kv = 2; vp.head_dim_qk = 128; vp.causal = 1;
        tune_one(ctx, &vp, "varlen prefill", seed, TUNE_STRATEGY_EXHAUSTIVE, 3, NULL);
        pp.batch = 8; pp.seqlen_q = 1; pp.seqlen_k = 2048; pp.page_size = 16;
        pp.heads_q = 16; pp.heads_kv = 2; pp.head_dim_qk = 128; pp.causal = 1;
        tune_one(ctx, &pp, "paged decode", seed, TUNE_STRATEGY_EXHAUSTIVE, 3, NULL);
    }
    /* softcap and sinks: other variants, other keys */
    {
        fa4_problem sp = FA4_PROBLEM_INIT, dp = FA4_PROBLEM_INIT, plain;

        sp.batch = 2; sp.seqlen_q = sp.seqlen_k = 700;
        sp.heads_q = 8; sp.heads_kv = 2; sp.head_dim_qk = 128; sp.causal = 1;
        sp.softcap = 30; sp.attention_sinks = 1;
        tune_one(ctx, &sp, "softcap with sinks", seed, TUNE_STRATEGY_EXHAUSTIVE, 3,
                 NULL);
        plain = sp;
        plain.softcap = 0;
        plain.attention_sinks = 0;
        st = fa4_plan_create(&plan, ctx, &plain, NULL);
        if (st == FA4_OK)
            fa4_plan_config(plan, &got, &src);
        ok(st == FA4_OK && src == FA4_SOURCE_HEURISTIC,
           "the plain problem of that shape does not take its winner (source "
           "%d)", (int)src);
        fa4_plan_destroy(plan);
        plan = NULL;
        dp.batch = 8; dp.seqlen_q = 1; dp.seqlen_k = 2048; dp.page_size = 16;
        dp.heads_q = 16; dp.heads_kv = 2; dp.head_dim_qk = 128; dp.causal = 1;
        dp.attention_sinks = 1;
        tune_one(ctx, &dp, "paged decode with sinks", seed, TUNE_STRATEGY_EXHAUSTIVE, 3,
                 NULL);
    }
    fa4_context_destroy(ctx);

    /* the command line, with JSON output */
    {
        char *argv[] = { "fa4-tune", "tune", "--batch", "1", "--seqlen-q",
                         "256", "--heads-q", "2", "--head-dim", "128",
                         "--max-trials", "2", "--strategy", "coarse", "-j",
                         "4", "--db", dbpath, "--json", "--quiet", "--seed",
                         NULL, NULL };
        json_t *doc, *prob;
        int rc = tune_json(argv, 22, seed, "tune arguments parse", &doc, &prob);

        if (!ok(rc == 0 && prob && json_is_object(json_object_get(prob, "winner")) &&
                json_is_true(json_object_get(prob, "stored")),
                "fa4-tune tune --json reports a stored winner"))
            diag("  exit %d, json %s", rc, doc ? "parsed" : "unparsed");
        ok(prob && json_real_value(json_object_get(json_object_get(prob,
           "winner"), "tflops")) > 0, "with its TFLOP/s");
        check_workers(doc);
        json_decref(doc);
    }
    /* a paged preset's row through the command line */
    {
        char *argv[] = { "fa4-tune", "tune", "--preset", "decode-llama3-8b-paged",
                         "--shard", "0/42", "--max-trials", "2", "-j", "4",
                         "--db", dbpath, "--json", "--quiet", "--seed", NULL,
                         NULL };
        json_t *doc, *prob;
        int rc = tune_json(argv, 16, seed, "paged preset arguments parse", &doc, &prob);

        if (!ok(rc == 0 && prob &&
                json_integer_value(json_object_get(json_object_get(prob, "problem"),
                                                   "page_size")) == 16 &&
                json_is_true(json_object_get(prob, "stored")),
                "fa4-tune tune --preset decode-llama3-8b-paged --shard 0/42 "
                "stores a winner for a paged row"))
            diag("  exit %d, json %s", rc, doc ? "parsed" : "unparsed");
        json_decref(doc);
    }
    /* --softcap and --sinks through the command line */
    {
        char *argv[] = { "fa4-tune", "tune", "--batch", "1", "--seqlen-q",
                         "256", "--heads-q", "4", "--heads-kv", "1",
                         "--head-dim", "64", "--softcap", "50", "--sinks",
                         "--max-trials", "2", "-j", "4", "--db", dbpath,
                         "--json", "--quiet", "--seed", NULL, NULL };
        json_t *doc, *prob, *pj;
        int rc = tune_json(argv, 25, seed, "softcap and sinks arguments parse",
                           &doc, &prob);

        pj = json_object_get(prob, "problem");
        if (!ok(rc == 0 && prob &&
                json_number_value(json_object_get(pj, "softcap")) == 50.0 &&
                json_is_true(json_object_get(pj, "attention_sinks")) &&
                json_is_true(json_object_get(prob, "stored")),
                "fa4-tune tune --softcap 50 --sinks stores a winner"))
            diag("  exit %d, json %s", rc, doc ? "parsed" : "unparsed");
        json_decref(doc);
    }
    tune_fp8(seed);
    cleanup();
    return done_testing();
}
