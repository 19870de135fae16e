/*
** test_db_lookup.c -- db_lookup's order: user exact, system exact,
** nearest sequence bucket on the same device, same arch (same name first,
** then same compute capability), then entries tuned with another kernel
** source (stale) in the same order, then "no entry"; unusable entries are
** skipped; db_check lists stale and unusable ones.  Then what plans make
** of a stale entry: its config when it fits and compiles, else the
** heuristic's with a warning; an sm100 entry only with the sm100 opt-in.
** Softcapping and sinks are kernel variants: no level of the order
** matches across them.  Entries are made by hand.  No GPU needed.
*/
#define _XOPEN_SOURCE 700

#include "tap.h"
#include "db.h"
#include "config.h"
#include "context.h"
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

/* TEXT as diagnostics, a line each. */
static void diag_lines(const char *text)
{
    const char *nl;

    for (; *text; text = *nl ? nl + 1 : nl) {
        nl = strchr(text, '\n');
        if (!nl)
            nl = text + strlen(text);
        diag("  %.*s", (int)(nl - text), text);
    }
}

/* A plan_only sm_90a context on the user database PATH and no system
** database, or NULL. */
static fa4_context *plan_context(const char *path)
{
    fa4_context_options o = FA4_CONTEXT_OPTIONS_INIT;
    fa4_context *ctx = NULL;

    o.plan_only = 1;
    o.arch = "sm_90a";
    o.db_path = path;
    o.system_db_path = "";
    if (fa4_context_create(&ctx, 0, &o) != FA4_OK)
        diag("fa4_context_create: %s", fa4_context_last_error());
    return ctx;
}

/* Plan P on CTX with OPTS: the status, with the plan's config and source
** in *GOT and *SRC. */
static fa4_status plan_source(fa4_context *ctx, const fa4_problem *p,
                              const fa4_plan_options *opts, fa4_config *got,
                              fa4_config_source *src)
{
    fa4_plan *plan = NULL;
    fa4_status st = fa4_plan_create(&plan, ctx, p, opts);

    *src = 0;
    if (st == FA4_OK)
        fa4_plan_config(plan, got, src);
    fa4_plan_destroy(plan);
    return st;
}

/* Plans over a stale entry: its config while it fits, else the
** heuristic's, with the reason in the context's warnings. */
static void test_plans(void)
{
    char path[1024], sql[512], text[256];
    fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
    fa4_problem p = problem(4096, 4096);
    fa4_config def = FA4_CONFIG_INIT, got = FA4_CONFIG_INIT, big;
    fa4_config_source src;
    fa4_context *ctx;
    fa4_status st;

    snprintf(path, sizeof path, "%s/plans.db", tmpdir);
    if (!ok((ctx = plan_context(path)) != NULL,
            "a plan_only sm_90a context on a database of its own"))
        return;
    st = plan_source(ctx, &p, NULL, &def, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_HEURISTIC,
       "with no entry a plan takes the heuristic's config");
    ok(db_store_winner(context_db(ctx), &ctx->limits, &p, &def, 1.0, 100.0,
                       why, sizeof why) == FA4_OK &&
       exec_sql(path, "UPDATE winners SET source_hash = 'feedfacefeedface'"),
       "that config is stored, as a stale entry");
    st = plan_source(ctx, &p, NULL, &got, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_STALE && config_equal(&got, &def),
       "a plan takes the stale entry's config, as FA4_SOURCE_STALE");
    ok(!fa4_context_warnings(ctx)[0], "and records no warning");

    big = def;
    big.bn = 256;
    big.stages = 8;
    snprintf(sql, sizeof sql, "UPDATE winners SET config = '%s'",
             fa4_config_format(&big, text, sizeof text));
    ok(exec_sql(path, sql), "the stale entry's config is made one that does "
       "not fit (bn 256, 8 stages)");
    st = plan_source(ctx, &p, NULL, &got, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_HEURISTIC && config_equal(&got, &def),
       "a stale config that does not fit gives way to the heuristic");
    has_str(fa4_context_warnings(ctx), "does not fit",
            "the context's warnings keep the reason");
    diag_lines(fa4_context_warnings(ctx));
    po.allow_heuristic = 0;
    st = plan_source(ctx, &p, &po, &got, &src);
    ok(st == FA4_ENOTSUP && strstr(fa4_context_errmsg(ctx), "that fits") &&
       strstr(fa4_context_errmsg(ctx), "stale"),
       "with allow_heuristic 0 the plan fails, naming the stale entry");
    diag("  %s", fa4_context_errmsg(ctx));
    fa4_context_destroy(ctx);
}

