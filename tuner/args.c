/*
** args.c -- parse fa4-tune's command line into a tune_args.  Every error
** is one line naming the subcommand, the option and the bad value.
*/
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "problems.h"

/* Subcommand bits, for the table of which option each accepts. */
#define C_TUNE   (1u << TUNE_CMD_TUNE)
#define C_SPACE  (1u << TUNE_CMD_SPACE)
#define C_SHOW   (1u << TUNE_CMD_SHOW)
#define C_EXPORT (1u << TUNE_CMD_EXPORT)
#define C_IMPORT (1u << TUNE_CMD_IMPORT)
#define C_MERGE  (1u << TUNE_CMD_MERGE)
#define C_CHECK  (1u << TUNE_CMD_CHECK)
#define C_VERIFY (1u << TUNE_CMD_VERIFY)
#define C_CODES  (1u << TUNE_CMD_CODES)
#define C_REHASH (1u << TUNE_CMD_REHASH)
#define C_DB     (C_SHOW | C_EXPORT | C_IMPORT | C_MERGE | C_CHECK | C_CODES | C_REHASH)
#define C_ALL    (C_TUNE | C_SPACE | C_DB | C_VERIFY)

enum opt_id {
    O_PRESET, O_PROBLEMS, O_DTYPE, O_BATCH, O_SEQLEN_Q, O_SEQLEN_K,
    O_HEADS_Q, O_HEADS_KV, O_HEAD_DIM, O_HEAD_DIM_V, O_CAUSAL, O_WINDOW,
    O_RETURN_LSE, O_VARLEN, O_PAGE_SIZE, O_SOFTCAP, O_SINKS, O_DEVICE,
    O_DEVICES, O_SHARD, O_TIME_BUDGET, O_MAX_TRIALS, O_STRATEGY, O_JOBS, O_REPS, O_GROUPS, O_L2, O_RETIME, O_CONFIRM, O_SEED,
    O_DB, O_JSON, O_QUIET, O_DRY_RUN, O_ARCH, O_FAMILY, O_TABLE, O_SYSTEM,
    O_TRIALS, O_DROP, O_HELP
};

typedef struct opt_spec {
    const char *name;     /* "--batch" */
    int has_arg;          /* 1: takes a value; 2: takes one for export only */
    unsigned cmds;        /* subcommands that accept it */
    enum opt_id id;
} opt_spec;

static const opt_spec options[] = {
    { "--preset", 1, C_TUNE, O_PRESET },
    { "--problems", 1, C_TUNE, O_PROBLEMS },
    { "--dtype", 1, C_TUNE | C_SPACE, O_DTYPE },
    { "--batch", 1, C_TUNE | C_SPACE, O_BATCH },
    { "--seqlen-q", 1, C_TUNE | C_SPACE, O_SEQLEN_Q },
    { "--seqlen-k", 1, C_TUNE | C_SPACE, O_SEQLEN_K },
    { "--heads-q", 1, C_TUNE | C_SPACE, O_HEADS_Q },
    { "--heads-kv", 1, C_TUNE | C_SPACE, O_HEADS_KV },
    { "--head-dim", 1, C_TUNE | C_SPACE, O_HEAD_DIM },
    { "--head-dim-v", 1, C_TUNE | C_SPACE, O_HEAD_DIM_V },
    { "--causal", 0, C_TUNE | C_SPACE, O_CAUSAL },
    { "--window", 1, C_TUNE | C_SPACE, O_WINDOW },
    { "--return-lse", 0, C_TUNE | C_SPACE, O_RETURN_LSE },
    { "--varlen", 0, C_TUNE | C_SPACE, O_VARLEN },
    { "--page-size", 1, C_TUNE | C_SPACE, O_PAGE_SIZE },
    { "--softcap", 1, C_TUNE | C_SPACE, O_SOFTCAP },
    { "--sinks", 0, C_TUNE | C_SPACE, O_SINKS },
    { "--device", 1, C_TUNE | C_SPACE | C_VERIFY, O_DEVICE },
    { "--devices", 1, C_TUNE, O_DEVICES },
    { "--shard", 1, C_TUNE, O_SHARD },
    { "--time-budget", 1, C_TUNE, O_TIME_BUDGET },
    { "--max-trials", 1, C_TUNE, O_MAX_TRIALS },
    { "--strategy", 1, C_TUNE, O_STRATEGY },
    { "--jobs", 1, C_TUNE, O_JOBS },
    { "-j", 1, C_TUNE, O_JOBS },
    { "--reps", 1, C_TUNE | C_VERIFY, O_REPS },
    { "--groups", 1, C_TUNE, O_GROUPS },
    { "--l2", 1, C_TUNE | C_VERIFY, O_L2 },
    { "--retime", 1, C_TUNE, O_RETIME },
    { "--confirm", 1, C_TUNE | C_VERIFY, O_CONFIRM },
    { "--seed", 1, C_TUNE | C_VERIFY, O_SEED },
    { "--db", 1, C_TUNE | C_DB | C_VERIFY, O_DB },
    { "--json", 2, C_TUNE | C_SPACE | C_SHOW | C_EXPORT | C_VERIFY, O_JSON },
    { "--quiet", 0, C_ALL, O_QUIET },
    { "-q", 0, C_ALL, O_QUIET },
    { "--dry-run", 0, C_TUNE, O_DRY_RUN },
    { "--arch", 1, C_TUNE | C_SPACE, O_ARCH },
    { "--family", 1, C_TUNE | C_SPACE, O_FAMILY },
    { "--table", 1, C_SHOW, O_TABLE },
    { "--system", 0, C_SHOW, O_SYSTEM },
    { "--trials", 0, C_EXPORT, O_TRIALS },
    { "--drop", 0, C_VERIFY, O_DROP },
    { "--help", 0, C_ALL, O_HELP },
    { "-h", 0, C_ALL, O_HELP },
};

