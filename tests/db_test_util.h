/*
** db_test_util.h -- what the database tests (tests/test_db_*.c) share: a
** temporary directory made and removed per run, SQL run straight on a
** database file, whole-file reads, and the device the entries are tuned
** on.  Header-only; every function is static inline so that a test that
** does not call one gets no warning.  Include after tap.h and db.h, with
** _XOPEN_SOURCE 700 defined (nftw, mkdtemp).
*/
#ifndef FA4_DB_TEST_UTIL_H
#define FA4_DB_TEST_UTIL_H

#include <ftw.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The test's temporary directory: make_tmpdir() fills it in. */
static char tmpdir[512];

/* Remove one entry (nftw callback). */
static inline int rm_entry(const char *path, const struct stat *sb, int flag,
                           struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    return remove(path);
}

/* Make a fresh temporary directory under $TMPDIR or /tmp into tmpdir;
** bail out of the test when that fails. */
static inline void make_tmpdir(void)
{
    const char *t = getenv("TMPDIR");

    snprintf(tmpdir, sizeof tmpdir, "%s/fa4-test-db-XXXXXX",
             t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) {
        printf("Bail out! mkdtemp %s failed\n", tmpdir);
        exit(1);
    }
}

/* Remove tmpdir and everything below it. */
static inline void remove_tmpdir(void)
{
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Run SQL on the file PATH; 1 on success. */
static inline int exec_sql(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    int r = sqlite3_open(path, &h) == SQLITE_OK &&
            sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK;

    sqlite3_close(h);
    return r;
}

/* One integer from SQL on the file PATH, or -999. */
static inline long query_int(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    long v = -999;

    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

/* Read the whole file PATH (malloc'd, NUL-terminated) or NULL; its length
** goes to *LEN when LEN is not NULL. */
static inline char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = (size_t)n;
    }
    return buf;
}

/* A device NAME of compute capability CC (90 or 80) with SMS SMs, as the
** database sees it: its arch's shared-memory opt-in, driver and NVRTC
** 12.4. */
static inline device_limits test_device(const char *name, int cc, int sms)
{
    device_limits d;

    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", name);
    d.cc = cc;
    snprintf(d.arch, sizeof d.arch, cc == 90 ? "sm_90a" : "sm_%d", cc);
    d.sm_count = sms;
    d.smem_per_block_optin = cc == 90 ? 232448 : 166912;
    d.driver_version = 12040;
    d.nvrtc_version = 12040;
    return d;
}

/* Open the database file PATH, store the winner CFG for P on DEV (MS
** milliseconds, 100 TFLOPS) and close it; 1 on success, with the reason
** as a diag line otherwise. */
static inline int store_winner_file(const char *path, const device_limits *dev,
                                    const fa4_problem *p, const fa4_config *cfg,
                                    double ms)
{
    db *d = NULL;
    char warn[512], why[512];
    int r = db_open(&d, path, NULL, 0, warn, sizeof warn, why,
                    sizeof why) == FA4_OK &&
            db_store_winner(d, dev, p, cfg, ms, 100.0, why, sizeof why) ==
                FA4_OK;

    if (!r)
        diag("store_winner_file: %s", why);
    db_close(d);
    return r;
}

#endif
