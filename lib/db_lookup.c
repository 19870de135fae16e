/*
** db_lookup.c -- the best stored config for a problem, in the order user
** exact, system exact, nearest bucket on the same device, same arch
** (fa4-db(5), "Lookup order").  A row tuned with another kernel source
** (stale) still counts: the shape it was tuned for matters more than the
** kernels it was tuned with, so a stale row ranks below a current one of
** the same step and distance only -- a stale exact row before a current
** row of another bucket, which a partial re-tune would otherwise spread
** over every bucket of its shape.  Rows that cannot be
** used -- a config text that does not parse or is out of range, a device
** row without a fingerprint -- are skipped and counted; db_check() lists
** the same rows.
*/
#include "db_int.h"
#include "config.h"
#include "jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One candidate row and its rank: smaller is better, compared in order. */
typedef struct candidate {
    int found;
    int stale;        /* tuned with another kernel source */
    int level;        /* 1 user exact, 2 system exact, 3 nearest, 4 same arch */
    int sub;          /* same arch: 0 same name, 1 same cc only */
    int distance;     /* in half steps: 2 (|dlog2 q| + |dlog2 k| + |dlog2
                         work|), plus 1 for a row of any work size */
    int sysdb;        /* 0 user, 1 system */
    double median;    /* ms; missing: huge */
    fa4_config config;
    int bq, bk, bw;
    char device[128];
    char stale_why[128];  /* db_row_stale's text, when stale */
} candidate;

/* The step of a level: 0 exact (user or system), 1 nearest, 2 same arch. */
static int step_of(int level)
{
    return level <= 2 ? 0 : level - 2;
}

/* 1 when A ranks before B: by step; among exact rows current before stale,
 * then user before system, then a row of the same work bucket before one
 * of any; among the others the closest buckets first, then current before
 * stale, then user before system; the lowest median last. */
static int better(const candidate *a, const candidate *b)
{
    if (!b->found)
        return 1;
    if (step_of(a->level) != step_of(b->level))
        return step_of(a->level) < step_of(b->level);
    if (a->sub != b->sub)
        return a->sub < b->sub;
    if (step_of(a->level) == 0) {
        if (a->stale != b->stale)
            return b->stale;
        if (a->level != b->level)
            return a->level < b->level;
    }
    if (a->distance != b->distance)
        return a->distance < b->distance;
    if (a->stale != b->stale)
        return b->stale;
    if (a->sysdb != b->sysdb)
        return a->sysdb < b->sysdb;
    return a->median < b->median;
}

const char *db_row_stale(char *why, size_t why_size, int family,
                         const char *hash)
{
    const char *cur = jit_source_hash((fa4_family)family);

    if (hash && cur && strcmp(hash, cur) == 0)
        return NULL;
    snprintf(why, why_size, "stale: kernel source %s, current %s",
             hash ? hash : "(none)", cur ? cur : "none");
    return why;
}

const char *db_row_unusable(char *why, size_t why_size, int family,
                            const char *text, const char *fingerprint,
                            fa4_config *out)
{
    fa4_config c;
    char perr[256];

    if (!fingerprint)
        return snprintf(why, why_size, "its device row has no fingerprint"), why;
    if (!text || config_parse(&c, text, perr, sizeof perr) != FA4_OK)
        return snprintf(why, why_size, "unparseable config: %s",
                        text ? perr : "NULL"), why;
    if ((int)c.family != family)
        return snprintf(why, why_size, "config family %s, row family %d",
                        config_family_name(c.family), family), why;
    if (config_validate(&c, perr, sizeof perr) != FA4_OK)
        return snprintf(why, why_size, "config out of range: %s", perr), why;
    if (out)
        *out = c;
    return NULL;
}

