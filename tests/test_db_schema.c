/*
** test_db_schema.c -- the config database's schema: creation of a new
** file, the embedded SQL equal to db/schema.sql and db/migrations/, the
** migration of a version-1 database made by hand from
** db/migrations/0001-initial.sql and of a version-3 one with rows (none
** lost, softcap and sinks 0), a version-3 system database read as it is,
** and the clear errors for a newer schema or a foreign SQLite file.  No
** GPU needed.
*/
#define _XOPEN_SOURCE 700

#include "tap.h"
#include "db.h"
#include "config.h"
#include "jit.h"
#include "db_test_util.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Read REL (relative to the source tree) from wherever the tree is:
** $FA4_TOP_SRCDIR, $srcdir (automake), $srcdir/.., ., .. */
static char *slurp_src(const char *rel)
{
    const char *dirs[5];
    char path[1024];
    char *text;
    int i;

    dirs[0] = getenv("FA4_TOP_SRCDIR");
    dirs[1] = getenv("srcdir");
    dirs[2] = NULL;
    dirs[3] = ".";
    dirs[4] = "..";
    for (i = 0; i < 5; i++) {
        if (i == 2) {
            if (!dirs[1])
                continue;
            snprintf(path, sizeof path, "%s/../%s", dirs[1], rel);
        } else {
            if (!dirs[i])
                continue;
            snprintf(path, sizeof path, "%s/%s", dirs[i], rel);
        }
        if ((text = slurp(path, NULL)))
            return text;
    }
    return NULL;
}

/* A text dump of PATH's schema as SQLite sees it: every column and index
** column of every table and index, by name.  malloc'd. */
static char *schema_shape(const char *path)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    char *out = calloc(1, 65536);
    size_t n = 0;
    int rc;

    if (!out || sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return out;
    rc = sqlite3_prepare_v2(h,
        "SELECT m.type, m.name, p.* FROM sqlite_master m, "
        "pragma_table_xinfo(m.name) p WHERE m.type = 'table' "
        "UNION ALL SELECT m.type, m.name, p.*, NULL FROM sqlite_master m, "
        "pragma_index_xinfo(m.name) p WHERE m.type = 'index' "
        "ORDER BY 1, 2, 3", -1, &st, NULL);
    while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        int i;

        for (i = 0; i < sqlite3_column_count(st) && n < 65000; i++)
            n += (size_t)snprintf(out + n, 65536 - n, "%s|",
                                  sqlite3_column_text(st, i)
                                      ? (const char *)sqlite3_column_text(st, i)
                                      : "NULL");
        n += (size_t)snprintf(out + n, 65536 - n, "\n");
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return out;
}

/* Make a version-3 database at PATH: 0001-initial.sql and the embedded
** migrations to version 3, then ROWS (SQL).  1 on success. */
static int make_v3(const char *path, const char *rows)
{
    char *v1 = slurp_src("db/migrations/0001-initial.sql");
    sqlite3 *h = NULL;
    int i, r = v1 && sqlite3_open(path, &h) == SQLITE_OK &&
               sqlite3_exec(h, v1, NULL, NULL, NULL) == SQLITE_OK;

    for (i = 0; r && db_migrations[i].sql && db_migrations[i].to <= 3; i++)
        r = sqlite3_exec(h, db_migrations[i].sql, NULL, NULL, NULL) == SQLITE_OK;
    if (r)
        r = sqlite3_exec(h, rows, NULL, NULL, NULL) == SQLITE_OK;
    if (!r)
        diag("make_v3: %s", h ? sqlite3_errmsg(h) : "0001-initial.sql not found");
    sqlite3_close(h);
    free(v1);
    return r;
}

