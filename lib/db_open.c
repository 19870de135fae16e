/*
** db_open.c -- the config database's files: default paths, opening (with
** the read-only and in-memory fallbacks), schema migrations, the handle's
** locks and write transactions, and the SQLite helpers every database
** module uses.  The SQL schema is db/schema.sql (embedded by
** db_schema.c); the file format is described in fa4-db(5).
**
** Concurrency: WAL journal, every write in one short BEGIN IMMEDIATE
** transaction, reads on a second connection that a writer never blocks.
** Every wait for another process is bounded: $FA4_DB_TIMEOUT seconds
** (default DB_TIMEOUT_DEFAULT_S) per call, then a clear error or, when
** opening, the fallback.  A file that another process may be writing is
** never read with immutable=1.
*/
#define _POSIX_C_SOURCE 200809L

#include "db_int.h"

#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The installed system database, the file `make install` puts there. */
#ifndef FA4_SYSTEM_DB_PATH
#ifdef FA4_PKGDATADIR
#define FA4_SYSTEM_DB_PATH FA4_PKGDATADIR "/fa4-system.db"
#else
#define FA4_SYSTEM_DB_PATH "/usr/local/share/libfa4/fa4-system.db"
#endif
#endif

/* --------------------------------------------------------------- errors */

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

fa4_status db_sqlite_error(sqlite3 *h, const char *path, int rc,
                           const char *what, char *why, size_t why_size)
{
    const char *msg = h ? sqlite3_errmsg(h) : sqlite3_errstr(rc);

    if (db_rc_busy(rc))
        return db_fail(why, why_size, FA4_EDB, "%s: %s: the database is "
                       "locked by another process; gave up after %.3g s "
                       "(FA4_DB_TIMEOUT)", path ? path : "(db)", what,
                       db_timeout_ms() / 1000.0);
    if (h && sqlite3_errcode(h) == SQLITE_OK)
        msg = sqlite3_errstr(rc);
    return db_fail(why, why_size, FA4_EDB, "%s: %s: %s", path ? path : "(db)",
                   what, msg);
}

