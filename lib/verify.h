/*
** verify.h -- the one comparison of a kernel's output (O and LSE) with
** the float64 CPU reference (reference.h), with one tolerance per input
** dtype.  The tuner checks every candidate with it (tuner/search.c) and the
** GPU tests and bench/sweep through tests/gpu_check.h, so "correct" means
** the same thing everywhere.  O is read in its own dtype (dtype_out(): fp8
** inputs write bf16 or fp16).
**
** The tolerances (documented in fa4-tune(1) and bench/NOTES.md):
**
**   dtype  O (relative)    LSE (x (1 + |ref|))
**   bf16   2^-7 (7.8e-3)   2^-10
**   fp16   2^-9 (1.95e-3)  2^-10
**   fp8    4e-2            2^-8
**
**   O:   ||o - ref||_F / ||ref||_F over the compared rows.  A 16-bit
**        kernel accumulates in float32 but rounds its inputs (exactly as
**        the reference does), P (before P.V) and O to 16 bits, so it is off
**        by a few units of the 16-bit rounding (bf16 2^-9, fp16 2^-12
**        relative, on average); measured on the H100 at most 2.5e-3 (bf16)
**        and 3e-4 (fp16) over every sm80/sm90 variant (bench/results), so
**        the bounds leave a margin of 3x and 6x while a wrong tile, a
**        missed mask or a skipped rescale is off by far more.  fp8: the
**        reference runs on the dequantised inputs (exact, as the kernel
**        sees them) but does not round P to e4m3 (3 mantissa bits) as the
**        kernel does for P.V; that costs 1.0-2.7e-2 on random inputs
**        (bench/NOTES.md, "FP8 v1", H100; a CPU model of P's rounding alone
**        predicts 2.4-2.6e-2), so 4e-2, while a wrong key order, descale
**        or scale is off by 30% and more.
**   LSE: float32 whatever the dtype: |lse - ref| within the bound times
**        (1 + |ref|) on every compared row (measured on the H100: below
**        1e-6 for 16-bit inputs, 1e-5 to 1.6e-3 for fp8, bench/NOTES.md),
**        and -inf exactly where the reference is -inf (a row that sees no
**        key).
**   Any NaN or Inf in O fails (outputs are poisoned with NaN bits before
**   a launch, so an unwritten tile cannot pass for a previous result).
*/
#ifndef FA4_VERIFY_H
#define FA4_VERIFY_H

#include <stddef.h>
#include <stdint.h>
#include "fa4.h"

typedef struct verify_tolerance {
    double o_rel;        /* relative Frobenius error of O */
    double lse;          /* |lse - ref| / (1 + |ref|) */
    const char *o_text;  /* "2^-7", for messages */
    const char *lse_text;
} verify_tolerance;

/* The tolerance of inputs of DTYPE (bf16's when unknown). */
verify_tolerance verify_tolerance_of(fa4_dtype dtype);

/* A comparison in progress: rows are added one by one. */
typedef struct verify_result {
    fa4_dtype dtype;     /* the inputs': picks the tolerance */
    fa4_dtype out;       /* O's element type */
    double num, den;     /* sums of squares of the error and the reference */
    double o_rel_err;    /* after verify_finish(): ||o - ref|| / ||ref|| */
    double lse_err;      /* max |lse - ref| / (1 + |ref|), finite rows */
    long o_bad;          /* NaN or Inf outputs */
    long lse_bad;        /* LSE NaN, or -inf where the reference is finite
                            (or the reverse) */
    long rows;           /* (row, head) pairs compared */
    int pass;            /* after verify_finish() */
    char msg[384];       /* after verify_finish(): the first failure, or
                            "relative error 2.1e-03 <= 2^-7 over N rows" */
} verify_result;

/* Start an empty comparison of a kernel with inputs of DTYPE and O in
** OUT (dtype_out() of its problem). */
void verify_init(verify_result *r, fa4_dtype dtype, fa4_dtype out);

/*
** Compare one output row O (N values of R's out dtype, head_dim_v) with
** REF (N doubles), and, when LSE is not NULL, *LSE with LSE_REF.  B, I, H
** name the row (batch, query row, head) in messages.
*/
void verify_row(verify_result *r, const void *o, const double *ref,
                int n, const float *lse, double lse_ref, int b, int i, int h);

/*
** Count the NaN and Inf values among the N outputs O of dtype OUT (the
** whole output, not only the compared rows: a tile the kernel never wrote
** keeps the NaN poison).  The index of the first goes to *FIRST (may be
** NULL).
*/
size_t verify_nonfinite(const void *o, size_t n, fa4_dtype out,
                        size_t *first);

/* Record COUNT unwritten (non-finite) outputs found by verify_nonfinite(),
** the first at flat index FIRST of an output laid out as WHAT describes. */
void verify_add_nonfinite(verify_result *r, size_t count, size_t first,
                          const char *what);

/* Finish R: the relative error, pass or fail, and R->msg.  Returns
** R->pass. */
int verify_finish(verify_result *r);

#endif
