/*
** search.c -- the search for one problem's best config.  See search.h for
** the steps; report.c prints what this records.
*/
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context.h"
#include "db.h"
#include "jit.h"
#include "plan.h"
#include "problem.h"
#include "reference.h"
#include "problems.h"
#include "report.h"
#include "search.h"
#include "verify.h"
#include "layout.h"
#include "builds.h"

volatile sig_atomic_t search_stop;

double search_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double search_tolerance(fa4_dtype dtype)
{
    return verify_tolerance_of(dtype).o_rel;
}

/* ------------------------------------------------------------- the space */

/* Add COUNT configs dropped for REASON (prefixed with FAMILY) to R. */
static void add_drop(search_result *r, const char *family, const char *reason,
                     int count)
{
    char text[sizeof r->drops[0].reason];
    int i;

    snprintf(text, sizeof text, "%s: %s", family, reason);
    for (i = 0; i < r->ndrops; i++)
        if (strcmp(r->drops[i].reason, text) == 0) {
            r->drops[i].count += count;
            return;
        }
    if (r->ndrops == (int)(sizeof r->drops / sizeof r->drops[0])) {
        r->drops[r->ndrops - 1].count += count;   /* the last row absorbs */
        return;
    }
    snprintf(r->drops[r->ndrops].reason, sizeof r->drops[0].reason, "%s", text);
    r->drops[r->ndrops++].count = count;
}

/* Append (CONFIG, LAYOUT) to R's trials; 0 or -1 (out of memory). */
static int add_trial(search_result *r, const fa4_config *config,
                     const fa4_layout *layout)
{
    search_trial *t = realloc(r->trials, (size_t)(r->ntrials + 1) * sizeof *t);

    if (!t)
        return -1;
    r->trials = t;
    t = &r->trials[r->ntrials++];
    memset(t, 0, sizeof *t);
    t->config = *config;
    t->layout = *layout;
    t->regs = t->spill_bytes = -1;
    return 0;
}

/* How far config C lies from the default D: the fields that differ
   (the tile's rows and warpgroups count as one), then bn's distance. */
static long config_distance(const fa4_config *c, const fa4_config *d)
{
    int fields = (c->family != d->family) * 4 +
                 (c->bm != d->bm || c->consumer_wgs != d->consumer_wgs) +
                 (c->bn != d->bn) + (c->stages != d->stages) + (c->swizzle != d->swizzle) +
                 (c->fused_kv != d->fused_kv) + (c->pingpong != d->pingpong) +
                 (c->scheduler != d->scheduler) + (c->splits != d->splits) +
                 (c->exp2_emu_pct != d->exp2_emu_pct) +
                 (c->late_k_release != d->late_k_release) + (c->warps != d->warps) +
                 (c->kv_split_warps != d->kv_split_warps) + (c->pack_gqa != d->pack_gqa) +
                 (c->tanh_poly_pct != d->tanh_poly_pct);
    return (long)fields * 1024 + labs((long)c->bn - d->bn);
}

typedef struct trial_rank { long distance; int index; } trial_rank;

