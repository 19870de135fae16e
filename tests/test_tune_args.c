/*
** test_tune_args.c -- fa4-tune's command line: what each option sets, and
** the one-line message of every error path (parsing, problem files,
** presets, inconsistent shapes, no device, unwritable database).
** Runs nothing on a GPU.
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "../tuner/args.h"
#include "../tuner/commands.h"
#include "../tuner/problems.h"

static char err[1024];
static tune_args A;

/* Parse the NULL-terminated words after "fa4-tune"; returns the result. */
static int parse(const char *first, ...)
{
    char *argv[64];
    int argc = 0;
    va_list ap;
    const char *w;

    argv[argc++] = (char *)"fa4-tune";
    va_start(ap, first);
    for (w = first; w && argc < 63; w = va_arg(ap, const char *))
        argv[argc++] = (char *)w;
    va_end(ap);
    argv[argc] = NULL;
    return tune_args_parse(&A, argc, argv, err, sizeof err);
}

/* Expect parsing to fail with a message containing WANT. */
#define FAILS(want, desc, ...)                                           \
    do {                                                                 \
        int rc_ = parse(__VA_ARGS__, (const char *)NULL);                \
        if (!ok(rc_ == -1 && strstr(err, want) != NULL, desc))           \
            diag("  rc %d, message \"%s\", want \"%s\"", rc_, err, want);\
    } while (0)

/* Write TEXT to a new temporary file; returns its path (static). */
static const char *temp_file(const char *text)
{
    static char path[8][64];
    static int n;
    char *p = path[n++ % 8];
    FILE *f;
    int fd;

    strcpy(p, "/tmp/fa4-tune-args-XXXXXX");
    fd = mkstemp(p);
    f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return p;
}

/* Run a subcommand in-process with A; returns the exit code, the stderr
** text in OUT_ERR. */
static int run_cmd(char *out_err, size_t size)
{
    FILE *e = tmpfile(), *o = tmpfile();
    int rc;
    size_t n;

    if (A.cmd == TUNE_CMD_TUNE)
        rc = cmd_tune(&A, o, e);
    else if (A.cmd == TUNE_CMD_SPACE)
        rc = cmd_space(&A, o, e);
    else
        rc = cmd_db(&A, o, e);
    rewind(e);
    n = fread(out_err, 1, size - 1, e);
    out_err[n] = '\0';
    fclose(e);
    fclose(o);
    return rc;
}

/* 1 when TEXT is exactly one line. */
static int one_line(const char *text)
{
    const char *nl = strchr(text, '\n');
    return text[0] && nl && nl[1] == '\0';
}