static const struct { const char *name; tune_cmd cmd; } commands[] = {
    { "tune", TUNE_CMD_TUNE }, { "space", TUNE_CMD_SPACE },
    { "show", TUNE_CMD_SHOW }, { "export", TUNE_CMD_EXPORT },
    { "import", TUNE_CMD_IMPORT }, { "merge", TUNE_CMD_MERGE },
    { "check", TUNE_CMD_CHECK }, { "verify", TUNE_CMD_VERIFY },
    { "codes", TUNE_CMD_CODES }, { "rehash", TUNE_CMD_REHASH },
    { "help", TUNE_CMD_HELP },
};

/* Format the error into ERR and return -1.  Shared with problems.c. */
int tune_fail(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return -1;
}

/* Parse TEXT as a whole decimal integer in [LO, HI]; 0 or -1. */
static int parse_int(int *out, const char *text, long lo, long hi)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* Parse a duration: seconds, or a number with s, m or h; 0 or -1. */
static int parse_seconds(double *out, const char *text)
{
    char *end;
    double v, mult = 1;

    errno = 0;
    v = strtod(text, &end);
    if (errno || end == text || !isfinite(v) || v < 0)
        return -1;
    if (*end == 's')
        end++;
    else if (*end == 'm')
        mult = 60, end++;
    else if (*end == 'h')
        mult = 3600, end++;
    if (*end != '\0')
        return -1;
    *out = v * mult;
    return 0;
}

int tune_args_dtype(fa4_dtype *out, const char *text)
{
    if (strcmp(text, "bf16") == 0)
        *out = FA4_DTYPE_BF16;
    else if (strcmp(text, "fp16") == 0)
        *out = FA4_DTYPE_FP16;
    else if (strcmp(text, "fp8") == 0 || strcmp(text, "fp8_e4m3") == 0)
        *out = FA4_DTYPE_FP8_E4M3;
    else
        return -1;
    return 0;
}

const char *tune_dtype_name(fa4_dtype dtype)
{
    switch (dtype) {
    case FA4_DTYPE_BF16: return "bf16";
    case FA4_DTYPE_FP16: return "fp16";
    case FA4_DTYPE_FP8_E4M3: return "fp8";
    }
    return "?";
}

