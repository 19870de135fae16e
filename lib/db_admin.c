/*
** db_admin.c -- the database seen by a person, for fa4-tune: db_show()
** prints a table's rows, db_check() verifies integrity and lists every
** row lookup cannot use (unparseable, out of range, no device
** fingerprint), every stale row (used only below current ones) and every
** binary whose checksum fails.  Nothing changes.
*/
#include "db_int.h"
#include "hash.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* A growing string. */
typedef struct db_strbuf {
    char *p;
    size_t len, cap;
    int oom;
} db_strbuf;

/* Append the formatted text to B (sets B->oom on failure). */
static void sb_printf(db_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sb_printf(db_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (b->oom)
        return;
    for (;;) {
        size_t room = b->cap - b->len;

        va_start(ap, fmt);
        n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->p && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        {
            size_t cap = (b->cap ? b->cap * 2 : 256) + (size_t)n + 1;
            char *q = realloc(b->p, cap);

            if (!q) {
                b->oom = 1;
                return;
            }
            b->p = q;
            b->cap = cap;
            b->p[b->len] = '\0';
        }
    }
}

/* The query db_show runs for TABLE on a database at VERSION, or NULL. */
static char *show_query(const char *table, int version)
{
    const char *lib = version >= 2 ? "library_version" : "'' AS library_version";
    const char *wlib = version >= 2 ? "w.library_version" : lib;
    const char *tlib = version >= 2 ? "t.library_version" : lib;
    char *wcols = db_key_sql("w.@", ", ", DB_KEY_ALL, version, "0 AS @");
    char *worder = db_key_sql("w.@", ", ", DB_KEY_ALL, version, NULL);
    char *tcols = db_key_sql("t.@", ", ", DB_KEY_ALL, version, "0 AS @");
    char *sql = NULL;

    if (!wcols || !worder || !tcols)
        ;
    else if (strcmp(table, "devices") == 0)
        sql = sqlite3_mprintf("SELECT id, fingerprint, name, cc, sm_count, "
                              "smem_per_block_optin, driver_version, "
                              "nvrtc_version, created_at FROM devices "
                              "ORDER BY id");
    else if (strcmp(table, "winners") == 0)
        sql = sqlite3_mprintf("SELECT d.name AS device, d.fingerprint, "
                              "w.family, w.source_hash, %s, w.config, "
                              "w.median_ms, w.tflops, w.updated_at, %s "
                              "FROM winners w LEFT JOIN devices d ON d.id = "
                              "w.device_id ORDER BY d.id, w.family, %s",
                              wcols, wlib, worder);
    else if (strcmp(table, "trials") == 0)
        sql = sqlite3_mprintf("SELECT t.id, d.name AS device, t.family, "
                              "t.source_hash, %s, t.batch, t.heads_q, "
                              "t.seqlen_q, t.seqlen_k, t.config, t.ok, "
                              "t.failure, t.median_ms, t.min_ms, t.max_ms, "
                              "t.reps, t.tflops, t.max_rel_err, "
                              "t.created_at, %s FROM trials t LEFT JOIN "
                              "devices d ON d.id = t.device_id ORDER BY "
                              "t.id", tcols, tlib);
    else if (strcmp(table, "binaries") == 0)
        sql = sqlite3_mprintf("SELECT key, arch, size, checksum, created_at, "
                              "%s FROM binaries ORDER BY key", lib);
    sqlite3_free(wcols);
    sqlite3_free(worder);
    sqlite3_free(tcols);
    return sql;
}

/* 1 when TABLE is one db_show knows. */
static int known_table(const char *table)
{
    return !strcmp(table, "devices") || !strcmp(table, "winners") ||
           !strcmp(table, "trials") || !strcmp(table, "binaries");
}

fa4_status db_show(db *d, char **out, const char *table, int flags,
                   char *why, size_t why_size)
{
    sqlite3 *h;
    sqlite3_stmt *st = NULL;
    const char *path;
    char *sql = NULL;
    json_t *arr = NULL;
    db_strbuf b = { NULL, 0, 0, 0 };
    int version, rc, i, n, first = 1, system = (flags & DB_SHOW_SYSTEM) != 0;
    fa4_status s = FA4_OK;

    if (!out)
        return db_fail(why, why_size, FA4_EINVAL, "db_show: NULL argument");
    *out = NULL;
    if (!d || !table)
        return db_fail(why, why_size, FA4_EINVAL, "db_show: NULL argument");
    if (!known_table(table))
        return db_fail(why, why_size, FA4_EINVAL, "table \"%s\": expected "
                       "devices, winners, trials or binaries", table);
    db_lock(d);
    h = db_handle(d, system, &version);
    path = system ? d->sys_path : d->user_path;
    if (!h) {
        s = db_fail(why, why_size, FA4_EDB, "no system database");
        goto done;
    }
    if (version < 1) {
        s = db_fail(why, why_size, FA4_EDB, "%s: empty database (no fa4 "
                    "tables yet: nothing was stored in it)", path);
        goto done;
    }
    if (!(sql = show_query(table, version))) {
        s = db_fail(why, why_size, FA4_ENOMEM, "out of memory");
        goto done;
    }
    if ((flags & DB_SHOW_JSON) && !(arr = json_array())) {
        s = db_fail(why, why_size, FA4_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = db_prep(h, &st, sql, d->timeout_ms)) != SQLITE_OK)
        goto sqlerr;
    n = sqlite3_column_count(st);
    if (!arr) {
        for (i = 0; i < n; i++)
            sb_printf(&b, "%s%s", i ? "\t" : "", sqlite3_column_name(st, i));
        sb_printf(&b, "\n");
    }
    while ((rc = first ? db_step_retry(st, d->timeout_ms)
                       : sqlite3_step(st)) == SQLITE_ROW) {
        json_t *obj = arr ? json_object() : NULL;

        first = 0;
        for (i = 0; i < n; i++) {
            int type = sqlite3_column_type(st, i);
            const char *txt = (const char *)sqlite3_column_text(st, i);

            if (!arr) {
                sb_printf(&b, "%s%s", i ? "\t" : "", txt ? txt : "");
                continue;
            }
            if (!obj)
                continue;
            json_object_set_new(obj, sqlite3_column_name(st, i),
                type == SQLITE_INTEGER ? json_integer(sqlite3_column_int64(st, i))
                : type == SQLITE_FLOAT ? json_real(sqlite3_column_double(st, i))
                : type == SQLITE_NULL ? json_null() : json_string(txt));
        }
        if (arr && (!obj || json_array_append_new(arr, obj) != 0))
            b.oom = 1;
        if (!arr)
            sb_printf(&b, "\n");
    }
    if (rc != SQLITE_DONE)
        goto sqlerr;
    if (arr) {
        char *text = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

        if (!text)
            b.oom = 1;
        else {
            sb_printf(&b, "%s\n", text);
            free(text);
        }
    }
    if (b.oom) {
        s = db_fail(why, why_size, FA4_ENOMEM, "out of memory");
        goto done;
    }
    *out = b.p;
    b.p = NULL;
    goto done;
sqlerr:
    s = db_read_error(h, path, rc, "show", why, why_size);
done:
    db_unlock(d);
    sqlite3_finalize(st);
    sqlite3_free(sql);
    json_decref(arr);
    free(b.p);
    return s;
}

/* The integrity check of H into B: 1 when it passes, 0 when it fails,
** -1 with RC set when it cannot run. */
static int check_integrity(db_strbuf *b, sqlite3 *h, long timeout_ms, int *rc)
{
    sqlite3_stmt *st = NULL;
    int ok = 1, first = 1;

    if ((*rc = db_prep(h, &st, "PRAGMA integrity_check", timeout_ms)) != SQLITE_OK)
        return -1;
    while ((*rc = first ? db_step_retry(st, timeout_ms)
                        : sqlite3_step(st)) == SQLITE_ROW) {
        const char *line = (const char *)sqlite3_column_text(st, 0);

        first = 0;
        if (line && strcmp(line, "ok") != 0) {
            ok = 0;
            sb_printf(b, "  integrity: %s\n", line);
        }
    }
    sqlite3_finalize(st);
    if (*rc != SQLITE_DONE)
        return -1;
    if (ok)
        sb_printf(b, "  integrity: ok\n");
    return ok;
}

/* Check one database H (schema VERSION) into B: integrity, device rows
** without a fingerprint, winners lookup cannot use, bad binaries.  Adds to
** *PROBLEMS; FA4_EDB when the integrity check fails. */
static fa4_status check_one(db_strbuf *b, int *problems, sqlite3 *h,
                            int version, const char *path, long timeout_ms,
                            char *why, size_t why_size)
{
    sqlite3_stmt *st = NULL;
    int rc, ok;
    long long nbin = 0, nwin = 0;
    char *cols = NULL, *sql = NULL;

    sb_printf(b, "%s:\n", path);
    if ((ok = check_integrity(b, h, timeout_ms, &rc)) < 0)
        goto err;
    if (!ok)
        return db_fail(why, why_size, FA4_EDB, "%s: integrity check failed "
                       "(the file was left unchanged)", path);
    if (version < 1) {
        sb_printf(b, "  empty database: no fa4 tables yet, nothing to check\n");
        return FA4_OK;
    }

    rc = db_prep(h, &st, "SELECT id, name FROM devices WHERE fingerprint IS "
                 "NULL OR fingerprint = ''", timeout_ms);
    if (rc != SQLITE_OK)
        goto err;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1);

        (*problems)++;
        sb_printf(b, "  device without fingerprint: id %lld (%s): its winners "
                  "are never used\n", (long long)sqlite3_column_int64(st, 0),
                  name ? name : "no name");
    }
    if (rc != SQLITE_DONE)
        goto err;
    sqlite3_finalize(st);
    st = NULL;

    cols = db_key_sql("@=' || coalesce(w.@, 'NULL') || '", " ", DB_KEY_ALL,
                      version, NULL);
    sql = cols ? sqlite3_mprintf("SELECT d.name, w.family, w.source_hash, "
                                 "w.config, d.fingerprint, '%s', d.id "
                                 "FROM winners w LEFT JOIN devices d ON "
                                 "d.id = w.device_id", cols) : NULL;
    if (!sql) {
        rc = SQLITE_NOMEM;
        goto err;
    }
    if ((rc = db_prep(h, &st, sql, timeout_ms)) != SQLITE_OK)
        goto err;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char reason[512];
        const char *name = (const char *)sqlite3_column_text(st, 0);
        const char *text = (const char *)sqlite3_column_text(st, 3);
        const char *kind = "unusable";
        int family = sqlite3_column_int(st, 1);

        nwin++;
        if (sqlite3_column_type(st, 6) == SQLITE_NULL)
            snprintf(reason, sizeof reason, "no device row");
        else if (!db_row_unusable(reason, sizeof reason, family, text,
                                  (const char *)sqlite3_column_text(st, 4),
                                  NULL)) {
            if (!db_row_stale(reason, sizeof reason, family,
                              (const char *)sqlite3_column_text(st, 2)))
                continue;
            kind = "stale";
        }
        (*problems)++;
        sb_printf(b, "  %s winner: %s family=%d %s: %s: %s\n", kind,
                  name ? name : "(no device)", family,
                  sqlite3_column_text(st, 5), text ? text : "(no config)",
                  reason);
    }
    if (rc != SQLITE_DONE)
        goto err;
    sqlite3_finalize(st);
    st = NULL;

    rc = db_prep(h, &st, "SELECT key, blob, size, checksum FROM binaries",
                 timeout_ms);
    if (rc != SQLITE_OK)
        goto err;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const void *p = sqlite3_column_blob(st, 1);
        int n = sqlite3_column_bytes(st, 1);
        const char *want = (const char *)sqlite3_column_text(st, 3);
        char sum[17];

        nbin++;
        snprintf(sum, sizeof sum, "%016llx",
                 (unsigned long long)hash_fnv1a(HASH_FNV1A_INIT, p, (size_t)n));
        if (want && strcmp(want, sum) == 0 && sqlite3_column_int64(st, 2) == n)
            continue;
        (*problems)++;
        sb_printf(b, "  bad binary: %s checksum %s, stored %s (dropped when "
                  "next read)\n", sqlite3_column_text(st, 0), sum,
                  want ? want : "(none)");
    }
    if (rc != SQLITE_DONE)
        goto err;
    sqlite3_finalize(st);
    sqlite3_free(cols);
    sqlite3_free(sql);
    sb_printf(b, "  %lld winners, %lld binaries checked\n", nwin, nbin);
    return FA4_OK;
