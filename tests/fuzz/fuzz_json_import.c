/*
** fuzz_json_import.c -- libFuzzer target for the JSON import of the
** config database (db_import_json_text into an in-memory store, reopened
** every 1000 inputs so it stays small), and for check and export of what
** was imported.  A finding is a crash, an ASan report, undefined
** behaviour with UBSan, or an imported winner that db_check() calls
** unusable: what import accepts, lookup must be able to use.  Seeds:
** tests/fuzz/corpus/fuzz_json_import.  See tests/fuzz/README.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "db_int.h"

/* The number of winners in D that lookup would skip (a stale source hash
** is not a reason: lookup ranks such a row last).  Printed to stderr. */
static int unusable_rows(db *d)
{
    sqlite3 *h = db_handle(d, 0, NULL);
    sqlite3_stmt *st = NULL;
    char reason[512];
    int n = 0;

    if (sqlite3_prepare_v2(h, "SELECT w.family, w.config, d.fingerprint FROM "
                           "winners w LEFT JOIN devices d ON d.id = "
                           "w.device_id", -1, &st, NULL) != SQLITE_OK)
        abort();
    while (sqlite3_step(st) == SQLITE_ROW) {
        int family = sqlite3_column_int(st, 0);

        if (db_row_unusable(reason, sizeof reason, family,
                            (const char *)sqlite3_column_text(st, 1),
                            (const char *)sqlite3_column_text(st, 2), NULL)) {
            fprintf(stderr, "import accepted a row lookup skips: %s\n", reason);
            n++;
        }
    }
    sqlite3_finalize(st);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static db *d;
    static int runs;
    char why[1024], warn[256], *summary = NULL, *report = NULL, *text = NULL;
    int problems = 0;

    if (!d || ++runs % 1000 == 0) {
        db_close(d);
        d = NULL;
        if (db_open(&d, NULL, NULL, 0, warn, sizeof warn, why, sizeof why) != FA4_OK)
            abort();
    }
    if (db_import_json_text(d, (const char *)data, size, "fuzz", NULL,
                            &summary, why, sizeof why) == FA4_OK) {
        if (db_check(d, &report, &problems, why, sizeof why) != FA4_OK)
            abort();
        if (unusable_rows(d))
            abort();
        if (db_export_json_text(d, &text, DB_JSON_TRIALS, why, sizeof why) != FA4_OK)
            abort();
    }
    free(summary);
    free(report);
    free(text);
    return 0;
}
