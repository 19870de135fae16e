/*
** test_db_reliability.c -- the database and its neighbours under the
** reliability audit of issue 10: one system-database path rule, a device
** row without a fingerprint, bounded lock waits (never an immutable read
** of a file being written), FIFOs, devices and empty files given as a
** database, range checks on JSON import and on configs (config_validate,
** also through budget_fit), the work-size bucket, per-thread error
** buffers at context destroy, the source hash under FA4_KERNEL_DIR, and
** drop reasons with their numbers.  No GPU needed.
*/
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE

#include "tap.h"
#include "db.h"
#include "config.h"
#include "context.h"
#include "jit.h"
#include "db_test_util.h"

#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#ifndef FA4_PKGDATADIR
#define FA4_PKGDATADIR "/usr/local/share/libfa4"
#endif

static device_limits dev;
static char why[2048], warn[2048];

/* Seconds on a monotonic clock. */
static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A test that would hang before its fix fails instead: SIGALRM ends the
** program with a "Bail out!" naming the step. */
static const char *step = "";
static void on_alarm(int sig)
{
    (void)sig;
    printf("Bail out! %s: still waiting after 60 s\n", step);
    fflush(stdout);
    _exit(1);
}

/* The problem used throughout, with BATCH and KV heads HKV. */
static fa4_problem problem(int batch, int hkv)
{
    fa4_problem p = FA4_PROBLEM_INIT;

    p.batch = batch;
    p.seqlen_q = p.seqlen_k = 1024;
    p.heads_q = 16;
    p.heads_kv = hkv;
    p.head_dim_qk = 128;
    return p;
}

/* An sm90 config marked by BN. */
static fa4_config marked(int bn)
{
    fa4_config c = FA4_CONFIG_INIT;

    c.family = FA4_FAMILY_SM90;
    c.bm = 128;
    c.bn = bn;
    c.stages = 2;
    c.swizzle = 128;
    c.consumer_wgs = 2;
    return c;
}

/* TEXT (several lines) as diag lines. */
static void diag_lines(const char *text)
{
    const char *s = text, *nl;

    while (s && *s) {
        nl = strchr(s, '\n');
        diag("  %.*s", nl ? (int)(nl - s) : (int)strlen(s), s);
        s = nl ? nl + 1 : NULL;
    }
}

/* Write TEXT to PATH; 1 on success. */
static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    int r = f && fputs(text, f) >= 0;

    if (f && fclose(f) != 0)
        r = 0;
    return r;
}

/* Look P up in the user database PATH: the status, *MARK the bn found and
** *SRC its source. */
static fa4_status look(const char *path, const fa4_problem *p, int *mark,
                       fa4_config_source *src)
{
    db *d = NULL;
    fa4_config c = FA4_CONFIG_INIT;
    fa4_status st = db_open(&d, path, NULL, 0, warn, sizeof warn, why,
                            sizeof why);

    *mark = -1;
    if (st == FA4_OK && (st = db_lookup(d, &c, src, &dev, p, why,
                                        sizeof why)) == FA4_OK)
        *mark = c.bn;
    db_close(d);
    return st;
}

/* ----------------------------------------------------------- item: paths */
static void test_system_path(void)
{
    char buf[4096], *r;

    unsetenv("FA4_SYSTEM_DB");
    r = db_system_db_path(buf, sizeof buf, NULL);
    ok(r && strcmp(r, FA4_PKGDATADIR "/fa4-system.db") == 0,
       "the installed system database is $(pkgdatadir)/fa4-system.db, the "
       "file make install puts there (%s)", r ? r : "NULL");
    setenv("FA4_SYSTEM_DB", "", 1);
    ok(db_system_db_path(buf, sizeof buf, NULL) == NULL &&
       db_default_system_path(buf, sizeof buf) == NULL,
       "FA4_SYSTEM_DB=\"\" means no system database");
    setenv("FA4_SYSTEM_DB", "/env/sys.db", 1);
    r = db_system_db_path(buf, sizeof buf, "/opt/sys.db");
    ok(r && strcmp(r, "/opt/sys.db") == 0,
       "the context option comes before $FA4_SYSTEM_DB");
    ok(db_system_db_path(buf, sizeof buf, "") == NULL,
       "an empty option also means no system database");
    r = db_default_system_path(buf, sizeof buf);
    ok(r && strcmp(r, "/env/sys.db") == 0, "then $FA4_SYSTEM_DB");
    setenv("FA4_SYSTEM_DB", "/nonexistent", 1);
}

