/*
** db_json.c -- JSON (jansson) exchange of tuned configs: export the user
** database's devices and winners (optionally trials) to a file, import
** such a file, and merge another database file.  The format and the
** import policy are documented in db.h and fa4-db(5): every well-formed
** record is imported, and each kind of mismatch (library version, NVRTC
** version, device, stale kernel source) is reported in the summary.  A
** record is well-formed when every field has its type and range (no
** integer is truncated, the config parses and passes config_validate()):
** what import accepts, lookup can use.
*/
#define _POSIX_C_SOURCE 200809L

#include "db_int.h"
#include "config.h"
#include "jit.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#define DB_JSON_FORMAT "fa4-db"
#define DB_JSON_FORMAT_VERSION 1

#define NOW_SQL "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

/* Column I of ST as JSON: integer, real, text or null. */
static json_t *column_json(sqlite3_stmt *st, int i)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
        return json_integer(sqlite3_column_int64(st, i));
    case SQLITE_FLOAT:
        return json_real(sqlite3_column_double(st, i));
    case SQLITE_NULL:
        return json_null();
    default:
        return json_string((const char *)sqlite3_column_text(st, i));
    }
}

/* Run SQL on H and append one object per row to ARR, a member per
** column; with KEYED, the problem-key columns (by name) go into a "key"
** member.  SQLite's code. */
static int rows_to_json(json_t *arr, sqlite3 *h, const char *sql, int keyed)
{
    sqlite3_stmt *st = NULL;
    int rc, i, n;

    if ((rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL)) != SQLITE_OK)
        return rc;
    n = sqlite3_column_count(st);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *obj = json_object(), *key = keyed ? json_object() : NULL;

        if (!obj || (keyed && !key)) {
            json_decref(obj);
            json_decref(key);
            rc = SQLITE_NOMEM;
            break;
        }
        for (i = 0; i < n; i++) {
            const char *name = sqlite3_column_name(st, i);
            json_t *target = key && db_key_index(name) >= 0 ? key : obj;

            json_object_set_new(target, name, column_json(st, i));
        }
        if (key)
            json_object_set_new(obj, "key", key);
        json_array_append_new(arr, obj);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* The exchange document of H (schema VERSION) into *OUT.  FA4_OK or
** FA4_EDB/FA4_ENOMEM with WHY. */
static fa4_status dump_db(json_t **out, sqlite3 *h, int version,
                          const char *path, int flags, char *why,
                          size_t why_size)
{
    const char *wlib = version >= 2 ? "w.library_version"
                                    : "'' AS library_version";
    const char *tlib = version >= 2 ? "t.library_version"
                                    : "'' AS library_version";
    json_t *root = NULL, *devs, *wins, *trials = NULL;
    char *sql = NULL, stamp[32];
    char *wcols = NULL, *worder = NULL, *tcols = NULL;
    time_t now = time(NULL);
    struct tm tm;
    int rc, nomem = 0;

    *out = NULL;
    if (version < 1)
        return db_fail(why, why_size, FA4_EDB, "%s: empty database (no fa4 "
                       "tables yet: nothing was stored in it)", path);
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    root = json_pack("{s:s, s:i, s:s, s:i, s:i, s:s, s:[], s:[]}",
                     "format", DB_JSON_FORMAT,
                     "format_version", DB_JSON_FORMAT_VERSION,
                     "library_version", fa4_version(),
                     "nvrtc_version", jit_nvrtc_version(),
                     "schema_version", version,
                     "exported_at", stamp, "devices", "winners");
    if (!root)
        return db_fail(why, why_size, FA4_ENOMEM, "out of memory");
    wcols = db_key_sql("w.@", ", ", DB_KEY_ALL, version, "0 AS @");
    worder = db_key_sql("w.@", ", ", DB_KEY_ALL, version, NULL);
    tcols = db_key_sql("t.@", ", ", DB_KEY_ALL, version, "0 AS @");
    if (!wcols || !worder || !tcols)
        goto nomem;
    devs = json_object_get(root, "devices");
    wins = json_object_get(root, "winners");
    rc = rows_to_json(devs, h, "SELECT fingerprint, name, cc, sm_count, "
                      "smem_per_block_optin, driver_version, nvrtc_version, "
                      "created_at FROM devices ORDER BY id", 0);
    if (rc != SQLITE_OK)
        goto err;
    sql = sqlite3_mprintf("SELECT d.fingerprint AS device, w.family, "
                          "w.source_hash, %s, w.config, w.median_ms, "
                          "w.tflops, w.updated_at, %s, d.driver_version, "
                          "d.nvrtc_version FROM winners w JOIN devices d ON "
                          "d.id = w.device_id ORDER BY d.id, w.family, %s",
                          wcols, wlib, worder);
    if (!sql)
        goto nomem;
    if ((rc = rows_to_json(wins, h, sql, 1)) != SQLITE_OK)
        goto err;
    sqlite3_free(sql);
    sql = NULL;
    if (flags & DB_JSON_TRIALS) {
        trials = json_array();
        if (!trials || json_object_set_new(root, "trials", trials) != 0)
            goto nomem;
        sql = sqlite3_mprintf("SELECT d.fingerprint AS device, t.family, "
                              "t.source_hash, %s, t.batch, t.heads_q, "
                              "t.seqlen_q, t.seqlen_k, t.config, t.ok, "
                              "t.failure, t.median_ms, t.min_ms, t.max_ms, "
                              "t.reps, t.tflops, t.max_rel_err, t.created_at, "
                              "%s, d.driver_version, d.nvrtc_version FROM "
                              "trials t JOIN devices d ON d.id = t.device_id "
                              "ORDER BY t.id", tcols, tlib);
        if (!sql)
            goto nomem;
        if ((rc = rows_to_json(trials, h, sql, 1)) != SQLITE_OK)
            goto err;
        sqlite3_free(sql);
        sql = NULL;
    }
    sqlite3_free(wcols);
    sqlite3_free(worder);
    sqlite3_free(tcols);
    *out = root;
    return FA4_OK;
nomem:
    nomem = 1;
    rc = SQLITE_NOMEM;
err:
    sqlite3_free(sql);
    sqlite3_free(wcols);
    sqlite3_free(worder);
    sqlite3_free(tcols);
    json_decref(root);
    if (nomem || rc == SQLITE_NOMEM)
        return db_fail(why, why_size, FA4_ENOMEM, "out of memory");
    return db_read_error(h, path, rc, "export", why, why_size);
}