/* Parse "0,1,3" or "all" into A; 0 or -1 with ERR. */
static int parse_devices(tune_args *a, const char *text, char *err,
                         size_t size)
{
    const char *p = text;

    if (strcmp(text, "all") == 0) {
        a->all_devices = 1;
        return 0;
    }
    a->ndevices = 0;
    while (*p) {
        char item[32];
        size_t n = strcspn(p, ",");
        int d, i;

        if (n == 0 || n >= sizeof item)
            return tune_fail(err, size, "--devices: '%s' is not a list of device "
                             "ordinals (e.g. 0,1) or 'all'", text);
        memcpy(item, p, n);
        item[n] = '\0';
        if (parse_int(&d, item, 0, 1023) != 0)
            return tune_fail(err, size, "--devices: '%s' in '%s' is not a device "
                             "ordinal (0, 1, ...)", item, text);
        for (i = 0; i < a->ndevices; i++)
            if (a->devices[i] == d)
                return tune_fail(err, size, "--devices: device %d is listed twice "
                                 "in '%s'", d, text);
        if (a->ndevices == TUNE_MAX_DEVICES)
            return tune_fail(err, size, "--devices: more than %d devices in '%s'",
                             TUNE_MAX_DEVICES, text);
        a->devices[a->ndevices++] = d;
        p += n;
        if (*p == ',') {
            p++;
            if (*p == '\0')
                return tune_fail(err, size, "--devices: '%s' ends with a comma",
                                 text);
        }
    }
    if (a->ndevices == 0)
        return tune_fail(err, size, "--devices: empty list; give ordinals (0,1) "
                         "or 'all'");
    return 0;
}

/* Parse "i/N" with 0 <= i < N; 0 or -1 with ERR. */
static int parse_shard(tune_args *a, const char *text, char *err, size_t size)
{
    char buf[64];
    char *slash;
    int i, n;

    if (strlen(text) >= sizeof buf || !(slash = strchr(strcpy(buf, text), '/')))
        return tune_fail(err, size, "--shard: '%s' is not of the form i/N "
                         "(e.g. 0/4)", text);
    *slash = '\0';
    if (parse_int(&i, buf, 0, INT_MAX) != 0 ||
        parse_int(&n, slash + 1, 1, INT_MAX) != 0)
        return tune_fail(err, size, "--shard: '%s' is not of the form i/N with "
                         "integers i >= 0 and N >= 1", text);
    if (i >= n)
        return tune_fail(err, size, "--shard: '%s' needs 0 <= i < N (shards are "
                         "numbered from 0, as SLURM_ARRAY_TASK_ID is with "
                         "--array=0-%d)", text, n - 1);
    a->shard_index = i;
    a->shard_count = n;
    return 0;
}

/* Parse "L,R" into the window; 0 or -1 with ERR. */
static int parse_window(tune_args *a, const char *text, char *err,
                        size_t size)
{
    char buf[64];
    char *comma;
    int l, r;

    if (strlen(text) >= sizeof buf || !(comma = strchr(strcpy(buf, text), ',')))
        return tune_fail(err, size, "--window: '%s' is not of the form L,R "
                         "(e.g. 4096,0; -1 = unbounded)", text);
    *comma = '\0';
    if (parse_int(&l, buf, -1, INT_MAX) != 0 ||
        parse_int(&r, comma + 1, -1, INT_MAX) != 0)
        return tune_fail(err, size, "--window: '%s' needs two integers >= -1 "
                         "(-1 = unbounded)", text);
    a->shape.window_left = l;
    a->shape.window_right = r;
    return 0;
}

/* Parse a page size: a power of two, as fa4_problem.page_size takes
** (1 .. 2^20); 0 or -1 with ERR. */
static int parse_page_size(int *out, const char *text, char *err, size_t size)
{
    int v;

    if (parse_int(&v, text, 0, INT_MAX) != 0)
        return tune_fail(err, size, "--page-size: '%s' is not a page size; give "
                         "the rows per page, a power of two such as 16", text);
    if (v == 0)
        return tune_fail(err, size, "--page-size: 0 is not a page size; give a "
                         "power of two such as 16 (without --page-size, K and "
                         "V are contiguous)");
    if ((v & (v - 1)) != 0 || v > (1 << 20))
        return tune_fail(err, size, "--page-size: %d is not a power of two from 1 "
                         "to 1048576 (vLLM's default is 16)", v);
    *out = v;
    return 0;
}

/* Parse a softcap: a finite number above 0, as fa4_problem.softcap takes
** it (a float); 0 or -1 with ERR. */
static int parse_softcap(float *out, const char *text, char *err, size_t size)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(text, &end);
    if (errno || end == text || *end != '\0' || !isfinite(v))
        return tune_fail(err, size, "--softcap: '%s' is not a number; give the "
                         "cap, e.g. 50 (Gemma 2)", text);
    if (v < 0)
        return tune_fail(err, size, "--softcap: %s is negative; the cap is a "
                         "number above 0, e.g. 50", text);
    if (v == 0)
        return tune_fail(err, size, "--softcap: 0 is no cap; give a number "
                         "above 0 (without --softcap, scores are not capped)");
    if (!isfinite((float)v) || (float)v <= 0)
        return tune_fail(err, size, "--softcap: %s does not fit a float above 0",
                         text);
    *out = (float)v;
    return 0;
}