/*
** The child of test_compile_fallback(), with $FA4_KERNEL_DIR a tree whose
** sm90 kernel does not compile and $FA4_FAMILIES "sm80": store the sm90
** default as the entry for a problem in DIR/fallback.db, plan the problem,
** and print the plan's source and family and the context's warnings.
*/
static int compile_fallback_child(const char *dir)
{
    char path[1024];
    fa4_problem p = problem(4096, 4096);
    fa4_config c = FA4_CONFIG_INIT;
    fa4_config_source src = 0;
    fa4_context *ctx;

    snprintf(path, sizeof path, "%s/fallback.db", dir);
    if (!(ctx = plan_context(path)) ||
        config_default(&c, &ctx->limits, &p, FA4_FAMILY_SM90, why,
                       sizeof why) != FA4_OK ||
        db_store_winner(context_db(ctx), &ctx->limits, &p, &c, 1.0, 100.0,
                        why, sizeof why) != FA4_OK) {
        printf("setup: %s\n", why);
        return 1;
    }
    if (plan_source(ctx, &p, NULL, &c, &src) != FA4_OK)
        printf("plan: %s\n", fa4_context_errmsg(ctx));
    printf("source %s family %d\n%s", fa4_config_source_string(src),
           (int)c.family, fa4_context_warnings(ctx));
    fa4_context_destroy(ctx);
    return 0;
}

/* An entry whose config no longer compiles gives way to the heuristic. */
static void test_compile_fallback(const char *self)
{
    char kdir[1024], cmd[4096], out[4096] = "";
    const char *src = getenv("srcdir");
    FILE *f;

    snprintf(kdir, sizeof kdir, "%s/kernels", tmpdir);
    snprintf(cmd, sizeof cmd, "cp -R '%s/kernels' '%s' && echo '#error broken "
             "by test_db_lookup' >> '%s/sm90/kernel.cuh'", src ? src : "..",
             tmpdir, kdir);
    if (system(cmd) != 0) {
        skip("cannot copy the kernel tree");
        skip("cannot copy the kernel tree");
        return;
    }
    snprintf(cmd, sizeof cmd, "FA4_KERNEL_DIR='%s' FA4_FAMILIES=sm80 '%s' "
             "--compile-fallback '%s'", kdir, self, tmpdir);
    if ((f = popen(cmd, "r"))) {
        out[fread(out, 1, sizeof out - 1, f)] = '\0';
        pclose(f);
    }
    ok(strstr(out, "source heuristic family 80") != NULL,
       "an sm90 entry that no longer compiles gives way to the heuristic "
       "(sm80 here)");
    ok(strstr(out, "does not compile") != NULL && !strstr(out, "\n\n"),
       "the context's warnings keep the reason, on one line");
    diag_lines(out);
}

/*
** A tuned sm100 winner on a B200 (a plan_only sm_100a context whose limits
** are made a real device's): without the opt-in the plan passes it over
** for the heuristic's sm80 config with a warning; with it, the plan takes
** the entry.
*/
static void test_sm100_opt_in(void)
{
    fa4_context_options o = FA4_CONTEXT_OPTIONS_INIT;
    char path[1024];
    fa4_problem p = problem(4096, 4096);
    fa4_config tuned = FA4_CONFIG_INIT, got = FA4_CONFIG_INIT;
    fa4_config_source src;
    fa4_context *ctx = NULL;
    fa4_status st;

    snprintf(path, sizeof path, "%s/sm100.db", tmpdir);
    o.plan_only = 1;
    o.arch = "sm_100a";
    o.db_path = path;
    o.system_db_path = "";
    if (!ok(fa4_context_create(&ctx, 0, &o) == FA4_OK &&
            config_default(&tuned, &ctx->limits, &p, FA4_FAMILY_SM100, why,
                           sizeof why) == FA4_OK &&
            db_store_winner(context_db(ctx), &ctx->limits, &p, &tuned, 1.0, 100.0,
                            why, sizeof why) == FA4_OK,
            "an sm100 winner stored for a plan_only sm_100a context (%s)",
            ctx ? why : fa4_context_last_error())) {
        fa4_context_destroy(ctx);
        return;
    }
    ctx->limits.sm100_opt_in = 0;           /* a B200 without the opt-in */
    st = plan_source(ctx, &p, NULL, &got, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_HEURISTIC && got.family == FA4_FAMILY_SM80,
       "without the opt-in the plan takes the heuristic's sm80 config (%s)",
       st ? fa4_context_errmsg(ctx) : fa4_config_source_string(src));
    has_str(fa4_context_warnings(ctx), "cannot run here: sm100 kernels are built but "
            "unvalidated", "the warning says why the entry was passed over");
    has_str(fa4_context_warnings(ctx), "FA4_ENABLE_SM100=1", "and how to opt in");
    ctx->limits.sm100_opt_in = 1;           /* the opt-in */
    st = plan_source(ctx, &p, NULL, &got, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_USER_EXACT && config_equal(&got, &tuned),
       "with the opt-in the plan takes the sm100 entry (%s)",
       st ? fa4_context_errmsg(ctx) : fa4_config_source_string(src));
    fa4_context_destroy(ctx);
}

