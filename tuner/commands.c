/*
** commands.c -- the subcommands of fa4-tune: tune (on GPUs, or a dry run
** that plans and compiles without one), space, and the database commands.
*/
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "context.h"
#include "db.h"
#include "device.h"
#include "jit.h"
#include "commands.h"
#include "problems.h"
#include "report.h"
#include "search.h"
#include "builds.h"
#include "split.h"

#define RUNNERS_UP 4

/* ---------------------------------------------------------------- SIGINT */

/* The first SIGINT asks the search to stop after the current trial. */
static void on_sigint(int sig)
{
    static const char msg[] =
        "\nfa4-tune: interrupted; stopping after the current trial and its "
        "database write (Ctrl-C again aborts)\n";
    ssize_t n;

    (void)sig;
    search_stop = 1;
    n = write(2, msg, sizeof msg - 1);
    (void)n;
    signal(SIGINT, SIG_DFL);
}

void tune_install_sigint(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
}

/* ---------------------------------------------------------------- helpers */

/* The limits to plan for: --arch's table, else device ARGS->device through
** the driver.  0, or 1 with the message on ERR. */
static int planning_limits(device_limits *dev, const tune_args *a, FILE *err)
{
    const cuda_api *cu;
    char why[512];

    if (a->arch) {
        if (device_limits_for_arch(dev, a->arch, why, sizeof why) != FA4_OK) {
            fprintf(err, "fa4-tune: %s: --arch: %s\n", a->cmd_name, why);
            return 1;
        }
        if (!dev->nvrtc_version)
            dev->nvrtc_version = jit_nvrtc_version();
        return 0;
    }
    if (cuda_load(&cu, why, sizeof why) != FA4_OK) {
        fprintf(err, "fa4-tune: %s: no GPU to read limits from (%s); name "
                "the target with --arch sm_80, sm_90a or sm_100a\n",
                a->cmd_name, why);
        return 1;
    }
    if (device_limits_query(dev, cu, a->device, why, sizeof why) != FA4_OK) {
        fprintf(err, "fa4-tune: %s: device %d: %s; name the target with "
                "--arch sm_80, sm_90a or sm_100a\n", a->cmd_name, a->device,
                why);
        return 1;
    }
    return 0;
}

const char *tune_db_path(const tune_args *a, char *buf, size_t size, FILE *err)
{
    const char *path = a->db_path ? a->db_path : db_default_path(buf, size);

    if (!path)
        fprintf(err, "fa4-tune: %s: no database path (set --db, FA4_DB, "
                "XDG_CACHE_HOME or HOME)\n", a->cmd_name);
    return path;
}

/* Check that the database at PATH can be written (tuning must not fall
** back to a read-only or in-memory store).  0, or 1 with the message. */
static int check_writable(const char *path, FILE *err)
{
    char warn[512] = "", why[512] = "";
    db *d = NULL;
    int bad;

    if (db_open(&d, path, NULL, 0, warn, sizeof warn, why, sizeof why) != FA4_OK) {
        fprintf(err, "fa4-tune: tune: database %s: %s\n", path, why);
        return 1;
    }
    bad = db_is_readonly(d) || strcmp(db_user_path(d), ":memory:") == 0;
    db_close(d);
    if (bad) {
        fprintf(err, "fa4-tune: tune: cannot write the database %s%s%s\n",
                path, warn[0] ? ": " : "", warn);
        return 1;
    }
    return 0;
}

/* The search options ARGS gives.  Every device's search gets all JOBS
** compile threads; builds_slots() bounds them together. */
static search_opts make_opts(const tune_args *a, double start)
{
    search_opts o;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);

    memset(&o, 0, sizeof o);
    o.jobs = a->jobs ? a->jobs : (int)(cores > 0 ? cores : 1);
    o.max_trials = a->max_trials;
    o.strategy = a->strategy;
    o.deadline = a->time_budget_s > 0 ? start + a->time_budget_s : 0;
    o.warmup = 5;
    o.reps = a->reps;
    o.groups = a->groups;
    o.l2 = a->l2_warm ? TIMING_L2_WARM : TIMING_L2_ROTATE;
    o.retime = a->retime;
    o.confirm_rounds = a->confirm_rounds;
    o.seed = a->seed_set ? a->seed
             : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
    o.family = a->family;
    o.store = 1;
    return o;
}

