/*
** exp2.cuh -- 2^x and tanh without the MUFU unit, for kernels whose
** softmax moves part of its exponentials off MUFU.EX2 (FA4_EXP2_EMU_PCT)
** or part of softcap's tanh off MUFU.TANH (FA4_TANH_POLY_PCT).
**
** Only the FMA and integer pipes may be used: floor() (FRND) and the
** float-to-int conversion (F2I) run on the same quarter-rate unit as
** MUFU.EX2, so an emulation built on them costs two of that unit's slots
** for the one it saves.  Adding 1.5 * 2^23 with round-down leaves floor(x)
** in the low mantissa bits of the sum (|x| < 2^22), which gives both the
** integer part (shifted into the exponent field) and, subtracted back,
** the fraction.
*/
#ifndef FA4_COMMON_EXP2_CUH
#define FA4_COMMON_EXP2_CUH

/* 2^x as 2^floor(x) * p(frac x), p of degree 3 fitted to 2^f on [0, 1)
 * (relative error ~1e-4, below bf16/fp16/e4m3 rounding of P).  Valid for
 * x <= 127; x below -127 gives 2^-127 scaled towards 0 (P rounds it to 0). */
FA4_DEV float exp2_fma(float x)
{
    const float magic = 12582912.0f;                 /* 1.5 * 2^23 */
    x = fmaxf(x, -127.0f);
    const float t = __fadd_rd(x, magic);             /* mantissa low bits: floor(x) */
    const float f = x - (t - magic);
    float r = fmaf(0.077119089663028717f, f, 0.227564394474029541f);
    r = fmaf(r, f, 0.695146143436431885f);
    r = fmaf(r, f, 1.0f);
    /* (bits of t) << 23 keeps only floor(x) << 23: the magic's own bits
       shift out of the word. */
    return __int_as_float(__float_as_int(r) + (__float_as_int(t) << 23));
}

/* tanh(y) for |y| <= 1 on the FMA pipe: y p(y^2), p of degree 3 fitted
 * to tanh(y) / y (absolute error 3.3e-5 on [-1, 1], below
 * tanh.approx.f32's ~2^-11 relative).  Outside [-1, 1] it is not tanh:
 * callers check the range (softcap_scores).  tanh_fold() takes p's
 * coefficients with an input and an output factor folded in: POST
 * tanh(PRE x) + BIAS = x q(x^2) + BIAS for |PRE x| <= 1, two instructions
 * fewer than tanh_poly() with a multiply either side.  Those coefficients
 * hold PRE^7: the caller keeps PRE far from fp32's underflow
 * (lib/budget_sm90.c, sm90_tanh_poly_fits). */
struct fa4_tanh_fold {
    float c0, c1, c2, c3;
};

#define FA4_TANH_A0 0.999693751335144f
#define FA4_TANH_A1 -0.32889190316200256f
#define FA4_TANH_A2 0.11541356146335602f
#define FA4_TANH_A3 -0.024653933942317963f

FA4_DEV fa4_tanh_fold tanh_fold_make(float pre, float post)
{
    const float p2 = pre * pre;
    fa4_tanh_fold f;
    f.c0 = FA4_TANH_A0 * pre * post;
    f.c1 = FA4_TANH_A1 * pre * p2 * post;
    f.c2 = FA4_TANH_A2 * pre * p2 * p2 * post;
    f.c3 = FA4_TANH_A3 * pre * p2 * p2 * p2 * post;
    return f;
}

/* q(X^2) of F, by Horner's rule. */
FA4_DEV float tanh_fold_q(const fa4_tanh_fold &f, float x)
{
    const float x2 = x * x;
    float r = fmaf(f.c3, x2, f.c2);
    r = fmaf(r, x2, f.c1);
    return fmaf(r, x2, f.c0);
}

FA4_DEV float tanh_fold(const fa4_tanh_fold &f, float x, float bias)
{
    return fmaf(tanh_fold_q(f, x), x, bias);
}

FA4_DEV float tanh_poly(float y)
{
    const fa4_tanh_fold p = { FA4_TANH_A0, FA4_TANH_A1, FA4_TANH_A2, FA4_TANH_A3 };
    return tanh_fold_q(p, y) * y;
}

#endif
