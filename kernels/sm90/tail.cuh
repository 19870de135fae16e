/*
** tail.cuh -- the tail split (config splits = 0: FA4_TAIL_SPLIT, plain grid,
** no mask).  Tiles without a mask all take the same time, so the last wave
** of a plain grid runs partly empty: 1376 tiles on 132 SMs take 11 waves,
** the last 42% full.  The host (launch_sm90.c) gives each of the
** r = tiles mod SMs tiles of that wave p.tail_splits CTAs, placed after the
** whole tiles in the grid; part i of a tile takes the i-th of tail_splits
** equal runs of its key blocks, so the wave lasts a fraction of a tile.
** A part writes its O / l (f32) and its LSE (without the sink) to its
** record in the workspace, and fa4_combine (common/combine.cuh) merges the
** parts of each row into O and LSE.
**
** Records: CTA u >= p.tail_first writes record u - p.tail_first at
** p.tail_partial + (u - p.tail_first) * FA4_TAIL_RECORD bytes: FA4_BM LSE
** floats, then FA4_BM rows of FA4_DV floats.  The parts of one tile are
** consecutive CTAs, so tile j of the tail owns records j * S .. j * S + S - 1.
*/
#ifndef FA4_SM90_TAIL_CUH
#define FA4_SM90_TAIL_CUH

#define FA4_TAIL_RECORD (FA4_BM * (FA4_DV + 1) * 4)

/* This CTA's part of its tile (scheduler.cuh maps the rest); -1 for a
 * whole tile.  Derived again where needed rather than held in a register
 * through the main loop. */
FA4_DEV int tail_part(const fa4_params &p)
{
#if FA4_TAIL_SPLIT
    const int u = (int)blockIdx.x;
    return u >= p.tail_first ? (u - p.tail_first) % p.tail_splits : -1;
#else
    (void)p;
    return -1;
#endif
}

/* Narrow [*N_LO, *N_HI) to this CTA's part of its tile's key blocks (all
 * of them for a whole tile). */
FA4_DEV void tail_part_blocks(const fa4_params &p, int *n_lo, int *n_hi)
{
    const int part = tail_part(p);
    if (part >= 0) {
        const int lo = *n_lo, n = *n_hi - *n_lo;
        *n_lo = lo + n * part / p.tail_splits;
        *n_hi = lo + n * (part + 1) / p.tail_splits;
    }
}

#if FA4_TAIL_SPLIT
/* Write warpgroup WG's rows of this CTA's part: O (NO f32 registers of an
 * m64n(2*NO) accumulator) times INV, and LSE.  Rows past seqlen_q are
 * written too; the merge never reads them. */
template <int NO>
FA4_DEV void tail_store_partial(const fa4_params &p, const float (&o)[NO], const float (&inv)[2],
                                const float (&lse)[2], int wg, int tid)
{
    const int warp = tid / 32, lane = tid % 32, g = lane / 4, q = lane % 4;
    const u64 rec = p.tail_partial + (u64)((int)blockIdx.x - p.tail_first) * FA4_TAIL_RECORD;
    float *lse_rec = (float *)rec;
    const u64 o_rec = rec + FA4_BM * 4;
#pragma unroll
    for (int i = 0; i < NO; i += 2) {
        const int h = (i >> 1) & 1;
        const int row = wg * 64 + 16 * warp + g + 8 * h;
        const int col = 8 * (i / 4) + 2 * q;
        if (col < FA4_DV)   /* FA4_DV is even: both columns or neither */
            st_global_v2_f32(o_rec + 4 * (u64)(row * FA4_DV + col), o[i] * inv[h], o[i + 1] * inv[h]);
    }
    if (q == 0) {
#pragma unroll
        for (int h = 0; h < 2; ++h)
            lse_rec[wg * 64 + 16 * warp + g + 8 * h] = lse[h];
    }
}
#endif

#endif
