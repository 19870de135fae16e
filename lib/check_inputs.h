/*
** check_inputs.h -- the opt-in check of the device-side index arrays
** (cu_seqlens, seqused_k, block_table) before a launch.  Their contents
** cannot be checked for free, so by default the kernels trust them (the
** contract is in fa4_forward(3)); with the context option check_inputs or
** $FA4_CHECK_INPUTS=1 each launch copies them to the host first and
** returns FA4_EINVAL naming the first bad entry instead of faulting.
*/
#ifndef FA4_CHECK_INPUTS_H
#define FA4_CHECK_INPUTS_H

#include "plan.h"

/* 1 when launches on CTX check their index arrays. */
int check_inputs_enabled(const fa4_context *ctx);

/*
** Synchronise STREAM, copy T's index arrays for the call problem P of PLAN
** and check them: cu_seqlens start at 0, never decrease, and no sequence
** exceeds P's maxima (with seqused_k, cu_seqlens_k gives each sequence's
** room, which may be longer); seqused_k within [0, seqlen_k] and the
** sequence's room (the fp8 V^T copy is sized by seqlen_k); every block-table
** entry a used page needs within [0, num_pages) (when num_pages is known).
** FA4_EINVAL with the entry named, FA4_ECUDA, FA4_ENOMEM.
*/
fa4_status check_inputs(const fa4_plan *plan, const fa4_problem *p,
                        const fa4_tensors *t, fa4_stream stream);

#endif
