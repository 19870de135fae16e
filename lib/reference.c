/*
** reference.c -- attention in double precision on the CPU, the ground
** truth every kernel is checked against.  Written for clarity, not speed.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "reference.h"
#include "dtype.h"
#include "problem.h"

/* bf16: the upper half of a float, rounded to nearest even. */
static uint16_t float_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fc0;                      /* NaN stays NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* IEEE half, rounded to nearest even, overflow to inf. */
static uint16_t float_to_fp16(float f)
{
    uint32_t u, sign, mant;
    int exp;
    memcpy(&u, &f, 4);
    sign = (u >> 16) & 0x8000u;
    exp = (int)((u >> 23) & 0xff) - 127 + 15;
    mant = u & 0x7fffffu;
    if (((u >> 23) & 0xff) == 0xff)
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
    if (exp >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (exp <= 0) {                          /* subnormal or zero */
        uint32_t m, shift, half, r;
        if (exp < -10)
            return (uint16_t)sign;
        m = mant | 0x800000u;
        shift = (uint32_t)(14 - exp);
        half = 1u << (shift - 1);
        r = m >> shift;
        if ((m & ((1u << shift) - 1)) > half || ((m & ((1u << shift) - 1)) == half && (r & 1)))
            r++;
        return (uint16_t)(sign | r);
    }
    {
        uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13);
        uint32_t rest = mant & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1)))
            h++;                             /* may carry into the exponent: correct */
        return (uint16_t)h;
    }
}

static float fp16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, u;
    float f;
    if (exp == 0) {
        f = ldexpf((float)mant, -24);
        return sign ? -f : f;
    }
    if (exp == 31)
        u = sign | 0x7f800000u | (mant << 13);
    else
        u = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    memcpy(&f, &u, 4);
    return f;
}

uint16_t ref_float_to_half(float f, fa4_dtype dtype)
{
    return dtype == FA4_DTYPE_FP16 ? float_to_fp16(f) : float_to_bf16(f);
}

float ref_half_to_float(uint16_t h, fa4_dtype dtype)
{
    uint32_t u;
    float f;
    if (dtype == FA4_DTYPE_FP16)
        return fp16_to_float(h);
    u = (uint32_t)h << 16;
    memcpy(&f, &u, 4);
    return f;
}

/* Element (b, s, h, x) of a contiguous BSHD tensor in DT. */
static double at(const void *t, fa4_dtype dt, int S, int H, int D, int b, int s, int h, int x)
{
    return dtype_load(t, (((size_t)b * S + s) * H + h) * D + x, dt);
}

void ref_attention_row(double *o, double *lse, const fa4_problem *p, const uint16_t *q,
                       const uint16_t *k, const uint16_t *v, int b, int i, int h)
{
    ref_attention_row_sinks(o, lse, p, q, k, v, NULL, b, i, h);
}

void ref_attention_row_sinks(double *o, double *lse, const fa4_problem *p, const uint16_t *q,
                             const uint16_t *k, const uint16_t *v, const float *sinks,
                             int b, int i, int h)
{
    ref_attention_row_scaled(o, lse, p, q, k, v, sinks, NULL, NULL, NULL, b, i, h);
}

void ref_attention_row_scaled(double *o, double *lse, const fa4_problem *p, const void *q,
                              const void *k, const void *v, const float *sinks,
                              const float *q_descale, const float *k_descale,
                              const float *v_descale, int b, int i, int h)
{
    ref_attention_row_tokens(o, lse, p, q, k, v, sinks, q_descale, k_descale, v_descale, NULL,
                             NULL, b, i, h);
}

void ref_attention_row_tokens(double *o, double *lse, const fa4_problem *p, const void *q,
                              const void *k, const void *v, const float *sinks,
                              const float *q_descale, const float *k_descale,
                              const float *v_descale, const float *q_token_scale,
                              const float *k_token_scale, int b, int i, int h)
{
    const int d = p->head_dim_qk, dv = p->head_dim_v ? p->head_dim_v : d;
    const int hk = h / (p->heads_q / p->heads_kv);
    /* This row's and its KV head's per-token factors ([batch, heads, seq]). */
    const float *kt = k_token_scale
                      ? k_token_scale + ((size_t)b * p->heads_kv + hk) * p->seqlen_k : NULL;
    const double qt = q_token_scale
                      ? q_token_scale[((size_t)b * p->heads_q + h) * p->seqlen_q + i] : 1.0;
    /* Stored values times their (batch, KV head) factor: the real inputs. */
    const double qf = q_descale ? q_descale[b * p->heads_kv + hk] : 1.0;
    const double kf = k_descale ? k_descale[b * p->heads_kv + hk] : 1.0;
    const double vf = v_descale ? v_descale[b * p->heads_kv + hk] : 1.0;
    const long diag = (long)p->seqlen_k - p->seqlen_q;
    const int wr = p->causal ? 0 : p->window_right;
    const double scale = problem_softmax_scale(p);
    double *s = malloc(sizeof *s * (size_t)p->seqlen_k);
    double m = -INFINITY, sum = 0, sink;
    int j, x;

    memset(o, 0, sizeof *o * (size_t)dv);
    if (!s) {
        *lse = NAN;
        return;
    }
    for (j = 0; j < p->seqlen_k; j++) {
        double acc = 0;
        if ((p->window_left >= 0 && j < i + diag - p->window_left) || (wr >= 0 && j > i + diag + wr)) {
            s[j] = -INFINITY;
            continue;
        }
        for (x = 0; x < d; x++)
            acc += at(q, p->dtype, p->seqlen_q, p->heads_q, d, b, i, h, x) *
                   at(k, p->dtype, p->seqlen_k, p->heads_kv, d, b, j, hk, x);
        s[j] = acc * qf * kf * scale * qt * (kt ? (double)kt[j] : 1.0);
        if (p->softcap > 0)
            s[j] = p->softcap * tanh(s[j] / p->softcap);
        if (s[j] > m)
            m = s[j];
    }
    sink = p->attention_sinks && sinks ? (double)sinks[h] : -INFINITY;
    if (m == -INFINITY && sink == -INFINITY) {   /* the row sees no key */
        *lse = -INFINITY;
        free(s);
        return;
    }
    if (sink > m)
        m = sink;
    if (sink > -INFINITY)
        sum = exp(sink - m);                     /* a term without a value row */
    for (j = 0; j < p->seqlen_k; j++) {
        double w;
        if (s[j] == -INFINITY)
            continue;
        w = exp(s[j] - m);
        sum += w;
        for (x = 0; x < dv; x++)
            o[x] += w * vf * at(v, p->dtype, p->seqlen_k, p->heads_kv, dv, b, j, hk, x);
    }
    for (x = 0; x < dv; x++)
        o[x] /= sum;
    *lse = m + log(sum);
    free(s);
}