/*
** A version-3 database with two winners (one of any work size) and three
** trials: migrated to the current version, every row is kept with its
** values and trial id, softcap and sinks 0; a plain lookup finds its
** winner, a softcapped or sink one does not.  The same file opened as a
** read-only system database (not migrated) answers the same way.
*/
static void test_from_v3(const char *fresh, const device_limits *dev,
                         const char *cfg)
{
    char path[1024], sys[1024], user[1024], fp[512], warn[512], why[1024];
    char *rows, *a, *b;
    const char *hash = jit_source_hash(FA4_FAMILY_SM90);
    fa4_problem p = FA4_PROBLEM_INIT;
    fa4_config got = FA4_CONFIG_INIT;
    fa4_config_source src = 0;
    fa4_status st;
    db *d = NULL;

    db_device_fingerprint(fp, sizeof fp, dev);
    rows = sqlite3_mprintf(
        "INSERT INTO devices (fingerprint, name, cc, sm_count, "
        "smem_per_block_optin, driver_version, nvrtc_version) VALUES "
        "(%Q, %Q, 90, 132, 232448, 12040, 12040);"
        "INSERT INTO winners (device_id, family, source_hash, dtype, "
        "head_dim_qk, head_dim_v, gqa_group, causal, window_left, "
        "window_right, varlen, paged, page_size, seqlen_q_bucket, "
        "seqlen_k_bucket, work_bucket, config, median_ms, tflops, "
        "library_version) VALUES "
        "(1, 90, %Q, 1, 128, 128, 4, 1, -1, 0, 0, 0, 0, 4096, 4096, 16, %Q, "
        "1.5, 600, '0.0.9'),"
        "(1, 90, %Q, 1, 128, 128, 4, 1, -1, 0, 0, 0, 0, 1024, 1024, 0, %Q, "
        "0.5, 500, '0.0.8');"
        "INSERT INTO trials (id, device_id, family, source_hash, dtype, "
        "head_dim_qk, head_dim_v, gqa_group, causal, window_left, "
        "window_right, varlen, paged, page_size, seqlen_q_bucket, "
        "seqlen_k_bucket, work_bucket, batch, heads_q, seqlen_q, seqlen_k, "
        "config, ok, failure) VALUES "
        "(7, 1, 90, %Q, 1, 128, 128, 4, 1, -1, 0, 0, 0, 0, 4096, 4096, 16, "
        "2, 32, 4096, 4096, %Q, 1, NULL),"
        "(8, 1, 90, %Q, 1, 128, 128, 4, 1, -1, 0, 0, 0, 0, 4096, 4096, 16, "
        "2, 32, 4096, 4096, %Q, 0, 'spill'),"
        "(12, 1, 90, %Q, 1, 128, 128, 4, 1, -1, 0, 0, 0, 0, 1024, 1024, 0, "
        "4, 32, 1000, 1000, %Q, 1, NULL);",
        fp, dev->name, hash, cfg, hash, cfg, hash, cfg, hash, cfg, hash, cfg);
    snprintf(path, sizeof path, "%s/v3.db", tmpdir);
    ok(rows && make_v3(path, rows), "a version-3 database with 2 winners and "
       "3 trials is made");
    is_int(query_int(path, "PRAGMA user_version"), 3, "it has user_version 3");
    snprintf(sys, sizeof sys, "%s/v3-system.db", tmpdir);
    ok(make_v3(sys, rows), "and a copy of it, to serve as a system database");
    sqlite3_free(rows);

    st = db_open(&d, path, NULL, 0, warn, sizeof warn, why, sizeof why);
    is_int(st, FA4_OK, "db_open migrates the version-3 database");
    db_close(d);
    d = NULL;
    is_int(query_int(path, "PRAGMA user_version"), DB_SCHEMA_VERSION,
           "it has user_version %d", DB_SCHEMA_VERSION);
    is_int(query_int(path, "SELECT count(*) FROM winners"), 2,
           "both winners are kept");
    is_int(query_int(path, "SELECT count(*) FROM trials"), 3,
           "all three trials are kept");
    is_int(query_int(path, "SELECT count(*) FROM winners WHERE softcap = 0 "
                     "AND sinks = 0"), 2, "the winners get softcap 0, sinks 0");
    is_int(query_int(path, "SELECT count(*) FROM trials WHERE softcap = 0 "
                     "AND sinks = 0"), 3, "the trials get softcap 0, sinks 0");
    is_int(query_int(path, "SELECT group_concat(id) = '7,8,12' FROM (SELECT id "
                     "FROM trials ORDER BY id)"), 1, "the trials keep their ids");
    is_int(query_int(path, "SELECT count(*) FROM winners WHERE "
                     "(seqlen_q_bucket = 4096 AND work_bucket = 16 AND "
                     "median_ms = 1.5 AND tflops = 600 AND library_version = "
                     "'0.0.9') OR (seqlen_q_bucket = 1024 AND work_bucket = 0 "
                     "AND median_ms = 0.5 AND library_version = '0.0.8')"), 2,
           "the winners keep their values (work_bucket 16 and 0 included)");
    is_int(query_int(path, "SELECT count(*) FROM trials WHERE (id = 8 AND ok "
                     "= 0 AND failure = 'spill' AND batch = 2) OR (id = 12 AND "
                     "seqlen_q = 1000 AND batch = 4)"), 2,
           "the trials keep their values");
    a = schema_shape(path);
    b = schema_shape(fresh);
    ok(a && b && strlen(a) > 100 && strcmp(a, b) == 0,
       "a database migrated from version 3 has the same tables, columns and "
       "indexes as a new one");
    free(a);
    free(b);

    p.batch = 2;
    p.seqlen_q = p.seqlen_k = 4096;
    p.heads_q = 32;
    p.heads_kv = 8;
    p.head_dim_qk = 128;
    p.causal = 1;
    st = db_open(&d, path, NULL, 0, warn, sizeof warn, why, sizeof why);
    st = st == FA4_OK ? db_lookup(d, &got, &src, dev, &p, why, sizeof why) : st;
    ok(st == FA4_OK && src == FA4_SOURCE_USER_EXACT,
       "the migrated winner serves the plain problem");
    p.softcap = 30;
    st = d ? db_lookup(d, &got, &src, dev, &p, why, sizeof why) : FA4_EDB;
    ok(st == FA4_EDB && strstr(why, "no entry"),
       "but not the softcapped one (a plain winner is not its variant)");
    p.softcap = 0;
    p.attention_sinks = 1;
    st = d ? db_lookup(d, &got, &src, dev, &p, why, sizeof why) : FA4_EDB;
    ok(st == FA4_EDB && strstr(why, "no entry"), "nor the one with sinks");
    db_close(d);
    d = NULL;

    /* Read-only and older: the file is read at version 3, its rows as
       softcap 0 and sinks 0. */
    snprintf(user, sizeof user, "%s/v3-user.db", tmpdir);
    p.attention_sinks = 0;
    st = db_open(&d, user, sys, 0, warn, sizeof warn, why, sizeof why);
    st = st == FA4_OK ? db_lookup(d, &got, &src, dev, &p, why, sizeof why) : st;
    ok(st == FA4_OK && src == FA4_SOURCE_SYSTEM_EXACT,
       "a version-3 system database serves the plain problem");
    p.softcap = 50;
    st = d ? db_lookup(d, &got, &src, dev, &p, why, sizeof why) : FA4_EDB;
    ok(st == FA4_EDB && strstr(why, "no entry"),
       "and not the softcapped one, though it has no softcap column");
    p.softcap = 0;
    p.attention_sinks = 1;
    st = d ? db_lookup(d, &got, &src, dev, &p, why, sizeof why) : FA4_EDB;
    ok(st == FA4_EDB && strstr(why, "no entry"), "nor the one with sinks");
    db_close(d);
    is_int(query_int(sys, "PRAGMA user_version"), 3,
           "the system database is left at version 3");
}

