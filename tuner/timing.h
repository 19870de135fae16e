/*
** timing.h -- measuring plans on the GPU the way an application runs them:
** fa4_plan_create() with the config, fa4_forward() on the legacy stream with
** no workspace (the plan's own counter) and the problem's return_lse,
** launches queued back to back, N of them between two events, the median
** over several such groups.  Inputs rotate across buffer sets whose total
** exceeds the L2 cache (TIMING_L2_ROTATE, the default: every launch reads
** Q, K and V from device memory), or stay in one set (TIMING_L2_WARM).
** fa4-tune(1) says why rotation is the default.
*/
#ifndef FA4_TUNE_TIMING_H
#define FA4_TUNE_TIMING_H

#include <stddef.h>
#include <cuda.h>
#include "fa4.h"
#include "layout.h"

/* Per-launch times in ms over the groups of one measurement. */
typedef struct timing_result {
    double min_ms, median_ms, max_ms;
    int reps;                  /* launches per group */
    int groups;
} timing_result;

/* Where a launch finds its inputs. */
typedef enum timing_l2 {
    TIMING_L2_ROTATE = 0,      /* sets beyond twice L2: inputs from DRAM */
    TIMING_L2_WARM = 1         /* one set: what the last launch left in L2 */
} timing_l2;

/* How to measure. */
typedef struct timing_opts {
    int warmup;                /* launches before the groups (>= 1) */
    int reps;                  /* launches per group, at least */
    int groups;                /* event pairs; the median is over them */
} timing_opts;

/* Buffer sets for one problem: set i is at base + i * set_bytes. */
typedef struct timing_buffers {
    fa4_context *ctx;
    CUdeviceptr base;
    size_t set_bytes;          /* q + k + v + o (+ lse), each 256-aligned */
    size_t q_off, k_off, v_off, o_off, lse_off;   /* within a set */
    int nsets;
    int has_lse;
    int next;                  /* the set the next launch uses */
    tune_layout layout;        /* every sequence at the problem's lengths */
    CUdeviceptr index;         /* its index arrays, sink logits and
                                  descale factors, one copy for all sets
                                  (read-only, and small: a serving engine's
                                  stay in L2 too); 0 when it has none */
} timing_buffers;

/*
** Allocate and fill (random values from *SEED) PROBLEM's tensors, Q, K
** and V in its dtype and O in dtype_out(), laid out as layout.h's
** LAYOUT_FULL (varlen: packed, cu_seqlens multiples of the lengths; paged:
** a shuffled pool, seqused_k = seqlen_k; attention sinks: the layout's
** logits, one per query head; fp8: the layout's descale factors): with
** TIMING_L2_ROTATE enough sets that together they exceed twice CTX's L2
** size (at least 2), with TIMING_L2_WARM one.  The caller has made CTX
** current (context_push).  FA4_OK, FA4_ENOMEM ("needs 3.2 GiB of device
** memory ...") or FA4_ECUDA with WHY.
*/
fa4_status timing_buffers_create(timing_buffers *out, fa4_context *ctx,
                                 const fa4_problem *problem, timing_l2 l2,
                                 uint64_t *seed, char *why, size_t why_size);
void timing_buffers_free(timing_buffers *b);

/* The tensors of set I, with the layout's index arrays. */
fa4_tensors timing_tensors(const timing_buffers *b, int i);

/*
** Launch PLAN N times back to back (the next buffer sets of B) between two
** events on the legacy stream and wait; the time per launch in *MS.
** FA4_ECUDA with WHY when a launch or the synchronisation fails (the CUDA
** context is then unusable: the caller stops using this device).
*/
fa4_status timing_group(double *ms, fa4_context *ctx, const fa4_plan *plan,
                        timing_buffers *b, int n, char *why, size_t why_size);

/*
** The launches per group for a kernel of about EST_MS: at least REPS, and
** enough that a group lasts 0.5 ms (event resolution and launch overhead
** stay below 1%), at most 1000.
*/
int timing_group_size(double est_ms, int reps);

/*
** Measure PLAN: O->warmup launches (timed together, to size the groups),
** then O->groups groups of timing_group_size() launches; min, median and
** max of the groups' per-launch times in *OUT.  Errors as timing_group().
*/
fa4_status timing_measure(timing_result *out, fa4_context *ctx,
                          const fa4_plan *plan, timing_buffers *b,
                          const timing_opts *o, char *why, size_t why_size);

/* Two plans timed in alternation. */
typedef struct timing_pair {
    double ms[2];              /* medians over the rounds, per launch */
    double spread[2];          /* (max - min) / median over the rounds */
    /* Plan 0 against plan 1 round by round (the two groups of a round run
       back to back, so a clock or temperature level that lasts several
       rounds reaches both): ms[1] / ms[0] - 1 per round. */
    double gain;               /* median of the per-round gains */
    double gain_lo, gain_hi;   /* their range */
    int wins;                  /* rounds in which plan 0 was faster */
    int rounds;
    int reps;                  /* launches per group */
} timing_pair;

/* The most rounds a pair is timed over (--confirm's bound). */
#define TIMING_MAX_ROUNDS 1000

/* The smallest per-round gain that counts as a gain: below it, a kernel
** that only moves the tiles around cannot be told from the default. */
#define TIMING_MIN_GAIN 0.01

/* What a pair says about plan 0 (a stored or new winner) against plan 1
** (the heuristic's default). */
typedef enum timing_verdict {
    TIMING_HOLDS,   /* faster in every round, by a median of TIMING_MIN_GAIN or more */
    TIMING_LOST,    /* a median gain below TIMING_MIN_GAIN: not faster */
    TIMING_NOISY    /* a median gain of TIMING_MIN_GAIN or more, but not in every
                       round: not proven (a new winner is not adopted on it),
                       not disproven (a stored one is not dropped on it) */
} timing_verdict;

/*
** Fill *OUT from ROUNDS rounds of per-launch times MS0[k] (plan 0) and
** MS1[k] (plan 1, the same round); sorts the arrays.  Pure: tested
** without a GPU.
*/
void timing_pair_from_rounds(timing_pair *out, double *ms0, double *ms1,
                             int rounds);

/* The verdict on plan 0 of a filled pair. */
timing_verdict timing_pair_verdict(const timing_pair *tp);

/*
** Time PLANS[0] and PLANS[1] in alternation on B: a warm-up group of
** WARMUP launches each (sizing the groups, timing_group_size(REPS)), then
** ROUNDS rounds of one group each, the order swapped every round (0 1,
** 1 0, 0 1, ...) so that neither always runs first and a drift of the
** clocks or the temperature reaches both alike.  Errors as timing_group().
*/
fa4_status timing_interleaved(timing_pair *out, fa4_context *ctx,
                              const fa4_plan *const plans[2],
                              timing_buffers *b, int warmup, int reps,
                              int rounds, char *why, size_t why_size);

/* The median of N values (sorts V in place). */
double timing_median(double *v, int n);

#endif
