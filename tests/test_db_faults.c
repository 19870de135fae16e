/*
** test_db_faults.c -- the database under faults: a location that cannot
** be written (fallback to an in-memory store with one warning), a
** read-only file (fallback to read-only), DB_READONLY, a corrupt file and
** a file that is not SQLite (FA4_EDB naming the file, left byte for byte
** as it was), a missing or corrupt system database, and a writer killed
** in the middle of its work (the database stays consistent and usable).
** No GPU needed.
*/
#define _XOPEN_SOURCE 700

#include "tap.h"
#include "db.h"
#include "db_test_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* 1 when the file PATH holds exactly the LEN bytes at WANT. */
static int same_bytes(const char *path, const char *want, size_t len)
{
    size_t n = 0;
    char *got = slurp(path, &n);
    int r = got && want && n == len && memcmp(got, want, len) == 0;

    free(got);
    return r;
}

static device_limits dev;
static fa4_problem prob;
static fa4_config cfg;

/* Store the test winner into D; the status. */
static fa4_status put(db *d, char *why, size_t n)
{
    return db_store_winner(d, &dev, &prob, &cfg, 1.0, 100.0, why, n);
}

/* Look the test problem up in D; the status. */
static fa4_status get(db *d, char *why, size_t n)
{
    fa4_config c;
    fa4_config_source src;

    return db_lookup(d, &c, &src, &dev, &prob, why, n);
}

/* Make a database at PATH holding the test winner; 1 on success. */
static int make_db(const char *path)
{
    return store_winner_file(path, &dev, &prob, &cfg, 1.0);
}

/* Child: store trials in a loop until killed. */
static void writer_loop(const char *path)
{
    db *d = NULL;
    char warn[512], why[512];
    db_trial t;
    int i;

    if (db_open(&d, path, NULL, 0, warn, sizeof warn, why, sizeof why) != FA4_OK)
        _exit(1);
    memset(&t, 0, sizeof t);
    t.config = cfg;
    t.ok = 1;
    t.median_ms = 1.0;
    for (i = 0;; i++) {
        t.reps = i;
        db_store_trial(d, &dev, &prob, &t, why, sizeof why);
    }
}