/* Parse "sm80"/"sm90"/"sm100" (also 80, 90, 100); 0 or -1. */
static int parse_family(fa4_family *out, const char *text)
{
    if (!strcmp(text, "sm80") || !strcmp(text, "80"))
        *out = FA4_FAMILY_SM80;
    else if (!strcmp(text, "sm90") || !strcmp(text, "90"))
        *out = FA4_FAMILY_SM90;
    else if (!strcmp(text, "sm100") || !strcmp(text, "100"))
        *out = FA4_FAMILY_SM100;
    else
        return -1;
    return 0;
}

/* Find the option NAME; NULL when unknown. */
static const opt_spec *find_option(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof options / sizeof options[0]; i++)
        if (strcmp(options[i].name, name) == 0)
            return &options[i];
    return NULL;
}

/* Apply option O with VALUE (NULL for flags) to A; 0 or -1 with ERR. */
static int apply_option(tune_args *a, const opt_spec *o, const char *value,
                        char *err, size_t size)
{
    const char *n = o->name;
    fa4_problem *s = &a->shape;

    switch (o->id) {
    case O_PRESET:
        if (!problems_preset_exists(value))
            return tune_fail(err, size, "--preset: unknown preset '%s'; known: %s",
                             value, problems_preset_list());
        a->preset = value;
        return 0;
    case O_PROBLEMS:
        a->problems_file = value;
        return 0;
    case O_DTYPE:
        if (tune_args_dtype(&s->dtype, value) != 0)
            return tune_fail(err, size, "--dtype: '%s' is not a dtype; use bf16, "
                             "fp16 or fp8", value);
        a->shape_set |= TUNE_SHAPE_DTYPE;
        return 0;
    case O_BATCH:
    case O_SEQLEN_Q:
    case O_SEQLEN_K:
    case O_HEADS_Q:
    case O_HEADS_KV:
    case O_HEAD_DIM:
    case O_HEAD_DIM_V: {
        int v;
        if (parse_int(&v, value, 1, INT_MAX) != 0)
            return tune_fail(err, size, "%s: '%s' is not a positive integer", n,
                             value);
        switch (o->id) {
        case O_BATCH: s->batch = v; a->shape_set |= TUNE_SHAPE_BATCH; break;
        case O_SEQLEN_Q: s->seqlen_q = v; a->shape_set |= TUNE_SHAPE_SEQLEN_Q; break;
        case O_SEQLEN_K: s->seqlen_k = v; a->shape_set |= TUNE_SHAPE_SEQLEN_K; break;
        case O_HEADS_Q: s->heads_q = v; a->shape_set |= TUNE_SHAPE_HEADS_Q; break;
        case O_HEADS_KV: s->heads_kv = v; a->shape_set |= TUNE_SHAPE_HEADS_KV; break;
        case O_HEAD_DIM: s->head_dim_qk = v; a->shape_set |= TUNE_SHAPE_HEAD_DIM; break;
        default: s->head_dim_v = v; a->shape_set |= TUNE_SHAPE_HEAD_DIM_V; break;
        }
        return 0;
    }
    case O_CAUSAL:
        s->causal = 1;
        a->shape_set |= TUNE_SHAPE_CAUSAL;
        return 0;
    case O_WINDOW:
        a->shape_set |= TUNE_SHAPE_WINDOW;
        return parse_window(a, value, err, size);
    case O_RETURN_LSE:
        s->return_lse = 1;
        a->shape_set |= TUNE_SHAPE_LSE;
        return 0;
    case O_VARLEN:
        s->varlen = 1;
        a->shape_set |= TUNE_SHAPE_VARLEN;
        return 0;
    case O_PAGE_SIZE:
        a->shape_set |= TUNE_SHAPE_PAGE_SIZE;
        return parse_page_size(&s->page_size, value, err, size);
    case O_SOFTCAP:
        a->shape_set |= TUNE_SHAPE_SOFTCAP;
        return parse_softcap(&s->softcap, value, err, size);
    case O_SINKS:
        s->attention_sinks = 1;
        a->shape_set |= TUNE_SHAPE_SINKS;
        return 0;
    case O_DEVICE:
        if (parse_int(&a->device, value, 0, 1023) != 0)
            return tune_fail(err, size, "--device: '%s' is not a device ordinal "
                             "(0, 1, ...)", value);
        a->device_set = 1;
        return 0;
    case O_DEVICES:
        return parse_devices(a, value, err, size);
    case O_SHARD:
        return parse_shard(a, value, err, size);
    case O_TIME_BUDGET:
        if (parse_seconds(&a->time_budget_s, value) != 0)
            return tune_fail(err, size, "--time-budget: '%s' is not a duration "
                             "(seconds, or with s/m/h: 90, 10m, 2h; 0 = none)",
                             value);
        return 0;
    case O_MAX_TRIALS:
        if (parse_int(&a->max_trials, value, 1, INT_MAX) != 0)
            return tune_fail(err, size, "--max-trials: '%s' is not a positive "
                             "integer", value);
        return 0;
    case O_STRATEGY:
        if (strcmp(value, "exhaustive") == 0)
            a->strategy = TUNE_STRATEGY_EXHAUSTIVE;
        else if (strcmp(value, "coarse") == 0)
            a->strategy = TUNE_STRATEGY_COARSE;
        else
            return tune_fail(err, size, "--strategy: '%s' is not a strategy; use "
                             "exhaustive or coarse", value);
        return 0;
    case O_JOBS:
        if (parse_int(&a->jobs, value, 1, 1024) != 0)
            return tune_fail(err, size, "%s: '%s' is not a thread count "
                             "(1..1024)", n, value);
        return 0;
    case O_REPS:
        if (parse_int(&a->reps, value, 1, 100000) != 0)
            return tune_fail(err, size, "--reps: '%s' is not a launch count "
                             "(1..100000 launches per event pair)", value);
        return 0;
    case O_GROUPS:
        if (parse_int(&a->groups, value, 3, 1000) != 0)
            return tune_fail(err, size, "--groups: '%s' must be an integer "
                             "from 3 to 1000 (the median is over the groups)",
                             value);
        return 0;
    case O_L2:
        if (strcmp(value, "rotate") == 0)
            a->l2_warm = 0;
        else if (strcmp(value, "warm") == 0)
            a->l2_warm = 1;
        else
            return tune_fail(err, size, "--l2: '%s' is not a cache policy; use "
                             "rotate (inputs from DRAM, the default) or warm",
                             value);
        return 0;
    case O_CONFIRM:
        if (parse_int(&a->confirm_rounds, value, 0, 1000) != 0 ||
            a->confirm_rounds == 1 || a->confirm_rounds == 2)
            return tune_fail(err, size, "--confirm: '%s' is not a round count "
                             "(0: no confirmation, else 3..1000)", value);
        return 0;
    case O_RETIME:
        if (parse_int(&a->retime, value, 0, 1000) != 0)
            return tune_fail(err, size, "--retime: '%s' is not a count (0..1000)",
                             value);
        return 0;
    case O_SEED: {
        char *end;
        errno = 0;
        a->seed = strtoull(value, &end, 0);
        if (errno || end == value || *end != '\0' || value[0] == '-')
            return tune_fail(err, size, "--seed: '%s' is not an unsigned integer",
                             value);
        a->seed_set = 1;
        return 0;
    }
    case O_DB:
        if (value[0] == '\0')
            return tune_fail(err, size, "--db: empty path");
        a->db_path = value;
        return 0;
    case O_JSON:
        if (a->cmd == TUNE_CMD_EXPORT)
            a->file = value;
        else
            a->json = 1;
        return 0;
    case O_QUIET:
        a->quiet = 1;
        return 0;
    case O_DRY_RUN:
        a->dry_run = 1;
        return 0;
    case O_ARCH:
        if (strcmp(value, "sm_80") && strcmp(value, "sm_90a") &&
            strcmp(value, "sm_100a") && strcmp(value, "sm_90") &&
            strcmp(value, "sm_100") && strcmp(value, "80") &&
            strcmp(value, "90") && strcmp(value, "100"))
            return tune_fail(err, size, "--arch: '%s' is not an architecture; use "
                             "sm_80, sm_90a or sm_100a", value);
        a->arch = value;
        return 0;
    case O_FAMILY:
        if (parse_family(&a->family, value) != 0)
            return tune_fail(err, size, "--family: '%s' is not a kernel family; "
                             "use sm80, sm90 or sm100", value);
        return 0;
    case O_TABLE:
        if (strcmp(value, "winners") && strcmp(value, "trials") &&
            strcmp(value, "devices") && strcmp(value, "binaries"))
            return tune_fail(err, size, "--table: '%s' is not a table; use "
                             "winners, trials, devices or binaries", value);
        a->table = value;
        return 0;
    case O_SYSTEM:
        a->system = 1;
        return 0;
    case O_TRIALS:
        a->trials = 1;
        return 0;
    case O_DROP:
        a->drop = 1;
        return 0;
    case O_HELP:
        a->cmd = TUNE_CMD_HELP;
        return 0;
    }
    return 0;
}