fa4_status db_export_json_text(db *d, char **text, int flags, char *why,
                               size_t why_size)
{
    json_t *root = NULL;
    sqlite3 *h;
    fa4_status st;
    int version;

    if (!text)
        return db_fail(why, why_size, FA4_EINVAL,
                       "db_export_json: NULL argument");
    *text = NULL;
    if (!d)
        return db_fail(why, why_size, FA4_EINVAL,
                       "db_export_json: NULL argument");
    db_lock(d);
    h = db_handle(d, 0, &version);
    st = dump_db(&root, h, version, db_user_path(d), flags, why, why_size);
    db_unlock(d);
    if (st != FA4_OK)
        return st;
    *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!*text)
        return db_fail(why, why_size, FA4_ENOMEM, "out of memory");
    return FA4_OK;
}

fa4_status db_export_json(db *d, const char *path, int flags, char *why,
                          size_t why_size)
{
    char *text = NULL, *tmp = NULL;
    FILE *f = NULL;
    fa4_status st;
    int fd, err = 0;
    size_t n;

    if (!path)
        return db_fail(why, why_size, FA4_EINVAL, "db_export_json: NULL path");
    if ((st = db_export_json_text(d, &text, flags, why, why_size)) != FA4_OK)
        return st;
    tmp = malloc(strlen(path) + 8);
    if (!tmp) {
        free(text);
        return db_fail(why, why_size, FA4_ENOMEM, "out of memory");
    }
    sprintf(tmp, "%s.XXXXXX", path);
    fd = mkstemp(tmp);
    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        err = errno;
        if (fd >= 0)
            close(fd);
        st = db_fail(why, why_size, FA4_EDB, "%s: cannot write: %s", path,
                     strerror(err));
        goto done;
    }
    fchmod(fd, 0644);
    n = strlen(text);
    if (fwrite(text, 1, n, f) != n || fputc('\n', f) == EOF)
        err = errno ? errno : EIO;
    if (fclose(f) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (err) {
        unlink(tmp);
        st = db_fail(why, why_size, FA4_EDB, "%s: cannot write: %s", path,
                     strerror(err));
    }
done:
    free(tmp);
    free(text);
    return st;
}

/* ------------------------------------------------------------- import */

/* Counts and mismatch tallies of one import. */
typedef struct tally {
    int devices;
    int win_added, win_replaced, win_kept;
    int trial_added, trial_present;
    json_t *libver;     /* version -> count of records */
    json_t *nvrtc;      /* nvrtc version -> count */
    json_t *other_dev;  /* device name -> count */
    int stale;
    int records;
} tally;

/* Add one to counter NAME in the object MAP. */
static void bump(json_t *map, const char *name)
{
    json_t *v = json_object_get(map, name);

    json_object_set_new(map, name,
                        json_integer(v ? json_integer_value(v) + 1 : 1));
}

/* Append "NAME: COUNT, ..." of MAP to B (at most SIZE). */
static void list_counts(char *b, size_t size, json_t *map)
{
    const char *k;
    json_t *v;
    size_t n;
    int first = 1;

    json_object_foreach(map, k, v) {
        n = strlen(b);
        snprintf(b + n, size - n, "%s%s: %lld", first ? "" : ", ",
                 *k ? k : "unknown", (long long)json_integer_value(v));
        first = 0;
    }
}

