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
** (read-only; NULL or missing: none).  A location that cannot be written,
** or a file another process keeps locked past the timeout, falls back to
** read-only (not when locked), then to an in-memory store, with one
** warning in WARN.  A corrupt or non-SQLite file, one written by a newer
** schema, or a path that is not a regular file (a FIFO, /dev/null, a
** directory) is FA4_EDB with WHY naming the file; the file is left as it
** was.
**
** Every function of a handle locks it itself, and may be called from
** several threads at once: callers must not hold a lock of their own
** around them (they may wait up to the timeout).  Each wait for another
** process is bounded by $FA4_DB_TIMEOUT seconds (db_timeout_ms()), after
** which the call fails with FA4_EDB "locked by another process".
*/
fa4_status db_open(db **out, const char *user_path, const char *system_path,
                   int flags, char *warn, size_t warn_size, char *why,
                   size_t why_size);
void db_close(db *d);

/* The default user database path ($FA4_DB, $XDG_CACHE_HOME/fa4/fa4.db,
** ~/.cache/fa4/fa4.db) into BUF; returns BUF or NULL. */
char *db_default_path(char *buf, size_t size);

/*
** Look up the best known config for PROBLEM on DEV: user exact, system
** exact, nearest bucket on the same device, same arch with another SM
** count.  Stale entries (db_row_stale) rank below current ones of the
** same step and bucket distance only (fa4-db(5)); their *source is
** FA4_SOURCE_STALE.  FA4_OK with
** *config and *source set and WHY saying which entry; FA4_EDB with WHY
** "no entry" when nothing matches (the caller then uses the heuristic).
*/
fa4_status db_lookup(db *d, fa4_config *config, fa4_config_source *source,
                     const device_limits *dev, const fa4_problem *problem,
                     char *why, size_t why_size);

/*
** NULL when HASH is the current kernel source hash of FAMILY
** (jit_source_hash); otherwise "stale: ..." naming both hashes, written
** into WHY and returned.  The one test of staleness: lookup ranks a stale
** winner below current ones of the same step and distance; check, verify
** and import name it.
*/
const char *db_row_stale(char *why, size_t why_size, int family,
                         const char *hash);

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

/* Record the N TRIALS for (DEV, PROBLEM) in one short transaction: all of
** them, or none.  N 0 writes nothing. */
fa4_status db_store_trials(db *d, const device_limits *dev,
                           const fa4_problem *problem, const db_trial *trials,
                           int n, char *why, size_t why_size);

/* Make CONFIG (measured at MEDIAN_MS) the winner for (DEV, PROBLEM's key). */
fa4_status db_store_winner(db *d, const device_limits *dev,
                           const fa4_problem *problem, const fa4_config *config,
                           double median_ms, double tflops, char *why,
                           size_t why_size);

/* ------------------------------------------------------------------------
** Added by the database module (db.c, db_schema.c, db_json.c).
*/

/* The schema version this library writes (PRAGMA user_version).  Reading
** needs version 1 or later: queries that read use only version-1 columns
** (or substitute defaults), so an older read-only file still serves. */
#define DB_SCHEMA_VERSION 4

/* The embedded SQL: db/schema.sql and the forward migrations (lib/db_schema.c,
** a byte-for-byte copy of the files; test_db_schema checks it). */
typedef struct db_migration {
    int to;             /* the version it produces (from TO-1) */
    const char *file;   /* "db/migrations/0002-library-version.sql" */
    const char *sql;
} db_migration;
extern const char db_schema_sql[];
extern const db_migration db_migrations[];   /* ends with { 0, NULL, NULL } */

/*
** The system database path, the one rule for the library and fa4-tune:
** OPTION (the context option system_db_path; may be NULL), else
** $FA4_SYSTEM_DB, else the installed $(pkgdatadir)/fa4-system.db, into
** BUF.  Returns BUF, or NULL for "no system database": OPTION or
** $FA4_SYSTEM_DB set but empty (or BUF too small).
*/
char *db_system_db_path(char *buf, size_t size, const char *option);

/* db_system_db_path(BUF, SIZE, NULL). */
char *db_default_system_path(char *buf, size_t size);

/* SEQLEN rounded up to the next power of two (1000 -> 1024, 1025 -> 2048);
** values below 1 give 1, values above 2^30 give 2^30. */
int db_seqlen_bucket(int seqlen);

/* The work-size bucket of P: db_seqlen_bucket(batch * heads_kv), computed
** without overflow.  Key rows with work_bucket 0 match any work size. */
int db_work_bucket(const fa4_problem *p);

/* The bound on each wait for a lock: $FA4_DB_TIMEOUT seconds (fractions
** allowed; 0: do not wait), else 10 s; in milliseconds. */
long db_timeout_ms(void);

/* DEV's fingerprint "name|cc|sm_count|smem_optin|driver|nvrtc" into BUF;
** returns BUF. */
char *db_device_fingerprint(char *buf, size_t size, const device_limits *dev);

/* The files in use: the user database (":memory:" for the in-memory
** store) and the system database (NULL when none).  1 when the user store
** cannot be written (DB_READONLY or the read-only fallback). */
const char *db_user_path(const db *d);
const char *db_system_path(const db *d);
int db_is_readonly(const db *d);

/* Flags for db_show(). */
#define DB_SHOW_JSON   1   /* a JSON array of objects instead of text */
#define DB_SHOW_SYSTEM 2   /* the system database instead of the user one */