/* The checks across options once all are read; 0 or -1 with ERR. */
static int check_combination(tune_args *a, char *err, size_t size)
{
    unsigned shape_only = a->shape_set & ~TUNE_SHAPE_MODIFIERS;
    fa4_problem *s = &a->shape;

    if (a->cmd == TUNE_CMD_TUNE) {
        int sources = (a->preset != NULL) + (a->problems_file != NULL) +
                      (shape_only != 0);
        if (sources > 1) {
            if (a->preset && a->problems_file)
                return tune_fail(err, size, "--preset and --problems cannot be "
                                 "combined; give one list of problems");
            return tune_fail(err, size, "shape options (--batch, --head-dim, ...) "
                             "cannot be combined with %s",
                             a->preset ? "--preset" : "--problems");
        }
        if (a->problems_file && (a->shape_set & TUNE_SHAPE_DTYPE))
            return tune_fail(err, size, "--dtype cannot be combined with "
                             "--problems; set \"dtype\" per problem in the file");
        if (a->problems_file && (a->shape_set & TUNE_SHAPE_LSE))
            return tune_fail(err, size, "--return-lse cannot be combined with "
                             "--problems; set \"return_lse\" per problem in "
                             "the file");
        if (a->problems_file && (a->shape_set & TUNE_SHAPE_VARLEN))
            return tune_fail(err, size, "--varlen cannot be combined with "
                             "--problems; set \"varlen\": true per problem in "
                             "the file");
        if (a->problems_file && (a->shape_set & TUNE_SHAPE_PAGE_SIZE))
            return tune_fail(err, size, "--page-size cannot be combined with "
                             "--problems; set \"page_size\" per problem in "
                             "the file");
        if (a->problems_file && (a->shape_set & TUNE_SHAPE_SOFTCAP))
            return tune_fail(err, size, "--softcap cannot be combined with "
                             "--problems; set \"softcap\" per problem in "
                             "the file");
        if (a->problems_file && (a->shape_set & TUNE_SHAPE_SINKS))
            return tune_fail(err, size, "--sinks cannot be combined with "
                             "--problems; set \"attention_sinks\": true per "
                             "problem in the file");
        if (sources == 0)
            return tune_fail(err, size, "no problem given; use --preset NAME, "
                             "--problems FILE.json, or --batch, --seqlen-q, "
                             "--heads-q and --head-dim");
        if (a->ndevices || a->all_devices) {
            if (a->device_set)
                return tune_fail(err, size, "--device and --devices cannot be "
                                 "combined");
            if (a->dry_run)
                return tune_fail(err, size, "--devices cannot be combined with "
                                 "--dry-run (nothing runs on a device)");
        }
        if (a->arch && !a->dry_run)
            return tune_fail(err, size, "--arch %s is only used with --dry-run; "
                             "tuning measures the GPU given by --device", a->arch);
    }
    if (a->cmd == TUNE_CMD_SPACE && !(a->shape_set & TUNE_SHAPE_HEAD_DIM))
        return tune_fail(err, size, "--head-dim is required (64, 96, 128, 192 "
                         "or 256)");
    if (shape_only && a->cmd == TUNE_CMD_TUNE) {
        static const struct { unsigned bit; const char *name; } req[] = {
            { TUNE_SHAPE_BATCH, "--batch" },
            { TUNE_SHAPE_SEQLEN_Q, "--seqlen-q" },
            { TUNE_SHAPE_HEADS_Q, "--heads-q" },
            { TUNE_SHAPE_HEAD_DIM, "--head-dim" },
        };
        size_t i;
        for (i = 0; i < sizeof req / sizeof req[0]; i++)
            if (!(a->shape_set & req[i].bit))
                return tune_fail(err, size, "%s is required with the shape "
                                 "options (or use --preset or --problems)",
                                 req[i].name);
    }
    /* Defaults of the shape: what `space` assumes when a size is absent. */
    if (!(a->shape_set & TUNE_SHAPE_BATCH))
        s->batch = 1;
    if (!(a->shape_set & TUNE_SHAPE_SEQLEN_Q))
        s->seqlen_q = 4096;
    if (!(a->shape_set & TUNE_SHAPE_SEQLEN_K))
        s->seqlen_k = s->seqlen_q;
    if (!(a->shape_set & TUNE_SHAPE_HEADS_Q))
        s->heads_q = 16;
    if (!(a->shape_set & TUNE_SHAPE_HEADS_KV))
        s->heads_kv = s->heads_q;
    if (s->causal && !(a->shape_set & TUNE_SHAPE_WINDOW))
        s->window_right = 0;
    if (a->cmd == TUNE_CMD_EXPORT && !a->file)
        return tune_fail(err, size, "a FILE is required: export --json FILE "
                         "('-' for standard output)");
    if (a->cmd == TUNE_CMD_REHASH && !a->file)
        return tune_fail(err, size, "a codes table is required: rehash CODES (fa4-tune "
                         "codes' output under the kernel sources the winners were tuned "
                         "with)");
    if ((a->cmd == TUNE_CMD_IMPORT || a->cmd == TUNE_CMD_MERGE) && !a->file)
        return tune_fail(err, size, "a %s is required: %s %s",
                         a->cmd == TUNE_CMD_IMPORT ? "FILE" : "database",
                         a->cmd_name,
                         a->cmd == TUNE_CMD_IMPORT ? "FILE.json" : "OTHER.db");
    return 0;
}