/*
** Softcap and sinks: a plain winner never serves a problem with either,
** nor theirs a plain one, at any level (exact, nearest bucket, same
** arch); the cap's value is not part of the key.
*/
static void test_softcap_sinks(const device_limits *h100,
                               const device_limits *h100_cut)
{
    char path[1024], only[1024];
    fa4_problem plain = problem(4096, 4096), cap = plain, sinks = plain;
    fa4_problem both = plain, cap8k = problem(8192, 8192), old = plain;
    fa4_config_source src;
    fa4_status st;
    int mark;

    cap.softcap = 30;
    sinks.attention_sinks = 1;
    both.softcap = 30;
    both.attention_sinks = 1;
    snprintf(path, sizeof path, "%s/softcap.db", tmpdir);
    ok(put(path, h100, &plain, marked(FA4_FAMILY_SM90, 16), 1.0) &&
       put(path, h100, &cap, marked(FA4_FAMILY_SM90, 32), 2.0) &&
       put(path, h100, &sinks, marked(FA4_FAMILY_SM90, 48), 3.0) &&
       put(path, h100, &both, marked(FA4_FAMILY_SM90, 64), 4.0),
       "winners for one shape plain, softcapped, with sinks and with both "
       "are stored side by side");
    is_int(query_int(path, "SELECT count(*) FROM winners"), 4,
           "as four rows (a key each)");
    is_int(query_int(path, "SELECT group_concat(softcap || sinks) = "
                     "'00,10,01,11' FROM (SELECT softcap, sinks FROM winners "
                     "ORDER BY median_ms)"), 1,
           "keyed softcap 0/1 and sinks 0/1");
    st = look(path, NULL, h100, &plain, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_USER_EXACT && mark == 16,
       "the plain problem gets the plain winner");
    st = look(path, NULL, h100, &cap, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_USER_EXACT && mark == 32,
       "the softcapped problem gets the softcap winner, not the faster plain "
       "one");
    st = look(path, NULL, h100, &sinks, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_USER_EXACT && mark == 48,
       "the problem with sinks gets the sinks winner");
    st = look(path, NULL, h100, &both, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_USER_EXACT && mark == 64,
       "softcap and sinks together get their own winner");
    cap.softcap = 50;
    st = look(path, NULL, h100, &cap, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_USER_EXACT && mark == 32,
       "another cap (50, tuned at 30) is the same key: exact");
    old.softcap = 30;
    old.attention_sinks = 1;
    old.struct_size = offsetof(fa4_problem, attention_sinks);
    st = look(path, NULL, h100, &old, &mark, &src);
    ok(st == FA4_OK && mark == 16, "fields past an old caller's struct_size "
       "are not read: its problem is plain");

    /* A database with only a softcapped winner, at another bucket. */
    snprintf(only, sizeof only, "%s/softcap-only.db", tmpdir);
    cap8k.softcap = 30;
    ok(put(only, h100, &cap8k, marked(FA4_FAMILY_SM90, 80), 1.0),
       "a database holds one softcap winner, at bucket 8192");
    st = look(only, NULL, h100, &plain, &mark, &src);
    ok(st == FA4_EDB && strstr(why, "no entry"),
       "a plain problem finds no entry there, not even a nearest bucket");
    st = look(only, NULL, h100_cut, &plain, &mark, &src);
    ok(st == FA4_EDB && strstr(why, "no entry"),
       "nor a same-arch one on another H100");
    st = look(only, NULL, h100, &cap, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_NEAREST && mark == 80,
       "a softcapped problem at 4096 takes it as the nearest bucket");
    st = look(only, NULL, h100_cut, &cap, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_SAME_ARCH && mark == 80,
       "and on another H100 as same arch");
    st = look(only, NULL, h100, &both, &mark, &src);
    ok(st == FA4_EDB && strstr(why, "no entry"),
       "softcap with sinks does not take the softcap-only winner");
    /* And the other way: only a plain winner. */
    snprintf(only, sizeof only, "%s/plain-only.db", tmpdir);
    ok(put(only, h100, &plain, marked(FA4_FAMILY_SM90, 96), 1.0),
       "a database holds one plain winner");
    st = look(only, NULL, h100, &cap, &mark, &src);
    ok(st == FA4_EDB && strstr(why, "no entry"),
       "a softcapped problem of its very shape finds no entry there");
    st = look(only, NULL, h100, &sinks, &mark, &src);
    ok(st == FA4_EDB && strstr(why, "no entry"), "nor one with sinks");

    snprintf(only, sizeof only, "%s/softcap-empty.db", tmpdir);
    st = look(only, path, h100, &sinks, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_SYSTEM_EXACT && mark == 48,
       "from a system database too, each problem gets its variant's winner");
}

