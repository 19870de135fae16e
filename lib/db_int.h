/*
** db_int.h -- what the database modules share and nothing else includes:
** the handle, the problem key described once, and the SQLite helpers
** whose waits are bounded.  The modules, by concern:
**
**   db_open.c    paths, opening with fallbacks, migrations, the handle's
**                locks, write transactions
**   db_key.c     the problem key: its columns, SQL and binding by name,
**                buckets, device fingerprints
**   db_lookup.c  user exact, system exact, nearest, same arch
**   db_binary.c  the compiled-kernel cache with checksums
**   db_store.c   trials and winners
**   db_admin.c   show and check, for fa4-tune
**   db_json.c    export, import and merge
*/
#ifndef FA4_DB_INT_H
#define FA4_DB_INT_H

#include <pthread.h>
#include <stddef.h>
#include <sqlite3.h>
#include "db.h"

/*
** The handle.  Two locks, so that a reader never queues behind a writer
** that is waiting for another process: WLOCK guards USER (writes, and
** everything on a store that has no separate reader), RLOCK guards READER
** and SYS (reads only).  Neither is held while the caller does anything
** but database I/O, and every wait under them is bounded by TIMEOUT_MS.
*/
struct db {
    sqlite3 *user;          /* read-write, read-only fallback, or :memory: */
    sqlite3 *reader;        /* a second connection to USER's file for
                               lookups (WAL: never blocked by a writer);
                               NULL: read through USER */
    sqlite3 *sys;           /* NULL when there is no system database */
    int user_version;       /* PRAGMA user_version of each */
    int sys_version;
    int readonly;           /* the user store cannot be written */
    int in_txn;
    long timeout_ms;        /* the longest any one call waits for a lock */
    char *user_path;        /* as opened, ":memory:" for the in-memory store */
    char *sys_path;
    pthread_mutex_t wlock;
    pthread_mutex_t rlock;
};

/* ------------------------------------------------------------ problem key
** The columns of winners and trials that identify the problem a config
** was tuned for, in db/schema.sql's order.  X(name, kind, lo, hi, since):
** EXACT columns must match; BUCKET columns are powers of two and lookup
** measures the log2 distance; ANYBUCKET is a bucket where 0 means "any"
** (rows written before the column existed).  LO..HI is the valid range
** (import and check refuse others); SINCE the schema version that added
** the column (reads of an older read-only file substitute 0, the value
** its migration gives old rows).  A new key column is one line here, one
** migration, and the column in db/schema.sql.
**
** softcap and sinks are 0/1 flags, not the cap or the sink logits: the
** kernel variant (FA4_SOFTCAP, FA4_SINKS) depends only on whether each is
** on, while the cap and the logits are values a launch passes to that
** variant (they change no instruction it runs).  Keying on the cap's
** value would split one variant's winners across every cap a model uses.
** (One exception, left unkeyed: bf16 caps above 52 keep the running
** max, problem_softcap_fixed_max(); their tile choices are the same variant's.)
*/
#define DB_KEY_EXACT 0
#define DB_KEY_BUCKET 1
#define DB_KEY_ANYBUCKET 2

#define DB_KEY_COLUMNS(X) \
    X(dtype,           DB_KEY_EXACT,     1, 3, 1) \
    X(head_dim_qk,     DB_KEY_EXACT,     1, 1024, 1) \
    X(head_dim_v,      DB_KEY_EXACT,     1, 1024, 1) \
    X(gqa_group,       DB_KEY_EXACT,     1, 1 << 30, 1) \
    X(causal,          DB_KEY_EXACT,     0, 1, 1) \
    X(window_left,     DB_KEY_EXACT,     -1, 0x7fffffff, 1) \
    X(window_right,    DB_KEY_EXACT,     -1, 0x7fffffff, 1) \
    X(varlen,          DB_KEY_EXACT,     0, 1, 1) \
    X(paged,           DB_KEY_EXACT,     0, 1, 1) \
    X(page_size,       DB_KEY_EXACT,     0, 1 << 20, 1) \
    X(seqlen_q_bucket, DB_KEY_BUCKET,    1, 1 << 30, 1) \
    X(seqlen_k_bucket, DB_KEY_BUCKET,    1, 1 << 30, 1) \
    X(work_bucket,     DB_KEY_ANYBUCKET, 0, 1 << 30, 3) \
    X(softcap,         DB_KEY_EXACT,     0, 1, 4) \
    X(sinks,           DB_KEY_EXACT,     0, 1, 4)

