/*
** common/combine.cuh -- the second step of a split-KV launch: merge the
** splits' partial O and LSE (fa4_serving.o_partial / lse_partial) into O
** and LSE.  Included by a family's kernel.cuh after its constants
** (FA4_DV, FA4_OUT_DTYPE, FA4_VARLEN) are defined.
**
** With lse_s the split's log-sum-exp and O_s its normalised output,
**   lse = log(sum_s exp(lse_s)),  O = sum_s exp(lse_s - lse) O_s.
** A split that saw no key has lse_s = -inf and weighs 0; a row no split
** saw gets O = 0 and lse = -inf.
**
** Grid (ceil(seqlen_q / 4), heads_q, batch), 128 threads: one warp per
** query row, lane l owns columns 2l, 2l+1, 2l+64, ...
*/
#ifndef FA4_COMMON_COMBINE_CUH
#define FA4_COMMON_COMBINE_CUH

#define FA4_COMBINE_ROWS 4   /* query rows (warps) per CTA */

extern "C" __global__ void __launch_bounds__(32 * FA4_COMBINE_ROWS)
fa4_combine(const fa4_params p, const fa4_serving s)
{
    const int warp = (int)threadIdx.x >> 5, lane = (int)threadIdx.x & 31;
    const int qi = (int)blockIdx.x * FA4_COMBINE_ROWS + warp;
    const int h = (int)blockIdx.y, b = (int)blockIdx.z;
    const float neg_inf = -__int_as_float(0x7f800000);
#if FA4_VARLEN
    const int *cu = (const int *)s.cu_seqlens_q;
    const long long q0 = cu[b];
    const int seqlen_q = cu[b + 1] - cu[b];
    const long long total_q = cu[p.batch];
#else
    const long long q0 = (long long)b * p.seqlen_q;
    const int seqlen_q = p.seqlen_q;
#endif
    if (qi >= seqlen_q)
        return;
    const long long row = q0 + qi;
    const long long split_stride = (long long)p.heads_q * s.rows_cap;
    const float *lse_s = (const float *)s.lse_partial + (long long)h * s.rows_cap + row;
    const float *o_s = (const float *)s.o_partial + ((long long)h * s.rows_cap + row) * FA4_DV;

    /* In log2 units from here on: lse2 = lse * log2(e). */
    float mx = neg_inf;
    for (int i = 0; i < s.num_splits; i++)
        mx = fmaxf(mx, lse_s[i * split_stride]);
#if FA4_SINKS
    /* The head's sink joins as one more term with no value row. */
    const float sink = ((const float *)p.sinks)[h];
    mx = fmaxf(mx, sink);
#endif
    float sum = 0.f;
    if (mx != neg_inf)
        for (int i = 0; i < s.num_splits; i++)
            sum += ex2_approx_ftz_f32((lse_s[i * split_stride] - mx) * 1.4426950408889634f);
#if FA4_SINKS
    if (sink != neg_inf)
        sum += ex2_approx_ftz_f32((sink - mx) * 1.4426950408889634f);
#endif
    const float lse2 = sum > 0.f ? mx * 1.4426950408889634f + lg2_approx_ftz_f32(sum) : neg_inf;

#if FA4_VARLEN
    unsigned char *out = (unsigned char *)p.o + (row * p.o_row_stride + (long long)h * p.o_head_stride) * 2;
#else
    unsigned char *out = (unsigned char *)p.o + ((long long)b * p.o_batch_stride +
                          (long long)qi * p.o_row_stride + (long long)h * p.o_head_stride) * 2;
#endif
    for (int c = 2 * lane; c < FA4_DV; c += 64) {
        float a0 = 0.f, a1 = 0.f;
        if (lse2 != neg_inf)
            for (int i = 0; i < s.num_splits; i++) {
                const float l = lse_s[i * split_stride];
                const float w = l == neg_inf ? 0.f
                                : ex2_approx_ftz_f32(l * 1.4426950408889634f - lse2);
                const float *src = o_s + i * split_stride * FA4_DV + c;
                a0 = fmaf(w, src[0], a0);
                a1 = fmaf(w, src[1], a1);
            }
#if FA4_OUT_DTYPE == 1
        *(unsigned *)(out + c * 2) = cvt_rn_bf16x2_f32(a0, a1);
#else
        *(unsigned *)(out + c * 2) = cvt_rn_f16x2_f32(a0, a1);
#endif
    }
    if (p.lse && lane == 0) {
        const float lse = lse2 == neg_inf ? neg_inf : lse2 * 0.69314718055994531f;
#if FA4_VARLEN
        ((float *)p.lse)[(long long)h * total_q + row] = lse;
#else
        ((float *)p.lse)[((long long)b * p.heads_q + h) * seqlen_q + qi] = lse;
#endif
    }
}

#endif
