/*
** sm80/fp8.cuh -- e4m3 inputs in the sm80 family (included by
** mainloop.cuh).  Q, K and V stay 8-bit in shared memory, so every
** cp.async and every ring slot carries twice the keys of a 16-bit tile;
** each fragment is widened to fp16 in registers after its ldmatrix, and
** both GEMMs are fp16 mma.sync m16n8k16 with float32 accumulation (P in
** fp16).  V needs no transposed copy.
**
** ldmatrix reads 8x8 matrices of 16-bit elements: 8 rows x 16 bytes, 16
** e4m3 columns.  Read plainly, lane l gets bytes 4c..4c+3 of row l/4 (c =
** l % 4).  The B fragment of K^T (n = key l/4) wants the k pairs (2c,
** 2c+1) and (2c+8, 2c+9); Q K^T is unchanged by any permutation of k that
** Q and K share, so k positions 2c, 2c+1, 2c+8, 2c+9 are taken to be
** bytes 4c..4c+3: b0 is bytes 0 and 1, b1 bytes 2 and 3, and Q's A
** fragment (read the same way) a0/a1 bytes 0 and 1, a2/a3 bytes 2 and 3.
** A 16-byte chunk of columns is one k16 step, so one ldmatrix_x4 at the
** lane addresses of the 16-bit kernel (row l % 16, chunk 2i + l / 16)
** gives two k-steps of 16 rows.
**
** V is the B operand of P V, keys along k: a lane needs two keys of one
** column.  Read transposed, ldmatrix gives lane l the 16-bit elements
** (key 2c, column pair n) and (key 2c+1, column pair n), n = l/4, that is
** the bytes (2c, 2n), (2c, 2n+1), (2c+1, 2n), (2c+1, 2n+1): bytes 0 and 2
** are the key pair of column 2n, bytes 1 and 3 that of column 2n+1.  So
** one matrix feeds two n8 blocks, the chunk's even columns and its odd
** ones, and O's n-block 2ch + par holds columns 16 ch + 2n + par of chunk
** ch: lane c holds columns 16 ch + 4c + 2e + par (e its element pair), four
** adjacent columns per chunk and row, which is how the epilogue writes
** them (epilogue.cuh).
**
** Widening: cvt.rn.f16x2.e4m3x2 on sm_89 and later (exact: every e4m3 is
** an fp16).  Before sm_89 the bits move into fp16's places instead (sign
** to bit 15, exponent and mantissa one bit right of their byte's place),
** which is the value times 2^-8 for normals and subnormals alike (an e4m3
** NaN becomes a finite number there); FP8_UNIT is that factor and the
** kernel takes it out with the descales (scores by FP8_UNIT^2, O by
** FP8_UNIT).
*/
#ifndef FA4_SM80_FP8_CUH
#define FA4_SM80_FP8_CUH

namespace sm80 {

#if __CUDA_ARCH__ >= 890
constexpr float FP8_UNIT = 1.0f;
#else
constexpr float FP8_UNIT = 1.0f / 256.0f;
#endif

/* Bytes I (low half) and J (high half) of W, e4m3, as f16x2 times FP8_UNIT. */
template <int I, int J>
__device__ __forceinline__ u32 e4m3_pair(u32 w)
{
#if __CUDA_ARCH__ >= 890
    return cvt_rn_f16x2_e4m3x2(prmt_b32(w, 0u, (u32)(I | (J << 4))));
#else
    /* Each byte to the top of its half (zeros below, from the second
       operand), then sign kept and the rest shifted one bit right. */
    const u32 h = prmt_b32(w, 0u, (u32)(4 | (I << 4) | (4 << 8) | (J << 12)));
    return (h & 0x80008000u) | ((h >> 1) & 0x3f803f80u);
#endif
}

/* The A fragments of k-steps 2 KK2 and 2 KK2 + 1 of the m16 tile whose
 * e4m3 rows ldmatrix_x4 read into R (rows 0-7 / 8-15 of step 2 KK2, then
 * of 2 KK2 + 1). */
__device__ __forceinline__ void e4m3_a_frags(u32 (&a)[2][4], const u32 (&r)[4])
{
#pragma unroll
    for (int s = 0; s < 2; s++) {
        a[s][0] = e4m3_pair<0, 1>(r[2 * s]);
        a[s][1] = e4m3_pair<0, 1>(r[2 * s + 1]);
        a[s][2] = e4m3_pair<2, 3>(r[2 * s]);
        a[s][3] = e4m3_pair<2, 3>(r[2 * s + 1]);
    }
}

/* Q's fragments kept in registers (FA4_Q_IN_REGS), as fp16: QF[mt][kk]
 * for k-step kk, the 16-bit kernel's layout. */
template <int NT, int NK>
__device__ __forceinline__ void e4m3_q_frags(u32 (&qf)[NT][NK][4], const frag_lanes &fl,
                                             u32 sq_w)
{
#pragma unroll
    for (int mt = 0; mt < NT; mt++)
#pragma unroll
        for (int kk2 = 0; kk2 < NK / 2; kk2++) {
            u32 r[4], a[2][4];
            ldmatrix_x4(r, sq_w + fl.at<BM>(16 * mt, kk2));
            e4m3_a_frags(a, r);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                qf[mt][2 * kk2][i] = a[0][i];
                qf[mt][2 * kk2 + 1][i] = a[1][i];
            }
        }
}

