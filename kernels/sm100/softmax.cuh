/*
** sm100/softmax.cuh -- the two softmax warpgroups: thread t of warpgroup i
** owns row t of query tile i (TMEM lane t).  Per KV step: S from TMEM in
** 16-column chunks, row max (pass 1), lazy rescale decision, alpha to the
** correction warpgroup through CORR, then exp2 and P back into TMEM over
** S in two halves (pass 2); key blocks the tile's rows see whole skip the
** per-element mask, and blocks they never see are not computed (P = 0;
** in 2Q mode alone not even stored: the MMA skips their P V).
** Base-2 online softmax, FA4 tricks: rescale
** only when the max grew by more than 2^FA4_RESCALE_THRESHOLD, and
** FA4_EXP2_EMU_PCT % of exp2 on the FMA units.  fp8: P rounded to e4m3
** (2^SM100_P_LOG2 times itself), the descales in the scale and in 1/l.
** In a CTA pair each CTA's warpgroups work on their own rows as alone;
** only P_FULL goes to the leader, whose MMA reads both CTAs' P.  Per-token
** Q/K scales (FA4_TOKEN_SCALES, sm100/scales.cuh): the row's query scale
** folds into its scale (beside fp8's descales), and each column of S is
** multiplied by its key's scale as it is read, in both passes.
** UNVERIFIED ON HARDWARE (see kernel.cuh).
*/
#ifndef FA4_SM100_SOFTMAX_CUH
#define FA4_SM100_SOFTMAX_CUH

#include "common/exp2.cuh"

#define SM100_NEG_INF (-__int_as_float(0x7f800000))

/* P columns 16 CH .. 16 CH + 15 (PR) into TMEM at S_COL: 16-bit pairs in
 * columns 8 CH .. 8 CH + 7, or fp8 four e4m3 a column in 4 CH .. 4 CH + 3
 * (SM100_P_COLS a chunk), the lowest key lowest.  Those columns of S are
 * already read: they hold S columns < 16 CH + 8. */
FA4_DEV void store_p(u32 s_col, int ch, const float (&pr)[16])
{
#if SM100_FP8
    u32 pk[4];
    int e;
#pragma unroll
    for (e = 0; e < 4; e++)
        pk[e] = cvt_rn_satfinite_e4m3x4_f32(pr[4 * e], pr[4 * e + 1], pr[4 * e + 2],
                                            pr[4 * e + 3]);
    tcgen05_st_32x32b_x4(s_col + (u32)ch * SM100_P_COLS, pk);
#else
    u32 pk[8];
    int e;
#pragma unroll
    for (e = 0; e < 8; e++)
        pk[e] = pack_p(pr[2 * e], pr[2 * e + 1]);
    tcgen05_st_32x32b_x8(s_col + (u32)ch * SM100_P_COLS, pk);
#endif
}

/* Pass 1 over S of key block KEY0: the row max of the scaled scores
 * (per-token: each column times its key scale KS), with the per-element
 * mask when MASKED. */
template <bool MASKED>
FA4_DEV float row_max(const fa4_params &p, u32 s_col, int row, int key0, float sc,
                      const float *ks)
{
    float mx = SM100_NEG_INF;
    int ch, e;

    for (ch = 0; ch < FA4_BN / 16; ch++) {
        u32 v[16];
        tcgen05_ld_32x32b_x16(v, s_col + (u32)ch * 16);
        tcgen05_wait_ld();
        scale_keys(v, ks, ch * 16);
#pragma unroll
        for (e = 0; e < 16; e++)
            if (!MASKED || key_visible(p, row, key0 + ch * 16 + e))
                mx = fmaxf(mx, __uint_as_float(v[e]) * sc);
    }
    return mx;
}

/* Pass 2 over half H of S: P = exp2(s * sc - ms) (s times its key scale
 * KS with per-token scales; 0 where masked, when MASKED) packed back into
 * TMEM over S; returns the half's row sum. */
template <bool MASKED>
FA4_DEV float exp_half(const fa4_params &p, u32 s_col, int row, int key0, int h,
                       float sc, float ms, const float *ks)
{
    const int emu = 16 * FA4_EXP2_EMU_PCT / 100;      /* per 16-column chunk */
    float sum = 0.0f;
    int ch, e;

    for (ch = h * (FA4_BN / 32); ch < (h + 1) * (FA4_BN / 32); ch++) {
        u32 v[16];
        float pr[16];
        tcgen05_ld_32x32b_x16(v, s_col + (u32)ch * 16);
        tcgen05_wait_ld();
        scale_keys(v, ks, ch * 16);
#pragma unroll
        for (e = 0; e < 16; e++) {
            float x = __uint_as_float(v[e]) * sc - ms;
            float y = e < emu ? exp2_fma(x) : ex2_approx_ftz_f32(x);
            pr[e] = !MASKED || key_visible(p, row, key0 + ch * 16 + e) ? y : 0.0f;
            sum += pr[e];
        }
        store_p(s_col, ch, pr);
    }
    return sum;
}

/* Half H of P all zero: a key block no row of the tile sees. */
FA4_DEV void zero_half(u32 s_col, int h)
{
    const u32 z[8] = { 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u };
    int ch;

    for (ch = h * (FA4_BN / 32); ch < (h + 1) * (FA4_BN / 32); ch++)
#if SM100_FP8
        tcgen05_st_32x32b_x4(s_col + (u32)ch * SM100_P_COLS, z);
#else
        tcgen05_st_32x32b_x8(s_col + (u32)ch * SM100_P_COLS, z);
#endif
}

