/*
** sm80/epilogue.cuh -- the end of a tile (included by kernel.cuh): merge
** the warps' softmax states when they split the key block, then either
** write O and LSE (one split) or the split's float32 partial O and LSE
** to the workspace for kernels/common/combine.cuh.
**
** O is divided by the row sum, converted to 16 bits and staged in the Q
** region (same swizzled box layout, BM x DV), then written back with
** 16-byte stores, one row chunk per thread and step, rows beyond the
** sequence skipped.  LSE = ln(sum exp(scale*s)) = (max_log2 + log2(l)) *
** ln 2; a row that saw no key writes O = 0 and LSE = -inf.  LSE is
** [batch, heads_q, seqlen_q] dense and [heads_q, total_q] varlen.
**
** With fp8 inputs O carries V's descale (and FP8_UNIT) and its n-blocks
** hold the columns sm80/fp8.cuh describes: per 16-column chunk, four
** adjacent columns per thread and row, from n-blocks 2ch and 2ch + 1.
*/
#ifndef FA4_SM80_EPILOGUE_CUH
#define FA4_SM80_EPILOGUE_CUH

namespace sm80 {

/* LSE of a finished row (natural log), -inf when it saw no key. */
__device__ __forceinline__ float row_lse(float m, float l)
{
    return l > 0.f ? (m + lg2_approx_ftz_f32(l)) * 0.69314718055994531f : FA4_NEG_INF;
}

/* 1/l and LSE of a finished row of query head HEAD (its max M, log2 units,
 * and sum L).  With FA4_SINKS the head's sink logit joins the sum: O and l
 * move to the larger of the two maxima.  Split launches leave the sink to
 * the merge (common/combine.cuh). */
__device__ __forceinline__ void row_finish(const fa4_params &p, int head, float m, float l,
                                           float *inv, float *lse)
{
#if FA4_SINKS
    const float sk = ((const float *)p.sinks)[head] * 1.4426950408889634f;
    const float m2 = fmaxf(m, sk);
    if (m2 == FA4_NEG_INF) {            /* no key and a sink of -inf */
        *inv = 0.f;
        *lse = FA4_NEG_INF;
        return;
    }
    const float a = ex2_approx_ftz_f32(m - m2);   /* 0 for a row that saw no key */
    const float lt = fmaf(l, a, ex2_approx_ftz_f32(sk - m2));
    *inv = a / lt;
    *lse = (m2 + lg2_approx_ftz_f32(lt)) * 0.69314718055994531f;
#else
    (void)p;
    (void)head;
    *inv = l > 0.f ? 1.f / l : 0.f;
    *lse = row_lse(m, l);
#endif
}

/*
** FA4_KV_SPLIT_WARPS: every warp holds (m, l, O) of the same 16 rows over
** its own keys (one m16 tile: MT = 1).  Rescale each to the common max,
** sum them into warp 0.  RED is the K region (free once every cp.async has
** landed): partial O as [j][e][warp][lane] floats (conflict-free), then m
** and l per warp and row.
*/
__device__ __forceinline__ void merge_warps(float *red, float (&o_tiles)[MT][DV / 8][4],
                                            online_softmax &sm)
{
    static_assert(!KV_SPLIT_WARPS || MT == 1, "sm80: split-key warps share one m16 tile");
    float (&o)[DV / 8][4] = o_tiles[0];
    const int tid = (int)threadIdx.x;
    const int warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, q = lane & 3;
    float *red_m = red + WARPS * 32 * (DV / 2);
    float *red_l = red_m + WARPS * 16;

    cp_async_wait_group<0>();
    __syncthreads();
    if (q == 0) {
        red_m[warp * 16 + g] = sm.m[0];
        red_m[warp * 16 + g + 8] = sm.m[1];
    }
    __syncthreads();
    float scale[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        float mx = FA4_NEG_INF;
#pragma unroll
        for (int w = 0; w < WARPS; w++)
            mx = fmaxf(mx, red_m[w * 16 + g + 8 * h]);
        /* A warp that saw no key (m = -inf) contributes nothing. */
        scale[h] = sm.m[h] == FA4_NEG_INF ? 0.f : ex2_approx_ftz_f32(sm.m[h] - mx);
        sm.m[h] = mx;
        sm.l[h] *= scale[h];
    }
#pragma unroll
    for (int j = 0; j < DV / 8; j++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            red[((j * 4 + e) * WARPS + warp) * 32 + lane] = o[j][e] * scale[e >> 1];
    if (q == 0) {
        red_l[warp * 16 + g] = sm.l[0];
        red_l[warp * 16 + g + 8] = sm.l[1];
    }
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int j = 0; j < DV / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                float acc = 0.f;
#pragma unroll
                for (int w = 0; w < WARPS; w++)
                    acc += red[((j * 4 + e) * WARPS + w) * 32 + lane];
                o[j][e] = acc;
            }
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float l = 0.f;
#pragma unroll
            for (int w = 0; w < WARPS; w++)
                l += red_l[w * 16 + g + 8 * h];
            sm.l[h] = l;
        }
    }
}

