/*
** sm80/softmax.cuh -- online softmax in base 2 (included by kernel.cuh).
**
** Each thread holds rows g and g+8 of its warp's 16 (g = lane/4); a row's
** KN scores (BN, or BN / WARPS when the warps split the key block) are spread over the 4 threads of a quad, so row max and sum
** reduce with shuffles by 1 and 2.  The running max is kept in log2 units
** (already multiplied by scale_log2), so P = 2^(s*scale_log2 - max) is one
** FFMA and one ex2.approx per element.  The row sum stays per thread
** (partial over the quad) until the epilogue.
*/
#ifndef FA4_SM80_SOFTMAX_CUH
#define FA4_SM80_SOFTMAX_CUH

namespace sm80 {

#define FA4_NEG_INF (-__int_as_float(0x7f800000))

/* Softcapping: S := tanh(S * pre) (scale_log2 then carries the cap). */
__device__ __forceinline__ void softcap_scores(float (&s)[KN / 8][4], float pre)
{
#pragma unroll
    for (int j = 0; j < KN / 8; j++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            s[j][e] = tanh_approx_f32(s[j][e] * pre);
}

struct online_softmax {
    float m[2];   /* running row max, log2 units; -inf before any key */
    float l[2];   /* partial row sum of 2^(x - m) over this thread's columns */

    __device__ __forceinline__ void init()
    {
        m[0] = m[1] = FA4_NEG_INF;
        l[0] = l[1] = 0.f;
    }

    /* Turn raw scores S into unnormalised probabilities in place, update
     * m and l, and rescale the output accumulator O by 2^(m_old - m_new). */
    __device__ __forceinline__ void step(float (&s)[KN / 8][4],
                                         float (&o)[DV / 8][4], float scale_log2)
    {
        float mx[2] = {FA4_NEG_INF, FA4_NEG_INF};
#pragma unroll
        for (int j = 0; j < KN / 8; j++) {
            mx[0] = fmaxf(mx[0], fmaxf(s[j][0], s[j][1]));
            mx[1] = fmaxf(mx[1], fmaxf(s[j][2], s[j][3]));
        }
        float alpha[2], m_use[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            mx[h] = fmaxf(mx[h], shfl_xor_sync_f32(mx[h], 1));
            mx[h] = fmaxf(mx[h], shfl_xor_sync_f32(mx[h], 2));
            const float m_new = fmaxf(m[h], mx[h] * scale_log2);
            /* A fully masked row has max = -inf; use 0 so exp2(x - max)
             * gives 0, not NaN. */
            m_use[h] = m_new == FA4_NEG_INF ? 0.f : m_new;
            alpha[h] = ex2_approx_ftz_f32(m[h] - m_use[h]);
            m[h] = m_new;
        }
        float sum[2] = {0.f, 0.f};
#pragma unroll
        for (int j = 0; j < KN / 8; j++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int h = e >> 1;
                s[j][e] = ex2_approx_ftz_f32(fmaf(s[j][e], scale_log2, -m_use[h]));
                sum[h] += s[j][e];
            }
        }
#pragma unroll
        for (int h = 0; h < 2; h++)
            l[h] = l[h] * alpha[h] + sum[h];
#pragma unroll
        for (int j = 0; j < DV / 8; j++) {
            o[j][0] *= alpha[0];
            o[j][1] *= alpha[0];
            o[j][2] *= alpha[1];
            o[j][3] *= alpha[1];
        }
    }

    /* Sum the row sums over the quad (call once, before the epilogue). */
    __device__ __forceinline__ void finish()
    {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            l[h] += shfl_xor_sync_f32(l[h], 1);
            l[h] += shfl_xor_sync_f32(l[h], 2);
        }
    }
};

} /* namespace sm80 */

#endif
