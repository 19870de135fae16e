/*
** search.h -- the tuner's search for one problem: enumerate every family's
** config space, drop what does not fit the budgets (counting why), compile
** the rest in parallel threads, drop variants that spill, check each
** candidate against the CPU reference on fresh random inputs at a small
** size of the same shape class, time the survivors, re-time the top few,
** and store every trial and the winner.  Without a GPU (dry run) it stops
** after the compiles and reports registers and spills per variant.
*/
#ifndef FA4_TUNE_SEARCH_H
#define FA4_TUNE_SEARCH_H

#include <signal.h>
#include <stdint.h>
#include "fa4.h"
#include "config.h"
#include "args.h"
#include "timing.h"

struct progress;

/* Set by the SIGINT handler: finish the current trial's write and stop. */
extern volatile sig_atomic_t search_stop;

/* Where a candidate got to. */
typedef enum trial_state {
    TRIAL_SKIPPED = 0,   /* not selected (strategy, --max-trials, budget) */
    TRIAL_FAILED,        /* failure[] says why */
    TRIAL_COMPILED,      /* plans built (or, dry run, compiled) */
    TRIAL_VERIFIED,      /* output matched the reference */
    TRIAL_TIMED          /* timing holds the measurement */
} trial_state;

typedef struct search_trial {
    fa4_config config;
    fa4_layout layout;
    int is_default;          /* the heuristic default of the shape */
    int selected;            /* chosen for the current round */
    int done;                /* went through a round already */
    trial_state state;
    char failure[640];       /* "compile: ...", "spill: 64 bytes", ... */
    int regs, spill_bytes;   /* from ptxas (dry run), -1 unknown */
    double compile_ms;
    double rel_err;
    timing_result timing;    /* first measurement */
    timing_result retimed;   /* re-timing of the top few (reps 0: none) */
    fa4_plan *plan;          /* full-size plan, while needed */
    fa4_plan *vplan;         /* verification-size plan, while needed */
} search_trial;

typedef struct search_result {
    fa4_problem problem;
    char name[64];
    int index;               /* the problem's index in the full list */
    double flops;
    /* the space */
    int considered;          /* configs enumerated, all families */
    int fit;                 /* passed the budget filter */
    config_drop drops[64];   /* why the others were dropped */
    int ndrops;
    char family_notes[256];  /* families that cannot run the problem */
    search_trial *trials;
    int ntrials;
    int default_index;       /* -1 when the default is not in the space */
    /* outcome counts */
    int compiled, compile_failed, spilled, wrong, launch_failed, timed;
    int winner;              /* index into trials, -1 when none */
    double winner_ms;        /* re-timed median when re-timed */
    int winner_stored;
    /* A winner already stored for this key (a repeat run): how it compares. */
    enum { PREVIOUS_NONE, PREVIOUS_SAME, PREVIOUS_WITHIN_SPREAD, PREVIOUS_OUTSIDE_SPREAD,
           PREVIOUS_NOT_MEASURED } previous;
    double previous_ms;      /* its median in this run, when measured */
    char previous_config[256];
    int cut;                 /* 1: stopped by --time-budget/--max-trials */
    char cut_reason[128];
    int interrupted;         /* 1: SIGINT */
    fa4_status status;       /* FA4_OK or why the problem failed as a whole */
    char error[1024];
} search_result;

typedef struct search_opts {
    int jobs;                /* compile threads (>= 1) */
    int max_trials;          /* per problem, 0: no limit */
    tune_strategy strategy;
    double deadline;         /* search_now() value to stop at; 0: none */
    int warmup;
    int reps;
    int retime;              /* re-time the top N */
    uint64_t seed;           /* verification inputs */
    fa4_family family;       /* 0: every family the device runs */
    int store;               /* 1: write trials and the winner */
} search_opts;

/* Seconds on a monotonic clock. */
double search_now(void);

/*
** Fill *R with PROBLEM's config space on DEV: every family's configs that
** fit (in enumeration order, the heuristic default first), and the counts
** dropped by reason.  FAMILY 0: every family DEV runs.  FA4_OK, or
** FA4_ENOTSUP/FA4_ENOMEM with R->error set.  Release with
** search_result_free().
*/
fa4_status search_space(search_result *r, const device_limits *dev,
                        const fa4_problem *problem, fa4_family family);

/*
** Mark the candidates of the first round: every one (exhaustive), or a
** coarse subset (stages 2 and every other bn value); then the first
** MAX_TRIALS (0: all).  Returns how many are selected.
*/
int search_select_first(search_result *r, tune_strategy strategy,
                        int max_trials);

/*
** Mark the refinement round around trial BEST: the configs equal to it
** but for bn (the neighbouring values) and stages, not yet tried; at most
** BUDGET of them (0: no limit).  Returns how many are selected.
*/
int search_select_refine(search_result *r, int best, int budget);

/*
** Dry run: compile the selected candidates for DEV->arch with NVRTC in
** OPTS->jobs threads and record registers, spills and compile time.
** No GPU is needed.  PROG (may be NULL) shows progress.
*/
fa4_status search_compile_only(search_result *r, const device_limits *dev,
                               const search_opts *opts, struct progress *prog);

/*
** The full search for R (from search_space) on CTX's GPU: both rounds of
** the strategy, verification, timing, re-timing, and (with OPTS->store)
** every trial and the winner written to CTX's database.  The calling
** thread must not have another CUDA context current.  Returns FA4_OK
** (even with no winner: R says why), or FA4_ECUDA/FA4_EDB/FA4_ENOMEM when
** the device or database can no longer be used (R->error).
*/
fa4_status search_tune(search_result *r, fa4_context *ctx,
                       const search_opts *opts, struct progress *prog);

/*
** The verification problem for PROBLEM: same dtype, head dims, GQA group,
** masking; batch 1, one KV head group (two when heads_kv > 1), seqlens
** about 257 and 300 (ragged against every tile size).
*/
fa4_problem search_verify_problem(const fa4_problem *problem);

/* The tolerance of the verification (relative Frobenius error). */
double search_tolerance(fa4_dtype dtype);

void search_result_free(search_result *r);

#endif