/* The library's context follows the same rule: with FA4_SYSTEM_DB set to
** a database, a plan_only context opens it; set but empty, none. */
static void test_context_system_path(const char *sysdb)
{
    fa4_context_options o = FA4_CONTEXT_OPTIONS_INIT;
    fa4_context *ctx = NULL;
    char user[1024];

    snprintf(user, sizeof user, "%s/ctx-user.db", tmpdir);
    o.plan_only = 1;
    o.arch = "sm_90a";
    o.db_path = user;
    setenv("FA4_SYSTEM_DB", sysdb, 1);
    ok(fa4_context_create(&ctx, 0, &o) == FA4_OK && context_db(ctx) &&
       db_system_path(context_db(ctx)) &&
       strcmp(db_system_path(context_db(ctx)), sysdb) == 0,
       "fa4_context_create opens $FA4_SYSTEM_DB");
    fa4_context_destroy(ctx);
    ctx = NULL;
    setenv("FA4_SYSTEM_DB", "", 1);
    ok(fa4_context_create(&ctx, 0, &o) == FA4_OK && context_db(ctx) &&
       db_system_path(context_db(ctx)) == NULL,
       "and FA4_SYSTEM_DB=\"\" gives the library no system database too");
    fa4_context_destroy(ctx);
    setenv("FA4_SYSTEM_DB", "/nonexistent", 1);
}

/* ------------------------------------------------- item: NULL fingerprint */
static void test_null_fingerprint(void)
{
    char path[1024], *report = NULL;
    fa4_problem p = problem(1, 16);
    fa4_config c = FA4_CONFIG_INIT;
    fa4_config_source src;
    db *d = NULL;
    int problems = -1;
    fa4_status st;

    /* Another tool's version-2 file: devices.fingerprint without NOT NULL. */
    snprintf(path, sizeof path, "%s/nullfp.db", tmpdir);
    ok(exec_sql(path, "CREATE TABLE devices (id INTEGER PRIMARY KEY, "
                "fingerprint TEXT UNIQUE, name TEXT, cc INTEGER, sm_count "
                "INTEGER, smem_per_block_optin INTEGER, driver_version "
                "INTEGER, nvrtc_version INTEGER, created_at TEXT);"
                "CREATE TABLE winners (device_id INTEGER, family INTEGER, "
                "source_hash TEXT, dtype INTEGER, head_dim_qk INTEGER, "
                "head_dim_v INTEGER, gqa_group INTEGER, causal INTEGER, "
                "window_left INTEGER, window_right INTEGER, varlen INTEGER, "
                "paged INTEGER, page_size INTEGER, seqlen_q_bucket INTEGER, "
                "seqlen_k_bucket INTEGER, config TEXT, median_ms REAL, "
                "tflops REAL, updated_at TEXT, library_version TEXT);"
                "CREATE TABLE trials (id INTEGER PRIMARY KEY, device_id, "
                "family, source_hash, dtype, head_dim_qk, head_dim_v, "
                "gqa_group, causal, window_left, window_right, varlen, paged, "
                "page_size, seqlen_q_bucket, seqlen_k_bucket, batch, heads_q, "
                "seqlen_q, seqlen_k, config, ok, failure, median_ms, min_ms, "
                "max_ms, reps, tflops, max_rel_err, created_at, "
                "library_version);"
                "CREATE TABLE binaries (key TEXT PRIMARY KEY, arch TEXT, blob "
                "BLOB, size INTEGER, checksum TEXT, created_at TEXT, "
                "library_version TEXT);"
                "INSERT INTO devices VALUES (1, NULL, 'NVIDIA H100 80GB HBM3',"
                " 90, 132, 232448, 12040, 12040, '');"
                "PRAGMA user_version = 2;"),
       "a version-2 file whose device row has a NULL fingerprint is made");
    {
        char sql[1024];

        snprintf(sql, sizeof sql, "INSERT INTO winners VALUES (1, 90, '%s', "
                 "1, 128, 128, 1, 0, -1, -1, 0, 0, 0, 1024, 1024, "
                 "'sm90 bm=128 bn=96 stages=2 swizzle=128 wgs=2', 1.0, 1.0, "
                 "'', '')", jit_source_hash(FA4_FAMILY_SM90));
        ok(exec_sql(path, sql), "with a winner for the test problem");
    }
    st = db_open(&d, path, NULL, DB_READONLY, warn, sizeof warn, why,
                 sizeof why);
    st = st == FA4_OK ? db_lookup(d, &c, &src, &dev, &p, why, sizeof why) : st;
    ok(st == FA4_EDB && strstr(why, "no entry"),
       "lookup skips the row instead of crashing (strcmp on NULL)");
    diag("  %s", why);
    st = d ? db_check(d, &report, &problems, why, sizeof why) : FA4_EDB;
    ok(st == FA4_OK && problems >= 1 && report &&
       strstr(report, "device without fingerprint"),
       "fa4-tune check reports the device row without a fingerprint");
    if (report)
        diag_lines(report);
    free(report);
    db_close(d);
}

