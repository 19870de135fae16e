/*
** sm80/seqinfo.cuh -- what one CTA works on: its sequence (dense, varlen),
** its query rows (plain or GQA-packed), its slice of the key range (split
** KV) and where its K/V rows live (strided or paged).  Everything the
** mainloop, mask and epilogue need to know about the batch layout is
** here; they never read p.seqlen_q / p.seqlen_k themselves.
**
** Grid (kernels/README.md "Grid"): x = query tile, y = head * num_splits +
** split, z = sequence.  With FA4_PACK_GQA the head is a KV head and the
** tile's rows are (query row, query head in group) pairs, row-major:
** packed row P is query row P / group of query head head_kv * group +
** P % group.  A decode step with group 8 thus fills 8 rows of one tile and
** reads each K/V block once per KV head.
*/
#ifndef FA4_SM80_SEQINFO_CUH
#define FA4_SM80_SEQINFO_CUH

namespace sm80 {

struct tile_info {
    int m_start;      /* first packed row of the tile */
    int rows;         /* packed rows of the sequence: seqlen_q * G */
    int group;        /* G: query heads per tile row group (1 unpacked) */
    int head;         /* query head (unpacked) or KV head (packed) */
    int head_kv;
    int batch;
    int split;
    int seqlen_q, seqlen_k;
    i64 q_row0;       /* global index of the sequence's first query row */
};

/* Sequence lengths and offsets of this CTA's tile.  Uniform over the CTA. */
__device__ __forceinline__ tile_info tile_make(const fa4_params &p,
                                               const fa4_serving &s)
{
    tile_info t;
    const int hy = (int)blockIdx.y;
    t.split = hy % s.num_splits;
    t.head = hy / s.num_splits;
    t.batch = (int)blockIdx.z;
    t.group = FA4_PACK_GQA ? p.group : 1;
    t.head_kv = FA4_PACK_GQA ? t.head : t.head / p.group;
#if FA4_VARLEN
    const int *cu_q = (const int *)s.cu_seqlens_q;
    const int q0 = cu_q[t.batch];
    t.seqlen_q = cu_q[t.batch + 1] - q0;
    t.q_row0 = q0;
#else
    t.seqlen_q = p.seqlen_q;
    t.q_row0 = (i64)t.batch * p.seqlen_q;
#endif
    if (s.seqused_k) {
        t.seqlen_k = ((const int *)s.seqused_k)[t.batch];
    } else {
#if FA4_VARLEN && !FA4_PAGED
        const int *cu_k = (const int *)s.cu_seqlens_k;
        t.seqlen_k = cu_k[t.batch + 1] - cu_k[t.batch];
#else
        t.seqlen_k = p.seqlen_k;
#endif
    }
    t.rows = t.seqlen_q * t.group;
    t.m_start = (int)blockIdx.x * BM;
    return t;
}

/* Query row and query head of packed row P. */
__device__ __forceinline__ int row_query(const tile_info &t, int P)
{
    return FA4_PACK_GQA ? P / t.group : P;
}
__device__ __forceinline__ int row_head(const tile_info &t, int P)
{
    return FA4_PACK_GQA ? t.head * t.group + P % t.group : t.head;
}

/* Rows of Q or O (EB bytes per element: fp8 Q has 1, its O 2): row r of
 * the tile is packed row m_start + r. */
template <int EB>
struct rows_of_q {
    unsigned char *seq;   /* row 0, head 0 of the sequence */
    i64 row_stride, head_stride;
    int m_start, group, head;

    __device__ __forceinline__ unsigned char *addr(int r) const
    {
        const int P = m_start + r;
        const int qi = FA4_PACK_GQA ? P / group : P;
        const int h = FA4_PACK_GQA ? head * group + P % group : head;
        return seq + ((i64)qi * row_stride + (i64)h * head_stride) * EB;
    }
    __device__ __forceinline__ const unsigned char *any() const { return seq; }
    /* Row r + 1 starts row_bytes() after row r (not with packed heads). */
    static constexpr bool STRIDED = !FA4_PACK_GQA;
    __device__ __forceinline__ i64 row_bytes() const { return row_stride * EB; }
};
typedef rows_of_q<ELT> q_rows;
typedef rows_of_q<OUT_ELT> o_rows;

template <int EB>
__device__ __forceinline__ rows_of_q<EB> q_rows_make(const tile_info &t, unsigned long long base,
                                              i64 batch_stride, i64 row_stride,
                                              i64 head_stride)
{
    rows_of_q<EB> q;
#if FA4_VARLEN
    q.seq = (unsigned char *)base + t.q_row0 * row_stride * EB;
    (void)batch_stride;
#else
    q.seq = (unsigned char *)base + (i64)t.batch * batch_stride * EB;
#endif
    q.row_stride = row_stride;
    q.head_stride = head_stride;
    q.m_start = t.m_start;
    q.group = t.group;
    q.head = t.head;
    return q;
}

/* Rows of K or V: key j of the sequence.  Strided (dense and varlen) or
 * through the block table (paged: page j >> page_shift of the sequence,
 * row j & (page_size - 1) of that page). */
struct kv_rows {
    const unsigned char *base;   /* strided: key 0 of the sequence and head;
                                    paged: the pool, head offset applied */
    i64 row_stride;
#if FA4_PAGED
    const int *pages;            /* this sequence's block-table row */
    i64 page_stride;
    int page_shift;
#endif

    __device__ __forceinline__ const unsigned char *addr(int j) const
    {
#if FA4_PAGED
        const int page = __ldg(pages + (j >> page_shift));
        return base + ((i64)page * page_stride +
                       (i64)(j & ((1 << page_shift) - 1)) * row_stride) * ELT;
#else
        return base + (i64)j * row_stride * ELT;
#endif
    }
    __device__ __forceinline__ const unsigned char *any() const { return base; }
    /* Key j + 1 starts row_bytes() after key j (not through pages). */
    static constexpr bool STRIDED = !FA4_PAGED;
    __device__ __forceinline__ i64 row_bytes() const { return row_stride * ELT; }
};

__device__ __forceinline__ kv_rows kv_rows_make(const tile_info &t, const fa4_serving &s,
                                                unsigned long long base, i64 batch_stride,
                                                i64 row_stride, i64 head_stride)
{
    kv_rows r;
    const unsigned char *b = (const unsigned char *)base + (i64)t.head_kv * head_stride * ELT;
#if FA4_PAGED
    r.pages = (const int *)s.block_table + (i64)t.batch * s.block_table_stride;
    r.page_stride = batch_stride;
    r.page_shift = s.page_shift;
#elif FA4_VARLEN
    b += (i64)((const int *)s.cu_seqlens_k)[t.batch] * row_stride * ELT;
    (void)batch_stride;
#else
    b += (i64)t.batch * batch_stride * ELT;
#endif
    (void)s;
    r.base = b;
    r.row_stride = row_stride;
    return r;
}

} /* namespace sm80 */

#endif
