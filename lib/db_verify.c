/*
** db_verify.c -- list, drop and relabel winners for `fa4-tune verify`
** and `fa4-tune rehash`.  See
** db_verify.h.  Public SQLite API only; the file is opened here.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "db.h"
#include "db_verify.h"

/* Waits for another connection's lock are bounded by this (ms). */
#define VERIFY_BUSY_MS 10000

/* The key columns in the order of db_verify_winner's key fields. */
#define VKEY_COLS "w.dtype, w.head_dim_qk, w.head_dim_v, w.gqa_group, " \
                  "w.causal, w.window_left, w.window_right, w.varlen, " \
                  "w.paged, w.page_size, w.seqlen_q_bucket, w.seqlen_k_bucket"
#define VKEY_MATCH "dtype = ?3 AND head_dim_qk = ?4 AND head_dim_v = ?5 AND " \
                   "gqa_group = ?6 AND causal = ?7 AND window_left = ?8 AND " \
                   "window_right = ?9 AND varlen = ?10 AND paged = ?11 AND " \
                   "page_size = ?12 AND seqlen_q_bucket = ?13 AND " \
                   "seqlen_k_bucket = ?14"
/* Since schema version 3 (db/migrations/0003-work-bucket.sql). */
#define VWORK_MATCH " AND work_bucket = ?17"
/* Since schema version 4 (db/migrations/0004-softcap-sinks.sql). */
#define VFLAGS_MATCH " AND softcap = ?18 AND sinks = ?19"

/* The schema version of H (PRAGMA user_version), 0 when unreadable. */
static int schema_version(sqlite3 *h)
{
    sqlite3_stmt *st = NULL;
    int v = 0;

    if (sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Put "PATH: WHAT: sqlite's message" into WHY; returns FA4_EDB. */
static fa4_status fail(sqlite3 *h, const char *path, const char *what,
                       char *why, size_t why_size)
{
    snprintf(why, why_size, "%s: %s: %s", path, what,
             h ? sqlite3_errmsg(h) : "cannot open");
    return FA4_EDB;
}

/* Open PATH with FLAGS and a bounded busy wait; FA4_OK or FA4_EDB. */
static fa4_status open_file(sqlite3 **h, const char *path, int flags,
                            char *why, size_t why_size)
{
    if (sqlite3_open_v2(path, h, flags, NULL) != SQLITE_OK) {
        fa4_status st = fail(*h, path, "open", why, why_size);
        sqlite3_close(*h);
        *h = NULL;
        return st;
    }
    sqlite3_busy_timeout(*h, VERIFY_BUSY_MS);
    return FA4_OK;
}

/* Bind W's device, family and key to ?1, ?2, ?3..?14 and, where the
** statement has them, ?17..?19. */
static void bind_row(sqlite3_stmt *st, const db_verify_winner *w)
{
    const int key[12] = { w->dtype, w->head_dim_qk, w->head_dim_v,
                          w->gqa_group, w->causal, w->window_left,
                          w->window_right, w->varlen, w->paged, w->page_size,
                          w->seqlen_q_bucket, w->seqlen_k_bucket };
    int i;

    sqlite3_bind_int64(st, 1, w->device_id);
    sqlite3_bind_int(st, 2, w->family);
    for (i = 0; i < 12; i++)
        sqlite3_bind_int(st, 3 + i, key[i]);
    if (sqlite3_bind_parameter_count(st) >= 17)
        sqlite3_bind_int(st, 17, w->work_bucket);
    if (sqlite3_bind_parameter_count(st) >= 19) {
        sqlite3_bind_int(st, 18, w->softcap);
        sqlite3_bind_int(st, 19, w->sinks);
    }
}

/* Fill W's tuned shape from the latest successful trial of its config
** (or, failing that, of its key); leaves batch 0 when there is none. */
static void tuned_shape(sqlite3 *h, db_verify_winner *w, int version)
{
    const char *work = version >= 3 && w->work_bucket > 0 ? VWORK_MATCH : "";
    const char *flags = version >= 4 ? VFLAGS_MATCH : "";
    char sql[1024];
    int k;

    for (k = 0; k < 2 && w->batch == 0; k++) {
        sqlite3_stmt *st = NULL;

        snprintf(sql, sizeof sql, "SELECT batch, heads_q, seqlen_q, seqlen_k "
                 "FROM trials WHERE device_id = ?1 AND family = ?2 AND "
                 VKEY_MATCH "%s%s AND ok = 1 AND source_hash = ?15%s ORDER BY "
                 "id DESC LIMIT 1", work, flags,
                 k == 0 ? " AND config = ?16" : "");
        if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
            sqlite3_finalize(st);
            return;
        }
        bind_row(st, w);
        sqlite3_bind_text(st, 15, w->source_hash, -1, SQLITE_STATIC);
        if (k == 0)
            sqlite3_bind_text(st, 16, w->config, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) {
            w->batch = sqlite3_column_int(st, 0);
            w->heads_q = sqlite3_column_int(st, 1);
            w->seqlen_q = sqlite3_column_int(st, 2);
            w->seqlen_k = sqlite3_column_int(st, 3);
        }
        sqlite3_finalize(st);
    }
}

/* Copy column I of ST as text into BUF. */
static void column_text(char *buf, size_t size, sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);

    snprintf(buf, size, "%s", t ? (const char *)t : "");
}