typedef struct db_key {
#define DB_KEY_FIELD(name, kind, lo, hi, since) int name;
    DB_KEY_COLUMNS(DB_KEY_FIELD)
#undef DB_KEY_FIELD
} db_key;

typedef struct db_key_column {
    const char *name;
    size_t offset;          /* of the int in db_key */
    int kind;
    long long lo, hi;
    int since;              /* schema version that added it */
} db_key_column;

extern const db_key_column db_key_columns[];
extern const int db_key_ncols;

/* Column I of K. */
#define DB_KEY_AT(k, i) (*(int *)((char *)(k) + db_key_columns[i].offset))

/* The key of problem P (fields beyond P's struct_size read as defaults). */
void db_key_of(db_key *k, const fa4_problem *p);

/*
** The key columns of the kinds in KINDS (a bit per kind: 1 << DB_KEY_*)
** as SQL: ITEM once per column with every '@' replaced by the column's
** name, joined by SEP.  db_key_sql("w.@ = :@", " AND ", ...) gives
** "w.dtype = :dtype AND ...".  For a file at schema VERSION, a column it
** does not have yet gets ABSENT instead ("0 AS @"), or is left out when
** ABSENT is NULL.  sqlite3_malloc'd; NULL when out of memory.
*/
#define DB_KEY_ALL 7
char *db_key_sql(const char *item, const char *sep, int kinds, int version,
                 const char *absent);

/* FMT with "{cols}" replaced by the key columns ("dtype, ..."),
** "{params}" by their parameters (":dtype, ...") and "{pk}" by the
** condition that they equal them ("dtype = :dtype AND ..."), for the
** current schema.  sqlite3_malloc'd; NULL when out of memory. */
char *db_key_expand(const char *fmt);

/* The index of column NAME in db_key_columns, or -1. */
int db_key_index(const char *name);

/* Bind K's columns to the statement's parameters ":name", those it has. */
void db_key_bind(sqlite3_stmt *st, const db_key *k);

/* 1 when every column of K is in range (and buckets are powers of two);
** else 0 with WHY naming the first column that is not. */
int db_key_valid(const db_key *k, char *why, size_t why_size);

/* floor(log2(x)) for x >= 1; 0 otherwise. */
int db_ilog2(long long x);

/* Bind parameter NAME (":device_id") of ST; quietly nothing when absent. */
void db_bind_int(sqlite3_stmt *st, const char *name, long long v);
void db_bind_text(sqlite3_stmt *st, const char *name, const char *s);
void db_bind_real(sqlite3_stmt *st, const char *name, double x);  /* NULL
                                                        when not finite */
void db_bind_null(sqlite3_stmt *st, const char *name);

/* ---------------------------------------------------- SQLite, bounded */

/* Milliseconds on a monotonic clock. */
long long db_now_ms(void);

/* db_timeout_ms()'s default, in seconds. */
#define DB_TIMEOUT_DEFAULT_S 10

/* 1 when RC says another connection holds a lock. */
int db_rc_busy(int rc);

/* 1 when RC says the file is not a usable database. */
int db_rc_bad_file(int rc);

/* Prepare SQL on H into *ST, retried while busy until TIMEOUT_MS. */
int db_prep(sqlite3 *h, sqlite3_stmt **st, const char *sql, long timeout_ms);

/* The first sqlite3_step() of a read, retried (from the start) while
** busy until TIMEOUT_MS. */
int db_step_retry(sqlite3_stmt *st, long timeout_ms);

/* FA4_EDB for a file a read found unusable (corrupt, not SQLite), or for
** RC in general (a lock held too long is said as such).  With WHY. */
fa4_status db_read_error(sqlite3 *h, const char *path, int rc,
                         const char *what, char *why, size_t why_size);
fa4_status db_bad_file(sqlite3 *h, const char *path, int rc, char *why,
                       size_t why_size);

/*
** NULL when lookup can use a winners row of FAMILY with config TEXT and
** device FINGERPRINT, whatever its source hash (the parsed config into
** *OUT, which may be NULL); otherwise the reason it is skipped, written
** into WHY and returned.  db_lookup() and db_check() share it, so check
** reports exactly the rows lookup skips.
*/
const char *db_row_unusable(char *why, size_t why_size, int family,
                            const char *text, const char *fingerprint,
                            fa4_config *out);

/* The read side: the reader connection (or USER, under WLOCK), locked;
** release with db_read_end(). *VERSION (may be NULL) is its schema
** version. */
sqlite3 *db_read_begin(db *d, int *version);
void db_read_end(db *d);

#endif