/* Run ST to completion; SQLite's code (SQLITE_DONE on success). */
static int run(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);

    sqlite3_reset(st);
    return rc;
}

/* Bind JSON number or null V to parameter NAME; 0, or -1 when V is
** neither. */
static int bind_num(sqlite3_stmt *st, const char *name, json_t *v)
{
    int i = sqlite3_bind_parameter_index(st, name);

    if (!v || json_is_null(v))
        return i > 0 ? sqlite3_bind_null(st, i) : 0, 0;
    if (json_is_integer(v))
        return i > 0 ? sqlite3_bind_int64(st, i, json_integer_value(v)) : 0, 0;
    if (json_is_real(v))
        return i > 0 ? sqlite3_bind_double(st, i, json_real_value(v)) : 0, 0;
    return -1;
}

/* ROOT's member NAME when it is an array; otherwise NULL, with WHY saying
** (under LABEL) that it is missing or not an array. */
static json_t *array_member(json_t *root, const char *name, const char *label,
                            char *why, size_t why_size)
{
    json_t *a = json_object_get(root, name);

    if (json_is_array(a))
        return a;
    db_fail(why, why_size, FA4_EINVAL, "%s: \"%s\" missing or not an array",
            label, name);
    return NULL;
}

/*
** *OUT = the integer member NAME of OBJ, in LO..HI.  Absent (or null):
** *DEF when DEF is not NULL, else an error.  0, or -1 with WHY prefixed
** by WHERE ("file: winners[3]").  Integers are never truncated: a value
** that does not fit is out of range.
*/
static int get_int(int *out, json_t *obj, const char *name, long long lo,
                   long long hi, const int *def, const char *where, char *why,
                   size_t why_size)
{
    json_t *v = json_object_get(obj, name);
    json_int_t x;

    if ((!v || json_is_null(v)) && def) {
        *out = *def;
        return 0;
    }
    if (!json_is_integer(v)) {
        db_fail(why, why_size, FA4_EINVAL, "%s: %s %s", where, name,
                v ? "is not an integer" : "missing");
        return -1;
    }
    x = json_integer_value(v);
    if (x < lo || x > hi) {
        db_fail(why, why_size, FA4_EINVAL, "%s: %s=%lld; must be in "
                "%lld..%lld", where, name, (long long)x, lo, hi);
        return -1;
    }
    *out = (int)x;
    return 0;
}

/* 0 when V is absent, null, or a finite number above LO (at or above LO
** with INCL); else -1 with WHY naming NAME under WHERE. */
static int check_num(json_t *v, const char *name, double lo, int incl,
                     const char *where, char *why, size_t why_size)
{
    double x;

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v)) {
        db_fail(why, why_size, FA4_EINVAL, "%s: %s must be a number or null",
                where, name);
        return -1;
    }
    x = json_number_value(v);
    if (!isfinite(x) || (incl ? x < lo : x <= lo)) {
        db_fail(why, why_size, FA4_EINVAL, "%s: %s=%g; must be a finite "
                "number %s %g (or null)", where, name, x, incl ? ">=" : ">",
                lo);
        return -1;
    }
    return 0;
}

/* Import the devices of ROOT (label LABEL) into H.  FA4_OK or error. */
static fa4_status import_devices(tally *t, sqlite3 *h, json_t *root,
                                 const char *label, char *why, size_t why_size)
{
    sqlite3_stmt *st = NULL;
    json_t *devs = array_member(root, "devices", label, why, why_size), *dv;
    json_error_t jerr;
    char where[1100];
    size_t i;
    int rc;

    if (!devs)
        return FA4_EINVAL;
    rc = sqlite3_prepare_v2(h, "INSERT OR IGNORE INTO devices (fingerprint, "
                            "name, cc, sm_count, smem_per_block_optin, "
                            "driver_version, nvrtc_version, created_at) "
                            "VALUES (:fp, :name, :cc, :sms, :smem, :driver, "
                            ":nvrtc, coalesce(:created, " NOW_SQL "))", -1,
                            &st, NULL);
    if (rc != SQLITE_OK)
        return db_sqlite_error(h, NULL, rc, "import devices", why, why_size);
    json_array_foreach(devs, i, dv) {
        const char *fp, *name, *created = NULL;
        int cc, sms, smem, drv, nvrtc;

        snprintf(where, sizeof where, "%s: devices[%zu]", label, i);
        if (json_unpack_ex(dv, &jerr, 0, "{s:s, s:s, s?s}", "fingerprint",
                           &fp, "name", &name, "created_at", &created) != 0) {
            sqlite3_finalize(st);
            return db_fail(why, why_size, FA4_EINVAL, "%s: %s", where,
                           jerr.text);
        }
        if (!*fp) {
            sqlite3_finalize(st);
            return db_fail(why, why_size, FA4_EINVAL, "%s: empty fingerprint",
                           where);
        }
        if (get_int(&cc, dv, "cc", 10, 1000, NULL, where, why, why_size) ||
            get_int(&sms, dv, "sm_count", 1, INT_MAX, NULL, where, why,
                    why_size) ||
            get_int(&smem, dv, "smem_per_block_optin", 0, INT_MAX, NULL, where,
                    why, why_size) ||
            get_int(&drv, dv, "driver_version", 0, INT_MAX, NULL, where, why,
                    why_size) ||
            get_int(&nvrtc, dv, "nvrtc_version", 0, INT_MAX, NULL, where, why,
                    why_size)) {
            sqlite3_finalize(st);
            return FA4_EINVAL;
        }
        db_bind_text(st, ":fp", fp);
        db_bind_text(st, ":name", name);
        db_bind_int(st, ":cc", cc);
        db_bind_int(st, ":sms", sms);
        db_bind_int(st, ":smem", smem);
        db_bind_int(st, ":driver", drv);
        db_bind_int(st, ":nvrtc", nvrtc);
        db_bind_text(st, ":created", created);
        if ((rc = run(st)) != SQLITE_DONE) {
            sqlite3_finalize(st);
            return db_sqlite_error(h, NULL, rc, "import devices", why,
                                   why_size);
        }
        t->devices++;
    }
    sqlite3_finalize(st);
    return FA4_OK;
}

