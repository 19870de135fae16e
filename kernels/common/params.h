/*
** params.h -- the kernel argument block, shared by the host (C) and the
** kernels (NVRTC).  Builtin types only: the kernels include no toolkit
** header and the host must see the same layout.  Append fields only.
*/
#ifndef FA4_KERNEL_PARAMS_H
#define FA4_KERNEL_PARAMS_H

typedef struct fa4_params {
    unsigned long long q, k, v, o;  /* device addresses */
    unsigned long long lse;         /* float32 [batch, heads_q, seqlen_q], or 0 */
    /* strides in elements: [batch, row (seq), head] */
    long long q_batch_stride, q_row_stride, q_head_stride;
    long long k_batch_stride, k_row_stride, k_head_stride;
    long long v_batch_stride, v_row_stride, v_head_stride;
    long long o_batch_stride, o_row_stride, o_head_stride;
    int batch, seqlen_q, seqlen_k;
    int heads_q, heads_kv;
    int group;              /* heads_q / heads_kv */
    float scale_log2;       /* softmax_scale * log2(e) */
    /* Visible keys of query i: [i + diag - window_left, i + diag + window_right]
       with diag = seqlen_k - seqlen_q; a bound of -1 means unbounded.
       causal is window_right = 0.  Only read when FA4_MASK is 1. */
    int window_left, window_right;
    int m_blocks;           /* ceil(seqlen_q / BM); packed GQA: ceil(seqlen_q * group / BM) */
    int total_tiles;        /* m_blocks * heads * batch (persistent schedulers, tail split);
                               heads: heads_q, or heads_kv with packed GQA */
    int reserved;
    /* Dynamic scheduler: two u32 counters, zero before the launch and left
       zero after it (kernels/sm90/scheduler.cuh); 0 for other schedulers. */
    unsigned long long tile_counter;
    /* FA4_SINKS: float32 [heads_q] sink logits (natural-log units). */
    unsigned long long sinks;
    /* FA4_SOFTCAP: a score s becomes tanh(s * softcap_pre) and scale_log2 is
       softcap * log2(e), so P = 2^(softcap * log2(e) * tanh(scale * s / softcap)). */
    float softcap_pre;
    int reserved2;
    /* fp8 inputs: float32 [batch, heads_kv] factors that turn the stored
       e4m3 values of Q, K and V back into their real values; 0: 1.0. */
    unsigned long long q_descale, k_descale, v_descale;
    /* FA4_TOKEN_SCALES: float32 per-token factors of the scores, [batch,
       heads_q, seqlen_q] and [batch, heads_kv, seqlen_k]; 0 otherwise. */
    unsigned long long q_token_scale, k_token_scale;
    /* sm90 tail split (FA4_TAIL_SPLIT, kernels/sm90/tail.cuh): CTAs from
       tail_first on run the tiles of the last wave in tail_splits parts
       each, into the records at tail_partial; tail_splits 1: none. */
    int tail_first, tail_splits;
    unsigned long long tail_partial;
} fa4_params;

#endif