int main(int argc, char **argv)
{
    char user[1024], sys[1024], alone[1024], *report = NULL;
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

    if (argc > 2 && strcmp(argv[1], "--compile-fallback") == 0)
        return compile_fallback_child(argv[2]);
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

    /* Stale entries (another kernel source): below a fresh entry of the
       same step and distance only; the buckets come first. */
    ok(exec_sql(user, "UPDATE winners SET source_hash = 'feedfacefeedface' "
                "WHERE seqlen_q_bucket = 4096 AND device_id = (SELECT id "
                "FROM devices WHERE name = 'NVIDIA H100 80GB HBM3')"),
       "the user's H100 entries at 4096 are made stale by hand");
    st = look(user, sys, &h100, &p4k, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_SYSTEM_EXACT && mark == 64,
       "the system's fresh exact entry beats the user's stale exact ones");
    st = look(user, NULL, &h100, &p4k, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_STALE && mark == 16 &&
       strstr(why, "exact"),
       "a stale exact entry beats a fresh one of another bucket (8192)");
    p = problem(2048, 2048);
    st = look(user, NULL, &h100, &p, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_STALE && mark == 16 &&
       strstr(why, "nearest bucket"),
       "seqlen 2048 takes the closer stale bucket (4096) before the fresh "
       "ones two steps away (512, 8192)");
    p = problem(4096, 8192);
    st = look(user, NULL, &h100, &p, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_NEAREST && mark == 96,
       "at equal distance (4096/4096 stale, 8192/8192 fresh) the fresh "
       "entry wins");
    ok(exec_sql(user, "UPDATE winners SET source_hash = 'feedfacefeedface'"),
       "every user entry is made stale");
    st = look(user, NULL, &h100, &p4k, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_STALE && mark == 16 &&
       strstr(why, "exact") && strstr(why, "stale: kernel source "
                                      "feedfacefeedface"),
       "with only stale entries, the best exact one is used as "
       "FA4_SOURCE_STALE, and the text names its source hash");
    diag("  %s", why);
    p = problem(32768, 32768);
    st = look(user, NULL, &h100, &p, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_STALE && mark == 96 &&
       strstr(why, "nearest bucket"),
       "stale entries keep the lookup order: seqlen 32768 takes bucket 8192");
    st = look(user, NULL, &h100_cut, &p4k, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_STALE && mark == 16 &&
       strstr(why, "same arch"),
       "a stale same-arch entry is FA4_SOURCE_STALE too");

    snprintf(alone, sizeof alone, "%s/alone.db", tmpdir);
    ok(put(alone, &h100, &p4k, marked(FA4_FAMILY_SM90, 176), 1.0) &&
       exec_sql(alone, "UPDATE winners SET source_hash = 'feedfacefeedface'"),
       "a database with one exact entry, made stale");
    st = look(alone, NULL, &h100, &p4k, &mark, &src);
    ok(st == FA4_OK && src == FA4_SOURCE_STALE && mark == 176,
       "a stale exact entry alone is used, as FA4_SOURCE_STALE (\"%s\")",
       fa4_config_source_string(src));
    ok(exec_sql(alone, "UPDATE winners SET config = 'sm90 bm=banana'"),
       "its config is made unparseable");
    st = look(alone, NULL, &h100, &p4k, &mark, &src);
    ok(st == FA4_EDB && strstr(why, "no entry") &&
       strstr(why, "1 ignored as unusable"),
       "a stale entry whose config does not parse is skipped and counted");
    diag("  %s", why);
    st = db_open(&d, alone, NULL, 0, warn, sizeof warn, why, sizeof why);
    st = st == FA4_OK ? db_check(d, &report, &problems, why, sizeof why) : st;
    ok(st == FA4_OK && problems == 1 && report &&
       strstr(report, "unusable winner") && !strstr(report, "stale winner"),
       "db_check calls that entry unusable, not stale");
    free(report);
    report = NULL;
    db_close(d);
    d = NULL;

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

    test_softcap_sinks(&h100, &h100_cut);
    test_plans();
    test_sm100_opt_in();
    test_compile_fallback(argv[0]);
    remove_tmpdir();
    return done_testing();
}
