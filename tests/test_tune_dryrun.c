/*
** test_tune_dryrun.c -- fa4-tune without a GPU: the config space and its
** budgets for sm_90a, the coarse strategy's subsets, the verification
** shape, and NVRTC compiles of a couple of candidates with their
** registers and spills; fp8 problems as a dtype like the others (their
** space, out dtype and verification problem).
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "tap.h"
#include "budget.h"
#include "config.h"
#include "device.h"
#include "jit.h"
#include "tune_test_util.h"
#include "../tuner/problems.h"
#include "../tuner/search.h"

/* Run fa4-tune with the words in __VA_ARGS__; stdout into OUT, the
** exit status and any error as a diagnostic. */
#define run(out, size, ...) run_diag(tune_run(out, size, err, sizeof err, __VA_ARGS__), err)

static char err[4096];

static int run_diag(int rc, const char *text)
{
    if (rc != 0)
        diag("  exit %d: %s", rc, text);
    return rc;
}


/* The number of R's trials of FAMILY. */
static int count_family(const search_result *r, fa4_family family)
{
    int i, n = 0;

    for (i = 0; i < r->ntrials; i++)
        n += r->trials[i].config.family == family;
    return n;
}

/*
** The serving presets on sm_90a: varlen prefill is the sm90 family's
** (head_dim_v <= 192), paged decode the sm80 family's, varlen Q with paged
** K/V the sm90 family's plain grid first; the verification problem of a
** paged cache gets its own table width.
*/
static void check_serving(const device_limits *dev)
{
    problem_list pl = { NULL, 0, 0 };
    tune_args a;
    char why[512], *argv[] = { "fa4-tune", "tune", "--preset", NULL, NULL };
    int i, good;
    search_result r;
    fa4_problem p = FA4_PROBLEM_INIT, v;

    argv[3] = "prefill-varlen-llama3-8b";
    good = tune_args_parse(&a, 4, argv, why, sizeof why) == 0 &&
           problems_build(&pl, &a, why, sizeof why) == 0 && pl.count == 4;
    for (i = 0; good && i < pl.count; i++) {
        good = search_space(&r, dev, &pl.items[i].problem, 0) == FA4_OK &&
               r.default_index == 0 &&
               r.trials[0].config.family == FA4_FAMILY_SM90 &&
               r.problem.varlen;
        if (!good)
            diag("  %s: %s", pl.items[i].name, r.error);
        search_result_free(&r);
    }
    ok(good, "prefill-varlen-llama3-8b on sm_90a: every problem's default is "
       "the sm90 family");
    problem_list_free(&pl);

    argv[3] = "decode-llama3-70b-tp8-paged";
    good = tune_args_parse(&a, 4, argv, why, sizeof why) == 0 &&
           problems_build(&pl, &a, why, sizeof why) == 0 && pl.count == 42;
    for (i = 0; good && i < pl.count; i += 7) {
        good = search_space(&r, dev, &pl.items[i].problem, 0) == FA4_OK &&
               r.trials[0].is_default && r.trials[0].config.family == FA4_FAMILY_SM80 &&
               r.problem.page_size == 16;
        if (!good)
            diag("  %s: %s (%s)", pl.items[i].name, r.error, r.family_notes);
        search_result_free(&r);
    }
    ok(good, "decode-llama3-70b-tp8-paged on sm_90a: the default (measured first) is "
       "the sm80 family's, as fa4_plan_create's");
    problem_list_free(&pl);

    p.batch = 16; p.seqlen_q = 1; p.seqlen_k = 8192;
    p.heads_q = 32; p.heads_kv = 8; p.head_dim_qk = 128; p.causal = 1;
    p.page_size = 16;
    good = search_space(&r, dev, &p, 0) == FA4_OK &&
           r.trials[0].config.family == FA4_FAMILY_SM80;
    ok(good, "paged decode: %d candidates, the sm80 default first", r.ntrials);
    {
        int splits = 0, packed = 0;
        for (i = 0; i < r.ntrials; i++) {
            splits |= r.trials[i].config.splits > 1;
            packed |= r.trials[i].config.pack_gqa;
        }
        ok(splits && packed, "they cover explicit KV splits and GQA packing");
    }
    v = search_verify_problem(&r.problem, 132);
    ok(v.page_size == 16 && v.seqlen_k == 1100 &&
       v.block_table_stride == (1100 + 15) / 16 && v.num_pages == 0 &&
       fa4_problem_check(&v, NULL, 0) == FA4_OK,
       "its verification problem keeps page_size 16 with a table for 1100 "
       "keys (%d entries)", v.block_table_stride);
    search_result_free(&r);
    p.varlen = 1; p.seqlen_q = 700; p.seqlen_k = 2000;
    good = search_space(&r, dev, &p, 0) == FA4_OK &&
           r.trials[0].config.family == FA4_FAMILY_SM90 &&
           r.trials[0].config.scheduler == FA4_SCHED_PLAIN &&
           count_family(&r, FA4_FAMILY_SM80) > 0 && r.problem.varlen &&
           r.problem.page_size == 16;
    ok(good, "varlen Q with paged K/V is a space of its own (the sm90 plain grid first, "
       "%d sm90 and %d sm80 candidates)", count_family(&r, FA4_FAMILY_SM90),
       count_family(&r, FA4_FAMILY_SM80));
    search_result_free(&r);
}