fa4_status db_verify_list(db_verify_winner **out, int *count, const char *path,
                          const device_limits *dev, char *why,
                          size_t why_size)
{
    char fp[256];
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    db_verify_winner *v = NULL;
    fa4_status status = FA4_OK;
    int n = 0, cap = 0, rc, version;
    char sql[1024];

    *out = NULL;
    *count = 0;
    fp[0] = '\0';
    if (dev)
        snprintf(fp, sizeof fp, "%s|%d|%d|%d|%d|%d", dev->name, dev->cc,
                 dev->sm_count, dev->smem_per_block_optin,
                 dev->driver_version, dev->nvrtc_version);
    if ((status = open_file(&h, path, SQLITE_OPEN_READONLY, why, why_size)) != FA4_OK)
        return status;
    version = schema_version(h);
    snprintf(sql, sizeof sql,
        "SELECT w.device_id, d.fingerprint, w.family, w.source_hash, "
        VKEY_COLS ", w.config, w.median_ms, %s, %s FROM winners w JOIN "
        "devices d ON d.id = w.device_id WHERE ?1 IS NULL OR (d.name = ?1 AND "
        "d.cc = ?2 AND d.sm_count = ?3 AND d.smem_per_block_optin = ?4) ORDER BY "
        "d.fingerprint <> ?5, w.family, " VKEY_COLS ", 19, 20, 21",
        version >= 3 ? "w.work_bucket" : "0",
        version >= 4 ? "w.softcap, w.sinks" : "0, 0");
    rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        status = fail(h, path, "reading the winners", why, why_size);
        goto done;
    }
    if (dev) {
        sqlite3_bind_text(st, 1, dev->name, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, dev->cc);
        sqlite3_bind_int(st, 3, dev->sm_count);
        sqlite3_bind_int(st, 4, dev->smem_per_block_optin);
    }
    sqlite3_bind_text(st, 5, fp, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_verify_winner *w;
        char stale[128];
        int *key[12];
        int i;

        if (n == cap) {
            int ncap = cap ? 2 * cap : 16;
            db_verify_winner *nv = realloc(v, (size_t)ncap * sizeof *nv);
            if (!nv) {
                snprintf(why, why_size, "out of memory");
                status = FA4_ENOMEM;
                goto done;
            }
            v = nv;
            cap = ncap;
        }
        w = &v[n++];
        memset(w, 0, sizeof *w);
        w->device_id = sqlite3_column_int64(st, 0);
        column_text(w->fingerprint, sizeof w->fingerprint, st, 1);
        w->same_fingerprint = strcmp(w->fingerprint, fp) == 0;
        w->family = sqlite3_column_int(st, 2);
        column_text(w->source_hash, sizeof w->source_hash, st, 3);
        w->stale = db_row_stale(stale, sizeof stale, w->family,
                                w->source_hash) != NULL;
        key[0] = &w->dtype; key[1] = &w->head_dim_qk; key[2] = &w->head_dim_v;
        key[3] = &w->gqa_group; key[4] = &w->causal; key[5] = &w->window_left;
        key[6] = &w->window_right; key[7] = &w->varlen; key[8] = &w->paged;
        key[9] = &w->page_size; key[10] = &w->seqlen_q_bucket;
        key[11] = &w->seqlen_k_bucket;
        for (i = 0; i < 12; i++)
            *key[i] = sqlite3_column_int(st, 4 + i);
        column_text(w->config, sizeof w->config, st, 16);
        w->median_ms = sqlite3_column_type(st, 17) == SQLITE_NULL
                       ? 0 : sqlite3_column_double(st, 17);
        w->work_bucket = sqlite3_column_int(st, 18);
        w->softcap = sqlite3_column_int(st, 19);
        w->sinks = sqlite3_column_int(st, 20);
    }
    if (rc != SQLITE_DONE) {
        status = fail(h, path, "reading the winners", why, why_size);
        goto done;
    }
    sqlite3_finalize(st);
    st = NULL;
    for (rc = 0; rc < n; rc++)
        tuned_shape(h, &v[rc], version);
    *out = v;
    *count = n;
    v = NULL;
