/*
** test_db_json.c -- JSON exchange of tuned configs: export, then import
** into a fresh database gives identical rows; re-import adds nothing;
** malformed JSON is an error with jansson's line and column; a malformed
** record rejects the whole file; records from another library version or
** device are imported and reported; a faster winner replaces a slower
** one; db_merge; db_show as text and JSON.  The key's softcap and sinks
** flags round-trip.  No GPU needed.
*/
#define _XOPEN_SOURCE 700

#include "tap.h"
#include "db.h"
#include "db_test_util.h"

#include <jansson.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every row of SQL on PATH as text, one line per row (malloc'd). */
static char *dump(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    size_t cap = 1 << 20, n = 0;
    char *out = calloc(1, cap);
    int i;

    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(out, cap, "error: %s", sqlite3_errmsg(h));
        sqlite3_close(h);
        return out;
    }
    while (sqlite3_step(st) == SQLITE_ROW && n < cap - 4096) {
        for (i = 0; i < sqlite3_column_count(st); i++) {
            const unsigned char *t = sqlite3_column_text(st, i);

            n += (size_t)snprintf(out + n, cap - n, "%s|",
                                  t ? (const char *)t : "NULL");
        }
        n += (size_t)snprintf(out + n, cap - n, "\n");
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return out;
}

#define DEVICES_SQL "SELECT fingerprint, name, cc, sm_count, " \
    "smem_per_block_optin, driver_version, nvrtc_version, created_at " \
    "FROM devices ORDER BY fingerprint"
#define WINNERS_SQL "SELECT d.fingerprint, w.family, w.source_hash, " \
    "w.dtype, w.head_dim_qk, w.head_dim_v, w.gqa_group, w.causal, " \
    "w.window_left, w.window_right, w.varlen, w.paged, w.page_size, " \
    "w.seqlen_q_bucket, w.seqlen_k_bucket, w.config, w.median_ms, " \
    "w.tflops, w.updated_at, w.library_version, w.work_bucket, " \
    "w.softcap, w.sinks FROM winners w JOIN devices d ON d.id = " \
    "w.device_id ORDER BY 1, 2, 14, 15"
#define TRIALS_SQL "SELECT d.fingerprint, t.family, t.source_hash, " \
    "t.dtype, t.head_dim_qk, t.head_dim_v, t.gqa_group, t.causal, " \
    "t.window_left, t.window_right, t.varlen, t.paged, t.page_size, " \
    "t.seqlen_q_bucket, t.seqlen_k_bucket, t.batch, t.heads_q, t.seqlen_q, " \
    "t.seqlen_k, t.config, t.ok, t.failure, t.median_ms, t.min_ms, " \
    "t.max_ms, t.reps, t.tflops, t.max_rel_err, t.created_at, " \
    "t.library_version, t.work_bucket, t.softcap, t.sinks FROM trials t " \
    "JOIN devices d ON d.id = t.device_id ORDER BY t.created_at, t.reps"

/* 1 when the rows of SQL are the same in files A and B (and not empty). */
static int same_rows(const char *a, const char *b, const char *sql)
{
    char *x = dump(a, sql), *y = dump(b, sql);
    int r = x && y && strlen(x) > 0 && strncmp(x, "error", 5) != 0 &&
            strcmp(x, y) == 0;

    if (!r)
        diag("  rows differ:\n%.600s\n---\n%.600s", x ? x : "", y ? y : "");
    free(x);
    free(y);
    return r;
}

/* Write TEXT to PATH; 1 on success. */
static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    int r = f && fputs(text, f) >= 0;

    if (f && fclose(f) != 0)
        r = 0;
    return r;
}