int main(void)
{
    char path[1024], old[1024], newer[1024], foreign[1024], buf[1024];
    char warn[1024], why[1024];
    char *file, *a, *b, *before, *after;
    size_t n1, n2;
    db *d = NULL;
    fa4_status st;
    sqlite3 *h = NULL;
    device_limits dev;
    fa4_problem p = FA4_PROBLEM_INIT;
    fa4_config cfg = FA4_CONFIG_INIT, got = FA4_CONFIG_INIT;
    fa4_config_source src = 0;
    int i, last;

    plan_lazy();
    make_tmpdir();
    dev = test_device("NVIDIA H100 80GB HBM3", 90, 132);

    /* A new file, in a directory that does not exist yet. */
    snprintf(path, sizeof path, "%s/a/b/fa4.db", tmpdir);
    st = db_open(&d, path, NULL, 0, warn, sizeof warn, why, sizeof why);
    is_int(st, FA4_OK, "db_open creates a new database with its directories");
    ok(warn[0] == '\0', "a new database gives no warning");
    db_close(d);
    d = NULL;
    is_int(query_int(path, "PRAGMA user_version"), DB_SCHEMA_VERSION,
           "a new database has user_version %d", DB_SCHEMA_VERSION);
    is_int(query_int(path, "SELECT count(*) FROM sqlite_master WHERE type = "
                     "'table' AND name IN ('devices', 'winners', 'trials', "
                     "'binaries')"), 4,
           "a new database has the tables devices, winners, trials, binaries");
    is_int(query_int(path, "SELECT journal_mode = 'wal' FROM "
                     "pragma_journal_mode"), 1,
           "a new database is in WAL mode");
    st = db_open(&d, path, NULL, 0, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_OK && warn[0] == '\0', "reopening an up-to-date database "
       "succeeds without warning");
    db_close(d);
    d = NULL;

    /* One source of truth: the embedded SQL is the files'. */
    file = slurp_src("db/schema.sql");
    if (!file)
        diag("db/schema.sql not found: run from the source tree or set "
             "srcdir or FA4_TOP_SRCDIR");
    ok(file && strcmp(file, db_schema_sql) == 0,
       "the embedded schema equals db/schema.sql");
    free(file);
    last = 0;
    for (i = 0; db_migrations[i].sql; i++) {
        file = slurp_src(db_migrations[i].file);
        ok(file && strcmp(file, db_migrations[i].sql) == 0,
           "the embedded migration to version %d equals %s",
           db_migrations[i].to, db_migrations[i].file);
        free(file);
        last = db_migrations[i].to;
    }
    is_int(last, DB_SCHEMA_VERSION, "the last migration produces the "
           "current schema version");
    snprintf(buf, sizeof buf, "PRAGMA user_version = %d;", DB_SCHEMA_VERSION);
    has_str(db_schema_sql, buf, "db/schema.sql sets the current version");

    /* A version-1 database made by hand, with a winner in it. */
    snprintf(old, sizeof old, "%s/v1.db", tmpdir);
    file = slurp_src("db/migrations/0001-initial.sql");
    ok(file != NULL, "db/migrations/0001-initial.sql is readable");
    cfg.family = FA4_FAMILY_SM90;
    cfg.bm = 128;
    cfg.bn = 176;
    cfg.stages = 2;
    cfg.consumer_wgs = 2;
    fa4_config_format(&cfg, buf, sizeof buf);
    {
        char fp[512], *sql;

        db_device_fingerprint(fp, sizeof fp, &dev);
        sql = sqlite3_mprintf(
            "%s INSERT INTO devices (fingerprint, name, cc, sm_count, "
            "smem_per_block_optin, driver_version, nvrtc_version) VALUES "
            "(%Q, %Q, 90, 132, 232448, 12040, 12040);"
            "INSERT INTO winners (device_id, family, source_hash, dtype, "
            "head_dim_qk, head_dim_v, gqa_group, causal, window_left, "
            "window_right, varlen, paged, page_size, seqlen_q_bucket, "
            "seqlen_k_bucket, config, median_ms, tflops) VALUES (1, 90, %Q, "
            "1, 128, 128, 4, 1, -1, 0, 0, 0, 0, 4096, 4096, %Q, 1.5, 600);"
            "INSERT INTO trials (device_id, family, source_hash, dtype, "
            "head_dim_qk, head_dim_v, gqa_group, causal, window_left, "
            "window_right, varlen, paged, page_size, seqlen_q_bucket, "
            "seqlen_k_bucket, batch, heads_q, seqlen_q, seqlen_k, config, ok) "
            "VALUES (1, 90, %Q, 1, 128, 128, 4, 1, -1, 0, 0, 0, 0, 4096, "
            "4096, 2, 32, 4096, 4096, %Q, 1);",
            file ? file : "", fp, dev.name, jit_source_hash(FA4_FAMILY_SM90),
            buf, jit_source_hash(FA4_FAMILY_SM90), buf);
        ok(sqlite3_open(old, &h) == SQLITE_OK &&
           sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK,
           "a version-1 database is made from 0001-initial.sql");
        sqlite3_free(sql);
        sqlite3_close(h);
        h = NULL;
    }
    free(file);
    is_int(query_int(old, "PRAGMA user_version"), 1, "it has user_version 1");
    st = db_open(&d, old, NULL, 0, warn, sizeof warn, why, sizeof why);
    is_int(st, FA4_OK, "db_open migrates a version-1 database");
    p.seqlen_q = p.seqlen_k = 3000;
    p.heads_q = 32;
    p.heads_kv = 8;
    p.head_dim_qk = 128;
    p.causal = 1;
    p.batch = 2;
    st = d ? db_lookup(d, &got, &src, &dev, &p, why, sizeof why) : FA4_EDB;
    ok(st == FA4_OK && src == FA4_SOURCE_USER_EXACT && got.bn == 176,
       "the winner stored by version 1 is found after the migration");
    db_close(d);
    d = NULL;
    is_int(query_int(old, "PRAGMA user_version"), DB_SCHEMA_VERSION,
           "the migrated database has user_version %d", DB_SCHEMA_VERSION);
    is_int(query_int(old, "SELECT count(*) FROM trials WHERE "
                     "library_version = ''"), 1,
           "rows from version 1 keep their data and get library_version ''");
    a = schema_shape(old);
    b = schema_shape(path);
    ok(a && b && strlen(a) > 100 && strcmp(a, b) == 0,
       "a migrated database has the same tables, columns and indexes as a "
       "new one");
    free(a);
    free(b);

    test_from_v3(path, &dev, buf);

    /* A database written by a newer libfa4. */
    snprintf(newer, sizeof newer, "%s/newer.db", tmpdir);
    ok(sqlite3_open(newer, &h) == SQLITE_OK &&
       sqlite3_exec(h, db_schema_sql, NULL, NULL, NULL) == SQLITE_OK &&
       sqlite3_exec(h, "PRAGMA user_version = 99", NULL, NULL, NULL) ==
           SQLITE_OK, "a database with user_version 99 is made");
    sqlite3_close(h);
    h = NULL;
    before = slurp(newer, &n1);
    why[0] = '\0';
    st = db_open(&d, newer, NULL, 0, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_EDB && d == NULL && strstr(why, newer) &&
       strstr(why, "schema version 99 is newer"),
       "a newer schema is FA4_EDB naming the file and the version");
    diag("  %s", why);
    after = slurp(newer, &n2);
    ok(before && after && n1 == n2 && memcmp(before, after, n1) == 0,
       "the newer database is left byte for byte as it was");
    free(before);
    free(after);

    /* Another program's SQLite database. */
    snprintf(foreign, sizeof foreign, "%s/foreign.db", tmpdir);
    sqlite3_open(foreign, &h);
    sqlite3_exec(h, "CREATE TABLE notes (t TEXT); INSERT INTO notes "
                 "VALUES ('mine')", NULL, NULL, NULL);
    sqlite3_close(h);
    h = NULL;
    st = db_open(&d, foreign, NULL, 0, warn, sizeof warn, why, sizeof why);
    ok(st == FA4_EDB && strstr(why, foreign) &&
       query_int(foreign, "SELECT count(*) FROM sqlite_master") == 1,
       "another program's SQLite database is FA4_EDB and left without our "
       "tables");
    diag("  %s", why);

    /* Where the user database lives by default. */
    setenv("FA4_DB", "/srv/x/tuned.db", 1);
    has_str(db_default_path(buf, sizeof buf), "/srv/x/tuned.db",
            "db_default_path takes $FA4_DB first");
    unsetenv("FA4_DB");
    setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
    setenv("HOME", "/home/u", 1);
    a = db_default_path(buf, sizeof buf);
    ok(a && strcmp(a, "/xdg/cache/fa4/fa4.db") == 0,
       "db_default_path uses $XDG_CACHE_HOME/fa4/fa4.db next");
    setenv("XDG_CACHE_HOME", "relative/cache", 1);
    a = db_default_path(buf, sizeof buf);
    ok(a && strcmp(a, "/home/u/.cache/fa4/fa4.db") == 0,
       "db_default_path ignores a relative $XDG_CACHE_HOME (XDG spec) and "
       "falls back to ~/.cache/fa4/fa4.db");
    unsetenv("XDG_CACHE_HOME");
    a = db_default_path(buf, sizeof buf);
    ok(a && strcmp(a, "/home/u/.cache/fa4/fa4.db") == 0,
       "db_default_path uses ~/.cache/fa4/fa4.db without $XDG_CACHE_HOME");
    setenv("FA4_SYSTEM_DB", "", 1);
    ok(db_default_system_path(buf, sizeof buf) == NULL,
       "an empty $FA4_SYSTEM_DB means no system database");
    setenv("FA4_SYSTEM_DB", "/opt/fa4/system.db", 1);
    a = db_default_system_path(buf, sizeof buf);
    ok(a && strcmp(a, "/opt/fa4/system.db") == 0,
       "db_default_system_path takes $FA4_SYSTEM_DB");

    remove_tmpdir();
    return done_testing();
}
