/*
** common/combine.cuh -- the second step of a split launch: merge the
** partial O and LSE of a row's parts into O and LSE.  Included by a
** family's kernel.cuh after its constants (FA4_DV, FA4_OUT_DTYPE,
** FA4_VARLEN) are defined.
**
** With lse_s a part's log-sum-exp and O_s its normalised output,
**   lse = log(sum_s exp(lse_s)),  O = sum_s exp(lse_s - lse) O_s.
** A part that saw no key has lse_s = -inf and weighs 0; a row no part
** saw gets O = 0 and lse = -inf.  The head's sink (FA4_SINKS) joins here
** as one more term with no value row, so the parts leave it out.
**
** Where the parts are, one entry per module (fa4_combine):
**  - split-KV (sm80): every row split alike, fa4_serving.o_partial /
**    lse_partial [split][head][row]; grid (ceil(seqlen_q / 4), heads_q,
**    batch).
**  - tail split (sm90, FA4_TAIL_SPLIT): only the rows of the last wave's
**    tiles, in the records of sm90/tail.cuh; grid ceil(tail rows / 4) over
**    the tail tiles' rows in order.
** 128 threads: one warp per query row, lane l owns columns 2l, 2l+1,
** 2l+64, ...
*/
#ifndef FA4_COMMON_COMBINE_CUH
#define FA4_COMMON_COMBINE_CUH

#define FA4_COMBINE_ROWS 4   /* query rows (warps) per CTA */

/* Merge one row of head H from N parts: part i's LSE at LSE_S[i * LSE_STEP],
 * its O (FA4_DV floats) at O_S + i * O_STEP; O to OUT (16-bit, FA4_OUT_DTYPE),
 * LSE (natural log) to *LSE_OUT unless NULL.  Called by the whole warp. */
FA4_DEV void combine_row(const fa4_params &p, int h, const float *lse_s, long long lse_step,
                         const float *o_s, long long o_step, int n, unsigned char *out,
                         float *lse_out, int lane)
{
    const float neg_inf = -__int_as_float(0x7f800000);

    /* In log2 units from here on: lse2 = lse * log2(e). */
    float mx = neg_inf;
    for (int i = 0; i < n; i++)
        mx = fmaxf(mx, lse_s[i * lse_step]);
#if FA4_SINKS
    const float sink = ((const float *)p.sinks)[h];
    mx = fmaxf(mx, sink);
#else
    (void)p;
    (void)h;
#endif
    float sum = 0.f;
    if (mx != neg_inf)
        for (int i = 0; i < n; i++)
            sum += ex2_approx_ftz_f32((lse_s[i * lse_step] - mx) * 1.4426950408889634f);
#if FA4_SINKS
    if (sink != neg_inf)
        sum += ex2_approx_ftz_f32((sink - mx) * 1.4426950408889634f);
#endif
    const float lse2 = sum > 0.f ? mx * 1.4426950408889634f + lg2_approx_ftz_f32(sum) : neg_inf;

    for (int c = 2 * lane; c < FA4_DV; c += 64) {
        float a0 = 0.f, a1 = 0.f;
        if (lse2 != neg_inf)
            for (int i = 0; i < n; i++) {
                const float l = lse_s[i * lse_step];
                const float w = l == neg_inf ? 0.f
                                : ex2_approx_ftz_f32(l * 1.4426950408889634f - lse2);
                const float *src = o_s + i * o_step + c;
                a0 = fmaf(w, src[0], a0);
                a1 = fmaf(w, src[1], a1);
            }
#if FA4_OUT_DTYPE == 1
        *(unsigned *)(out + c * 2) = cvt_rn_bf16x2_f32(a0, a1);
#else
        *(unsigned *)(out + c * 2) = cvt_rn_f16x2_f32(a0, a1);
#endif
    }
    if (lse_out && lane == 0)
        *lse_out = lse2 == neg_inf ? neg_inf : lse2 * 0.69314718055994531f;
}

#if FA4_TAIL_SPLIT
extern "C" __global__ void __launch_bounds__(32 * FA4_COMBINE_ROWS)
fa4_combine(const fa4_params p)
{
    const int warp = (int)threadIdx.x >> 5, lane = (int)threadIdx.x & 31;
    const int r = (int)blockIdx.x * FA4_COMBINE_ROWS + warp;   /* row of the tail */
    const int j = r / FA4_BM, row = r % FA4_BM;                 /* its tile, its row there */
    if (j >= p.total_tiles - p.tail_first)
        return;
    const int t = p.tail_first + j, m = t % p.m_blocks, bh = t / p.m_blocks;
    const int h = bh % p.heads_q, b = bh / p.heads_q, qi = m * FA4_BM + row;
    if (qi >= p.seqlen_q)
        return;
    const long long step = FA4_TAIL_RECORD / 4;   /* floats from one part's record to the next */
    const float *rec = (const float *)(p.tail_partial + (u64)j * p.tail_splits * FA4_TAIL_RECORD);
    unsigned char *out = (unsigned char *)p.o + ((long long)b * p.o_batch_stride +
                          (long long)qi * p.o_row_stride + (long long)h * p.o_head_stride) * 2;
    float *lse_out = p.lse ? (float *)p.lse + ((long long)b * p.heads_q + h) * p.seqlen_q + qi : 0;
    combine_row(p, h, rec + row, step, rec + FA4_BM + row * FA4_DV, step, p.tail_splits, out,
                lse_out, lane);
}
#else
extern "C" __global__ void __launch_bounds__(32 * FA4_COMBINE_ROWS)
fa4_combine(const fa4_params p, const fa4_serving s)
{
    const int warp = (int)threadIdx.x >> 5, lane = (int)threadIdx.x & 31;
    const int qi = (int)blockIdx.x * FA4_COMBINE_ROWS + warp;
    const int h = (int)blockIdx.y, b = (int)blockIdx.z;
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
#if FA4_VARLEN
    unsigned char *out = (unsigned char *)p.o + (row * p.o_row_stride + (long long)h * p.o_head_stride) * 2;
    float *lse_out = p.lse ? (float *)p.lse + (long long)h * total_q + row : 0;
#else
    unsigned char *out = (unsigned char *)p.o + ((long long)b * p.o_batch_stride +
                          (long long)qi * p.o_row_stride + (long long)h * p.o_head_stride) * 2;
    float *lse_out = p.lse ? (float *)p.lse + ((long long)b * p.heads_q + h) * seqlen_q + qi : 0;
#endif
    combine_row(p, h, lse_s, split_stride, o_s, split_stride * FA4_DV, s.num_splits, out,
                lse_out, lane);
}
#endif

#endif
