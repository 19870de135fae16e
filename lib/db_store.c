/*
** db_store.c -- what the tuner writes: every trial, and the winner of a
** (device, family, source hash, problem key).  Each write is one short
** transaction on the user store (db_open.c bounds its wait for the lock).
*/
#include "db_int.h"
#include "config.h"
#include "jit.h"

#include <stdio.h>
#include <string.h>

/* The id of DEV's row in the user store, inserted when new (inside the
** caller's write transaction).  FA4_OK or FA4_EDB. */
static fa4_status device_id(sqlite3_int64 *id, db *d, const device_limits *dev,
                            char *why, size_t why_size)
{
    sqlite3_stmt *st = NULL;
    char fp[512];
    int rc;

    db_device_fingerprint(fp, sizeof fp, dev);
    rc = db_prep(d->user, &st,
                 "INSERT OR IGNORE INTO devices (fingerprint, name, cc, "
                 "sm_count, smem_per_block_optin, driver_version, "
                 "nvrtc_version) VALUES (:fp, :name, :cc, :sms, :smem, "
                 ":driver, :nvrtc)", d->timeout_ms);
    if (rc == SQLITE_OK) {
        db_bind_text(st, ":fp", fp);
        db_bind_text(st, ":name", dev->name);
        db_bind_int(st, ":cc", dev->cc);
        db_bind_int(st, ":sms", dev->sm_count);
        db_bind_int(st, ":smem", dev->smem_per_block_optin);
        db_bind_int(st, ":driver", dev->driver_version);
        db_bind_int(st, ":nvrtc", dev->nvrtc_version);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_DONE)
        goto err;
    rc = db_prep(d->user, &st, "SELECT id FROM devices WHERE fingerprint = :fp",
                 d->timeout_ms);
    if (rc == SQLITE_OK) {
        db_bind_text(st, ":fp", fp);
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

/* Prepare FMT, expanded by db_key_expand(), on D's user store.
** SQLite's code. */
static int prep_keyed(db *d, sqlite3_stmt **st, const char *fmt)
{
    char *sql = db_key_expand(fmt);
    int rc = sql ? db_prep(d->user, st, sql, d->timeout_ms) : SQLITE_NOMEM;

    sqlite3_free(sql);
    return rc;
}

/* Run the keyed write FMT for (DEV, PROBLEM, FAMILY) on D in one
** transaction, BIND filling in the rest.  The status. */
static fa4_status write_keyed(db *d, const device_limits *dev,
                              const fa4_problem *problem, fa4_family family,
                              const char *fmt, const char *what,
                              void (*bind)(sqlite3_stmt *, const void *),
                              const void *arg, char *why, size_t why_size)
{
    sqlite3_stmt *st = NULL;
    sqlite3_int64 dev_id = 0;
    const char *hash = jit_source_hash(family);
    db_key k;
    fa4_status s;
    int rc;

    if (strcmp(config_family_name(family), "unknown") == 0)
        return db_fail(why, why_size, FA4_EINVAL, "family=%d: no kernel source",
                       (int)family);
    db_key_of(&k, problem);
    db_lock(d);
    if ((s = db_write_begin(d, why, why_size)) != FA4_OK)
        goto done;
    if ((s = device_id(&dev_id, d, dev, why, why_size)) != FA4_OK)
        goto end;
    rc = prep_keyed(d, &st, fmt);
    if (rc == SQLITE_OK) {
        db_bind_int(st, ":device_id", dev_id);
        db_bind_int(st, ":family", (int)family);
        db_bind_text(st, ":source_hash", hash);
        db_key_bind(st, &k);
        db_bind_text(st, ":library_version", fa4_version());
        bind(st, arg);
        rc = sqlite3_step(st);
    }
    s = rc == SQLITE_DONE ? FA4_OK
                          : db_sqlite_error(d->user, d->user_path, rc, what,
                                            why, why_size);
    sqlite3_finalize(st);
end:
    s = db_write_end(d, s, why, why_size);
done:
    db_unlock(d);
    return s;
}

/* What a trial binds beyond the key. */
typedef struct trial_args {
    const fa4_problem *problem;
    const db_trial *trial;
    const char *text;
} trial_args;

static void bind_trial(sqlite3_stmt *st, const void *arg)
{
    const trial_args *a = arg;
    const db_trial *t = a->trial;

    db_bind_int(st, ":batch", a->problem->batch);
    db_bind_int(st, ":heads_q", a->problem->heads_q);
    db_bind_int(st, ":seqlen_q", a->problem->seqlen_q);
    db_bind_int(st, ":seqlen_k", a->problem->seqlen_k);
    db_bind_text(st, ":config", a->text);
    db_bind_int(st, ":ok", t->ok != 0);
    db_bind_text(st, ":failure", t->ok ? NULL : t->failure ? t->failure
                                                            : "unknown");
    db_bind_real(st, ":median_ms", t->median_ms);
    db_bind_real(st, ":min_ms", t->min_ms);
    db_bind_real(st, ":max_ms", t->max_ms);
    db_bind_int(st, ":reps", t->reps);
    db_bind_real(st, ":tflops", t->tflops);
    db_bind_real(st, ":max_rel_err", t->max_rel_err);
}

fa4_status db_store_trial(db *d, const device_limits *dev,
                          const fa4_problem *problem, const db_trial *trial,
                          char *why, size_t why_size)
{
    char text[512];
    trial_args a;

    if (!d || !dev || !problem || !trial)
        return db_fail(why, why_size, FA4_EINVAL,
                       "db_store_trial: NULL argument");
    fa4_config_format(&trial->config, text, sizeof text);
    a.problem = problem;
    a.trial = trial;
    a.text = text;
    return write_keyed(d, dev, problem, trial->config.family,
                       "INSERT INTO trials (device_id, family, source_hash, "
                       "{cols}, batch, heads_q, seqlen_q, seqlen_k, config, ok, "
                       "failure, median_ms, min_ms, max_ms, reps, tflops, "
                       "max_rel_err, library_version) VALUES (:device_id, "
                       ":family, :source_hash, {params}, :batch, :heads_q, "
                       ":seqlen_q, :seqlen_k, :config, :ok, :failure, "
                       ":median_ms, :min_ms, :max_ms, :reps, :tflops, "
                       ":max_rel_err, :library_version)",
                       "store trial", bind_trial, &a, why, why_size);
}

/* What a winner binds beyond the key. */
typedef struct winner_args {
    const char *text;
    double median_ms, tflops;
} winner_args;

static void bind_winner(sqlite3_stmt *st, const void *arg)
{
    const winner_args *a = arg;

    db_bind_text(st, ":config", a->text);
    db_bind_real(st, ":median_ms", a->median_ms);
    db_bind_real(st, ":tflops", a->tflops);
}

fa4_status db_store_winner(db *d, const device_limits *dev,
                           const fa4_problem *problem, const fa4_config *config,
                           double median_ms, double tflops, char *why,
                           size_t why_size)
{
    char text[512];
    winner_args a;

    if (!d || !dev || !problem || !config)
        return db_fail(why, why_size, FA4_EINVAL,
                       "db_store_winner: NULL argument");
    fa4_config_format(config, text, sizeof text);
    a.text = text;
    a.median_ms = median_ms;
    a.tflops = tflops;
    return write_keyed(d, dev, problem, config->family,
                       "INSERT INTO winners (device_id, family, source_hash, "
                       "{cols}, config, median_ms, tflops, library_version) "
                       "VALUES (:device_id, :family, :source_hash, {params}, "
                       ":config, :median_ms, :tflops, :library_version) "
                       "ON CONFLICT (device_id, family, source_hash, {cols}) DO "
                       "UPDATE SET config = excluded.config, median_ms = "
                       "excluded.median_ms, tflops = excluded.tflops, "
                       "library_version = excluded.library_version, "
                       "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
                       "store winner", bind_winner, &a, why, why_size);
}
