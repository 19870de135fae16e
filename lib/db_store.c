/*
** db_store.c -- what the tuner writes: every trial, and the winner of a
** (device, family, source hash, problem key).  Each write is one short
** transaction on the user store (db_open.c bounds its wait for the lock);
** a search round's trials go in one.
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

/* Run the keyed write FMT for (DEV, PROBLEM) on D, once per row 0..N-1,
** all in one transaction: FAMILY gives a row's family, BIND fills in the
** rest.  The status; nothing is written unless every row is. */
static fa4_status write_keyed(db *d, const device_limits *dev,
                              const fa4_problem *problem, const char *fmt,
                              const char *what,
                              fa4_family (*family)(const void *, int),
                              void (*bind)(sqlite3_stmt *, const void *, int),
                              const void *arg, int n, char *why, size_t why_size)
{
    sqlite3_stmt *st = NULL;
    sqlite3_int64 dev_id = 0;
    db_key k;
    fa4_status s;
    int rc, i;

    for (i = 0; i < n; i++)
        if (strcmp(config_family_name(family(arg, i)), "unknown") == 0)
            return db_fail(why, why_size, FA4_EINVAL, "family=%d: no kernel source",
                           (int)family(arg, i));
    db_key_of(&k, problem);
    db_lock(d);
    if ((s = db_write_begin(d, why, why_size)) != FA4_OK)
        goto done;
    if ((s = device_id(&dev_id, d, dev, why, why_size)) != FA4_OK)
        goto end;
    if ((rc = prep_keyed(d, &st, fmt)) == SQLITE_OK)
        rc = SQLITE_DONE;
    for (i = 0; i < n && rc == SQLITE_DONE; i++) {
        fa4_family f = family(arg, i);

        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        db_bind_int(st, ":device_id", dev_id);
        db_bind_int(st, ":family", (int)f);
        db_bind_text(st, ":source_hash", jit_source_hash(f));
        db_key_bind(st, &k);
        db_bind_text(st, ":library_version", fa4_version());
        bind(st, arg, i);
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

/* What trials bind beyond the key. */
typedef struct trial_args {
    const fa4_problem *problem;
    const db_trial *trials;
} trial_args;

static fa4_family trial_family(const void *arg, int i)
{
    return ((const trial_args *)arg)->trials[i].config.family;
}

static void bind_trial(sqlite3_stmt *st, const void *arg, int i)
{
    const trial_args *a = arg;
    const db_trial *t = &a->trials[i];
    char text[512];

    fa4_config_format(&t->config, text, sizeof text);
    db_bind_int(st, ":batch", a->problem->batch);
    db_bind_int(st, ":heads_q", a->problem->heads_q);
    db_bind_int(st, ":seqlen_q", a->problem->seqlen_q);
    db_bind_int(st, ":seqlen_k", a->problem->seqlen_k);
    db_bind_text(st, ":config", text);
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

fa4_status db_store_trials(db *d, const device_limits *dev,
                           const fa4_problem *problem, const db_trial *trials,
                           int n, char *why, size_t why_size)
{
    trial_args a;

    if (!d || !dev || !problem || (!trials && n > 0) || n < 0)
        return db_fail(why, why_size, FA4_EINVAL,
                       "db_store_trials: NULL argument");
    if (n == 0)
        return FA4_OK;
    a.problem = problem;
    a.trials = trials;
    return write_keyed(d, dev, problem,
                       "INSERT INTO trials (device_id, family, source_hash, "
                       "{cols}, batch, heads_q, seqlen_q, seqlen_k, config, ok, "
                       "failure, median_ms, min_ms, max_ms, reps, tflops, "
                       "max_rel_err, library_version) VALUES (:device_id, "
                       ":family, :source_hash, {params}, :batch, :heads_q, "
                       ":seqlen_q, :seqlen_k, :config, :ok, :failure, "
                       ":median_ms, :min_ms, :max_ms, :reps, :tflops, "
                       ":max_rel_err, :library_version)",
                       "store trial", trial_family, bind_trial, &a, n, why,
                       why_size);
}

fa4_status db_store_trial(db *d, const device_limits *dev,
                          const fa4_problem *problem, const db_trial *trial,
                          char *why, size_t why_size)
{
    if (!d || !dev || !problem || !trial)
        return db_fail(why, why_size, FA4_EINVAL,
                       "db_store_trial: NULL argument");
    return db_store_trials(d, dev, problem, trial, 1, why, why_size);
}

/* What a winner binds beyond the key. */
typedef struct winner_args {
    const fa4_config *config;
    double median_ms, tflops;
} winner_args;

static fa4_family winner_family(const void *arg, int i)
{
    (void)i;
    return ((const winner_args *)arg)->config->family;
}

static void bind_winner(sqlite3_stmt *st, const void *arg, int i)
{
    const winner_args *a = arg;
    char text[512];

    (void)i;
    fa4_config_format(a->config, text, sizeof text);
    db_bind_text(st, ":config", text);
    db_bind_real(st, ":median_ms", a->median_ms);
    db_bind_real(st, ":tflops", a->tflops);
}

fa4_status db_store_winner(db *d, const device_limits *dev,
                           const fa4_problem *problem, const fa4_config *config,
                           double median_ms, double tflops, char *why,
                           size_t why_size)
{
    winner_args a;

    if (!d || !dev || !problem || !config)
        return db_fail(why, why_size, FA4_EINVAL,
                       "db_store_winner: NULL argument");
    a.config = config;
    a.median_ms = median_ms;
    a.tflops = tflops;
    return write_keyed(d, dev, problem,
                       "INSERT INTO winners (device_id, family, source_hash, "
                       "{cols}, config, median_ms, tflops, library_version) "
                       "VALUES (:device_id, :family, :source_hash, {params}, "
                       ":config, :median_ms, :tflops, :library_version) "
                       "ON CONFLICT (device_id, family, source_hash, {cols}) DO "
                       "UPDATE SET config = excluded.config, median_ms = "
                       "excluded.median_ms, tflops = excluded.tflops, "
                       "library_version = excluded.library_version, "
                       "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
                       "store winner", winner_family, bind_winner, &a, 1, why,
                       why_size);
}
