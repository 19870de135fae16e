/*
** sm100/blocks.h -- which key blocks a run of query rows visits and which
** of them need the per-element mask: the loop bounds of masked-tile
** skipping.  Shared by the kernel (NVRTC) and the host tests
** (tests/test_sm100_mask.c checks it against every (row, key) pair), so
** plain C integer arithmetic only.
**
** Row r sees keys [r + diag - window_left, r + diag + window_right] within
** [0, seqlen_k), diag = seqlen_k - seqlen_q, a bound of -1 unbounded
** (causal: window_right = 0), as fa4_params says.  For rows [row0,
** row0 + rows) cut at seqlen_q (rows past it are never stored):
**   - visited: blocks of BN keys holding a key some row sees;
**   - full: blocks every key of which every row sees -- there the mask is
**     a no-op and the kernel skips it.
** Blocks outside the visited range are skipped entirely.  In 2Q mode the
** CTA loops over its rows' union; a query tile skips the S and P V MMAs
** of the blocks its own rows do not see (sm100_block_seen), so its O
** starts at its first seen block (sm100_first_seen).
*/
#ifndef FA4_SM100_BLOCKS_H
#define FA4_SM100_BLOCKS_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SM100_HD static __host__ __device__ __forceinline__
#else
#define SM100_HD static inline
#endif

typedef struct sm100_blocks {
    int begin, end;             /* visited blocks [begin, end); empty: begin == end */
    int full_begin, full_end;   /* blocks needing no mask, within [begin, end) */
} sm100_blocks;

/* The blocks of BN keys rows [ROW0, ROW0 + ROWS) visit, and those they see
** whole (see above).  WINDOW_LEFT / WINDOW_RIGHT -1: unbounded. */
SM100_HD sm100_blocks sm100_block_range(int row0, int rows, int seqlen_q, int seqlen_k,
                                        int window_left, int window_right, int bn)
{
    sm100_blocks b = { 0, 0, 0, 0 };
    const int diag = seqlen_k - seqlen_q;
    int last = row0 + rows - 1, lo = 0, hi = seqlen_k, ilo = 0, ihi = seqlen_k;

    if (last > seqlen_q - 1)
        last = seqlen_q - 1;
    if (last < row0 || seqlen_k <= 0)
        return b;
    /* keys some row sees: [lo, hi); keys every row sees: [ilo, ihi) */
    if (window_left >= 0) {
        lo = row0 + diag - window_left;
        ilo = last + diag - window_left;
        lo = lo > 0 ? lo : 0;
        ilo = ilo > 0 ? ilo : 0;
    }
    if (window_right >= 0) {
        hi = last + diag + window_right + 1;
        ihi = row0 + diag + window_right + 1;
        hi = hi < seqlen_k ? hi : seqlen_k;
        ihi = ihi < seqlen_k ? ihi : seqlen_k;
    }
    if (hi <= lo)
        return b;
    b.begin = lo / bn;
    b.end = (hi + bn - 1) / bn;
    b.full_begin = b.full_end = b.begin;
    if (ihi > ilo) {
        int fb = (ilo + bn - 1) / bn, fe = ihi / bn;
        if (fe > fb) {
            b.full_begin = fb;
            b.full_end = fe;
        }
    }
    return b;
}

/* 1 when block BLK holds a key some row of B's rows sees. */
SM100_HD int sm100_block_seen(sm100_blocks b, int blk)
{
    return blk >= b.begin && blk < b.end;
}

/* The first step j of a loop over blocks N_BEGIN .. N_BEGIN + N - 1 whose
** block B's rows see (the step whose P V starts their O when unseen blocks
** issue no MMA); N when they see none of them. */
SM100_HD int sm100_first_seen(sm100_blocks b, int n_begin, int n)
{
    const int j = b.begin - n_begin;

    if (b.begin >= b.end || b.end <= n_begin || j >= n)
        return n;
    return j > 0 ? j : 0;
}

#endif