FA4_DEV void softmax_warpgroup(const fa4_params &p, const sm100_ctx &c, int i,
                               int wq)
{
    const int r = wq * 32 + (int)(threadIdx.x & 31);   /* lane = row */
    const int row = c.m0 + i * 128 + r;
    const u32 lane_base = (u32)(wq * 32) << 16;
    float *corr = (float *)(c.base + FA4_SMEM_CORR_OFF) + i * 128;
    /* fp8: S came from the stored values; their factors join the scale,
       and with per-token scales the row's query scale too: all multiply
       the score before its max, so m, l and the LSE are of the scores
       with every factor applied (the LSE's P offset is fp8's alone). */
    const float sc = p.scale_log2 * descale(p.q_descale, p, c) * descale(p.k_descale, p, c)
                     * q_token_scale(c, i, r);
    /* Masked-tile skipping: of the CTA's blocks, those this tile's rows
       never see are not computed (P = 0), and those they see whole skip
       the per-element mask (sm100/blocks.h; uniform over the warpgroup). */
    const sm100_blocks tb = tile_blocks(p, c.m0 + i * 128, 128);
    float m = SM100_NEG_INF, l = 0.0f;
    int j;

    for (j = 0; j < c.n; j++) {
        const int blk = c.n_begin + j, key0 = blk * FA4_BN, b = s_buf(i, j);
        const u32 s_at = c.tmem + lane_base + s_col(b);
        const bool none = blk < tb.begin || blk >= tb.end;
        const bool full = blk >= tb.full_begin && blk < tb.full_end;
        float mx = SM100_NEG_INF, alpha = 1.0f, ms, sum = 0.0f;
        int h;
        /* key scales before S: the fence below orders TMEM after both waits */
        const float *ks = k_token_scales(c, j);

        mbarrier_wait(bar_addr(c, BAR_S_FULL + b), s_phase(j));
        tcgen05_fence_after_thread_sync();

        /* pass 1: row max of the scaled, masked scores */
        if (!none)
            mx = full ? row_max<false>(p, s_at, row, key0, sc, ks)
                      : row_max<true>(p, s_at, row, key0, sc, ks);

        /* lazy rescale: keep the stale max unless it grew by > threshold;
           the final 1/l uses the same stale max, so results stay exact. */
        if (mx > m + (float)FA4_RESCALE_THRESHOLD || (m == SM100_NEG_INF && mx > m)) {
            alpha = m == SM100_NEG_INF ? 0.0f : ex2_approx_ftz_f32(m - mx);
            m = mx;
        }
        corr[r] = alpha;
        mbarrier_arrive(bar_addr(c, BAR_C_FULL + i));
        /* A fully masked row has max = -inf; use 0 so exp2(x - max) gives 0.
           fp8: lowered by P's offset (SM100_P_LOG2, kernel.cuh). */
        ms = (m == SM100_NEG_INF ? 0.0f : m) - (float)SM100_P_LOG2;

        /* pass 2: P = exp2(s - max) over S, in two halves */
        for (h = 0; h < FA4_PV_STAGES; h++) {
            if (none) {
                /* unseen: no P V reads this P when the MMA skips the block */
                if (!SM100_SKIP_UNSEEN)
                    zero_half(s_at, h);
            } else if (full)
                sum += exp_half<false>(p, s_at, row, key0, h, sc, ms, ks);
            else
                sum += exp_half<true>(p, s_at, row, key0, h, sc, ms, ks);
            tcgen05_wait_st();
            if (h == 0) { /* O_i must be rescaled before P_i V is added */
                mbarrier_wait(bar_addr(c, BAR_C_EMPTY + i), (u32)j & 1u);
                /* what follows in TMEM is ordered after the wait (the
                   rule tests/test_sm100_ptx.c checks for every wait) */
                tcgen05_fence_after_thread_sync();
            }
            tcgen05_fence_before_thread_sync();
#if FA4_CTA_GROUP == 2
            /* the leader's MMA reads both CTAs' P: its barrier counts both */
            mbarrier_arrive_cluster(lead_bar(bar_addr(c, BAR_P_FULL + b * FA4_PV_STAGES + h)));
#else
            mbarrier_arrive(bar_addr(c, BAR_P_FULL + b * FA4_PV_STAGES + h));
#endif
        }
        release_k_token_scales(c, j);
        l = l * alpha + sum;
    }

    if (c.n > 0) {
        /* fp8: P V used V's stored values (P's offset cancels in 1 / l) */
        corr[r] = l > 0.0f ? descale(p.v_descale, p, c) / l : 0.0f;
        mbarrier_arrive(bar_addr(c, BAR_C_FULL + i));
    }
    if (p.lse && row < p.seqlen_q) {
        float *lse = (float *)p.lse
                     + ((long long)c.batch * p.heads_q + c.head) * p.seqlen_q + row;
        /* natural log-sum-exp of the scaled scores: (m + log2 l) * ln 2;
           fp8: l was summed against m - SM100_P_LOG2 */
        *lse = (l > 0.0f && m != SM100_NEG_INF)
                   ? (m - (float)SM100_P_LOG2 + lg2_approx_ftz_f32(l)) * 0.6931471805599453f
                   : SM100_NEG_INF;
    }
}

#endif