/* -------------------------------------------------- item: bounded waits */
static void test_bounded_waits(void)
{
    char path[1024], rb[1024];
    sqlite3 *holder = NULL;
    fa4_problem p = problem(1, 16);
    fa4_config cfg = marked(96);
    db *d = NULL;
    fa4_status st;
    double t0;
    int mark;
    fa4_config_source src;

    setenv("FA4_DB_TIMEOUT", "0.5", 1);
    ok(db_timeout_ms() == 500, "FA4_DB_TIMEOUT=0.5 bounds waits to 500 ms");

    /* A rollback-journal file held under an exclusive lock by another
       connection (an sqlite3 shell in the middle of a write). */
    snprintf(rb, sizeof rb, "%s/locked.db", tmpdir);
    ok(store_winner_file(rb, &dev, &p, &cfg, 1.0) &&
       exec_sql(rb, "PRAGMA journal_mode=DELETE"),
       "a database in rollback-journal mode is made");
    ok(sqlite3_open(rb, &holder) == SQLITE_OK &&
       sqlite3_exec(holder, "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; "
                    "UPDATE winners SET tflops = 7;", NULL, NULL, NULL)
           == SQLITE_OK,
       "another connection holds it under an exclusive lock");
    step = "read-only open of a locked file";
    alarm(60);
    t0 = now_s();
    st = db_open(&d, rb, NULL, DB_READONLY, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_EDB && strstr(why, "locked") && now_s() - t0 < 5,
       "a read-only open (fa4-tune show) gives up after the timeout with "
       "\"locked\", and never reads the file as immutable (%.1f s)",
       now_s() - t0);
    diag("  %s", why);
    db_close(d);
    d = NULL;
    step = "writable open of a locked file";
    t0 = now_s();
    st = db_open(&d, rb, NULL, 0, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_OK && strstr(warn, "locked") && strstr(warn, "in-memory") &&
       now_s() - t0 < 5,
       "a writable open (fa4_context_create) falls back to memory with one "
       "warning after the timeout (%.1f s)", now_s() - t0);
    diag("  %s", warn);
    db_close(d);
    d = NULL;
    alarm(0);
    sqlite3_close(holder);
    holder = NULL;

    /* WAL: a writer holding the write lock delays only writers. */
    snprintf(path, sizeof path, "%s/wal.db", tmpdir);
    ok(store_winner_file(path, &dev, &p, &cfg, 1.0),
       "a WAL database with one winner is made");
    st = db_open(&d, path, NULL, 0, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_OK && sqlite3_open(path, &holder) == SQLITE_OK &&
       sqlite3_exec(holder, "BEGIN IMMEDIATE; UPDATE winners SET tflops = 8;",
                    NULL, NULL, NULL) == SQLITE_OK,
       "another process holds its write lock");
    step = "store while another holds the write lock";
    alarm(60);
    t0 = now_s();
    st = d ? db_store_winner(d, &dev, &p, &cfg, 0.5, 1.0, why, sizeof why)
           : FA4_EDB;
    ok(st == FA4_EDB && strstr(why, "locked") && strstr(why, "FA4_DB_TIMEOUT") &&
       now_s() - t0 < 5,
       "a store gives up after the timeout, naming FA4_DB_TIMEOUT (%.1f s)",
       now_s() - t0);
    diag("  %s", why);
    t0 = now_s();
    st = d ? db_lookup(d, &cfg, &src, &dev, &p, why, sizeof why) : FA4_EDB;
    ok(st == FA4_OK && cfg.bn == 96 && now_s() - t0 < 0.4,
       "a lookup meanwhile does not wait for the writer (%.3f s)",
       now_s() - t0);
    alarm(0);
    sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(holder);
    db_close(d);
    (void)mark;
    unsetenv("FA4_DB_TIMEOUT");
}

