/*
** db_binary.c -- the compiled-kernel cache: cubins keyed by jit_key(),
** with a checksum verified on every read (a row that fails is dropped and
** the caller compiles again).  Reads go through the reader connection, so
** a plan never waits for another thread's write here.
*/
#include "db_int.h"
#include "hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Look KEY up in H: FA4_OK with the blob, FA4_EDB "not found", or FA4_EDB
** with *BAD set when the stored checksum does not match. */
static fa4_status binary_read(void **blob, size_t *size, int *bad, sqlite3 *h,
                              const char *path, long timeout_ms,
                              const char *key, char *why, size_t why_size)
{
    sqlite3_stmt *st = NULL;
    const void *p;
    int rc, n;
    char sum[17];
    const char *want;

    *bad = 0;
    rc = db_prep(h, &st, "SELECT blob, size, checksum FROM binaries WHERE "
                 "key = :key", timeout_ms);
    if (rc != SQLITE_OK)
        goto err;
    db_bind_text(st, ":key", key);
    rc = db_step_retry(st, timeout_ms);
    if (rc == SQLITE_DONE) {
        sqlite3_finalize(st);
        return db_fail(why, why_size, FA4_EDB, "not found");
    }
    if (rc != SQLITE_ROW)
        goto err;
    p = sqlite3_column_blob(st, 0);
    n = sqlite3_column_bytes(st, 0);
    want = (const char *)sqlite3_column_text(st, 2);
    snprintf(sum, sizeof sum, "%016llx",
             (unsigned long long)hash_fnv1a(HASH_FNV1A_INIT, p, (size_t)n));
    if (!want || strcmp(want, sum) != 0 || sqlite3_column_int64(st, 1) != n) {
        *bad = 1;
        db_fail(why, why_size, FA4_EDB, "warning: %s: cached kernel %s has "
                "checksum %s, stored %s (%d bytes, %lld recorded); dropped, it "
                "will be recompiled", path, key, sum, want ? want : "(none)", n,
                (long long)sqlite3_column_int64(st, 1));
        sqlite3_finalize(st);
        return FA4_EDB;
    }
    *blob = malloc(n ? (size_t)n : 1);
    if (!*blob) {
        sqlite3_finalize(st);
        return db_fail(why, why_size, FA4_ENOMEM, "out of memory");
    }
    if (n)
        memcpy(*blob, p, (size_t)n);
    *size = (size_t)n;
    sqlite3_finalize(st);
    return FA4_OK;
err:
    sqlite3_finalize(st);
    return db_read_error(h, path, rc, "read binary", why, why_size);
}

/* Drop the bad row KEY in its own short transaction (best effort). */
static void binary_drop(db *d, const char *key)
{
    sqlite3_stmt *del = NULL;
    fa4_status ds = FA4_EDB;

    db_lock(d);
    if (db_write_begin(d, NULL, 0) == FA4_OK) {
        if (db_prep(d->user, &del, "DELETE FROM binaries WHERE key = :key",
                    d->timeout_ms) == SQLITE_OK) {
            db_bind_text(del, ":key", key);
            if (sqlite3_step(del) == SQLITE_DONE)
                ds = FA4_OK;
        }
        sqlite3_finalize(del);
        db_write_end(d, ds, NULL, 0);
    }
    db_unlock(d);
}

fa4_status db_binary_get(db *d, void **blob, size_t *size, const char *key,
                         char *why, size_t why_size)
{
    fa4_status st = FA4_EDB;
    int bad = 0, sysbad = 0, version;
    char msg[1024] = "not found";
    sqlite3 *h;

    if (!d || !blob || !size || !key)
        return db_fail(why, why_size, FA4_EINVAL, "db_binary_get: NULL argument");
    *blob = NULL;
    *size = 0;
    h = db_read_begin(d, &version);
    if (version >= 1)
        st = binary_read(blob, size, &bad, h, d->user_path, d->timeout_ms,
                         key, msg, sizeof msg);
    db_read_end(d);
    if (bad && !d->readonly)
        binary_drop(d, key);
    if (st == FA4_EDB && !bad && d->sys && strcmp(msg, "not found") == 0) {
        pthread_mutex_lock(&d->rlock);
        st = binary_read(blob, size, &sysbad, d->sys, d->sys_path,
                         d->timeout_ms, key, msg, sizeof msg);
        pthread_mutex_unlock(&d->rlock);
    }
    db_fail(why, why_size, st, "%s", msg);
    return st;
}

fa4_status db_binary_put(db *d, const char *key, const char *arch,
                         const void *blob, size_t size, char *why,
                         size_t why_size)
{
    sqlite3_stmt *st = NULL;
    fa4_status s;
    char sum[17];
    int rc;

    if (!d || !key || !arch || (!blob && size))
        return db_fail(why, why_size, FA4_EINVAL, "db_binary_put: NULL argument");
    snprintf(sum, sizeof sum, "%016llx",
             (unsigned long long)hash_fnv1a(HASH_FNV1A_INIT, blob, size));
    db_lock(d);
    if ((s = db_write_begin(d, why, why_size)) != FA4_OK)
        goto done;
    rc = db_prep(d->user, &st,
                 "INSERT OR REPLACE INTO binaries (key, arch, blob, size, "
                 "checksum, library_version) VALUES (:key, :arch, :blob, "
                 ":size, :checksum, :library_version)", d->timeout_ms);
    if (rc == SQLITE_OK) {
        db_bind_text(st, ":key", key);
        db_bind_text(st, ":arch", arch);
        sqlite3_bind_blob64(st, sqlite3_bind_parameter_index(st, ":blob"),
                            size ? blob : "", size, SQLITE_STATIC);
        db_bind_int(st, ":size", (long long)size);
        db_bind_text(st, ":checksum", sum);
        db_bind_text(st, ":library_version", fa4_version());
        rc = sqlite3_step(st);
    }
    s = rc == SQLITE_DONE ? FA4_OK
                          : db_sqlite_error(d->user, d->user_path, rc,
                                            "store binary", why, why_size);
    sqlite3_finalize(st);
    s = db_write_end(d, s, why, why_size);
done:
    db_unlock(d);
    return s;
}
