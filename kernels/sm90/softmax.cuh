/*
** softmax.cuh -- online softmax in base 2 over one consumer warpgroup's
** 64 x BN score block.  Thread layout (m64nN f32 accumulator, KERNEL_NOTES):
** register i holds row g + 8 * ((i >> 1) & 1) of the warp's 16, column
** 8 * (i / 4) + 2 * (lane % 4) + (i & 1); a row lives in the 4 threads of a
** quad, so row reductions are two xor-shuffles.
**
** FA4 tricks:
**  - Lazy rescale: the running max m only moves when a row's new max beats
**    it by more than FA4_RESCALE_THRESHOLD (log2 units); otherwise exp2 uses
**    the stale max, values stay <= 2^threshold, and O and the sum skip the
**    multiply.  The result is exact: the final 1/l uses the same stale m.
**    The main loop goes further after its first block: no row max at all,
**    only a check of the row sums (softmax_exp_free, below).
**  - FA4_EXP2_EMU_PCT percent of the exponentials run as a degree-3
**    polynomial on the FMA pipe instead of MUFU.ex2, and under softcap
**    FA4_TANH_POLY_PCT percent of the tanh (softcap_scores).
*/
#ifndef FA4_SM90_SOFTMAX_CUH
#define FA4_SM90_SOFTMAX_CUH

#include "common/exp2.cuh"

#define FA4_NEG_INF (-__int_as_float(0x7f800000))

struct fa4_softmax {
    float m[2];   /* running max (scaled, log2 units) of rows g and g+8 */
    float l[2];   /* this thread's partial row sums (reduced at the end) */
};

/* Max of A and B across the 4 threads of a quad. */
FA4_DEV float quad_max(float x)
{
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
    return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
FA4_DEV float quad_sum(float x)
{
    x += __shfl_xor_sync(0xffffffffu, x, 1);
    return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

/* The largest of INIT and row H's scores (this thread's part of the row). */
template <int NS>
FA4_DEV float row_max(const float (&s)[NS], int h, float init)
{
    float mx = init;
#pragma unroll
    for (int c = 0; c < NS / 4; ++c)
        mx = fmaxf(mx, fmaxf(s[4 * c + 2 * h], s[4 * c + 2 * h + 1]));
    return mx;
}

/* 1 when element I of N goes to a polynomial on the FMA pipe instead of
 * MUFU (PCT % of them, spread evenly): exp2 (FA4_EXP2_EMU_PCT) or softcap's
 * tanh (FA4_TANH_POLY_PCT). */
__host__ __device__ constexpr bool in_fma_share(int i, int n, int pct)
{
    return pct > 0 && (i * pct) / 100 != ((i + 1) * pct) / 100;
}

#ifndef FA4_TANH_POLY_PCT
#define FA4_TANH_POLY_PCT 0
#endif
/* 1 when softcap_scores leaves score I of N as its exponent, C tanh(S *
 * pre) - M, not as tanh: the polynomial's share under the constant max,
 * whose scale and max are folded into its coefficients.  The other
 * scores keep exp_row's FFMA beside their exponential, as without the
 * share (the schedule ptxas gives that order is 3% faster at d128). */
__host__ __device__ constexpr bool softcap_done(int i, int n)
{
    return FA4_SOFTCAP_FIXED_MAX && in_fma_share(i, n, FA4_TANH_POLY_PCT);
}

/* With FA4_SOFTCAP_FIXED_MAX the max subtracted is a constant, not the
 * running row max: softcapped scores times SCALE_LOG2 (C, the cap in log2
 * units) lie in [-C, C], so every 2^(x - (C - 32)) lies in [2^(32 - 2C),
 * 2^32], inside fp32's and bf16's normal range for C <= 76 (lib/problem.h:
 * bf16 under a cap of at most 52).  The row max, its shuffles and O's
 * rescale drop out (sm.m stays -inf until softmax_finish), and each
 * exponential depends on its own score only. */
FA4_DEV float softcap_fixed_max(float scale_log2)
{
    return scale_log2 - 32.0f;
}

FA4_DEV void softmax_init(fa4_softmax &sm)
{
    sm.m[0] = sm.m[1] = FA4_NEG_INF;
    sm.l[0] = sm.l[1] = 0.0f;
}

/* Row H of S := 2^(S * scale_log2 - M_USE) in place; returns the row's
 * sum, kept in PARTS partial sums (shorter dependency chains) added at
 * the end. */
template <int PARTS, int NS>
FA4_DEV float exp_row(float (&s)[NS], int h, float scale_log2, float m_use)
{
    static_assert(PARTS == 1 || PARTS == 2, "exp_row: one or two partial sums");
    float a0 = 0.0f, a1 = 0.0f;
#pragma unroll
    for (int c = 0; c < NS / 4; ++c) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int i = 4 * c + 2 * h + e;
            /* softcap_scores left its share's exponents (softcap_done) */
            const float x = softcap_done(i, NS) ? s[i] : fmaf(s[i], scale_log2, -m_use);
            s[i] = in_fma_share(i, NS, FA4_EXP2_EMU_PCT) ? exp2_fma(x) : ex2_approx_ftz_f32(x);
            if (PARTS == 2 && e == 1)
                a1 += s[i];
            else
                a0 += s[i];
        }
    }
    return PARTS == 1 ? a0 : a0 + a1;
}