/* What 1/l is multiplied by before O is written: V's fp8 descale (the
 * GEMM used the stored values), 1 for 16-bit inputs. */
__device__ __forceinline__ float o_factor(const fa4_params &p, const tile_info &t)
{
#if FA4_FP8
    return fp8_descale(p.v_descale, p, t) / FP8_UNIT;
#else
    (void)p;
    (void)t;
    return 1.f;
#endif
}

/* Tile row of the thread's row H (of TROWS) in the warp's tiles from ROW0. */
__device__ __forceinline__ int thread_row(int row0, int g, int h)
{
    return row0 + 16 * (h >> 1) + g + 8 * (h & 1);
}

/* One split of several: O / l and LSE as float32 into the workspace. */
__device__ __forceinline__ void epilogue_partial(const fa4_params &p, const fa4_serving &s,
                                                 const tile_info &t,
                                                 float (&o)[MT][DV / 8][4],
                                                 const online_softmax &sm)
{
    const int tid = tid_x_fresh();   /* no index held through the main loop */
    const int warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, q = lane & 3;
    const int row0 = KV_SPLIT_WARPS ? 0 : warp * WARP_ROWS;

    cp_async_wait_group<0>();   /* no copy may land after the CTA exits */
    if (KV_SPLIT_WARPS && warp != 0)
        return;
    const float of = o_factor(p, t);   /* one read, not one per row */
#pragma unroll
    for (int h = 0; h < TROWS; h++) {
        const int P = t.m_start + thread_row(row0, g, h);
        if (P >= t.rows)
            continue;
        const i64 row = ((i64)t.split * p.heads_q + row_head(t, P)) * s.rows_cap +
                        t.q_row0 + row_query(t, P);
        const float inv = sm.l[h] > 0.f ? of / sm.l[h] : 0.f;
        float *op = (float *)s.o_partial + row * DV;
        const int mt = h >> 1, e = 2 * (h & 1);
#if FA4_FP8
#pragma unroll
        for (int ch = 0; ch < DV / 16; ch++) {
            float4 v;
            v.x = o[mt][2 * ch][e] * inv;
            v.y = o[mt][2 * ch + 1][e] * inv;
            v.z = o[mt][2 * ch][e + 1] * inv;
            v.w = o[mt][2 * ch + 1][e + 1] * inv;
            *(float4 *)(op + ch * 16 + 4 * q) = v;
        }
#else
#pragma unroll
        for (int j = 0; j < DV / 8; j++) {
            float2 v;
            v.x = o[mt][j][e] * inv;
            v.y = o[mt][j][e + 1] * inv;
            *(float2 *)(op + j * 8 + 2 * q) = v;
        }
#endif
        if (q == 0)
            ((float *)s.lse_partial)[row] = row_lse(sm.m[h], sm.l[h]);
    }
}

