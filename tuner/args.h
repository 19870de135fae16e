/*
** args.h -- fa4-tune's command line: the subcommand and its options parsed
** into one struct, with a precise one-line message for every mistake.
** Parsing runs nothing (no device, no database), so tests call it freely.
*/
#ifndef FA4_TUNE_ARGS_H
#define FA4_TUNE_ARGS_H

#include <stddef.h>
#include "fa4.h"

#define TUNE_MAX_DEVICES 64

typedef enum tune_cmd {
    TUNE_CMD_NONE = 0,
    TUNE_CMD_TUNE,      /* measure configs, store winners */
    TUNE_CMD_SPACE,     /* print the config space (no GPU) */
    TUNE_CMD_SHOW,      /* database subcommands */
    TUNE_CMD_EXPORT,
    TUNE_CMD_IMPORT,
    TUNE_CMD_MERGE,
    TUNE_CMD_CHECK,
    TUNE_CMD_HELP,
    TUNE_CMD_VERSION,
    TUNE_CMD_VERIFY,    /* re-time stored winners against the heuristic */
    TUNE_CMD_CODES,     /* print the stored winners' machine-code hashes */
    TUNE_CMD_REHASH     /* stale winners whose code is unchanged made current */
} tune_cmd;

typedef enum tune_strategy {
    TUNE_STRATEGY_EXHAUSTIVE = 0,   /* time every candidate that fits */
    TUNE_STRATEGY_COARSE = 1        /* time a coarse subset, refine the best */
} tune_strategy;

/* Bits of tune_args.shape_set: which shape options were given. */
enum {
    TUNE_SHAPE_DTYPE = 1 << 0,
    TUNE_SHAPE_BATCH = 1 << 1,
    TUNE_SHAPE_SEQLEN_Q = 1 << 2,
    TUNE_SHAPE_SEQLEN_K = 1 << 3,
    TUNE_SHAPE_HEADS_Q = 1 << 4,
    TUNE_SHAPE_HEADS_KV = 1 << 5,
    TUNE_SHAPE_HEAD_DIM = 1 << 6,
    TUNE_SHAPE_HEAD_DIM_V = 1 << 7,
    TUNE_SHAPE_CAUSAL = 1 << 8,
    TUNE_SHAPE_WINDOW = 1 << 9,
    TUNE_SHAPE_LSE = 1 << 10,
    TUNE_SHAPE_VARLEN = 1 << 11,
    TUNE_SHAPE_PAGE_SIZE = 1 << 12,
    TUNE_SHAPE_SOFTCAP = 1 << 13,
    TUNE_SHAPE_SINKS = 1 << 14
};

/* The shape options that also apply to every row of a preset (and may
** not be combined with a problem file, whose rows set them). */
#define TUNE_SHAPE_MODIFIERS (TUNE_SHAPE_DTYPE | TUNE_SHAPE_LSE | \
                              TUNE_SHAPE_VARLEN | TUNE_SHAPE_PAGE_SIZE | \
                              TUNE_SHAPE_SOFTCAP | TUNE_SHAPE_SINKS)

typedef struct tune_args {
    tune_cmd cmd;
    const char *cmd_name;       /* "tune", "space", ... as typed */

    /* What to tune: exactly one of a preset, a file, or a shape. */
    const char *preset;
    const char *problems_file;
    unsigned shape_set;         /* TUNE_SHAPE_* bits */
    fa4_problem shape;          /* the shape options, defaults filled */

    /* Where. */
    int device;                 /* --device N (default 0) */
    int device_set;
    int devices[TUNE_MAX_DEVICES];
    int ndevices;               /* --devices list; 0: just .device */
    int all_devices;            /* --devices all */
    int shard_index, shard_count;   /* --shard i/N (default 0/1) */

    /* Bounds and search. */
    double time_budget_s;       /* --time-budget (default 600; 0: none) */
    int max_trials;             /* --max-trials per problem (0: no limit) */
    tune_strategy strategy;
    int jobs;                   /* -j (0: number of online cores) */
    int reps;                   /* launches per event pair, at least
                                   (default 10; more when a group would
                                   last under 0.5 ms) */
    int groups;                 /* event pairs per measurement (default 5) */
    int l2_warm;                /* --l2 warm: no input rotation */
    int retime;                 /* re-time the top N (default 3) */
    int confirm_rounds;         /* --confirm N: winner/default rounds
                                   (default 6; 0: store without) */
    unsigned long long seed;    /* verification inputs (0: from the clock) */
    int seed_set;

    /* Output and database. */
    const char *db_path;        /* --db (NULL: the default path) */
    int json;                   /* --json (tune, space, show) */
    int quiet;
    int dry_run;
    const char *arch;           /* --arch sm_90a (space, --dry-run) */
    fa4_family family;          /* --family (0: every family the arch runs) */
    const char *file;           /* export --json FILE, import FILE, merge DB,
                                   rehash CODES */
    const char *table;          /* show --table (default "winners") */
    int system;                 /* show --system: the system database */
    int trials;                 /* export --trials: every trial too */
    int drop;                   /* verify --drop: remove what fails */
} tune_args;

/*
** Parse ARGV (ARGV[0] is the program name) into *OUT.  Returns 0, or -1
** with a one-line message in ERR ("tune: --batch: 'x' is not an integer").
** No device or file is touched; presets are checked by name only.
*/
int tune_args_parse(tune_args *out, int argc, char *const argv[], char *err,
                    size_t err_size);

/* The usage text printed by --help. */
const char *tune_args_usage(void);

/* Parse "bf16"/"fp16" into *OUT; 0 or -1. */
int tune_args_dtype(fa4_dtype *out, const char *text);

/* The short name of DTYPE ("bf16"). */
const char *tune_dtype_name(fa4_dtype dtype);

/* Format the error into ERR (SIZE bytes) and return -1; shared by the
** tuner's parsers. */
int tune_fail(char *err, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