/* The common part of a winner or trial record: device id, family, source
** hash, key, config, library version, times. */
typedef struct record {
    sqlite3_int64 device_id;
    int family;
    const char *hash, *config, *libver, *updated;
    db_key key;
    json_t *median, *tflops;
} record;

/* *OUT = the string V, or NULL when V is absent or null; -1 when V is
** something else. */
static int opt_string(const char **out, json_t *v)
{
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return -1;
    *out = json_string_value(v);
    return 0;
}

/* Read record REC (ARRAY[I] of LABEL) into R, checking every field's type
** and range, and tally its mismatches against DEV_FP (may be NULL).
** FA4_OK, FA4_EINVAL, or FA4_EDB. */
static fa4_status read_record(record *r, tally *t, sqlite3 *h, json_t *rec,
                              const char *label, const char *array, size_t i,
                              const char *dev_fp, int my_nvrtc, char *why,
                              size_t why_size)
{
    static const int zero = 0;
    sqlite3_stmt *st = NULL;
    json_error_t jerr;
    json_t *key = NULL, *libver = NULL, *updated = NULL, *created = NULL;
    const char *fp, *name;
    char where[1100], buf[32], perr[512];
    fa4_config cfg;
    int k, nvrtc = 0, rc;

    memset(r, 0, sizeof *r);
    snprintf(where, sizeof where, "%s: %s[%zu]", label, array, i);
    if (json_unpack_ex(rec, &jerr, 0, "{s:s, s:s, s:o, s:s, s?o, s?o, s?o, "
                       "s?o, s?o}", "device", &fp, "source_hash", &r->hash,
                       "key", &key, "config", &r->config, "library_version",
                       &libver, "updated_at", &updated, "created_at", &created,
                       "median_ms", &r->median, "tflops", &r->tflops) != 0)
        return db_fail(why, why_size, FA4_EINVAL, "%s: %s", where, jerr.text);
    if (get_int(&r->family, rec, "family", 0, INT_MAX, NULL, where, why,
                why_size))
        return FA4_EINVAL;
    if (r->family != FA4_FAMILY_SM80 && r->family != FA4_FAMILY_SM90 &&
        r->family != FA4_FAMILY_SM100)
        return db_fail(why, why_size, FA4_EINVAL, "%s: family=%d; must be 80, "
                       "90 or 100", where, r->family);
    if (opt_string(&r->libver, libver) || opt_string(&r->updated, updated) ||
        (!r->updated && opt_string(&r->updated, created)))
        return db_fail(why, why_size, FA4_EINVAL, "%s: library_version, "
                       "updated_at and created_at must be strings or null",
                       where);
    if (!json_is_object(key))
        return db_fail(why, why_size, FA4_EINVAL, "%s: \"key\" is not an "
                       "object", where);
    for (k = 0; k < db_key_ncols; k++) {
        const db_key_column *c = &db_key_columns[k];
        char kw[1200];

        /* A column newer than the first format is optional: files
           written before it existed mean "any" (0). */
        snprintf(kw, sizeof kw, "%s: key", where);
        if (get_int(&DB_KEY_AT(&r->key, k), key, c->name, c->lo, c->hi,
                    c->since > 1 ? &zero : NULL, kw, why, why_size))
            return FA4_EINVAL;
    }
    if (!db_key_valid(&r->key, perr, sizeof perr))
        return db_fail(why, why_size, FA4_EINVAL, "%s: %s", where, perr);
    if (check_num(r->median, "median_ms", 0, 0, where, why, why_size) ||
        check_num(r->tflops, "tflops", 0, 1, where, why, why_size))
        return FA4_EINVAL;
    if (config_parse(&cfg, r->config, perr, sizeof perr) != FA4_OK)
        return db_fail(why, why_size, FA4_EINVAL, "%s: %s", where, perr);
    if ((int)cfg.family != r->family)
        return db_fail(why, why_size, FA4_EINVAL, "%s: config \"%s\" is "
                       "family %d, the record %d", where, r->config,
                       (int)cfg.family, r->family);
    if (config_validate(&cfg, perr, sizeof perr) != FA4_OK)
        return db_fail(why, why_size, FA4_EINVAL, "%s: config \"%s\": %s",
                       where, r->config, perr);

    rc = sqlite3_prepare_v2(h, "SELECT id, name, nvrtc_version FROM devices "
                            "WHERE fingerprint = :fp", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        db_bind_text(st, ":fp", fp);
        rc = sqlite3_step(st);
    }
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        if (rc == SQLITE_DONE)
            return db_fail(why, why_size, FA4_EINVAL, "%s: device \"%s\" is "
                           "not in \"devices\"", where, fp);
        return db_sqlite_error(h, NULL, rc, "import", why, why_size);
    }
    r->device_id = sqlite3_column_int64(st, 0);
    name = (const char *)sqlite3_column_text(st, 1);
    nvrtc = sqlite3_column_int(st, 2);

    t->records++;
    if (!r->libver)
        r->libver = "";
    if (strcmp(r->libver, fa4_version()) != 0)
        bump(t->libver, r->libver);
    if (my_nvrtc && nvrtc != my_nvrtc) {
        snprintf(buf, sizeof buf, "%d", nvrtc);
        bump(t->nvrtc, buf);
    }
    if (dev_fp && strcmp(fp, dev_fp) != 0)
        bump(t->other_dev, name ? name : fp);
    sqlite3_finalize(st);
    if (db_row_stale(perr, sizeof perr, r->family, r->hash))
        t->stale++;
    return FA4_OK;
}