/* The only split: normalised O in the output dtype, and LSE. */
__device__ __forceinline__ void epilogue_store(const fa4_params &p, const fa4_serving &s,
                                               const tile_info &t,
                                               const o_rows &go, u32 sq,
                                               float (&o)[MT][DV / 8][4],
                                               const online_softmax &sm)
{
    const int tid = tid_x_fresh();   /* no index held through the main loop */
    const int warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, q = lane & 3;
    const int row0 = KV_SPLIT_WARPS ? 0 : warp * WARP_ROWS;
    const bool owner = !KV_SPLIT_WARPS || warp == 0;

    float inv[TROWS], lse[TROWS];
    const float of = o_factor(p, t);
#pragma unroll
    for (int h = 0; h < TROWS; h++) {
        const int P = t.m_start + thread_row(row0, g, h);
        row_finish(p, row_head(t, P), sm.m[h], sm.l[h], &inv[h], &lse[h]);
        inv[h] *= of;
    }

    /* Every warp is done with Q (and all cp.async groups, empty ones too,
     * have landed) before Q's region is overwritten. */
    cp_async_wait_group<0>();
    __syncthreads();

    if (owner) {
#if FA4_FP8
#pragma unroll
        for (int ch = 0; ch < DV / 16; ch++) {
            /* columns 16 ch + 4q .. + 3: half of 16 B chunk 2 ch + q / 2 */
            const int c = 2 * ch + (q >> 1);
#pragma unroll
            for (int h = 0; h < TROWS; h++) {
                const int r = thread_row(row0, g, h);
                const int mt = h >> 1, e = 2 * (h & 1);
                const u32 off = sq + tile_offset<BM>(r, c) + 8 * (q & 1);
                st_shared_u32(off, pack_out_2(o[mt][2 * ch][e] * inv[h],
                                              o[mt][2 * ch + 1][e] * inv[h]));
                st_shared_u32(off + 4, pack_out_2(o[mt][2 * ch][e + 1] * inv[h],
                                                  o[mt][2 * ch + 1][e + 1] * inv[h]));
            }
        }
#else
#pragma unroll
        for (int j = 0; j < DV / 8; j++) {
            const int c = j;                 /* 16 B chunk = 8 columns */
#pragma unroll
            for (int h = 0; h < TROWS; h++) {
                const int r = thread_row(row0, g, h);
                const int mt = h >> 1, e = 2 * (h & 1);
                const u32 v = pack_out_2(o[mt][j][e] * inv[h], o[mt][j][e + 1] * inv[h]);
                st_shared_u32(sq + tile_offset<BM>(r, c) + 4 * q, v);
            }
        }
#endif
        if (p.lse && q == 0) {
#if FA4_VARLEN
            /* [heads_q, total_q]: read only by CTAs that write LSE. */
            const i64 total_q = ((const int *)s.cu_seqlens_q)[p.batch];
#endif
#pragma unroll
            for (int h = 0; h < TROWS; h++) {
                const int P = t.m_start + thread_row(row0, g, h);
                if (P < t.rows) {
                    const int h_q = row_head(t, P), qi = row_query(t, P);
#if FA4_VARLEN
                    const i64 idx = (i64)h_q * total_q + t.q_row0 + qi;
#else
                    const i64 idx = ((i64)t.batch * p.heads_q + h_q) * t.seqlen_q + qi;
#endif
                    ((float *)p.lse)[idx] = lse[h];
                }
            }
        }
    }
    __syncthreads();

    constexpr int CHUNKS = DV / 8;
    constexpr int TOTAL = BM * CHUNKS;
    const int rows_valid = t.rows - t.m_start;
#pragma unroll
    for (int k = 0; k < (TOTAL + THREADS - 1) / THREADS; k++) {
        const int i = tid + k * THREADS;
        if (TOTAL % THREADS != 0 && i >= TOTAL)
            break;
        const int r = i / CHUNKS, c = i % CHUNKS;
        if (r < rows_valid) {
            u32 v[4];
            ld_shared_v4_u32(v, sq + tile_offset<BM>(r, c));
            st_global_v4_u32(go.addr(r) + c * 16, v);
        }
    }
}

} /* namespace sm80 */

#endif