/* ------------------------------------- item: FIFO, device, empty file */
static void test_special_files(void)
{
    char fifo[1024], empty[1024], user[1024], *text = NULL;
    struct stat sb;
    db *d = NULL;
    fa4_status st;
    int problems = -1, fd;
    fa4_problem p = problem(1, 16);
    fa4_config c;
    fa4_config_source src;

    snprintf(fifo, sizeof fifo, "%s/pipe.db", tmpdir);
    ok(mkfifo(fifo, 0644) == 0, "a FIFO is made");
    step = "db_open of a FIFO";
    alarm(60);
    st = db_open(&d, fifo, NULL, 0, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_EDB && d == NULL && strstr(why, fifo) && strstr(why, "FIFO"),
       "a FIFO as the user database (--db, FA4_DB) is refused, not opened");
    diag("  %s", why);
    st = db_open(&d, fifo, NULL, DB_READONLY, warn, sizeof warn, why,
                 sizeof why);
    ok(st == FA4_EDB && strstr(why, "FIFO"), "read-only too (show, check)");
    snprintf(user, sizeof user, "%s/merge-into.db", tmpdir);
    st = db_open(&d, user, NULL, 0, warn, sizeof warn, why, sizeof why);
    step = "db_merge of a FIFO";
    st = st == FA4_OK ? db_merge(d, fifo, NULL, NULL, why, sizeof why) : st;
    ok(st == FA4_EDB && strstr(why, "FIFO"), "merge refuses a FIFO");
    db_close(d);
    d = NULL;
    st = db_open(&d, user, fifo, 0, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_EDB && strstr(why, "FIFO"),
       "and a FIFO as the system database");
    db_close(d);
    d = NULL;
    alarm(0);

    stat("/dev/null", &sb);
    st = db_open(&d, "/dev/null", NULL, 0, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_EDB && strstr(why, "character device") &&
       access("/dev/null-journal", F_OK) != 0 &&
       access("/dev/null-wal", F_OK) != 0,
       "--db /dev/null is refused and makes no /dev/null-journal");
    db_close(d);
    d = NULL;

    snprintf(empty, sizeof empty, "%s/empty.db", tmpdir);
    fd = open(empty, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    close(fd);
    st = db_open(&d, empty, NULL, DB_READONLY, warn, sizeof warn, why,
                 sizeof why);
    ok(st == FA4_OK, "a 0-byte file opens read-only");
    st = d ? db_show(d, &text, "winners", 0, why, sizeof why) : FA4_EDB;
    ok(st == FA4_EDB && strstr(why, "empty database") &&
       !strstr(why, "no such table"),
       "show says \"empty database\", not \"no such table\"");
    diag("  %s", why);
    free(text);
    text = NULL;
    st = d ? db_check(d, &text, &problems, why, sizeof why) : FA4_EDB;
    ok(st == FA4_OK && text && strstr(text, "empty database"),
       "check says \"empty database\"");
    free(text);
    text = NULL;
    st = d ? db_lookup(d, &c, &src, &dev, &p, why, sizeof why) : FA4_EDB;
    ok(st == FA4_EDB && strstr(why, "no entry"),
       "lookup in it finds no entry (no SQL error)");
    st = d ? db_export_json_text(d, &text, 0, why, sizeof why) : FA4_EDB;
    ok(st == FA4_EDB && strstr(why, "empty database"),
       "export says \"empty database\"");
    free(text);
    db_close(d);
}

/* ---------------------------------------------------- item: JSON import */

/* Import TEXT into a fresh database; the status, WHY set. */
static fa4_status import_text(const char *name, const char *text)
{
    char path[1024];
    db *d = NULL;
    fa4_status st;

    snprintf(path, sizeof path, "%s/%s.db", tmpdir, name);
    st = db_open(&d, path, NULL, 0, warn, sizeof warn, why, sizeof why);
    if (st == FA4_OK)
        st = db_import_json_text(d, text, strlen(text), name, NULL, NULL, why,
                                 sizeof why);
    db_close(d);
    return st;
}

/* A one-winner export with the device's CC, the record's FAMILY,
** FORMAT_VERSION, MEDIAN, CONFIG and extra key member KEYX, into BUF. */
static const char *doc(char *buf, size_t size, const char *cc,
                       const char *family, const char *fv, const char *median,
                       const char *config, const char *keyx)
{
    snprintf(buf, size,
             "{\"format\": \"fa4-db\", \"format_version\": %s, \"devices\": "
             "[{\"fingerprint\": \"X|90|132|232448|1|1\", \"name\": \"X\", "
             "\"cc\": %s, \"sm_count\": 132, \"smem_per_block_optin\": "
             "232448, \"driver_version\": 1, \"nvrtc_version\": 1}], "
             "\"winners\": [{\"device\": \"X|90|132|232448|1|1\", \"family\": "
             "%s, \"source_hash\": \"%s\", \"key\": {\"dtype\": 1, "
             "\"head_dim_qk\": 128, \"head_dim_v\": 128, \"gqa_group\": 1, "
             "\"causal\": 0, \"window_left\": -1, \"window_right\": -1, "
             "\"varlen\": 0, \"paged\": 0, \"page_size\": 0, "
             "\"seqlen_q_bucket\": 1024, \"seqlen_k_bucket\": 1024%s}, "
             "\"config\": \"%s\", \"median_ms\": %s}]}",
             fv, cc, family, jit_source_hash(FA4_FAMILY_SM90), keyx, config,
             median);
    return buf;
}

static void test_json_import(void)
{
    static const char good[] = "sm90 bm=128 bn=96 stages=2 swizzle=128 wgs=2";
    char buf[4096], path[1024], *report = NULL, *seed;
    db *d = NULL;
    fa4_status st;
    int problems = -1;

    st = import_text("good", doc(buf, sizeof buf, "90", "90", "1", "1.5", good, ""));
    ok(st == FA4_OK, "a well-formed record without work_bucket imports (%s)",
       st == FA4_OK ? "ok" : why);
    snprintf(path, sizeof path, "%s/good.db", tmpdir);
    is_int(query_int(path, "SELECT work_bucket FROM winners"), 0,
           "and gets work_bucket 0, any work size");
    is_int(query_int(path, "SELECT softcap + sinks FROM winners"), 0,
           "and softcap 0, sinks 0: files written before them hold neither");
    st = import_text("flags", doc(buf, sizeof buf, "90", "90", "1", "1.5", good,
                                  ", \"softcap\": 1, \"sinks\": 1"));
    snprintf(path, sizeof path, "%s/flags.db", tmpdir);
    ok(st == FA4_OK && query_int(path, "SELECT softcap * 10 + sinks FROM "
                                 "winners") == 11,
       "a record with softcap 1 and sinks 1 imports with both");
    st = import_text("cap2", doc(buf, sizeof buf, "90", "90", "1", "1.5", good,
                                 ", \"softcap\": 30"));
    ok(st == FA4_EINVAL && strstr(why, "softcap=30") && strstr(why, "0..1"),
       "a softcap key of 30 is rejected: the key holds 0 or 1, not the cap");
    st = import_text("sinks2", doc(buf, sizeof buf, "90", "90", "1", "1.5", good,
                                   ", \"sinks\": -1"));
    ok(st == FA4_EINVAL && strstr(why, "sinks=-1"),
       "a sinks key of -1 is rejected");
    st = import_text("cap3", doc(buf, sizeof buf, "90", "90", "1", "1.5", good,
                                 ", \"softcap\": true"));
    ok(st == FA4_EINVAL && strstr(why, "softcap is not an integer"),
       "a softcap key that is not an integer is rejected");
    st = import_text("cc", doc(buf, sizeof buf, "4294967386", "90", "1", "1.5", good, ""));
    ok(st == FA4_EINVAL && strstr(why, "cc=4294967386") && strstr(why, "devices[0]"),
       "cc 2^32+90 is rejected, not truncated to 90");
    diag("  %s", why);
    st = import_text("fam", doc(buf, sizeof buf, "90", "77", "1", "1.5", good, ""));
    ok(st == FA4_EINVAL && strstr(why, "family=77"), "family 77 is rejected");
    st = import_text("fam2", doc(buf, sizeof buf, "90", "4294967386", "1", "1.5", good, ""));
    ok(st == FA4_EINVAL && strstr(why, "family=4294967386"),
       "family 2^32+90 is rejected, not truncated to 90");
    st = import_text("fv", doc(buf, sizeof buf, "90", "90", "-3", "1.5", good, ""));
    ok(st == FA4_EINVAL && strstr(why, "format_version -3"),
       "a negative format_version is rejected");
    st = import_text("med", doc(buf, sizeof buf, "90", "90", "1", "-1", good, ""));
    ok(st == FA4_EINVAL && strstr(why, "median_ms=-1"),
       "median_ms -1 is rejected (it would pin the winner)");
    st = import_text("med0", doc(buf, sizeof buf, "90", "90", "1", "0", good, ""));
    ok(st == FA4_EINVAL && strstr(why, "median_ms"), "median_ms 0 too");
    st = import_text("cfg", doc(buf, sizeof buf, "90", "90", "1", "1.5",
                                "sm90 bm=128 bn=96 stages=2 swizzle=128 wgs=2 pingpong=7", ""));
    ok(st == FA4_EINVAL && strstr(why, "pingpong=7"),
       "a config out of range (pingpong=7) is rejected");
    st = import_text("cfg2", doc(buf, sizeof buf, "90", "90", "1", "1.5", "sm90 fast", ""));
    ok(st == FA4_EINVAL && strstr(why, "not key=value"),
       "an unparseable config is rejected");
    st = import_text("cfg3", doc(buf, sizeof buf, "90", "90", "1", "1.5",
                                 "sm80 bm=128 bn=64 stages=2 swizzle=128", ""));
    ok(st == FA4_EINVAL && strstr(why, "family"),
       "a config of another family than the record's is rejected");
    st = import_text("wb", doc(buf, sizeof buf, "90", "90", "1", "1.5", good,
                               ", \"work_bucket\": 3"));
    ok(st == FA4_EINVAL && strstr(why, "work_bucket=3"),
       "a work_bucket that is not a power of two is rejected");
    st = import_text("wb2", doc(buf, sizeof buf, "90", "90", "1", "1.5", good,
                                ", \"work_bucket\": 4294967296"));
    ok(st == FA4_EINVAL && strstr(why, "work_bucket=4294967296"),
       "a key member above INT_MAX is rejected, not truncated to 0");

    /* The shipped seed still imports. */
    seed = NULL;
    {
        const char *src = getenv("srcdir");
        char sp[1024];

        snprintf(sp, sizeof sp, "%s/db/seed/h100-sxm.json", src ? src : "..");
        seed = slurp(sp, NULL);
    }
    st = seed ? import_text("seed", seed) : FA4_EINVAL;
    ok(st == FA4_OK, "db/seed/h100-sxm.json imports (%s)", st == FA4_OK ? "ok" : why);
    free(seed);
    /* ... with every sm90 row current under these kernel sources: an edit
       of kernels/ (a comment too) changes the hash, and lookup would pass
       over the whole seed until it is relabelled (fa4-tune codes/rehash). */
    {
        const char *cur = jit_source_hash(FA4_FAMILY_SM90);
        char sp[1024], sql[256];
        long rows, current;

        snprintf(sp, sizeof sp, "%s/seed.db", tmpdir);
        rows = query_int(sp, "SELECT count(*) FROM winners WHERE family = 90");
        snprintf(sql, sizeof sql, "SELECT count(*) FROM winners WHERE family = 90 AND "
                 "source_hash = '%s'", cur);
        current = query_int(sp, sql);
        ok(rows > 0 && current == rows, "the seed's %ld sm90 rows are current (source hash %s): "
           "%ld are", rows, cur, current);
    }

    /* check flags what lookup skips. */
    ok(exec_sql(path, "UPDATE winners SET config = 'sm90 bm=128 bn=96 "
                "stages=2 swizzle=128 wgs=2 cluster=0'"),
       "a stored winner's config is made out of range by hand");
    st = db_open(&d, path, NULL, DB_READONLY, warn, sizeof warn, why,
                 sizeof why);
    st = st == FA4_OK ? db_check(d, &report, &problems, why, sizeof why) : st;
    ok(st == FA4_OK && problems == 1 && report &&
       strstr(report, "unusable winner") && strstr(report, "cluster=0"),
       "check reports the row lookup would skip");
    if (report)
        diag_lines(report);
    free(report);
    db_close(d);
}

/* ------------------------------------------------ item: config_validate */
static void test_config_validate(void)
{
    static const char *const arches[] = { "sm_80", "sm_90a", "sm_100a" };
    fa4_config c = marked(128);
    fa4_layout l;
    device_limits h;
    fa4_problem p = problem(2, 16);
    int a, bad = 0, total = 0;

    ok(config_validate(&c, why, sizeof why) == FA4_OK, "a plain sm90 config is valid");
    c.cluster = -5;
    ok(config_validate(&c, why, sizeof why) == FA4_EINVAL && strstr(why, "cluster=-5"),
       "cluster=-5 is invalid, named");
    c = marked(128);
    c.q_tiles = -3;
    ok(config_validate(&c, why, sizeof why) == FA4_EINVAL && strstr(why, "q_tiles=-3"),
       "q_tiles=-3 is invalid");
    c = marked(128);
    c.pingpong = 7;
    device_limits_for_arch(&h, "sm_90a", why, sizeof why);
    ok(budget_fit(&l, &h, &p, &c, why, sizeof why) == FA4_EINVAL &&
       strstr(why, "pingpong=7"),
       "budget_fit refuses an explicit config with pingpong=7 (the API path)");
    c = marked(128);
    c.exp2_emu_pct = 101;
    ok(config_validate(&c, why, sizeof why) == FA4_EINVAL, "exp2_emu_pct=101 is invalid");
    c = marked(128);
    c.splits = 129;
    ok(config_validate(&c, why, sizeof why) == FA4_EINVAL, "splits=129 is invalid");
    c = marked(128);
    c.scheduler = (fa4_scheduler)9;
    ok(config_validate(&c, why, sizeof why) == FA4_EINVAL, "scheduler 9 is invalid");
    c = marked(128);
    c.consumer_regs = 241;
    ok(config_validate(&c, why, sizeof why) == FA4_EINVAL, "consumer_regs 241 is invalid");

    /* Every config the enumerators produce is valid. */
    for (a = 0; a < 3; a++) {
        fa4_family fams[3] = { FA4_FAMILY_SM80, FA4_FAMILY_SM90, FA4_FAMILY_SM100 };
        int f, i;

        if (device_limits_for_arch(&h, arches[a], why, sizeof why) != FA4_OK)
            continue;
        for (f = 0; f < 3; f++) {
            config_space sp;

            if (config_enumerate(&sp, &h, &p, fams[f], why, sizeof why) != FA4_OK)
                continue;
            for (i = 0; i < sp.count; i++, total++)
                if (config_validate(&sp.configs[i], why, sizeof why) != FA4_OK) {
                    if (!bad++)
                        diag("  %s: %s", arches[a], why);
                }
            config_space_free(&sp);
        }
    }
    ok(total > 0 && bad == 0, "all %d enumerated configs pass config_validate", total);
}

/* -------------------------------------------------- item: work bucket */
static void test_work_bucket(void)
{
    char path[1024];
    fa4_problem p1 = problem(3, 8), p64 = problem(64, 8), p2 = problem(4, 8);
    fa4_config_source src = 0;
    int mark;
    fa4_status st;

    ok(db_work_bucket(&p1) == 32 && db_work_bucket(&p64) == 512 &&
       db_work_bucket(&p2) == 32,
       "work bucket = batch * heads_kv rounded up to a power of two");
    {
        fa4_problem huge = problem(1 << 30, 16);
        ok(db_work_bucket(&huge) == 1 << 30, "and saturates at 2^30 without overflow");
    }
    snprintf(path, sizeof path, "%s/work.db", tmpdir);
    {
        fa4_config c = marked(64);
        ok(store_winner_file(path, &dev, &p1, &c, 1.0),
           "a winner tuned at batch 3 x 8 KV heads is stored");
    }
    st = look(path, &p2, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_USER_EXACT && mark == 64,
       "the same work bucket (4 x 8) is an exact match");
    st = look(path, &p64, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_NEAREST && mark == 64,
       "another work bucket (64 x 8) is only nearest");
    ok(exec_sql(path, "UPDATE winners SET work_bucket = 0"),
       "the winner is made one of any work size (a migrated row)");
    st = look(path, &p64, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_USER_EXACT && mark == 64,
       "a row with work_bucket 0 matches any work size exactly");
    {
        fa4_config c = marked(80);
        ok(store_winner_file(path, &dev, &p64, &c, 2.0),
           "a slower winner for the exact bucket 512 is stored");
    }
    st = look(path, &p64, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_USER_EXACT && mark == 80,
       "the exact work bucket beats the any-size row");
}

/* ------------------------------------------------ item: error buffers */
typedef struct worker_arg {
    fa4_context *ctx;
    pthread_barrier_t *set, *done;
} worker_arg;

/* A thread that records an error on the context, then waits. */
static void *worker(void *p)
{
    worker_arg *a = p;
    fa4_plan *plan = NULL;
    fa4_problem bad = FA4_PROBLEM_INIT;

    fa4_plan_create(&plan, a->ctx, &bad, NULL);   /* sets the thread's text */
    pthread_barrier_wait(a->set);
    pthread_barrier_wait(a->done);
    return NULL;
}

static void test_error_buffers(void)
{
    fa4_context_options o = FA4_CONTEXT_OPTIONS_INIT;
    long before = error_buffers_live();
    struct mallinfo2 m0 = mallinfo2(), m1;
    int i, made = 1;

    o.plan_only = 1;
    o.arch = "sm_90a";
    o.no_database = 1;
    for (i = 0; i < 1000 && made; i++) {
        fa4_context *ctx = NULL;
        pthread_barrier_t set, done;
        pthread_t t;
        worker_arg a;

        if (i == 10)
            m0 = mallinfo2();
        made = fa4_context_create(&ctx, 0, &o) == FA4_OK;
        pthread_barrier_init(&set, NULL, 2);
        pthread_barrier_init(&done, NULL, 2);
        a.ctx = ctx;
        a.set = &set;
        a.done = &done;
        made = made && pthread_create(&t, NULL, worker, &a) == 0;
        if (!made)
            break;
        pthread_barrier_wait(&set);
        if (i == 0)
            ok(error_buffers_live() == before + 1,
               "a worker thread's error text lives in a buffer of its own");
        fa4_context_destroy(ctx);      /* the worker is still running */
        if (i == 0)
            ok(error_buffers_live() == before,
               "fa4_context_destroy frees the buffers of threads still "
               "running");
        pthread_barrier_wait(&done);
        pthread_join(t, NULL);
        pthread_barrier_destroy(&set);
        pthread_barrier_destroy(&done);
    }
    m1 = mallinfo2();
    ok(made && m1.uordblks < m0.uordblks + 64 * 1024,
       "1000 create/destroy cycles with one worker do not grow the heap "
       "(%+ld bytes)", (long)m1.uordblks - (long)m0.uordblks);
}

/* ------------------------------------------- item: FA4_KERNEL_DIR hash */

/* The sm90 source hash a fresh process (this program, run with
** --sm90-hash) computes with FA4_KERNEL_DIR=DIR: the hashes are computed
** once per process. */
static const char *self;
static void hash_in_child(char out[17], const char *dir)
{
    char cmd[4096];
    FILE *f;

    memset(out, 0, 17);
    snprintf(cmd, sizeof cmd, "FA4_KERNEL_DIR='%s' '%s' --sm90-hash", dir, self);
    if (!(f = popen(cmd, "r")))
        return;
    if (!fgets(out, 17, f))
        out[0] = '\0';
    pclose(f);
}

/* Append TEXT to the file PATH; 1 on success. */
static int append_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "a");
    int r = f && fputs(text, f) >= 0;

    if (f && fclose(f) != 0)
        r = 0;
    return r;
}