/* --------------------------------------------------------------- dry run */

/* tune --dry-run: the space, budgets and NVRTC compiles of every
** candidate for the named arch; nothing runs and nothing is stored. */
static int tune_dry_run(const tune_args *a, problem_list *pl, FILE *out,
                        FILE *err)
{
    device_limits dev;
    search_opts o;
    progress prog;
    json_t *doc = NULL, *arr = NULL;
    int i, rc = TUNE_EXIT_OK;

    if (planning_limits(&dev, a, err))
        return TUNE_EXIT_FAIL;
    if (jit_nvrtc_version() == 0) {
        fprintf(err, "fa4-tune: tune --dry-run: NVRTC is not available "
                "(libnvrtc could not be loaded); nothing can be compiled\n");
        return TUNE_EXIT_FAIL;
    }
    o = make_opts(a, search_now());
    o.store = 0;
    search_stop = 0;
    tune_install_sigint();
    progress_init(&prog, isatty(2) && !a->quiet);
    if (a->json) {
        doc = json_pack("{s:s, s:s, s:b, s:o}", "tool", "fa4-tune",
                        "version", fa4_version(), "dry_run", 1,
                        "device", report_device_json(&dev));
        arr = json_array();
        json_object_set_new(doc, "problems", arr);
    }
    for (i = 0; i < pl->count && !search_stop; i++) {
        search_result r;

        if (search_space(&r, &dev, &pl->items[i].problem, a->family) == FA4_OK) {
            snprintf(r.name, sizeof r.name, "%s", pl->items[i].name);
            r.index = pl->items[i].index;
            search_select_first(&r, a->strategy, a->max_trials);
            search_compile_only(&r, &dev, &o, &prog);
        } else {
            snprintf(r.name, sizeof r.name, "%s", pl->items[i].name);
            rc = TUNE_EXIT_FAIL;
        }
        progress_lock(&prog);
        if (r.status != FA4_OK)
            fprintf(err, "fa4-tune: tune --dry-run: %s: %s\n", r.name, r.error);
        if (arr)
            json_array_append_new(arr, report_json(&r, "dry-run", 0));
        else if (!a->quiet && r.status == FA4_OK)
            report_dryrun(out, &r, &dev);
        fflush(out);
        progress_unlock(&prog);
        search_result_free(&r);
    }
    signal(SIGINT, SIG_DFL);
    if (doc) {
        json_object_set_new(doc, "interrupted", json_boolean(search_stop));
        json_dumpf(doc, out, JSON_INDENT(2));
        fputc('\n', out);
        json_decref(doc);
    }
    progress_destroy(&prog);
    if (search_stop) {
        fprintf(err, "fa4-tune: interrupted\n");
        return TUNE_EXIT_INTERRUPTED;
    }
    return rc;
}

/* ------------------------------------------------------------ GPU workers */

/* State shared by the per-device worker threads. */
typedef struct tune_run {
    const tune_args *args;
    problem_list *pl;
    search_result *results;     /* one per problem, by position in pl */
    int *started;               /* 1: a worker took problem i */
    int *current;               /* per worker: the problem it tunes, -1 */
    int *class_of;              /* per problem: its class (split.h) */
    int nworkers;
    int abort_all;              /* a database error: every worker stops */
    pthread_mutex_t lock;
    search_opts opts;
    progress prog;
    FILE *out, *err;
} tune_run;

/* Where a worker's time went (seconds), for --json: its problems'
** phases summed, and its own. */
typedef struct worker_time {
    double setup;               /* its context: CUDA primary context, database */
    double seconds;             /* from the start of the work to its end */
    double end;                 /* search_now() when it ran out of work */
    int problems;
    search_phases phases;
} worker_time;

typedef struct tune_worker {
    tune_run *run;
    fa4_context *ctx;
    int device;
    int slot;                   /* index into run->current */
    const char *db_path;
    char error[1100];
    worker_time time;
} tune_worker;