/* Bind device, family, hash, key, config, times and version of R to the
** statement's parameters of those names. */
static void bind_record(sqlite3_stmt *st, const record *r)
{
    db_bind_int(st, ":device_id", r->device_id);
    db_bind_int(st, ":family", r->family);
    db_bind_text(st, ":source_hash", r->hash);
    db_key_bind(st, &r->key);
    db_bind_text(st, ":config", r->config);
    bind_num(st, ":median_ms", r->median);
    bind_num(st, ":tflops", r->tflops);
    db_bind_text(st, ":updated_at", r->updated);
    db_bind_text(st, ":library_version", r->libver);
}

/* Prepare FMT, expanded by db_key_expand() with "{where}" the primary
** key's condition, on H into *ST.  SQLite's code. */
static int prep_keyed(sqlite3 *h, sqlite3_stmt **st, const char *fmt)
{
    static const char pk[] = "device_id = :device_id AND family = :family "
                             "AND source_hash = :source_hash AND {pk}";
    const char *w = strstr(fmt, "{where}");
    char *full = w ? sqlite3_mprintf("%.*s%s%s", (int)(w - fmt), fmt, pk,
                                     w + strlen("{where}"))
                   : sqlite3_mprintf("%s", fmt);
    char *sql = full ? db_key_expand(full) : NULL;
    int rc = sql ? sqlite3_prepare_v2(h, sql, -1, st, NULL) : SQLITE_NOMEM;

    sqlite3_free(full);
    sqlite3_free(sql);
    return rc;
}

/* Import ROOT's winners into H: a record replaces an existing one only
** when it is faster. */
static fa4_status import_winners(tally *t, sqlite3 *h, json_t *root,
                                 const char *label, const char *dev_fp,
                                 int my_nvrtc, char *why, size_t why_size)
{
    sqlite3_stmt *sel = NULL, *ins = NULL, *upd = NULL;
    json_t *wins = array_member(root, "winners", label, why, why_size), *rec;
    fa4_status st = FA4_OK;
    record r;
    size_t i;
    int rc;

    if (!wins)
        return FA4_EINVAL;
    rc = prep_keyed(h, &sel, "SELECT median_ms FROM winners WHERE {where}");
    if (rc == SQLITE_OK)
        rc = prep_keyed(h, &ins, "INSERT INTO winners (device_id, family, "
                        "source_hash, {cols}, config, median_ms, tflops, "
                        "updated_at, library_version) VALUES (:device_id, "
                        ":family, :source_hash, {params}, :config, :median_ms, "
                        ":tflops, coalesce(:updated_at, " NOW_SQL "), "
                        ":library_version)");
    if (rc == SQLITE_OK)
        rc = prep_keyed(h, &upd, "UPDATE winners SET config = :config, "
                        "median_ms = :median_ms, tflops = :tflops, updated_at "
                        "= coalesce(:updated_at, " NOW_SQL "), "
                        "library_version = :library_version WHERE {where}");
    if (rc != SQLITE_OK) {
        st = db_sqlite_error(h, NULL, rc, "import winners", why, why_size);
        goto done;
    }
    json_array_foreach(wins, i, rec) {
        sqlite3_stmt *w;
        int exists, faster;

        st = read_record(&r, t, h, rec, label, "winners", i, dev_fp, my_nvrtc,
                         why, why_size);
        if (st != FA4_OK)
            goto done;
        bind_record(sel, &r);
        rc = sqlite3_step(sel);
        exists = rc == SQLITE_ROW;
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
            sqlite3_reset(sel);
            st = db_sqlite_error(h, NULL, rc, "import winners", why, why_size);
            goto done;
        }
        /* Faster: a number below the existing one, or any number where
           the existing median is missing. */
        faster = !exists ||
                 (json_is_number(r.median) &&
                  (sqlite3_column_type(sel, 0) == SQLITE_NULL ||
                   json_number_value(r.median) < sqlite3_column_double(sel, 0)));
        sqlite3_reset(sel);
        if (exists && !faster) {
            t->win_kept++;
            continue;
        }
        w = exists ? upd : ins;
        bind_record(w, &r);
        if ((rc = run(w)) != SQLITE_DONE) {
            st = db_sqlite_error(h, NULL, rc, "import winners", why, why_size);
            goto done;
        }
        if (exists)
            t->win_replaced++;
        else
            t->win_added++;
    }