err:
    sqlite3_finalize(st);
    sqlite3_free(cols);
    sqlite3_free(sql);
    if (rc == SQLITE_NOMEM)
        return db_fail(why, why_size, FA4_ENOMEM, "out of memory");
    return db_read_error(h, path, rc, "check", why, why_size);
}

fa4_status db_check(db *d, char **report, int *problems, char *why,
                    size_t why_size)
{
    db_strbuf b = { NULL, 0, 0, 0 };
    int count = 0;
    fa4_status s;

    if (report)
        *report = NULL;
    if (problems)
        *problems = 0;
    if (!d || !report)
        return db_fail(why, why_size, FA4_EINVAL, "db_check: NULL argument");
    db_lock(d);
    s = check_one(&b, &count, d->user, d->user_version, d->user_path,
                  d->timeout_ms, why, why_size);
    if (s == FA4_OK && d->sys)
        s = check_one(&b, &count, d->sys, d->sys_version, d->sys_path,
                      d->timeout_ms, why, why_size);
    db_unlock(d);
    sb_printf(&b, "%d problem%s\n", count, count == 1 ? "" : "s");
    if (b.oom) {
        free(b.p);
        return db_fail(why, why_size, FA4_ENOMEM, "out of memory");
    }
    *report = b.p;
    if (problems)
        *problems = count;
    return s;
}
