/*
** sm80/epilogue.cuh -- O normalisation, 16-byte stores, LSE (included by
** kernel.cuh).
**
** O is divided by the row sum, converted to 16 bits and staged in the Q
** region (same swizzled box layout, BM x DV), then written back with
** 16-byte stores, one row chunk per thread and step, rows >= seqlen_q
** skipped.  LSE = ln(sum exp(scale*s)) = (max_log2 + log2(l)) * ln 2; a row
** that saw no key writes O = 0 and LSE = -inf.
*/
#ifndef FA4_SM80_EPILOGUE_CUH
#define FA4_SM80_EPILOGUE_CUH

namespace sm80 {

__device__ __forceinline__ void epilogue_store(const fa4_params &p, int m_start,
                                               unsigned char *go, float *lse,
                                               u32 sq, float (&o)[DV / 8][4],
                                               online_softmax &sm)
{
    const int tid = (int)threadIdx.x;
    const int warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, q = lane & 3;

    sm.finish();
    float inv[2];
#pragma unroll
    for (int h = 0; h < 2; h++)
        inv[h] = sm.l[h] > 0.f ? 1.f / sm.l[h] : 0.f;

    /* Every warp is done with Q (and all cp.async groups, empty ones too,
     * have landed) before Q's region is overwritten. */
    cp_async_wait_group<0>();
    __syncthreads();

#pragma unroll
    for (int j = 0; j < DV / 8; j++) {
        const int c = j;                 /* 16 B chunk = 8 columns */
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = warp * 16 + g + 8 * h;
            const u32 v = pack_2(o[j][2 * h] * inv[h], o[j][2 * h + 1] * inv[h]);
            st_shared_u32(sq + tile_offset<BM>(r, c) + 4 * q, v);
        }
    }

    if (lse && q == 0) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = warp * 16 + g + 8 * h;
            if (m_start + r < p.seqlen_q) {
                const float l = sm.l[h];
                lse[r] = l > 0.f ? (sm.m[h] + lg2_approx_ftz_f32(l)) * 0.69314718055994531f
                                 : FA4_NEG_INF;
            }
        }
    }
    __syncthreads();

    constexpr int CHUNKS = DV / 8;
    constexpr int TOTAL = BM * CHUNKS;
    const int rows_valid = p.seqlen_q - m_start;
#pragma unroll
    for (int k = 0; k < (TOTAL + THREADS - 1) / THREADS; k++) {
        const int i = tid + k * THREADS;
        if (TOTAL % THREADS != 0 && i >= TOTAL)
            break;
        const int r = i / CHUNKS, c = i % CHUNKS;
        if (r < rows_valid) {
            u32 v[4];
            ld_shared_v4_u32(v, sq + tile_offset<BM>(r, c));
            st_global_v4_u32(go + ((i64)r * p.o_row_stride + c * 8) * ELT, v);
        }
    }
}

} /* namespace sm80 */

#endif