int main(void)
{
    char path[1024], bad[1024], text[1024], corrupt[1024], file[1024];
    char killed[1024], warn[2048], why[1024];
    char *before = NULL;
    size_t nbefore = 0;
    db *d = NULL;
    fa4_status st;
    pid_t pid;
    int status, fd;

    plan_lazy();
    make_tmpdir();
    dev = test_device("NVIDIA H100 80GB HBM3", 90, 132);
    prob = (fa4_problem)FA4_PROBLEM_INIT;
    prob.batch = 1;
    prob.seqlen_q = prob.seqlen_k = 1024;
    prob.heads_q = prob.heads_kv = 8;
    prob.head_dim_qk = 64;
    cfg = (fa4_config)FA4_CONFIG_INIT;
    cfg.family = FA4_FAMILY_SM80;
    cfg.bm = 128;
    cfg.bn = 64;
    cfg.stages = 2;
    cfg.warps = 4;

    /* A location that cannot be created: its "directory" is a file. */
    snprintf(file, sizeof file, "%s/plain-file", tmpdir);
    fd = open(file, O_CREAT | O_WRONLY, 0644);
    close(fd);
    snprintf(path, sizeof path, "%s/plain-file/sub/fa4.db", tmpdir);
    st = db_open(&d, path, NULL, 0, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_OK && d != NULL, "an unwritable location still opens");
    ok(strstr(warn, path) && strstr(warn, "in-memory") && !strchr(warn, '\n'),
       "with exactly one warning naming the file and the in-memory fallback");
    diag("  %s", warn);
    ok(d && strcmp(db_user_path(d), ":memory:") == 0 && !db_is_readonly(d),
       "the fallback store is in memory and writable");
    ok(d && put(d, why, sizeof why) == FA4_OK && get(d, why, sizeof why) ==
       FA4_OK, "winners can be stored and looked up for this process");
    db_close(d);
    d = NULL;

    /* A read-only file in a read-only directory. */
    snprintf(path, sizeof path, "%s/ro/fa4.db", tmpdir);
    if (geteuid() == 0) {
        skip("running as root: file permissions do not stop root");
        skip("running as root: file permissions do not stop root");
    } else {
        char dir[1024];

        snprintf(dir, sizeof dir, "%s/ro", tmpdir);
        make_db(path);
        chmod(path, 0444);
        chmod(dir, 0555);
        st = db_open(&d, path, NULL, 0, warn, sizeof warn, why, sizeof why);
        ok(st == FA4_OK && db_is_readonly(d) && strstr(warn, "read-only") &&
           !strchr(warn, '\n'),
           "a read-only file opens read-only with one warning");
        diag("  %s", warn);
        ok(d && get(d, why, sizeof why) == FA4_OK &&
           put(d, why, sizeof why) == FA4_EDB && strstr(why, "read-only"),
           "its entries are found; storing is FA4_EDB \"read-only\"");
        db_close(d);
        d = NULL;
        chmod(dir, 0755);
        chmod(path, 0644);
    }

    /* DB_READONLY. */
    snprintf(path, sizeof path, "%s/fa4.db", tmpdir);
    ok(make_db(path), "a database with one winner is made");
    st = db_open(&d, path, NULL, DB_READONLY, warn, sizeof warn, why,
                 sizeof why);
    ok(st == FA4_OK && warn[0] == '\0' && db_is_readonly(d),
       "DB_READONLY opens without warning");
    ok(d && get(d, why, sizeof why) == FA4_OK &&
       put(d, why, sizeof why) == FA4_EDB && strstr(why, "read-only"),
       "DB_READONLY finds entries and refuses to store");
    db_close(d);
    d = NULL;

    /* Not an SQLite file. */
    snprintf(text, sizeof text, "%s/notes.db", tmpdir);
    fd = open(text, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd >= 0) {
        const char *s = "These are my notes, not a database.\n";

        if (write(fd, s, strlen(s)) < 0)
            diag("write failed");
        close(fd);
    }
    before = slurp(text, &nbefore);
    st = db_open(&d, text, NULL, 0, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_EDB && d == NULL && strstr(why, text) &&
       strstr(why, "not an SQLite database"),
       "a non-SQLite file is FA4_EDB naming the file");
    diag("  %s", why);
    ok(same_bytes(text, before, nbefore), "the non-SQLite file is unchanged");
    free(before);

    /* A corrupt database: page 1's schema b-tree overwritten. */
    snprintf(corrupt, sizeof corrupt, "%s/corrupt.db", tmpdir);
    ok(make_db(corrupt), "a database is made to be corrupted");
    fd = open(corrupt, O_WRONLY);
    if (fd >= 0) {
        char junk[512];

        memset(junk, 0xA5, sizeof junk);
        if (pwrite(fd, junk, sizeof junk, 100) != (ssize_t)sizeof junk)
            diag("pwrite failed");
        close(fd);
    }
    before = slurp(corrupt, &nbefore);
    st = db_open(&d, corrupt, NULL, 0, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_EDB && d == NULL && strstr(why, corrupt) &&
       strstr(why, "corrupt"), "a corrupt database is FA4_EDB naming the file");
    diag("  %s", why);
    ok(same_bytes(corrupt, before, nbefore),
       "the corrupt file is left byte for byte as it was");
    st = db_open(&d, corrupt, NULL, DB_READONLY, warn, sizeof warn, why,
                 sizeof why);
    ok(st == FA4_EDB && strstr(why, corrupt),
       "opened read-only, it is FA4_EDB too");
    ok(same_bytes(corrupt, before, nbefore), "and still unchanged");

    /* System databases. */
    snprintf(bad, sizeof bad, "%s/absent-system.db", tmpdir);
    st = db_open(&d, path, bad, 0, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_OK && warn[0] == '\0' && db_system_path(d) == NULL,
       "a missing system database is no error and no warning");
    db_close(d);
    d = NULL;
    st = db_open(&d, path, corrupt, 0, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_EDB && strstr(why, corrupt),
       "a corrupt system database is FA4_EDB naming it");
    ok(same_bytes(corrupt, before, nbefore), "the system file is unchanged");
    free(before);

    /* A writer killed inside an open transaction. */
    snprintf(killed, sizeof killed, "%s/killed.db", tmpdir);
    ok(make_db(killed), "a database for the killed writers is made");
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        sqlite3 *h = NULL;

        sqlite3_open(killed, &h);
        sqlite3_exec(h, "BEGIN IMMEDIATE; DELETE FROM winners; DELETE FROM "
                     "devices; INSERT INTO binaries (key, arch, blob, size, "
                     "checksum) VALUES ('k', 'sm_80', x'00', 1, 'x');",
                     NULL, NULL, NULL);
        raise(SIGKILL);
        _exit(0);
    }
    waitpid(pid, &status, 0);
    ok(WIFSIGNALED(status), "a writer is killed before it commits");
    st = db_open(&d, killed, NULL, 0, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_OK && get(d, why, sizeof why) == FA4_OK,
       "its transaction is gone: the winner is still there");
    ok(d && put(d, why, sizeof why) == FA4_OK,
       "and the database takes writes (no lock left behind)");
    db_close(d);
    d = NULL;
    is_int(query_int(killed, "SELECT count(*) FROM binaries"), 0,
           "nothing of the killed transaction is visible");

    /* A writer killed at a random point of a stream of trials. */
    fflush(stdout);
    pid = fork();
    if (pid == 0)
        writer_loop(killed);
    {
        struct timespec ts = { 0, 150 * 1000 * 1000L };

        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    st = db_open(&d, killed, NULL, 0, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_OK, "after a writer is killed mid-stream the database opens");
    {
        char *report = NULL;
        int problems = -1;

        st = d ? db_check(d, &report, &problems, why, sizeof why) : FA4_EDB;
        ok(st == FA4_OK && problems == 0 && report &&
           strstr(report, "integrity: ok"), "and passes the integrity check");
        free(report);
    }
    {
        long n = query_int(killed, "SELECT count(*) FROM trials");
        long m = query_int(killed, "SELECT max(reps) + 1 FROM trials");

        ok(n > 0 && n == m, "the trials committed before the kill are all "
           "there, in order (%ld)", n);
    }
    db_close(d);

    remove_tmpdir();
    return done_testing();
}
