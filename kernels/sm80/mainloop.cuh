/*
** sm80/mainloop.cuh -- cp.async K/V ring and the two mma.sync GEMMs
** (included by kernel.cuh).
**
** Pipeline.  Loads are numbered t = 0, 1, 2, ...: even t is K of the t/2-th
** key block visited, odd t its V; each is one cp.async group, and load t
** goes to ring slot (t/2) % STAGES of its kind.  Before consuming load t a
** thread waits until at most 2*STAGES-2 newer groups are pending, then
** __syncthreads() (load t visible to all; every warp done with load t-1),
** then issues load t + 2*STAGES - 1 into the slot load t-1 used.  With
** STAGES = 1 this is FlashAttention-2's schedule: V(n) streams in during
** S = Q K(n)^T, K(n+1) during O += P V(n).  Loads past the last block are
** empty groups, which keeps the counting uniform.
**
** Key blocks are visited from the last to the first, so only the first few
** visited (ragged tail, diagonal) need the element mask.  A split (flash-
** decoding) visits only its share of the tile's block range.
**
** With FA4_KV_SPLIT_WARPS the CTA has 16 query rows and warp w takes keys
** [w KN, (w+1) KN) of every block (KN = BN / WARPS), keeping its own
** softmax state; kernel.cuh merges the warps before the epilogue.
*/
#ifndef FA4_SM80_MAINLOOP_CUH
#define FA4_SM80_MAINLOOP_CUH

namespace sm80 {

/* Byte offset of 16 B chunk C of row R in a tile of ROWS rows stored as
 * SWZ-byte-wide swizzled boxes (see kernel.cuh). */
template <int ROWS>
__device__ __forceinline__ u32 tile_offset(int r, int c)
{
    constexpr int CPB = SWZ / 16;   /* chunks per box row */
    const int sw = SWZ == 128 ? (r & 7) : ((r >> 1) & 3);
    return (u32)((c / CPB) * ROWS * SWZ + r * SWZ + (((c % CPB) ^ sw) << 4));
}

/* Issue the cp.async of a ROWS x COLS tile whose row r starts at
 * SRC.addr(ROW0 + r) into the swizzled tile at SMEM; rows >= ROWS_VALID
 * are zero-filled without reading global memory (nor the block table). */
template <int ROWS, int COLS, class Rows>
__device__ __forceinline__ void load_tile(u32 smem, const Rows &src, int row0,
                                          int rows_valid, int tid)
{
    constexpr int CHUNKS = COLS / 8;
    constexpr int TOTAL = ROWS * CHUNKS;
#pragma unroll
    for (int k = 0; k < (TOTAL + THREADS - 1) / THREADS; k++) {
        const int i = tid + k * THREADS;
        if (TOTAL % THREADS != 0 && i >= TOTAL)
            break;
        const int r = i / CHUNKS, c = i % CHUNKS;
        const bool valid = r < rows_valid;
        /* An invalid row reads nothing (src-size 0): any address will do. */
        const unsigned char *g = valid ? src.addr(row0 + r) + c * 16 : src.any();
        cp_async_cg_16(smem + tile_offset<ROWS>(r, c), g, valid);
    }
}

/* Everything one CTA needs to stream its key blocks. */
struct kv_stream {
    kv_rows k, v;
    int seqlen_k;
    int n_hi;       /* first block not visited; visiting n_hi-1 down */
    int nblocks;    /* blocks visited */
    u32 sk, sv;

    /* Issue load T (K or V of the T/2-th visited block), or nothing when
     * past the last block; then close the group. */
    __device__ __forceinline__ void issue(int t, int tid) const
    {
        const int it = t >> 1;
        if (it < nblocks) {
            const int n_block = n_hi - 1 - it;
            const int slot = it % STAGES;
            const int rows_valid = seqlen_k - n_block * BN;
            if ((t & 1) == 0)
                load_tile<BN, D>(sk + slot * K_TILE_BYTES, k, n_block * BN, rows_valid, tid);
            else
                load_tile<BN, DV>(sv + slot * V_TILE_BYTES, v, n_block * BN, rows_valid, tid);
        }
        cp_async_commit_group();
    }
};

__device__ __forceinline__ void mma_16816(float d[4], const u32 a[4], u32 b0, u32 b1)
{
#if FA4_DTYPE == 1
    mma_m16n8k16_bf16(d, a, b0, b1);
#else
    mma_m16n8k16_f16(d, a, b0, b1);
#endif
}

__device__ __forceinline__ u32 pack_2(float lo, float hi)
{
#if FA4_DTYPE == 1
    return cvt_rn_bf16x2_f32(lo, hi);
#else
    return cvt_rn_f16x2_f32(lo, hi);
#endif
}

/* A fragment (m16 x k16) of Q for k-step KK from the swizzled Q tile:
 * matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15),
 * (rows 8-15, k 8-15) -> a0..a3. */
__device__ __forceinline__ void load_q_frag(u32 a[4], u32 sq, int row0, int lane,
                                            int kk)
{
    const int r = row0 + (lane & 15);
    const int c = 2 * kk + (lane >> 4);
    ldmatrix_x4(a, sq + tile_offset<BM>(r, c));
}

/* S[16 x KN] = Q K^T for this warp from keys KOFS.. of K tile SK. */
__device__ __forceinline__ void gemm_qk(float (&s)[KN / 8][4],
                                        const u32 (&qf)[Q_IN_REGS ? D / 16 : 1][4],
                                        u32 sq, u32 sk, int row0, int kofs, int lane)
{
#pragma unroll
    for (int j = 0; j < KN / 8; j++)
        s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
    /* ldmatrix x4 of K: (keys 0-7, k 0-7), (keys 0-7, k 8-15), (keys 8-15,
     * k 0-7), (keys 8-15, k 8-15) -> b0, b1 of n-block 2jp, then 2jp+1. */
    const int kr = (lane & 7) + ((lane >> 4) << 3);
    const int kc = (lane >> 3) & 1;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        u32 a[4];
        if (Q_IN_REGS) {
            a[0] = qf[Q_IN_REGS ? kk : 0][0];
            a[1] = qf[Q_IN_REGS ? kk : 0][1];
            a[2] = qf[Q_IN_REGS ? kk : 0][2];
            a[3] = qf[Q_IN_REGS ? kk : 0][3];
        } else {
            load_q_frag(a, sq, row0, lane, kk);
        }
#pragma unroll
        for (int jp = 0; jp < KN / 16; jp++) {
            u32 b[4];
            ldmatrix_x4(b, sk + tile_offset<BN>(kofs + jp * 16 + kr, 2 * kk + kc));
            mma_16816(s[2 * jp], a, b[0], b[1]);
            mma_16816(s[2 * jp + 1], a, b[2], b[3]);
        }
    }
}

