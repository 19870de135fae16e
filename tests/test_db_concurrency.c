/*
** test_db_concurrency.c -- 8 processes open one new database at the same
** moment and each stores trials, winners and binaries while looking
** entries up; afterwards every row is there and no call failed (in
** particular none with "database is locked").  No GPU needed.
*/
#define _XOPEN_SOURCE 700

#include "tap.h"
#include "db.h"
#include "db_test_util.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NPROC 8
#define NITER 40

static device_limits dev;

/* The problem of worker W (its own seqlen bucket: 2^(8+W)). */
static fa4_problem problem(int w)
{
    fa4_problem p = FA4_PROBLEM_INIT;

    p.batch = 1;
    p.seqlen_q = p.seqlen_k = 256 << w;
    p.heads_q = p.heads_kv = 16;
    p.head_dim_qk = 128;
    return p;
}

/* Worker W: open, then NITER rounds of writes and reads.  Exit status 0
** when every call succeeded; the first failure goes to stderr. */
static int worker(const char *path, int w, int go)
{
    char warn[512], why[1024], key[17];
    fa4_problem p = problem(w);
    fa4_config c = FA4_CONFIG_INIT, got;
    fa4_config_source src;
    db *d = NULL;
    void *blob;
    size_t size;
    char byte;
    int i;

    if (read(go, &byte, 1) != 1)          /* start together */
        return 2;
    if (db_open(&d, path, NULL, 0, warn, sizeof warn, why, sizeof why) != FA4_OK
        || warn[0]) {
        fprintf(stderr, "worker %d: db_open: %s%s\n", w, why, warn);
        return 1;
    }
    c.family = FA4_FAMILY_SM80;
    c.bm = 128;
    c.bn = 64;
    c.stages = 2;
    c.warps = 4;
    for (i = 0; i < NITER; i++) {
        db_trial t;

        memset(&t, 0, sizeof t);
        t.config = c;
        t.ok = i % 5 != 0;
        t.failure = t.ok ? NULL : "spill: 64 bytes";
        t.median_ms = 1.0 + i;
        t.min_ms = 0.5 + i;
        t.max_ms = 2.0 + i;
        t.reps = w * 1000 + i;          /* identifies the row */
        t.tflops = 100;
        t.max_rel_err = 1e-3;
        if (db_store_trial(d, &dev, &p, &t, why, sizeof why) != FA4_OK)
            goto fail;
        c.bn = 64 + (i % 2) * 64;
        if (db_store_winner(d, &dev, &p, &c, 1.0 + i, 100, why, sizeof why)
            != FA4_OK)
            goto fail;
        snprintf(key, sizeof key, "%08x%08x", w, i);
        if (db_binary_put(d, key, "sm_80", key, sizeof key, why, sizeof why)
            != FA4_OK)
            goto fail;
        if (db_binary_get(d, &blob, &size, key, why, sizeof why) != FA4_OK ||
            size != sizeof key || memcmp(blob, key, size) != 0)
            goto fail;
        free(blob);
        /* Another worker's problem: may or may not be there yet. */
        p = problem((w + 1) % NPROC);
        if (db_lookup(d, &got, &src, &dev, &p, why, sizeof why) != FA4_OK &&
            !strstr(why, "no entry"))
            goto fail;
        p = problem(w);
        if (db_lookup(d, &got, &src, &dev, &p, why, sizeof why) != FA4_OK ||
            src != FA4_SOURCE_USER_EXACT)
            goto fail;
    }
    db_close(d);
    return 0;
fail:
    fprintf(stderr, "worker %d round %d: %s\n", w, i, why);
    db_close(d);
    return 1;
}

int main(void)
{
    char path[1024], sql[512];
    pid_t pids[NPROC];
    int go[2], w, i, failed = 0, missing = 0, status;

    plan_lazy();
    make_tmpdir();
    snprintf(path, sizeof path, "%s/shared/fa4.db", tmpdir);
    dev = test_device("NVIDIA H100 80GB HBM3", 90, 132);

    if (pipe(go) != 0) {
        printf("Bail out! pipe failed\n");
        return 1;
    }
    fflush(stdout);
    for (w = 0; w < NPROC; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            close(go[1]);
            _exit(worker(path, w, go[0]));
        }
    }
    close(go[0]);
    for (w = 0; w < NPROC; w++)     /* release them all at once */
        if (write(go[1], "g", 1) != 1)
            break;
    close(go[1]);
    for (w = 0; w < NPROC; w++) {
        if (waitpid(pids[w], &status, 0) != pids[w] || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            failed++;
    }
    is_int(failed, 0, "%d processes creating, writing and reading one "
           "database at once all succeed (no \"database is locked\")", NPROC);

    is_int(query_int(path, "SELECT count(*) FROM trials"), NPROC * NITER,
           "every trial is stored (%d)", NPROC * NITER);
    for (w = 0; w < NPROC; w++)
        for (i = 0; i < NITER; i++) {
            snprintf(sql, sizeof sql, "SELECT count(*) FROM trials WHERE "
                     "reps = %d AND seqlen_q = %d AND (ok = 1) = (%d %% 5 "
                     "!= 0)", w * 1000 + i, 256 << w, i);
            if (query_int(path, sql) != 1)
                missing++;
        }
    is_int(missing, 0, "each worker's trials are there exactly once, with "
           "their data");
    is_int(query_int(path, "SELECT count(*) FROM winners"), NPROC,
           "one winner per worker's problem key");
    is_int(query_int(path, "SELECT count(*) FROM winners WHERE median_ms = "
                     "40.0"), NPROC, "each winner is the last one stored");
    is_int(query_int(path, "SELECT count(*) FROM binaries"), NPROC * NITER,
           "every binary is stored");
    is_int(query_int(path, "SELECT count(*) FROM devices"), 1,
           "the device is recorded once");
    ok(query_int(path, "SELECT count(*) FROM pragma_integrity_check WHERE "
                 "integrity_check = 'ok'") == 1, "the integrity check passes");

    remove_tmpdir();
    return done_testing();
}
