/*
** db_key.c -- the problem key of winners and trials, described once
** (DB_KEY_COLUMNS in db_int.h): the key of a problem, its columns as SQL,
** binding by name, range checks; sequence and work-size buckets; device
** fingerprints.
*/
#include "db_int.h"
#include "problem.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

const db_key_column db_key_columns[] = {
#define DB_KEY_ROW(name, kind, lo, hi, since) \
    { #name, offsetof(db_key, name), kind, lo, hi, since },
    DB_KEY_COLUMNS(DB_KEY_ROW)
#undef DB_KEY_ROW
};
const int db_key_ncols = (int)(sizeof db_key_columns / sizeof db_key_columns[0]);

int db_seqlen_bucket(int seqlen)
{
    int b = 1;

    while (b < seqlen && b < (1 << 30))
        b <<= 1;
    return b;
}

int db_work_bucket(const fa4_problem *p)
{
    long long hkv = p->heads_kv > 0 ? p->heads_kv : p->heads_q;
    long long work = (long long)p->batch * hkv;   /* no int overflow */

    if (work > (1 << 30))
        work = 1 << 30;
    return db_seqlen_bucket((int)work);
}

char *db_device_fingerprint(char *buf, size_t size, const device_limits *dev)
{
    snprintf(buf, size, "%s|%d|%d|%d|%d|%d", dev->name, dev->cc,
             dev->sm_count, dev->smem_per_block_optin, dev->driver_version,
             dev->nvrtc_version);
    return buf;
}

int db_ilog2(long long x)
{
    int r = 0;

    while (x > 1) {
        x >>= 1;
        r++;
    }
    return r;
}

void db_key_of(db_key *k, const fa4_problem *p)
{
    int hv = problem_head_dim_v(p);
    int hkv = p->heads_kv > 0 ? p->heads_kv : p->heads_q;
    int varlen = 0, page = 0, softcap = 0, sinks = 0;

    if (p->struct_size >= offsetof(fa4_problem, varlen) + sizeof(int))
        varlen = p->varlen != 0;
    if (p->struct_size >= offsetof(fa4_problem, page_size) + sizeof(int))
        page = p->page_size > 0 ? p->page_size : 0;
    if (p->struct_size >= offsetof(fa4_problem, attention_sinks) + sizeof(int))
        sinks = p->attention_sinks != 0;
    if (p->struct_size >= offsetof(fa4_problem, softcap) + sizeof(float))
        softcap = p->softcap > 0;   /* on or off: the cap is a launch value */
    memset(k, 0, sizeof *k);
    k->dtype = (int)p->dtype;
    k->head_dim_qk = p->head_dim_qk;
    k->head_dim_v = hv;
    k->gqa_group = hkv > 0 && p->heads_q >= hkv ? p->heads_q / hkv : 1;
    k->causal = p->causal != 0;
    k->window_left = p->window_left < 0 ? -1 : p->window_left;
    k->window_right = p->causal ? 0 : (p->window_right < 0 ? -1 : p->window_right);
    k->varlen = varlen;
    k->paged = page > 0;
    k->page_size = page;
    k->seqlen_q_bucket = db_seqlen_bucket(p->seqlen_q);
    k->seqlen_k_bucket = db_seqlen_bucket(p->seqlen_k);
    k->work_bucket = db_work_bucket(p);
    k->softcap = softcap;
    k->sinks = sinks;
}

char *db_key_sql(const char *item, const char *sep, int kinds, int version,
                 const char *absent)
{
    char *out = sqlite3_mprintf("%s", "");
    int i, first = 1;

    for (i = 0; out && i < db_key_ncols; i++) {
        const char *s, *it = item;

        if (!(kinds & (1 << db_key_columns[i].kind)))
            continue;
        if (db_key_columns[i].since > version && !(it = absent))
            continue;
        if (!first)
            out = sqlite3_mprintf("%z%s", out, sep);
        first = 0;
        for (s = it; out && *s; s++)
            out = *s == '@' ? sqlite3_mprintf("%z%s", out, db_key_columns[i].name)
                            : sqlite3_mprintf("%z%c", out, *s);
    }
    return out;
}

char *db_key_expand(const char *fmt)
{
    static const char *const items[3][3] = {
        { "{cols}", "@", ", " },
        { "{params}", ":@", ", " },
        { "{pk}", "@ = :@", " AND " },
    };
    char *out = sqlite3_mprintf("%s", "");
    const char *s = fmt;
    int i;

    while (out && *s) {
        for (i = 0; i < 3; i++)
            if (strncmp(s, items[i][0], strlen(items[i][0])) == 0)
                break;
        if (i == 3) {
            out = sqlite3_mprintf("%z%c", out, *s++);
            continue;
        }
        {
            char *part = db_key_sql(items[i][1], items[i][2], DB_KEY_ALL,
                                    DB_SCHEMA_VERSION, NULL);

            out = part ? sqlite3_mprintf("%z%s", out, part) : NULL;
            sqlite3_free(part);
            s += strlen(items[i][0]);
        }
    }
    return out;
}

int db_key_index(const char *name)
{
    int i;

    for (i = 0; i < db_key_ncols; i++)
        if (strcmp(db_key_columns[i].name, name) == 0)
            return i;
    return -1;
}

/* The index of parameter ":NAME" of ST, or 0. */
static int param(sqlite3_stmt *st, const char *name)
{
    return sqlite3_bind_parameter_index(st, name);
}

void db_key_bind(sqlite3_stmt *st, const db_key *k)
{
    char name[64];
    int i, idx;

    for (i = 0; i < db_key_ncols; i++) {
        snprintf(name, sizeof name, ":%s", db_key_columns[i].name);
        if ((idx = param(st, name)) > 0)
            sqlite3_bind_int(st, idx, DB_KEY_AT(k, i));
    }
}

int db_key_valid(const db_key *k, char *why, size_t why_size)
{
    int i;

    for (i = 0; i < db_key_ncols; i++) {
        const db_key_column *c = &db_key_columns[i];
        long long v = DB_KEY_AT(k, i);

        if (v < c->lo || v > c->hi) {
            snprintf(why, why_size, "key.%s=%lld; must be in %lld..%lld",
                     c->name, v, c->lo, c->hi);
            return 0;
        }
        if (c->kind != DB_KEY_EXACT && v > 0 && (v & (v - 1)) != 0) {
            snprintf(why, why_size, "key.%s=%lld; must be a power of two%s",
                     c->name, v, c->kind == DB_KEY_ANYBUCKET ? " or 0" : "");
            return 0;
        }
    }
    return 1;
}

void db_bind_int(sqlite3_stmt *st, const char *name, long long v)
{
    int i = param(st, name);

    if (i > 0)
        sqlite3_bind_int64(st, i, v);
}

void db_bind_text(sqlite3_stmt *st, const char *name, const char *s)
{
    int i = param(st, name);

    if (i > 0 && s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else if (i > 0)
        sqlite3_bind_null(st, i);
}

void db_bind_real(sqlite3_stmt *st, const char *name, double x)
{
    int i = param(st, name);

    if (i > 0 && x == x && x < 1e300 && x > -1e300)   /* 1e300: "missing" */
        sqlite3_bind_double(st, i, x);
    else if (i > 0)
        sqlite3_bind_null(st, i);
}

void db_bind_null(sqlite3_stmt *st, const char *name)
{
    int i = param(st, name);

    if (i > 0)
        sqlite3_bind_null(st, i);
}
