/*
** sm80/softmax.cuh -- online softmax in base 2 (included by kernel.cuh).
**
** Each thread holds rows g and g+8 (g = lane/4) of each of its warp's MT
** m16 tiles: 2 MT rows, row h = 2 mt + (e >> 1) for accumulator element
** e of tile mt.  A row's KN scores (BN, or BN / WARPS when the warps
** split the key block) are spread over the 4 threads of a quad, so row
** max and sum reduce with shuffles by 1 and 2.  The running max is kept
** in log2 units (already multiplied by scale_log2), so P = 2^(s*scale_log2
** - max) is one FFMA and one ex2.approx per element.  The row sum stays
** per thread (partial over the quad) until the epilogue.
**
** Rescale (FA4_RESCALE_THRESHOLD, the config's rescale, log2 units): 0
** moves a row's max whenever a block beats it and multiplies O and l by
** 2^(m_old - m_new) on every block, as FlashAttention-2 does (a factor of
** 1 where the max stayed).  T > 0 is FA4's lazy rescale: a row keeps its
** stale max until a block's max beats it by more than T (P then stays <=
** 2^T), and the multiply of O, MT x DV/2 FMULs, is skipped when no row of
** the warp moved.  Exact either way: 1/l and the LSE use the max the sums
** were taken against.
**
** FA4_SOFTCAP_FIXED_MAX (bf16 under a cap of at most 52, lib/problem.h):
** the capped scores times scale_log2 lie in [-C, C], so m is the constant
** C - 32 from the start and P stays in [2^(32 - 2C), 2^32]; the max, its
** shuffles and O's rescale drop out.  A row that sees no key keeps l = 0,
** which the epilogue reads as empty, as it does m = -inf.
*/
#ifndef FA4_SM80_SOFTMAX_CUH
#define FA4_SM80_SOFTMAX_CUH

namespace sm80 {

#define FA4_NEG_INF (-__int_as_float(0x7f800000))

/* Rows a thread holds: g and g+8 of each m16 tile. */
constexpr int TROWS = 2 * MT;

/* Softcapping: S := tanh(S * pre) (scale_log2 then carries the cap). */
__device__ __forceinline__ void softcap_scores(float (&s)[MT][KN / 8][4], float pre)
{
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int j = 0; j < KN / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                s[mt][j][e] = tanh_approx_f32(s[mt][j][e] * pre);
}

struct online_softmax {
    float m[TROWS];   /* running row max, log2 units; -inf before any key */
    float l[TROWS];   /* partial row sum of 2^(x - m) over this thread's columns */

    __device__ __forceinline__ void init(float scale_log2)
    {
#pragma unroll
        for (int h = 0; h < TROWS; h++) {
            m[h] = FA4_SOFTCAP_FIXED_MAX ? scale_log2 - 32.0f : FA4_NEG_INF;
            l[h] = 0.f;
        }
    }

    /* The block's row maxima of S into m (log2 units), M_USE the max each
     * row's exponentials subtract and ALPHA = 2^(m_old - m_new), with O
     * rescaled by it. */
    __device__ __forceinline__ void update_max(const float (&s)[MT][KN / 8][4],
                                               float (&o)[MT][DV / 8][4], float scale_log2,
                                               float (&m_use)[TROWS], float (&alpha)[TROWS])
    {
        float mx[TROWS];
        bool moved = false;
#pragma unroll
        for (int h = 0; h < TROWS; h++)
            mx[h] = FA4_NEG_INF;
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int j = 0; j < KN / 8; j++) {
                mx[2 * mt] = fmaxf(mx[2 * mt], fmaxf(s[mt][j][0], s[mt][j][1]));
                mx[2 * mt + 1] = fmaxf(mx[2 * mt + 1], fmaxf(s[mt][j][2], s[mt][j][3]));
            }
#pragma unroll
        for (int h = 0; h < TROWS; h++)
            mx[h] = fmaxf(mx[h], shfl_xor_sync_f32(mx[h], 1));
#pragma unroll
        for (int h = 0; h < TROWS; h++) {
            mx[h] = fmaxf(mx[h], shfl_xor_sync_f32(mx[h], 2));
            float m_new;
            if (FA4_RESCALE_THRESHOLD == 0) {
                m_new = fmaxf(m[h], mx[h] * scale_log2);
            } else {
                /* m = -inf and a finite max: +inf > T, the row takes it
                 * (alpha 0; O and l are still 0).  Both -inf: NaN compares
                 * false and the row stays empty. */
                const float mb = mx[h] * scale_log2;
                const bool mv = mb - m[h] > (float)FA4_RESCALE_THRESHOLD;
                m_new = mv ? mb : m[h];
                moved |= mv;
            }
            /* A fully masked row has max = -inf; use 0 so exp2(x - max)
             * gives 0, not NaN. */
            m_use[h] = m_new == FA4_NEG_INF ? 0.f : m_new;
            alpha[h] = ex2_approx_ftz_f32(m[h] - m_use[h]);
            m[h] = m_new;
        }
        if (FA4_RESCALE_THRESHOLD == 0 || __any_sync(0xffffffffu, moved)) {
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int j = 0; j < DV / 8; j++) {
                    o[mt][j][0] *= alpha[2 * mt];
                    o[mt][j][1] *= alpha[2 * mt];
                    o[mt][j][2] *= alpha[2 * mt + 1];
                    o[mt][j][3] *= alpha[2 * mt + 1];
                }
        }
    }

    /* Turn raw scores S into unnormalised probabilities in place, update
     * m and l, and rescale the output accumulator O by 2^(m_old - m_new)
     * (under FA4_SOFTCAP_FIXED_MAX m is a constant: no max, no rescale). */
    __device__ __forceinline__ void step(float (&s)[MT][KN / 8][4],
                                         float (&o)[MT][DV / 8][4], float scale_log2)
    {
        float alpha[TROWS], m_use[TROWS];
        if (FA4_SOFTCAP_FIXED_MAX) {
#pragma unroll
            for (int h = 0; h < TROWS; h++) {
                m_use[h] = m[h];
                alpha[h] = 1.f;
            }
        } else {
            update_max(s, o, scale_log2, m_use, alpha);
        }
        float sum[TROWS];
#pragma unroll
        for (int h = 0; h < TROWS; h++)
            sum[h] = 0.f;
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int j = 0; j < KN / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int h = 2 * mt + (e >> 1);
                    s[mt][j][e] = ex2_approx_ftz_f32(fmaf(s[mt][j][e], scale_log2, -m_use[h]));
                    sum[h] += s[mt][j][e];
                }
#pragma unroll
        for (int h = 0; h < TROWS; h++)
            l[h] = l[h] * alpha[h] + sum[h];
    }

    /* Sum the row sums over the quad (call once, before the epilogue). */
    __device__ __forceinline__ void finish()
    {
#pragma unroll
        for (int h = 0; h < TROWS; h++) {
            l[h] += shfl_xor_sync_f32(l[h], 1);
            l[h] += shfl_xor_sync_f32(l[h], 2);
        }
    }
};

} /* namespace sm80 */

#endif