done:
    sqlite3_finalize(sel);
    sqlite3_finalize(ins);
    sqlite3_finalize(upd);
    return st;
}

/* Import ROOT's trials (when present) into H; an identical trial (same
** device, problem, config, time and median) is not added twice. */
static fa4_status import_trials(tally *t, sqlite3 *h, json_t *root,
                                const char *label, const char *dev_fp,
                                int my_nvrtc, char *why, size_t why_size)
{
    sqlite3_stmt *sel = NULL, *ins = NULL;
    json_t *trials = json_object_get(root, "trials"), *rec;
    fa4_status st = FA4_OK;
    json_error_t jerr;
    char where[1100];
    record r;
    size_t i;
    int rc;

    if (!trials)
        return FA4_OK;
    if (!json_is_array(trials))
        return db_fail(why, why_size, FA4_EINVAL, "%s: \"trials\" is not an "
                       "array", label);
    rc = prep_keyed(h, &sel, "SELECT 1 FROM trials WHERE {where} AND batch = "
                    ":batch AND heads_q = :heads_q AND seqlen_q = :seqlen_q "
                    "AND seqlen_k = :seqlen_k AND config = :config AND "
                    "created_at IS :updated_at AND median_ms IS :median_ms");
    if (rc == SQLITE_OK)
        rc = prep_keyed(h, &ins, "INSERT INTO trials (device_id, family, "
                        "source_hash, {cols}, batch, heads_q, seqlen_q, seqlen_k, "
                        "config, ok, failure, median_ms, min_ms, max_ms, reps, "
                        "tflops, max_rel_err, created_at, library_version) "
                        "VALUES (:device_id, :family, :source_hash, {params}, "
                        ":batch, :heads_q, :seqlen_q, :seqlen_k, :config, :ok, "
                        ":failure, :median_ms, :min_ms, :max_ms, :reps, "
                        ":tflops, :max_rel_err, coalesce(:updated_at, "
                        NOW_SQL "), :library_version)");
    if (rc != SQLITE_OK) {
        st = db_sqlite_error(h, NULL, rc, "import trials", why, why_size);
        goto done;
    }
    json_array_foreach(trials, i, rec) {
        int batch, heads, sq, sk, j;
        const char *failure = NULL;
        json_t *mn = NULL, *mx = NULL, *reps = NULL, *err = NULL;
        json_t *okv = NULL, *fv = NULL;
        sqlite3_stmt *s2[2];

        st = read_record(&r, t, h, rec, label, "trials", i, dev_fp, my_nvrtc,
                         why, why_size);
        if (st != FA4_OK)
            goto done;
        snprintf(where, sizeof where, "%s: trials[%zu]", label, i);
        if (json_unpack_ex(rec, &jerr, 0, "{s:o, s?o, s?o, s?o, s?o, s?o}",
                           "ok", &okv, "failure", &fv, "min_ms", &mn,
                           "max_ms", &mx, "reps", &reps, "max_rel_err",
                           &err) != 0) {
            st = db_fail(why, why_size, FA4_EINVAL, "%s: %s", where, jerr.text);
            goto done;
        }
        if (get_int(&batch, rec, "batch", 1, INT_MAX, NULL, where, why,
                    why_size) ||
            get_int(&heads, rec, "heads_q", 1, INT_MAX, NULL, where, why,
                    why_size) ||
            get_int(&sq, rec, "seqlen_q", 1, INT_MAX, NULL, where, why,
                    why_size) ||
            get_int(&sk, rec, "seqlen_k", 1, INT_MAX, NULL, where, why,
                    why_size) ||
            check_num(mn, "min_ms", 0, 1, where, why, why_size) ||
            check_num(mx, "max_ms", 0, 1, where, why, why_size) ||
            check_num(err, "max_rel_err", 0, 1, where, why, why_size) ||
            check_num(reps, "reps", 0, 1, where, why, why_size)) {
            st = FA4_EINVAL;
            goto done;
        }
        if ((!json_is_integer(okv) && !json_is_boolean(okv)) ||
            opt_string(&failure, fv)) {
            st = db_fail(why, why_size, FA4_EINVAL, "%s: \"ok\" must be 0/1 or "
                         "a boolean and \"failure\" a string or null", where);
            goto done;
        }
        s2[0] = sel;
        s2[1] = ins;
        for (j = 0; j < 2; j++) {
            sqlite3_stmt *w = s2[j];

            bind_record(w, &r);
            db_bind_int(w, ":batch", batch);
            db_bind_int(w, ":heads_q", heads);
            db_bind_int(w, ":seqlen_q", sq);
            db_bind_int(w, ":seqlen_k", sk);
            db_bind_int(w, ":ok", json_is_true(okv) ||
                                  (json_is_integer(okv) &&
                                   json_integer_value(okv) != 0));
            db_bind_text(w, ":failure", failure);
            bind_num(w, ":min_ms", mn);
            bind_num(w, ":max_ms", mx);
            bind_num(w, ":reps", reps);
            bind_num(w, ":max_rel_err", err);
            rc = run(w);
            if (j == 0 && rc == SQLITE_ROW) {
                t->trial_present++;
                break;
            }
            if (rc != SQLITE_DONE)
                break;
            if (j == 1)
                t->trial_added++;
        }
        if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
            st = db_sqlite_error(h, NULL, rc, "import trials", why, why_size);
            goto done;
        }
    }
