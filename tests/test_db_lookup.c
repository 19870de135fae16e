/*
** test_db_lookup.c -- db_lookup's order: user exact, system exact,
** nearest sequence bucket on the same device, same arch (same name first,
** then same compute capability), then "no entry"; entries tuned with
** another kernel source are never used; db_check lists them.  Entries
** are made by hand.  No GPU needed.
*/
#define _XOPEN_SOURCE 700

#include "tap.h"
#include "db.h"
#include "config.h"
#include "jit.h"
#include "db_test_util.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* A config of FAMILY whose bn is the MARK that identifies it here. */
static fa4_config marked(fa4_family family, int mark)
{
    fa4_config c = FA4_CONFIG_INIT;

    c.family = family;
    c.bm = 128;
    c.bn = mark;
    c.stages = 2;
    c.swizzle = 128;
    c.warps = family == FA4_FAMILY_SM80 ? 4 : 0;
    c.consumer_wgs = family == FA4_FAMILY_SM90 ? 2 : 0;
    return c;
}

/* The problem used throughout, with sequence lengths SQ and SK. */
static fa4_problem problem(int sq, int sk)
{
    fa4_problem p = FA4_PROBLEM_INIT;

    p.batch = 2;
    p.seqlen_q = sq;
    p.seqlen_k = sk;
    p.heads_q = 32;
    p.heads_kv = 8;
    p.head_dim_qk = 128;
    p.causal = 1;
    return p;
}

/* Store a winner into the database file PATH; 1 on success. */
static int put(const char *path, const device_limits *dev,
               const fa4_problem *p, fa4_config c, double ms)
{
    return store_winner_file(path, dev, p, &c, ms);
}

static char why[1024];

/* Look P up for DEV in (USER, SYS): the status, with *MARK the config's bn
** and *SRC its source. */
static fa4_status look(const char *user, const char *sys,
                       const device_limits *dev, const fa4_problem *p,
                       int *mark, fa4_config_source *src)
{
    db *d = NULL;
    char warn[512];
    fa4_config c = FA4_CONFIG_INIT;
    fa4_status st;

    *mark = -1;
    *src = 0;
    st = db_open(&d, user, sys, 0, warn, sizeof warn, why, sizeof why);
    if (st != FA4_OK) {
        diag("db_open: %s", why);
        return st;
    }
    st = db_lookup(d, &c, src, dev, p, why, sizeof why);
    if (st == FA4_OK)
        *mark = c.bn;
    db_close(d);
    return st;
}