void ref_attention(double *o, double *lse, const fa4_problem *p, const uint16_t *q,
                   const uint16_t *k, const uint16_t *v)
{
    ref_attention_sinks(o, lse, p, q, k, v, NULL);
}

void ref_attention_sinks(double *o, double *lse, const fa4_problem *p, const uint16_t *q,
                         const uint16_t *k, const uint16_t *v, const float *sinks)
{
    const int dv = p->head_dim_v ? p->head_dim_v : p->head_dim_qk;
    int b, i, h;

    for (b = 0; b < p->batch; b++)
        for (i = 0; i < p->seqlen_q; i++)
            for (h = 0; h < p->heads_q; h++) {
                double l;
                ref_attention_row_sinks(o + (((size_t)b * p->seqlen_q + i) * p->heads_q + h) * dv,
                                        &l, p, q, k, v, sinks, b, i, h);
                if (lse)
                    lse[((size_t)b * p->heads_q + h) * p->seqlen_q + i] = l;
            }
}

void ref_attention_tokens(double *o, double *lse, const fa4_problem *p, const uint16_t *q,
                          const uint16_t *k, const uint16_t *v, const float *q_token_scale,
                          const float *k_token_scale)
{
    const int dv = p->head_dim_v ? p->head_dim_v : p->head_dim_qk;
    int b, i, h;

    for (b = 0; b < p->batch; b++)
        for (i = 0; i < p->seqlen_q; i++)
            for (h = 0; h < p->heads_q; h++) {
                double l;
                ref_attention_row_tokens(o + (((size_t)b * p->seqlen_q + i) * p->heads_q + h) * dv,
                                         &l, p, q, k, v, NULL, NULL, NULL, NULL, q_token_scale,
                                         k_token_scale, b, i, h);
                if (lse)
                    lse[((size_t)b * p->heads_q + h) * p->seqlen_q + i] = l;
            }
}

double ref_rel_error(const uint16_t *out, const double *ref, size_t n, fa4_dtype dtype)
{
    double num = 0, den = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        double x = ref_half_to_float(out[i], dtype), e = x - ref[i];
        if (isnan(x) || isinf(x))
            return INFINITY;
        num += e * e;
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* The next value of *SEED's xorshift64* generator, uniform in [0, 1). */
static double next_uniform(uint64_t *seed)
{
    uint64_t s = *seed;

    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    *seed = s;
    return (double)((s * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

void ref_fill_random(uint16_t *x, size_t n, fa4_dtype dtype, uint64_t *seed)
{
    size_t i;

    /* A 16-bit pattern read as two e4m3 bytes holds e4m3's NaN codes
       (0x7f, 0xff) one byte in 128: fp8 buffers take ref_fill_inputs(). */
    if (dtype == FA4_DTYPE_FP8_E4M3) {
        ref_fill_inputs(x, 2 * n, dtype, seed);
        return;
    }
    /* xorshift64*: fast, and the same seed gives the same inputs */
    for (i = 0; i < n; i++)
        x[i] = ref_float_to_half((float)(next_uniform(seed) * 2.0 - 1.0), dtype);
}

void ref_fill_inputs(void *x, size_t n, fa4_dtype dtype, uint64_t *seed)
{
    size_t i;

    if (dtype != FA4_DTYPE_FP8_E4M3) {
        ref_fill_random(x, n, dtype, seed);
        return;
    }
    for (i = 0; i < n; i++) {
        /* Box-Muller; 1 - u keeps the logarithm's argument in (0, 1]. */
        double u1 = 1.0 - next_uniform(seed), u2 = next_uniform(seed);
        double g = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        dtype_store(x, i, (float)g, dtype);
    }
}

void ref_fill_descale(float *x, size_t n, uint64_t *seed)
{
    size_t i;

    for (i = 0; i < n; i++)
        x[i] = (float)(0.5 + 1.5 * next_uniform(seed));
}