int tune_args_parse(tune_args *out, int argc, char *const argv[], char *err,
                    size_t err_size)
{
    tune_args a;
    fa4_problem init = FA4_PROBLEM_INIT;
    char sub[1024];
    size_t i;
    int k;

    memset(&a, 0, sizeof a);
    a.shape = init;
    a.shard_count = 1;
    a.time_budget_s = 600;
    a.reps = 10;
    a.groups = 5;
    a.retime = 3;
    a.confirm_rounds = 6;
    err[0] = '\0';

    if (argc < 2)
        return tune_fail(err, err_size, "no subcommand; use tune, space, verify, "
                         "show, export, import, merge, check, codes or rehash "
                         "(fa4-tune --help)");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        out->cmd = TUNE_CMD_HELP;
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        memset(out, 0, sizeof *out);
        out->cmd = TUNE_CMD_VERSION;
        return 0;
    }
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            a.cmd = commands[i].cmd, a.cmd_name = commands[i].name;
    if (a.cmd == TUNE_CMD_NONE) {
        if (argv[1][0] == '-')
            return tune_fail(err, err_size, "'%s' before the subcommand; write "
                             "fa4-tune SUBCOMMAND [options] (tune, space, verify, "
                             "show, export, import, merge, check, codes, rehash)", argv[1]);
        return tune_fail(err, err_size, "unknown subcommand '%s'; use tune, space, "
                         "verify, show, export, import, merge, check, codes or "
                         "rehash", argv[1]);
    }

    for (k = 2; k < argc; k++) {
        const char *arg = argv[k];
        const char *value = NULL;
        const opt_spec *o;
        char name[64];
        const char *eq;
        int takes;

        if (arg[0] != '-' || arg[1] == '\0') {
            /* Positional: the FILE of import/merge/export/rehash. */
            if ((a.cmd == TUNE_CMD_IMPORT || a.cmd == TUNE_CMD_MERGE ||
                 a.cmd == TUNE_CMD_EXPORT || a.cmd == TUNE_CMD_REHASH) && !a.file) {
                a.file = arg;
                continue;
            }
            snprintf(sub, sizeof sub, "%s: unexpected argument '%s'",
                     a.cmd_name, arg);
            return tune_fail(err, err_size, "%s", sub);
        }
        /* --name=value and -jN */
        eq = strchr(arg, '=');
        if (arg[1] != '-' && arg[1] == 'j' && arg[2] != '\0') {
            strcpy(name, "-j");
            value = arg + 2;
        } else if (eq && arg[1] == '-') {
            size_t len = (size_t)(eq - arg);
            if (len >= sizeof name)
                len = sizeof name - 1;
            memcpy(name, arg, len);
            name[len] = '\0';
            value = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", arg);
        }
        if (!(o = find_option(name)))
            return tune_fail(err, err_size, "%s: unknown option '%s' (fa4-tune "
                             "--help lists them)", a.cmd_name, name);
        if (!(o->cmds & (1u << a.cmd)))
            return tune_fail(err, err_size, "%s: %s is not an option of '%s'",
                             a.cmd_name, o->name, a.cmd_name);
        takes = o->has_arg == 1 || (o->has_arg == 2 && a.cmd == TUNE_CMD_EXPORT);
        if (takes && !value) {
            if (k + 1 >= argc)
                return tune_fail(err, err_size, "%s: %s needs a value", a.cmd_name,
                                 o->name);
            value = argv[++k];
        } else if (!takes && value) {
            return tune_fail(err, err_size, "%s: %s takes no value (got '%s')",
                             a.cmd_name, o->name, value);
        }
        if (apply_option(&a, o, value, sub, sizeof sub) != 0)
            return tune_fail(err, err_size, "%s: %s", a.cmd_name, sub);
        if (a.cmd == TUNE_CMD_HELP) {
            out->cmd = TUNE_CMD_HELP;
            return 0;
        }
    }
    if (check_combination(&a, sub, sizeof sub) != 0)
        return tune_fail(err, err_size, "%s: %s", a.cmd_name, sub);
    *out = a;
    return 0;
}

