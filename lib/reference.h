/*
** reference.h -- attention forward in double precision on the CPU: the
** ground truth for tests and for the tuner's candidate check.
*/
#ifndef FA4_REFERENCE_H
#define FA4_REFERENCE_H

#include <stdint.h>
#include "fa4.h"

/* bf16/fp16 <-> float conversions (round to nearest even). */
uint16_t ref_float_to_half(float f, fa4_dtype dtype);
float ref_half_to_float(uint16_t h, fa4_dtype dtype);

/*
** Compute O (double, contiguous [batch, seqlen_q, heads_q, head_dim_v]) and
** LSE (double [batch, heads_q, seqlen_q], may be NULL) from Q, K, V given as
** 16-bit values in PROBLEM's dtype, contiguous BSHD (strides ignored).
** Masking, GQA, scale and LSE follow fa4.h.  PROBLEM must be valid.
*/
void ref_attention(double *o, double *lse, const fa4_problem *problem,
                   const uint16_t *q, const uint16_t *k, const uint16_t *v);

/* ref_attention() with SINKS ([heads_q] logits) when problem->attention_sinks
** is 1 (softcap comes from the problem). */
void ref_attention_sinks(double *o, double *lse, const fa4_problem *problem,
                         const uint16_t *q, const uint16_t *k, const uint16_t *v,
                         const float *sinks);

/*
** One row of ref_attention(): query row I of head H in batch B, into
** O_ROW (head_dim_v doubles) and *LSE.  For checking sampled rows of
** problems too large for the full reference.
*/
void ref_attention_row(double *o_row, double *lse, const fa4_problem *problem,
                       const uint16_t *q, const uint16_t *k, const uint16_t *v,
                       int b, int i, int h);
void ref_attention_row_sinks(double *o_row, double *lse, const fa4_problem *problem,
                             const uint16_t *q, const uint16_t *k, const uint16_t *v,
                             const float *sinks, int b, int i, int h);
/*
** ref_attention_row_sinks() for inputs of any dtype (lib/dtype.h; fp8 e4m3
** bytes included): Q, K, V as stored, each multiplied by its descale
** factor ([batch, heads_kv] floats; NULL: 1) before use, as the fp8
** kernels do.  SINKS may be NULL.
*/
void ref_attention_row_scaled(double *o_row, double *lse, const fa4_problem *problem,
                              const void *q, const void *k, const void *v, const float *sinks,
                              const float *q_descale, const float *k_descale,
                              const float *v_descale, int b, int i, int h);

/*
** ref_attention_row_scaled() with per-token scales (fa4_problem.token_scales):
** the score of query row I and key j is multiplied by Q_TOKEN_SCALE[(B *
** heads_q + H) * seqlen_q + I] and K_TOKEN_SCALE[(B * heads_kv + H / group)
** * seqlen_k + j] (float32 [batch, heads, seq]; either NULL: 1) with the
** softmax scale, before softcap, masking and the softmax, as the sm100
** kernels do; LSE is of those scores.
*/
void ref_attention_row_tokens(double *o_row, double *lse, const fa4_problem *problem,
                              const void *q, const void *k, const void *v, const float *sinks,
                              const float *q_descale, const float *k_descale,
                              const float *v_descale, const float *q_token_scale,
                              const float *k_token_scale, int b, int i, int h);

/* ref_attention() with per-token scales (as ref_attention_row_tokens()). */
void ref_attention_tokens(double *o, double *lse, const fa4_problem *problem,
                          const uint16_t *q, const uint16_t *k, const uint16_t *v,
                          const float *q_token_scale, const float *k_token_scale);

/*
** Compare OUT (16-bit, contiguous) with REF: returns ||out - ref|| / ||ref||
** (Frobenius), or +inf when any output is NaN/Inf.  N elements.
*/
double ref_rel_error(const uint16_t *out, const double *ref, size_t n,
                     fa4_dtype dtype);

/* Fill N 16-bit values with uniform random numbers in [-1, 1) from *SEED;
** for fp8 the buffer's 2 * N bytes as ref_fill_inputs() fills e4m3 (no NaN). */
void ref_fill_random(uint16_t *x, size_t n, fa4_dtype dtype, uint64_t *seed);

/*
** Fill N inputs of DTYPE from *SEED: 16-bit ones as ref_fill_random()
** (the same values for the same seed), fp8 e4m3 ones N(0, 1) rounded by
** dtype_store(), which covers e4m3's whole mantissa and exponents down to
** the subnormals, as real activations do (uniform [-1, 1) would leave most
** of the range unused).
*/
void ref_fill_inputs(void *x, size_t n, fa4_dtype dtype, uint64_t *seed);

/* Fill N descale factors (fp8) or per-token scales uniform in [0.5, 2)
** from *SEED: a kernel that ignores one, or applies Q's to K, is then off
** by tens of percent. */
void ref_fill_descale(float *x, size_t n, uint64_t *seed);

#endif