static int by_distance(const void *a, const void *b)
{
    const trial_rank *x = a, *y = b;
    if (x->distance != y->distance)
        return x->distance < y->distance ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Order trials 1.. by their distance from the default at 0 (stable):
   a round cut short by --time-budget or --max-trials then has measured
   the default's neighbours, not whichever tiles the enumeration lists
   first (a 20 s coarse round at d64 timed 62 of 310 candidates, all with
   two warpgroups, none of the three-warpgroup tile that wins there).
   Left as it is when out of memory. */
static void order_by_distance(search_result *r)
{
    trial_rank *rank = malloc((size_t)r->ntrials * sizeof *rank);
    search_trial *sorted = malloc((size_t)r->ntrials * sizeof *sorted);
    int i;

    if (rank && sorted) {
        for (i = 1; i < r->ntrials; i++) {
            rank[i].distance = config_distance(&r->trials[i].config, &r->trials[0].config);
            rank[i].index = i;
        }
        qsort(rank + 1, (size_t)(r->ntrials - 1), sizeof *rank, by_distance);
        sorted[0] = r->trials[0];
        for (i = 1; i < r->ntrials; i++)
            sorted[i] = r->trials[rank[i].index];
        free(r->trials);
        r->trials = sorted;
        sorted = NULL;
    }
    free(rank);
    free(sorted);
}

fa4_status search_space(search_result *r, const device_limits *dev,
                        const fa4_problem *problem, fa4_family family)
{
    fa4_family fams[3];
    int nfam, f, i, found = -1;
    char why[512];
    fa4_status st;

    memset(r, 0, sizeof *r);
    r->winner = -1;
    r->default_index = -1;
    r->rival_index = -1;
    r->stored_index = -1;
    if ((st = problem_resolve(&r->problem, problem, why, sizeof why)) != FA4_OK) {
        snprintf(r->error, sizeof r->error, "%s", why);
        return r->status = st;
    }
    r->flops = problems_flops(&r->problem);
    if (family) {
        fams[0] = family;
        nfam = 1;
    } else {
        nfam = config_families_for(fams, dev, &r->problem);
    }
    for (f = 0; f < nfam; f++) {
        config_space sp;
        const char *fname = config_family_name(fams[f]);

        memset(&sp, 0, sizeof sp);
        st = config_enumerate(&sp, dev, &r->problem, fams[f], why, sizeof why);
        if (st == FA4_ENOMEM) {
            snprintf(r->error, sizeof r->error, "out of memory enumerating %s",
                     fname);
            return r->status = st;
        }
        if (st != FA4_OK) {
            size_t len = strlen(r->family_notes);
            snprintf(r->family_notes + len, sizeof r->family_notes - len,
                     "%s%s: %s", len ? "; " : "", fname, why);
            continue;
        }
        r->considered += sp.considered;
        r->fit += sp.count;
        for (i = 0; i < sp.ndrops; i++)
            add_drop(r, fname, sp.drops[i].reason, sp.drops[i].count);
        for (i = 0; i < sp.count; i++)
            if (add_trial(r, &sp.configs[i], &sp.layouts[i]) != 0) {
                config_space_free(&sp);
                snprintf(r->error, sizeof r->error, "out of memory");
                return r->status = FA4_ENOMEM;
            }
        config_space_free(&sp);
    }
    if (r->ntrials == 0) {
        snprintf(r->error, sizeof r->error, "no config fits %s%s%s",
                 dev->arch, r->family_notes[0] ? ": " : "", r->family_notes);
        return r->status = FA4_ENOTSUP;
    }

    /* The heuristic default of the best family that runs the problem goes
       first: it is always measured, and the gain is over it. */
    for (f = 0; f < nfam && found < 0; f++) {
        fa4_config def;
        fa4_layout lay;

        if (config_default(&def, dev, &r->problem, fams[f], why, sizeof why) != FA4_OK)
            continue;
        for (i = 0; i < r->ntrials; i++)
            if (config_equal(&r->trials[i].config, &def)) {
                found = i;
                break;
            }
        if (found < 0 &&
            budget_fit(&lay, dev, &r->problem, &def, why, sizeof why) == FA4_OK &&
            add_trial(r, &def, &lay) == 0)
            found = r->ntrials - 1;
    }
    if (found >= 0) {
        search_trial tmp = r->trials[found];
        memmove(&r->trials[1], &r->trials[0], (size_t)found * sizeof tmp);
        r->trials[0] = tmp;
        r->trials[0].is_default = 1;
        r->default_index = 0;
        order_by_distance(r);
    }
    return r->status = FA4_OK;
}

/* ------------------------------------------------------------ selection */

/* Sorted distinct bn values of FAMILY's trials into OUT; returns count. */
static int distinct_bn(const search_result *r, fa4_family family, int *out,
                       int max)
{
    int i, j, n = 0;

    for (i = 0; i < r->ntrials; i++) {
        int bn = r->trials[i].config.bn;
        if (r->trials[i].config.family != family)
            continue;
        for (j = 0; j < n && out[j] != bn; j++)
            ;
        if (j == n && n < max)
            out[n++] = bn;
    }
    for (i = 1; i < n; i++)            /* insertion sort: a handful */
        for (j = i; j > 0 && out[j - 1] > out[j]; j--) {
            int x = out[j];
            out[j] = out[j - 1];
            out[j - 1] = x;
        }
    return n;
}

/* Position of BN among VALUES, or -1. */
static int bn_rank(const int *values, int n, int bn)
{
    int i;

    for (i = 0; i < n; i++)
        if (values[i] == bn)
            return i;
    return -1;
}

/* Keep the first MAX selected (0: all); returns how many stay selected. */
static int cap_selected(search_result *r, int max)
{
    int i, n = 0;

    for (i = 0; i < r->ntrials; i++)
        if (r->trials[i].selected) {
            if (max > 0 && n >= max) {
                r->trials[i].selected = 0;
                r->cut = 1;
                snprintf(r->cut_reason, sizeof r->cut_reason,
                         "--max-trials %d", max);
            } else {
                n++;
            }
        }
    return n;
}

/* The stages of FAMILY's coarse round: 2 where the family has it, else
** its smallest. */
static int coarse_stages(const search_result *r, fa4_family family)
{
    int i, min = 1 << 30;

    for (i = 0; i < r->ntrials; i++) {
        const fa4_config *c = &r->trials[i].config;
        if (c->family != family)
            continue;
        if (c->stages == 2)
            return 2;
        if (c->stages < min)
            min = c->stages;
    }
    return min;
}

int search_select_first(search_result *r, tune_strategy strategy,
                        int max_trials)
{
    int i;

    for (i = 0; i < r->ntrials; i++) {
        search_trial *t = &r->trials[i];
        int bns[64], nbn;

        t->selected = !t->done;
        if (strategy != TUNE_STRATEGY_COARSE || t->is_default || t->is_incumbent ||
            !t->selected)
            continue;
        /* every other bn value, at the coarse stage count */
        nbn = distinct_bn(r, t->config.family, bns, 64);
        t->selected = bn_rank(bns, nbn, t->config.bn) % 2 == 0 &&
                      t->config.stages == coarse_stages(r, t->config.family);
    }
    return cap_selected(r, max_trials);
}

int search_select_refine(search_result *r, int best, int budget)
{
    const fa4_config *b = &r->trials[best].config;
    int bns[64], nbn, rank, i;

    nbn = distinct_bn(r, b->family, bns, 64);
    rank = bn_rank(bns, nbn, b->bn);
    for (i = 0; i < r->ntrials; i++) {
        search_trial *t = &r->trials[i];
        fa4_config c = t->config;
        int k = bn_rank(bns, nbn, c.bn);

        t->selected = 0;
        if (t->done || c.family != b->family || k < 0 || k < rank - 1 ||
            k > rank + 1)
            continue;
        c.bn = b->bn;
        c.stages = b->stages;
        t->selected = config_equal(&c, b);
    }
    return cap_selected(r, budget);
}

/* ----------------------------------------------------------- build pool */

/* A trial's place in a round's builds (pool.state). */
enum { POOL_WAITING = 0, POOL_TAKEN, POOL_BUILT };

/* How a trial's build went (pool.outcome), for the round's counts. */
enum { OUTCOME_NONE = 0, OUTCOME_OK, OUTCOME_SPILL, OUTCOME_FAILED };

/*
** One round's builds: OPTS->jobs threads take the selected trials and
** compile them (builds.h shares the slots and the variants with the other
** devices' searches); on a GPU run the searching thread takes each trial
** as it is built (pool_wait) while the others compile.
*/
typedef struct pool {
    search_result *r;
    const search_opts *opts;
    const device_limits *dev;
    fa4_context *ctx;            /* NULL: dry run (registers and spills) */
    int *idx;                    /* selected trial indices, in build order */
    int n, next;                 /* how many; the next to take */
    unsigned char *state;        /* per trial of R: POOL_* */
    unsigned char *outcome;      /* per trial of R: OUTCOME_* */
    int quit;                    /* take no more trials */
    int active;                  /* build threads not finished */
    pthread_t th[256];
    int nth;
    pthread_mutex_t lock;
    pthread_cond_t built;        /* a trial was built, or a thread ended */
    struct progress *prog;
} pool;

/* 1 when the search must stop now (SIGINT or the deadline); records why. */
static int must_stop(search_result *r, const search_opts *o)
{
    if (search_stop) {
        r->interrupted = 1;
        return 1;
    }
    if (o->deadline > 0 && search_now() >= o->deadline) {
        r->cut = 1;
        snprintf(r->cut_reason, sizeof r->cut_reason, "--time-budget reached");
        return 1;
    }
    return 0;
}

/* must_stop() while P's build threads may be recording the same. */
static int pool_must_stop(pool *p)
{
    int stop;

    pthread_mutex_lock(&p->lock);
    stop = must_stop(p->r, p->opts);
    pthread_mutex_unlock(&p->lock);
    return stop;
}

/* Record a failed build of T: spill or compile error, from ST and MSG. */
static void build_failed(search_trial *t, fa4_status st, const char *what,
                         const char *msg)
{
    const char *nl;
    int len;

    t->state = TRIAL_FAILED;
    nl = strchr(msg, '\n');
    len = nl ? (int)(nl - msg) : (int)strlen(msg);
    if (st == FA4_ECOMPILE && strstr(msg, "spill"))
        snprintf(t->failure, sizeof t->failure, "spill: %.*s", len, msg);
    else if (st == FA4_ECOMPILE)
        snprintf(t->failure, sizeof t->failure, "compile%s: %.*s", what, len, msg);
    else
        snprintf(t->failure, sizeof t->failure, "plan%s: %s: %.*s", what,
                 fa4_status_string(st), len, msg);
}

/* T's build outcome from its state. */
static int outcome_of(const search_trial *t)
{
    if (t->state != TRIAL_FAILED)
        return OUTCOME_OK;
    return strncmp(t->failure, "spill", 5) ? OUTCOME_FAILED : OUTCOME_SPILL;
}

/* The phases a build adds to the search (under the pool's lock). */
typedef struct build_time {
    double compile, slot_wait, shared_wait, cache_io;
    int compiles, reused;
} build_time;

/* Compile T into K in one of the pool's slots (only NVRTC holds a slot);
** its registers, spills and compile time go into T and BT. */
static fa4_status compile_in_slot(pool *p, search_trial *t, build_time *bt, jit_kernel *k,
                                  char *why, size_t why_size)
{
    fa4_status st;

    memset(k, 0, sizeof *k);
    bt->slot_wait += builds_slot_take();
    st = jit_compile(k, p->dev->arch, &p->r->problem, &t->config, &t->layout, why, why_size);
    builds_slot_give();
    bt->compile += k->compile_ms * 1e-3;
    bt->compiles++;
    t->regs = k->regs;
    t->spill_bytes = k->spill_bytes;
    t->compile_ms = k->compile_ms;
    return st;
}

/*
** Dry run: compile T for the registers and spills (every problem's
** candidates are compiled, the report shows each).
*/
static void build_dry(pool *p, search_trial *t, build_time *bt)
{
    jit_kernel k;
    char why[1024];
    fa4_status st = compile_in_slot(p, t, bt, &k, why, sizeof why);

    if (st == FA4_OK)
        t->state = TRIAL_COMPILED;
    else
        build_failed(t, st, "", why);
    jit_kernel_free(&k);
}

/*
** GPU run: make T's cubin available to the searching thread, which loads
** it (plan_create_cubin) between its measurements: a variant this process
** built already is loaded from the context's cache or the database; one
** the database holds from an earlier run is read from it; any other is
** compiled here, in a slot, and stored in the database for the other
** devices.  A variant that failed to build fails again without a compile.
*/
static void build_gpu(pool *p, search_trial *t, build_time *bt)
{
    db *d = context_db(p->ctx);
    jit_kernel k;
    fa4_status st = FA4_OK;
    char why[1024];
    double t0;

    switch (builds_claim(t->key, &st, why, sizeof why, &bt->shared_wait)) {
    case BUILD_BUILT:
        bt->reused++;
        t->state = TRIAL_COMPILED;
        return;
    case BUILD_FAILED:
        bt->reused++;
        build_failed(t, st, "", why);
        return;
    case BUILD_MINE:
        break;
    }
    t0 = search_now();
    if (d && t->key[0] &&
        db_binary_get(d, &t->cubin, &t->cubin_size, t->key, why,
                      sizeof why) == FA4_OK) {
        bt->cache_io += search_now() - t0;
        bt->reused++;
        builds_finish(t->key, FA4_OK, NULL);
        t->state = TRIAL_COMPILED;
        return;
    }
    bt->cache_io += search_now() - t0;
    st = compile_in_slot(p, t, bt, &k, why, sizeof why);
    if (st != FA4_OK) {
        build_failed(t, st, "", why);
        builds_finish(t->key, st, why);
        jit_kernel_free(&k);
        return;
    }
    t->cubin = k.cubin;
    t->cubin_size = k.cubin_size;
    k.cubin = NULL;
    jit_kernel_free(&k);
    t->state = TRIAL_COMPILED;
    /* Stored as fa4_plan_create() stores what it compiles; the other
       devices load it from there. */
    t0 = search_now();
    if (d && t->key[0] &&
        db_binary_put(d, t->key, p->dev->arch, t->cubin, t->cubin_size, why,
                      sizeof why) == FA4_OK)
        builds_finish(t->key, FA4_OK, NULL);
    else
        builds_abandon(t->key);
    bt->cache_io += search_now() - t0;
}

/* A build thread: take the next selected trial until none is left,
** preferring one that no other device is building at the moment. */
static void *build_worker(void *arg)
{
    pool *p = arg;

    for (;;) {
        search_trial *t;
        build_time bt;
        int i, j;

        pthread_mutex_lock(&p->lock);
        if (p->next >= p->n || p->quit || must_stop(p->r, p->opts)) {
            p->active--;
            pthread_cond_broadcast(&p->built);
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        for (j = p->next; j < p->n; j++)
            if (!builds_running(p->r->trials[p->idx[j]].key))
                break;
        if (j < p->n && j != p->next) {
            int x = p->idx[j];
            p->idx[j] = p->idx[p->next];
            p->idx[p->next] = x;
        }
        i = p->idx[p->next++];
        p->state[i] = POOL_TAKEN;
        pthread_mutex_unlock(&p->lock);

        t = &p->r->trials[i];
        memset(&bt, 0, sizeof bt);
        if (p->ctx)
            build_gpu(p, t, &bt);
        else
            build_dry(p, t, &bt);
        progress_step(p->prog, p->r->name);

        pthread_mutex_lock(&p->lock);
        p->state[i] = POOL_BUILT;
        p->outcome[i] = (unsigned char)outcome_of(t);
        p->r->phases.compile += bt.compile;
        p->r->phases.slot_wait += bt.slot_wait;
        p->r->phases.shared_wait += bt.shared_wait;
        p->r->phases.cache_io += bt.cache_io;
        p->r->phases.compiles += bt.compiles;
        p->r->phases.reused += bt.reused;
        pthread_cond_broadcast(&p->built);
        pthread_mutex_unlock(&p->lock);
    }
}

/*
** Start building R's selected trials in OPTS->jobs threads (fewer when
** fewer are selected; in this thread when none can be started).  FA4_OK,
** or FA4_ENOMEM with nothing started.
*/
static fa4_status pool_start(pool *p, search_result *r, const search_opts *opts,
                             const device_limits *dev, fa4_context *ctx,
                             struct progress *prog)
{
    size_t cells = (size_t)(r->ntrials ? r->ntrials : 1);
    int i, nth;

    memset(p, 0, sizeof *p);
    p->r = r;
    p->opts = opts;
    p->dev = dev;
    p->ctx = ctx;
    p->prog = prog;
    p->idx = malloc(cells * sizeof *p->idx);
    p->state = calloc(cells, 1);
    p->outcome = calloc(cells, 1);
    if (!p->idx || !p->state || !p->outcome) {
        free(p->idx);
        free(p->state);
        free(p->outcome);
        return FA4_ENOMEM;
    }
    for (i = 0; i < r->ntrials; i++)
        if (r->trials[i].selected) {
            search_trial *t = &r->trials[i];
            p->idx[p->n++] = i;
            t->done = 1;
            if (jit_key(t->key, dev->arch, &r->problem, &t->config,
                        &t->layout) != FA4_OK)
                t->key[0] = '\0';
        }
    progress_add(prog, p->n);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->built, NULL);
    nth = opts->jobs < 1 ? 1 : opts->jobs > 256 ? 256 : opts->jobs;
    if (nth > p->n)
        nth = p->n;
    p->active = nth;
    for (i = 0; i < nth; i++)
        if (pthread_create(&p->th[p->nth], NULL, build_worker, p) == 0)
            p->nth++;
    if (p->nth < nth) {
        pthread_mutex_lock(&p->lock);
        p->active -= nth - p->nth;
        pthread_mutex_unlock(&p->lock);
    }
    if (p->nth == 0 && p->n > 0) {
        p->active = 1;
        build_worker(p);
    }
    return FA4_OK;
}

/*
** Wait until trial I of the round is built: 0, or -1 when it never will
** be (the builds stopped first).  The wait goes into the search's
** waiting time; this thread's core goes to the compiles meanwhile.
*/
static int pool_wait(pool *p, int i)
{
    double t0 = 0;
    int st;

    pthread_mutex_lock(&p->lock);
    while (p->state[i] != POOL_BUILT &&
           !(p->state[i] == POOL_WAITING && p->active == 0)) {
        if (t0 == 0) {
            t0 = search_now();
            builds_hold(-1);
        }
        pthread_cond_wait(&p->built, &p->lock);
    }
    st = p->state[i] == POOL_BUILT ? 0 : -1;
    pthread_mutex_unlock(&p->lock);
    if (t0 > 0) {
        builds_hold(1);
        p->r->phases.waiting += search_now() - t0;
    }
    return st;
}

/* Wait for the build threads (QUIT: they take no more trials and finish
** the builds they have).  Again after that: nothing. */
static void pool_join(pool *p, int quit)
{
    int i;

    pthread_mutex_lock(&p->lock);
    if (quit)
        p->quit = 1;
    pthread_mutex_unlock(&p->lock);
    for (i = 0; i < p->nth; i++)
        pthread_join(p->th[i], NULL);
    p->nth = 0;
}

/*
** End the round's builds (pool_join) and count them.  Trials never taken
** go back to "not tried".
*/
static void pool_end(pool *p, int quit)
{
    search_result *r = p->r;
    int i;

    pool_join(p, quit);
    pthread_cond_destroy(&p->built);
    pthread_mutex_destroy(&p->lock);
    for (i = 0; i < p->n; i++) {
        int x = p->idx[i];
        if (p->state[x] != POOL_BUILT) {
            r->trials[x].done = 0;
            progress_add(p->prog, -1);
            continue;
        }
        switch (p->outcome[x]) {
        case OUTCOME_SPILL:  r->spilled++; break;
        case OUTCOME_FAILED: r->compile_failed++; break;
        default:             r->compiled++; break;
        }
    }
    free(p->idx);
    free(p->state);
    free(p->outcome);
    p->idx = NULL;
    p->state = p->outcome = NULL;
}

fa4_status search_compile_only(search_result *r, const device_limits *dev,
                               const search_opts *opts, struct progress *prog)
{
    pool p;
    fa4_status st = pool_start(&p, r, opts, dev, NULL, prog);

    if (st == FA4_OK)
        pool_end(&p, 0);
    return st;
}

/* ------------------------------------------------------- verification */

fa4_problem search_verify_problem(const fa4_problem *p, int sm_count)
{
    fa4_problem v = *p;
    int group = p->heads_q / (p->heads_kv > 0 ? p->heads_kv : 1);
    int sq = p->seqlen_q, sk = p->seqlen_k, mblocks, bh, limit;
    const int cap = 1000;   /* 15 x 64 + 40: ragged against every tile */

    v.heads_kv = p->heads_kv > 1 ? 2 : 1;
    v.heads_q = group * v.heads_kv;
    if (sq == sk) {
        v.seqlen_q = v.seqlen_k = sq < cap ? sq : cap;
    } else if (sq < sk) {
        v.seqlen_q = sq < cap ? sq : cap;
        v.seqlen_k = sk < cap + 100 ? sk : cap + 100;
        if (v.seqlen_k <= v.seqlen_q)
            v.seqlen_k = v.seqlen_q + 1;
    } else {
        v.seqlen_k = sk < cap ? sk : cap;
        v.seqlen_q = sq < cap + 100 ? sq : cap + 100;
        if (v.seqlen_q <= v.seqlen_k)
            v.seqlen_q = v.seqlen_k + 1;
    }
    /* At least 4 x SMs tiles even at 256 query rows per CTA: a persistent
       or dynamic grid is then min(tiles, SMs) CTAs of several tiles each. */
    mblocks = (v.seqlen_q + 255) / 256;
    bh = (4 * (sm_count > 0 ? sm_count : 132) + mblocks - 1) / mblocks;
    v.batch = (bh + v.heads_q - 1) / v.heads_q;
    if (v.batch < 1)
        v.batch = 1;
    /* A window wider than the problem would mask nothing: shrink it so
       the masking code runs. */
    limit = v.seqlen_k / 3;
    if (v.window_left > limit)
        v.window_left = limit;
    if (!v.causal && v.window_right > limit)
        v.window_right = limit;
    memset(v.q_strides, 0, sizeof v.q_strides);
    memset(v.k_strides, 0, sizeof v.k_strides);
    memset(v.v_strides, 0, sizeof v.v_strides);
    memset(v.o_strides, 0, sizeof v.o_strides);
    /* A paged cache's table and pool follow the shorter keys. */
    v.block_table_stride = 0;
    v.num_pages = 0;
    problem_resolve(&v, &v, NULL, 0);
    return v;
}

/*
** Inputs, sampled reference rows and device buffers of the verification.
** The tensors are laid out as the problem says (layout.h, with ragged
** lengths: varlen sequences and paged caches of different lengths, the
** pages shuffled).  The whole output is scanned for NaN (unwritten
** tiles); the reference is computed for a few rows of every (sequence,
** head): a tile's first row and the previous tile's last at 64-row
** boundaries (every bm is a multiple of 64), spread over the heads so
** every boundary is covered, and two pseudo-random rows.  Each sequence
** is gathered into a dense problem of its own for the reference
** (through the block table when paged), so the reference needs no
** notion of packing or pages.  Softcapping comes with the problem, the
** sink logits and fp8 descale factors with the layout (uploaded with its
** index arrays).  Inputs are ref_fill_inputs()'s in the problem's dtype
** (fp8: N(0, 1) e4m3 values), O is read in dtype_out().
*/
typedef struct verifier {
    fa4_problem p;
    tune_layout lay;
    int dv;
    size_t no, nlse;                /* elements of O and LSE */
    void *host_out;
    float *host_lse;
    int *rows;                      /* checked (b * heads_q + h) * sq + i */
    int nrows;
    double *ref_o;                  /* [nrows][dv] */
    double *ref_lse;                /* [nrows] */
    CUdeviceptr q, k, v, o, lse, index;
} verifier;

/* Release V's host and device memory. */
static void verifier_free(verifier *v, const cuda_api *cu)
{
    free(v->host_out);
    free(v->host_lse);
    free(v->rows);
    free(v->ref_o);
    free(v->ref_lse);
    layout_free(&v->lay);
    if (cu) {
        if (v->q) cu->cuMemFree(v->q);
        if (v->k) cu->cuMemFree(v->k);
        if (v->v) cu->cuMemFree(v->v);
        if (v->o) cu->cuMemFree(v->o);
        if (v->lse) cu->cuMemFree(v->lse);
        if (v->index) cu->cuMemFree(v->index);
    }
    memset(v, 0, sizeof *v);
}

/* The rows of (batch, head) pair J to check into OUT (at most 4, distinct);
** returns how many. */
static int rows_of(int *out, int j, int sq)
{
    int nb = (sq + 63) / 64, r0 = 64 * (j % nb), cand[4], n = 0, a, b;

    cand[0] = r0;
    cand[1] = r0 > 0 ? r0 - 1 : sq - 1;
    cand[2] = (int)(((long)j * 7919 + 13) % sq);
    cand[3] = sq - 1 - (int)(((long)j * 131) % sq);
    for (a = 0; a < 4; a++) {
        for (b = 0; b < n && out[b] != cand[a]; b++)
            ;
        if (b == n)
            out[n++] = cand[a];
    }
    return n;
}

/*
** The reference of V's sampled rows from the inputs Q, K, VV as laid
** out: sequence by sequence, gathered into dense buffers.  0, or -1 when
** out of host memory.
*/
static int verifier_reference(verifier *v, const void *q, const void *k,
                              const void *vv)
{
    const fa4_problem *p = &v->p;
    const tune_layout *l = &v->lay;
    const size_t e = (size_t)l->in_bytes;
    void *gq = malloc((size_t)p->seqlen_q * p->heads_q * p->head_dim_qk * e);
    void *gk = malloc((size_t)p->seqlen_k * p->heads_kv * p->head_dim_qk * e);
    void *gv = malloc((size_t)p->seqlen_k * p->heads_kv * v->dv * e);
    int b, h, x;

    if (!gq || !gk || !gv) {
        free(gq);
        free(gk);
        free(gv);
        return -1;
    }
    for (b = 0; b < p->batch; b++) {
        fa4_problem sp = layout_sequence(l, p, b);

        layout_gather(l, b, q, k, vv, gq, gk, gv);
        for (h = 0; h < p->heads_q; h++) {
            int j = b * p->heads_q + h, rows[4], n = rows_of(rows, j, sp.seqlen_q);
            for (x = 0; x < n; x++) {
                int r = v->nrows++;
                v->rows[r] = j * p->seqlen_q + rows[x];
                ref_attention_row_scaled(v->ref_o + (size_t)r * v->dv,
                                         &v->ref_lse[r], &sp, gq, gk, gv,
                                         l->sinks, layout_descale(l, 0, b),
                                         layout_descale(l, 1, b),
                                         layout_descale(l, 2, b), 0, rows[x], h);
            }
        }
    }
    free(gq);
    free(gk);
    free(gv);
    return 0;
}

/* Fresh random inputs from SEED, laid out; the reference of the sampled
** rows; device copies, the index arrays with them. */
static fa4_status verifier_init(verifier *v, fa4_context *ctx,
                                const fa4_problem *p, uint64_t seed,
                                char *why, size_t why_size)
{
    const cuda_api *cu = ctx->cu;
    const tune_layout *l = &v->lay;
    void *q = NULL, *k = NULL, *vv = NULL;
    size_t ie, oe;
    fa4_status st = FA4_ENOMEM;
    CUresult res = CUDA_SUCCESS;
    char text[256];
    int nbh = p->batch * p->heads_q;

    memset(v, 0, sizeof *v);
    v->p = *p;
    v->dv = p->head_dim_v ? p->head_dim_v : p->head_dim_qk;
    if (layout_build(&v->lay, p, LAYOUT_RAGGED) != 0) {
        snprintf(why, why_size, "out of host memory (verification layout)");
        goto done;
    }
    v->no = l->no;
    v->nlse = p->return_lse ? l->nlse : 0;
    ie = (size_t)l->in_bytes;
    oe = (size_t)l->out_bytes;
    q = malloc(l->nq * ie);
    k = malloc(l->nk * ie);
    vv = malloc(l->nv * ie);
    v->host_out = malloc(v->no * oe);
    v->rows = malloc((size_t)nbh * 4 * sizeof *v->rows);
    v->ref_o = malloc((size_t)nbh * 4 * v->dv * sizeof(double));
    v->ref_lse = malloc((size_t)nbh * 4 * sizeof(double));
    if (v->nlse)
        v->host_lse = malloc(v->nlse * sizeof(float));
    if (!q || !k || !vv || !v->host_out || !v->rows || !v->ref_o ||
        !v->ref_lse || (v->nlse && !v->host_lse)) {
        snprintf(why, why_size, "out of host memory (verification inputs)");
        goto done;
    }
    ref_fill_inputs(q, l->nq, p->dtype, &seed);
    ref_fill_inputs(k, l->nk, p->dtype, &seed);
    ref_fill_inputs(vv, l->nv, p->dtype, &seed);
    if (verifier_reference(v, q, k, vv) != 0) {
        snprintf(why, why_size, "out of host memory (verification reference)");
        goto done;
    }
    if ((st = layout_upload(&v->index, l, cu, why, why_size)) != FA4_OK)
        goto done;
    st = FA4_ECUDA;
    if ((res = cu->cuMemAlloc(&v->q, l->nq * ie)) ||
        (res = cu->cuMemAlloc(&v->k, l->nk * ie)) ||
        (res = cu->cuMemAlloc(&v->v, l->nv * ie)) ||
        (res = cu->cuMemAlloc(&v->o, v->no * oe)) ||
        (v->nlse && (res = cu->cuMemAlloc(&v->lse, v->nlse * 4))) ||
        (res = cu->cuMemcpyHtoD(v->q, q, l->nq * ie)) ||
        (res = cu->cuMemcpyHtoD(v->k, k, l->nk * ie)) ||
        (res = cu->cuMemcpyHtoD(v->v, vv, l->nv * ie))) {
        snprintf(why, why_size, "verification buffers (%.0f MiB): %s",
                 ((l->nq + l->nk + l->nv) * ie + v->no * oe) / 1048576.0,
                 cuda_error_text(res, text, sizeof text));
        if (res == CUDA_ERROR_OUT_OF_MEMORY)
            st = FA4_ENOMEM;
        goto done;
    }
    st = FA4_OK;
done:
    free(q);
    free(k);
    free(vv);
    if (st != FA4_OK)
        verifier_free(v, cu);
    return st;
}

/*
** Run T's verification plan and compare with the reference (verify.c).
** Returns FA4_OK with T's state set (verified or failed), or FA4_ECUDA
** with WHY when the device failed (the CUDA context is then unusable).
*/
static fa4_status verify_one(verifier *v, fa4_context *ctx, search_trial *t,
                             char *why, size_t why_size)
{
    const cuda_api *cu = ctx->cu;
    const fa4_problem *p = &v->p;
    fa4_tensors tn = FA4_TENSORS_INIT;
    verify_result vr;
    size_t bad, first = 0;
    char text[256];
    CUresult res;
    int r;

    /* 0xFF bytes are NaN in bf16, fp16 and float: an output the kernel
       did not write cannot pass for the previous candidate's. */
    if ((res = cu->cuMemsetD8(v->o, 0xFF, v->no * v->lay.out_bytes)) != CUDA_SUCCESS ||
        (v->nlse && (res = cu->cuMemsetD8(v->lse, 0xFF, v->nlse * 4)) != CUDA_SUCCESS))
        goto cuda_error;
    tn.q = (const void *)(uintptr_t)v->q;
    tn.k = (const void *)(uintptr_t)v->k;
    tn.v = (const void *)(uintptr_t)v->v;
    tn.o = (void *)(uintptr_t)v->o;
    tn.lse = v->nlse ? (float *)(uintptr_t)v->lse : NULL;
    layout_tensors(&tn, &v->lay, v->index);
    if (fa4_forward(t->vplan, &tn, NULL) != FA4_OK) {
        t->state = TRIAL_FAILED;
        snprintf(t->failure, sizeof t->failure, "launch: %s",
                 fa4_context_errmsg(ctx));
        /* A refused launch is this candidate's failure; an error that the
           synchronisation reports as well has broken the context. */
        if ((res = cu->cuCtxSynchronize()) != CUDA_SUCCESS) {
            snprintf(why, why_size, "%.300s; the CUDA context is unusable (%s)",
                     t->failure, cuda_error_text(res, text, sizeof text));
            return FA4_ECUDA;
        }
        return FA4_OK;
    }
    if ((res = cu->cuCtxSynchronize()) != CUDA_SUCCESS) {
        t->state = TRIAL_FAILED;
        snprintf(t->failure, sizeof t->failure, "launch: %s",
                 cuda_error_text(res, text, sizeof text));
        snprintf(why, why_size, "a candidate failed on the GPU (%s); the "
                 "CUDA context is unusable", text);
        return FA4_ECUDA;
    }
    if ((res = cu->cuMemcpyDtoH(v->host_out, v->o, v->no * v->lay.out_bytes)) != CUDA_SUCCESS ||
        (v->nlse && (res = cu->cuMemcpyDtoH(v->host_lse, v->lse, v->nlse * 4)) != CUDA_SUCCESS))
        goto cuda_error;
    verify_init(&vr, p->dtype, v->lay.out_dtype);
    bad = verify_nonfinite(v->host_out, v->no, v->lay.out_dtype, &first);
    verify_add_nonfinite(&vr, bad, first, "o");
    for (r = 0; r < v->nrows; r++) {
        int bh = v->rows[r] / p->seqlen_q, i = v->rows[r] % p->seqlen_q;
        int b = bh / p->heads_q, h = bh % p->heads_q;
        const char *row = (const char *)v->host_out +
            (layout_q_row(&v->lay, b, i) * p->heads_q + h) * v->dv * v->lay.out_bytes;
        verify_row(&vr, row, v->ref_o + (size_t)r * v->dv, v->dv,
                   v->nlse ? &v->host_lse[layout_lse_index(&v->lay, b, h, i)]
                           : NULL, v->ref_lse[r], b, i, h);
    }
    verify_finish(&vr);
    t->rel_err = vr.o_rel_err;
    if (!vr.pass) {
        char how[96];
        t->state = TRIAL_FAILED;
        snprintf(t->failure, sizeof t->failure, "wrong result: %s (batch %d, "
                 "%d heads, %d x %d, %s)", vr.msg, p->batch, p->heads_q,
                 p->seqlen_q, p->seqlen_k,
                 layout_describe(&v->lay, how, sizeof how));
        return FA4_OK;
    }
    t->state = TRIAL_VERIFIED;
    return FA4_OK;
cuda_error:
    snprintf(why, why_size, "verification: %s",
             cuda_error_text(res, text, sizeof text));
    return FA4_ECUDA;
}

/* ------------------------------------------------------------- storing */

/* A round's trial rows, written together when it ends. */
typedef struct trial_rows {
    db_trial *rows;
    int n;
} trial_rows;

/* Add T, a trial of R, to ROWS (which has room for every selected trial). */
static void add_row(trial_rows *rows, const search_result *r,
                    const search_trial *t)
{
    db_trial *dt = &rows->rows[rows->n++];

    memset(dt, 0, sizeof *dt);
    dt->config = t->config;
    dt->ok = t->state == TRIAL_TIMED;
    dt->failure = dt->ok ? NULL : t->failure;
    dt->median_ms = t->timing.median_ms;
    dt->min_ms = t->timing.min_ms;
    dt->max_ms = t->timing.max_ms;
    dt->reps = t->timing.reps * t->timing.groups;
    dt->tflops = t->timing.median_ms > 0
                 ? r->flops / (t->timing.median_ms * 1e-3) / 1e12 : 0;
    dt->max_rel_err = t->rel_err;
}

/* Write ROWS to CTX's database in one transaction and empty it.  FA4_OK
** or FA4_EDB with WHY. */
static fa4_status store_rows(search_result *r, fa4_context *ctx,
                             const search_opts *o, trial_rows *rows,
                             char *why, size_t why_size)
{
    double t0 = search_now();
    fa4_status st = FA4_OK;

    if (o->store && rows->n > 0)
        st = db_store_trials(context_db(ctx), &ctx->limits, &r->problem,
                             rows->rows, rows->n, why, why_size);
    rows->n = 0;
    r->phases.database += search_now() - t0;
    return st;
}

/* Index of the fastest timed trial, -1 when none. */
static int fastest(const search_result *r, int retimed_only)
{
    int i, best = -1;

    for (i = 0; i < r->ntrials; i++) {
        const search_trial *t = &r->trials[i];
        if (t->state != TRIAL_TIMED || (retimed_only && t->retimed.reps == 0))
            continue;
        if (best < 0 || search_trial_ms(t) < search_trial_ms(&r->trials[best]))
            best = i;
    }
    return best;
}

/* Release T's plans and a cubin not loaded. */
static void release_trial(search_trial *t)
{
    fa4_plan_destroy(t->vplan);
    fa4_plan_destroy(t->plan);
    t->vplan = t->plan = NULL;
    free(t->cubin);
    t->cubin = NULL;
    t->cubin_size = 0;
}

/* Release the plans of every trial in R. */
static void release_plans(search_result *r)
{
    int i;

    for (i = 0; i < r->ntrials; i++)
        release_trial(&r->trials[i]);
}

/*
** T's plans, full size and verification size, from its build: the module
** is loaded here, on the thread that times, so that no load meets a
** measurement on this context.  Sets T's state (failed, with the reason)
** and P's outcome for it.
*/
static void make_plans(pool *p, search_trial *t, const fa4_problem *vprob)
{
    fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
    fa4_context *ctx = p->ctx;
    double t0 = search_now();
    fa4_status st;

    po.config = &t->config;
    st = plan_create_cubin(&t->plan, ctx, &p->r->problem, &po, t->key,
                           t->cubin, t->cubin_size);
    if (st != FA4_OK) {
        build_failed(t, st, "", fa4_context_errmsg(ctx));
    } else if ((st = plan_create_cubin(&t->vplan, ctx, vprob, &po, t->key,
                                       t->cubin, t->cubin_size)) != FA4_OK) {
        build_failed(t, st, " (verification size)", fa4_context_errmsg(ctx));
        fa4_plan_destroy(t->plan);
        t->plan = NULL;
    }
    free(t->cubin);
    t->cubin = NULL;
    t->cubin_size = 0;
    if (st != FA4_OK) {
        pthread_mutex_lock(&p->lock);
        p->outcome[t - p->r->trials] = (unsigned char)outcome_of(t);
        pthread_mutex_unlock(&p->lock);
    }
    p->r->phases.loading += search_now() - t0;
}

/*
** Verify and time trial T (built, its plans made) as far as a stop
** allows; a trial the stop reached before its measurement goes back to
** "not tried".  Its row goes into ROWS unless it went back.  FA4_OK, or
** the device's fatal status with R->error set.
*/
static fa4_status measure_trial(pool *p, search_trial *t, verifier *v,
                                timing_buffers *tb, trial_rows *rows)
{
    search_result *r = p->r;
    fa4_context *ctx = p->ctx;
    const search_opts *o = p->opts;
    timing_opts to = { o->warmup, o->reps, o->groups };
    char why[512];
    double t0 = search_now();
    fa4_status st = FA4_OK;

    if (t->state == TRIAL_COMPILED && !pool_must_stop(p)) {
        st = verify_one(v, ctx, t, why, sizeof why);
        fa4_plan_destroy(t->vplan);
        t->vplan = NULL;
        if (st != FA4_OK) {
            r->launch_failed++;
            add_row(rows, r, t);
            snprintf(r->error, sizeof r->error, "%s", why);
            goto done;
        }
        if (t->state == TRIAL_FAILED && !strncmp(t->failure, "wrong", 5))
            r->wrong++;
        else if (t->state == TRIAL_FAILED)
            r->launch_failed++;
    }
    if (t->state == TRIAL_VERIFIED && !pool_must_stop(p)) {
        st = timing_measure(&t->timing, ctx, t->plan, tb, &to, why, sizeof why);
        if (st != FA4_OK) {
            t->state = TRIAL_FAILED;
            snprintf(t->failure, sizeof t->failure, "launch: %s", why);
            r->launch_failed++;
            add_row(rows, r, t);
            snprintf(r->error, sizeof r->error, "timing %s: %s",
                     t->is_default ? "the default" : "a candidate",
                     t->failure);
            st = FA4_ECUDA;
            goto done;
        }
        t->state = TRIAL_TIMED;
        r->timed++;
    }
    if (t->state == TRIAL_COMPILED || t->state == TRIAL_VERIFIED) {
        /* stopped before this one was measured: not a trial */
        release_trial(t);
        t->state = TRIAL_SKIPPED;
        t->done = 0;
        goto done;
    }
    if (t->state == TRIAL_FAILED)
        release_trial(t);
    add_row(rows, r, t);
done:
    r->phases.timing += search_now() - t0;
    return st;
}

/*
** One round on the GPU, its builds started (P): each selected trial in
** order, as soon as it is built, gets its plans, verification and timing,
** while the rest compile; then every trial of the round is stored in one
** transaction.  A stop lets the builds under way finish and stores their
** failures, as every trial measured.  Ends P.  FA4_OK, or the fatal
** status of the device or database (R->error set).
*/
static fa4_status run_round(pool *p, verifier *v, timing_buffers *tb)
{
    search_result *r = p->r;
    fa4_context *ctx = p->ctx;
    trial_rows rows = { NULL, 0 };
    char why[512];
    fa4_status st = FA4_OK, sst;
    int i, stop = 0;

    if (!(rows.rows = malloc((size_t)(r->ntrials ? r->ntrials : 1) *
                             sizeof *rows.rows))) {
        pool_end(p, 1);
        release_plans(r);
        snprintf(r->error, sizeof r->error, "out of memory");
        return FA4_ENOMEM;
    }
    for (i = 0; i < r->ntrials && st == FA4_OK; i++) {
        search_trial *t = &r->trials[i];

        if (!t->selected)
            continue;
        if (!stop && pool_must_stop(p)) {
            stop = 1;
            pool_join(p, 1);
        }
        if (stop ? p->state[i] != POOL_BUILT : pool_wait(p, i) != 0)
            continue;
        if (t->state == TRIAL_SKIPPED)
            continue;
        if (t->state == TRIAL_COMPILED && !stop)
            make_plans(p, t, &v->p);
        /* after a stop, a build that worked is not measured and goes back
           to "not tried"; one that failed is stored */
        st = measure_trial(p, t, v, tb, &rows);
    }
    pool_end(p, st != FA4_OK);
    /* Trials built after an error ended the loop: not measured. */
    for (i = 0; i < r->ntrials; i++) {
        search_trial *t = &r->trials[i];
        if (t->selected && t->state == TRIAL_COMPILED && !t->plan) {
            release_trial(t);
            t->state = TRIAL_SKIPPED;
            t->done = 0;
        }
    }
    sst = store_rows(r, ctx, p->opts, &rows, why, sizeof why);
    free(rows.rows);
    if (st != FA4_OK)
        return st;
    if (sst != FA4_OK) {
        snprintf(r->error, sizeof r->error, "storing a trial: %s", why);
        return sst;
    }
    return FA4_OK;
}

/* Re-time the top OPTS->retime trials; they compete on the new medians. */
static fa4_status retime_top(search_result *r, fa4_context *ctx,
                             const search_opts *o, timing_buffers *tb)
{
    timing_opts to = { o->warmup, o->reps, o->groups };
    int k, i;
    char why[512];

    if (o->retime < 2 || r->timed < 2)
        return FA4_OK;
    for (k = 0; k < o->retime; k++) {
        int best = -1;
        for (i = 0; i < r->ntrials; i++) {
            search_trial *t = &r->trials[i];
            if (t->state != TRIAL_TIMED || t->retimed.reps > 0)
                continue;
            if (best < 0 || t->timing.median_ms < r->trials[best].timing.median_ms)
                best = i;
        }
        if (best < 0 || must_stop(r, o))
            break;
        if (timing_measure(&r->trials[best].retimed, ctx, r->trials[best].plan,
                           tb, &to, why, sizeof why) != FA4_OK) {
            snprintf(r->error, sizeof r->error, "re-timing: %s", why);
            return FA4_ECUDA;
        }
    }
    /* The default's and the config in use's re-timing, when they were not
       among the top, keep the comparisons like for like. */
    for (i = 0; i < r->ntrials; i++) {
        search_trial *d = &r->trials[i];
        if (!(d->is_default || d->is_incumbent) || d->state != TRIAL_TIMED ||
            d->retimed.reps > 0 || must_stop(r, o))
            continue;
        if (timing_measure(&d->retimed, ctx, d->plan, tb, &to, why,
                           sizeof why) != FA4_OK) {
            snprintf(r->error, sizeof r->error, "re-timing: %s", why);
            return FA4_ECUDA;
        }
    }
    return FA4_OK;
}

/*
** The confirmation: re-time trial W (the winner) and trial D (the
** default) in alternation on fresh buffers (timing_interleaved) and set
** R's confirm fields: the winner holds when it is faster than the default
** in every round, by a median per-round gain of TIMING_MIN_GAIN or more
** (timing_pair_verdict).  Paired rounds, not the spread of each side's
** medians: the H100's clocks move between levels about 10% apart for
** many rounds at a time, which widened both sides' spread past gains
** that held in every single round.  FA4_OK, or FA4_ECUDA/FA4_ENOMEM with
** R->error.
*/
static fa4_status confirm_winner(search_result *r, fa4_context *ctx,
                                 const search_opts *o, int w, int d,
                                 uint64_t *seed)
{
    const fa4_plan *const plans[2] = { r->trials[w].plan, r->trials[d].plan };
    timing_buffers tb;
    timing_pair tp;
    char why[512];
    fa4_status st;
    double t0 = search_now();

    memset(&tb, 0, sizeof tb);
    st = timing_buffers_create(&tb, ctx, &r->problem, o->l2, seed, why,
                               sizeof why);
    r->phases.prepare += search_now() - t0;
    t0 = search_now();
    if (st == FA4_OK)
        st = timing_interleaved(&tp, ctx, plans, &tb, o->warmup, o->reps,
                                o->confirm_rounds, why, sizeof why);
    r->phases.timing += search_now() - t0;
    timing_buffers_free(&tb);
    if (st != FA4_OK) {
        snprintf(r->error, sizeof r->error, "confirming the winner: %s", why);
        return st;
    }
    r->confirm_rounds = tp.rounds;
    r->confirm_ms = tp.ms[0];
    r->confirm_rival_ms = tp.ms[1];
    r->confirm_gain = tp.gain;
    r->confirm_gain_lo = tp.gain_lo;
    r->confirm_gain_hi = tp.gain_hi;
    r->confirm_wins = tp.wins;
    r->confirm_spread = tp.spread[0] > tp.spread[1] ? tp.spread[0]
                                                    : tp.spread[1];
    r->confirm = timing_pair_verdict(&tp) == TIMING_HOLDS ? CONFIRM_HELD
                                                          : CONFIRM_REJECTED;
    return FA4_OK;
}

int search_rival(const search_result *r, int best)
{
    int i, d = r->default_index;

    /* The config in use, when measured, is what a winner must beat; when
       it is the winner itself nothing replaces it, so there is no rival
       (confirming it against the default instead once stored the default
       over a config in use that beat it in 5 of 6 rounds). */
    for (i = 0; i < r->ntrials; i++)
        if (r->trials[i].is_incumbent && r->trials[i].state == TRIAL_TIMED)
            return i == best ? -1 : i;
    return d >= 0 && d != best && r->trials[d].state == TRIAL_TIMED ? d : -1;
}

/*
** Decide what to store for R's winner BEST: the winner itself when there
** is no measured rival (search_rival: the config in use, else the
** default; none when the winner is the config in use), or when the
** confirmation against it holds (or is off); the rival when it does not.
** So what a lookup got before the run is replaced only by a config that
** beat it in every round.
*/
static fa4_status choose_stored(search_result *r, fa4_context *ctx,
                                const search_opts *o, int best,
                                uint64_t *seed)
{
    int d = search_rival(r, best);
    fa4_status st;

    r->stored_index = best;
    r->stored_ms = search_trial_ms(&r->trials[best]);
    r->rival_index = d;
    if (d < 0 && r->trials[best].is_default) {
        r->confirm = CONFIRM_DEFAULT_WON;
        return FA4_OK;
    }
    if (d < 0 && r->trials[best].is_incumbent) {
        r->confirm = CONFIRM_IN_USE_WON;
        return FA4_OK;
    }
    if (d < 0 || !r->trials[d].plan) {
        r->confirm = CONFIRM_NO_DEFAULT;
        return FA4_OK;
    }
    if (o->confirm_rounds <= 0 || search_stop) {
        r->confirm = CONFIRM_NOT_RUN;
        return FA4_OK;
    }
    if ((st = confirm_winner(r, ctx, o, best, d, seed)) != FA4_OK)
        return st;
    if (r->confirm == CONFIRM_HELD) {
        r->stored_ms = r->confirm_ms;
    } else {
        r->stored_index = d;
        r->stored_ms = r->confirm_rival_ms;
    }
    return FA4_OK;
}

/*
** Start the builds of R's selected trials, then (FIRST) the inputs of the
** search while they compile.  FA4_OK with P started, or the status with
** R->error set and nothing left running.
*/
static fa4_status start_round(pool *p, search_result *r, fa4_context *ctx,
                              const search_opts *o, struct progress *prog,
                              int first, verifier *v, const fa4_problem *vp,
                              timing_buffers *tb, uint64_t *seed)
{
    char why[512];
    fa4_status st;
    double t0;

    if ((st = pool_start(p, r, o, &ctx->limits, ctx, prog)) != FA4_OK) {
        snprintf(r->error, sizeof r->error, "out of memory");
        return st;
    }
    if (!first)
        return FA4_OK;
    t0 = search_now();
    if ((st = verifier_init(v, ctx, vp, *seed, why, sizeof why)) == FA4_OK)
        st = timing_buffers_create(tb, ctx, &r->problem, o->l2, seed, why,
                                   sizeof why);
    r->phases.prepare += search_now() - t0;
    if (st != FA4_OK) {
        snprintf(r->error, sizeof r->error, "%s", why);
        pool_end(p, 1);
        release_plans(r);
    }
    return st;
}

int search_add_incumbent(search_result *r, const fa4_config *cur,
                         const device_limits *dev)
{
    fa4_layout lay;
    search_trial t;
    char why[512];
    int i, at = -1, family_searched = 0;
    const int pos = r->default_index == 0 ? 1 : 0;

    for (i = 0; i < r->ntrials; i++) {
        family_searched |= r->trials[i].config.family == cur->family;
        if (at < 0 && config_equal(&r->trials[i].config, cur))
            at = i;
    }
    if (!family_searched)
        return -1;
    if (at < 0) {
        if (budget_fit(&lay, dev, &r->problem, cur, why, sizeof why) != FA4_OK ||
            add_trial(r, cur, &lay) != 0)
            return -1;
        at = r->ntrials - 1;
    }
    r->trials[at].is_incumbent = 1;
    if (at > pos) {
        t = r->trials[at];
        memmove(&r->trials[pos + 1], &r->trials[pos], (size_t)(at - pos) * sizeof t);
        r->trials[pos] = t;
        at = pos;
    }
    return at;
}

/* Look up what the database gives a plan for R's problem today (R->in_use,
   R->in_use_source; nothing without a database or a row) and race it:
   search_add_incumbent(). */
static void add_incumbent(search_result *r, fa4_context *ctx)
{
    char why[512];
    double t0 = search_now();

    if (ctx->db && db_lookup(context_db(ctx), &r->in_use, &r->in_use_source, &ctx->limits,
                             &r->problem, why, sizeof why) == FA4_OK)
        search_add_incumbent(r, &r->in_use, &ctx->limits);
    else
        r->in_use_source = 0;   /* no row: the lookup may have written it */
    r->phases.database += search_now() - t0;
}

/*
** Say how this run's winner relates to the one already stored for the
** same key (the user database's exact row that add_incumbent() found):
** the same config, another whose time in this run lies inside the new
** winner's min..max spread, outside it, or not measured.
*/
static void compare_previous(search_result *r, int best)
{
    const fa4_config *prev = &r->in_use;
    const timing_result *w = search_trial_timing(&r->trials[best]);
    int i;

    r->previous = PREVIOUS_NONE;
    if (r->in_use_source != FA4_SOURCE_USER_EXACT)
        return;
    fa4_config_format(prev, r->previous_config, sizeof r->previous_config);
    if (config_equal(prev, &r->trials[best].config)) {
        r->previous = PREVIOUS_SAME;
        return;
    }
    r->previous = PREVIOUS_NOT_MEASURED;
    for (i = 0; i < r->ntrials; i++)
        if (r->trials[i].state == TRIAL_TIMED && config_equal(prev, &r->trials[i].config)) {
            r->previous_ms = search_trial_ms(&r->trials[i]);
            r->previous = r->previous_ms <= w->max_ms ? PREVIOUS_WITHIN_SPREAD : PREVIOUS_OUTSIDE_SPREAD;
        }
}

fa4_status search_tune(search_result *r, fa4_context *ctx,
                       const search_opts *o, struct progress *prog)
{
    verifier v;
    timing_buffers tb;
    pool p;
    fa4_problem vp = search_verify_problem(&r->problem, ctx->limits.sm_count);
    uint64_t seed = o->seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(r->index + 1));
    double start = search_now(), t0;
    char why[512];
    fa4_status st;
    int best;

    memset(&v, 0, sizeof v);
    memset(&tb, 0, sizeof tb);
    r->stored_index = -1;
    if ((st = context_push(ctx)) != FA4_OK) {
        snprintf(r->error, sizeof r->error, "%s", fa4_context_errmsg(ctx));
        return r->status = st;
    }
    /* This thread's own work (host and GPU) keeps a core from the
       compiles; pool_wait gives it back while it waits. */
    builds_hold(1);
    add_incumbent(r, ctx);
    search_select_first(r, o->strategy, o->max_trials);
    if ((st = start_round(&p, r, ctx, o, prog, 1, &v, &vp, &tb, &seed)) != FA4_OK ||
        (st = run_round(&p, &v, &tb)) != FA4_OK)
        goto done;
    if (o->strategy == TUNE_STRATEGY_COARSE && !r->interrupted &&
        !must_stop(r, o) && (best = fastest(r, 0)) >= 0) {
        int left = o->max_trials > 0 ? o->max_trials - r->timed : 0;
        if (o->max_trials == 0 || left > 0) {
            if (search_select_refine(r, best, left) > 0 &&
                ((st = start_round(&p, r, ctx, o, prog, 0, &v, &vp, &tb,
                                   &seed)) != FA4_OK ||
                 (st = run_round(&p, &v, &tb)) != FA4_OK))
                goto done;
        }
    }
    t0 = search_now();
    st = retime_top(r, ctx, o, &tb);
    r->phases.timing += search_now() - t0;
    if (st != FA4_OK)
        goto done;
    best = fastest(r, 1);
    if (best < 0)
        best = fastest(r, 0);
    r->winner = best;
    if (best < 0) {
        if (!r->interrupted)
            snprintf(r->error, sizeof r->error, "no candidate was %s",
                     r->compiled == 0 ? "built" : r->timed == 0 &&
                     r->wrong > 0 ? "correct" : "measured");
        goto done;
    }
    r->winner_ms = search_trial_ms(&r->trials[best]);
    compare_previous(r, best);
    if (r->interrupted)
        goto done;
    /* The confirmation runs on fresh buffers: release the search's first
       (device memory for two sets of large problems may not be there). */
    timing_buffers_free(&tb);
    verifier_free(&v, ctx->cu);
    if ((st = choose_stored(r, ctx, o, best, &seed)) != FA4_OK)
        goto done;
    if (o->store && r->stored_index >= 0) {
        t0 = search_now();
        st = db_store_winner(context_db(ctx), &ctx->limits, &r->problem,
                             &r->trials[r->stored_index].config, r->stored_ms,
                             r->flops / (r->stored_ms * 1e-3) / 1e12, why,
                             sizeof why);
        r->phases.database += search_now() - t0;
        if (st != FA4_OK) {
            snprintf(r->error, sizeof r->error, "storing the winner: %s", why);
            goto done;
        }
        r->winner_stored = 1;
    }
    st = FA4_OK;
done:
    release_plans(r);
    timing_buffers_free(&tb);
    verifier_free(&v, ctx->cu);
    builds_hold(-1);
    context_pop(ctx);
    r->seconds = search_now() - start;
    return r->status = st;
}

void search_result_free(search_result *r)
{
    release_plans(r);
    free(r->trials);
    r->trials = NULL;
    r->ntrials = 0;
}