int main(void)
{
    problem_list pl = { NULL, 0, 0 };
    char cerr[4096], dir[64], dbpath[128];
    int rc;

    plan_lazy();

    /* ---- the happy paths */
    rc = parse("tune", "--batch", "2", "--seqlen-q", "1024", "--heads-q", "32",
               "--heads-kv", "8", "--head-dim", "128", "--causal", NULL);
    ok(rc == 0 && A.cmd == TUNE_CMD_TUNE && A.shape.batch == 2 &&
       A.shape.seqlen_q == 1024 && A.shape.seqlen_k == 1024 &&
       A.shape.heads_q == 32 && A.shape.heads_kv == 8 &&
       A.shape.head_dim_qk == 128 && A.shape.causal == 1 &&
       A.shape.window_right == 0 && A.shape.dtype == FA4_DTYPE_BF16,
       "tune with a shape fills the problem; seqlen_k defaults to seqlen_q");
    ok(A.time_budget_s == 600 && A.reps == 10 && A.groups == 5 &&
       A.retime == 3 && A.confirm_rounds == 6 && !A.l2_warm &&
       A.jobs == 0 && A.shard_count == 1 && A.max_trials == 0 &&
       A.strategy == TUNE_STRATEGY_EXHAUSTIVE && A.shape.return_lse == 0,
       "defaults: 600 s budget, 5 groups of 10 launches, inputs rotated, "
       "re-time 3, confirm in 6 rounds, -j cores, one shard, no LSE");
    rc = parse("tune", "--batch", "1", "--seqlen-q", "777", "--heads-q", "16",
               "--head-dim", "256", "--return-lse", "--reps", "50",
               "--groups", "7", "--l2", "warm", "--confirm", "0", NULL);
    ok(rc == 0 && A.shape.return_lse == 1 && A.reps == 50 && A.groups == 7 &&
       A.l2_warm && A.confirm_rounds == 0,
       "--return-lse, --reps, --groups, --l2 warm and --confirm 0 are read");
    rc = parse("tune", "--preset", "gemma-d256", "--return-lse", NULL);
    ok(rc == 0 && problems_build(&pl, &A, err, sizeof err) == 0 &&
       pl.count > 0 && pl.items[0].problem.return_lse == 1,
       "--return-lse applies to every row of a preset");
    problem_list_free(&pl);
    rc = parse("verify", "--db", "/tmp/x.db", "--device", "1", "--drop",
               "--confirm", "8", "--json", NULL);
    ok(rc == 0 && A.cmd == TUNE_CMD_VERIFY && A.drop && A.device == 1 &&
       A.confirm_rounds == 8 && A.json && !strcmp(A.db_path, "/tmp/x.db"),
       "verify --db --device --drop --confirm --json");
    rc = parse("tune", "--preset", "llama3-8b", "--devices", "0,1",
               "--shard", "2/4", "--time-budget", "10m", "--max-trials", "50",
               "--strategy", "coarse", "-j", "8", "--db", "/tmp/x.db",
               "--json", "--quiet", NULL);
    ok(rc == 0 && !strcmp(A.preset, "llama3-8b") && A.ndevices == 2 &&
       A.devices[0] == 0 && A.devices[1] == 1 && A.shard_index == 2 &&
       A.shard_count == 4 && A.time_budget_s == 600 && A.max_trials == 50 &&
       A.strategy == TUNE_STRATEGY_COARSE && A.jobs == 8 &&
       !strcmp(A.db_path, "/tmp/x.db") && A.json && A.quiet,
       "every tune option is read (10m is 600 s)");
    rc = parse("tune", "--preset=fa-grid", "-j4", "--devices=all",
               "--dtype", "fp16", NULL);
    ok(rc == 0 && A.jobs == 4 && A.all_devices &&
       A.shape.dtype == FA4_DTYPE_FP16,
       "--opt=value, -jN, --devices all; --dtype applies to a preset");
    rc = parse("tune", "--batch", "1", "--seqlen-q", "1", "--seqlen-k", "4096",
               "--heads-q", "32", "--heads-kv", "4", "--head-dim", "192",
               "--head-dim-v", "128", "--window", "256,-1", "--dry-run",
               "--arch", "sm_90a", "--family", "sm90", NULL);
    ok(rc == 0 && A.dry_run && !strcmp(A.arch, "sm_90a") &&
       A.family == FA4_FAMILY_SM90 && A.shape.head_dim_v == 128 &&
       A.shape.window_left == 256 && A.shape.window_right == -1 &&
       A.shape.seqlen_k == 4096, "dry run with --arch, --family, --window");
    rc = parse("tune", "--batch", "8", "--seqlen-q", "2048", "--heads-q", "32",
               "--heads-kv", "8", "--head-dim", "128", "--causal", "--varlen",
               "--page-size", "16", "--dry-run", NULL);
    ok(rc == 0 && A.shape.varlen == 1 && A.shape.page_size == 16 &&
       (A.shape_set & TUNE_SHAPE_VARLEN) && (A.shape_set & TUNE_SHAPE_PAGE_SIZE),
       "--varlen and --page-size set the problem (varlen Q with paged K/V)");
    ok(problems_build(&pl, &A, err, sizeof err) == 0 && pl.count == 1 &&
       pl.items[0].problem.varlen && pl.items[0].problem.page_size == 16,
       "and the problem they make is valid");
    problem_list_free(&pl);
    rc = parse("space", "--head-dim", "128", "--page-size=64", "--varlen",
               "--arch", "sm_90a", NULL);
    ok(rc == 0 && A.cmd == TUNE_CMD_SPACE && A.shape.page_size == 64 &&
       A.shape.varlen, "space takes --varlen and --page-size=N");
    rc = parse("tune", "--preset", "decode-llama3-8b", "--page-size", "32",
               NULL);
    {
        int j, good = rc == 0 && problems_build(&pl, &A, err, sizeof err) == 0 &&
                      pl.count == 42;
        for (j = 0; good && j < pl.count; j++)
            good = pl.items[j].problem.page_size == 32 &&
                   !pl.items[j].problem.varlen;
        ok(good, "--page-size applies to every row of a preset");
        problem_list_free(&pl);
    }
    rc = parse("tune", "--preset", "llama3-8b", "--varlen", NULL);
    ok(rc == 0 && problems_build(&pl, &A, err, sizeof err) == 0 &&
       pl.count == 6 && pl.items[5].problem.varlen &&
       !pl.items[5].problem.page_size,
       "--varlen applies to every row of a preset");
    problem_list_free(&pl);
    rc = parse("tune", "--batch", "2", "--seqlen-q", "4096", "--heads-q", "16",
               "--head-dim", "256", "--causal", "--softcap", "50", "--sinks",
               NULL);
    ok(rc == 0 && A.shape.softcap == 50.0f && A.shape.attention_sinks == 1 &&
       (A.shape_set & TUNE_SHAPE_SOFTCAP) && (A.shape_set & TUNE_SHAPE_SINKS),
       "--softcap X and --sinks set the problem");
    {
        char desc[160] = "";
        int good = problems_build(&pl, &A, err, sizeof err) == 0 &&
                   pl.count == 1 && pl.items[0].problem.softcap == 50.0f &&
                   pl.items[0].problem.attention_sinks == 1 &&
                   strstr(problems_describe(&pl.items[0].problem, desc,
                                            sizeof desc), " softcap=50 sinks");
        ok(good, "and the problem they make is valid, described as softcapped "
           "with sinks (%s)", pl.count ? desc : err);
        problem_list_free(&pl);
    }
    rc = parse("tune", "--batch", "1", "--seqlen-q", "64", "--heads-q", "2",
               "--head-dim", "64", "--softcap=30.5", NULL);
    ok(rc == 0 && A.shape.softcap == 30.5f && !A.shape.attention_sinks,
       "--softcap=X takes a fraction; sinks stay off without --sinks");
    rc = parse("space", "--head-dim", "128", "--softcap", "30", "--sinks",
               "--arch", "sm_90a", NULL);
    ok(rc == 0 && A.cmd == TUNE_CMD_SPACE && A.shape.softcap == 30.0f &&
       A.shape.attention_sinks, "space takes --softcap and --sinks");
    rc = parse("tune", "--preset", "llama3-8b", "--softcap", "30", "--sinks",
               NULL);
    {
        int j, good = rc == 0 && problems_build(&pl, &A, err, sizeof err) == 0 &&
                      pl.count == 6;
        for (j = 0; good && j < pl.count; j++)
            good = pl.items[j].problem.softcap == 30.0f &&
                   pl.items[j].problem.attention_sinks == 1 &&
                   pl.items[j].problem.causal;
        ok(good, "--softcap and --sinks apply to every row of a preset");
        problem_list_free(&pl);
    }
    rc = parse("tune", "--preset", "llama3-8b", NULL);
    ok(rc == 0 && problems_build(&pl, &A, err, sizeof err) == 0 &&
       pl.count == 6 && pl.items[0].problem.softcap == 0.0f &&
       !pl.items[0].problem.attention_sinks,
       "without them a preset is plain");
    problem_list_free(&pl);
    rc = parse("space", "--arch", "sm_90a", "--head-dim", "128", NULL);
    ok(rc == 0 && A.cmd == TUNE_CMD_SPACE && A.shape.batch == 1 &&
       A.shape.seqlen_q == 4096 && A.shape.heads_q == 16,
       "space needs only --head-dim; the rest defaults");
    rc = parse("export", "--json", "out.json", "--trials", NULL);
    ok(rc == 0 && A.cmd == TUNE_CMD_EXPORT && !strcmp(A.file, "out.json") &&
       A.trials, "export --json FILE takes the file");
    rc = parse("import", "in.json", "--db", "a.db", NULL);
    ok(rc == 0 && A.cmd == TUNE_CMD_IMPORT && !strcmp(A.file, "in.json") &&
       !strcmp(A.db_path, "a.db"), "import FILE");
    rc = parse("merge", "other.db", NULL);
    ok(rc == 0 && A.cmd == TUNE_CMD_MERGE && !strcmp(A.file, "other.db"),
       "merge DB");
    rc = parse("show", "--table", "trials", "--json", NULL);
    ok(rc == 0 && A.cmd == TUNE_CMD_SHOW && !strcmp(A.table, "trials") &&
       A.json, "show --table trials --json");
    ok(parse("check", NULL) == 0 && A.cmd == TUNE_CMD_CHECK, "check");
    ok(parse("--help", NULL) == 0 && A.cmd == TUNE_CMD_HELP &&
       parse("tune", "--help", NULL) == 0 && A.cmd == TUNE_CMD_HELP,
       "--help anywhere");
    ok(parse("--version", NULL) == 0 && A.cmd == TUNE_CMD_VERSION, "--version");

    /* ---- parse errors */
    ok(parse(NULL) == -1 && strstr(err, "no subcommand"), "no subcommand");
    FAILS("unknown subcommand 'tunez'", "unknown subcommand", "tunez");
    FAILS("before the subcommand", "an option before the subcommand",
          "--db", "x", "tune");
    FAILS("unknown option '--bogus'", "unknown option", "tune", "--bogus");
    FAILS("--shard is not an option of 'space'", "option of another subcommand",
          "space", "--head-dim", "64", "--shard", "0/2");
    FAILS("--batch needs a value", "missing value", "tune", "--batch");
    FAILS("--causal takes no value", "flag given a value", "tune",
          "--causal=1");
    FAILS("--batch: 'x' is not a positive integer", "non-numeric size",
          "tune", "--batch", "x");
    FAILS("--seqlen-q: '0' is not a positive integer", "zero size", "tune",
          "--seqlen-q", "0");
    FAILS("--heads-q: '12abc'", "trailing junk", "tune", "--heads-q", "12abc");
    FAILS("--dtype: 'fp32' is not a dtype", "bad dtype", "tune", "--dtype",
          "fp32");
    FAILS("unknown preset 'llama9'", "unknown preset", "tune", "--preset",
          "llama9");
    FAILS("known: fa-grid", "the unknown-preset message lists the presets",
          "tune", "--preset", "llama9");
    FAILS("--window: '5' is not of the form L,R", "bad window", "tune",
          "--window", "5");
    FAILS("--window: '-2,0' needs two integers >= -1", "window below -1",
          "tune", "--window", "-2,0");
    FAILS("--shard: '4/4' needs 0 <= i < N", "shard index out of range",
          "tune", "--preset", "fa-grid", "--shard", "4/4");
    FAILS("--shard: '1' is not of the form i/N", "shard without slash",
          "tune", "--preset", "fa-grid", "--shard", "1");
    FAILS("--shard: '1/0'", "zero shards", "tune", "--preset", "fa-grid",
          "--shard", "1/0");
    FAILS("--devices: device 1 is listed twice", "duplicate device", "tune",
          "--preset", "fa-grid", "--devices", "1,1");
    FAILS("--devices: 'a' in 'a,1'", "non-numeric device", "tune",
          "--preset", "fa-grid", "--devices", "a,1");
    FAILS("ends with a comma", "trailing comma in --devices", "tune",
          "--preset", "fa-grid", "--devices", "0,");
    FAILS("--device and --devices cannot be combined", "device and devices",
          "tune", "--preset", "fa-grid", "--device", "0", "--devices", "1");
    FAILS("--time-budget: 'soon'", "bad duration", "tune", "--time-budget",
          "soon");
    FAILS("--max-trials: '0'", "zero max trials", "tune", "--max-trials", "0");
    FAILS("--strategy: 'random'", "unknown strategy", "tune", "--strategy",
          "random");
    FAILS("-j: '0' is not a thread count", "zero threads", "tune", "-j", "0");
    FAILS("--reps: '0' is not a launch count", "zero reps", "tune",
          "--reps", "0");
    FAILS("--groups: '2' must be an integer from 3", "too few groups", "tune",
          "--groups", "2");
    FAILS("--l2: 'cold' is not a cache policy", "unknown L2 policy", "tune",
          "--l2", "cold");
    FAILS("--confirm: '2' is not a round count", "two confirmation rounds",
          "tune", "--confirm", "2");
    FAILS("--preset is not an option of 'verify'", "verify takes no problem",
          "verify", "--preset", "fa-grid");
    FAILS("--drop is not an option of 'tune'", "--drop belongs to verify",
          "tune", "--drop");
    FAILS("--return-lse cannot be combined with --problems", "LSE with a file",
          "tune", "--problems", "p.json", "--return-lse");
    FAILS("--page-size: 24 is not a power of two", "page size not a power "
          "of two", "tune", "--page-size", "24");
    FAILS("--page-size: 0 is not a page size", "page size 0", "space",
          "--head-dim", "64", "--page-size", "0");
    FAILS("--page-size: '16k' is not a page size", "page size with junk",
          "tune", "--page-size", "16k");
    FAILS("--page-size: '-16' is not a page size", "negative page size",
          "tune", "--page-size=-16");
    FAILS("--page-size: 2097152 is not a power of two from 1 to 1048576",
          "page size over 2^20", "tune", "--page-size", "2097152");
    FAILS("--page-size needs a value", "page size without a value", "tune",
          "--page-size");
    FAILS("--varlen takes no value", "--varlen given a value", "tune",
          "--varlen=1");
    FAILS("--varlen cannot be combined with --problems", "varlen with a file",
          "tune", "--problems", "p.json", "--varlen");
    FAILS("set \"page_size\" per problem in the file", "page size with a "
          "file", "tune", "--problems", "p.json", "--page-size", "16");
    FAILS("--page-size is not an option of 'verify'", "verify takes no page "
          "size", "verify", "--page-size", "16");
    FAILS("no problem given", "serving options alone are no problem", "tune",
          "--varlen", "--page-size", "16");
    FAILS("--softcap: -5 is negative", "negative softcap", "tune", "--batch",
          "1", "--seqlen-q", "64", "--heads-q", "2", "--head-dim", "64",
          "--softcap", "-5");
    FAILS("--softcap: -0.5 is negative", "negative softcap with '='", "tune",
          "--softcap=-0.5");
    FAILS("--softcap: 'fifty' is not a number", "softcap not a number", "tune",
          "--softcap", "fifty");
    FAILS("--softcap: '50x' is not a number", "softcap with junk", "tune",
          "--softcap", "50x");
    FAILS("--softcap: '' is not a number", "empty softcap", "tune",
          "--softcap=");
    FAILS("--softcap: 'nan' is not a number", "softcap NaN", "tune",
          "--softcap", "nan");
    FAILS("--softcap: 'inf' is not a number", "softcap infinite", "tune",
          "--softcap", "inf");
    FAILS("--softcap: 0 is no cap", "softcap 0", "space", "--head-dim", "64",
          "--softcap", "0");
    FAILS("--softcap: 1e39 does not fit a float", "softcap beyond a float",
          "tune", "--softcap", "1e39");
    FAILS("--softcap needs a value", "softcap without a value", "tune",
          "--softcap");
    FAILS("--sinks takes no value", "--sinks given a value", "tune",
          "--sinks=1");
    FAILS("--softcap cannot be combined with --problems", "softcap with a file",
          "tune", "--problems", "p.json", "--softcap", "50");
    FAILS("set \"attention_sinks\": true per problem", "sinks with a file",
          "tune", "--problems", "p.json", "--sinks");
    FAILS("--softcap is not an option of 'verify'", "verify takes no softcap",
          "verify", "--softcap", "50");
    FAILS("no problem given", "score options alone are no problem", "tune",
          "--softcap", "50", "--sinks");
    FAILS("--arch: 'sm_75'", "unknown arch", "space", "--arch", "sm_75",
          "--head-dim", "64");
    FAILS("--family: 'sm70'", "unknown family", "space", "--family", "sm70",
          "--head-dim", "64");
    FAILS("--preset and --problems cannot be combined", "two problem sources",
          "tune", "--preset", "fa-grid", "--problems", "p.json");
    FAILS("cannot be combined with --preset", "shape and preset", "tune",
          "--preset", "fa-grid", "--batch", "2");
    FAILS("--dtype cannot be combined with --problems", "dtype with a file",
          "tune", "--problems", "p.json", "--dtype", "fp16");
    FAILS("no problem given", "tune without a problem", "tune", NULL);
    FAILS("--heads-q is required", "incomplete shape", "tune", "--batch", "1",
          "--seqlen-q", "128", "--head-dim", "64");
    FAILS("--arch sm_90a is only used with --dry-run", "--arch without dry run",
          "tune", "--preset", "fa-grid", "--arch", "sm_90a");
    FAILS("--devices cannot be combined with --dry-run", "devices in a dry run",
          "tune", "--preset", "fa-grid", "--dry-run", "--devices", "0,1");
    FAILS("--head-dim is required", "space without head dim", "space", NULL);
    FAILS("export --json FILE", "export without a file", "export", NULL);
    FAILS("a FILE is required: import FILE.json", "import without a file",
          "import", NULL);
    FAILS("merge OTHER.db", "merge without a file", "merge", NULL);
    FAILS("unexpected argument 'extra'", "stray argument", "check", "extra");
    FAILS("--table: 'foo'", "unknown table", "show", "--table", "foo");
    ok(parse("tune", "--batch", "zz", NULL) == -1 && !strchr(err, '\n'),
       "messages are one line");

    /* ---- problem lists */
    ok(parse("tune", "--preset", "fa-grid", NULL) == 0 &&
       problems_build(&pl, &A, err, sizeof err) == 0 && pl.count == 36,
       "fa-grid has 36 problems (3 head dims x 6 lengths x causal or not)");
    ok(pl.items[0].problem.batch * pl.items[0].problem.seqlen_q == 16384 &&
       pl.items[0].problem.heads_q * pl.items[0].problem.head_dim_qk == 2048,
       "fa-grid rows hold 16k tokens and hidden 2048");
    problem_list_free(&pl);
    {
        static const struct { const char *name; int n; } want[] = {
            { "fa-grid-d128", 12 }, { "llama3-8b", 6 }, { "llama3-70b", 6 },
            { "mistral-7b", 6 }, { "gemma-d256", 4 }, { "deepseek-192-128", 5 },
        };
        size_t i;
        for (i = 0; i < sizeof want / sizeof want[0]; i++) {
            int good, j;
            parse("tune", "--preset", want[i].name, NULL);
            good = problems_build(&pl, &A, err, sizeof err) == 0 &&
                   pl.count == want[i].n;
            for (j = 0; good && j < pl.count; j++) {
                int s = pl.items[j].problem.seqlen_q;
                good = (s & (s - 1)) == 0 &&
                       fa4_problem_check(&pl.items[j].problem, NULL, 0) == FA4_OK;
            }
            ok(good, "preset %s: %d valid problems at power-of-two lengths",
               want[i].name, want[i].n);
            if (!strcmp(want[i].name, "mistral-7b"))
                ok(pl.items[0].problem.window_left == 4096 &&
                   pl.items[0].problem.heads_kv == 8,
                   "mistral-7b has the 4096 sliding window and 8 KV heads");
            if (!strcmp(want[i].name, "deepseek-192-128"))
                ok(pl.items[0].problem.head_dim_qk == 192 &&
                   pl.items[0].problem.head_dim_v == 128,
                   "deepseek-192-128 has head_dim 192 and head_dim_v 128");
            problem_list_free(&pl);
        }
    }
    {
        static const struct { const char *name; int hq, hkv; } dec[] = {
            { "decode-llama3-8b", 32, 8 }, { "decode-llama3-70b-tp8", 8, 1 },
        };
        size_t i;
        for (i = 0; i < sizeof dec / sizeof dec[0]; i++) {
            int good, j, b1 = 0, b64 = 0;
            parse("tune", "--preset", dec[i].name, NULL);
            good = problems_build(&pl, &A, err, sizeof err) == 0 &&
                   pl.count == 6 * 7;
            for (j = 0; good && j < pl.count; j++) {
                const fa4_problem *q = &pl.items[j].problem;
                good = q->seqlen_q == 1 && q->seqlen_k >= 1024 &&
                       q->seqlen_k <= 32768 && q->heads_q == dec[i].hq &&
                       q->heads_kv == dec[i].hkv && q->head_dim_qk == 128 &&
                       fa4_problem_check(q, NULL, 0) == FA4_OK;
                b1 |= q->batch == 1;
                b64 |= q->batch == 64;
            }
            ok(good && b1 && b64, "preset %s: 42 decode problems, %d/%d heads "
               "d128, one query row, KV 1k..32k, batch 1..64", dec[i].name,
               dec[i].hq, dec[i].hkv);
            problem_list_free(&pl);
        }
    }
    {
        static const struct { const char *name; int hq, hkv; } dec[] = {
            { "decode-llama3-8b-paged", 32, 8 },
            { "decode-llama3-70b-tp8-paged", 8, 1 },
        };
        size_t i;
        for (i = 0; i < sizeof dec / sizeof dec[0]; i++) {
            int good, j, b64k32 = 0;
            parse("tune", "--preset", dec[i].name, NULL);
            good = problems_build(&pl, &A, err, sizeof err) == 0 &&
                   pl.count == 6 * 7;
            for (j = 0; good && j < pl.count; j++) {
                const fa4_problem *q = &pl.items[j].problem;
                good = q->seqlen_q == 1 && q->page_size == 16 && !q->varlen &&
                       q->causal && q->heads_q == dec[i].hq &&
                       q->heads_kv == dec[i].hkv && q->head_dim_qk == 128 &&
                       fa4_problem_check(q, NULL, 0) == FA4_OK;
                b64k32 |= q->batch == 64 && q->seqlen_k == 32768;
            }
            ok(good && b64k32, "preset %s: the 42 decode problems with K/V in "
               "pages of 16", dec[i].name);
            problem_list_free(&pl);
        }
    }
    {
        int good, j, s = 1024;
        char desc[160];
        parse("tune", "--preset", "prefill-varlen-llama3-8b", NULL);
        good = problems_build(&pl, &A, err, sizeof err) == 0 && pl.count == 4;
        for (j = 0; good && j < pl.count; j++, s *= 2) {
            const fa4_problem *q = &pl.items[j].problem;
            long tokens = (long)q->batch * q->seqlen_q;
            good = q->varlen && !q->page_size && q->causal &&
                   q->seqlen_q == s && q->seqlen_k == s && q->heads_q == 32 &&
                   q->heads_kv == 8 && q->head_dim_qk == 128 &&
                   tokens >= 16384 && tokens <= 65536 &&
                   fa4_problem_check(q, NULL, 0) == FA4_OK;
        }
        ok(good, "preset prefill-varlen-llama3-8b: 4 varlen causal problems, "
           "32/8 heads d128, maxima 1k..8k, 16k..64k tokens each");
        ok(pl.count == 4 && strstr(problems_describe(&pl.items[0].problem, desc,
                                                     sizeof desc), " varlen") &&
           !strcmp(pl.items[0].name, "prefill-varlen-llama3-8b b32 s1024"),
           "its rows are named and described as varlen (%s)",
           pl.count ? desc : "");
        problem_list_free(&pl);
        ok(strstr(tune_args_usage(), "decode-llama3-8b-paged") &&
           strstr(tune_args_usage(), "decode-llama3-70b-tp8-paged") &&
           strstr(tune_args_usage(), "prefill-varlen-llama3-8b") &&
           strstr(tune_args_usage(), "--page-size") &&
           strstr(problems_preset_list(), "prefill-varlen-llama3-8b"),
           "--help and the unknown-preset message list the serving presets");
    }
    parse("tune", "--batch", "1", "--seqlen-q", "128", "--heads-q", "6",
          "--heads-kv", "4", "--head-dim", "64", NULL);
    ok(problems_build(&pl, &A, err, sizeof err) == -1 &&
       strstr(err, "heads_q=6 is not a multiple of heads_kv=4"),
       "inconsistent shape: fa4_problem_check's message");
    problem_list_free(&pl);
    parse("tune", "--batch", "1", "--seqlen-q", "128", "--heads-q", "4",
          "--head-dim", "72", NULL);
    ok(problems_build(&pl, &A, err, sizeof err) == -1 &&
       strstr(err, "head_dim_qk=72"), "unsupported head dim is named");
    problem_list_free(&pl);
    parse("tune", "--batch", "1", "--seqlen-q", "128", "--heads-q", "4",
          "--head-dim", "64", "--causal", "--window", "16,4", NULL);
    ok(problems_build(&pl, &A, err, sizeof err) == -1 &&
       strstr(err, "window_right=4 with causal=1"),
       "causal with a right window is rejected");
    problem_list_free(&pl);

    /* JSON files */
    {
        const char *good = temp_file(
            "{\"problems\": [\n"
            " {\"name\": \"a\", \"batch\": 2, \"seqlen_q\": 512, \"heads_q\": 8,"
            "  \"heads_kv\": 2, \"head_dim\": 128, \"causal\": true},\n"
            " {\"dtype\": \"fp16\", \"batch\": 1, \"seqlen_q\": 1, \"seqlen_k\": 4096,"
            "  \"heads_q\": 32, \"heads_kv\": 8, \"head_dim\": 192, \"head_dim_v\": 128,"
            "  \"window\": [1024, -1]},\n"
            " {\"name\": \"serve\", \"batch\": 4, \"seqlen_q\": 1, \"seqlen_k\": 4096,"
            "  \"heads_q\": 32, \"heads_kv\": 8, \"head_dim\": 128, \"varlen\": true,"
            "  \"page_size\": 16},\n"
            " {\"name\": \"gemma\", \"batch\": 1, \"seqlen_q\": 2048, \"heads_q\": 16,"
            "  \"head_dim\": 256, \"causal\": true, \"softcap\": 50},\n"
            " {\"name\": \"oss\", \"batch\": 1, \"seqlen_q\": 2048, \"heads_q\": 64,"
            "  \"heads_kv\": 8, \"head_dim\": 64, \"attention_sinks\": true,"
            "  \"window\": [127, 0], \"softcap\": 0},\n"
            " {\"batch\": 1, \"seqlen_q\": 64, \"heads_q\": 2, \"head_dim\": 64,"
            "  \"sinks\": 1, \"softcap\": 12.5}]}\n");
        tune_args a2;
        parse("tune", "--problems", good, NULL);
        a2 = A;
        ok(problems_build(&pl, &a2, err, sizeof err) == 0 && pl.count == 6 &&
           !strcmp(pl.items[0].name, "a") && pl.items[0].problem.causal &&
           pl.items[0].problem.seqlen_k == 512 &&
           pl.items[1].problem.dtype == FA4_DTYPE_FP16 &&
           pl.items[1].problem.head_dim_v == 128 &&
           pl.items[1].problem.window_left == 1024 &&
           !strcmp(pl.items[1].name, "problems[1]") &&
           !pl.items[0].problem.varlen && !pl.items[1].problem.page_size &&
           pl.items[2].problem.varlen == 1 && pl.items[2].problem.page_size == 16,
           "a JSON problem file is read, defaults filled, varlen and page_size "
           "per problem");
        ok(pl.count == 6 && pl.items[3].problem.softcap == 50.0f &&
           !pl.items[3].problem.attention_sinks &&
           pl.items[4].problem.softcap == 0.0f &&
           pl.items[4].problem.attention_sinks == 1 &&
           pl.items[5].problem.softcap == 12.5f &&
           pl.items[5].problem.attention_sinks == 1 &&
           pl.items[0].problem.softcap == 0.0f &&
           !pl.items[0].problem.attention_sinks,
           "softcap and attention_sinks (or sinks) per problem; absent, neither");
        if (pl.count != 6)
            diag("  %s", err);
        problem_list_free(&pl);
        unlink(good);
    }
    {
        static const struct { const char *text, *want, *desc; } bad[] = {
            { "[{\"batch\": 1,", ":1:", "malformed JSON names line and column" },
            { "{\"x\": 1}", "expected an array of problems", "no problems array" },
            { "[]", "the list of problems is empty", "empty list" },
            { "[{\"batch\": 1, \"seqlen_q\": 64, \"heads_q\": 2, \"head_dim\": 64,"
              " \"seqlen\": 3}]", "problems[0]: unknown key \"seqlen\"",
              "unknown key" },
            { "[{\"batch\": 1, \"seqlen_q\": 64, \"heads_q\": 2}]",
              "problems[0]: \"head_dim\" is required", "missing key" },
            { "[{\"batch\": \"2\", \"seqlen_q\": 64, \"heads_q\": 2, \"head_dim\": 64}]",
              "problems[0].batch: expected an integer", "wrong type" },
            { "[{\"batch\": 0, \"seqlen_q\": 64, \"heads_q\": 2, \"head_dim\": 64}]",
              "problems[0].batch: 0 is out of range", "out of range" },
            { "[{\"batch\": 1, \"seqlen_q\": 64, \"heads_q\": 2, \"head_dim\": 64,"
              " \"dtype\": \"fp32\"}]", "problems[0].dtype", "bad dtype" },
            { "[{\"batch\": 1, \"seqlen_q\": 64, \"heads_q\": 2, \"head_dim\": 64,"
              " \"window\": [1]}]", "problems[0].window: expected [left, right]",
              "bad window" },
            { "[{\"batch\": 1, \"seqlen_q\": 64, \"heads_q\": 3, \"heads_kv\": 2,"
              " \"head_dim\": 64}]", "heads_q=3 is not a multiple of heads_kv=2",
              "inconsistent shape in a file" },
            { "[{\"batch\": 1, \"seqlen_q\": 64, \"heads_q\": 2, \"head_dim\": 64,"
              " \"page_size\": 24}]", "problems[0] (bf16 b=1 sq=64 sk=64 hq=2 hkv=2 "
              "d=64 page=24): page_size=24; must be 0 (not paged) or a power of two",
              "a page size that is not a power of two, named with its problem" },
            { "[{\"batch\": 1, \"seqlen_q\": 64, \"heads_q\": 2, \"head_dim\": 64,"
              " \"page_size\": -16}]", "problems[0].page_size: -16 is out of range",
              "a negative page size" },
            { "[{\"batch\": 1, \"seqlen_q\": 64, \"heads_q\": 2, \"head_dim\": 64,"
              " \"varlen\": \"yes\"}]", "problems[0].varlen: expected true or false",
              "varlen of the wrong type" },
            { "[{\"batch\": 1, \"seqlen_q\": 64, \"heads_q\": 2, \"head_dim\": 64,"
              " \"softcap\": -1}]", "problems[0].softcap: -1 is out of range",
              "a negative softcap" },
            { "[{\"batch\": 1, \"seqlen_q\": 64, \"heads_q\": 2, \"head_dim\": 64,"
              " \"softcap\": \"50\"}]", "problems[0].softcap: expected a number",
              "a softcap that is not a number" },
            { "[{\"batch\": 1, \"seqlen_q\": 64, \"heads_q\": 2, \"head_dim\": 64,"
              " \"softcap\": 1e39}]", "problems[0].softcap: 1e+39 is out of range",
              "a softcap beyond a float" },
            { "[{\"batch\": 1, \"seqlen_q\": 64, \"heads_q\": 2, \"head_dim\": 64,"
              " \"attention_sinks\": \"yes\"}]",
              "problems[0].attention_sinks: expected true or false",
              "attention_sinks of the wrong type" },
        };
        size_t i;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            const char *path = temp_file(bad[i].text);
            tune_args a2;
            parse("tune", "--problems", path, NULL);
            a2 = A;
            rc = problems_build(&pl, &a2, err, sizeof err);
            if (!ok(rc == -1 && strstr(err, bad[i].want) && strstr(err, path),
                    "problem file: %s", bad[i].desc))
                diag("  got \"%s\"", err);
            problem_list_free(&pl);
            unlink(path);
        }
        parse("tune", "--problems", "/nonexistent/p.json", NULL);
        ok(problems_build(&pl, &A, err, sizeof err) == -1 &&
           strstr(err, "/nonexistent/p.json"), "missing problem file is named");
        problem_list_free(&pl);
    }

    /* FLOPs: the FlashAttention convention */
    {
        fa4_problem p = FA4_PROBLEM_INIT;
        p.batch = 4; p.seqlen_q = p.seqlen_k = 4096; p.heads_q = p.heads_kv = 16;
        p.head_dim_qk = 128;
        ok(problems_flops(&p) == 4.0 * 4 * 16 * 4096.0 * 4096 * 128,
           "flops = 4 b h s^2 d");
        p.causal = 1;
        ok(problems_flops(&p) == 2.0 * 4 * 16 * 4096.0 * 4096 * 128,
           "causal halves the flops");
        p.causal = 0; p.head_dim_v = 64;
        ok(problems_flops(&p) == 2.0 * 4 * 16 * 4096.0 * 4096 * (128 + 64),
           "flops = 2 b h sq sk (dqk + dv)");
        p.head_dim_v = 0; p.causal = 1; p.seqlen_q = 1;
        ok(problems_flops(&p) == 4.0 * 4 * 16 * 4096 * 128,
           "decode with causal counts every visible key");
    }

    /* ---- the subcommands' error paths (no GPU needed) */
    strcpy(dir, "/tmp/fa4-tune-args-XXXXXX");
    if (!mkdtemp(dir))
        strcpy(dir, "/tmp");
    parse("tune", "--preset", "llama9x", NULL);   /* fails: keep A clean */
    parse("tune", "--batch", "1", "--seqlen-q", "64", "--heads-q", "2",
          "--head-dim", "64", "--db", "/proc/fa4-no-such-dir/x.db", NULL);
    rc = run_cmd(cerr, sizeof cerr);
    if (!ok(rc == TUNE_EXIT_FAIL && strstr(cerr, "cannot write the database "
            "/proc/fa4-no-such-dir/x.db") && one_line(cerr),
            "tune: an unwritable database is one line and exit 1"))
        diag("  rc %d: %s", rc, cerr);
    snprintf(dbpath, sizeof dbpath, "%s/t.db", dir);
    parse("tune", "--batch", "1", "--seqlen-q", "64", "--heads-q", "2",
          "--head-dim", "64", "--db", dbpath, "--device", "99", NULL);
    rc = run_cmd(cerr, sizeof cerr);
    if (!ok(rc == TUNE_EXIT_FAIL && strstr(cerr, "no CUDA device 99") &&
            strstr(cerr, "--dry-run") && one_line(cerr),
            "tune: no such device is one line and exit 1"))
        diag("  rc %d: %s", rc, cerr);
    parse("tune", "--batch", "1", "--seqlen-q", "64", "--heads-q", "3",
          "--heads-kv", "2", "--head-dim", "64", "--db", dbpath, NULL);
    rc = run_cmd(cerr, sizeof cerr);
    if (!ok(rc == TUNE_EXIT_USAGE && strstr(cerr, "heads_q=3") &&
            one_line(cerr), "tune: an inconsistent shape is one line, exit 2"))
        diag("  rc %d: %s", rc, cerr);
    parse("space", "--head-dim", "72", "--arch", "sm_90a", NULL);
    rc = run_cmd(cerr, sizeof cerr);
    ok(rc == TUNE_EXIT_USAGE && strstr(cerr, "head_dim_qk=72") &&
       one_line(cerr), "space: an unsupported head dim is one line, exit 2");
    parse("tune", "--preset", "fa-grid", "--shard", "0/40", "--dry-run",
          "--arch", "sm_90a", "--max-trials", "1", NULL);
    A.shard_index = 39;                 /* a shard with no problem */
    rc = run_cmd(cerr, sizeof cerr);
    ok(rc == TUNE_EXIT_OK && strstr(cerr, "shard 39/40 has no problems"),
       "an empty shard says so and succeeds");
    {
        char missing[160];
        snprintf(missing, sizeof missing, "%s/none.db", dir);
        parse("show", "--db", missing, NULL);
        rc = run_cmd(cerr, sizeof cerr);
        ok(rc == TUNE_EXIT_FAIL && strstr(cerr, "no database at") &&
           one_line(cerr), "show: a missing database is one line, exit 1");
        parse("merge", missing, "--db", dbpath, NULL);
        rc = run_cmd(cerr, sizeof cerr);
        ok(rc == TUNE_EXIT_FAIL && strstr(cerr, "merge:") &&
           strstr(cerr, "none.db") && one_line(cerr),
           "merge: a missing file is named, exit 1");
        parse("import", "/proc/fa4-none.json", "--db",
              "/proc/fa4-no-such-dir/x.db", NULL);
        rc = run_cmd(cerr, sizeof cerr);
        ok(rc == TUNE_EXIT_FAIL && strstr(cerr, "cannot write the database") &&
           one_line(cerr), "import: an unwritable database is one line");
    }
    unlink(dbpath);
    {
        char path[160];
        snprintf(path, sizeof path, "%s/t.db-wal", dir); unlink(path);
        snprintf(path, sizeof path, "%s/t.db-shm", dir); unlink(path);
    }
    rmdir(dir);
    return done_testing();
}
