/*
** test_tune_verify.c -- fa4-tune verify without a GPU: the winners it
** would re-time (lib/db_verify.c: this GPU model only, the shape each was
** tuned at, stale rows marked), --drop's delete, and the subcommand's
** answers for a missing database, an empty one, and a database with
** winners on a machine without a GPU.  The re-timing itself runs in
** bench/tune_check.sh on a GPU; the verdict on its rounds (shared with
** tune's confirmation) is tested here on made-up rounds.
*/
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "tap.h"
#include "db.h"
#include "db_verify.h"
#include "config.h"
#include "db_test_util.h"
#include "tune_test_util.h"
#include "../tuner/timing.h"

/* Store one successful trial of CFG for P on DEV into the file PATH. */
static int store_trial_file(const char *path, const device_limits *dev,
                            const fa4_problem *p, const fa4_config *cfg)
{
    db *d = NULL;
    db_trial t;
    char warn[512], why[512];
    int r;

    memset(&t, 0, sizeof t);
    t.config = *cfg;
    t.ok = 1;
    t.median_ms = 1.0;
    t.min_ms = 0.9;
    t.max_ms = 1.1;
    t.reps = 50;
    r = db_open(&d, path, NULL, 0, warn, sizeof warn, why, sizeof why) == FA4_OK &&
        db_store_trial(d, dev, p, &t, why, sizeof why) == FA4_OK;
    if (!r)
        diag("store_trial_file: %s", why);
    db_close(d);
    return r;
}

/* The verdict on paired rounds (timing_pair_verdict): ROUNDS pairs of
   (winner ms, default ms). */
static timing_verdict verdict_of(timing_pair *tp, const double (*pairs)[2], int rounds)
{
    double a[16], b[16];
    int k;
    for (k = 0; k < rounds; k++) {
        a[k] = pairs[k][0];
        b[k] = pairs[k][1];
    }
    timing_pair_from_rounds(tp, a, b, rounds);
    return timing_pair_verdict(tp);
}

static void check_verdicts(void)
{
    /* A 6% gain under clocks that jump by 10% between rounds: each side's
       own spread is ~15%, but the winner is faster in every round. */
    static const double levels[6][2] = { { 0.414, 0.440 }, { 0.458, 0.486 }, { 0.415, 0.439 },
                                         { 0.457, 0.484 }, { 0.458, 0.487 }, { 0.416, 0.441 } };
    /* The same medians but one round lost: not every round. */
    static const double one_lost[6][2] = { { 0.414, 0.440 }, { 0.458, 0.486 }, { 0.415, 0.439 },
                                           { 0.457, 0.484 }, { 0.458, 0.450 }, { 0.416, 0.441 } };
    /* Faster in 4 of 6 rounds, by a median of 0.5%: no gain that counts. */
    static const double near[6][2] = { { 1.000, 1.005 }, { 1.001, 1.006 }, { 1.010, 1.004 },
                                       { 1.000, 1.005 }, { 1.008, 1.007 }, { 1.000, 1.005 } };
    /* Faster in every round by 0.5%: below the smallest gain that counts. */
    static const double tiny[6][2] = { { 1.000, 1.005 }, { 1.001, 1.006 }, { 0.999, 1.004 },
                                       { 1.000, 1.005 }, { 1.002, 1.007 }, { 1.000, 1.005 } };
    /* Slower throughout. */
    static const double slower[4][2] = { { 1.10, 1.00 }, { 1.11, 1.00 }, { 1.09, 1.01 }, { 1.10, 1.00 } };
    /* Wild rounds, faster in the median: noisy. */
    static const double wild[5][2] = { { 0.026, 0.030 }, { 0.031, 0.027 }, { 0.025, 0.030 },
                                       { 0.026, 0.029 }, { 0.030, 0.026 } };
    timing_pair tp;
    timing_verdict v;

    v = verdict_of(&tp, levels, 6);
    ok(v == TIMING_HOLDS && tp.wins == 6 && tp.gain > 0.055 &&
       tp.gain < 0.065 && tp.spread[0] > tp.gain,
       "a 6%% gain in every round holds though each side's spread (%.1f%%) is wider",
       100 * tp.spread[0]);
    v = verdict_of(&tp, one_lost, 6);
    ok(v == TIMING_NOISY && tp.wins == 5 && tp.gain_hi - tp.gain_lo < 0.10,
       "one round lost, a 6%% median gain in a narrow range: not proven, not lost "
       "(noisy, %d of 6)", tp.wins);
    v = verdict_of(&tp, near, 6);
    ok(v == TIMING_LOST && tp.wins == 4 && tp.gain > 0,
       "faster in 4 of 6 rounds by a median below 1%%: lost (%+.2f%%)", 100 * tp.gain);
    v = verdict_of(&tp, tiny, 6);
    ok(v == TIMING_LOST && tp.wins == 6,
       "a 0.5%% gain in every round is below the smallest gain: lost");
    v = verdict_of(&tp, slower, 4);
    ok(v == TIMING_LOST && tp.wins == 0 && tp.gain < 0,
       "slower in every round: lost (%+.1f%%)", 100 * tp.gain);
    v = verdict_of(&tp, wild, 5);
    ok(v == TIMING_NOISY && tp.gain_hi - tp.gain_lo > 0.10,
       "rounds that disagree by %.0f%%, faster in the median: noisy",
       100 * (tp.gain_hi - tp.gain_lo));
}

