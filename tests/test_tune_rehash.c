/*
** test_tune_rehash.c -- fa4-tune codes and rehash without a GPU (they
** compile, they do not launch): the codes table of stored winners, and
** rehash moving a stale winner to the current kernel sources only when
** its machine code is the table's, the winner tuned with those sources,
** and the table well formed.  The two trees of the real use (codes under
** the old sources with $FA4_KERNEL_DIR, rehash under the new) are played
** here by one tree and a table whose source column names the rows' stale
** hash, as codes would print it under the sources they were tuned with.
*/
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "db.h"
#include "db_verify.h"
#include "config.h"
#include "jit.h"
#include "db_test_util.h"
#include "tune_test_util.h"

#define OLD_HASH "0123456789abcdef"

/* Write TEXT into PATH; 1 on success. */
static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    int r = f && fputs(text, f) >= 0;

    if (f)
        r = fclose(f) == 0 && r;
    return r;
}

/* The codes table TABLE with every source column set to OLD_HASH, and the
   code column of the line whose config contains CHANGE altered, into OUT. */
static void as_old_table(char *out, size_t size, const char *table, const char *change)
{
    const char *line = table;
    size_t n = 0;

    out[0] = '\0';
    while (*line && n + 256 < size) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)len, line);
        if (buf[0] != '#' && strlen(buf) > 51) {
            memcpy(buf + 17, OLD_HASH, 16);
            if (change && strstr(buf, change))
                buf[34] = buf[34] == '0' ? '1' : '0';
        }
        n += (size_t)snprintf(out + n, size - n, "%s", buf);
        line += len;
    }
}

