/*
** timing.h -- measuring one plan on the GPU: device events around each
** launch, warm-up first, the median of many repetitions, and inputs
** rotated across buffer sets whose total exceeds the L2 cache, so that
** every launch reads Q, K and V from device memory as it would in a model.
*/
#ifndef FA4_TUNE_TIMING_H
#define FA4_TUNE_TIMING_H

#include <stddef.h>
#include <cuda.h>
#include "fa4.h"

typedef struct timing_result {
    double min_ms, median_ms, max_ms;
    int reps;
} timing_result;

/* Buffer sets for one problem: set i is at base + i * set_bytes. */
typedef struct timing_buffers {
    fa4_context *ctx;
    CUdeviceptr base;
    size_t set_bytes;          /* q + k + v + o (+ lse), each 256-aligned */
    size_t q_off, k_off, v_off, o_off, lse_off;   /* within a set */
    int nsets;
    int has_lse;
} timing_buffers;

/*
** Allocate and fill (random values from *SEED) enough sets of PROBLEM's
** tensors that together they exceed twice LIMITS' L2 size (at least 2
** sets).  The caller has made CTX current (context_push).  FA4_OK,
** FA4_ENOMEM ("needs 3.2 GiB of device memory ...") or FA4_ECUDA with WHY.
*/
fa4_status timing_buffers_create(timing_buffers *out, fa4_context *ctx,
                                 const fa4_problem *problem, uint64_t *seed,
                                 char *why, size_t why_size);
void timing_buffers_free(timing_buffers *b);

/* The tensors of set I. */
fa4_tensors timing_tensors(const timing_buffers *b, int i);

/*
** Launch PLAN WARMUP times, then REPS times each between two events,
** rotating through the buffer sets; report min, median and max in *OUT.
** FA4_ECUDA with WHY when a launch or the synchronisation fails (the CUDA
** context is then unusable: the caller stops using this device).
*/
fa4_status timing_measure(timing_result *out, fa4_context *ctx,
                          const fa4_plan *plan, const timing_buffers *b,
                          int warmup, int reps, char *why, size_t why_size);

/* The median of N values (sorts V in place). */
double timing_median(double *v, int n);

#endif