/* Add the phases of one search to a worker's. */
static void add_phases(search_phases *sum, const search_phases *ph)
{
    sum->prepare += ph->prepare;
    sum->waiting += ph->waiting;
    sum->loading += ph->loading;
    sum->timing += ph->timing;
    sum->database += ph->database;
    sum->compile += ph->compile;
    sum->slot_wait += ph->slot_wait;
    sum->shared_wait += ph->shared_wait;
    sum->cache_io += ph->cache_io;
    sum->compiles += ph->compiles;
    sum->reused += ph->reused;
}

/* One device's thread: take problems until none is left or a stop. */
static void *worker_main(void *arg)
{
    tune_worker *w = arg;
    tune_run *run = w->run;
    double start = search_now();
    int last = -1;

    for (;;) {
        search_result *r;
        tune_problem *tp;
        int i;

        pthread_mutex_lock(&run->lock);
        run->current[w->slot] = -1;
        if (run->abort_all || search_stop ||
            (run->opts.deadline > 0 && search_now() >= run->opts.deadline) ||
            (i = split_next(run->pl->count, run->class_of, run->started,
                            run->nworkers, run->current, w->slot, last)) < 0) {
            pthread_mutex_unlock(&run->lock);
            break;
        }
        run->started[i] = 1;
        run->current[w->slot] = i;
        pthread_mutex_unlock(&run->lock);
        last = run->class_of[i];

        tp = &run->pl->items[i];
        r = &run->results[i];
        if (search_space(r, &w->ctx->limits, &tp->problem, run->args->family) == FA4_OK) {
            snprintf(r->name, sizeof r->name, "%s", tp->name);
            r->index = tp->index;
            search_tune(r, w->ctx, &run->opts, &run->prog);
            add_phases(&w->time.phases, &r->phases);
        } else {
            snprintf(r->name, sizeof r->name, "%s", tp->name);
            r->index = tp->index;
        }
        w->time.problems++;
        progress_lock(&run->prog);
        if (!run->args->json && !run->args->quiet) {
            if (run->args->ndevices > 1 || run->args->all_devices)
                fprintf(run->out, "[device %d: %s]\n", w->device,
                        w->ctx->limits.name);
            report_tune(run->out, r, RUNNERS_UP);
            fflush(run->out);
        }
        if (r->status != FA4_OK)
            fprintf(run->err, "fa4-tune: tune: %s on device %d: %s\n",
                    r->name, w->device, r->error);
        progress_unlock(&run->prog);
        if (r->status == FA4_EDB) {
            pthread_mutex_lock(&run->lock);
            run->abort_all = 1;
            pthread_mutex_unlock(&run->lock);
            break;
        }
        if (r->status == FA4_ECUDA) {
            /* The CUDA context is unusable: this device stops; the others
               carry on with the remaining problems. */
            snprintf(w->error, sizeof w->error, "device %d stopped: %s",
                     w->device, r->error);
            break;
        }
    }
    w->time.end = search_now();
    w->time.seconds = w->time.end - start;
    return NULL;
}

/* A worker's context, made on a thread of its own: the devices' primary
** contexts start at the same time.  The error text stays in W->error. */
static void *make_context(void *arg)
{
    tune_worker *w = arg;
    fa4_context_options co = FA4_CONTEXT_OPTIONS_INIT;
    double t0 = search_now();
    fa4_status st;

    co.db_path = w->db_path;
    st = fa4_context_create(&w->ctx, w->device, &co);
    if (st != FA4_OK) {
        snprintf(w->error, sizeof w->error, "%s device %d: %s%s",
                 st == FA4_ENODEV ? "no CUDA" : "cannot use", w->device,
                 fa4_context_last_error(),
                 st == FA4_ENODEV ? " (to plan without a GPU: --dry-run "
                                    "--arch sm_90a)" : "");
        w->ctx = NULL;
    }
    w->time.setup = search_now() - t0;
    return NULL;
}

/* Destroy a worker's context, on a thread of its own as make_context()
** made it: the devices' module unloads and context releases overlap. */
static void *drop_context(void *arg)
{
    tune_worker *w = arg;

    fa4_context_destroy(w->ctx);
    w->ctx = NULL;
    return NULL;
}