int main(void)
{
    char user[1024], sys[1024], *report = NULL;
    device_limits h100 = test_device("NVIDIA H100 80GB HBM3", 90, 132);
    device_limits h100_cut = test_device("NVIDIA H100 80GB HBM3", 90, 114);
    device_limits h200 = test_device("NVIDIA H200", 90, 132);
    device_limits h200_cut = test_device("NVIDIA H200", 90, 120);
    device_limits other90 = test_device("Some other sm_90 board", 90, 66);
    device_limits a100 = test_device("NVIDIA A100-SXM4-80GB", 80, 108);
    device_limits h100_newdrv = h100;
    fa4_problem p4k = problem(4096, 4096), p, p8k = problem(8192, 8192),
                p512 = problem(512, 512);
    fa4_config_source src;
    fa4_status st;
    int mark, problems = -1;
    db *d = NULL;
    char warn[512];

    plan_lazy();
    make_tmpdir();
    snprintf(user, sizeof user, "%s/user.db", tmpdir);
    snprintf(sys, sizeof sys, "%s/system.db", tmpdir);

    /* Buckets. */
    ok(db_seqlen_bucket(1) == 1 && db_seqlen_bucket(1000) == 1024 &&
       db_seqlen_bucket(1024) == 1024 && db_seqlen_bucket(1025) == 2048 &&
       db_seqlen_bucket(0) == 1, "sequence lengths are bucketed to the next "
       "power of two (1000 -> 1024, 1024 -> 1024, 1025 -> 2048)");

    st = look(user, NULL, &h100, &p4k, &mark, &src);
    ok(st == FA4_EDB && strstr(why, "no entry"),
       "an empty database answers FA4_EDB \"no entry\"");

    /* The system database, made like any other and then opened read-only. */
    ok(put(sys, &h100, &p4k, marked(FA4_FAMILY_SM90, 64), 2.0),
       "a system database is made with an exact entry");
    st = look(user, sys, &h100, &p4k, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_SYSTEM_EXACT && mark == 64,
       "with only the system entry, the source is system exact");

    ok(put(user, &h100, &p4k, marked(FA4_FAMILY_SM90, 80), 3.0),
       "the user database gets an exact entry (slower than the system's)");
    st = look(user, sys, &h100, &p4k, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_USER_EXACT && mark == 80,
       "the user's exact entry takes precedence over the system's");

    p = problem(3000, 2100);
    st = look(user, sys, &h100, &p, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_USER_EXACT && mark == 80,
       "seqlen 3000/2100 falls in the 4096/4096 bucket: exact");

    /* Nearest bucket on the same device, by log distance. */
    ok(put(user, &h100, &p8k, marked(FA4_FAMILY_SM90, 96), 1.0) &&
       put(user, &h100, &p512, marked(FA4_FAMILY_SM90, 112), 1.0),
       "entries at buckets 8192 and 512 are added");
    p = problem(32768, 32768);
    st = look(user, sys, &h100, &p, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_NEAREST && mark == 96,
       "seqlen 32768 takes the nearest bucket, 8192");
    p = problem(256, 256);
    st = look(user, sys, &h100, &p, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_NEAREST && mark == 112,
       "seqlen 256 takes the nearest bucket, 512");
    p = problem(4096, 4096);
    p.causal = 0;
    st = look(user, sys, &h100, &p, &mark, &src);
    ok(st == FA4_EDB && strstr(why, "no entry"),
       "another discrete feature (causal 0) is never \"nearest\"");
    p = problem(4096, 4096);
    p.heads_kv = 32;
    st = look(user, sys, &h100, &p, &mark, &src);
    ok(st == FA4_EDB, "another GQA group size is never \"nearest\"");

    /* Same architecture. */
    st = look(user, sys, &h100_cut, &p4k, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_SAME_ARCH && mark == 80,
       "an H100 with another SM count takes the H100's entry (same arch)");
    h100_newdrv.driver_version = 12080;
    st = look(user, sys, &h100_newdrv, &p4k, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_SAME_ARCH && mark == 80,
       "a driver update makes the H100's entries same-arch matches");
    ok(put(user, &h200, &p4k, marked(FA4_FAMILY_SM90, 144), 9.0),
       "an H200 entry (slow) is added");
    st = look(user, sys, &h200_cut, &p4k, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_SAME_ARCH && mark == 144,
       "a cut-down H200 prefers the H200's entry (same name) to the "
       "faster H100 one");
    st = look(user, sys, &other90, &p4k, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_SAME_ARCH && (mark == 80 ||
       mark == 64 || mark == 144),
       "another sm_90 board takes a same-cc entry");
    st = look(user, sys, &a100, &p4k, &mark, &src);
    ok(st == FA4_EDB && strstr(why, "no entry"),
       "an A100 (cc 80) finds no entry among sm_90 ones");

    /* Families: the fastest winner for the key wins. */
    ok(put(user, &a100, &p4k, marked(FA4_FAMILY_SM80, 32), 5.0) &&
       put(user, &a100, &p4k, marked(FA4_FAMILY_SM80, 48), 4.0),
       "storing a winner twice for one key replaces it");
    st = look(user, NULL, &a100, &p4k, &mark, &src);
    ok(st == FA4_OK && mark == 48, "the replaced winner is the one found");
    ok(put(user, &h100, &p4k, marked(FA4_FAMILY_SM80, 16), 2.5),
       "an sm80 winner faster than the sm90 one is added for the H100");
    st = look(user, NULL, &h100, &p4k, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_USER_EXACT && mark == 16,
       "among families, the lowest median wins");

    /* Stale source hashes are never used. */
    ok(exec_sql(user, "UPDATE winners SET source_hash = 'feedfacefeedface' "
                "WHERE seqlen_q_bucket = 4096 AND device_id = (SELECT id "
                "FROM devices WHERE name = 'NVIDIA H100 80GB HBM3')"),
       "the user's H100 entries at 4096 are made stale by hand");
    st = look(user, sys, &h100, &p4k, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_SYSTEM_EXACT && mark == 64,
       "stale user entries are skipped: the system's exact entry is used");
    ok(exec_sql(user, "UPDATE winners SET source_hash = 'feedfacefeedface'"),
       "every user entry is made stale");
    st = look(user, NULL, &h100, &p4k, &mark, &src);
    ok(st == FA4_EDB && strstr(why, "no entry") && strstr(why, "stale"),
       "with only stale entries: \"no entry\", and the stale ones counted");
    diag("  %s", why);

    st = db_open(&d, user, sys, 0, warn, sizeof warn, why, sizeof why);
    st = st == FA4_OK ? db_check(d, &report, &problems, why, sizeof why) : st;
    ok(st == FA4_OK && problems == 6 && report &&
       strstr(report, "stale winner") && strstr(report, "integrity: ok"),
       "db_check passes the integrity check and lists the 6 stale winners");
    if (report) {
        char *line = strtok(report, "\n");
        int n = 0;

        while (line && n++ < 4) {
            diag("  %s", line);
            line = strtok(NULL, "\n");
        }
    }
    free(report);
    db_close(d);

    remove_tmpdir();
    return done_testing();
}
