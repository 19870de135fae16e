/*
** test_tune_workers.c -- how fa4-tune's device workers share the work,
** without a GPU: the problem queue (tuner/split.c) keeps a class of
** problems on one device, takes every problem once, and gives one worker
** the list in order; the builds (tuner/builds.c) compile each variant
** once however many threads claim it, pass a failure on without a second
** compile, and keep the compiles within the slots less the cores the
** device threads hold; and a compile thread's cubin becomes the timing
** thread's plan without another compile (plan_create_cubin).
*/
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tap.h"
#include "budget.h"
#include "config.h"
#include "context.h"
#include "jit.h"
#include "plan.h"
#include "problem.h"
#include "../tuner/args.h"
#include "../tuner/builds.h"
#include "../tuner/problems.h"
#include "../tuner/split.h"

/* Build LIST for PRESET (shard I/N) through the command line. */
static int build(problem_list *list, const char *preset, int i, int n)
{
    char shard[32], err[512];
    char *argv[] = { "fa4-tune", "tune", "--preset", (char *)preset,
                     "--shard", shard, NULL };
    tune_args a;

    snprintf(shard, sizeof shard, "%d/%d", i, n);
    memset(list, 0, sizeof *list);
    if (tune_args_parse(&a, 6, argv, err, sizeof err) != 0 ||
        problems_build(list, &a, err, sizeof err) != 0) {
        diag("  %s", err);
        return -1;
    }
    return 0;
}

static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

    nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------ the split */

static void test_classes(void)
{
    problem_list pl;
    int class_of[64], n;
    fa4_problem a = FA4_PROBLEM_INIT, b;

    if (build(&pl, "fa-grid-d128", 0, 3) == 0) {
        n = split_classes(class_of, &pl);
        ok(pl.count == 4 && n == 2 && class_of[0] == 0 && class_of[1] == 0 &&
           class_of[2] == 1 && class_of[3] == 1,
           "fa-grid-d128 shard 0/3: 4 problems, 2 classes (not causal, causal)");
        problem_list_free(&pl);
    }
    if (build(&pl, "fa-grid", 0, 1) == 0) {
        n = split_classes(class_of, &pl);
        is_int(n, 6, "fa-grid: 6 classes (3 head dims, causal or not)");
        problem_list_free(&pl);
    }
    a.batch = 2;
    a.seqlen_q = a.seqlen_k = 1024;
    a.heads_q = a.heads_kv = 16;
    a.head_dim_qk = 128;
    b = a;
    b.batch = 8;
    b.seqlen_q = b.seqlen_k = 4096;
    ok(split_same_class(&a, &b), "other lengths and batch: the same variants");
    b.causal = 1;
    b.window_right = 0;
    ok(!split_same_class(&a, &b), "causal or not: other variants");
    b = a;
    b.softcap = 30;
    ok(!split_same_class(&a, &b), "softcap: other variants");
    b = a;
    b.heads_kv = 4;
    ok(!split_same_class(&a, &b), "another GQA group: other variants");
}

/* Take problems as workers that finish in the order ORDER gives (worker
** numbers, -1 ends); record who took what in TAKER. */
static void run_queue(int n, const int *class_of, int nworkers,
                      const int *order, int *taker, int *first)
{
    int started[64] = { 0 }, current[8], last[8], k, i;

    for (k = 0; k < nworkers; k++) {
        current[k] = -1;
        last[k] = -1;
    }
    for (k = 0; k < nworkers; k++) {
        i = split_next(n, class_of, started, nworkers, current, k, last[k]);
        first[k] = i;
        if (i >= 0) {
            started[i] = 1;
            current[k] = i;
            last[k] = class_of[i];
            taker[i] = k;
        }
    }
    for (; *order >= 0; order++) {
        k = *order;
        current[k] = -1;
        i = split_next(n, class_of, started, nworkers, current, k, last[k]);
        if (i < 0)
            continue;
        started[i] = 1;
        current[k] = i;
        last[k] = class_of[i];
        taker[i] = k;
    }
}