/* Worker W's time as JSON; END is when the last worker finished. */
static json_t *worker_json(const tune_worker *w, int ordinal, double end)
{
    const worker_time *t = &w->time;
    const search_phases *ph = &t->phases;
    /* the space, the reports, the searches' selection and sorting */
    double other = t->seconds - (ph->prepare + ph->waiting + ph->loading +
                                 ph->timing + ph->database);

    return json_pack("{s:i, s:i, s:f, s:{s:f, s:f, s:f, s:f, s:f, s:f, s:f,"
                     " s:f}, s:o}",
                     "device", ordinal, "problems", t->problems,
                     "seconds", t->seconds,
                     "phases", "setup", t->setup, "prepare", ph->prepare,
                     "waiting", ph->waiting, "loading", ph->loading,
                     "timing", ph->timing, "database", ph->database,
                     "other", other > 0 ? other : 0.0,
                     "idle", t->end > 0 && end > t->end ? end - t->end : 0.0,
                     "builds", report_builds_json(ph));
}

/* The device ordinals to use into OUT; returns the count, or -1 with the
** message on ERR. */
static int resolve_devices(const tune_args *a, int *out, FILE *err)
{
    const cuda_api *cu;
    char why[512];
    int i, n = 0;

    if (!a->all_devices && a->ndevices == 0) {
        out[0] = a->device;
        return 1;
    }
    if (!a->all_devices) {
        for (i = 0; i < a->ndevices; i++)
            out[i] = a->devices[i];
        return a->ndevices;
    }
    if (cuda_load(&cu, why, sizeof why) != FA4_OK) {
        fprintf(err, "fa4-tune: tune: no CUDA device: %s (to plan without a "
                "GPU: --dry-run --arch sm_90a)\n", why);
        return -1;
    }
    if (cu->cuDeviceGetCount(&n) != CUDA_SUCCESS || n == 0) {
        fprintf(err, "fa4-tune: tune: --devices all: no CUDA device found "
                "(to plan without a GPU: --dry-run --arch sm_90a)\n");
        return -1;
    }
    if (n > TUNE_MAX_DEVICES)
        n = TUNE_MAX_DEVICES;
    for (i = 0; i < n; i++)
        out[i] = i;
    return n;
}

