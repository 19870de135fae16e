/*
** test_db_binary.c -- the compiled-kernel cache in the database: a blob
** comes back byte for byte; its FNV-1a checksum is stored and verified on
** every read; a blob that no longer matches is dropped with a warning so
** that the caller recompiles; the system database serves as a second
** level.  No GPU needed.
*/
#define _XOPEN_SOURCE 700

#include "tap.h"
#include "db.h"
#include "db_test_util.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* The text of one value from SQL on PATH into BUF ("" when none). */
static char *query_text(char *buf, size_t size, const char *path,
                        const char *sql)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;

    buf[0] = '\0';
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(buf, size, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(h);
    return buf;
}

int main(void)
{
    char path[1024], sys[1024], warn[512], why[1024], buf[256];
    unsigned seed = tap_seed();
    unsigned char *big;
    void *blob = NULL;
    size_t size = 0, i, nbig = 1 << 20;
    db *d = NULL;
    fa4_status st;

    plan_lazy();
    make_tmpdir();
    snprintf(path, sizeof path, "%s/fa4.db", tmpdir);
    snprintf(sys, sizeof sys, "%s/system.db", tmpdir);
    big = malloc(nbig);
    srand(seed);
    for (i = 0; i < nbig; i++)
        big[i] = (unsigned char)(rand() >> 7);

    st = db_open(&d, path, NULL, 0, warn, sizeof warn, why, sizeof why);
    is_int(st, FA4_OK, "db_open makes a new database");
    if (st != FA4_OK)
        return done_testing();

    st = db_binary_get(d, &blob, &size, "0123456789abcdef", why, sizeof why);
    ok(st == FA4_EDB && blob == NULL && strcmp(why, "not found") == 0,
       "a key never stored is FA4_EDB \"not found\"");

    st = db_binary_put(d, "00000000000000aa", "sm_90a", big, nbig, why,
                       sizeof why);
    is_int(st, FA4_OK, "a 1 MiB random blob is stored");
    st = db_binary_get(d, &blob, &size, "00000000000000aa", why, sizeof why);
    ok(st == FA4_OK && size == nbig && blob && memcmp(blob, big, nbig) == 0,
       "it comes back byte for byte");
    free(blob);
    blob = NULL;

    st = db_binary_put(d, "00000000000000bb", "sm_80", "a", 1, why,
                       sizeof why);
    is_int(st, FA4_OK, "the blob \"a\" is stored");
    ok(strcmp(query_text(buf, sizeof buf, path, "SELECT checksum || ' ' || "
                         "arch || ' ' || size FROM binaries WHERE key = "
                         "'00000000000000bb'"),
              "af63dc4c8601ec8c sm_80 1") == 0,
       "its checksum is FNV-1a 64 (\"a\" -> af63dc4c8601ec8c), with arch "
       "and size");
    ok(strcmp(query_text(buf, sizeof buf, path, "SELECT library_version FROM "
                         "binaries WHERE key = '00000000000000bb'"),
              fa4_version()) == 0, "the library version is recorded");

    st = db_binary_put(d, "00000000000000cc", "sm_90a", NULL, 0, why,
                       sizeof why);
    st = st == FA4_OK ? db_binary_get(d, &blob, &size, "00000000000000cc", why,
                                      sizeof why) : st;
    ok(st == FA4_OK && size == 0 && blob != NULL, "an empty blob round-trips");
    free(blob);
    blob = NULL;

    st = db_binary_put(d, "00000000000000bb", "sm_80", "bc", 2, why,
                       sizeof why);
    st = st == FA4_OK ? db_binary_get(d, &blob, &size, "00000000000000bb", why,
                                      sizeof why) : st;
    ok(st == FA4_OK && size == 2 && memcmp(blob, "bc", 2) == 0,
       "storing under an existing key replaces the blob");
    free(blob);
    blob = NULL;

    /* A blob damaged behind the library's back. */
    ok(exec_sql(path, "UPDATE binaries SET blob = CAST(zeroblob(1048576) AS "
                "BLOB) WHERE key = '00000000000000aa'"),
       "the stored 1 MiB blob is overwritten by hand (checksum kept)");
    why[0] = '\0';
    st = db_binary_get(d, &blob, &size, "00000000000000aa", why, sizeof why);
    ok(st == FA4_EDB && blob == NULL && strstr(why, "warning") &&
       strstr(why, "checksum") && strstr(why, "00000000000000aa"),
       "a checksum mismatch is FA4_EDB with a warning naming the key");
    diag("  %s", why);
    ok(strcmp(query_text(buf, sizeof buf, path, "SELECT count(*) FROM "
                         "binaries WHERE key = '00000000000000aa'"), "0") == 0,
       "the bad row is dropped");
    st = db_binary_get(d, &blob, &size, "00000000000000aa", why, sizeof why);
    ok(st == FA4_EDB && strcmp(why, "not found") == 0,
       "the next read is a plain miss (the caller recompiles)");
    st = db_binary_put(d, "00000000000000aa", "sm_90a", big, nbig, why,
                       sizeof why);
    st = st == FA4_OK ? db_binary_get(d, &blob, &size, "00000000000000aa", why,
                                      sizeof why) : st;
    ok(st == FA4_OK && size == nbig && memcmp(blob, big, nbig) == 0,
       "the recompiled blob is stored and read again");
    free(blob);
    blob = NULL;
    ok(exec_sql(path, "UPDATE binaries SET size = 7 WHERE key = "
                "'00000000000000bb'"), "a recorded size is changed by hand");
    st = db_binary_get(d, &blob, &size, "00000000000000bb", why, sizeof why);
    ok(st == FA4_EDB && strstr(why, "checksum"),
       "a size that does not match the blob is caught too");
    db_close(d);
    d = NULL;

    /* The system database as a second level. */
    st = db_open(&d, sys, NULL, 0, warn, sizeof warn, why, sizeof why);
    st = st == FA4_OK ? db_binary_put(d, "00000000000000dd", "sm_90a", "sys",
                                      3, why, sizeof why) : st;
    db_close(d);
    d = NULL;
    is_int(st, FA4_OK, "a system database with one blob is made");
    st = db_open(&d, path, sys, 0, warn, sizeof warn, why, sizeof why);
    st = st == FA4_OK ? db_binary_get(d, &blob, &size, "00000000000000dd", why,
                                      sizeof why) : st;
    ok(st == FA4_OK && size == 3 && memcmp(blob, "sys", 3) == 0,
       "a key missing from the user database is read from the system one");
    free(blob);
    db_close(d);

    free(big);
    remove_tmpdir();
    return done_testing();
}
