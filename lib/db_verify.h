/*
** db_verify.h -- the queries of `fa4-tune verify`: list the winners a
** device's lookups may use, with the shape each was tuned at, and drop
** one.  Written against the public SQLite API only (it opens the file
** itself), so it does not depend on how db.c is split.
*/
#ifndef FA4_DB_VERIFY_H
#define FA4_DB_VERIFY_H

#include <stddef.h>
#include <stdint.h>
#include "fa4.h"
#include "device.h"

/* One winners row. */
typedef struct db_verify_winner {
    int64_t device_id;
    char fingerprint[256];
    int same_fingerprint;    /* 1: DEV's fingerprint; 0: the same GPU model
                                (name, cc, SMs, smem) under another driver or
                                NVRTC, used by lookup as a same-arch fallback */
    int family;
    char source_hash[24];
    int stale;               /* source_hash is not jit_source_hash(family)
                                (db_row_stale): lookup ranks the row below
                                every current one */
    /* the problem key (db/schema.sql) */
    int dtype, head_dim_qk, head_dim_v, gqa_group, causal;
    int window_left, window_right, varlen, paged, page_size;
    int seqlen_q_bucket, seqlen_k_bucket;
    int work_bucket;         /* bucket(batch * heads_kv), 0: any (schema 3) */
    int softcap, sinks;      /* 0/1: softcapping, attention sinks (schema 4;
                                0 in older files) */
    char config[512];
    double median_ms;        /* as stored; 0 when NULL */
    /* The shape of the latest successful trial of this config for this key
       (batch 0: no such trial, e.g. an imported winner). */
    int batch, heads_q, seqlen_q, seqlen_k;
} db_verify_winner;

/*
** The winners in the database file PATH whose device is DEV's GPU model
** (same name, compute capability, SM count and shared memory; DEV NULL:
** every device), stale ones included, into *OUT (malloc'd; free() it) and *COUNT, ordered by family
** and key.  The file is opened read-only.  FA4_OK (possibly with none),
** FA4_EDB with WHY naming the file, FA4_ENOMEM.
*/
fa4_status db_verify_list(db_verify_winner **out, int *count, const char *path,
                          const device_limits *dev, char *why,
                          size_t why_size);

/*
** Delete the winners row W (device, family, source hash and key) from the
** database file PATH in one transaction.  FA4_OK, or FA4_EDB with WHY.
*/
fa4_status db_verify_drop(const char *path, const db_verify_winner *w,
                          char *why, size_t why_size);

/*
** Give the winners row W (device, family, source hash and key) in the
** database file PATH the source hash SOURCE_HASH (`fa4-tune rehash`: its
** machine code is unchanged under those sources).  *CHANGED is 1 when the
** row moved, 0 when a row of that hash and key already exists (the stale
** row is left as it is).  One statement, atomic.  FA4_OK or FA4_EDB.
*/
fa4_status db_verify_relabel(const char *path, const db_verify_winner *w,
                             const char *source_hash, int *changed, char *why,
                             size_t why_size);

#endif