/* O[16 x DV] += P V with P = S packed to 16 bits: the accumulator of
 * n-blocks 2kk and 2kk+1 is exactly the A fragment of k-step kk. */
__device__ __forceinline__ void gemm_pv(float (&o)[DV / 8][4],
                                        const float (&s)[KN / 8][4], u32 sv,
                                        int kofs, int lane)
{
    /* ldmatrix x4.trans of V: (keys 0-7, dv 0-7), (keys 8-15, dv 0-7),
     * (keys 0-7, dv 8-15), (keys 8-15, dv 8-15). */
    const int vr = lane & 15;
    const int vc = lane >> 4;
#pragma unroll
    for (int kk = 0; kk < KN / 16; kk++) {
        u32 a[4];
        a[0] = pack_2(s[2 * kk][0], s[2 * kk][1]);
        a[1] = pack_2(s[2 * kk][2], s[2 * kk][3]);
        a[2] = pack_2(s[2 * kk + 1][0], s[2 * kk + 1][1]);
        a[3] = pack_2(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
        for (int jp = 0; jp < DV / 16; jp++) {
            u32 b[4];
            ldmatrix_x4_trans(b, sv + tile_offset<BN>(kofs + kk * 16 + vr, 2 * jp + vc));
            mma_16816(o[2 * jp], a, b[0], b[1]);
            mma_16816(o[2 * jp + 1], a, b[2], b[3]);
        }
    }
}

/* The whole main loop of one query tile (or its split's share of the key
 * range): leaves the unnormalised O and the softmax state (max, partial
 * sums) in registers. */
__device__ __forceinline__ void mainloop_run(const fa4_params &p, const fa4_serving &sv_args,
                                             const tile_info &t, const q_rows &gq,
                                             const kv_rows &gk, const kv_rows &gv,
                                             u32 sq, u32 sk, u32 sv,
                                             float (&o)[DV / 8][4],
                                             online_softmax &sm)
{
    const int tid = (int)threadIdx.x;
    const int warp = tid >> 5, lane = tid & 31;
    const int row0 = KV_SPLIT_WARPS ? 0 : warp * 16;
    const int kofs = KV_SPLIT_WARPS ? warp * KN : 0;

#pragma unroll
    for (int j = 0; j < DV / 8; j++)
        o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
    sm.init();

    int n_lo, n_hi;
    key_mask::block_range(p, t, &n_lo, &n_hi);
    if (sv_args.num_splits > 1 && n_hi > n_lo) {
        const int per = (n_hi - n_lo + sv_args.num_splits - 1) / sv_args.num_splits;
        const int lo = n_lo + t.split * per;
        n_hi = min(n_hi, lo + per);
        n_lo = lo;
    }

    kv_stream kv;
    kv.k = gk;
    kv.v = gv;
    kv.seqlen_k = t.seqlen_k;
    kv.n_hi = n_hi;
    kv.nblocks = n_hi > n_lo ? n_hi - n_lo : 0;
    kv.sk = sk;
    kv.sv = sv;

    load_tile<BM, D>(sq, gq, 0, t.rows - t.m_start, tid);
    cp_async_commit_group();
    if (kv.nblocks == 0)
        return;   /* no key visible: O = 0, l = 0 (the epilogue waits) */

#pragma unroll
    for (int i = 0; i < 2 * STAGES - 1; i++)
        kv.issue(i, tid);

    key_mask mask;
    mask.init(p, t, row0, lane);

    u32 qf[Q_IN_REGS ? D / 16 : 1][4];
    float s[KN / 8][4];

    for (int it = 0; it < kv.nblocks; it++) {
        const int n_block = n_hi - 1 - it;
        const int slot = it % STAGES;

        cp_async_wait_group<2 * STAGES - 2>();
        __syncthreads();
        kv.issue(2 * it + 2 * STAGES - 1, tid);
        if (Q_IN_REGS && it == 0) {
#pragma unroll
            for (int kk = 0; kk < (Q_IN_REGS ? D / 16 : 1); kk++)
                load_q_frag(qf[kk], sq, row0, lane, kk);
        }
        gemm_qk(s, qf, sq, sk + slot * K_TILE_BYTES, row0, kofs, lane);
#if FA4_SOFTCAP
        softcap_scores(s, p.softcap_pre);
#endif
        if (key_mask::block_needs_mask(p, t, n_block))
            mask.apply(s, n_block * BN + kofs, lane);
        sm.step(s, o, p.scale_log2);

        cp_async_wait_group<2 * STAGES - 2>();
        __syncthreads();
        kv.issue(2 * it + 2 * STAGES, tid);
        gemm_pv(o, s, sv + slot * V_TILE_BYTES, kofs, lane);
    }
}

} /* namespace sm80 */

#endif
