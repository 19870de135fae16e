/*
** search.h -- the tuner's search for one problem: enumerate every family's
** config space, drop what does not fit the budgets (counting why), compile
** the rest in parallel threads, drop variants that spill, check each
** candidate against the CPU reference (lib/verify.c) on fresh random
** inputs of the same shape class and layout (varlen and paged ones with
** ragged sequences, tuner/layout.h), large enough that every CTA of a
** persistent grid walks several tiles, time the survivors through
** fa4_plan_create/fa4_forward (timing.h), re-time the top few, confirm the
** winner against its rival (the config in use, else the heuristic default)
** in an interleaved re-timing on fresh buffers, and store every trial and
** the winner -- or the rival when the winner's gain does not survive the
** confirmation.  Without a GPU
** (dry run) it stops after the compiles and reports registers and spills.
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
    int is_incumbent;        /* what a plan for the shape gets from the
                                database today (any lookup step, stale
                                included): always measured, so a re-tune
                                never stores a config slower than it
                                without timing both */
    int selected;            /* chosen for the current round */
    int done;                /* went through a round already */
    trial_state state;
    char failure[640];       /* "compile: ...", "spill: 64 bytes", ... */
    char key[17];            /* jit_key() of the full-size variant, "" unknown */
    int regs, spill_bytes;   /* from ptxas (dry run), -1 unknown */
    double compile_ms;       /* NVRTC, when this search compiled it */
    void *cubin;             /* built, not yet loaded (GPU runs) */
    size_t cubin_size;
    double rel_err;
    timing_result timing;    /* first measurement */
    timing_result retimed;   /* re-timing of the top few (reps 0: none) */
    fa4_plan *plan;          /* full-size plan, while needed */
    fa4_plan *vplan;         /* verification-size plan, while needed */
} search_trial;

/* Trial T's most recent measurement: the re-timing when there is one. */
static inline const timing_result *search_trial_timing(const search_trial *t)
{
    return t->retimed.reps > 0 ? &t->retimed : &t->timing;
}

/* The median to rank T by (search_trial_timing()'s). */
static inline double search_trial_ms(const search_trial *t)
{
    return search_trial_timing(t)->median_ms;
}

/*
** Where a search's time went, in seconds.  The first five are the wall
** time of the thread that runs the search (search_tune's caller) and add
** up to nearly all of it; the rest are summed over its compile threads,
** which run alongside (so they may exceed the wall time).
*/
typedef struct search_phases {
    double prepare;          /* verification inputs and reference, timing
                                buffers: host work and uploads */
    double waiting;          /* for a candidate's build (the GPU idle) */
    double loading;          /* plans from the builds: modules loaded */
    double timing;           /* on the GPU: verification, timing,
                                re-timing, confirmation */
    double database;         /* trials and the winner written, the
                                previous winner looked up */
    double compile;          /* NVRTC, summed over the compile threads */
    double slot_wait;        /* compile threads waiting for a slot */
    double shared_wait;      /* waiting for another thread's build of the
                                same variant */
    double cache_io;         /* cubins read from and written to the
                                database's binary cache */
    int compiles;            /* NVRTC compiles run for this search */
    int reused;              /* variants built earlier in this process, or
                                found in the binary cache */
} search_phases;

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
    int winner;              /* the search's fastest: index into trials, -1 */
    double winner_ms;        /* its re-timed median when re-timed */
    /* The confirmation: winner and rival (search_rival(): the config in
       use when it is another, else the default) re-timed in alternation
       (ABAB.., fresh buffers); the winner is stored only when it is
       faster in every round (timing_pair_verdict), else the rival.  A
       winning default with no other config in use, or a winning config
       in use, has no rival and is stored as it is. */
    enum { CONFIRM_NOT_RUN, CONFIRM_HELD, CONFIRM_REJECTED,
           CONFIRM_DEFAULT_WON, CONFIRM_NO_DEFAULT, CONFIRM_IN_USE_WON } confirm;
    int rival_index;         /* the trial confirmed against, -1: none */
    double confirm_ms;       /* the winner's median over the rounds */
    double confirm_rival_ms;
    double confirm_gain;     /* median per-round rival / winner - 1 */
    double confirm_gain_lo, confirm_gain_hi;   /* the per-round range */
    double confirm_spread;   /* max of the two (max - min) / median */
    int confirm_wins;        /* rounds the winner was faster in */
    int confirm_rounds;
    int stored_index;        /* the trial stored as winner (-1: none): the
                                winner, or the default when rejected */
    double stored_ms;        /* the median stored with it */
    int winner_stored;       /* a winner row was written (stored_index) */
    /* A winner already stored for this key (a repeat run): how it compares. */
    enum { PREVIOUS_NONE, PREVIOUS_SAME, PREVIOUS_WITHIN_SPREAD, PREVIOUS_OUTSIDE_SPREAD,
           PREVIOUS_NOT_MEASURED } previous;
    double previous_ms;      /* its median in this run, when measured */
    fa4_config in_use;       /* what the database gave a plan for the
                                problem as the search began (the incumbent) */
    fa4_config_source in_use_source;   /* its lookup step; 0: none */
    char previous_config[256];
    int cut;                 /* 1: stopped by --time-budget/--max-trials */
    char cut_reason[128];
    int interrupted;         /* 1: SIGINT */
    fa4_status status;       /* FA4_OK or why the problem failed as a whole */
    char error[1024];
    double seconds;          /* search_tune's wall time */
    search_phases phases;
} search_result;