done:
    sqlite3_finalize(st);
    sqlite3_close(h);
    free(v);
    return status;
}

/* Run "HEAD WHERE <W's row>" on the database file PATH, with NEW_HASH (or
** NULL) bound to ?16; *CHANGED (when not NULL) tells whether a row was
** touched.  WHAT names the step in a failure.  FA4_OK or FA4_EDB. */
static fa4_status row_statement(const char *path, const db_verify_winner *w, const char *head,
                                const char *new_hash, const char *what, int *changed,
                                char *why, size_t why_size)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    fa4_status status;
    char sql[1024];
    int rc, version;

    if ((status = open_file(&h, path, SQLITE_OPEN_READWRITE, why, why_size)) != FA4_OK)
        return status;
    version = schema_version(h);
    snprintf(sql, sizeof sql, "%s WHERE device_id = ?1 AND family = ?2 AND " VKEY_MATCH
             " AND source_hash = ?15%s%s", head, version >= 3 ? VWORK_MATCH : "",
             version >= 4 ? VFLAGS_MATCH : "");
    rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        bind_row(st, w);
        sqlite3_bind_text(st, 15, w->source_hash, -1, SQLITE_STATIC);
        if (new_hash)
            sqlite3_bind_text(st, 16, new_hash, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
    }
    if (rc == SQLITE_DONE) {
        if (changed)
            *changed = sqlite3_changes(h) > 0;
        status = FA4_OK;
    } else {
        status = fail(h, path, what, why, why_size);
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return status;
}

fa4_status db_verify_drop(const char *path, const db_verify_winner *w,
                          char *why, size_t why_size)
{
    return row_statement(path, w, "DELETE FROM winners", NULL, "dropping a winner", NULL, why,
                         why_size);
}

fa4_status db_verify_relabel(const char *path, const db_verify_winner *w,
                             const char *source_hash, int *changed, char *why,
                             size_t why_size)
{
    *changed = 0;
    /* OR IGNORE: a current row of the same key wins; the old one stays. */
    return row_statement(path, w, "UPDATE OR IGNORE winners SET source_hash = ?16", source_hash,
                         "relabelling a winner", changed, why, why_size);
}
