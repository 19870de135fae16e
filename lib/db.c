/*
** db.c -- the config database: opening (with fallbacks and migrations),
** lookup in the order user exact, system exact, nearest bucket, same
** arch; the compiled-kernel cache with checksums; trials and winners;
** db_show and db_check for the CLI.  The SQL schema is db/schema.sql
** (embedded by db_schema.c); the file format is described in fa4-db(5).
**
** Concurrency: WAL journal, a busy timeout, and every write in one short
** BEGIN IMMEDIATE transaction that is retried while another process
** holds the write lock.  A db handle is used by one thread at a time
** (a mutex in the handle serialises the calls).
*/
#define _POSIX_C_SOURCE 200809L

#include "db.h"
#include "hash.h"
#include "jit.h"
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#include <jansson.h>

/* The installed system database: $(pkgdatadir)/system.db. */
#ifndef FA4_SYSTEM_DB_PATH
#ifdef FA4_PKGDATADIR
#define FA4_SYSTEM_DB_PATH FA4_PKGDATADIR "/system.db"
#else
#define FA4_SYSTEM_DB_PATH "/usr/local/share/fa4/system.db"
#endif
#endif

#define DB_BUSY_TIMEOUT_MS 5000      /* per attempt, inside SQLite */
#define DB_WRITE_DEADLINE_MS 120000  /* total wait for the write lock */

struct db {
    sqlite3 *user;          /* read-write, read-only fallback, or :memory: */
    sqlite3 *sys;           /* NULL when there is no system database */
    int user_version;       /* PRAGMA user_version of each */
    int sys_version;
    int readonly;           /* the user store cannot be written */
    int in_txn;
    char *user_path;        /* as opened, ":memory:" for the in-memory store */
    char *sys_path;
    pthread_mutex_t lock;
};

/* The problem key: the fields of fa4_problem that choose a variant
** (see db/schema.sql).  The order is the column order KEY_COLS. */
typedef struct db_key {
    int v[12];
} db_key;

#define KEY_COLS "dtype, head_dim_qk, head_dim_v, gqa_group, causal, " \
                 "window_left, window_right, varlen, paged, page_size, " \
                 "seqlen_q_bucket, seqlen_k_bucket"
#define KEY_NCOLS 12

/* --------------------------------------------------------------- helpers */