/*
** fp8 on sm_90a: the sm90 family's candidates with its default first, the
** sm80 family's after them (it runs fp8 too), O in bf16 unless the problem
** asks fp16, and a verification problem that keeps both dtypes.
*/
static void check_fp8(const device_limits *dev)
{
    fa4_problem p = FA4_PROBLEM_INIT, v;
    search_result r;
    int i, good;

    p.dtype = FA4_DTYPE_FP8_E4M3;
    p.batch = 1; p.seqlen_q = p.seqlen_k = 1000;
    p.heads_q = p.heads_kv = 8; p.head_dim_qk = 128;
    good = search_space(&r, dev, &p, 0) == FA4_OK && r.ntrials > 1 &&
           r.default_index == 0 && r.trials[0].config.family == FA4_FAMILY_SM90 &&
           count_family(&r, FA4_FAMILY_SM90) > 1 && count_family(&r, FA4_FAMILY_SM80) > 0;
    if (!ok(good, "fp8 d128: %d sm90 and %d sm80 candidates, the sm90 default first",
            count_family(&r, FA4_FAMILY_SM90), count_family(&r, FA4_FAMILY_SM80)))
        diag("  %s %s", r.error, r.family_notes);
    ok(r.problem.dtype == FA4_DTYPE_FP8_E4M3 &&
       r.problem.out_dtype == FA4_DTYPE_BF16,
       "the resolved problem writes O in bf16");
    for (i = 0, good = 1; i < r.ntrials; i++)
        good &= r.trials[i].layout.smem_bytes > 0 &&
                r.trials[i].layout.smem_bytes <= dev->smem_per_block_optin;
    ok(good, "every fp8 candidate has a budget that fits");
    v = search_verify_problem(&r.problem, 132);
    ok(v.dtype == FA4_DTYPE_FP8_E4M3 && v.out_dtype == FA4_DTYPE_BF16 &&
       v.seqlen_q == 1000 && !v.varlen && !v.page_size &&
       fa4_problem_check(&v, NULL, 0) == FA4_OK,
       "its verification problem keeps fp8 in and bf16 out, and is valid");
    search_result_free(&r);
    p.out_dtype = FA4_DTYPE_FP16;
    p.causal = 1;
    good = search_space(&r, dev, &p, 0) == FA4_OK && r.ntrials > 0 &&
           r.problem.out_dtype == FA4_DTYPE_FP16;
    v = search_verify_problem(&r.problem, 132);
    ok(good && v.out_dtype == FA4_DTYPE_FP16 &&
       fa4_problem_check(&v, NULL, 0) == FA4_OK,
       "fp16 out is kept through the space and the verification problem");
    search_result_free(&r);
}

/* Fields in which A and B differ (the tile's rows and warpgroups as one). */
static int fields_apart(const fa4_config *a, const fa4_config *b)
{
    fa4_config x = *a;
    int n = 0;
#define SAME(f) do { if (x.f != b->f) { n++; x.f = b->f; } } while (0)
    if (x.bm != b->bm || x.consumer_wgs != b->consumer_wgs) {
        n++;
        x.bm = b->bm; x.consumer_wgs = b->consumer_wgs;
        x.producer_regs = b->producer_regs; x.consumer_regs = b->consumer_regs;
    }
    SAME(bn); SAME(stages); SAME(swizzle); SAME(fused_kv); SAME(pingpong); SAME(scheduler);
    SAME(splits); SAME(exp2_emu_pct); SAME(late_k_release); SAME(warps);
    SAME(kv_split_warps); SAME(pack_gqa);
#undef SAME
    return config_equal(&x, b) ? n : 99;   /* 99: another family */
}