const char *tune_args_usage(void)
{
    return
"usage: fa4-tune SUBCOMMAND [options]\n"
"\n"
"  tune    measure kernel configs on the GPU and store the winners\n"
"    problems: --preset NAME | --problems FILE.json |\n"
"              --batch N --seqlen-q N [--seqlen-k N] --heads-q N [--heads-kv N]\n"
"              --head-dim N [--head-dim-v N] [--dtype bf16|fp16|fp8] [--causal]\n"
"              [--window L,R]\n"
"    serving:  --varlen (packed sequences, cu_seqlens)  --page-size N (paged\n"
"              K/V, N a power of two); with --preset: applied to every row\n"
"    scores:   --softcap X (cap > 0: X tanh(s / X))  --sinks (a sink logit\n"
"              per query head); with --preset: applied to every row\n"
"    devices:  --device N | --devices 0,1|all      work:  --shard i/N\n"
"    bounds:   --time-budget SECONDS (600; 0: none)  --max-trials N\n"
"              --strategy exhaustive|coarse  -j N (compile threads)\n"
"    timing:   --reps N (10 launches per event pair)  --groups N (5)\n"
"              --l2 rotate|warm  --retime N (3)  --confirm N (6 rounds;\n"
"              0: store the winner unconfirmed)  --seed N  [--return-lse]\n"
"    output:   --db PATH  --json  --quiet\n"
"    no GPU:   --dry-run [--arch sm_80|sm_90a|sm_100a] [--family sm90]\n"
"  space   print the config space: --head-dim N [shape and serving options]\n"
"          [--arch A] [--family F] [--json]\n"
"  verify  [--db PATH] [--device N] [--drop] [--confirm N] [--reps N]\n"
"          [--json]    re-time this device's stored winners against the\n"
"                      heuristic; --drop removes those that no longer win\n"
"  show    [--db PATH] [--table winners|trials|devices|binaries] [--system]\n"
"          [--json]                 list the database's rows\n"
"  export  --json FILE [--trials] [--db PATH]\n"
"                                   write winners as JSON ('-': stdout)\n"
"  import  FILE [--db PATH]         read winners from JSON\n"
"  merge   OTHER.db [--db PATH]     copy winners and trials from OTHER.db\n"
"  check   [--db PATH]              verify both databases\n"
"  codes   [--db PATH]              print each stored winner's machine-code\n"
"                                   hash under the kernel sources in use\n"
"  rehash  CODES [--db PATH]        stale winners whose machine code is the\n"
"                                   same as in CODES (codes' output under the\n"
"                                   sources they were tuned with) made current\n"
"\n"
"presets: fa-grid fa-grid-d128 llama3-8b llama3-70b mistral-7b gemma-d256\n"
"         deepseek-192-128 decode-llama3-8b decode-llama3-70b-tp8\n"
"         decode-llama3-8b-paged decode-llama3-70b-tp8-paged (page size 16)\n"
"         prefill-varlen-llama3-8b\n"
"environment: FA4_DB FA4_SYSTEM_DB FA4_KERNEL_DIR XDG_CACHE_HOME\n"
"See fa4-tune(1).\n";
}