done:
    sqlite3_finalize(sel);
    sqlite3_finalize(ins);
    return st;
}

/* The summary text of T for LABEL (malloc'd). */
static char *summary_text(const tally *t, const char *label)
{
    char *s = malloc(8192);
    size_t n;

    if (!s)
        return NULL;
    snprintf(s, 8192, "%s: %d devices; winners: %d added, %d replaced by "
             "faster ones, %d kept (the existing one is as fast or faster); "
             "trials: %d added, %d already present\n", label, t->devices,
             t->win_added, t->win_replaced, t->win_kept, t->trial_added,
             t->trial_present);
    if (json_object_size(t->libver)) {
        n = strlen(s);
        snprintf(s + n, 8192 - n, "warning: records written by another "
                 "libfa4 version than %s (", fa4_version());
        list_counts(s, 8192, t->libver);
        n = strlen(s);
        snprintf(s + n, 8192 - n, "); imported; used only where their kernel "
                 "source hash matches this library's\n");
    }
    if (json_object_size(t->nvrtc)) {
        n = strlen(s);
        snprintf(s + n, 8192 - n, "warning: records measured with another "
                 "NVRTC than %d (", jit_nvrtc_version());
        list_counts(s, 8192, t->nvrtc);
        n = strlen(s);
        snprintf(s + n, 8192 - n, "); imported\n");
    }
    if (json_object_size(t->other_dev)) {
        n = strlen(s);
        snprintf(s + n, 8192 - n, "warning: records for other devices (");
        list_counts(s, 8192, t->other_dev);
        n = strlen(s);
        snprintf(s + n, 8192 - n, "); imported; this device uses them only "
                 "as same-arch fallbacks\n");
    }
    if (t->stale) {
        n = strlen(s);
        snprintf(s + n, 8192 - n, "warning: %d records tuned with another "
                 "kernel source (stale); imported; ranked below current entries "
                 "of the same bucket distance, until re-tuned (or made current "
                 "by fa4-tune rehash where their machine code is unchanged)\n",
                 t->stale);
    }
    return s;
}