/* Update the running max with score block S (raw scores) and return in
 * FACTOR the multiplier for O and l of each row (1 when the max stays).
 * Returns 1 when some row of this thread needs the rescale. */
template <int NS>
FA4_DEV bool softmax_update_max(fa4_softmax &sm, const float (&s)[NS], float scale_log2,
                                float (&factor)[2])
{
    bool any = false;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        factor[h] = 1.0f;
        if (FA4_SOFTCAP_FIXED_MAX)   /* the max is a constant (softcap_fixed_max) */
            continue;
        const float mx = quad_max(row_max(s, h, FA4_NEG_INF)) * scale_log2;
        const float m_old = sm.m[h];
        /* m_old = -inf and mx finite: the difference is +inf, so the row
         * takes mx and factor 0 (O and l are still 0).  Both -inf: NaN
         * compares false and the row stays empty. */
        if (mx - m_old > (float)FA4_RESCALE_THRESHOLD) {
            factor[h] = ex2_approx_ftz_f32(m_old - mx);
            sm.m[h] = mx;
            any = true;
        }
    }
    return any;
}

/* S := 2^(S * scale_log2 - m + FA4_P_LOG2) in place (fp8's P scale,
 * kernel.cuh); l := l * factor + row sums. */
template <int NS>
FA4_DEV void softmax_exp(fa4_softmax &sm, float (&s)[NS], float scale_log2,
                         const float (&factor)[2])
{
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        /* A fully masked row has m = -inf; use 0 so 2^(x - m) gives 0, not NaN. */
#if FA4_SOFTCAP_FIXED_MAX
        const float m_use = softcap_fixed_max(scale_log2);
#else
        const float m_use = (sm.m[h] == FA4_NEG_INF ? 0.0f : sm.m[h]) - (float)FA4_P_LOG2;
#endif
        sm.l[h] = fmaf(sm.l[h], factor[h], exp_row<1>(s, h, scale_log2, m_use));
    }
}

/* Exponentials with no row max (the main loop's blocks after the first,
 * once every row of the warp has seen a key).  The running max only has
 * to keep P inside its type's range, not to track each block: the block
 * is exponentiated against m as it stands, and its row sums tell whether
 * some P outgrew FA4_P_SUM_BOUND (each P is at most its row's sum).  That
 * is rare (the max must climb by about log2 of the bound), and then
 * softmax_renorm() moves m by the row's largest P; a sum that overflowed
 * (a climb of 2^128) sends the caller back to the scores.  So the common
 * block runs no FMNMX, no shuffle and no rescale test per score, and the
 * exponentials do not wait for a reduction.  The result is exact as
 * before: O, l and LSE all refer to the same m.
 * Bounds: P at most e4m3's 448 (fp8), fp16's 65504, and for bf16 2^64,
 * which leaves O and l 2^60 of fp32's range. */