static void test_kernel_dir_hash(void)
{
    char kdir[1024], cmd[3072], f[1200], h0[17], h1[17], h2[17], h3[17];
    const char *src = getenv("srcdir");

    snprintf(kdir, sizeof kdir, "%s/kernels", tmpdir);
    snprintf(cmd, sizeof cmd, "cp -R '%s/kernels' '%s'", src ? src : "..", tmpdir);
    if (system(cmd) != 0) {
        skip("cannot copy the kernel tree");
        skip("cannot copy the kernel tree");
        skip("cannot copy the kernel tree");
        return;
    }
    hash_in_child(h0, kdir);
    ok(strcmp(h0, jit_source_hash(FA4_FAMILY_SM90)) == 0,
       "an unedited FA4_KERNEL_DIR tree hashes as the embedded sources");
    snprintf(f, sizeof f, "%s/sm90/extra.cuh", kdir);
    write_text(f, "#define FA4_EXTRA 1\n");
    snprintf(f, sizeof f, "%s/sm90/kernel.cuh", kdir);
    append_text(f, "\n#include \"sm90/extra.cuh\"\n");
    hash_in_child(h1, kdir);
    snprintf(f, sizeof f, "%s/sm90/extra.cuh", kdir);
    write_text(f, "#define FA4_EXTRA 2\n");
    hash_in_child(h2, kdir);
    ok(h1[0] && h2[0] && strcmp(h1, h2) != 0,
       "editing a file the tree newly includes changes the source hash "
       "(%s -> %s)", h1, h2);
    snprintf(f, sizeof f, "%s/sm90/nested.cuh", kdir);
    write_text(f, "#define FA4_NESTED 1\n");
    snprintf(f, sizeof f, "%s/sm90/extra.cuh", kdir);
    write_text(f, "#define FA4_EXTRA 2\n#  include \"nested.cuh\"\n");
    hash_in_child(h2, kdir);
    snprintf(f, sizeof f, "%s/sm90/nested.cuh", kdir);
    write_text(f, "#define FA4_NESTED 2\n");
    hash_in_child(h3, kdir);
    ok(h2[0] && h3[0] && strcmp(h2, h3) != 0,
       "so does editing a file included beside its includer");
}

