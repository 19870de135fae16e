/*
** mask.cuh -- which keys a query tile sees and the -inf mask of a score
** block.  Query i sees keys j with lo(i) <= j < hi(i):
**   hi(i) = min(seqlen_k, i + diag + window_right + 1)  (window_right >= 0)
**   lo(i) = max(0, i + diag - window_left)              (window_left >= 0)
** diag = seqlen_k - seqlen_q (bottom-right aligned, FlashAttention's rule);
** causal is window_right = 0.  Keys >= seqlen_k are always masked (TMA
** zero-fills them, which would otherwise score 0).
*/
#ifndef FA4_SM90_MASK_CUH
#define FA4_SM90_MASK_CUH

/* Key blocks [*n_lo, *n_hi) of BN keys that query tile M_BLOCK touches. */
FA4_DEV void kv_block_range(const fa4_params &p, int m_block, int *n_lo, int *n_hi)
{
    int lo = 0, hi = p.seqlen_k;
#if FA4_MASK
    const int diag = p.seqlen_k - p.seqlen_q;
    const int m0 = m_block * FA4_BM;
    const int m_last = min(m0 + FA4_BM, p.seqlen_q) - 1;
    if (p.window_right >= 0)
        hi = min(hi, m_last + diag + p.window_right + 1);
    if (p.window_left >= 0)
        lo = max(lo, m0 + diag - p.window_left);
#endif
    *n_lo = lo / FA4_BN;
    *n_hi = hi <= 0 ? 0 : (hi + FA4_BN - 1) / FA4_BN;
    if (*n_hi < *n_lo)
        *n_hi = *n_lo;
}

/* 1 when some score of key block N in tile M_BLOCK must be masked. */
FA4_DEV bool kv_block_needs_mask(const fa4_params &p, int m_block, int n)
{
    const int k0 = n * FA4_BN, k1 = k0 + FA4_BN;
    if (k1 > p.seqlen_k)
        return true;
#if FA4_MASK
    const int diag = p.seqlen_k - p.seqlen_q;
    const int m0 = m_block * FA4_BM;
    if (p.window_right >= 0 && k1 - 1 > m0 + diag + p.window_right)
        return true;
    if (p.window_left >= 0 && k0 < m0 + FA4_BM - 1 + diag - p.window_left)
        return true;
#endif
    return false;
}

/* Set to -inf the scores of S (one m64nBN accumulator, this thread's part)
 * whose key is outside [lo, hi) of their row.  ROW0 is the query index of
 * this thread's first row (the second is ROW0 + 8); K0 the block's first key
 * plus this thread's column offset 2 * (lane % 4). */
template <int NS>
FA4_DEV void mask_scores(float (&s)[NS], const fa4_params &p, int row0, int k0)
{
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        int hi = p.seqlen_k, lo = 0;
#if FA4_MASK
        const int i = row0 + 8 * h;
        const int diag = p.seqlen_k - p.seqlen_q;
        if (p.window_right >= 0)
            hi = min(hi, i + diag + p.window_right + 1);
        if (p.window_left >= 0)
            lo = i + diag - p.window_left;
#endif
        hi -= k0;
        lo -= k0;
#pragma unroll
        for (int c = 0; c < NS / 4; ++c) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int col = 8 * c + e;
                const int idx = 4 * c + 2 * h + e;
                if (col >= hi || col < lo)
                    s[idx] = -__int_as_float(0x7f800000);
            }
        }
    }
}

#endif