#if FA4_FP8
#define FA4_P_SUM_BOUND 256.0f
#elif FA4_DTYPE == 2
#define FA4_P_SUM_BOUND 32768.0f
#else
#define FA4_P_SUM_BOUND 18446744073709551616.0f
#endif

/* 1 when some row of the warp has no running max yet (no key so far):
 * such a block takes the max first (softmax_update_max). */
FA4_DEV bool softmax_warp_has_empty_row(const fa4_softmax &sm)
{
    return __any_sync(0xffffffffu, sm.m[0] == FA4_NEG_INF || sm.m[1] == FA4_NEG_INF);
}

/* S := 2^(S * scale_log2 - m + FA4_P_LOG2) in place against the running
 * max (finite: softmax_warp_has_empty_row() is false); SUM: this thread's
 * row sums, in two partial sums each (shorter chains). */
template <int NS>
FA4_DEV void softmax_exp_free(const fa4_softmax &sm, float (&s)[NS], float scale_log2,
                              float (&sum)[2])
{
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        sum[h] = exp_row<2>(s, h, scale_log2, sm.m[h] - (float)FA4_P_LOG2);
    }
}

/* softmax_exp_free's sums: 0 within the bound, 1 when some row's exceeds
 * it (softmax_renorm), 2 when one is past 2^100 (a P may have overflowed,
 * and renorm's factor would leave fp32's normal range: the scores are
 * needed).  A NaN sum (NaN inputs) passes, as it would the max. */
FA4_DEV int softmax_sum_check(const float (&sum)[2])
{
    int v = 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        if (sum[h] > 1.2676506e30f)   /* 2^100; +inf too */
            v = 2;
        else if (sum[h] > FA4_P_SUM_BOUND && v == 0)
            v = 1;
    }
    return v;
}

/* Some thread's sum exceeded the bound: every row whose largest P (over
 * its quad, so the row's 4 threads agree) is above 1 moves m up by its
 * log2, P and this block's sum scale by the inverse, FACTOR[h] gets it
 * for O; the other rows add their sums.  Returns 1 when some row of this
 * thread moved.  Called by the whole warp (shuffles). */
template <int NS>
FA4_DEV bool softmax_renorm(fa4_softmax &sm, float (&s)[NS], const float (&sum)[2],
                            float (&factor)[2])
{
    bool any = false;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float mx = quad_max(row_max(s, h, 0.0f));
        factor[h] = 1.0f;
        if (mx > 1.0f) {
            const float d = lg2_approx_ftz_f32(mx);
            sm.m[h] += d;
            factor[h] = ex2_approx_ftz_f32(-d);
            any = true;
        }
        sm.l[h] = fmaf(sm.l[h], factor[h], sum[h] * factor[h]);
    }
#pragma unroll
    for (int i = 0; i < NS; ++i)
        s[i] *= factor[(i >> 1) & 1];
    return any;
}

/* Softcapping: S := tanh(S * pre) (scale_log2 then carries the cap).
 * FA4_TANH_POLY_PCT percent of the scores (config tanh_poly_pct) take a
 * polynomial on the FMA pipe instead of MUFU -- when every such score of
 * the warp's block lies in [-cap, cap] (one vote per block; the
 * polynomial's range), else the whole block takes MUFU.  Capped attention
 * keeps its scores well inside the cap as a rule, so the vote rarely falls
 * back.  Under FA4_SOFTCAP_FIXED_MAX that share leaves as the exponents
 * themselves (softcap_done), C tanh(S * pre) - M with C = scale_log2 and
 * M its constant max, folded into the polynomial's coefficients
 * (tanh_fold): two instructions fewer a score. */
struct fa4_softcap {
    float pre;             /* scale / cap (fp8: times Q's and K's descales) */
#if FA4_TANH_POLY_PCT > 0
    float lim;             /* 1 / pre: the polynomial's range in raw scores */
#endif
#if FA4_SOFTCAP_FIXED_MAX && FA4_TANH_POLY_PCT > 0
    float post, bias;      /* C and -M (softcap_done) */
    fa4_tanh_fold poly;    /* C tanh(pre s) as s q(s^2) */
#endif
};