/*
** The rows of TABLE ("devices", "winners", "trials", "binaries": blobs are
** left out) into *OUT (malloc'd, NUL-terminated; the caller frees it): text
** is a header line and one line per row, fields separated by tabs; JSON is
** an array of objects.  FA4_EINVAL for an unknown table, FA4_EDB on a
** database error, FA4_ENOMEM; *OUT is NULL on failure.
*/
fa4_status db_show(db *d, char **out, const char *table, int flags,
                   char *why, size_t why_size);

/*
** Check both databases: PRAGMA integrity_check, winners db_lookup skips
** (db_row_unusable), winners whose source hash no longer matches
** jit_source_hash(family) (stale: ranked by db_lookup below current
** entries of the same step and distance), and binaries whose checksum
** does not match.  Nothing is changed.  *REPORT (malloc'd) lists what was
** found, one item per line; *PROBLEMS (may be NULL) counts those winners
** and bad binaries.  FA4_OK
** when the integrity checks pass, FA4_EDB with WHY naming the file when
** one fails or cannot run.
*/
fa4_status db_check(db *d, char **report, int *problems, char *why,
                    size_t why_size);

/* ------------------------------------------------------------------ JSON
** Exchange format (db_json.c): an object
**   { "format": "fa4-db", "format_version": 1,
**     "library_version": fa4_version(), "nvrtc_version": jit_nvrtc_version(),
**     "schema_version": 4, "exported_at": "...",
**     "devices": [ { "fingerprint", "name", "cc", "sm_count",
**                    "smem_per_block_optin", "driver_version",
**                    "nvrtc_version", "created_at" } ],
**     "winners": [ { "device": fingerprint, "family", "source_hash",
**                    "key": { dtype, head_dim_qk, head_dim_v, gqa_group,
**                             causal, window_left, window_right, varlen,
**                             paged, page_size, seqlen_q_bucket,
**                             seqlen_k_bucket, work_bucket, softcap,
**                             sinks },
**                    "config", "median_ms", "tflops", "updated_at",
**                    "library_version", "driver_version",
**                    "nvrtc_version" } ],
**     "trials": [ ... with DB_JSON_TRIALS: as winners plus batch, heads_q,
**                 seqlen_q, seqlen_k, ok, failure, min_ms, max_ms, reps,
**                 max_rel_err, created_at ] }
**
** Import policy: every well-formed record is imported, whatever library
** version, NVRTC/driver version, device or source hash it carries; the
** summary reports each kind of mismatch with counts (records for other
** devices serve this device only as same-arch fallbacks; records with a
** stale source hash are kept, and db_lookup ranks them below current
** entries of the same step and distance).  A winner
** replaces an existing one for the same key only when its median_ms is
** lower (a missing median counts as infinitely slow); identical trials are
** not added twice.  A file is imported in one transaction: a malformed
** record rejects the whole file.  Well-formed means every field has its
** type and range: integers are never truncated (2^32+90 is out of range,
** not 90), family is 80, 90 or 100, format_version is at least 1,
** median_ms is a finite number above 0 (or null), the key's columns are in
** range (work_bucket may be absent: 0, "any work size"; softcap and sinks
** may be absent: 0, off, as in every file written before them), and the
** config parses, names the record's family and passes config_validate()
** -- so every imported winner is one lookup can use.
*/

/* Flags for db_export_json(). */
#define DB_JSON_TRIALS 1   /* include every trial, not only the winners */

/*
** Write the user database's devices and winners (and trials with
** DB_JSON_TRIALS) as JSON to PATH (written to a temporary file in the same
** directory, then renamed).  FA4_EDB on a database or file error, with WHY.
*/
fa4_status db_export_json(db *d, const char *path, int flags, char *why,
                          size_t why_size);

/* The same JSON into *TEXT (malloc'd; the caller frees it). */
fa4_status db_export_json_text(db *d, char **text, int flags, char *why,
                               size_t why_size);

/*
** Import the JSON file PATH ("-": standard input) into the user database,
** by the policy above.
** DEV (may be NULL) is this machine's device: records for other devices
** are reported.  *SUMMARY (may be NULL; malloc'd) receives what was
** imported and a "warning:" line per mismatch kind.  FA4_EINVAL for
** malformed JSON (WHY "PATH:LINE:COLUMN: jansson's message") or a
** malformed record (WHY names the record and field); FA4_EDB when the
** database cannot be written.  Nothing is imported on failure.
*/
fa4_status db_import_json(db *d, const char *path, const device_limits *dev,
                          char **summary, char *why, size_t why_size);

/* The same for the JSON document TEXT of LEN bytes, named LABEL in
** messages (may be NULL). */
fa4_status db_import_json_text(db *d, const char *text, size_t len,
                               const char *label, const device_limits *dev,
                               char **summary, char *why, size_t why_size);

/*
** Merge the database file PATH (opened read-only, never changed) into the
** user database: its devices, winners and trials, by the import policy.
** Compiled binaries are a cache and are not merged.  Errors and *SUMMARY
** as for db_import_json(); a corrupt or newer file is FA4_EDB naming it.
*/
fa4_status db_merge(db *d, const char *path, const device_limits *dev,
                    char **summary, char *why, size_t why_size);

/* Internal, shared by db.c and db_json.c. */
struct sqlite3;
struct sqlite3 *db_handle(db *d, int system, int *version);
void db_lock(db *d);
void db_unlock(db *d);
fa4_status db_write_begin(db *d, char *why, size_t why_size);
fa4_status db_write_end(db *d, fa4_status st, char *why, size_t why_size);
fa4_status db_sqlite_error(struct sqlite3 *h, const char *path, int rc,
                           const char *what, char *why, size_t why_size);
fa4_status db_fail(char *why, size_t why_size, fa4_status st,
                   const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
