/*
** layout.h -- where fa4-tune puts a problem's tensors and index arrays:
** dense BSHD, packed variable-length rows delimited by cu_seqlens, or a
** paged K/V pool reached through a block table (fa4.h, fa4_problem).
** The timing harness lays problems out with every sequence at the
** problem's lengths, as a serving engine's full batch; the verification
** with ragged lengths, so that sequence boundaries fall inside tiles and
** pages end part-used.  Both map (sequence, row) to a row of the tensors
** as laid out, which is how the verification gathers one sequence for
** the float64 reference.  A problem with attention sinks gets its sink
** logits here too, with the index arrays (one small read-only block), and
** an fp8 problem its descale factors.  Element sizes follow the dtypes:
** Q, K and V in the problem's, O in dtype_out()'s.  No device is needed
** but for layout_upload().
*/
#ifndef FA4_TUNE_LAYOUT_H
#define FA4_TUNE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include "fa4.h"
#include "device.h"

typedef struct tune_layout {
    int batch, seqlen_q, seqlen_k;   /* the problem's (the maxima) */
    int varlen, page_size;
    int heads_q, heads_kv, head_dim_qk, head_dim_v;
    fa4_dtype dtype, out_dtype;  /* Q, K, V's and O's element types */
    int in_bytes, out_bytes;     /* bytes per element of each */
    int *len_q, *len_k;          /* [batch]: rows of each sequence */
    int32_t *cu_q, *cu_k;        /* varlen: [batch + 1] offsets (cu_k: K/V
                                    not paged) */
    int32_t *table;              /* paged: [batch][table_stride] pages */
    int32_t *used;               /* paged: seqused_k, [batch] */
    float *sinks;                /* attention_sinks: [heads_q] logits, else
                                    NULL */
    float *descale;              /* fp8: Q's, K's and V's factors, each
                                    [batch, heads_kv]; else NULL */
    int table_stride, num_pages;
    size_t q_rows;               /* rows of Q and O */
    size_t kv_rows;              /* rows of K and V (paged: the pool) */
    size_t nq, nk, nv, no, nlse; /* elements of each tensor (nlse: LSE
                                    floats, with or without return_lse) */
    size_t ndescale;             /* factors per tensor (fp8): batch x heads_kv */
    /* The index arrays (with the sink logits and descale factors), one
       device block: byte offsets and total size. */
    size_t off_cu_q, off_cu_k, off_table, off_used, off_sinks, off_descale,
           index_bytes;
} tune_layout;

/* How sequence lengths are chosen. */
typedef enum layout_lengths {
    LAYOUT_FULL = 0,    /* every sequence at the problem's lengths */
    LAYOUT_RAGGED = 1   /* sequence 0 at them, the others up to a third
                           shorter where the layout allows it (varlen Q,
                           varlen or paged K/V) */
} layout_lengths;

/*
** Lay PROBLEM (resolved: problem_resolve) out: sequence lengths, offsets,
** and for a paged cache a pool of batch x ceil(seqlen_k / page_size)
** pages plus two spare, assigned to the sequences in a shuffled order
** that depends only on the problem; with attention sinks, a logit per
** query head, also from the problem alone (layout_fill_sinks); for fp8
** inputs, descale factors in [0.5, 2) (ref_fill_descale), from the problem
** alone too.  0, or -1 when out of host memory.  Release with
** layout_free().
*/
int layout_build(tune_layout *l, const fa4_problem *problem,
                 layout_lengths lengths);
void layout_free(tune_layout *l);

/*
** N sink logits for a problem whose longest key sequence is SEQLEN_K,
** random from *SEED (not 0): uniform over [-2, ln(SEQLEN_K) + 2), so that
** some heads' sinks are negligible next to their keys' sum and others
** outweigh it (the scaled scores of the tuner's inputs are near 0, each
** key adding about 1 to the sum).
*/
void layout_fill_sinks(float *out, int n, int seqlen_k, uint64_t *seed);

/* Row of Q and O holding query row I of sequence B. */
size_t layout_q_row(const tune_layout *l, int b, int i);

/* Row of K and V holding key J of sequence B (through the block table). */
size_t layout_k_row(const tune_layout *l, int b, int j);

/* Index in LSE of query row I of sequence B, head H: [heads_q, total_q]
** for varlen, [batch, heads_q, seqlen_q] otherwise. */
size_t layout_lse_index(const tune_layout *l, int b, int h, int i);

/*
** Sequence B of PROBLEM as a dense problem of its own: batch 1, its
** lengths, neither varlen nor paged; the reference computes it on the
** rows layout_gather() collects.
*/
fa4_problem layout_sequence(const tune_layout *l, const fa4_problem *problem,
                            int b);

/* Copy sequence B's rows of Q, K and V (in_bytes elements, as laid out)
** into the dense GQ, GK, GV (len_q[b] and len_k[b] rows). */
void layout_gather(const tune_layout *l, int b, const void *q,
                   const void *k, const void *v, void *gq, void *gk,
                   void *gv);

/* The descale factors of tensor WHICH (0 Q, 1 K, 2 V) from sequence B on
** (heads_kv of them for B, as sequence 0 of layout_sequence()'s problem
** reads them), or NULL when the layout has none. */
const float *layout_descale(const tune_layout *l, int which, int b);

/* Write the index arrays into HOST (index_bytes bytes) at their offsets. */
void layout_index_image(const tune_layout *l, void *host);

/*
** Allocate the index arrays on the device (CU; the caller has made the
** context current) and copy them there; *OUT is 0 when the layout has
** none.  FA4_OK, or FA4_ENOMEM/FA4_ECUDA with WHY.
*/
fa4_status layout_upload(CUdeviceptr *out, const tune_layout *l,
                         const cuda_api *cu, char *why, size_t why_size);

/* Point T's cu_seqlens_q/k, block_table, seqused_k, sinks and descale
** factors at the arrays uploaded to INDEX, as far as the layout uses them. */
void layout_tensors(fa4_tensors *t, const tune_layout *l, CUdeviceptr index);

/* "varlen, paged 16 (52 pages, shuffled)" or "dense"; returns BUF. */
char *layout_describe(const tune_layout *l, char *buf, size_t size);

#endif