/* A round cut short measures the default's neighbours first: the d64
   space lists its two-warpgroup tiles first, the default has three. */
static void check_order(const device_limits *dev)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    search_result r;
    int i, sorted = 1, twin = -1;

    p.batch = 1; p.seqlen_q = p.seqlen_k = 16384; p.heads_q = p.heads_kv = 32;
    p.head_dim_qk = p.head_dim_v = 64;
    if (!ok(search_space(&r, dev, &p, FA4_FAMILY_SM90) == FA4_OK && r.ntrials > 10 &&
            r.trials[0].is_default && r.trials[0].config.consumer_wgs == 3,
            "d64 16k: the default (three warpgroups) leads the sm90 space"))
        return;
    for (i = 2; i < r.ntrials; i++)
        if (fields_apart(&r.trials[i].config, &r.trials[0].config) <
            fields_apart(&r.trials[i - 1].config, &r.trials[0].config))
            sorted = 0;
    for (i = 1; i < r.ntrials && twin < 0; i++)
        if (fields_apart(&r.trials[i].config, &r.trials[0].config) == 1 &&
            r.trials[i].config.late_k_release != r.trials[0].config.late_k_release)
            twin = i;
    ok(sorted && fields_apart(&r.trials[1].config, &r.trials[0].config) == 1,
       "candidates follow the default by how many fields differ (%d trials)", r.ntrials);
    ok(twin > 0 && twin < 16, "the default's late_k twin is among the first 16 (at %d)", twin);
    search_select_first(&r, TUNE_STRATEGY_EXHAUSTIVE, 8);
    for (i = 0; i < 8; i++)
        if (!r.trials[i].selected || fields_apart(&r.trials[i].config, &r.trials[0].config) > 1)
            break;
    ok(i == 8, "--max-trials 8 keeps the default and seven of its one-field neighbours");
    search_result_free(&r);
}

