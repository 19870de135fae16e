/*
** seqlen.cuh -- the sequence a tile belongs to: its query and key lengths,
** where its rows start in the tensors, and which rows a tile loads.
** Mask, mainloop and epilogue read lengths from here, never p.seqlen_q/k.
**
** Dense batches: lengths from fa4_params, rows addressed through the
** maps' batch coordinate; TMA clips every box at the sequence's end.
** Varlen batches (FA4_VARLEN): lengths from cu_seqlens_q/k (seqused_k when
** given), rows packed end to end (batch coordinate 0), so a box is clipped
** only at the end of the whole tensor, whose length the host does not
** know.  A query tile or key block that would run past its sequence's
** last row is therefore loaded from earlier rows, ending at that row
** (q_load_row, kv_load_row): the query rows it repeats are not stored and
** the keys it repeats are masked.  A sequence shorter than a tile starts
** its box before its first row: TMA zero-fills rows before row 0 of the
** tensor, and the rows of the sequence before are read -- finite or not
** (a cache's unused rows): their scores are masked and their V rows zeroed
** (v_zero_rows) before P V, since 0 * NaN is NaN.  fp8 reads V^T, which the
** V^T copy lays out per key block with zeros in such rows (vtranspose.cuh).
**
** Paged K/V (FA4_PAGED, with dense or varlen Q): the maps cover the page
** pool, {dim, heads, page_size, pages}; key block n is loaded box by box,
** FA4_PAGE_BOX rows (a power of two dividing BN, at most a page: no box
** crosses a page) from page block_table[b][j / page_size] each, boxes past the sequence's last page from page -1 (TMA
** zero-fills them; the table is not read there).  The rows of the last
** block past the sequence's keys come from its last page's unused rows:
** masked, and their V rows zeroed like those above.
*/
#ifndef FA4_SM90_SEQLEN_CUH
#define FA4_SM90_SEQLEN_CUH

#if FA4_VARLEN || FA4_PAGED
#include "common/serving.h"
/* Varlen kernels take the serving block (common/serving.h) as well. */
#define FA4_SERVING_PARAM , const fa4_serving &sv
#define FA4_SERVING_ARG , sv
#else
#define FA4_SERVING_PARAM
#define FA4_SERVING_ARG
#endif

struct fa4_seq {
    int len_q, len_k;       /* this sequence's query rows and keys */
    int q_row0, k_row0;     /* map row coordinate of its first query, key */
    int batch;              /* map batch coordinate (of Q and O when paged) */
    long long lse_row0;     /* LSE of (head, row): lse_row0 + head * seq_lse_head_stride + row */
};

/* GQA packing (FA4_PACK_GQA): a tile's rows are (query, head) pairs of one
 * KV head's FA4_GROUP query heads, row r of the packed order = query
 * r / FA4_GROUP of head kv_head * FA4_GROUP + r % FA4_GROUP, so a K/V tile
 * serves FA4_GROUP heads; the grid's head is the KV head and a tile spans
 * FA4_BM_POS = FA4_BM / FA4_GROUP queries.  A sequence then holds
 * len_q * FA4_GROUP rows per KV head, and a varlen tile's box moves back in
 * whole queries (q_load_row).  Without packing FA4_GROUP is 1 and a row
 * is a query. */
#define FA4_BM_POS (FA4_BM / FA4_GROUP)

/* The query index of packed row R. */
FA4_DEV int row_query(int r)
{
    return r / FA4_GROUP;
}

/* The query head of packed row R of a tile of grid head HEAD. */
FA4_DEV int row_head(int head, int r)
{
    return FA4_PACK_GQA ? head * FA4_GROUP + r % FA4_GROUP : head;
}

/* The KV head of a tile of grid head HEAD. */
FA4_DEV int tile_kv_head(const fa4_params &p, int head)
{
    return FA4_PACK_GQA ? head : head / p.group;
}