FA4_DEV fa4_softcap softcap_make(float pre, float scale_log2)
{
    fa4_softcap sc;
    sc.pre = pre;
#if FA4_TANH_POLY_PCT > 0
    sc.lim = 1.0f / pre;
#endif
#if FA4_SOFTCAP_FIXED_MAX && FA4_TANH_POLY_PCT > 0
    sc.post = scale_log2;
    sc.bias = -softcap_fixed_max(scale_log2);
    sc.poly = tanh_fold_make(pre, scale_log2);
#else
    (void)scale_log2;
#endif
    return sc;
}

/* Score I of N on MUFU: tanh, or the exponent where softcap_done(). */
FA4_DEV float softcap_mufu(const fa4_softcap &sc, float s, int i, int n)
{
    const float t = tanh_approx_f32(s * sc.pre);
#if FA4_SOFTCAP_FIXED_MAX && FA4_TANH_POLY_PCT > 0
    if (softcap_done(i, n))
        return fmaf(t, sc.post, sc.bias);
#else
    (void)i, (void)n;
#endif
    return t;
}

template <int NS>
FA4_DEV void softcap_scores(float (&s)[NS], const fa4_softcap &sc)
{
#if FA4_TANH_POLY_PCT > 0
    bool wide = false;
#pragma unroll
    for (int i = 0; i < NS; ++i)
        if (in_fma_share(i, NS, FA4_TANH_POLY_PCT))
            wide |= fabsf(s[i]) > sc.lim;
    if (!__any_sync(0xffffffffu, wide)) {
#pragma unroll
        for (int i = 0; i < NS; ++i) {
            if (!in_fma_share(i, NS, FA4_TANH_POLY_PCT))
                s[i] = softcap_mufu(sc, s[i], i, NS);
            else
#if FA4_SOFTCAP_FIXED_MAX
                s[i] = tanh_fold(sc.poly, s[i], sc.bias);
#else
                s[i] = tanh_poly(s[i] * sc.pre);
#endif
        }
        return;
    }
#endif
#pragma unroll
    for (int i = 0; i < NS; ++i)
        s[i] = softcap_mufu(sc, s[i], i, NS);
}

/* Finish: full row sums; INV = 1/l (0 for an empty row), LSE natural log
 * (-inf for an empty row); SCALE_LOG2 gives FA4_SOFTCAP_FIXED_MAX's max.
 * With FA4_SINKS row h's sink logit SINK_LOG2[h] (log2 units) joins the
 * sum: O and l move to the larger of the two maxima.  l was summed against
 * m - FA4_P_LOG2 (softmax_exp), which is the max used here. */
FA4_DEV void softmax_finish(const fa4_softmax &sm, float scale_log2, float (&inv)[2],
                            float (&lse)[2], const float (&sink_log2)[2])
{
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float l = quad_sum(sm.l[h]);
#if FA4_SOFTCAP_FIXED_MAX
        const float m = softcap_fixed_max(scale_log2);   /* l = 0: an empty row */
#else
        (void)scale_log2;
        const float m = sm.m[h] - (float)FA4_P_LOG2;   /* -inf stays -inf */
#endif
#if FA4_SINKS
        const float m2 = fmaxf(m, sink_log2[h]);
        if (m2 == FA4_NEG_INF) {        /* no key and a sink of -inf */
            inv[h] = 0.0f;
            lse[h] = FA4_NEG_INF;
            continue;
        }
        const float a = ex2_approx_ftz_f32(m - m2);   /* 0 for an empty row */
        const float lt = fmaf(l, a, ex2_approx_ftz_f32(sink_log2[h] - m2));
        inv[h] = a / lt;
        lse[h] = (m2 + lg2_approx_ftz_f32(lt)) * 0.69314718055994531f;
#else
        (void)sink_log2;
        const bool empty = !(l > 0.0f);
        inv[h] = empty ? 0.0f : 1.0f / l;
        lse[h] = empty ? FA4_NEG_INF : (m + lg2_approx_ftz_f32(l)) * 0.69314718055994531f;
#endif
    }
}

#endif