/* S[WARP_ROWS x KN] = Q K^T from e4m3 tiles (gemm_qk's contract). */
__device__ __forceinline__ void gemm_qk_e4m3(float (&s)[MT][KN / 8][4], const q_frags &qf,
                                             const frag_lanes &fl, u32 sq, u32 sk, int kofs)
{
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int j = 0; j < KN / 8; j++)
            s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.f;
#pragma unroll
    for (int kk2 = 0; kk2 < D / 32; kk2++) {
        u32 a[MT][2][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            if (Q_IN_REGS) {
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    a[mt][0][i] = qf[Q_IN_REGS ? mt : 0][Q_IN_REGS ? 2 * kk2 : 0][i];
                    a[mt][1][i] = qf[Q_IN_REGS ? mt : 0][Q_IN_REGS ? 2 * kk2 + 1 : 0][i];
                }
            } else {
                u32 r[4];
                ldmatrix_x4(r, sq + fl.at<BM>(16 * mt, kk2));
                e4m3_a_frags(a[mt], r);
            }
        }
#pragma unroll
        for (int jp = 0; jp < KN / 16; jp++) {
            /* keys 0-7 / 8-15 of step 2 KK2, then of step 2 KK2 + 1 */
            u32 b[4];
            ldmatrix_x4(b, sk + fl.at<BN>(kofs + 16 * jp, kk2));
#pragma unroll
            for (int st = 0; st < 2; st++) {
                const u32 b00 = e4m3_pair<0, 1>(b[2 * st]), b01 = e4m3_pair<2, 3>(b[2 * st]);
                const u32 b10 = e4m3_pair<0, 1>(b[2 * st + 1]);
                const u32 b11 = e4m3_pair<2, 3>(b[2 * st + 1]);
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mma_16816(s[mt][2 * jp], a[mt][st], b00, b01);
                    mma_16816(s[mt][2 * jp + 1], a[mt][st], b10, b11);
                }
            }
        }
    }
}

/* O[WARP_ROWS x DV] += P V from an e4m3 V tile (gemm_pv's contract; O's
 * n-blocks in the order of the file comment). */
__device__ __forceinline__ void gemm_pv_e4m3(float (&o)[MT][DV / 8][4],
                                             const u32 (&pf)[MT][KN / 16][4],
                                             const frag_lanes &fl, u32 sv, int kofs)
{
#pragma unroll
    for (int kk = 0; kk < KN / 16; kk++)
#pragma unroll
        for (int jp2 = 0; jp2 < DV / 32; jp2++) {
            /* keys 0-7 / 8-15 of chunk 2 JP2, then of chunk 2 JP2 + 1 */
            u32 b[4];
            ldmatrix_x4_trans(b, sv + fl.at<BN>(kofs + 16 * kk, jp2));
#pragma unroll
            for (int c = 0; c < 2; c++) {
                const u32 ev0 = e4m3_pair<0, 2>(b[2 * c]), ev1 = e4m3_pair<0, 2>(b[2 * c + 1]);
                const u32 od0 = e4m3_pair<1, 3>(b[2 * c]), od1 = e4m3_pair<1, 3>(b[2 * c + 1]);
                const int ch = 2 * jp2 + c;
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mma_16816(o[mt][2 * ch], pf[mt][kk], ev0, ev1);
                    mma_16816(o[mt][2 * ch + 1], pf[mt][kk], od0, od1);
                }
            }
        }
}

} /* namespace sm80 */

#endif