int cmd_tune(const tune_args *a, FILE *out, FILE *err)
{
    problem_list pl = { NULL, 0, 0 };
    tune_run run;
    tune_worker *workers = NULL;
    pthread_t *threads = NULL;
    int devices[TUNE_MAX_DEVICES];
    int ndev = 0, i, made = 0, rc = TUNE_EXIT_OK, tuned = 0, stored = 0;
    int not_started = 0, failed = 0;
    char why[1024], pathbuf[4096];
    const char *path = NULL;
    double start = search_now(), end;
    long compiles = jit_compile_count();

    memset(&run, 0, sizeof run);
    if (problems_build(&pl, a, why, sizeof why) != 0) {
        fprintf(err, "fa4-tune: tune: %s\n", why);
        problem_list_free(&pl);
        return TUNE_EXIT_USAGE;
    }
    if (pl.count == 0) {
        fprintf(err, "fa4-tune: tune: shard %d/%d has no problems; nothing "
                "to do\n", a->shard_index, a->shard_count);
        problem_list_free(&pl);
        return TUNE_EXIT_OK;
    }
    if (a->dry_run) {
        rc = tune_dry_run(a, &pl, out, err);
        problem_list_free(&pl);
        return rc;
    }
    /* Checks before any work: a writable database, then the devices. */
    path = tune_db_path(a, pathbuf, sizeof pathbuf, err);
    if (!path || check_writable(path, err)) {
        rc = TUNE_EXIT_FAIL;
        goto done;
    }
    if ((ndev = resolve_devices(a, devices, err)) < 0) {
        rc = TUNE_EXIT_FAIL;
        goto done;
    }
    workers = calloc((size_t)ndev, sizeof *workers);
    threads = calloc((size_t)ndev, sizeof *threads);
    run.results = calloc((size_t)pl.count, sizeof *run.results);
    run.started = calloc((size_t)pl.count, sizeof *run.started);
    run.current = calloc((size_t)ndev, sizeof *run.current);
    run.class_of = calloc((size_t)pl.count, sizeof *run.class_of);
    run.nworkers = ndev;
    if (!workers || !threads || !run.results || !run.started || !run.current ||
        !run.class_of) {
        fprintf(err, "fa4-tune: tune: out of memory\n");
        rc = TUNE_EXIT_FAIL;
        goto done;
    }
    split_classes(run.class_of, &pl);
    for (i = 0; i < ndev; i++) {
        workers[i].run = &run;
        workers[i].device = devices[i];
        workers[i].slot = i;
        workers[i].db_path = path;
        run.current[i] = -1;
    }
    for (made = 0; made < ndev; made++)
        if (pthread_create(&threads[made], NULL, make_context, &workers[made]) != 0)
            break;
    for (i = made; i < ndev; i++)
        make_context(&workers[i]);
    for (i = 0; i < made; i++)
        pthread_join(threads[i], NULL);
    for (i = 0; i < ndev; i++)
        if (!workers[i].ctx) {
            fprintf(err, "fa4-tune: tune: %s\n", workers[i].error);
            rc = TUNE_EXIT_FAIL;
        }
    if (rc != TUNE_EXIT_OK)
        goto done;
    for (i = 0; i < ndev; i++)
        if (fa4_context_warnings(workers[i].ctx)[0])
            fprintf(err, "fa4-tune: warning: %s",
                    fa4_context_warnings(workers[i].ctx));

    run.args = a;
    run.pl = &pl;
    run.opts = make_opts(a, start);
    builds_reset();
    builds_slots(run.opts.jobs);
    run.out = out;
    run.err = err;
    pthread_mutex_init(&run.lock, NULL);
    progress_init(&run.prog, isatty(2) && !a->quiet);
    if (!a->quiet && !a->json) {
        fprintf(out, "fa4-tune %s: %d problem%s", fa4_version(), pl.count,
                pl.count == 1 ? "" : "s");
        if (a->shard_count > 1)
            fprintf(out, " (shard %d/%d)", a->shard_index, a->shard_count);
        fprintf(out, " on %d device%s (%s%s), database %s, seed %llu\n", ndev,
                ndev == 1 ? "" : "s", workers[0].ctx->limits.name,
                ndev > 1 ? ", ..." : "", path,
                (unsigned long long)run.opts.seed);
        fflush(out);
    }
    search_stop = 0;
    tune_install_sigint();
    for (made = 0; made < ndev; made++)
        if (pthread_create(&threads[made], NULL, worker_main, &workers[made]) != 0)
            break;
    if (made == 0)
        worker_main(&workers[0]);
    for (i = 0; i < made; i++)
        pthread_join(threads[i], NULL);
    end = search_now();
    signal(SIGINT, SIG_DFL);
    progress_lock(&run.prog);
    progress_unlock(&run.prog);

    /* Summary. */
    for (i = 0; i < pl.count; i++) {
        if (!run.started[i]) {
            not_started++;
            continue;
        }
        if (run.results[i].winner >= 0)
            tuned++;
        if (run.results[i].winner_stored)
            stored++;
        if (run.results[i].status != FA4_OK ||
            (run.results[i].winner < 0 && !run.results[i].interrupted))
            failed++;
    }
    for (i = 0; i < ndev; i++)
        if (workers[i].error[0])
            fprintf(err, "fa4-tune: tune: %s\n", workers[i].error);
    if (a->json) {
        json_t *doc, *arr = json_array(), *devs = json_array(), *left = json_array();
        json_t *wk = json_array();
        for (i = 0; i < ndev; i++) {
            json_t *d = report_device_json(&workers[i].ctx->limits);
            json_object_set_new(d, "ordinal", json_integer(devices[i]));
            json_array_append_new(devs, d);
            json_array_append_new(wk, worker_json(&workers[i], devices[i], end));
        }
        for (i = 0; i < pl.count; i++) {
            if (run.started[i])
                json_array_append_new(arr, report_json(&run.results[i], "tune",
                                                       RUNNERS_UP));
            else
                json_array_append_new(left, json_string(pl.items[i].name));
        }
        doc = json_pack("{s:s, s:s, s:s, s:o, s:{s:i, s:i}, s:o, s:o, s:b,"
                        " s:f, s:i, s:i, s:o}",
                        "tool", "fa4-tune", "version", fa4_version(),
                        "database", path, "devices", devs,
                        "shard", "index", a->shard_index, "count", a->shard_count,
                        "problems", arr, "not_tuned", left,
                        "interrupted", (int)search_stop,
                        "seconds", search_now() - start,
                        "jobs", run.opts.jobs,
                        "compiles", (int)(jit_compile_count() - compiles),
                        "workers", wk);
        json_dumpf(doc, out, JSON_INDENT(2));
        fputc('\n', out);
        json_decref(doc);
    } else if (!a->quiet) {
        fprintf(out, "tuned %d of %d problems in %.0f s; %d winner%s stored "
                "in %s\n", tuned, pl.count, search_now() - start, stored,
                stored == 1 ? "" : "s", path);
    }
    if (not_started && !search_stop && !run.abort_all)
        fprintf(err, "fa4-tune: tune: --time-budget of %.0f s reached: %d "
                "problem%s not tuned (raise --time-budget, or use --strategy "
                "coarse)\n", a->time_budget_s, not_started,
                not_started == 1 ? "" : "s");
    if (search_stop) {
        fprintf(err, "fa4-tune: interrupted; what was measured is stored in "
                "%s\n", path);
        rc = TUNE_EXIT_INTERRUPTED;
    } else if (failed || run.abort_all || (not_started && !run.opts.deadline)) {
        rc = TUNE_EXIT_FAIL;
    }
    progress_destroy(&run.prog);
    pthread_mutex_destroy(&run.lock);
done:
    if (run.results)
        for (i = 0; i < pl.count; i++)
            search_result_free(&run.results[i]);
    builds_slots(0);
    builds_reset();
    free(run.results);
    free(run.started);
    free(run.current);
    free(run.class_of);
    for (made = 0; workers && threads && made < ndev; made++)
        if (pthread_create(&threads[made], NULL, drop_context, &workers[made]) != 0)
            break;
    for (i = made; workers && i < ndev; i++)
        drop_context(&workers[i]);
    for (i = 0; i < made; i++)
        pthread_join(threads[i], NULL);
    free(workers);
    free(threads);
    problem_list_free(&pl);
    return rc;
}

