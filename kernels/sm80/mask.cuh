/*
** sm80/mask.cuh -- which keys a query row sees (included by kernel.cuh).
**
** Query row i (0-based in its sequence) sees keys j with
**   i + diag - window_left <= j <= i + diag + window_right,  j < seqlen_k,
** diag = seqlen_k - seqlen_q of the sequence (bottom-right aligned), a
** bound of -1 unbounded; causal arrives as window_right = 0.  The ragged
** tail (j >= seqlen_k) is masked always.  With GQA packing a tile row is
** (query row, head) and only the query row matters here.
*/
#ifndef FA4_SM80_MASK_CUH
#define FA4_SM80_MASK_CUH

namespace sm80 {

/* The key-block range [lo, hi) a query tile needs, and the element mask
 * of the blocks that need one.  A thread's row bounds are recomputed in
 * each masked block, not held: 2 TROWS registers through the whole loop
 * for the few blocks of a tile that use them. */
struct key_mask {
    int row;   /* tile row of the thread's first row: row0 + lane / 4 */

    __device__ __forceinline__ void init(int row0, int lane)
    {
        row = row0 + (lane >> 2);
    }

    /* Key blocks [*n_lo, *n_hi) that any row of the tile sees; n_hi <= n_lo
     * when none does (rows beyond the sequence do not count). */
    static __device__ __forceinline__ void block_range(const fa4_params &p,
                                                       const tile_info &t,
                                                       int *n_lo, int *n_hi)
    {
        int hi = (t.seqlen_k + BN - 1) / BN, lo = 0;
        if (MASK) {
            const int diag = t.seqlen_k - t.seqlen_q;
            const int q_last = row_query(t, min(t.m_start + BM, t.rows) - 1);
            const int q_first = row_query(t, t.m_start);
            if (p.window_right >= 0) {
                const int last_key = q_last + diag + p.window_right;
                hi = min(hi, last_key < 0 ? 0 : last_key / BN + 1);
            }
            if (p.window_left >= 0) {
                const int first_key = q_first + diag - p.window_left;
                lo = first_key <= 0 ? 0 : first_key / BN;
            }
        }
        *n_lo = lo;
        *n_hi = hi;
    }

    /* 1 when some element of key block N_BLOCK may be masked for the tile. */
    static __device__ __forceinline__ bool block_needs_mask(const fa4_params &p,
                                                            const tile_info &t,
                                                            int n_block)
    {
        const int n_start = n_block * BN;
        bool need = n_start + BN > t.seqlen_k;
        if (MASK) {
            const int diag = t.seqlen_k - t.seqlen_q;
            const int q_first = row_query(t, t.m_start);
            const int q_last = row_query(t, t.m_start + BM - 1);
            if (p.window_right >= 0)
                need |= n_start + BN - 1 > q_first + diag + p.window_right;
            if (p.window_left >= 0)
                need |= n_start < q_last + diag - p.window_left;
        }
        return need;
    }

    /* Set the scores of keys the rows do not see to -inf.  S is the mma
     * accumulator of the warp's MT tiles of 16 x (8 NB): s[mt][j][e] is
     * tile row ROW + 16 mt + 8 (e>>1), key n_start + 8j + 2*(lane%4) + (e&1). */
    template <int NB>
    __device__ __forceinline__ void apply(const fa4_params &p, const tile_info &t,
                                          float (&s)[MT][NB][4], int n_start,
                                          int lane) const
    {
        const int col0 = n_start + 2 * (lane & 3);
        const int diag = t.seqlen_k - t.seqlen_q;
#pragma unroll
        for (int h = 0; h < TROWS; h++) {
            const int mt = h >> 1;
            const int qi = row_query(t, t.m_start + row + 16 * mt + 8 * (h & 1));
            int hi = t.seqlen_k - 1, lo = 0;
            if (MASK) {
                if (p.window_right >= 0 && qi + diag + p.window_right < hi)
                    hi = qi + diag + p.window_right;
                if (p.window_left >= 0 && qi + diag - p.window_left > lo)
                    lo = qi + diag - p.window_left;
            }
#pragma unroll
            for (int j = 0; j < NB; j++)
#pragma unroll
                for (int e = 2 * (h & 1); e < 2 * (h & 1) + 2; e++) {
                    const int col = col0 + 8 * j + (e & 1);
                    if (col > hi || col < lo)
                        s[mt][j][e] = -__int_as_float(0x7f800000);
                }
        }
    }
};

} /* namespace sm80 */

#endif