fa4_status db_bad_file(sqlite3 *h, const char *path, int rc, char *why,
                       size_t why_size)
{
    return db_fail(why, why_size, FA4_EDB,
                   "%s: %s (%s); the file was left unchanged: move it away or "
                   "point FA4_DB elsewhere", path,
                   (rc & 0xff) == SQLITE_NOTADB ? "not an SQLite database"
                                             : "the database is corrupt",
                   h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
}

fa4_status db_read_error(sqlite3 *h, const char *path, int rc,
                         const char *what, char *why, size_t why_size)
{
    if (db_rc_bad_file(rc))
        return db_bad_file(h, path, rc, why, why_size);
    return db_sqlite_error(h, path, rc, what, why, why_size);
}

/* ---------------------------------------------------- bounded waiting */

/* Sleep MS milliseconds. */
static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

long long db_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long db_timeout_ms(void)
{
    const char *e = getenv("FA4_DB_TIMEOUT");
    char *end;
    double s;

    if (!e || !*e)
        return DB_TIMEOUT_DEFAULT_S * 1000L;
    s = strtod(e, &end);
    if (end == e || *end || !(s >= 0) || s > 86400)   /* NaN fails >= */
        return DB_TIMEOUT_DEFAULT_S * 1000L;
    return (long)(s * 1000);
}

int db_rc_busy(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

int db_rc_bad_file(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
}

int db_step_retry(sqlite3_stmt *st, long timeout_ms)
{
    long long deadline = db_now_ms() + timeout_ms;
    int rc;

    for (;;) {
        rc = sqlite3_step(st);
        if (!db_rc_busy(rc) || db_now_ms() >= deadline)
            return rc;
        sqlite3_reset(st);
        sleep_ms(5);
    }
}

int db_prep(sqlite3 *h, sqlite3_stmt **st, const char *sql, long timeout_ms)
{
    long long deadline = db_now_ms() + timeout_ms;
    int rc;

    for (;;) {
        rc = sqlite3_prepare_v2(h, sql, -1, st, NULL);
        if (!db_rc_busy(rc) || db_now_ms() >= deadline)
            return rc;
        sleep_ms(5);
    }
}

/* --------------------------------------------------------------- paths */

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

char *db_system_db_path(char *buf, size_t size, const char *option)
{
    const char *e = getenv("FA4_SYSTEM_DB");

    if (option)
        return *option ? copy_path(buf, size, option) : NULL;
    if (e)
        return *e ? copy_path(buf, size, e) : NULL;
    return copy_path(buf, size, FA4_SYSTEM_DB_PATH);
}

char *db_default_system_path(char *buf, size_t size)
{
    return db_system_db_path(buf, size, NULL);
}

/*
** FA4_OK when PATH is a regular file (*EXISTS 1) or absent (*EXISTS 0);
** FA4_EDB naming what it is otherwise.  SQLite would block forever
** opening a FIFO and would put a -journal beside a device (/dev/null).
*/
static fa4_status check_regular(const char *path, int *exists, char *why,
                                size_t why_size)
{
    struct stat sb;
    const char *kind;

    *exists = 0;
    if (stat(path, &sb) != 0)
        return FA4_OK;          /* absent, or a path through a file */
    *exists = 1;
    if (S_ISREG(sb.st_mode))
        return FA4_OK;
    kind = S_ISFIFO(sb.st_mode) ? "a FIFO"
         : S_ISCHR(sb.st_mode) ? "a character device"
         : S_ISBLK(sb.st_mode) ? "a block device"
         : S_ISDIR(sb.st_mode) ? "a directory"
         : S_ISSOCK(sb.st_mode) ? "a socket" : "not a regular file";
    return db_fail(why, why_size, FA4_EDB, "%s: %s, not a database file "
                   "(a database must be a regular file)", path, kind);
}

/* --------------------------------------------------------------- opening */

/* Read PRAGMA user_version and the number of schema objects of H in one
** statement (one snapshot: another process may be creating the schema):
** the first reads of a file, where a corrupt or foreign file shows.
** SQLite's code. */
static int probe(sqlite3 *h, int *version, int *objects, long timeout_ms)
{
    sqlite3_stmt *st = NULL;
    int rc;

    *version = *objects = 0;
    rc = db_prep(h, &st, "SELECT (SELECT user_version FROM pragma_user_version), "
                 "(SELECT count(*) FROM sqlite_master)", timeout_ms);
    if (rc != SQLITE_OK)
        return rc;
    rc = db_step_retry(st, timeout_ms);
    if (rc == SQLITE_ROW) {
        *version = sqlite3_column_int(st, 0);
        *objects = sqlite3_column_int(st, 1);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? SQLITE_OK : rc;
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

/* Common settings of a fresh connection: SQLite waits for a lock at most
** TIMEOUT_MS per statement. */
static void configure(sqlite3 *h, long timeout_ms)
{
    sqlite3_extended_result_codes(h, 1);
    sqlite3_busy_timeout(h, timeout_ms > 0x7fffffffL ? 0x7fffffff : (int)timeout_ms);
}

/* BEGIN IMMEDIATE on H, retried until TIMEOUT_MS while another writer
** holds the lock.  SQLite's code. */
static int begin_immediate(sqlite3 *h, long timeout_ms)
{
    long long deadline = db_now_ms() + timeout_ms;
    unsigned seed = (unsigned)getpid() ^ (unsigned)db_now_ms();
    int rc;

    for (;;) {
        rc = sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (!db_rc_busy(rc) || db_now_ms() >= deadline)
            return rc;
        seed = seed * 1103515245u + 12345u;
        sleep_ms(1 + (seed >> 16) % 20);
    }
}

/* COMMIT on H, retried while busy until TIMEOUT_MS; rolls back when it
** finally fails. */
static int commit(sqlite3 *h, long timeout_ms)
{
    long long deadline = db_now_ms() + timeout_ms;
    int rc;

    for (;;) {
        rc = sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
        if (!db_rc_busy(rc) || db_now_ms() >= deadline)
            break;
        sleep_ms(5);
    }
    if (rc != SQLITE_OK && !sqlite3_get_autocommit(h))
        sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* Switch H to WAL unless it is already; SQLite's code. */
static int set_wal(sqlite3 *h, long timeout_ms)
{
    long long deadline = db_now_ms() + timeout_ms;
    sqlite3_stmt *st = NULL;
    int rc, wal = 0;

    for (;;) {
        if ((rc = db_prep(h, &st, "PRAGMA journal_mode=WAL", timeout_ms)) != SQLITE_OK)
            return rc;
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            wal = sqlite3_stricmp((const char *)sqlite3_column_text(st, 0),
                                  "wal") == 0;
        sqlite3_finalize(st);
        if (rc == SQLITE_ROW && wal)
            break;
        if (rc != SQLITE_ROW && !db_rc_busy(rc))
            return rc;
        if (db_now_ms() >= deadline)
            return SQLITE_BUSY;
        sleep_ms(10);
    }
    return sqlite3_exec(h, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
}

/* Bring H (at VERSION) to DB_SCHEMA_VERSION in one write transaction:
** the full schema for a new file, else the migrations after its version
** (re-read inside the transaction: another process may have done it). */
static int migrate(sqlite3 *h, int *version, long timeout_ms)
{
    sqlite3_stmt *st = NULL;
    int rc, v = 0, i;

    if ((rc = begin_immediate(h, timeout_ms)) != SQLITE_OK)
        return rc;
    if ((rc = db_prep(h, &st, "PRAGMA user_version", timeout_ms)) != SQLITE_OK)
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
    if ((rc = commit(h, timeout_ms)) != SQLITE_OK)
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
                      int *objects, long timeout_ms)
{
    int rc = sqlite3_open_v2(name, h, flags | SQLITE_OPEN_FULLMUTEX, NULL);

    if (rc == SQLITE_OK) {
        configure(*h, timeout_ms);
        rc = probe(*h, version, objects, timeout_ms);
    }
    return rc;
}

/* Close H, whose open failed with ST; returns ST. */
static fa4_status close_failed(sqlite3 *h, fa4_status st)
{
    sqlite3_close(h);
    return st;
}

/* 1 when PATH has a -wal file beside it: some process has it open in WAL
** mode and may be writing it, so it must not be read as immutable. */
static int has_wal(const char *path)
{
    char *wal = sqlite3_mprintf("%s-wal", path);
    struct stat sb;
    int r = wal && stat(wal, &sb) == 0;

    sqlite3_free(wal);
    return r;
}

/* Open PATH read-only into *OUT.  A WAL file in a directory this process
** cannot write (no -shm can be made) is read with immutable=1, but only
** when the open failed for that reason and no -wal file shows a writer;
** a lock held by another process is waited for (bounded), never read
** around.  FA4_EDB for a bad, foreign, newer or locked file; FA4_ENODEV
** (internal) when it cannot be opened at all, with WHY. */
static fa4_status open_readonly(sqlite3 **out, int *version, const char *path,
                                long timeout_ms, char *why, size_t why_size)
{
    sqlite3 *h = NULL;
    int rc, objects = 0, primary;
    fa4_status st;
    char *uri = NULL;

    *out = NULL;
    rc = open_probe(&h, path, SQLITE_OPEN_READONLY, version, &objects,
                    timeout_ms);
    primary = rc & 0xff;
    if (rc != SQLITE_OK && (primary == SQLITE_CANTOPEN ||
                            primary == SQLITE_READONLY) && !has_wal(path)) {
        /* sqlite3_mprintf's %w is not for URIs: escape by hand the
           three characters a URI path cannot hold. */
        size_t n = strlen(path), i, j = 0;

        sqlite3_close(h);
        h = NULL;
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
                        version, &objects, timeout_ms);
        free(uri);
    }
    if (rc != SQLITE_OK) {
        if (db_rc_bad_file(rc))
            return close_failed(h, db_bad_file(h, path, rc, why, why_size));
        st = db_rc_busy(rc) ? FA4_EDB : FA4_ENODEV;
        db_sqlite_error(h, path, rc, "cannot open read-only", why, why_size);
        return close_failed(h, st);
    }
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
        configure(h, 0);
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
** cannot be written (*LOCKED 1 when another process held it past the
** timeout), with the reason in WHY. */
static fa4_status open_writable(sqlite3 **out, int *version, const char *path,
                                long timeout_ms, int *locked, char *why,
                                size_t why_size)
{
    sqlite3 *h = NULL;
    int rc, objects = 0, err;
    fa4_status st;

    *out = NULL;
    *locked = 0;
    if ((err = make_parent_dir(path)) != 0) {
        db_fail(why, why_size, FA4_ENODEV, "cannot create the directory of "
                "%s: %s", path, strerror(err));
        return FA4_ENODEV;
    }
    rc = open_probe(&h, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                    version, &objects, timeout_ms);
    if (db_rc_bad_file(rc))
        return close_failed(h, db_bad_file(h, path, rc, why, why_size));
    if (rc != SQLITE_OK)
        goto unwritable;
    if ((st = check_version(path, *version, objects, why, why_size)) != FA4_OK)
        return close_failed(h, st);
    if (sqlite3_db_readonly(h, "main") == 1) {
        rc = SQLITE_READONLY;
        goto unwritable;
    }
    if ((rc = set_wal(h, timeout_ms)) != SQLITE_OK)
        goto unwritable;
    if (*version < DB_SCHEMA_VERSION &&
        (rc = migrate(h, version, timeout_ms)) != SQLITE_OK)
        goto unwritable;
    *out = h;
    return FA4_OK;
unwritable:
    if (db_rc_bad_file(rc))
        st = db_bad_file(h, path, rc, why, why_size);
    else {
        *locked = db_rc_busy(rc);
        db_sqlite_error(h, path, rc, "cannot write", why, why_size);
        st = FA4_ENODEV;
    }
    sqlite3_close(h);
    return st;
}

/* A second connection to the user file at PATH for reads (see struct db),
** or NULL when one cannot be had (reads then go through the writer). */
static sqlite3 *open_reader(const char *path, long timeout_ms)
{
    sqlite3 *h = NULL;

    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX,
                        NULL) != SQLITE_OK ||
        sqlite3_exec(h, "PRAGMA query_only=1", NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_close(h);
        return NULL;
    }
    configure(h, timeout_ms);
    return h;
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
    int exists = 0, locked = 0;

    *out = NULL;
    if (warn && warn_size)
        warn[0] = '\0';
    d = calloc(1, sizeof *d);
    if (!d)
        return db_fail(why, why_size, FA4_ENOMEM, "out of memory");
    pthread_mutex_init(&d->wlock, NULL);
    pthread_mutex_init(&d->rlock, NULL);
    d->timeout_ms = db_timeout_ms();

    /* The user store. */
    if (user_path &&
        (st = check_regular(user_path, &exists, why, why_size)) != FA4_OK)
        goto done;
    if (!user_path) {
        st = open_memory(&d->user, why, why_size);
        d->user_version = DB_SCHEMA_VERSION;
        d->readonly = (flags & DB_READONLY) != 0;
        user_path = ":memory:";
    } else if (flags & DB_READONLY) {
        if (!exists) {        /* nothing to read */
            st = open_memory(&d->user, why, why_size);
            d->user_version = DB_SCHEMA_VERSION;
        } else {
            st = open_readonly(&d->user, &d->user_version, user_path,
                               d->timeout_ms, why, why_size);
            if (st == FA4_ENODEV)
                st = FA4_EDB;
        }
        d->readonly = 1;
    } else {
        st = open_writable(&d->user, &d->user_version, user_path,
                           d->timeout_ms, &locked, reason, sizeof reason);
        if (st == FA4_EDB)
            db_fail(why, why_size, st, "%s", reason);
        /* Read-only next, unless the file is locked: that would wait as
           long again for the same lock. */
        if (st == FA4_ENODEV && !locked && exists) {
            st = open_readonly(&d->user, &d->user_version, user_path,
                               d->timeout_ms, why, why_size);
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
        } else if (st == FA4_OK && !d->readonly) {
            d->reader = open_reader(user_path, d->timeout_ms);
        }
    }
    if (st != FA4_OK)
        goto done;
    d->user_path = strdup(user_path);

    /* The system database: optional, read-only. */
    if (system_path &&
        (st = check_regular(system_path, &exists, why, why_size)) != FA4_OK)
        goto done;
    if (system_path && exists) {
        st = open_readonly(&d->sys, &d->sys_version, system_path,
                           d->timeout_ms, why, why_size);
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
    sqlite3_close(d->reader);
    sqlite3_close(d->user);
    sqlite3_close(d->sys);
    free(d->user_path);
    free(d->sys_path);
    pthread_mutex_destroy(&d->wlock);
    pthread_mutex_destroy(&d->rlock);
    free(d);
}

const char *db_user_path(const db *d) { return d ? d->user_path : NULL; }
const char *db_system_path(const db *d) { return d ? d->sys_path : NULL; }
int db_is_readonly(const db *d) { return d ? d->readonly : 1; }

/* ----------------------------------------------------- locks, transactions */

sqlite3 *db_handle(db *d, int system, int *version)
{
    if (version)
        *version = system ? d->sys_version : d->user_version;
    return system ? d->sys : d->user;
}

void db_lock(db *d) { pthread_mutex_lock(&d->wlock); }
void db_unlock(db *d) { pthread_mutex_unlock(&d->wlock); }

sqlite3 *db_read_begin(db *d, int *version)
{
    if (version)
        *version = d->user_version;
    if (d->reader) {
        pthread_mutex_lock(&d->rlock);
        return d->reader;
    }
    pthread_mutex_lock(&d->wlock);
    return d->user;
}

void db_read_end(db *d)
{
    pthread_mutex_unlock(d->reader ? &d->rlock : &d->wlock);
}

fa4_status db_write_begin(db *d, char *why, size_t why_size)
{
    int rc;

    if (d->readonly)
        return db_fail(why, why_size, FA4_EDB, "%s is open read-only; nothing "
                       "was stored", d->user_path);
    if ((rc = begin_immediate(d->user, d->timeout_ms)) != SQLITE_OK)
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
    if ((rc = commit(d->user, d->timeout_ms)) != SQLITE_OK)
        return db_sqlite_error(d->user, d->user_path, rc, "commit", why,
                               why_size);
    return FA4_OK;
}