/* ----------------------------------------------------------------- space */

int cmd_space(const tune_args *a, FILE *out, FILE *err)
{
    device_limits dev;
    search_result r;
    char why[512];
    fa4_status st;

    if ((st = fa4_problem_check(&a->shape, why, sizeof why)) != FA4_OK) {
        fprintf(err, "fa4-tune: space: %s\n", why);
        return TUNE_EXIT_USAGE;
    }
    if (planning_limits(&dev, a, err))
        return TUNE_EXIT_FAIL;
    if (search_space(&r, &dev, &a->shape, a->family) != FA4_OK) {
        fprintf(err, "fa4-tune: space: %s\n", r.error);
        search_result_free(&r);
        return TUNE_EXIT_FAIL;
    }
    snprintf(r.name, sizeof r.name, "space");
    if (a->json) {
        json_t *doc = json_pack("{s:o, s:o}", "device", report_device_json(&dev),
                                "space", report_json(&r, "space", 0));
        json_dumpf(doc, out, JSON_INDENT(2));
        fputc('\n', out);
        json_decref(doc);
    } else {
        report_space(out, &r, &dev);
    }
    search_result_free(&r);
    return TUNE_EXIT_OK;
}

/* -------------------------------------------------------------- database */

int cmd_db(const tune_args *a, FILE *out, FILE *err)
{
    char pathbuf[4096], sysbuf[4096], warn[512] = "", why[1024] = "";
    const char *path = tune_db_path(a, pathbuf, sizeof pathbuf, err);
    const char *sys = NULL;
    char *text = NULL;
    int readonly, problems = 0, rc = TUNE_EXIT_OK;
    db *d = NULL;
    fa4_status st;

    readonly = a->cmd == TUNE_CMD_SHOW || a->cmd == TUNE_CMD_EXPORT ||
               a->cmd == TUNE_CMD_CHECK;
    if (a->cmd == TUNE_CMD_CHECK || (a->cmd == TUNE_CMD_SHOW && a->system))
        sys = db_default_system_path(sysbuf, sizeof sysbuf);
    if (!path)
        return TUNE_EXIT_FAIL;
    if (readonly && access(path, F_OK) != 0 &&
        !(a->cmd == TUNE_CMD_SHOW && a->system)) {
        fprintf(err, "fa4-tune: %s: no database at %s (tune first, or give "
                "--db PATH)\n", a->cmd_name, path);
        return TUNE_EXIT_FAIL;
    }
    if (db_open(&d, path, sys, readonly ? DB_READONLY : 0, warn, sizeof warn,
                why, sizeof why) != FA4_OK) {
        fprintf(err, "fa4-tune: %s: %s\n", a->cmd_name, why);
        return TUNE_EXIT_FAIL;
    }
    if (!readonly && (db_is_readonly(d) ||
                      strcmp(db_user_path(d), ":memory:") == 0)) {
        fprintf(err, "fa4-tune: %s: cannot write the database %s%s%s\n",
                a->cmd_name, path, warn[0] ? ": " : "", warn);
        db_close(d);
        return TUNE_EXIT_FAIL;
    }

    if (a->cmd == TUNE_CMD_SHOW && a->system && !db_system_path(d)) {
        /* The library resolves the path the same way (db_system_db_path). */
        if (sys)
            fprintf(err, "fa4-tune: show: no system database at %s%s\n", sys,
                    access(sys, F_OK) == 0 ? " (an empty file)" : "");
        else
            fprintf(err, "fa4-tune: show: no system database (FA4_SYSTEM_DB "
                    "is set but empty)\n");
        db_close(d);
        return TUNE_EXIT_FAIL;
    }
    switch (a->cmd) {
    case TUNE_CMD_SHOW:
        st = db_show(d, &text, a->table ? a->table : "winners",
                     (a->json ? DB_SHOW_JSON : 0) |
                     (a->system ? DB_SHOW_SYSTEM : 0), why, sizeof why);
        break;
    case TUNE_CMD_EXPORT:
        if (strcmp(a->file, "-") == 0)
            st = db_export_json_text(d, &text, a->trials ? DB_JSON_TRIALS : 0,
                                     why, sizeof why);
        else
            st = db_export_json(d, a->file, a->trials ? DB_JSON_TRIALS : 0,
                                why, sizeof why);
        break;
    case TUNE_CMD_IMPORT:
        st = db_import_json(d, a->file, NULL, &text, why, sizeof why);
        break;
    case TUNE_CMD_MERGE:
        if (access(a->file, R_OK) != 0) {
            snprintf(why, sizeof why, "cannot read %s", a->file);
            st = FA4_EDB;
            break;
        }
        st = db_merge(d, a->file, NULL, &text, why, sizeof why);
        break;
    case TUNE_CMD_CHECK:
        st = db_check(d, &text, &problems, why, sizeof why);
        break;
    default:
        st = FA4_EINVAL;
        snprintf(why, sizeof why, "not a database subcommand");
        break;
    }
    if (st != FA4_OK) {
        fprintf(err, "fa4-tune: %s: %s\n", a->cmd_name, why);
        rc = TUNE_EXIT_FAIL;
    }
    if (text && !(a->quiet && a->cmd != TUNE_CMD_SHOW && a->cmd != TUNE_CMD_EXPORT)) {
        size_t len = strlen(text);
        fputs(text, out);
        if (len && text[len - 1] != '\n')
            fputc('\n', out);
    }
    if (st == FA4_OK && a->cmd == TUNE_CMD_EXPORT && strcmp(a->file, "-") &&
        !a->quiet)
        fprintf(err, "fa4-tune: exported %s to %s\n", path, a->file);
    if (st == FA4_OK && a->cmd == TUNE_CMD_CHECK && problems > 0) {
        fprintf(err, "fa4-tune: check: %d problem%s in %s\n", problems,
                problems == 1 ? "" : "s", path);
        rc = TUNE_EXIT_FAIL;
    }
    free(text);
    db_close(d);
    return rc;
}