static void test_queue(void)
{
    /* classes A B A B */
    static const int alt[] = { 0, 1, 0, 1 };
    /* A1 B1 C1 A2 B2 C2 */
    static const int three[] = { 0, 1, 2, 0, 1, 2 };
    static const int one_class[] = { 0, 0 };
    int started[8] = { 0 }, current[2] = { -1, -1 }, seq[8], i, n, last = -1;
    int taker[8], first[2];
    static const int order_a[] = { 0, 1, -1 };
    static const int order_b[] = { 0, -1 };

    /* one worker: the list in order, whatever the classes */
    for (n = 0; n < 4; n++) {
        i = split_next(4, alt, started, 1, current, 0, last);
        seq[n] = i;
        if (i >= 0) {
            started[i] = 1;
            last = alt[i];
        }
    }
    ok(seq[0] == 0 && seq[1] == 1 && seq[2] == 2 && seq[3] == 3,
       "one worker takes the list in order (%d %d %d %d)", seq[0], seq[1],
       seq[2], seq[3]);
    is_int(split_next(4, alt, started, 1, current, 0, last), -1,
           "and -1 when every problem is taken");

    /* two workers, two classes: each keeps to its own */
    memset(taker, -1, sizeof taker);
    run_queue(4, alt, 2, order_a, taker, first);
    ok(first[0] == 0 && first[1] == 1,
       "two workers start on different classes (%d, %d)", first[0], first[1]);
    ok(taker[0] == 0 && taker[2] == 0 && taker[1] == 1 && taker[3] == 1,
       "and each takes the rest of its own class (%d %d %d %d)", taker[0],
       taker[1], taker[2], taker[3]);

    /* A free worker takes its own class before a new one */
    memset(taker, -1, sizeof taker);
    run_queue(6, three, 2, order_b, taker, first);
    ok(taker[3] == 0 && taker[2] == -1,
       "a worker done with A1 takes A2, not C1 (its variants are loaded)");

    /* a class another worker tunes, only when nothing else is left */
    memset(taker, -1, sizeof taker);
    run_queue(2, one_class, 2, order_b, taker, first);
    ok(first[0] == 0 && first[1] == 1,
       "with one class the second worker still gets work (builds shared)");
}

/* Random finishing orders over fa-grid with 3 workers: every problem is
** taken once, and no worker starts a busy class while a free one waits. */
static void test_queue_random(unsigned seed)
{
    problem_list pl;
    int class_of[64], ncls, trial, good_once = 1, good_free = 1;

    if (build(&pl, "fa-grid", 0, 1) != 0)
        return;
    ncls = split_classes(class_of, &pl);
    for (trial = 0; trial < 200; trial++) {
        int started[64] = { 0 }, count[64] = { 0 }, current[3], last[3];
        int k, i, left = pl.count, busy[8];

        for (k = 0; k < 3; k++) {
            current[k] = -1;
            last[k] = -1;
        }
        while (left > 0 || current[0] >= 0 || current[1] >= 0 || current[2] >= 0) {
            int c, free_left = 0;

            seed = seed * 1103515245u + 12345u;
            k = (int)((seed >> 16) % 3);
            current[k] = -1;
            memset(busy, 0, sizeof busy);
            for (c = 0; c < 3; c++)
                if (current[c] >= 0)
                    busy[class_of[current[c]]] = 1;
            for (i = 0; i < pl.count; i++)
                if (!started[i] && !busy[class_of[i]])
                    free_left = 1;
            i = split_next(pl.count, class_of, started, 3, current, k, last[k]);
            if (i < 0) {
                if (left > 0)
                    good_once = 0;
                continue;
            }
            if (busy[class_of[i]] && free_left && class_of[i] != last[k])
                good_free = 0;
            started[i] = 1;
            count[i]++;
            current[k] = i;
            last[k] = class_of[i];
            left--;
        }
        for (i = 0; i < pl.count; i++)
            if (count[i] != 1)
                good_once = 0;
    }
    ok(good_once, "3 workers over fa-grid (%d problems, %d classes), 200 random "
       "orders: every problem taken exactly once", pl.count, ncls);
    ok(good_free, "a worker starts a class another tunes only when no free "
       "class is left (or it is its own)");
    problem_list_free(&pl);
}

/* ------------------------------------------------------------ the builds */

#define NKEYS 40
#define NTHREADS 8

static pthread_mutex_t stat_lock = PTHREAD_MUTEX_INITIALIZER;
static int mine[NKEYS], built_seen, failed_seen, running, max_running;

static void key_name(char key[17], int i)
{
    snprintf(key, 17, "%016llx", 0x9e3779b97f4a7c15ull * (unsigned long long)(i + 1));
}