/* Scan the winners of H matching DEV's cc and K's exact columns into
** *BEST; counts unusable rows in *SKIPPED (stale ones are candidates).
** FA4_OK or FA4_EDB. */
static fa4_status scan_winners(candidate *best, int *skipped, sqlite3 *h,
                               const char *path, int version, int sysdb,
                               long timeout_ms,
                               const device_limits *dev, const db_key *k,
                               char *why, size_t why_size)
{
    sqlite3_stmt *st = NULL;
    char fp[512], skip[512], *where, *sql = NULL;
    int rc, first = 1;

    db_device_fingerprint(fp, sizeof fp, dev);
    /* A file older than a column holds only rows of its value 0 (what the
       migration gives them): they match a problem whose value is 0, so a
       softcap problem never takes a plain row of an old system file. */
    where = db_key_sql("w.@ = :@", " AND ", 1 << DB_KEY_EXACT, version,
                       "0 = :@");
    if (where)
        sql = sqlite3_mprintf(
            "SELECT w.family, w.source_hash, w.config, w.median_ms, "
            "w.seqlen_q_bucket, w.seqlen_k_bucket, %s, "
            "d.fingerprint, d.name FROM winners w JOIN devices d ON "
            "d.id = w.device_id WHERE d.cc = :cc AND %s",
            version >= 3 ? "w.work_bucket" : "0", where);
    sqlite3_free(where);
    if (!sql)
        return db_fail(why, why_size, FA4_ENOMEM, "out of memory");
    rc = db_prep(h, &st, sql, timeout_ms);
    sqlite3_free(sql);
    if (rc != SQLITE_OK)
        goto err;
    db_bind_int(st, ":cc", dev->cc);
    db_key_bind(st, k);
    for (;;) {
        candidate c;
        const char *fprow, *name;
        int family, dseq, dwork;

        rc = first ? db_step_retry(st, timeout_ms) : sqlite3_step(st);
        first = 0;
        if (rc != SQLITE_ROW)
            break;
        memset(&c, 0, sizeof c);
        family = sqlite3_column_int(st, 0);
        fprow = (const char *)sqlite3_column_text(st, 7);
        if (db_row_unusable(skip, sizeof skip, family,
                            (const char *)sqlite3_column_text(st, 2), fprow,
                            &c.config)) {
            (*skipped)++;
            continue;
        }
        c.found = 1;
        c.stale = db_row_stale(c.stale_why, sizeof c.stale_why, family,
                               (const char *)sqlite3_column_text(st, 1)) != NULL;
        c.sysdb = sysdb;
        c.median = sqlite3_column_type(st, 3) == SQLITE_NULL
                       ? 1e300 : sqlite3_column_double(st, 3);
        c.bq = sqlite3_column_int(st, 4);
        c.bk = sqlite3_column_int(st, 5);
        c.bw = sqlite3_column_int(st, 6);
        dseq = abs(db_ilog2(c.bq) - db_ilog2(k->seqlen_q_bucket)) +
               abs(db_ilog2(c.bk) - db_ilog2(k->seqlen_k_bucket));
        dwork = c.bw ? abs(db_ilog2(c.bw) - db_ilog2(k->work_bucket)) : 0;
        c.distance = 2 * (dseq + dwork) + (c.bw == 0);
        name = (const char *)sqlite3_column_text(st, 8);
        snprintf(c.device, sizeof c.device, "%s", name ? name : "");
        if (strcmp(fprow, fp) == 0)
            c.level = dseq == 0 && dwork == 0 && c.bq == k->seqlen_q_bucket &&
                      c.bk == k->seqlen_k_bucket ? 1 + sysdb : 3;
        else {
            c.level = 4;
            c.sub = strcmp(c.device, dev->name) != 0;
        }
        if (better(&c, best))
            *best = c;
    }
    if (rc != SQLITE_DONE)
        goto err;
    sqlite3_finalize(st);
    return FA4_OK;
err:
    sqlite3_finalize(st);
    return db_read_error(h, path, rc, "lookup", why, why_size);
}

fa4_status db_lookup(db *d, fa4_config *config, fa4_config_source *source,
                     const device_limits *dev, const fa4_problem *problem,
                     char *why, size_t why_size)
{
    static const fa4_config_source sources[] = {
        FA4_SOURCE_HEURISTIC, FA4_SOURCE_USER_EXACT, FA4_SOURCE_SYSTEM_EXACT,
        FA4_SOURCE_NEAREST, FA4_SOURCE_SAME_ARCH };
    candidate best;
    db_key k;
    sqlite3 *h;
    int skipped = 0, version;
    fa4_status st = FA4_OK;

    if (!d || !config || !dev || !problem)
        return db_fail(why, why_size, FA4_EINVAL, "db_lookup: NULL argument");
    memset(&best, 0, sizeof best);
    db_key_of(&k, problem);
    h = db_read_begin(d, &version);
    if (h && version >= 1)      /* an empty read-only file has no tables */
        st = scan_winners(&best, &skipped, h, d->user_path, version, 0,
                          d->timeout_ms, dev, &k, why, why_size);
    db_read_end(d);
    if (st == FA4_OK && d->sys) {
        pthread_mutex_lock(&d->rlock);
        st = scan_winners(&best, &skipped, d->sys, d->sys_path,
                          d->sys_version, 1, d->timeout_ms, dev, &k, why,
                          why_size);
        pthread_mutex_unlock(&d->rlock);
    }
    if (st != FA4_OK)
        return st;
    if (!best.found) {
        if (skipped)
            return db_fail(why, why_size, FA4_EDB, "no entry for seqlen buckets "
                           "%d/%d (%d ignored as unusable; fa4-tune check lists "
                           "them)",
                           k.seqlen_q_bucket, k.seqlen_k_bucket, skipped);
        return db_fail(why, why_size, FA4_EDB, "no entry for seqlen buckets "
                       "%d/%d", k.seqlen_q_bucket, k.seqlen_k_bucket);
    }
    *config = best.config;
    if (source)
        *source = best.stale ? FA4_SOURCE_STALE : sources[best.level];
    db_fail(why, why_size, FA4_OK, "%s database, %s, buckets %d/%d work %d%s, "
            "tuned on %s%s%s", best.sysdb ? "system" : "user",
            best.level <= 2 ? "exact" : best.level == 3 ? "nearest bucket"
                                                         : "same arch",
            best.bq, best.bk, best.bw, best.bw ? "" : " (any)", best.device,
            best.stale ? "; " : "", best.stale ? best.stale_why : "");
    return FA4_OK;
}