/* -------------------------------------------------- item: drop reasons */
static void test_drop_reasons(void)
{
    device_limits h;
    fa4_problem p = problem(2, 16);
    config_space sp;
    int i, hashes = 0, ranges = 0, total = 0;

    p.head_dim_qk = 256;
    device_limits_for_arch(&h, "sm_90a", why, sizeof why);
    if (config_enumerate(&sp, &h, &p, FA4_FAMILY_SM90, why, sizeof why) != FA4_OK) {
        skip("sm90 does not enumerate d256: %s", why);
        return;
    }
    for (i = 0; i < sp.ndrops; i++) {
        total += sp.drops[i].count;
        hashes += strchr(sp.drops[i].reason, '#') != NULL;
        ranges += strstr(sp.drops[i].reason, "..") != NULL;
        diag("  %5d  %s", sp.drops[i].count, sp.drops[i].reason);
    }
    ok(sp.ndrops > 0 && hashes == 0 && ranges > 0 &&
       total == sp.considered - sp.count,
       "drop reasons show their numbers' range over each group, no '#'");
    config_space_free(&sp);
}

int main(int argc, char **argv)
{
    char sysdb[1024];
    fa4_problem p = problem(1, 16);
    fa4_config c = marked(64);

    if (argc > 1 && strcmp(argv[1], "--sm90-hash") == 0) {
        fputs(jit_source_hash(FA4_FAMILY_SM90), stdout);
        return 0;
    }
    self = argv[0];
    plan_lazy();
    signal(SIGALRM, on_alarm);
    make_tmpdir();
    dev = test_device("NVIDIA H100 80GB HBM3", 90, 132);
    setenv("FA4_SYSTEM_DB", "/nonexistent", 1);

    test_system_path();
    snprintf(sysdb, sizeof sysdb, "%s/sys.db", tmpdir);
    ok(store_winner_file(sysdb, &dev, &p, &c, 1.0), "a system database is made");
    test_context_system_path(sysdb);
    test_null_fingerprint();
    test_bounded_waits();
    test_special_files();
    test_json_import();
    test_config_validate();
    test_work_bucket();
    test_error_buffers();
    test_kernel_dir_hash();
    test_drop_reasons();

    remove_tmpdir();
    return done_testing();
}