typedef struct search_opts {
    int jobs;                /* compile threads (>= 1) */
    int max_trials;          /* per problem, 0: no limit */
    tune_strategy strategy;
    double deadline;         /* search_now() value to stop at; 0: none */
    int warmup;
    int reps;                /* launches per group, at least */
    int groups;              /* groups (event pairs) per measurement */
    timing_l2 l2;            /* inputs rotated beyond L2, or warm */
    int retime;              /* re-time the top N */
    int confirm_rounds;      /* winner/default pairs in the confirmation
                                (0: no confirmation, store the winner) */
    uint64_t seed;           /* verification inputs */
    fa4_family family;       /* 0: every family the device runs */
    int store;               /* 1: write trials and the winner */
} search_opts;

/* Seconds on a monotonic clock. */
double search_now(void);

/*
** Fill *R with PROBLEM's config space on DEV: every family's configs that
** fit (the heuristic default first, then the others by how many fields
** differ from it and, at equal count, how far bn is: a round cut short
** measures the default's neighbours first), and the counts dropped by
** reason.  FAMILY 0: every family DEV runs.  FA4_OK, or
** FA4_ENOTSUP/FA4_ENOMEM with R->error set.  Release with
** search_result_free().
*/
fa4_status search_space(search_result *r, const device_limits *dev,
                        const fa4_problem *problem, fa4_family family);

/*
** Mark CUR, the config the database gives a plan for R's problem today
** (any lookup step, stale rows included), as the incumbent, adding it when
** the space lacks it (another kernel version's tile) if it fits DEV, and
** move it next to the heuristic default: the first round then measures it
** whatever the strategy or max_trials, so a re-tune never replaces it
** without racing it (a coarse re-tune once stored a winner 3% slower than
** the stale row it replaced, which it never timed).  Returns its index, or
** -1 when its family is not searched or it does not fit.
*/
int search_add_incumbent(search_result *r, const fa4_config *cur,
                         const device_limits *dev);

/*
** What the winner BEST must beat to be stored: the config in use when it
** was measured and is neither the winner nor the default (a re-tune then
** replaces it only with a gain that holds over it), else the default when
** it was measured and is not the winner; -1 when neither.
*/
int search_rival(const search_result *r, int best);

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
** every trial and the winner written to CTX's database.  A round's
** candidates are compiled in OPTS->jobs threads (builds.h: slots and
** variants shared with the other devices' searches) while this thread
** loads, verifies and times each as soon as it is built, in order; the
** modules are loaded here, between measurements, and the round's trials
** are written in one transaction at its end, so nothing on the GPU waits
** for a database lock.  The calling thread must not have another CUDA
** context current.  Returns FA4_OK (even with no winner: R says why), or
** FA4_ECUDA/FA4_EDB/FA4_ENOMEM when the device or database can no longer
** be used (R->error).
*/
fa4_status search_tune(search_result *r, fa4_context *ctx,
                       const search_opts *opts, struct progress *prog);

/*
** The verification problem for PROBLEM on a device of SM_COUNT SMs: same
** dtype, head dims, GQA group, masking and return_lse; one KV head (two
** when heads_kv > 1); sequence lengths up to 1000 (ragged against every
** tile size, several K/V blocks so the stage ring wraps); and a batch that
** gives at least 4 x SM_COUNT query tiles of 256 rows, so every CTA of a
** persistent or dynamic grid walks several tiles.  Windows wider than a
** third of the keys are shrunk to it, so the masking code runs.  Varlen
** and page_size are kept (the lengths are then the maxima); a paged
** cache's block table is sized for the shorter keys.
*/
fa4_problem search_verify_problem(const fa4_problem *problem, int sm_count);

/* The tolerance of the verification (relative Frobenius error of O):
** lib/verify.h's, the same as the GPU tests'. */
double search_tolerance(fa4_dtype dtype);

void search_result_free(search_result *r);

#endif
