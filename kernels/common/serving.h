/*
** serving.h -- the second kernel argument block: how a batch is laid out
** (variable lengths, paged K/V), how the KV range is split, and where
** split launches leave their partial results.  Shared by the host (C) and
** the kernels (NVRTC); builtin types only.  Append fields only.
**
** fa4_params (params.h) describes a dense problem; a family that serves
** varlen / paged / split-KV problems takes this block as well, so the
** dense kernels' sources (and the tuned entries keyed by their hash) are
** unchanged by it.
*/
#ifndef FA4_KERNEL_SERVING_H
#define FA4_KERNEL_SERVING_H

typedef struct fa4_serving {
    /* int32 device arrays, or 0 (kernels/README.md "Serving") */
    unsigned long long cu_seqlens_q;   /* varlen: batch+1 offsets into Q, O */
    unsigned long long cu_seqlens_k;   /* varlen, not paged: into K, V */
    unsigned long long seqused_k;      /* [batch] keys used, or 0 */
    unsigned long long block_table;    /* paged: [batch, block_table_stride] */
    /* Split launches: float32 partial O [splits][heads_q][rows_cap][DV]
       and LSE [splits][heads_q][rows_cap] (natural log) in the workspace. */
    unsigned long long o_partial, lse_partial;
    int block_table_stride;
    int page_shift;        /* log2(page_size); pages are k/v_batch_stride apart */
    int num_splits;        /* 1: the kernel writes O itself */
    int rows_cap;          /* query rows a split has room for (>= total_q) */
    int reserved[2];
} fa4_serving;

#endif