/* The sequence of batch entry B. */
FA4_DEV fa4_seq seq_of(const fa4_params &p FA4_SERVING_PARAM, int b)
{
    fa4_seq s;
#if FA4_VARLEN
    const int *cu_q = (const int *)sv.cu_seqlens_q;
    s.q_row0 = cu_q[b];
    s.len_q = cu_q[b + 1] - s.q_row0;
    s.batch = 0;
    s.lse_row0 = s.q_row0;
#else
    s.len_q = p.seqlen_q;
    s.q_row0 = 0;
    s.batch = b;
    s.lse_row0 = (long long)b * p.heads_q * p.seqlen_q;
#endif
#if FA4_PAGED
    s.k_row0 = 0;
    s.len_k = sv.seqused_k ? ((const int *)sv.seqused_k)[b] : p.seqlen_k;
#elif FA4_VARLEN
    const int *cu_k = (const int *)sv.cu_seqlens_k;
    s.k_row0 = cu_k[b];
    s.len_k = sv.seqused_k ? ((const int *)sv.seqused_k)[b] : cu_k[b + 1] - s.k_row0;
#else
    s.k_row0 = 0;
    s.len_k = p.seqlen_k;
#endif
    return s;
}

/* LSE's head stride: seqlen_q, or for varlen total_q ([heads_q, total_q]),
 * read only by the threads that store LSE. */
FA4_DEV int seq_lse_head_stride(const fa4_params &p FA4_SERVING_PARAM)
{
#if FA4_VARLEN
    return ((const int *)sv.cu_seqlens_q)[p.batch];
#else
    return p.seqlen_q;
#endif
}

/* First (packed) row, relative to the sequence, of the BM rows loaded for
 * the query tile starting at row M0: a whole query, FA4_BM_POS queries
 * ending at the sequence's last one when the tile would run past it. */
FA4_DEV int q_load_row(const fa4_seq &s, int m0)
{
#if FA4_VARLEN
    return FA4_GROUP * min(m0 / FA4_GROUP, s.len_q - FA4_BM_POS);
#else
    (void)s;
    return m0;
#endif
}

/* The (packed) row, relative to the sequence, of accumulator row g of
 * thread TID (0..127) of consumer warpgroup WG, in the tile starting at
 * row M0 (the m64 layout, softmax.cuh); the thread's other row is 8 on. */
FA4_DEV int thread_row(const fa4_seq &s, int m0, int wg, int tid)
{
    return q_load_row(s, m0) + wg * 64 + 16 * (tid / 32) + (tid % 32) / 4;
}

/* First key of the BN keys loaded for key block N. */
FA4_DEV int kv_load_row(const fa4_seq &s, int n)
{
#if FA4_VARLEN && !FA4_PAGED
    return min(n * FA4_BN, s.len_k - FA4_BN);
#else
    (void)s;
    return n * FA4_BN;
#endif
}

#if FA4_PAGED
/* The TMA box of keys from J (a multiple of FA4_PAGE_BOX): its page in the
 * sequence's block-table row PAGES (-1 past the sequence: TMA zero-fills,
 * the table is not read there) and its first row in that page. */
FA4_DEV void page_box(const fa4_seq &s, const int *pages, int page_shift, int j, int *page,
                      int *row)
{
    *page = j < s.len_k ? pages[j >> page_shift] : -1;
    *row = j & ((1 << page_shift) - 1);
}
#endif

/* Rows [*lo, *hi) of key block N's V tile that hold no key of the sequence
 * and may hold anything (empty when lo >= hi): before its first key
 * (varlen, a sequence shorter than BN) or past its last (paged). */
FA4_DEV void v_zero_rows(const fa4_seq &s, int n, int *lo, int *hi)
{
#if FA4_PAGED
    *lo = s.len_k - n * FA4_BN;
    *hi = FA4_BN;
#elif FA4_VARLEN
    *lo = 0;
    *hi = -kv_load_row(s, n);
#else
    (void)s;
    (void)n;
    *lo = *hi = 0;
#endif
}

#endif
