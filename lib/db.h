/*
** db.h -- the config database (SQLite): device fingerprints, tuned
** winners, every tuner trial, and compiled kernels.  A user database
** (read-write) over an optional read-only system database.  Schema and
** migrations: db/schema.sql.  See fa4-db(5).
*/
#ifndef FA4_DB_H
#define FA4_DB_H

#include "fa4.h"
#include "device.h"

typedef struct db db;

/* Flags for db_open(). */
#define DB_READONLY 1   /* open the user database read-only */

/*
** Open the user database at USER_PATH (created with its directories when
** absent; NULL: no user database) and the system database at SYSTEM_PATH
** (read-only; NULL or missing: none).  A location that cannot be written
** falls back to read-only, then to an in-memory store, with one warning in
** WARN.  A corrupt or non-SQLite file, or one written by a newer schema,
** is FA4_EDB with WHY naming the file; the file is left as it was.
*/
fa4_status db_open(db **out, const char *user_path, const char *system_path,
                   int flags, char *warn, size_t warn_size, char *why,
                   size_t why_size);
void db_close(db *d);

/* The default user database path ($FA4_DB, $XDG_CACHE_HOME/fa4/fa4.db,
** ~/.cache/fa4/fa4.db) into BUF; returns BUF or NULL. */
char *db_default_path(char *buf, size_t size);

/*
** Look up the best known config for PROBLEM on DEV for kernels whose
** source hash is SOURCE_HASH(family): user exact, system exact, nearest
** bucket on the same device, same arch with another SM count.  FA4_OK with
** *config and *source set; FA4_EDB with WHY "no entry" when nothing
** matches (the caller then uses the heuristic).
*/
fa4_status db_lookup(db *d, fa4_config *config, fa4_config_source *source,
                     const device_limits *dev, const fa4_problem *problem,
                     char *why, size_t why_size);

/*
** Read the compiled kernel stored under KEY into *BLOB (malloc'd) and
** *SIZE.  FA4_OK when found and its checksum matches; FA4_EDB "not found"
** otherwise (a bad checksum drops the row and sets WHY to a warning).
*/
fa4_status db_binary_get(db *d, void **blob, size_t *size, const char *key,
                         char *why, size_t why_size);
fa4_status db_binary_put(db *d, const char *key, const char *arch,
                         const void *blob, size_t size, char *why,
                         size_t why_size);

/* One tuner measurement. */
typedef struct db_trial {
    fa4_config config;
    int ok;                  /* 1: verified and timed */
    const char *failure;     /* "compile", "spill", "wrong result",
                                "launch", ... with detail; NULL when ok */
    double median_ms, min_ms, max_ms;
    int reps;
    double tflops;
    double max_rel_err;
} db_trial;

/* Record TRIAL for (DEV, PROBLEM).  One short transaction. */
fa4_status db_store_trial(db *d, const device_limits *dev,
                          const fa4_problem *problem, const db_trial *trial,
                          char *why, size_t why_size);

/* Make CONFIG (measured at MEDIAN_MS) the winner for (DEV, PROBLEM's key). */
fa4_status db_store_winner(db *d, const device_limits *dev,
                           const fa4_problem *problem, const fa4_config *config,
                           double median_ms, double tflops, char *why,
                           size_t why_size);

#endif