int main(void)
{
    char a[1024], b[1024], c[1024], js[1024], bad[1024], other[1024];
    char warn[512], why[1024], *summary = NULL, *text = NULL;
    device_limits h100 = test_device("NVIDIA H100 80GB HBM3", 90, 132);
    device_limits a100 = test_device("NVIDIA A100-SXM4-80GB", 80, 108);
    fa4_config cfg = FA4_CONFIG_INIT;
    fa4_problem p = FA4_PROBLEM_INIT;
    db *da = NULL, *db_b = NULL;
    json_t *root;
    json_error_t jerr;
    fa4_status st;
    int i;

    plan_lazy();
    make_tmpdir();
    snprintf(a, sizeof a, "%s/a.db", tmpdir);
    snprintf(b, sizeof b, "%s/b.db", tmpdir);
    snprintf(c, sizeof c, "%s/c.db", tmpdir);
    snprintf(js, sizeof js, "%s/export.json", tmpdir);
    snprintf(bad, sizeof bad, "%s/bad.json", tmpdir);
    snprintf(other, sizeof other, "%s/other.json", tmpdir);

    /* Database A: two devices, winners and trials (failures included). */
    st = db_open(&da, a, NULL, 0, warn, sizeof warn, why, sizeof why);
    p.batch = 4;
    p.heads_q = 32;
    p.heads_kv = 8;
    p.head_dim_qk = 128;
    p.causal = 1;
    cfg.family = FA4_FAMILY_SM80;
    cfg.bm = 128;
    cfg.stages = 2;
    cfg.warps = 8;
    for (i = 0; st == FA4_OK && i < 6; i++) {
        db_trial t;

        p.seqlen_q = p.seqlen_k = 512 << i;
        p.softcap = i == 2 || i == 5 ? 30.0f : 0.0f;
        p.attention_sinks = i >= 4;
        cfg.bn = 32 + 16 * i;
        memset(&t, 0, sizeof t);
        t.config = cfg;
        t.ok = i != 3;
        t.failure = t.ok ? NULL : "wrong result: max_rel_err 0.5";
        t.median_ms = 0.125 * (i + 1);
        t.min_ms = 0.1 * (i + 1);
        t.max_ms = 0.2 * (i + 1);
        t.reps = 50 + i;
        t.tflops = 123.456789 + i;
        t.max_rel_err = t.ok ? 3.0517578125e-05 : 0.5;
        st = db_store_trial(da, i % 2 ? &a100 : &h100, &p, &t, why, sizeof why);
        if (st == FA4_OK)
            st = db_store_winner(da, i % 2 ? &a100 : &h100, &p, &cfg,
                                 t.median_ms, t.tflops, why, sizeof why);
    }
    is_int(st, FA4_OK, "database A gets 6 trials and 6 winners on 2 devices");

    st = db_export_json(da, js, DB_JSON_TRIALS, why, sizeof why);
    is_int(st, FA4_OK, "db_export_json writes the file");
    root = json_load_file(js, 0, &jerr);
    ok(root && strcmp(json_string_value(json_object_get(root,
                      "library_version")), fa4_version()) == 0 &&
       json_is_integer(json_object_get(root, "nvrtc_version")) &&
       json_array_size(json_object_get(root, "devices")) == 2 &&
       json_array_size(json_object_get(root, "winners")) == 6 &&
       json_array_size(json_object_get(root, "trials")) == 6,
       "the export is JSON with the library and NVRTC versions, 2 devices, "
       "6 winners and 6 trials");
    {
        json_t *w = json_array_get(json_object_get(root, "winners"), 0);

        ok(w && json_is_string(json_object_get(w, "device")) &&
           json_is_integer(json_object_get(w, "driver_version")) &&
           json_is_integer(json_object_get(w, "nvrtc_version")) &&
           json_is_string(json_object_get(w, "library_version")) &&
           json_is_object(json_object_get(w, "key")),
           "each winner carries its device fingerprint, driver, NVRTC and "
           "library versions");
    }
    {
        json_t *wins = json_object_get(root, "winners"), *w;
        size_t k;
        int caps = 0, sinks = 0, flags = 1;

        json_array_foreach(wins, k, w) {
            json_t *key = json_object_get(w, "key");
            json_t *sc = json_object_get(key, "softcap");
            json_t *sk = json_object_get(key, "sinks");

            flags = flags && json_is_integer(sc) && json_is_integer(sk);
            caps += (int)json_integer_value(sc);
            sinks += (int)json_integer_value(sk);
        }
        ok(flags && caps == 2 && sinks == 2, "each key carries softcap and "
           "sinks as 0/1 (2 and 2 of the 6 winners here)");
    }

    /* Into a fresh database. */
    st = db_open(&db_b, b, NULL, 0, warn, sizeof warn, why, sizeof why);
    st = st == FA4_OK ? db_import_json(db_b, js, &h100, &summary, why,
                                       sizeof why) : st;
    ok(st == FA4_OK && summary && strstr(summary, "6 added"),
       "the export imports into a fresh database");
    if (st != FA4_OK)
        diag("  %s", why);
    if (summary)
        diag("  %.*s", (int)strcspn(summary, "\n"), summary);
    ok(summary && strstr(summary, "other devices") &&
       strstr(summary, "NVIDIA A100-SXM4-80GB: 6"),
       "the summary reports the records for another device (3 winners, "
       "3 trials) instead of hiding them");
    free(summary);
    summary = NULL;
    db_close(db_b);
    db_b = NULL;
    ok(same_rows(a, b, DEVICES_SQL), "the devices are identical");
    ok(same_rows(a, b, WINNERS_SQL), "the winners are identical");
    ok(same_rows(a, b, TRIALS_SQL), "the trials are identical");

    /* Again: nothing new. */
    st = db_open(&db_b, b, NULL, 0, warn, sizeof warn, why, sizeof why);
    st = st == FA4_OK ? db_import_json(db_b, js, NULL, &summary, why,
                                       sizeof why) : st;
    ok(st == FA4_OK && summary && strstr(summary, "winners: 0 added") &&
       strstr(summary, "6 kept") && strstr(summary, "6 already present"),
       "importing the same file again adds nothing");
    free(summary);
    summary = NULL;
    ok(same_rows(a, b, TRIALS_SQL), "and the trials are still identical");

    /* Malformed JSON. */
    write_file(bad, "{\n  \"format\": \"fa4-db\",\n  \"winners\": [ 1, ]\n}\n");
    why[0] = '\0';
    st = db_import_json(db_b, bad, NULL, &summary, why, sizeof why);
    ok(st == FA4_EINVAL && strstr(why, bad) && strstr(why, ":3:"),
       "malformed JSON is FA4_EINVAL with the file and jansson's line 3");
    diag("  %s", why);
    {
        char want[1200];

        snprintf(want, sizeof want, "%s:3:%d:", bad, 19);
        has_str(why, want, "and jansson's column");
    }

    /* A malformed record rejects the whole file. */
    {
        json_t *copy = json_deep_copy(root);
        json_t *w5 = json_array_get(json_object_get(copy, "winners"), 5);
        char *before = NULL, *after = NULL;

        json_object_del(json_object_get(w5, "key"), "head_dim_qk");
        json_object_set_new(json_array_get(json_object_get(copy, "winners"),
                                           0), "median_ms", json_real(1e-9));
        json_dump_file(copy, bad, 0);
        json_decref(copy);
        before = dump(b, WINNERS_SQL);
        st = db_import_json(db_b, bad, NULL, &summary, why, sizeof why);
        ok(st == FA4_EINVAL && strstr(why, "winners[5]") &&
           strstr(why, "head_dim_qk"),
           "a record without key.head_dim_qk is FA4_EINVAL naming it");
        diag("  %s", why);
        after = dump(b, WINNERS_SQL);
        ok(before && after && strcmp(before, after) == 0,
           "and nothing of that file is imported (one transaction)");
        free(before);
        free(after);
    }

    /* Another library version; faster and slower records. */
    {
        json_t *copy = json_deep_copy(root);
        json_t *wins = json_object_get(copy, "winners");
        json_t *w0 = json_array_get(wins, 0), *w1 = json_array_get(wins, 1);
        char *rows;

        json_object_set_new(w0, "library_version", json_string("0.0.7"));
        json_object_set_new(w0, "median_ms", json_real(0.001));
        json_object_set_new(w0, "config", json_string(json_string_value(
            json_object_get(json_array_get(wins, 2), "config"))));
        json_object_set_new(w1, "library_version", json_string("0.0.7"));
        json_object_set_new(w1, "median_ms", json_real(1000.0));
        json_object_del(copy, "trials");
        json_dump_file(copy, other, 0);
        json_decref(copy);
        st = db_import_json(db_b, other, &h100, &summary, why, sizeof why);
        ok(st == FA4_OK && summary && strstr(summary, "1 replaced") &&
           strstr(summary, "5 kept"),
           "a faster winner replaces the stored one; slower ones are kept");
        ok(summary && strstr(summary, "another libfa4 version") &&
           strstr(summary, "0.0.7: 2"),
           "records from another library version are imported and reported");
        for (text = summary ? strtok(summary, "\n") : NULL; text;
             text = strtok(NULL, "\n"))
            diag("  %s", text);
        text = NULL;
        free(summary);
        summary = NULL;
        rows = dump(b, "SELECT count(*) FROM winners WHERE library_version "
                    "= '0.0.7' AND median_ms = 0.001");
        ok(rows && strcmp(rows, "1|\n") == 0,
           "the faster record is in the database with its version");
        free(rows);
    }
    db_close(db_b);
    db_b = NULL;

    /* Merge another database file. */
    st = db_open(&db_b, c, NULL, 0, warn, sizeof warn, why, sizeof why);
    st = st == FA4_OK ? db_merge(db_b, a, &h100, &summary, why, sizeof why)
                      : st;
    ok(st == FA4_OK && summary && strstr(summary, "6 added"),
       "db_merge merges database A into a fresh C");
    free(summary);
    summary = NULL;
    db_close(db_b);
    db_b = NULL;
    ok(same_rows(a, c, WINNERS_SQL) && same_rows(a, c, TRIALS_SQL),
       "C has A's winners and trials");
    snprintf(bad, sizeof bad, "%s/absent.db", tmpdir);
    st = db_open(&db_b, c, NULL, 0, warn, sizeof warn, why, sizeof why);
    st = st == FA4_OK ? db_merge(db_b, bad, NULL, &summary, why, sizeof why)
                      : st;
    ok(st == FA4_EDB && strstr(why, bad), "merging a missing file is FA4_EDB "
       "naming it");
    db_close(db_b);
    db_b = NULL;

    /* db_show */
    st = db_show(da, &text, "winners", 0, why, sizeof why);
    ok(st == FA4_OK && text && strncmp(text, "device\t", 7) == 0 &&
       strstr(text, "NVIDIA A100-SXM4-80GB\t"),
       "db_show prints a header and tab-separated rows");
    free(text);
    text = NULL;
    st = db_show(da, &text, "trials", DB_SHOW_JSON, why, sizeof why);
    {
        json_t *arr = text ? json_loads(text, 0, &jerr) : NULL;

        ok(st == FA4_OK && json_array_size(arr) == 6 &&
           json_is_string(json_object_get(json_array_get(arr, 3), "failure")),
           "db_show with DB_SHOW_JSON gives a JSON array of the trials");
        json_decref(arr);
    }
    free(text);
    text = NULL;
    st = db_show(da, &text, "secrets", 0, why, sizeof why);
    ok(st == FA4_EINVAL && text == NULL && strstr(why, "secrets"),
       "db_show rejects an unknown table by name");

    json_decref(root);
    db_close(da);
    remove_tmpdir();
    return done_testing();
}
