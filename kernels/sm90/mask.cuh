/*
** mask.cuh -- which keys a query tile sees and the -inf mask of a score
** block.  Query i of a sequence sees keys j with lo(i) <= j < hi(i):
**   hi(i) = min(len_k, i + diag + window_right + 1)  (window_right >= 0)
**   lo(i) = max(0, i + diag - window_left)           (window_left >= 0)
** diag = len_k - len_q (bottom-right aligned per sequence, FlashAttention's
** rule); causal is window_right = 0.  Keys >= len_k are always masked (TMA
** zero-fills them, which would otherwise score 0), and so are the keys of a
** block loaded from before its own first key (seqlen.cuh).
*/
#ifndef FA4_SM90_MASK_CUH
#define FA4_SM90_MASK_CUH

/* Key blocks [*n_lo, *n_hi) of BN keys that the query tile whose first
 * query is M0 touches (FA4_BM_POS queries: seqlen.cuh). */
FA4_DEV void kv_block_range(const fa4_params &p, const fa4_seq &s, int m0, int *n_lo,
                            int *n_hi)
{
    int lo = 0, hi = s.len_k;
#if FA4_MASK
    const int diag = s.len_k - s.len_q;
    const int m_last = min(m0 + FA4_BM_POS, s.len_q) - 1;
    if (p.window_right >= 0)
        hi = min(hi, m_last + diag + p.window_right + 1);
    if (p.window_left >= 0)
        lo = max(lo, m0 + diag - p.window_left);
#else
    (void)p;
    (void)m0;
#endif
    *n_lo = lo / FA4_BN;
    *n_hi = hi <= 0 ? 0 : (hi + FA4_BN - 1) / FA4_BN;
    if (*n_hi < *n_lo)
        *n_hi = *n_lo;
}

#if FA4_WG_RANGES || FA4_DIAG_HALF
/* The first and last query of consumer warpgroup WG's 64 rows in the tile
 * at packed row M0; 0 when none is in the sequence (rows wholly past it). */
FA4_DEV bool wg_queries(const fa4_seq &s, int m0, int wg, int *first, int *last)
{
    const int r0 = q_load_row(s, m0) + wg * 64;
    *first = row_query(r0);
    *last = min(row_query(r0 + 63), s.len_q - 1);
    return *first <= *last;
}
#endif

#if FA4_WG_RANGES
/* The blocks [*lo, *hi) of the tile's [n_lo, n_hi) that consumer
 * warpgroup WG's 64 rows of the tile at packed row M0 see.  Under a causal
 * mask or a window a tile's rows see different keys, so the tile's range
 * is wider than each warpgroup's: its first rows' last block, say, is
 * wholly masked for them, and they skip it rather than compute it
 * (mainloop.cuh; only where budget_sm90.c says it pays).  Rows wholly
 * past the sequence keep the tile's range. */
FA4_DEV void wg_block_range(const fa4_params &p, const fa4_seq &s, int m0, int wg, int n_lo,
                            int n_hi, int *lo, int *hi)
{
    const int diag = s.len_k - s.len_q;
    int first, last;
    *lo = n_lo;
    *hi = n_hi;
    if (!wg_queries(s, m0, wg, &first, &last))
        return;
    if (p.window_right >= 0) {
        const int k_hi = min(s.len_k, last + diag + p.window_right + 1);
        *hi = min(max(k_hi <= 0 ? 0 : (k_hi + FA4_BN - 1) / FA4_BN, n_lo), n_hi);
    }
    if (p.window_left >= 0)
        *lo = min(max(max(first + diag - p.window_left, 0) / FA4_BN, n_lo), *hi);
}
#endif

#if FA4_DIAG_HALF
/* 1 when the rows of consumer warpgroup WG (tile at packed row M0) see no
 * key in the second half of key block N as loaded (kv_load_row): the
 * diagonal block of a causal mask for the first warpgroup of a tile as
 * tall as a block, and for every other warpgroup whose last query falls
 * in the first half of its last block.  Its Q K^T then runs at N = BN/2
 * and its P V over BN/2 keys (mainloop.cuh). */
FA4_DEV bool wg_sees_half_block(const fa4_params &p, const fa4_seq &s, int m0, int wg, int n)
{
    int first, last, k_hi = s.len_k;
    if (!wg_queries(s, m0, wg, &first, &last))
        return false;
#if FA4_MASK
    if (p.window_right >= 0)
        k_hi = min(k_hi, last + s.len_k - s.len_q + p.window_right + 1);
#else
    (void)p;
#endif
    return k_hi <= kv_load_row(s, n) + FA4_BN / 2;
}
#endif

/* 1 when some score of key block N in the tile whose first query is M0
 * must be masked. */
FA4_DEV bool kv_block_needs_mask(const fa4_params &p, const fa4_seq &s, int m0, int n)
{
    const int k0 = n * FA4_BN, k1 = k0 + FA4_BN;
    if (k1 > s.len_k)
        return true;            /* also every block loaded from earlier keys */
#if FA4_MASK
    const int diag = s.len_k - s.len_q;
    if (p.window_right >= 0 && k1 - 1 > m0 + diag + p.window_right)
        return true;
    if (p.window_left >= 0 && k0 < m0 + FA4_BM_POS - 1 + diag - p.window_left)
        return true;
#else
    (void)p;
    (void)m0;
#endif
    return false;
}

/* Bits c (0..31) with 8c < X, i.e. the first ceil(X / 8) bits (none for
 * X <= 0, all for X > 248). */
FA4_DEV u32 col_bits_below(int x)
{
    const int n = x <= 0 ? 0 : (x + 7) >> 3;
    return n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1u;
}

/* Set to -inf the scores of S (one m64nBN accumulator, this thread's part)
 * whose key is outside [lo, hi) of their row or below KLO (the block's own
 * first key).  ROW0 is the (packed, seqlen.cuh) row index of this thread's
 * first row (the second is ROW0 + 8); K0 the first key loaded plus this
 * thread's column offset 2 * (lane % 4). */
template <int NS>
FA4_DEV void mask_scores(float (&s)[NS], const fa4_params &p, const fa4_seq &sq, int row0,
                         int k0, int klo)
{
    static_assert(NS / 4 <= 32, "a column bit per 8 keys in one 32-bit mask");
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        int hi = sq.len_k, lo = klo;
#if FA4_MASK
        const int i = row_query(row0 + 8 * h);
        const int diag = sq.len_k - sq.len_q;
        if (p.window_right >= 0)
            hi = min(hi, i + diag + p.window_right + 1);
        if (p.window_left >= 0)
            lo = max(lo, i + diag - p.window_left);
#else
        (void)p;
        (void)row0;
#endif
        hi -= k0;
        lo -= k0;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            /* Column 8c + e is kept when lo <= 8c + e < hi: bit c of KEEP.
             * One mask per (row, e) and a bit test per score (ptxas turns
             * the tests into R2P predicates), not two compares per score. */
            u32 keep = col_bits_below(hi - e);
            if (lo > e)   /* a left window or a block loaded before its first key */
                keep &= ~col_bits_below(lo - e);
#pragma unroll
            for (int c = 0; c < NS / 4; ++c)
                if (!((keep >> c) & 1u))
                    s[4 * c + 2 * h + e] = -__int_as_float(0x7f800000);
        }
    }
}

#endif