/* Write the formatted message into WHY (when there is room); returns ST.
** Shared with db_json.c. */
fa4_status db_fail(char *why, size_t why_size, fa4_status st,
                   const char *fmt, ...)
{
    va_list ap;

    if (why && why_size) {
        va_start(ap, fmt);
        vsnprintf(why, why_size, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* Set WHY to SQLite's message for RC on H, prefixed by PATH and WHAT;
** returns FA4_EDB. */
fa4_status db_sqlite_error(sqlite3 *h, const char *path, int rc,
                           const char *what, char *why, size_t why_size)
{
    const char *msg = h ? sqlite3_errmsg(h) : sqlite3_errstr(rc);

    if (h && sqlite3_errcode(h) == SQLITE_OK)
        msg = sqlite3_errstr(rc);
    return db_fail(why, why_size, FA4_EDB, "%s: %s: %s", path ? path : "(db)",
                   what, msg);
}

/* Sleep MS milliseconds. */
static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Milliseconds on a monotonic clock. */
static long long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 1 when RC (primary code) says another connection holds a lock. */
static int rc_busy(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

/* 1 when RC says the file is not a usable database (never retried and
** never "repaired": the file is the user's). */
static int rc_bad_file(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
}

/* sqlite3_step(), retried while the database is busy; for the first step
** of a read (a retry restarts the statement). */
static int step_retry(sqlite3_stmt *st)
{
    int rc, i;

    for (i = 0;; i++) {
        rc = sqlite3_step(st);
        if (!rc_busy(rc) || i >= 100)
            return rc;
        sqlite3_reset(st);
        sleep_ms(5 + (i % 10) * 5);
    }
}

/* Prepare SQL on H; SQLite's code. */
static int prep(sqlite3 *h, sqlite3_stmt **st, const char *sql)
{
    int rc, i;

    for (i = 0;; i++) {
        rc = sqlite3_prepare_v2(h, sql, -1, st, NULL);
        if (!rc_busy(rc) || i >= 100)
            return rc;
        sleep_ms(10);
    }
}

/* Create DIR and its parents (like mkdir -p); 0 or an errno value. */
static int mkdir_p(const char *dir)
{
    char *tmp = strdup(dir), *p;
    int err = 0;
    struct stat sb;

    if (!tmp)
        return ENOMEM;
    for (p = tmp + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;

            *p = '\0';
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
                err = errno;
            else if (stat(tmp, &sb) != 0 || !S_ISDIR(sb.st_mode))
                err = ENOTDIR;
            *p = c;
            if (err || c == '\0')
                break;
        }
    }
    free(tmp);
    return err;
}

/* Create the directory that will hold PATH; 0 or an errno value. */
static int make_parent_dir(const char *path)
{
    char *dir = strdup(path), *slash;
    int err = 0;

    if (!dir)
        return ENOMEM;
    slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        err = mkdir_p(dir);
    }
    free(dir);
    return err;
}

/* --------------------------------------------------------------- paths */

/* Copy S into BUF; BUF, or NULL when it does not fit. */
static char *copy_path(char *buf, size_t size, const char *s)
{
    if (!buf || strlen(s) + 1 > size)
        return NULL;
    memcpy(buf, s, strlen(s) + 1);
    return buf;
}

char *db_default_path(char *buf, size_t size)
{
    const char *e = getenv("FA4_DB");
    const char *home;
    struct passwd pw, *res = NULL;
    char pwbuf[4096];
    int n;

    if (e && *e)
        return copy_path(buf, size, e);
    e = getenv("XDG_CACHE_HOME");
    if (e && e[0] == '/') {     /* the XDG spec ignores relative paths */
        n = snprintf(buf, size, "%s/fa4/fa4.db", e);
        return n >= 0 && (size_t)n < size ? buf : NULL;
    }
    home = getenv("HOME");
    if (!home || !*home) {
        if (getpwuid_r(getuid(), &pw, pwbuf, sizeof pwbuf, &res) != 0 || !res)
            return NULL;
        home = res->pw_dir;
    }
    n = snprintf(buf, size, "%s/.cache/fa4/fa4.db", home);
    return n >= 0 && (size_t)n < size ? buf : NULL;
}

char *db_default_system_path(char *buf, size_t size)
{
    const char *e = getenv("FA4_SYSTEM_DB");

    if (e)
        return *e ? copy_path(buf, size, e) : NULL;
    return copy_path(buf, size, FA4_SYSTEM_DB_PATH);
}

/* ----------------------------------------------------------------- keys */

int db_seqlen_bucket(int seqlen)
{
    int b = 1;

    while (b < seqlen && b < (1 << 30))
        b <<= 1;
    return b;
}

char *db_device_fingerprint(char *buf, size_t size, const device_limits *dev)
{
    snprintf(buf, size, "%s|%d|%d|%d|%d|%d", dev->name, dev->cc,
             dev->sm_count, dev->smem_per_block_optin, dev->driver_version,
             dev->nvrtc_version);
    return buf;
}

/* The problem key of P (fields beyond P's struct_size read as defaults). */
static void key_of(db_key *k, const fa4_problem *p)
{
    int hv = p->head_dim_v > 0 ? p->head_dim_v : p->head_dim_qk;
    int hkv = p->heads_kv > 0 ? p->heads_kv : p->heads_q;
    int varlen = 0, page = 0;

    if (p->struct_size >= offsetof(fa4_problem, varlen) + sizeof(int))
        varlen = p->varlen != 0;
    if (p->struct_size >= offsetof(fa4_problem, page_size) + sizeof(int))
        page = p->page_size > 0 ? p->page_size : 0;
    k->v[0] = (int)p->dtype;
    k->v[1] = p->head_dim_qk;
    k->v[2] = hv;
    k->v[3] = hkv > 0 && p->heads_q >= hkv ? p->heads_q / hkv : 1;
    k->v[4] = p->causal != 0;
    k->v[5] = p->window_left < 0 ? -1 : p->window_left;
    k->v[6] = p->causal ? 0 : (p->window_right < 0 ? -1 : p->window_right);
    k->v[7] = varlen;
    k->v[8] = page > 0;
    k->v[9] = page;
    k->v[10] = db_seqlen_bucket(p->seqlen_q);
    k->v[11] = db_seqlen_bucket(p->seqlen_k);
}

/* Bind the first N key columns of K to parameters FIRST, FIRST+1, ... */
static void bind_key(sqlite3_stmt *st, int first, const db_key *k, int n)
{
    int i;

    for (i = 0; i < n; i++)
        sqlite3_bind_int(st, first + i, k->v[i]);
}

/* floor(log2(x)) for x >= 1; 0 otherwise. */
static int ilog2(long long x)
{
    int r = 0;

    while (x > 1) {
        x >>= 1;
        r++;
    }
    return r;
}

/* --------------------------------------------------------------- opening */

/* Read PRAGMA user_version and the number of schema objects of H in one
** statement (one snapshot: another process may be creating the schema):
** the first reads of a file, where a corrupt or foreign file shows.
** SQLite's code. */
static int probe(sqlite3 *h, int *version, int *objects)
{
    sqlite3_stmt *st = NULL;
    int rc;

    *version = *objects = 0;
    rc = prep(h, &st, "SELECT (SELECT user_version FROM pragma_user_version), "
              "(SELECT count(*) FROM sqlite_master)");
    if (rc != SQLITE_OK)
        return rc;
    rc = step_retry(st);
    if (rc == SQLITE_ROW) {
        *version = sqlite3_column_int(st, 0);
        *objects = sqlite3_column_int(st, 1);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? SQLITE_OK : rc;
}

/* FA4_EDB for a file that PROBE or a later read found unusable. */
static fa4_status bad_file(sqlite3 *h, const char *path, int rc, char *why,
                           size_t why_size)
{
    return db_fail(why, why_size, FA4_EDB,
                   "%s: %s (%s); the file was left unchanged: move it away or "
                   "point FA4_DB elsewhere", path,
                   (rc & 0xff) == SQLITE_NOTADB ? "not an SQLite database"
                                             : "the database is corrupt",
                   h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
}

/* Check VERSION and OBJECTS of PATH: FA4_EDB for a newer schema or a
** foreign database (tables but no version). */
static fa4_status check_version(const char *path, int version, int objects,
                                char *why, size_t why_size)
{
    if (version > DB_SCHEMA_VERSION)
        return db_fail(why, why_size, FA4_EDB,
                       "%s: schema version %d is newer than this libfa4 %s "
                       "understands (%d); upgrade libfa4 or use another "
                       "database file (FA4_DB)", path, version, fa4_version(),
                       DB_SCHEMA_VERSION);
    if (version == 0 && objects > 0)
        return db_fail(why, why_size, FA4_EDB,
                       "%s: an SQLite database that is not an fa4 database "
                       "(%d schema objects, user_version 0); left unchanged",
                       path, objects);
    return FA4_OK;
}

/* Common settings of a fresh connection. */
static void configure(sqlite3 *h)
{
    sqlite3_extended_result_codes(h, 1);
    sqlite3_busy_timeout(h, DB_BUSY_TIMEOUT_MS);
}

/* BEGIN IMMEDIATE on H, retried until DB_WRITE_DEADLINE_MS while another
** writer holds the lock.  SQLite's code. */
static int begin_immediate(sqlite3 *h)
{
    long long deadline = now_ms() + DB_WRITE_DEADLINE_MS;
    unsigned seed = (unsigned)getpid() ^ (unsigned)now_ms();
    int rc;

    for (;;) {
        rc = sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (!rc_busy(rc) || now_ms() > deadline)
            return rc;
        seed = seed * 1103515245u + 12345u;
        sleep_ms(1 + (seed >> 16) % 20);
    }
}

/* COMMIT on H, retried while busy; rolls back when it finally fails. */
static int commit(sqlite3 *h)
{
    long long deadline = now_ms() + DB_WRITE_DEADLINE_MS;
    int rc;

    for (;;) {
        rc = sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
        if (!rc_busy(rc) || now_ms() > deadline)
            break;
        sleep_ms(5);
    }
    if (rc != SQLITE_OK && !sqlite3_get_autocommit(h))
        sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* Switch H to WAL unless it is already; SQLite's code. */
static int set_wal(sqlite3 *h)
{
    sqlite3_stmt *st = NULL;
    int rc, i, wal = 0;

    for (i = 0; i < 200; i++) {
        if ((rc = prep(h, &st, "PRAGMA journal_mode=WAL")) != SQLITE_OK)
            return rc;
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            wal = sqlite3_stricmp((const char *)sqlite3_column_text(st, 0),
                                  "wal") == 0;
        sqlite3_finalize(st);
        if (rc == SQLITE_ROW && wal)
            break;
        if (rc != SQLITE_ROW && !rc_busy(rc))
            return rc;
        sleep_ms(10);
    }
    if (!wal)
        return SQLITE_BUSY;
    return sqlite3_exec(h, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
}

/* Bring H (at VERSION) to DB_SCHEMA_VERSION in one write transaction:
** the full schema for a new file, else the migrations after its version
** (re-read inside the transaction: another process may have done it). */
static int migrate(sqlite3 *h, int *version)
{
    sqlite3_stmt *st = NULL;
    int rc, v = 0, i;

    if ((rc = begin_immediate(h)) != SQLITE_OK)
        return rc;
    if ((rc = prep(h, &st, "PRAGMA user_version")) != SQLITE_OK)
        goto fail;
    rc = sqlite3_step(st);
    v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        goto fail;
    if (v == 0) {
        if ((rc = sqlite3_exec(h, db_schema_sql, NULL, NULL, NULL)) != SQLITE_OK)
            goto fail;
    } else {
        for (i = 0; db_migrations[i].sql; i++) {
            if (db_migrations[i].to <= v)
                continue;
            rc = sqlite3_exec(h, db_migrations[i].sql, NULL, NULL, NULL);
            if (rc != SQLITE_OK)
                goto fail;
        }
    }
    if ((rc = commit(h)) != SQLITE_OK)
        return rc;
    *version = DB_SCHEMA_VERSION;
    return SQLITE_OK;
fail:
    sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* Open NAME with FLAGS (plus SQLITE_OPEN_FULLMUTEX) into *H, set it up and
** read its schema version and object count; the SQLite code.  *H may be
** set on failure too (it holds the error message); the caller closes it. */
static int open_probe(sqlite3 **h, const char *name, int flags, int *version,
                      int *objects)
{
    int rc = sqlite3_open_v2(name, h, flags | SQLITE_OPEN_FULLMUTEX, NULL);

    if (rc == SQLITE_OK) {
        configure(*h);
        rc = probe(*h, version, objects);
    }
    return rc;
}

/* Close H, whose open failed with ST; returns ST. */
static fa4_status close_failed(sqlite3 *h, fa4_status st)
{
    sqlite3_close(h);
    return st;
}

/* Open PATH read-only into *OUT (SQLITE_OPEN_READONLY; a WAL file whose
** directory cannot be written is then read with immutable=1).  FA4_EDB for
** a bad, foreign or newer file; FA4_ENODEV (internal) when it cannot be
** opened at all, with WHY. */
static fa4_status open_readonly(sqlite3 **out, int *version, const char *path,
                                char *why, size_t why_size)
{
    sqlite3 *h = NULL;
    int rc, objects = 0, attempt;
    fa4_status st;
    char *uri = NULL;

    *out = NULL;
    for (attempt = 0; attempt < 2; attempt++) {
        if (attempt == 0) {
            rc = open_probe(&h, path, SQLITE_OPEN_READONLY, version,
                            &objects);
        } else {
            /* sqlite3_mprintf's %w is not for URIs: escape by hand the
               three characters a URI path cannot hold. */
            size_t n = strlen(path), i, j = 0;

            uri = malloc(3 * n + 32);
            if (!uri)
                return db_fail(why, why_size, FA4_ENOMEM, "out of memory");
            j = (size_t)sprintf(uri, "file:");
            for (i = 0; i < n; i++) {
                unsigned char c = (unsigned char)path[i];

                if (c == '?' || c == '#' || c == '%' || c < 0x20)
                    j += (size_t)sprintf(uri + j, "%%%02X", c);
                else
                    uri[j++] = (char)c;
            }
            strcpy(uri + j, "?immutable=1");
            rc = open_probe(&h, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                            version, &objects);
            free(uri);
            uri = NULL;
        }
        if (rc == SQLITE_OK)
            break;
        if (rc_bad_file(rc))
            return close_failed(h, bad_file(h, path, rc, why, why_size));
        db_sqlite_error(h, path, rc, "cannot open read-only", why, why_size);
        sqlite3_close(h);
        h = NULL;
    }
    if (!h)
        return FA4_ENODEV;
    if ((st = check_version(path, *version, objects, why, why_size)) != FA4_OK)
        return close_failed(h, st);
    *out = h;
    return FA4_OK;
}

/* Open an empty in-memory store with the schema into *OUT. */
static fa4_status open_memory(sqlite3 **out, char *why, size_t why_size)
{
    sqlite3 *h = NULL;
    int rc;

    *out = NULL;
    rc = sqlite3_open_v2(":memory:", &h, SQLITE_OPEN_READWRITE |
                         SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL);
    if (rc == SQLITE_OK) {
        configure(h);
        rc = sqlite3_exec(h, db_schema_sql, NULL, NULL, NULL);
    }
    if (rc != SQLITE_OK) {
        db_sqlite_error(h, ":memory:", rc, "cannot create", why, why_size);
        sqlite3_close(h);
        return rc == SQLITE_NOMEM ? FA4_ENOMEM : FA4_EDB;
    }
    *out = h;
    return FA4_OK;
}

/* Open PATH read-write, create and migrate it.  FA4_OK; FA4_EDB for a bad,
** foreign or newer file (fatal); FA4_ENODEV (internal) when the location
** cannot be written, with the reason in WHY. */
static fa4_status open_writable(sqlite3 **out, int *version, const char *path,
                                char *why, size_t why_size)
{
    sqlite3 *h = NULL;
    int rc, objects = 0, err;
    fa4_status st;

    *out = NULL;
    if ((err = make_parent_dir(path)) != 0) {
        db_fail(why, why_size, FA4_ENODEV, "cannot create the directory of "
                "%s: %s", path, strerror(err));
        return FA4_ENODEV;
    }
    rc = open_probe(&h, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                    version, &objects);
    if (rc_bad_file(rc))
        return close_failed(h, bad_file(h, path, rc, why, why_size));
    if (rc != SQLITE_OK)
        goto unwritable;
    if ((st = check_version(path, *version, objects, why, why_size)) != FA4_OK)
        return close_failed(h, st);
    if (sqlite3_db_readonly(h, "main") == 1) {
        rc = SQLITE_READONLY;
        goto unwritable;
    }
    if ((rc = set_wal(h)) != SQLITE_OK)
        goto unwritable;
    if (*version < DB_SCHEMA_VERSION && (rc = migrate(h, version)) != SQLITE_OK)
        goto unwritable;
    *out = h;
    return FA4_OK;
unwritable:
    if (rc_bad_file(rc))
        st = bad_file(h, path, rc, why, why_size);
    else {
        db_sqlite_error(h, path, rc, "cannot write", why, why_size);
        st = FA4_ENODEV;
    }
    sqlite3_close(h);
    return st;
}

/* Append LINE to WARN as one line. */
static void add_warning(char *warn, size_t warn_size, const char *line)
{
    size_t n;

    if (!warn || !warn_size)
        return;
    n = strlen(warn);
    if (n)
        snprintf(warn + n, warn_size - n, "\n%s", line);
    else
        snprintf(warn, warn_size, "%s", line);
}

fa4_status db_open(db **out, const char *user_path, const char *system_path,
                   int flags, char *warn, size_t warn_size, char *why,
                   size_t why_size)
{
    db *d = NULL;
    fa4_status st;
    char reason[1024] = "", line[2048];
    struct stat sb;

    *out = NULL;
    if (warn && warn_size)
        warn[0] = '\0';
    d = calloc(1, sizeof *d);
    if (!d)
        return db_fail(why, why_size, FA4_ENOMEM, "out of memory");
    pthread_mutex_init(&d->lock, NULL);

    /* The user store. */
    if (!user_path) {
        st = open_memory(&d->user, why, why_size);
        d->user_version = DB_SCHEMA_VERSION;
        d->readonly = (flags & DB_READONLY) != 0;
        user_path = ":memory:";
    } else if (flags & DB_READONLY) {
        if (stat(user_path, &sb) != 0) {        /* nothing to read */
            st = open_memory(&d->user, why, why_size);
            d->user_version = DB_SCHEMA_VERSION;
        } else {
            st = open_readonly(&d->user, &d->user_version, user_path, why,
                               why_size);
            if (st == FA4_ENODEV)
                st = FA4_EDB;
        }
        d->readonly = 1;
    } else {
        st = open_writable(&d->user, &d->user_version, user_path, reason,
                           sizeof reason);
        if (st == FA4_EDB)
            db_fail(why, why_size, st, "%s", reason);
        if (st == FA4_ENODEV && stat(user_path, &sb) == 0) {
            st = open_readonly(&d->user, &d->user_version, user_path, why,
                               why_size);
            if (st == FA4_OK && d->user_version < 1) {
                sqlite3_close(d->user);   /* empty: nothing to read */
                d->user = NULL;
                st = FA4_ENODEV;
            }
            if (st == FA4_OK) {
                d->readonly = 1;
                snprintf(line, sizeof line, "%s; using it read-only: tuned "
                         "results will not be saved", reason);
                add_warning(warn, warn_size, line);
            }
        }
        if (st == FA4_ENODEV) {
            st = open_memory(&d->user, why, why_size);
            d->user_version = DB_SCHEMA_VERSION;
            snprintf(line, sizeof line, "%s; using an in-memory database: "
                     "tuned results will not be saved", reason);
            if (st == FA4_OK)
                add_warning(warn, warn_size, line);
            user_path = ":memory:";
        }
    }
    if (st != FA4_OK)
        goto done;
    d->user_path = strdup(user_path);

    /* The system database: optional, read-only. */
    if (system_path && stat(system_path, &sb) == 0) {
        st = open_readonly(&d->sys, &d->sys_version, system_path, why,
                           why_size);
        if (st == FA4_ENODEV)
            st = FA4_EDB;
        if (st != FA4_OK)
            goto done;
        if (d->sys_version < 1) {        /* an empty file: no entries */
            sqlite3_close(d->sys);
            d->sys = NULL;
        } else {
            d->sys_path = strdup(system_path);
        }
    }
    if (!d->user_path || (d->sys && !d->sys_path)) {
        st = db_fail(why, why_size, FA4_ENOMEM, "out of memory");
        goto done;
    }
    *out = d;
    d = NULL;
done:
    db_close(d);
    return st;
}

void db_close(db *d)
{
    if (!d)
        return;
    sqlite3_close(d->user);
    sqlite3_close(d->sys);
    free(d->user_path);
    free(d->sys_path);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

const char *db_user_path(const db *d) { return d ? d->user_path : NULL; }
const char *db_system_path(const db *d) { return d ? d->sys_path : NULL; }
int db_is_readonly(const db *d) { return d ? d->readonly : 1; }

/* ------------------------------------------------ shared with db_json.c */

sqlite3 *db_handle(db *d, int system, int *version)
{
    if (version)
        *version = system ? d->sys_version : d->user_version;
    return system ? d->sys : d->user;
}

void db_lock(db *d) { pthread_mutex_lock(&d->lock); }
void db_unlock(db *d) { pthread_mutex_unlock(&d->lock); }

fa4_status db_write_begin(db *d, char *why, size_t why_size)
{
    int rc;

    if (d->readonly)
        return db_fail(why, why_size, FA4_EDB, "%s is open read-only; nothing "
                       "was stored", d->user_path);
    if ((rc = begin_immediate(d->user)) != SQLITE_OK)
        return db_sqlite_error(d->user, d->user_path, rc, "begin", why,
                               why_size);
    d->in_txn = 1;
    return FA4_OK;
}

fa4_status db_write_end(db *d, fa4_status st, char *why, size_t why_size)
{
    int rc;

    if (!d->in_txn)
        return st;
    d->in_txn = 0;
    if (st != FA4_OK) {
        sqlite3_exec(d->user, "ROLLBACK", NULL, NULL, NULL);
        return st;
    }
    if ((rc = commit(d->user)) != SQLITE_OK)
        return db_sqlite_error(d->user, d->user_path, rc, "commit", why,
                               why_size);
    return FA4_OK;
}

/* ---------------------------------------------------------------- lookup */

/* One candidate row and its rank: smaller is better, compared in order. */
typedef struct candidate {
    int found;
    int level;        /* 1 user exact, 2 system exact, 3 nearest, 4 same arch */
    int sub;          /* same arch: 0 same name, 1 same cc only */
    int distance;     /* |dlog2 q| + |dlog2 k| */
    int sysdb;        /* 0 user, 1 system */
    double median;    /* ms; missing: huge */
    fa4_config config;
    int bq, bk;
    char device[128];
} candidate;

/* 1 when A ranks before B. */
static int better(const candidate *a, const candidate *b)
{
    if (!b->found)
        return 1;
    if (a->level != b->level)
        return a->level < b->level;
    if (a->sub != b->sub)
        return a->sub < b->sub;
    if (a->distance != b->distance)
        return a->distance < b->distance;
    if (a->sysdb != b->sysdb)
        return a->sysdb < b->sysdb;
    return a->median < b->median;
}

/* Scan the winners of H matching DEV's cc and K's discrete features into
** *BEST; counts stale rows in *STALE.  FA4_OK or FA4_EDB. */
static fa4_status scan_winners(candidate *best, int *stale, sqlite3 *h,
                               const char *path, int sysdb,
                               const device_limits *dev, const db_key *k,
                               char *why, size_t why_size)
{
    static const char sql[] =
        "SELECT w.family, w.source_hash, w.config, w.median_ms, "
        "w.seqlen_q_bucket, w.seqlen_k_bucket, d.fingerprint, d.name "
        "FROM winners w JOIN devices d ON d.id = w.device_id "
        "WHERE d.cc = ?1 AND w.dtype = ?2 AND w.head_dim_qk = ?3 "
        "AND w.head_dim_v = ?4 AND w.gqa_group = ?5 AND w.causal = ?6 "
        "AND w.window_left = ?7 AND w.window_right = ?8 AND w.varlen = ?9 "
        "AND w.paged = ?10 AND w.page_size = ?11";
    sqlite3_stmt *st = NULL;
    char fp[512], perr[256];
    int rc, first = 1;

    db_device_fingerprint(fp, sizeof fp, dev);
    if ((rc = prep(h, &st, sql)) != SQLITE_OK)
        goto err;
    sqlite3_bind_int(st, 1, dev->cc);
    bind_key(st, 2, k, 10);
    for (;;) {
        candidate c;
        const char *hash, *cur, *text;
        int family;

        rc = first ? step_retry(st) : sqlite3_step(st);
        first = 0;
        if (rc != SQLITE_ROW)
            break;
        memset(&c, 0, sizeof c);
        family = sqlite3_column_int(st, 0);
        hash = (const char *)sqlite3_column_text(st, 1);
        cur = jit_source_hash((fa4_family)family);
        if (!hash || !cur || strcmp(hash, cur) != 0) {
            (*stale)++;
            continue;
        }
        text = (const char *)sqlite3_column_text(st, 2);
        if (!text || config_parse(&c.config, text, perr, sizeof perr) != FA4_OK
            || (int)c.config.family != family) {
            (*stale)++;           /* written by another config grammar */
            continue;
        }
        c.found = 1;
        c.sysdb = sysdb;
        c.median = sqlite3_column_type(st, 3) == SQLITE_NULL
                       ? 1e300 : sqlite3_column_double(st, 3);
        c.bq = sqlite3_column_int(st, 4);
        c.bk = sqlite3_column_int(st, 5);
        c.distance = abs(ilog2(c.bq) - ilog2(k->v[10])) +
                     abs(ilog2(c.bk) - ilog2(k->v[11]));
        snprintf(c.device, sizeof c.device, "%s",
                 (const char *)sqlite3_column_text(st, 7));
        if (strcmp((const char *)sqlite3_column_text(st, 6), fp) == 0)
            c.level = c.distance == 0 && c.bq == k->v[10] && c.bk == k->v[11]
                          ? 1 + sysdb : 3;
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
    if (rc_bad_file(rc))
        return bad_file(h, path, rc, why, why_size);
    return db_sqlite_error(h, path, rc, "lookup", why, why_size);
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
    int stale = 0;
    fa4_status st = FA4_OK;

    if (!d || !config || !dev || !problem)
        return db_fail(why, why_size, FA4_EINVAL, "db_lookup: NULL argument");
    memset(&best, 0, sizeof best);
    key_of(&k, problem);
    db_lock(d);
    if (d->user)
        st = scan_winners(&best, &stale, d->user, d->user_path, 0, dev, &k,
                          why, why_size);
    if (st == FA4_OK && d->sys)
        st = scan_winners(&best, &stale, d->sys, d->sys_path, 1, dev, &k,
                          why, why_size);
    db_unlock(d);
    if (st != FA4_OK)
        return st;
    if (!best.found) {
        if (stale)
            return db_fail(why, why_size, FA4_EDB, "no entry for seqlen buckets "
                           "%d/%d (%d stale entries ignored: tuned with another "
                           "kernel source)", k.v[10], k.v[11], stale);
        return db_fail(why, why_size, FA4_EDB, "no entry for seqlen buckets "
                       "%d/%d", k.v[10], k.v[11]);
    }
    *config = best.config;
    if (source)
        *source = sources[best.level];
    db_fail(why, why_size, FA4_OK, "%s database, %s, buckets %d/%d, tuned on %s",
            best.sysdb ? "system" : "user",
            best.level <= 2 ? "exact" : best.level == 3 ? "nearest bucket"
                                                         : "same arch",
            best.bq, best.bk, best.device);
    return FA4_OK;
}

/* --------------------------------------------------------------- binaries */

/* Look KEY up in H: FA4_OK with the blob, FA4_EDB "not found", or FA4_EDB
** with *BAD set when the stored checksum does not match. */
static fa4_status binary_read(void **blob, size_t *size, int *bad, sqlite3 *h,
                              const char *path, const char *key, char *why,
                              size_t why_size)
{
    sqlite3_stmt *st = NULL;
    const void *p;
    int rc, n;
    char sum[17];
    const char *want;

    *bad = 0;
    rc = prep(h, &st, "SELECT blob, size, checksum FROM binaries WHERE key = ?1");
    if (rc != SQLITE_OK)
        goto err;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    rc = step_retry(st);
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
    if (rc_bad_file(rc))
        return bad_file(h, path, rc, why, why_size);
    return db_sqlite_error(h, path, rc, "read binary", why, why_size);
}

fa4_status db_binary_get(db *d, void **blob, size_t *size, const char *key,
                         char *why, size_t why_size)
{
    fa4_status st;
    int bad = 0, sysbad = 0;
    char msg[1024] = "";

    if (!d || !blob || !size || !key)
        return db_fail(why, why_size, FA4_EINVAL, "db_binary_get: NULL argument");
    *blob = NULL;
    *size = 0;
    db_lock(d);
    st = binary_read(blob, size, &bad, d->user, d->user_path, key, msg,
                     sizeof msg);
    if (bad && !d->readonly) {
        sqlite3_stmt *del = NULL;

        /* Drop the bad row in its own short transaction. */
        if (db_write_begin(d, NULL, 0) == FA4_OK) {
            fa4_status ds = FA4_EDB;

            if (prep(d->user, &del, "DELETE FROM binaries WHERE key = ?1")
                == SQLITE_OK) {
                sqlite3_bind_text(del, 1, key, -1, SQLITE_STATIC);
                if (sqlite3_step(del) == SQLITE_DONE)
                    ds = FA4_OK;
            }
            sqlite3_finalize(del);
            db_write_end(d, ds, NULL, 0);
        }
    }
    if (st == FA4_EDB && !bad && d->sys && strcmp(msg, "not found") == 0) {
        st = binary_read(blob, size, &sysbad, d->sys, d->sys_path, key, msg,
                         sizeof msg);
    }
    db_unlock(d);
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
    rc = prep(d->user, &st,
              "INSERT OR REPLACE INTO binaries (key, arch, blob, size, "
              "checksum, library_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, arch, -1, SQLITE_STATIC);
        sqlite3_bind_blob64(st, 3, size ? blob : "", size, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, (sqlite3_int64)size);
        sqlite3_bind_text(st, 5, sum, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 6, fa4_version(), -1, SQLITE_STATIC);
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

/* ------------------------------------------------------ trials, winners */

/* The id of DEV's row in the user store, inserted when new (inside the
** caller's write transaction).  FA4_OK or FA4_EDB. */
static fa4_status device_id(sqlite3_int64 *id, db *d, const device_limits *dev,
                            char *why, size_t why_size)
{
    sqlite3_stmt *st = NULL;
    char fp[512];
    int rc;

    db_device_fingerprint(fp, sizeof fp, dev);
    rc = prep(d->user, &st,
              "INSERT OR IGNORE INTO devices (fingerprint, name, cc, sm_count, "
              "smem_per_block_optin, driver_version, nvrtc_version) "
              "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, fp, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, dev->name, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 3, dev->cc);
        sqlite3_bind_int(st, 4, dev->sm_count);
        sqlite3_bind_int(st, 5, dev->smem_per_block_optin);
        sqlite3_bind_int(st, 6, dev->driver_version);
        sqlite3_bind_int(st, 7, dev->nvrtc_version);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_DONE)
        goto err;
    rc = prep(d->user, &st, "SELECT id FROM devices WHERE fingerprint = ?1");
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, fp, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
    }
    if (rc != SQLITE_ROW)
        goto err;
    *id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return FA4_OK;
err:
    sqlite3_finalize(st);
    return db_sqlite_error(d->user, d->user_path, rc, "store device", why,
                           why_size);
}

/* Bind a double, or NULL when X is not finite. */
static void bind_real(sqlite3_stmt *st, int i, double x)
{
    if (x == x && x < 1e300 && x > -1e300)
        sqlite3_bind_double(st, i, x);
    else
        sqlite3_bind_null(st, i);
}

fa4_status db_store_trial(db *d, const device_limits *dev,
                          const fa4_problem *problem, const db_trial *trial,
                          char *why, size_t why_size)
{
    sqlite3_stmt *st = NULL;
    sqlite3_int64 dev_id = 0;
    const char *hash;
    char text[512];
    db_key k;
    fa4_status s;
    int rc;

    if (!d || !dev || !problem || !trial)
        return db_fail(why, why_size, FA4_EINVAL,
                       "db_store_trial: NULL argument");
    hash = jit_source_hash(trial->config.family);
    if (!hash)
        return db_fail(why, why_size, FA4_EINVAL, "family=%d: no kernel source",
                       (int)trial->config.family);
    key_of(&k, problem);
    fa4_config_format(&trial->config, text, sizeof text);
    db_lock(d);
    if ((s = db_write_begin(d, why, why_size)) != FA4_OK)
        goto done;
    if ((s = device_id(&dev_id, d, dev, why, why_size)) != FA4_OK)
        goto end;
    rc = prep(d->user, &st,
              "INSERT INTO trials (device_id, family, source_hash, " KEY_COLS
              ", batch, heads_q, seqlen_q, seqlen_k, config, ok, failure, "
              "median_ms, min_ms, max_ms, reps, tflops, max_rel_err, "
              "library_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
              "?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, "
              "?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29)");
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, dev_id);
        sqlite3_bind_int(st, 2, (int)trial->config.family);
        sqlite3_bind_text(st, 3, hash, -1, SQLITE_STATIC);
        bind_key(st, 4, &k, KEY_NCOLS);
        sqlite3_bind_int(st, 16, problem->batch);
        sqlite3_bind_int(st, 17, problem->heads_q);
        sqlite3_bind_int(st, 18, problem->seqlen_q);
        sqlite3_bind_int(st, 19, problem->seqlen_k);
        sqlite3_bind_text(st, 20, text, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 21, trial->ok != 0);
        if (trial->ok)
            sqlite3_bind_null(st, 22);
        else
            sqlite3_bind_text(st, 22, trial->failure ? trial->failure
                                                     : "unknown", -1,
                              SQLITE_STATIC);
        bind_real(st, 23, trial->median_ms);
        bind_real(st, 24, trial->min_ms);
        bind_real(st, 25, trial->max_ms);
        sqlite3_bind_int(st, 26, trial->reps);
        bind_real(st, 27, trial->tflops);
        bind_real(st, 28, trial->max_rel_err);
        sqlite3_bind_text(st, 29, fa4_version(), -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
    }
    s = rc == SQLITE_DONE ? FA4_OK
                          : db_sqlite_error(d->user, d->user_path, rc,
                                            "store trial", why, why_size);
    sqlite3_finalize(st);
end:
    s = db_write_end(d, s, why, why_size);
done:
    db_unlock(d);
    return s;
}

fa4_status db_store_winner(db *d, const device_limits *dev,
                           const fa4_problem *problem, const fa4_config *config,
                           double median_ms, double tflops, char *why,
                           size_t why_size)
{
    sqlite3_stmt *st = NULL;
    sqlite3_int64 dev_id = 0;
    const char *hash;
    char text[512];
    db_key k;
    fa4_status s;
    int rc;

    if (!d || !dev || !problem || !config)
        return db_fail(why, why_size, FA4_EINVAL,
                       "db_store_winner: NULL argument");
    hash = jit_source_hash(config->family);
    if (!hash)
        return db_fail(why, why_size, FA4_EINVAL, "family=%d: no kernel source",
                       (int)config->family);
    key_of(&k, problem);
    fa4_config_format(config, text, sizeof text);
    db_lock(d);
    if ((s = db_write_begin(d, why, why_size)) != FA4_OK)
        goto done;
    if ((s = device_id(&dev_id, d, dev, why, why_size)) != FA4_OK)
        goto end;
    rc = prep(d->user, &st,
              "INSERT INTO winners (device_id, family, source_hash, " KEY_COLS
              ", config, median_ms, tflops, library_version) VALUES (?1, ?2, "
              "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
              "?17, ?18, ?19) ON CONFLICT (device_id, family, source_hash, "
              KEY_COLS ") DO UPDATE SET config = "
              "excluded.config, median_ms = excluded.median_ms, tflops = "
              "excluded.tflops, library_version = excluded.library_version, "
              "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')");
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, dev_id);
        sqlite3_bind_int(st, 2, (int)config->family);
        sqlite3_bind_text(st, 3, hash, -1, SQLITE_STATIC);
        bind_key(st, 4, &k, KEY_NCOLS);
        sqlite3_bind_text(st, 16, text, -1, SQLITE_STATIC);
        bind_real(st, 17, median_ms);
        bind_real(st, 18, tflops);
        sqlite3_bind_text(st, 19, fa4_version(), -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
    }
    s = rc == SQLITE_DONE ? FA4_OK
                          : db_sqlite_error(d->user, d->user_path, rc,
                                            "store winner", why, why_size);
    sqlite3_finalize(st);
end:
    s = db_write_end(d, s, why, why_size);
done:
    db_unlock(d);
    return s;
}

/* ------------------------------------------------------- show and check */

/* A growing string. */
typedef struct strbuf {
    char *p;
    size_t len, cap;
    int oom;
} strbuf;

/* Append the formatted text to B (sets B->oom on failure). */
static void sb_printf(strbuf *b, const char *fmt, ...)
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

    if (strcmp(table, "devices") == 0)
        return sqlite3_mprintf("SELECT id, fingerprint, name, cc, sm_count, "
                               "smem_per_block_optin, driver_version, "
                               "nvrtc_version, created_at FROM devices "
                               "ORDER BY id");
    if (strcmp(table, "winners") == 0)
        return sqlite3_mprintf("SELECT d.name AS device, d.fingerprint, "
                               "w.family, w.source_hash, %s, w.config, "
                               "w.median_ms, w.tflops, w.updated_at, %s "
                               "FROM winners w JOIN devices d ON d.id = "
                               "w.device_id ORDER BY d.id, w.family, %s",
                               KEY_COLS, wlib, KEY_COLS);
    if (strcmp(table, "trials") == 0)
        return sqlite3_mprintf("SELECT t.id, d.name AS device, t.family, "
                               "t.source_hash, %s, t.batch, t.heads_q, "
                               "t.seqlen_q, t.seqlen_k, t.config, t.ok, "
                               "t.failure, t.median_ms, t.min_ms, t.max_ms, "
                               "t.reps, t.tflops, t.max_rel_err, "
                               "t.created_at, %s FROM trials t JOIN "
                               "devices d ON d.id = t.device_id ORDER BY "
                               "t.id", KEY_COLS, tlib);
    if (strcmp(table, "binaries") == 0)
        return sqlite3_mprintf("SELECT key, arch, size, checksum, created_at, "
                               "%s FROM binaries ORDER BY key", lib);
    return NULL;
}

fa4_status db_show(db *d, char **out, const char *table, int flags,
                   char *why, size_t why_size)
{
    sqlite3 *h;
    sqlite3_stmt *st = NULL;
    const char *path;
    char *sql = NULL;
    json_t *arr = NULL;
    strbuf b = { NULL, 0, 0, 0 };
    int version, rc, i, n, first = 1;
    fa4_status s = FA4_OK;

    if (!out)
        return db_fail(why, why_size, FA4_EINVAL, "db_show: NULL argument");
    *out = NULL;
    if (!d || !table)
        return db_fail(why, why_size, FA4_EINVAL, "db_show: NULL argument");
    db_lock(d);
    h = db_handle(d, (flags & DB_SHOW_SYSTEM) != 0, &version);
    path = (flags & DB_SHOW_SYSTEM) ? d->sys_path : d->user_path;
    if (!h) {
        s = db_fail(why, why_size, FA4_EDB, "no system database");
        goto done;
    }
    if (!(sql = show_query(table, version))) {
        s = db_fail(why, why_size, FA4_EINVAL, "table \"%s\": expected devices, "
                    "winners, trials or binaries", table);
        goto done;
    }
    if ((flags & DB_SHOW_JSON) && !(arr = json_array())) {
        s = db_fail(why, why_size, FA4_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = prep(h, &st, sql)) != SQLITE_OK)
        goto sqlerr;
    n = sqlite3_column_count(st);
    if (!arr) {
        for (i = 0; i < n; i++)
            sb_printf(&b, "%s%s", i ? "\t" : "", sqlite3_column_name(st, i));
        sb_printf(&b, "\n");
    }
    while ((rc = first ? step_retry(st) : sqlite3_step(st)) == SQLITE_ROW) {
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
    s = rc_bad_file(rc) ? bad_file(h, path, rc, why, why_size)
                        : db_sqlite_error(h, path, rc, "show", why, why_size);
done:
    db_unlock(d);
    sqlite3_finalize(st);
    sqlite3_free(sql);
    json_decref(arr);
    free(b.p);
    return s;
}

/* Check one database H into B: integrity, stale winners, bad binaries.
** Adds to *PROBLEMS; FA4_EDB when the integrity check fails. */
static fa4_status check_one(strbuf *b, int *problems, sqlite3 *h,
                            const char *path, char *why, size_t why_size)
{
    sqlite3_stmt *st = NULL;
    int rc, ok = 1, first = 1;
    long long nbin = 0, nwin = 0;

    sb_printf(b, "%s:\n", path);
    if ((rc = prep(h, &st, "PRAGMA integrity_check")) != SQLITE_OK)
        goto err;
    while ((rc = first ? step_retry(st) : sqlite3_step(st)) == SQLITE_ROW) {
        const char *line = (const char *)sqlite3_column_text(st, 0);

        first = 0;
        if (line && strcmp(line, "ok") != 0) {
            ok = 0;
            sb_printf(b, "  integrity: %s\n", line);
        }
    }
    if (rc != SQLITE_DONE)
        goto err;
    sqlite3_finalize(st);
    st = NULL;
    if (ok)
        sb_printf(b, "  integrity: ok\n");
    else {
        db_fail(why, why_size, FA4_EDB, "%s: integrity check failed (the file "
                "was left unchanged)", path);
        return FA4_EDB;
    }

    rc = prep(h, &st, "SELECT d.name, w.family, w.source_hash, w.dtype, "
              "w.head_dim_qk, w.head_dim_v, w.gqa_group, w.causal, "
              "w.seqlen_q_bucket, w.seqlen_k_bucket, w.config FROM winners w "
              "JOIN devices d ON d.id = w.device_id");
    if (rc != SQLITE_OK)
        goto err;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int family = sqlite3_column_int(st, 1);
        const char *hash = (const char *)sqlite3_column_text(st, 2);
        const char *cur = jit_source_hash((fa4_family)family);

        nwin++;
        if (hash && cur && strcmp(hash, cur) == 0)
            continue;
        (*problems)++;
        sb_printf(b, "  stale winner: %s family=%d source=%s (current %s) "
                  "dtype=%d d=%d/%d gqa=%d causal=%d buckets=%d/%d: %s\n",
                  sqlite3_column_text(st, 0), family, hash ? hash : "",
                  cur ? cur : "none", sqlite3_column_int(st, 3),
                  sqlite3_column_int(st, 4), sqlite3_column_int(st, 5),
                  sqlite3_column_int(st, 6), sqlite3_column_int(st, 7),
                  sqlite3_column_int(st, 8), sqlite3_column_int(st, 9),
                  sqlite3_column_text(st, 10));
    }
    if (rc != SQLITE_DONE)
        goto err;
    sqlite3_finalize(st);
    st = NULL;

    rc = prep(h, &st, "SELECT key, blob, size, checksum FROM binaries");
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
    sb_printf(b, "  %lld winners, %lld binaries checked\n", nwin, nbin);
    return FA4_OK;
err:
    sqlite3_finalize(st);
    if (rc_bad_file(rc))
        return bad_file(h, path, rc, why, why_size);
    return db_sqlite_error(h, path, rc, "check", why, why_size);
}

fa4_status db_check(db *d, char **report, int *problems, char *why,
                    size_t why_size)
{
    strbuf b = { NULL, 0, 0, 0 };
    int count = 0;
    fa4_status s;

    if (report)
        *report = NULL;
    if (problems)
        *problems = 0;
    if (!d || !report)
        return db_fail(why, why_size, FA4_EINVAL, "db_check: NULL argument");
    db_lock(d);
    s = check_one(&b, &count, d->user, d->user_path, why, why_size);
    if (s == FA4_OK && d->sys)
        s = check_one(&b, &count, d->sys, d->sys_path, why, why_size);
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