int main(void)
{
    static char out[1 << 16], err[1 << 14], table[1 << 16];
    const device_limits h100 = test_device("NVIDIA H100 80GB HBM3", 90, 132);
    const char *cur = jit_source_hash(FA4_FAMILY_SM90);
    static const char *const cfgs[2] = {
        "sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 pingpong=1 rescale=8",
        "sm90 bm=192 bn=128 stages=2 swizzle=128 wgs=3 regs=32/160 rescale=8 late_k=1",
    };
    char path[600], codes[600], bad[600], why[512];
    db_verify_winner *ws = NULL;
    int n = 0, rc, i, lines = 0;
    const char *s;

    make_tmpdir();
    snprintf(path, sizeof path, "%s/w.db", tmpdir);
    snprintf(codes, sizeof codes, "%s/old.codes", tmpdir);
    snprintf(bad, sizeof bad, "%s/bad.codes", tmpdir);

    rc = tune_run(out, sizeof out, err, sizeof err, "rehash", "--db", path, NULL);
    ok(rc == TUNE_EXIT_USAGE && strstr(err, "codes table is required"),
       "rehash without a codes table is a usage error: %s", err);

    for (i = 0; i < 2; i++) {
        fa4_problem p = FA4_PROBLEM_INIT;
        fa4_config c;
        p.batch = 1; p.seqlen_q = p.seqlen_k = 4096; p.heads_q = p.heads_kv = 16;
        p.head_dim_qk = p.head_dim_v = i == 0 ? 128 : 64;
        p.causal = i == 0; p.window_right = i == 0 ? 0 : -1;
        if (!ok(config_parse(&c, cfgs[i], why, sizeof why) == FA4_OK &&
                store_winner_file(path, &h100, &p, &c, 1.0), "winner %d stored", i))
            return done_testing();
    }
    ok(exec_sql(path, "UPDATE winners SET source_hash = '" OLD_HASH "'"),
       "both winners made stale (tuned with sources " OLD_HASH ")");

    /* codes: one line per winner, under the sources in use. */
    rc = tune_run(out, sizeof out, err, sizeof err, "codes", "--db", path, NULL);
    for (s = out; (s = strstr(s, cur)) != NULL; s++)
        lines++;
    ok(rc == TUNE_EXIT_OK && lines == 2 && strstr(out, "bm=192") && strstr(err, "2 compiled"),
       "codes prints both winners' machine-code hashes (%d lines): %s", lines, err);
    snprintf(table, sizeof table, "%s", out);

    /* A table from other sources than the rows': nothing matches. */
    ok(write_file(codes, table), "codes table written");
    rc = tune_run(out, sizeof out, err, sizeof err, "rehash", codes, "--db", path, NULL);
    ok(rc == TUNE_EXIT_OK && strstr(out, "0 stale winners made current") &&
       strstr(out, "2 not in"),
       "a table made under other sources than the rows' moves nothing: %s", out);

    /* The table as the rows' sources would print it, row 2's code changed. */
    as_old_table(out, sizeof out, table, "bm=192");
    ok(write_file(codes, out), "old-sources table written");
    rc = tune_run(out, sizeof out, err, sizeof err, "rehash", codes, "--db", path, NULL);
    ok(rc == TUNE_EXIT_OK && strstr(out, "1 stale winner made current") &&
       strstr(out, "1 with changed code") && strstr(out, "changed  sm90 bm=192"),
       "rehash moves the winner whose code is unchanged, not the other: %s", out);
    ok(db_verify_list(&ws, &n, path, NULL, why, sizeof why) == FA4_OK && n == 2, "listed");
    for (i = 0; i < n; i++) {
        const int wide = strstr(ws[i].config, "bm=192") != NULL;
        ok(wide ? ws[i].stale && !strcmp(ws[i].source_hash, OLD_HASH)
                : !ws[i].stale && !strcmp(ws[i].source_hash, cur),
           "%s winner: source hash %s%s", wide ? "changed" : "unchanged", ws[i].source_hash,
           ws[i].stale ? " (stale)" : "");
    }
    free(ws);

    /* Again: the current row is left alone, the changed one stays stale. */
    rc = tune_run(out, sizeof out, err, sizeof err, "rehash", codes, "--db", path, NULL);
    ok(rc == TUNE_EXIT_OK && strstr(out, "0 stale winners made current") &&
       strstr(out, "1 with changed code"), "a second rehash changes nothing: %s", out);

    /* A current row of the changed winner's key (tuned again) and a table
       where its code matches: the stale row stays beside the current one. */
    {
        fa4_problem p = FA4_PROBLEM_INIT;
        fa4_config c;
        p.batch = 1; p.seqlen_q = p.seqlen_k = 4096; p.heads_q = p.heads_kv = 16;
        p.head_dim_qk = p.head_dim_v = 64; p.window_right = -1;
        ok(config_parse(&c, cfgs[1], why, sizeof why) == FA4_OK &&
           store_winner_file(path, &h100, &p, &c, 0.9), "the changed winner tuned again");
        as_old_table(out, sizeof out, table, NULL);
        ok(write_file(codes, out), "table without the change written");
        rc = tune_run(out, sizeof out, err, sizeof err, "rehash", codes, "--db", path, NULL);
        ok(rc == TUNE_EXIT_OK && strstr(out, "1 beside a current row") &&
           query_int(path, "SELECT COUNT(*) FROM winners WHERE source_hash = '" OLD_HASH "'") == 1,
           "a stale row beside a current one of its key is kept, not merged: %s", out);
    }

    /* Bad tables. */
    ok(write_file(bad, "0123 not a line\n"), "bad table written");
    rc = tune_run(out, sizeof out, err, sizeof err, "rehash", bad, "--db", path, NULL);
    ok(rc == TUNE_EXIT_FAIL && strstr(err, "not a codes table line"),
       "a malformed table is refused: %s", err);
    snprintf(bad, sizeof bad, "%s/missing.codes", tmpdir);
    rc = tune_run(out, sizeof out, err, sizeof err, "rehash", bad, "--db", path, NULL);
    ok(rc == TUNE_EXIT_FAIL && strstr(err, "cannot read"), "a missing table: %s", err);
    snprintf(bad, sizeof bad, "%s/missing.db", tmpdir);
    rc = tune_run(out, sizeof out, err, sizeof err, "codes", "--db", bad, NULL);
    ok(rc == TUNE_EXIT_FAIL && strstr(err, "codes:"), "codes on a missing database: %s", err);

    remove_tmpdir();
    return done_testing();
}