/* Import the document ROOT (named LABEL) into D's user database in one
** transaction. */
static fa4_status import_root(db *d, json_t *root, const char *label,
                              const device_limits *dev, char **summary,
                              char *why, size_t why_size)
{
    tally t;
    const char *format = NULL;
    json_int_t fv = 0;
    int my_nvrtc;
    char fp[512], *dev_fp = NULL;
    sqlite3 *h;
    fa4_status st;
    json_error_t jerr;

    memset(&t, 0, sizeof t);
    if (json_unpack_ex(root, &jerr, 0, "{s:s, s:I}", "format", &format,
                       "format_version", &fv) != 0)
        return db_fail(why, why_size, FA4_EINVAL, "%s: not an fa4-db export: %s",
                       label, jerr.text);
    if (strcmp(format, DB_JSON_FORMAT) != 0)
        return db_fail(why, why_size, FA4_EINVAL, "%s: format \"%s\", expected "
                       "\"%s\"", label, format, DB_JSON_FORMAT);
    if (fv < 1)
        return db_fail(why, why_size, FA4_EINVAL, "%s: format_version %lld; "
                       "must be 1 or more", label, (long long)fv);
    if (fv > DB_JSON_FORMAT_VERSION)
        return db_fail(why, why_size, FA4_ENOTSUP, "%s: format_version %lld is "
                       "newer than this libfa4 %s reads (%d)", label,
                       (long long)fv, fa4_version(), DB_JSON_FORMAT_VERSION);
    if (dev)
        dev_fp = db_device_fingerprint(fp, sizeof fp, dev);
    my_nvrtc = dev && dev->nvrtc_version ? dev->nvrtc_version
                                         : jit_nvrtc_version();
    t.libver = json_object();
    t.nvrtc = json_object();
    t.other_dev = json_object();
    if (!t.libver || !t.nvrtc || !t.other_dev) {
        st = db_fail(why, why_size, FA4_ENOMEM, "out of memory");
        goto out;
    }
    db_lock(d);
    h = db_handle(d, 0, NULL);
    st = db_write_begin(d, why, why_size);
    if (st == FA4_OK)
        st = import_devices(&t, h, root, label, why, why_size);
    if (st == FA4_OK)
        st = import_winners(&t, h, root, label, dev_fp, my_nvrtc, why,
                            why_size);
    if (st == FA4_OK)
        st = import_trials(&t, h, root, label, dev_fp, my_nvrtc, why,
                           why_size);
    st = db_write_end(d, st, why, why_size);
    db_unlock(d);
    if (st == FA4_OK && summary && !(*summary = summary_text(&t, label)))
        st = db_fail(why, why_size, FA4_ENOMEM, "out of memory");
out:
    json_decref(t.libver);
    json_decref(t.nvrtc);
    json_decref(t.other_dev);
    return st;
}

/* Import the document ROOT parsed from LABEL (NULL: JERR says why it did
** not parse) and release it. */
static fa4_status import_loaded(db *d, json_t *root, const json_error_t *jerr,
                                const char *label, const device_limits *dev,
                                char **summary, char *why, size_t why_size)
{
    fa4_status st;

    if (!root)
        return db_fail(why, why_size, FA4_EINVAL, "%s:%d:%d: %s", label,
                       jerr->line, jerr->column, jerr->text);
    st = import_root(d, root, label, dev, summary, why, why_size);
    json_decref(root);
    return st;
}

fa4_status db_import_json(db *d, const char *path, const device_limits *dev,
                          char **summary, char *why, size_t why_size)
{
    json_error_t jerr;
    json_t *root;
    const int in = path && strcmp(path, "-") == 0;
    const char *label = in ? "(stdin)" : path;

    if (summary)
        *summary = NULL;
    if (!d || !path)
        return db_fail(why, why_size, FA4_EINVAL,
                       "db_import_json: NULL argument");
    root = in ? json_loadf(stdin, JSON_REJECT_DUPLICATES, &jerr)
              : json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    return import_loaded(d, root, &jerr, label, dev, summary, why, why_size);
}

fa4_status db_import_json_text(db *d, const char *text, size_t len,
                               const char *label, const device_limits *dev,
                               char **summary, char *why, size_t why_size)
{
    json_error_t jerr;
    json_t *root;

    if (summary)
        *summary = NULL;
    if (!d || (!text && len))
        return db_fail(why, why_size, FA4_EINVAL,
                       "db_import_json_text: NULL argument");
    if (!label)
        label = "(text)";
    root = json_loadb(text ? text : "", len, JSON_REJECT_DUPLICATES, &jerr);
    return import_loaded(d, root, &jerr, label, dev, summary, why, why_size);
}

fa4_status db_merge(db *d, const char *path, const device_limits *dev,
                    char **summary, char *why, size_t why_size)
{
    db *other = NULL;
    json_t *root = NULL;
    struct stat sb;
    sqlite3 *h;
    fa4_status st;
    int version;

    if (summary)
        *summary = NULL;
    if (!d || !path)
        return db_fail(why, why_size, FA4_EINVAL, "db_merge: NULL argument");
    if (stat(path, &sb) != 0)
        return db_fail(why, why_size, FA4_EDB, "%s: %s", path, strerror(errno));
    /* db_open refuses a FIFO or device (it would block or make files). */
    st = db_open(&other, path, NULL, DB_READONLY, NULL, 0, why, why_size);
    if (st != FA4_OK)
        return st;
    h = db_handle(other, 0, &version);
    if (version < 1) {
        db_close(other);
        return db_fail(why, why_size, FA4_EDB, "%s: empty database, nothing to "
                       "merge", path);
    }
    st = dump_db(&root, h, version, path, DB_JSON_TRIALS, why, why_size);
    db_close(other);
    if (st == FA4_OK)
        st = import_root(d, root, path, dev, summary, why, why_size);
    json_decref(root);
    return st;
}