/* A compile thread: claim every key (in its own order); build what it
** owns (key 7 fails), in a slot. */
static void *claimer(void *arg)
{
    unsigned seed = (unsigned)(size_t)arg * 2654435761u;
    int order[NKEYS], i;

    for (i = 0; i < NKEYS; i++)
        order[i] = i;
    for (i = NKEYS - 1; i > 0; i--) {
        int j, x;
        seed = seed * 1103515245u + 12345u;
        j = (int)((seed >> 16) % (unsigned)(i + 1));
        x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    for (i = 0; i < NKEYS; i++) {
        char key[17], why[256];
        fa4_status st = FA4_OK;
        build_claim c;

        key_name(key, order[i]);
        c = builds_claim(key, &st, why, sizeof why, NULL);
        pthread_mutex_lock(&stat_lock);
        if (c == BUILD_MINE)
            mine[order[i]]++;
        else if (c == BUILD_BUILT)
            built_seen++;
        else if (st == FA4_ECOMPILE && !strcmp(why, "variant spills 64 bytes"))
            failed_seen++;
        pthread_mutex_unlock(&stat_lock);
        if (c != BUILD_MINE)
            continue;
        builds_slot_take();
        pthread_mutex_lock(&stat_lock);
        if (++running > max_running)
            max_running = running;
        pthread_mutex_unlock(&stat_lock);
        sleep_us(2000);
        pthread_mutex_lock(&stat_lock);
        running--;
        pthread_mutex_unlock(&stat_lock);
        builds_slot_give();
        if (order[i] == 7)
            builds_finish(key, FA4_ECOMPILE, "variant spills 64 bytes");
        else
            builds_finish(key, FA4_OK, NULL);
    }
    return NULL;
}

/* Run NTHREADS claimers at once; FA4_OK when all ran. */
static int run_claimers(void)
{
    pthread_t th[NTHREADS];
    int i, made = 0;

    memset(mine, 0, sizeof mine);
    built_seen = failed_seen = running = max_running = 0;
    for (i = 0; i < NTHREADS; i++)
        if (pthread_create(&th[made], NULL, claimer, (void *)(size_t)(i + 1)) == 0)
            made++;
    for (i = 0; i < made; i++)
        pthread_join(th[i], NULL);
    return made == NTHREADS;
}

/* A thread that claims KEY and reports what it got. */
typedef struct waiter {
    const char *key;
    build_claim got;
    double waited;
} waiter;

static void *wait_claim(void *arg)
{
    waiter *w = arg;
    fa4_status st;
    char why[64];

    w->got = builds_claim(w->key, &st, why, sizeof why, &w->waited);
    return NULL;
}

static void test_builds(void)
{
    char key[17], why[256], k2[17];
    fa4_status st = FA4_OK;
    pthread_t th;
    waiter w;
    int i, once = 1, all;

    builds_reset();
    builds_slots(0);
    key_name(key, 1000);
    is_int(builds_claim(key, &st, why, sizeof why, NULL), BUILD_MINE,
           "the first claim of a variant builds it");
    ok(builds_running(key), "it is running meanwhile");
    w.key = key;
    w.waited = 0;
    w.got = BUILD_MINE;
    ok(pthread_create(&th, NULL, wait_claim, &w) == 0, "a second thread claims it");
    sleep_us(50000);
    builds_finish(key, FA4_OK, NULL);
    pthread_join(th, NULL);
    is_int(w.got, BUILD_BUILT, "it waited for the build and loads it, not "
           "compiling it again");
    ok(w.waited > 0.02, "its wait is counted (%.3f s)", w.waited);
    ok(!builds_running(key), "nothing is running after the build");
    is_int(builds_claim(key, &st, why, sizeof why, NULL), BUILD_BUILT,
           "a later claim finds it built");

    key_name(key, 1001);
    builds_claim(key, &st, why, sizeof why, NULL);
    builds_finish(key, FA4_ECOMPILE, "variant spills 8 bytes (255 registers)");
    why[0] = '\0';
    st = FA4_OK;
    is_int(builds_claim(key, &st, why, sizeof why, NULL), BUILD_FAILED,
           "a variant that failed fails again without a compile");
    ok(st == FA4_ECOMPILE && !strcmp(why, "variant spills 8 bytes (255 registers)"),
       "with the same status and message (%s)", why);

    key_name(key, 1002);
    builds_claim(key, &st, why, sizeof why, NULL);
    builds_abandon(key);
    is_int(builds_claim(key, &st, why, sizeof why, NULL), BUILD_MINE,
           "an abandoned build (not stored for others) is built again");
    builds_finish(key, FA4_OK, NULL);
    is_int(builds_claim("", &st, why, sizeof why, NULL), BUILD_MINE,
           "no key: always built, never shared");
    ok(!builds_running(""), "and never running");

    builds_reset();
    key_name(key, 1000);
    is_int(builds_claim(key, &st, why, sizeof why, NULL), BUILD_MINE,
           "builds_reset forgets what was built");
    builds_finish(key, FA4_OK, NULL);

    /* many keys: the table grows and keeps them all */
    all = 1;
    for (i = 0; i < 5000; i++) {
        key_name(k2, 2000 + i);
        if (builds_claim(k2, &st, why, sizeof why, NULL) != BUILD_MINE)
            all = 0;
        builds_finish(k2, i % 3 ? FA4_OK : FA4_ECOMPILE, "failed");
    }
    for (i = 0; i < 5000; i++) {
        key_name(k2, 2000 + i);
        if (builds_claim(k2, &st, why, sizeof why, NULL) !=
            (i % 3 ? BUILD_BUILT : BUILD_FAILED))
            all = 0;
    }
    ok(all, "5000 variants are each built once and remembered");

    builds_reset();
    builds_slots(3);
    ok(run_claimers(), "%d threads claim %d variants each, in their own orders",
       NTHREADS, NKEYS);
    for (i = 0; i < NKEYS; i++)
        if (mine[i] != 1)
            once = 0;
    ok(once, "each variant is built by exactly one thread");
    is_int(built_seen + failed_seen + NKEYS, NTHREADS * NKEYS,
           "every other claim takes the outcome");
    is_int(failed_seen, NTHREADS - 1, "the failed variant's failure reaches "
           "every other thread");
    ok(max_running <= 3 && max_running >= 1,
       "at most 3 compiles at once with 3 slots (%d)", max_running);

    builds_reset();
    builds_hold(2);
    run_claimers();
    is_int(max_running, 1, "two device threads busy: 3 slots leave one compile");
    builds_hold(5);
    builds_reset();
    run_claimers();
    is_int(max_running, 1, "never fewer than one, however many are held");
    builds_hold(-7);
    builds_reset();
    builds_slots(0);
}

/* ---------------------------------------------------- the cubin handoff */

/*
** A compile thread hands its cubin to the thread that times, which makes
** the plan from it (plan_create_cubin): no second compile, and nothing
** read from the database.  A plan_only context loads nothing, so any bytes
** stand for the cubin here.
*/
static void test_handoff(void)
{
    fa4_context_options co = FA4_CONTEXT_OPTIONS_INIT;
    fa4_context *ctx = NULL;
    fa4_problem p = FA4_PROBLEM_INIT, rp;
    fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
    fa4_plan *plan = NULL;
    fa4_config c;
    fa4_layout l;
    char key[17], why[512];
    static const char fake[] = "cubin";
    long before;

    co.plan_only = 1;
    co.arch = "sm_90a";
    co.no_database = 1;
    if (!ok(fa4_context_create(&ctx, 0, &co) == FA4_OK, "a plan_only sm_90a context")) {
        diag("  %s", fa4_context_last_error());
        return;
    }
    p.batch = 2;
    p.seqlen_q = p.seqlen_k = 1024;
    p.heads_q = p.heads_kv = 16;
    p.head_dim_qk = 128;
    problem_resolve(&rp, &p, why, sizeof why);
    if (!ok(config_default(&c, &ctx->limits, &rp, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
            budget_fit(&l, &ctx->limits, &rp, &c, why, sizeof why) == FA4_OK &&
            jit_key(key, ctx->limits.arch, &rp, &c, &l) == FA4_OK,
            "the default config and its variant key")) {
        diag("  %s", why);
        fa4_context_destroy(ctx);
        return;
    }
    po.config = &c;
    before = jit_compile_count();
    is_int(plan_create_cubin(&plan, ctx, &p, &po, key, fake, sizeof fake), FA4_OK,
           "plan_create_cubin makes the plan from the handed cubin");
    is_int(jit_compile_count() - before, 0, "without compiling it again");
    fa4_plan_destroy(plan);
    fa4_context_destroy(ctx);
}

int main(void)
{
    plan_lazy();
    test_classes();
    test_queue();
    test_queue_random(tap_seed());
    test_builds();
    builds_reset();
    test_handoff();
    return done_testing();
}