int main(void)
{
    device_limits dev;
    fa4_problem p = FA4_PROBLEM_INIT;
    search_result r;
    search_opts o;
    char why[512];
    static char out[1 << 20];
    int i, n, ncoarse, nall, good, sum;

    plan_lazy();
    if (device_limits_for_arch(&dev, "sm_90a", why, sizeof why) != FA4_OK)
        skip_all("no table limits for sm_90a: %s", why);

    p.batch = 4; p.seqlen_q = p.seqlen_k = 4096;
    p.heads_q = 32; p.heads_kv = 8; p.head_dim_qk = 128; p.causal = 1;
    ok(search_space(&r, &dev, &p, 0) == FA4_OK && r.ntrials > 0,
       "the sm_90a space of a d128 causal GQA problem is not empty");
    if (r.ntrials == 0)
        diag("  %s", r.error);
    ok(r.fit == r.ntrials || r.fit + 1 == r.ntrials,
       "every fitting config is a candidate (%d of %d considered)", r.fit,
       r.considered);
    for (i = 0, sum = 0; i < r.ndrops; i++)
        sum += r.drops[i].count;
    is_int(sum, r.considered - r.fit, "the drop counts add up to what the "
           "budget filter removed");
    ok(r.default_index == 0 && r.trials[0].is_default,
       "the heuristic default is the first candidate");
    for (i = 0, good = 1; i < r.ntrials; i++) {
        fa4_layout lay;
        if (r.trials[i].layout.smem_bytes > dev.smem_per_block_optin ||
            budget_fit(&lay, &dev, &r.problem, &r.trials[i].config, why,
                       sizeof why) != FA4_OK)
            good = 0;
    }
    ok(good, "every candidate fits the budget (smem <= %d B)",
       dev.smem_per_block_optin);
    ok(r.flops == 2.0 * 4 * 32 * 4096.0 * 4096 * 256 / 2,
       "the problem's flops follow the causal convention");

    nall = search_select_first(&r, TUNE_STRATEGY_EXHAUSTIVE, 0);
    is_int(nall, r.ntrials, "exhaustive selects every candidate");
    ncoarse = search_select_first(&r, TUNE_STRATEGY_COARSE, 0);
    ok(ncoarse >= 1 && ncoarse <= nall && r.trials[0].selected,
       "coarse selects a subset (%d of %d) that keeps the default", ncoarse,
       nall);
    {
        int stages = 0;
        for (i = 0, good = 1; i < r.ntrials; i++)
            if (r.trials[i].selected && !r.trials[i].is_default &&
                r.trials[i].config.family == FA4_FAMILY_SM90) {
                if (stages && r.trials[i].config.stages != stages)
                    good = 0;
                stages = r.trials[i].config.stages;
            }
        ok(good && (stages == 2 || stages == 0 || ncoarse < nall),
           "the coarse sm90 round uses one stage count (%d)", stages);
    }
    n = search_select_first(&r, TUNE_STRATEGY_EXHAUSTIVE, 3);
    ok(n == 3 && r.trials[0].selected && r.cut,
       "--max-trials caps the selection and marks the search cut");
    {   /* the config in use: raced in the first round whatever the strategy */
        fa4_config in_use = r.trials[0].config, other;
        int at, before = r.ntrials, j = -1;
        for (i = 1; i < r.ntrials && j < 0; i++)
            if (r.trials[i].config.family == FA4_FAMILY_SM90 && r.trials[i].config.stages == 3)
                j = i;
        in_use = r.trials[j > 0 ? j : 1].config;
        at = search_add_incumbent(&r, &in_use, &dev);
        search_select_first(&r, TUNE_STRATEGY_COARSE, 2);
        ok(at == 1 && r.ntrials == before && r.trials[1].is_incumbent &&
           config_equal(&r.trials[1].config, &in_use) && r.trials[0].is_default &&
           r.trials[0].selected && r.trials[1].selected,
           "a config of the space in use moves next to the default; coarse at 2 trials "
           "keeps both (stages %d)", in_use.stages);
        r.trials[1].is_incumbent = 0;
        other = in_use;
        other.exp2_emu_pct = 50;    /* outside the space: another version's tile */
        at = search_add_incumbent(&r, &other, &dev);
        ok(at == 1 && r.ntrials == before + 1 && config_equal(&r.trials[1].config, &other) &&
           r.trials[1].is_incumbent && !r.trials[2].is_incumbent,
           "a config in use outside the space is added next to the default");
        /* what a winner must beat: the config in use, else the default */
        r.trials[0].state = r.trials[1].state = r.trials[3].state = TRIAL_TIMED;
        ok(search_rival(&r, 3) == 1 && search_rival(&r, 1) == -1 && search_rival(&r, 0) == 1,
           "a winner is confirmed against the config in use, the default when it wins "
           "too; the config in use needs none when it wins (it stays)");
        r.trials[1].state = TRIAL_SKIPPED;
        ok(search_rival(&r, 3) == 0 && search_rival(&r, 0) == -1,
           "the config in use unmeasured: against the default, and the default needs none");
        r.trials[1].is_incumbent = 0;
        r.trials[1].state = TRIAL_TIMED;
        ok(search_rival(&r, 3) == 0 && search_rival(&r, 0) == -1,
           "no config in use: the default as before");
        r.trials[0].state = r.trials[1].state = r.trials[3].state = TRIAL_SKIPPED;
        other.family = FA4_FAMILY_SM100;
        ok(search_add_incumbent(&r, &other, &dev) == -1 && r.ntrials == before + 1,
           "a config of a family the search leaves out is not added");
    }
    /* refine around the default: bn neighbours and stages only */
    for (i = 0; i < r.ntrials; i++)
        r.trials[i].done = i == 0;
    n = search_select_refine(&r, 0, 0);
    for (i = 0, good = 1; i < r.ntrials; i++)
        if (r.trials[i].selected) {
            fa4_config c = r.trials[i].config;
            c.bn = r.trials[0].config.bn;
            c.stages = r.trials[0].config.stages;
            if (!config_equal(&c, &r.trials[0].config) || i == 0)
                good = 0;
        }
    ok(good, "refinement varies only bn and stages around the best (%d)", n);

    {
        fa4_problem v = search_verify_problem(&r.problem, 132);
        long tiles = (long)v.batch * v.heads_q * ((v.seqlen_q + 255) / 256);
        ok(v.heads_kv == 2 && v.heads_q == 8 && v.seqlen_q == 1000 &&
           v.seqlen_k == 1000 && v.causal && v.head_dim_qk == 128 &&
           v.return_lse == 0 && fa4_problem_check(&v, NULL, 0) == FA4_OK,
           "the verification problem keeps the shape class at 1000 rows "
           "(ragged against every tile)");
        ok(tiles >= 4 * 132 && tiles < 4 * 132 + 4 * v.heads_q,
           "its batch (%d) gives %ld tiles of 256 rows: at least 4 per SM of "
           "132, so persistent CTAs walk several", v.batch, tiles);
        p.seqlen_q = 1;
        v = search_verify_problem(&p, 132);
        ok(v.seqlen_q == 1 && v.seqlen_k == 1100 &&
           (long)v.batch * v.heads_q >= 4 * 132,
           "decode verifies one query over 1100 keys in %d x %d rows", v.batch,
           v.heads_q);
        p.seqlen_q = 4096;
        p.heads_q = 64; p.heads_kv = 1; p.return_lse = 1;
        p.window_left = 4096;
        v = search_verify_problem(&p, 132);
        ok(v.heads_kv == 1 && v.heads_q == 64 && v.return_lse &&
           v.window_left == 1000 / 3 &&
           (long)v.batch * 64 * 4 >= 4 * 132,
           "MQA keeps its 64 query heads and LSE; a wide window shrinks to "
           "a third of the keys");
        p.heads_q = 32; p.heads_kv = 8; p.return_lse = 0; p.window_left = -1;
    }

    check_serving(&dev);
    check_fp8(&dev);

    /* two candidates through NVRTC */
    if (jit_nvrtc_version() == 0) {
        skip("NVRTC not available: no compile");
        skip("NVRTC not available: no compile");
    } else {
        memset(&o, 0, sizeof o);
        o.jobs = 2;
        search_select_first(&r, TUNE_STRATEGY_EXHAUSTIVE, 2);
        ok(search_compile_only(&r, &dev, &o, NULL) == FA4_OK &&
           r.compiled + r.spilled + r.compile_failed == 2,
           "two candidates compiled for sm_90a in two threads");
        for (i = 0, good = 0; i < r.ntrials; i++)
            if (r.trials[i].state == TRIAL_COMPILED && r.trials[i].regs > 0 &&
                r.trials[i].spill_bytes == 0)
                good++;
            else if (r.trials[i].state == TRIAL_FAILED)
                diag("  candidate %d: %s", i, r.trials[i].failure);
        ok(good >= 1, "compiled candidates report registers and no spills "
           "(%d of 2)", good);
    }
    search_result_free(&r);
    check_order(&dev);

    /* the CLI */
    ok(run(out, sizeof out, "space", "--arch", "sm_90a", "--head-dim", "128",
           "--causal", NULL) == 0 && strstr(out, "smem B") &&
       strstr(out, "(default)") && strstr(out, "sm90"),
       "fa4-tune space prints the table with smem and the default");
    ok(run(out, sizeof out, "space", "--arch", "sm_90a", "--head-dim", "128",
           "--dtype", "fp8", NULL) == 0 && strstr(out, "== space: fp8 ") &&
       strstr(out, "(default)") && strstr(out, "sm90 bm=") && strstr(out, "sm80 bm="),
       "fa4-tune space --dtype fp8 lists sm90 and sm80 configs");
    ok(run(out, sizeof out, "space", "--arch", "sm_90a", "--head-dim", "128",
           "--dtype", "fp8", "--varlen", "--causal", NULL) == 0 &&
       strstr(out, "causal varlen") && strstr(out, "(default)") &&
       strstr(out, "sched=dynamic"),
       "fa4-tune space --dtype fp8 --varlen lists sm90 configs, the default dynamic");
    ok(run(out, sizeof out, "space", "--arch", "sm_90a", "--head-dim", "128",
           "--dtype", "fp8", "--page-size", "16", NULL) == 0 && strstr(out, "page=16") &&
       strstr(out, "(default)") && strstr(out, "sm90 bm="),
       "fa4-tune space --dtype fp8 --page-size 16 lists sm90 configs");
    ok(run(out, sizeof out, "space", "--arch", "sm_90a", "--head-dim", "128", "--dtype", "fp8",
           "--page-size", "8", NULL) == 0 && strstr(out, "page=8") &&
       strstr(out, "(default)") && strstr(out, "sm80 bm=") && !strstr(out, "sm90 bm="),
       "fa4-tune space --dtype fp8 --page-size 8 lists sm80 configs (sm90 takes 16 rows)");
    ok(run(out, sizeof out, "space", "--arch", "sm_90a", "--head-dim", "64",
           "--family", "sm80", "--json", NULL) == 0,
       "fa4-tune space --json --family sm80 runs");
    {
        json_error_t je;
        json_t *doc = json_loads(out, 0, &je);
        json_t *cfgs = json_object_get(json_object_get(doc, "space"), "configs");
        ok(json_is_array(cfgs) && json_array_size(cfgs) > 0 &&
           strncmp(json_string_value(json_object_get(json_array_get(cfgs, 0),
                                                     "config")), "sm80", 4) == 0,
           "its JSON lists sm80 configs with their text form");
        json_decref(doc);
    }
    if (jit_nvrtc_version() == 0) {
        skip("NVRTC not available: no dry-run compile");
    } else {
        ok(run(out, sizeof out, "tune", "--dry-run", "--arch", "sm_90a",
               "--batch", "1", "--seqlen-q", "1024", "--heads-q", "8",
               "--head-dim", "64", "--max-trials", "1", "--quiet", "--json",
               NULL) == 0 && strstr(out, "\"regs\"") &&
           strstr(out, "\"spill_bytes\""),
           "tune --dry-run compiles for sm_90a and reports regs and spills");
    }
    if (jit_nvrtc_version() == 0) {
        skip("NVRTC not available: no dry-run compile");
        skip("NVRTC not available: no dry-run compile");
        skip("NVRTC not available: no dry-run compile");
    } else {
        /* One problem of each serving preset (--shard picks it), one
           candidate each: the default. */
        ok(run(out, sizeof out, "tune", "--dry-run", "--arch", "sm_90a",
               "--preset", "prefill-varlen-llama3-8b", "--shard", "0/4",
               "--max-trials", "1", "--quiet", "--json", NULL) == 0 &&
           strstr(out, "\"varlen\": true") && strstr(out, "\"config\": \"sm90 ") &&
           strstr(out, "\"spill_bytes\": 0"),
           "tune --dry-run compiles the varlen prefill preset's sm90 default");
        ok(run(out, sizeof out, "tune", "--dry-run", "--arch", "sm_90a",
               "--preset", "decode-llama3-8b-paged", "--shard", "41/42",
               "--max-trials", "1", "--quiet", "--json", NULL) == 0 &&
           strstr(out, "\"page_size\": 16") && strstr(out, "\"config\": \"sm80 ") &&
           strstr(out, "\"spill_bytes\": 0") &&
           strstr(out, "decode-llama3-8b-paged b64 k32768"),
           "tune --dry-run compiles the paged decode preset's sm80 default");
        ok(run(out, sizeof out, "tune", "--dry-run", "--arch", "sm_90a",
               "--batch", "3", "--seqlen-q", "1000", "--heads-q", "8",
               "--heads-kv", "2", "--head-dim", "128", "--causal", "--varlen",
               "--page-size", "64", "--max-trials", "1", "--quiet", "--json",
               NULL) == 0 && strstr(out, "\"varlen\": true") &&
           strstr(out, "\"page_size\": 64") &&
           strstr(out, "\"spill_bytes\": 0"),
           "tune --dry-run --varlen --page-size 64 compiles (varlen Q, paged "
           "K/V)");
    }
    if (jit_nvrtc_version() == 0) {
        skip("NVRTC not available: no dry-run compile");
    } else {
        ok(run(out, sizeof out, "tune", "--dry-run", "--arch", "sm_90a",
               "--batch", "2", "--seqlen-q", "2048", "--heads-q", "16",
               "--head-dim", "256", "--causal", "--softcap", "50", "--sinks",
               "--max-trials", "1", "--quiet", "--json", NULL) == 0 &&
           strstr(out, "\"softcap\": 50") &&
           strstr(out, "\"attention_sinks\": true") &&
           strstr(out, "\"spill_bytes\": 0"),
           "tune --dry-run --softcap 50 --sinks compiles the softcap and sinks "
           "variant's default");
    }
    return done_testing();
}