int main(void)
{
    static char out[1 << 16], err[4096];
    char path[600], missing[600], why[512], warn[512];
    device_limits h100 = test_device("NVIDIA H100 80GB HBM3", 90, 132);
    device_limits other = test_device("NVIDIA A100-SXM4-80GB", 80, 108);
    device_limits newer = h100;
    fa4_problem p = FA4_PROBLEM_INIT;
    fa4_config cfg;
    db_verify_winner *ws = NULL;
    fa4_context *ctx = NULL;
    db *d = NULL;
    int n = 0, rc, i, found;

    plan_lazy();
    check_verdicts();
    make_tmpdir();
    snprintf(path, sizeof path, "%s/v.db", tmpdir);
    snprintf(missing, sizeof missing, "%s/none.db", tmpdir);

    /* the subcommand before any winner */
    rc = tune_run(out, sizeof out, err, sizeof err, "verify", "--db", missing, NULL);
    ok(rc == TUNE_EXIT_FAIL && strstr(err, "no database at") &&
       strstr(err, "none.db") && strchr(err, '\n') == strrchr(err, '\n'),
       "verify: a missing database is one line naming it, exit 1");
    ok(db_open(&d, path, NULL, 0, warn, sizeof warn, why, sizeof why) == FA4_OK,
       "an empty database is created");
    db_close(d);
    rc = tune_run(out, sizeof out, err, sizeof err, "verify", "--db", path, NULL);
    ok(rc == TUNE_EXIT_OK && strstr(out, "no stored winners") && !err[0],
       "verify: an empty database has nothing to verify, exit 0, no GPU needed");
    rc = tune_run(out, sizeof out, err, sizeof err, "verify", "--db", path, "--json",
             NULL);
    {
        json_error_t je;
        json_t *doc = json_loads(out, 0, &je);
        ok(rc == TUNE_EXIT_OK && json_is_array(json_object_get(doc, "winners")) &&
           json_array_size(json_object_get(doc, "winners")) == 0,
           "verify --json: an empty database gives an empty winners array");
        json_decref(doc);
    }
    rc = tune_run(out, sizeof out, err, sizeof err, "verify", "--db", path,
             "--drop", "--drop", NULL);
    ok(rc == TUNE_EXIT_OK, "verify --drop on an empty database drops nothing");

    /* the rows lib/db_verify.c lists */
    p.batch = 3; p.seqlen_q = p.seqlen_k = 1500;
    p.heads_q = 24; p.heads_kv = 8; p.head_dim_qk = 128; p.causal = 1;
    p.window_right = 0;
    ok(config_parse(&cfg, "sm90 bm=128 bn=128 stages=2 swizzle=128 "
                    "fused_kv=0 q_tiles=1 warps=0 wgs=2 regs=24/240 "
                    "cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=plain",
                    why, sizeof why) == FA4_OK, "a config parses");
    newer.driver_version = 12080;
    ok(store_trial_file(path, &h100, &p, &cfg) &&
       store_winner_file(path, &h100, &p, &cfg, 1.0) &&
       store_winner_file(path, &other, &p, &cfg, 2.0) &&
       store_winner_file(path, &newer, &p, &cfg, 3.0),
       "winners for an H100 (two drivers) and an A100 are stored");
    ok(db_verify_list(&ws, &n, path, &h100, why, sizeof why) == FA4_OK && n == 2,
       "the H100's list holds its own row and the other driver's");
    if (n == 2) {
        db_verify_winner *w = &ws[0];
        ok(w->same_fingerprint && !ws[1].same_fingerprint &&
           strstr(ws[1].fingerprint, "12080"),
           "its own fingerprint first; the other driver's is marked");
        ok(w->family == 90 && w->dtype == FA4_DTYPE_BF16 &&
           w->head_dim_qk == 128 && w->head_dim_v == 128 && w->gqa_group == 3 &&
           w->causal == 1 && w->window_right == 0 && w->seqlen_q_bucket == 2048 &&
           w->seqlen_k_bucket == 2048 && w->work_bucket == 32 &&
           w->median_ms == 1.0 &&
           !strncmp(w->config, "sm90 bm=128", 11),
           "the key (work bucket 32 = 3 x 8 KV heads), config and stored "
           "median are read back");
        ok(w->batch == 3 && w->heads_q == 24 && w->seqlen_q == 1500 &&
           w->seqlen_k == 1500,
           "the tuned shape comes from the successful trial (b3 h24 s1500)");
        ok(!w->stale, "a winner of the current kernel sources is not stale");
        ok(ws[1].batch == 0,
           "a winner without a trial (imported) has no tuned shape");
    } else {
        for (i = 0; i < 5; i++)
            skip("no rows");
    }
    free(ws);
    ws = NULL;
    ok(db_verify_list(&ws, &n, path, NULL, why, sizeof why) == FA4_OK && n == 3,
       "a NULL device lists every winner");
    free(ws);
    ws = NULL;
    ok(exec_sql(path, "UPDATE winners SET source_hash = 'feedfacefeedface' "
                "WHERE median_ms = 3.0") &&
       db_verify_list(&ws, &n, path, &h100, why, sizeof why) == FA4_OK &&
       n == 2 && ws[1].stale && !ws[0].stale,
       "a winner of other kernel sources is marked stale");
    ok(n == 2 && db_verify_drop(path, &ws[0], why, sizeof why) == FA4_OK &&
       query_int(path, "SELECT count(*) FROM winners") == 2 &&
       query_int(path, "SELECT count(*) FROM winners WHERE median_ms = 1.0") == 0,
       "db_verify_drop removes exactly that row");
    free(ws);
    ws = NULL;

    /* A softcap winner with sinks beside a plain one of the same shape. */
    {
        fa4_problem ps = p, p4 = p;   /* one work bucket: 3 x 8, 4 x 8 */
        char flagged[1024];

        snprintf(flagged, sizeof flagged, "%s/flags.db", tmpdir);
        ps.softcap = 30;
        ps.attention_sinks = 1;
        p4.batch = 4;
        ok(store_winner_file(flagged, &h100, &p, &cfg, 1.0) &&
           store_trial_file(flagged, &h100, &ps, &cfg) &&
           store_winner_file(flagged, &h100, &ps, &cfg, 4.0) &&
           store_trial_file(flagged, &h100, &p4, &cfg),
           "a plain and a softcap-with-sinks winner of one shape are stored, "
           "each with a trial");
        ok(db_verify_list(&ws, &n, flagged, &h100, why, sizeof why) == FA4_OK &&
           n == 2 && !ws[0].softcap && !ws[0].sinks && ws[1].softcap == 1 &&
           ws[1].sinks == 1 && ws[1].median_ms == 4.0,
           "the list reads softcap and sinks (plain first)");
        ok(n == 2 && ws[1].batch == 3 && ws[0].batch == 4,
           "each takes its tuned shape from a trial of its own variant, not "
           "the other's later one");
        ok(n == 2 && db_verify_drop(flagged, &ws[1], why, sizeof why) == FA4_OK &&
           query_int(flagged, "SELECT count(*) FROM winners") == 1 &&
           query_int(flagged, "SELECT softcap + sinks FROM winners") == 0,
           "db_verify_drop of the softcap row leaves the plain one");
        free(ws);
        ws = NULL;
    }
    ok(db_verify_list(&ws, &n, missing, &h100, why, sizeof why) == FA4_EDB &&
       strstr(why, "none.db"), "listing a missing file is FA4_EDB naming it");
    free(ws);
    ws = NULL;

    /* winners but no GPU */
    if (fa4_context_create(&ctx, 0, NULL) == FA4_ENODEV) {
        rc = tune_run(out, sizeof out, err, sizeof err, "verify", "--db", path, NULL);
        ok(rc == TUNE_EXIT_FAIL && strstr(err, "no CUDA device 0") &&
           strchr(err, '\n') == strrchr(err, '\n'),
           "verify: winners but no GPU is one line, exit 1");
        rc = tune_run(out, sizeof out, err, sizeof err, "verify", "--db", path,
                 "--drop", NULL);
        found = (int)query_int(path, "SELECT count(*) FROM winners");
        ok(rc == TUNE_EXIT_FAIL && found == 2,
           "verify --drop without a GPU drops nothing (%d rows left)", found);
    } else {
        skip("a GPU is present: bench/tune_check.sh covers the re-timing");
        skip("a GPU is present: bench/tune_check.sh covers the re-timing");
    }
    fa4_context_destroy(ctx);
    remove_tmpdir();
    return done_testing();
}
