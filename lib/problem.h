/*
** problem.h -- validation of fa4_problem and its canonical form.
*/
#ifndef FA4_PROBLEM_H
#define FA4_PROBLEM_H

#include "fa4.h"

/*
** Copy the caller's PROBLEM (as far as its struct_size covers) into *OUT,
** check every field and fill the defaults: head_dim_v, softmax_scale,
** contiguous strides, window_right = 0 with causal.  FA4_OK, FA4_EINVAL or
** FA4_ENOTSUP with WHY naming the field, value and limit.
*/
fa4_status problem_resolve(fa4_problem *out, const fa4_problem *problem,
                           char *why, size_t why_size);

/* head_dim_v, or head_dim_qk where P leaves it 0 (before problem_resolve()). */
static inline int problem_head_dim_v(const fa4_problem *p)
{
    return p->head_dim_v > 0 ? p->head_dim_v : p->head_dim_qk;
}

/* The GQA group heads_q / heads_kv (1 where P has no KV heads yet). */
static inline int problem_group(const fa4_problem *p)
{
    return p->heads_kv > 0 ? p->heads_q / p->heads_kv : 1;
}

/* 1 when the kernel must mask beyond the ragged tail (causal or window). */
int problem_has_mask(const fa4_problem *p);

/* The softmax scale the kernels apply: softmax_scale, or 1/sqrt(head_dim_qk)
** where it is 0 (a problem not yet resolved). */
double problem_softmax_scale(const fa4_problem *p);

/* 1 when the softmax subtracts a constant instead of the running row max
** (kernels/sm90/softmax.cuh, kernels/sm80/softmax.cuh:
** FA4_SOFTCAP_FIXED_MAX): softcapped scores are bounded by the cap, and P
** spans [2^(32 - 2C), 2^32] for a cap of C in log2 units, which bf16's
** normal range holds while C <= 76, a cap of 52.7 (Gemma 2 uses 50, Grok-1
** 30).  fp16's and e4m3's ranges are too narrow; larger caps keep the
** running max.  Exact either way (softmax does not depend on the constant
** subtracted); the constant spares the row max, its shuffles and O's
** rescale. */
#define PROBLEM_SOFTCAP_FIXED_MAX_CAP 52.0f
int problem_softcap_fixed_max(const fa4_problem *p);

#endif
