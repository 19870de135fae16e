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
** Fused schedule (FA4_FUSED_KV, the config's fused_kv=1; 2+ stages): one
** barrier per key block.  Block it waits until its K and V both landed
** (at most 2*(STAGES-2) newer groups pending), then __syncthreads() (every
** warp is done with block it-1), then issues K and V of block
** it+STAGES-1 into block it-1's slots.  Loads run one block (at 2 stages)
** ahead instead of one and a half, and with no branch between the
** softmax and O += P V ptxas interleaves the exponentials with the MMAs.
**
** Key blocks are visited from the last to the first, so only the first few
** visited (ragged tail, diagonal) need the element mask.  A split (flash-
** decoding) visits only its share of the tile's block range.
**
** Warp w owns tile rows [w WARP_ROWS, (w+1) WARP_ROWS) as MT m16 tiles;
** every K and V fragment it loads feeds the MMAs of all MT.  At 32 rows
** and d128 the O and S accumulators alone take 192 of the 255 registers,
** so the loop keeps little else live: fragment addresses are a few lane
** parts plus immediates, cp.async addresses one pointer and a step, the
** mask bounds are recomputed in the blocks that need them, and P is
** packed before the second barrier so that S is dead while K loads issue.
** With FA4_KV_SPLIT_WARPS the CTA has 16 query rows and warp w takes keys
** [w KN, (w+1) KN) of every block (KN = BN / WARPS), keeping its own
** softmax state; kernel.cuh merges the warps before the epilogue.
** With fp8 inputs the tiles are e4m3 bytes and the two GEMMs are
** fp8.cuh's, which widen each fragment after its ldmatrix.
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
 * are zero-filled without reading global memory (nor the block table).
 * Thread t copies chunk t % CHUNKS of rows t / CHUNKS + k THREADS /
 * CHUNKS: for strided rows one address and one step serve them all. */
template <int ROWS, int COLS, class Rows>
__device__ __forceinline__ void load_tile(u32 smem, const Rows &src, int row0,
                                          int rows_valid)
{
    constexpr int CHUNKS = COLS * ELT / 16;
    constexpr int TOTAL = ROWS * CHUNKS;
    const int tid = tid_x_fresh();
    if (Rows::STRIDED && THREADS % CHUNKS == 0 && TOTAL % THREADS == 0) {
        constexpr int RSTEP = THREADS / CHUNKS;
        const int r0 = tid / CHUNKS, c = tid % CHUNKS;
        const unsigned char *g = src.addr(row0 + r0) + c * 16;
        const i64 step = (i64)RSTEP * src.row_bytes();
#pragma unroll
        for (int k = 0; k < TOTAL / THREADS; k++) {
            /* A row past the end reads nothing (src-size 0): its address
             * is formed but never used. */
            cp_async_cg_16(smem + tile_offset<ROWS>(r0 + k * RSTEP, c), g + k * step,
                           r0 + k * RSTEP < rows_valid);
        }
        return;
    }
#pragma unroll
    for (int k = 0; k < (TOTAL + THREADS - 1) / THREADS; k++) {
        const int i = tid + k * THREADS;
        if (TOTAL % THREADS != 0 && i >= TOTAL)
            break;
        const int r = i / CHUNKS, c = i % CHUNKS;
        const bool valid = r < rows_valid;
        /* An invalid row reads nothing (src-size 0): any address will do,
         * but forming this one could read the block table past its end. */
        const unsigned char *g = valid ? src.addr(row0 + r) + c * 16 : src.any();
        cp_async_cg_16(smem + tile_offset<ROWS>(r, c), g, valid);
    }
}

/* One thread's share of the K or V tile stream, held between blocks
 * (FA4_KV_PTRS): the global address of its first chunk in the next block
 * to load and that chunk's offset in a ring slot.  Issuing a block is
 * then a 64-bit add per row and one step down to the next block, instead
 * of load_tile's address from the block index and the thread index (about
 * 25 fewer instructions per tile at d64).  It costs 3 registers per tensor
 * through the loop, so the budget enables it where the register estimate
 * has room; it needs strided rows and rows RSTEP apart in one swizzle
 * phase. */
template <int COLS>
struct kv_ptr {
    static constexpr int CHUNKS = COLS * ELT / 16;
    static constexpr int TOTAL = BN * CHUNKS;
    static constexpr int RSTEP = THREADS / CHUNKS;
    static constexpr bool OK = kv_rows::STRIDED && THREADS % CHUNKS == 0 &&
                               TOTAL % THREADS == 0 && RSTEP % 8 == 0;
    const unsigned char *g;
    u32 soff;

    __device__ __forceinline__ void init(const kv_rows &src, int n_block)
    {
        const unsigned tid = (unsigned)tid_x_fresh();
        const int r0 = (int)(tid / CHUNKS), c = (int)(tid % CHUNKS);
        g = src.addr(n_block * BN) + (i64)r0 * src.row_bytes() + c * 16;
        soff = tile_offset<BN>(r0, c);
    }

    /* Copy this thread's chunks of the next block into the slot at SLOT
     * (rows from ROWS_VALID on zero-filled), then step to the block below. */
    __device__ __forceinline__ void issue(u32 slot, const kv_rows &src, int rows_valid)
    {
        const int r0 = (int)((unsigned)tid_x_fresh() / CHUNKS);
        const i64 step = (i64)RSTEP * src.row_bytes();
#pragma unroll
        for (int k = 0; k < TOTAL / THREADS; k++)
            cp_async_cg_16(slot + soff + (u32)(k * RSTEP * SWZ), g + k * step,
                           r0 + k * RSTEP < rows_valid);
        g -= (i64)BN * src.row_bytes();
    }
};

constexpr bool KV_PTRS = FA4_KV_PTRS && kv_ptr<D>::OK && kv_ptr<DV>::OK;

/* Everything one CTA needs to stream its key blocks. */
struct kv_stream {
    kv_rows k, v;
    int seqlen_k;
    int n_hi;       /* first block not visited; visiting n_hi-1 down */
    int nblocks;    /* blocks visited */
    u32 sk, sv;
    kv_ptr<D> pk;   /* with KV_PTRS: the K and V streams (blocks in order) */
    kv_ptr<DV> pv;

    __device__ __forceinline__ void init_ptrs()
    {
        if (KV_PTRS) {
            pk.init(k, n_hi - 1);
            pv.init(v, n_hi - 1);
        }
    }

    /* Issue load T (K or V of the T/2-th visited block), or nothing when
     * past the last block; then close the group.  Loads are issued in
     * order, one K and one V per block (the KV_PTRS streams rely on it). */
    __device__ __forceinline__ void issue(int t)
    {
        const int it = t >> 1;
        if (it < nblocks) {
            const int n_block = n_hi - 1 - it;
            const int slot = it % STAGES;
            const int rows_valid = seqlen_k - n_block * BN;
            if ((t & 1) == 0) {
                if (KV_PTRS)
                    pk.issue(sk + slot * K_TILE_BYTES, k, rows_valid);
                else
                    load_tile<BN, D>(sk + slot * K_TILE_BYTES, k, n_block * BN, rows_valid);
            } else {
                if (KV_PTRS)
                    pv.issue(sv + slot * V_TILE_BYTES, v, rows_valid);
                else
                    load_tile<BN, DV>(sv + slot * V_TILE_BYTES, v, n_block * BN, rows_valid);
            }
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

/* Two floats packed as the 16-bit type DT (1 bf16, else fp16), LO in the
 * low half; P in the MMAs' type (pack_2: fp16 for fp8 inputs), O in its
 * own (pack_out_2, the epilogue). */
template <int DT>
__device__ __forceinline__ u32 pack_16(float lo, float hi)
{
    return DT == 1 ? cvt_rn_bf16x2_f32(lo, hi) : cvt_rn_f16x2_f32(lo, hi);
}
__device__ __forceinline__ u32 pack_2(float lo, float hi) { return pack_16<FA4_DTYPE>(lo, hi); }
__device__ __forceinline__ u32 pack_out_2(float lo, float hi)
{
    return pack_16<FA4_OUT_DTYPE>(lo, hi);
}

/*
** ldmatrix addresses.  Q and V fragments are read with lane l at row R +
** l % 16, 16 B chunk 2 KK + l / 16 (R a multiple of 16, KK the k-step, or
** the dv-step for V), which gives the matrices (rows 0-7, k 0-7), (rows
** 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15): as Q a0..a3 of
** the A operand; as V (.trans, keys along k) b0 b1 of dv-block 2jp are 0
** and 1, of 2jp+1 2 and 3.  K in that order gives b0 b1 of n-block 2jp in
** matrices 0 and 2, which an mma cannot take (its B pair is two adjacent
** registers): ptxas copies them into pairs, a move per register, about
** 210 instructions per block at d128 bn64 (bench/NOTES.md, "sm80: the loop
** against FlashAttention-2's").  With FA4_K_PAIRS K is read with lane l at
** row R + l % 8 + 8 (l / 16), chunk 2 KK + (l / 8) % 2 instead, so that
** n-block 2jp's b0 b1 are matrices 0 and 1 and 2jp+1's 2 and 3; it costs
** ptxas's schedule a few registers, so the budget leaves it off where the
** register estimate has no margin (budget_sm80.c).  With PH = SWZ / 32
** k-steps per swizzle box the offset is lane_part[KK % PH] + (KK / PH)
** ROWS SWZ + R SWZ (16 rows keep the swizzle phase), so every address is
** a region base, one of PH registers and an immediate.
*/
constexpr int PH = SWZ / 32;
constexpr bool K_PAIRS = FA4_K_PAIRS;

struct frag_lanes {
    u32 part[PH];                  /* Q and V: row l % 16, chunk 2i + l / 16 */
    u32 kpart[K_PAIRS ? PH : 1];   /* K: row l % 8 + 8 (l / 16), chunk 2i + (l / 8) % 2 */

    __device__ __forceinline__ void init(int lane)
    {
#pragma unroll
        for (int i = 0; i < PH; i++) {
            part[i] = tile_offset<16>(lane & 15, 2 * i + (lane >> 4));
            if (K_PAIRS)
                kpart[K_PAIRS ? i : 0] = tile_offset<16>((lane & 7) + ((lane >> 4) << 3),
                                                         2 * i + ((lane >> 3) & 1));
        }
    }

    /* Offset of the Q or V fragment at tile row R0, step KK of a ROWS-row
     * tile. */
    template <int ROWS>
    __device__ __forceinline__ u32 at(int r0, int kk) const
    {
        return part[kk % PH] + (u32)((kk / PH) * ROWS * SWZ + r0 * SWZ);
    }

    /* The same for a K fragment. */
    template <int ROWS>
    __device__ __forceinline__ u32 k_at(int r0, int kk) const
    {
        return (K_PAIRS ? kpart[K_PAIRS ? kk % PH : 0] : part[kk % PH]) +
               (u32)((kk / PH) * ROWS * SWZ + r0 * SWZ);
    }
};

/* Q fragments kept in registers: [MT][D/16][4], or a placeholder. */
typedef u32 q_frags[Q_IN_REGS ? MT : 1][Q_IN_REGS ? D / 16 : 1][4];

/* S[WARP_ROWS x KN] = Q K^T for this warp from keys KOFS.. of K tile SK;
 * each K fragment serves all MT row tiles.  SQ is the warp's first Q row. */
__device__ __forceinline__ void gemm_qk(float (&s)[MT][KN / 8][4], const q_frags &qf,
                                        const frag_lanes &fl, u32 sq, u32 sk, int kofs)
{
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int j = 0; j < KN / 8; j++)
            s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        u32 a[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            if (Q_IN_REGS) {
#pragma unroll
                for (int i = 0; i < 4; i++)
                    a[mt][i] = qf[Q_IN_REGS ? mt : 0][Q_IN_REGS ? kk : 0][i];
            } else {
                ldmatrix_x4(a[mt], sq + fl.at<BM>(16 * mt, kk));
            }
        }
#pragma unroll
        for (int jp = 0; jp < KN / 16; jp++) {
            u32 b[4];
            ldmatrix_x4(b, sk + fl.k_at<BN>(kofs + 16 * jp, kk));
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                mma_16816(s[mt][2 * jp], a[mt], b[0], b[K_PAIRS ? 1 : 2]);
                mma_16816(s[mt][2 * jp + 1], a[mt], b[K_PAIRS ? 2 : 1], b[3]);
            }
        }
    }
}

/* P = S packed to 16 bits: the accumulator of n-blocks 2kk and 2kk+1 is
 * exactly the A fragment of k-step kk of O += P V. */
__device__ __forceinline__ void pack_p(u32 (&pf)[MT][KN / 16][4],
                                       const float (&s)[MT][KN / 8][4])
{
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int kk = 0; kk < KN / 16; kk++) {
            pf[mt][kk][0] = pack_2(s[mt][2 * kk][0], s[mt][2 * kk][1]);
            pf[mt][kk][1] = pack_2(s[mt][2 * kk][2], s[mt][2 * kk][3]);
            pf[mt][kk][2] = pack_2(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
            pf[mt][kk][3] = pack_2(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
        }
}

/* O[WARP_ROWS x DV] += P V from keys KOFS.. of V tile SV; each V fragment
 * serves all MT row tiles. */
__device__ __forceinline__ void gemm_pv(float (&o)[MT][DV / 8][4],
                                        const u32 (&pf)[MT][KN / 16][4],
                                        const frag_lanes &fl, u32 sv, int kofs)
{
#pragma unroll
    for (int kk = 0; kk < KN / 16; kk++)
#pragma unroll
        for (int jp = 0; jp < DV / 16; jp++) {
            u32 b[4];
            ldmatrix_x4_trans(b, sv + fl.at<BN>(kofs + 16 * kk, jp));
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                mma_16816(o[mt][2 * jp], pf[mt][kk], b[0], b[1]);
                mma_16816(o[mt][2 * jp + 1], pf[mt][kk], b[2], b[3]);
            }
        }
}

} /* namespace sm80 */

#include "sm80/fp8.cuh"   /* the same two GEMMs from e4m3 tiles */

namespace sm80 {

/* The factors of the raw scores: scale_log2 (softmax scale, or softcap,
 * in log2 units) and softcap_pre (fa4_params).  fp8 multiplies in the
 * (batch, KV head) descales of Q and K and takes out FP8_UNIT^2. */
struct score_scale {
    float log2, cap_pre;
};

/* The fp8 factor at ADDR (float32 [batch, heads_kv]) for T, 1 without one. */
__device__ __forceinline__ float fp8_descale(unsigned long long addr, const fa4_params &p,
                                             const tile_info &t)
{
    return addr ? ((const float *)addr)[t.batch * p.heads_kv + t.head_kv] : 1.0f;
}

__device__ __forceinline__ score_scale score_scale_make(const fa4_params &p, const tile_info &t)
{
    score_scale sc = { p.scale_log2, p.softcap_pre };
#if FA4_FP8
    const float qk = fp8_descale(p.q_descale, p, t) * fp8_descale(p.k_descale, p, t) /
                     (FP8_UNIT * FP8_UNIT);
#if FA4_SOFTCAP
    sc.cap_pre *= qk;
#else
    sc.log2 *= qk;
#endif
#else
    (void)t;
#endif
    return sc;
}

/* Loads issued ahead of the block being consumed, and the cp.async groups
 * younger than the one a block waits for: the two-barrier schedule issues
 * V(it + STAGES - 1) after the first barrier of block it and K(it +
 * STAGES) after the second; the fused one (FA4_FUSED_KV) both of block it
 * + STAGES - 1 after its one barrier. */
constexpr bool FUSED = FA4_FUSED_KV;
constexpr int AHEAD = FUSED ? 2 * (STAGES - 1) : 2 * STAGES - 1;
constexpr int YOUNGER = FUSED ? 2 * (STAGES - 2) : 2 * STAGES - 2;
static_assert(!FUSED || STAGES >= 2, "sm80: the fused K/V schedule needs 2 stages");

/* One key block IT (block n_hi - 1 - IT): the loop body.  (A second copy
 * of it without the mask's branch, for the blocks that need no mask, costs
 * ptxas 20-40 registers: O is live across both copies.) */
__device__ __forceinline__ void mainloop_block(const fa4_params &p, const tile_info &t,
                                               const score_scale &sc, kv_stream &kv,
                                               const key_mask &mask,
                                               const frag_lanes &fl, const q_frags &qf,
                                               u32 sq_w, int it, int kofs, int lane,
                                               float (&o)[MT][DV / 8][4],
                                               online_softmax &sm)
{
    const int n_block = kv.n_hi - 1 - it;
    const int slot = it % STAGES;
    float s[MT][KN / 8][4];

    /* K(it) landed for every thread; every warp is done with block it - 1
     * (and, fused, with its V), whose slot the next loads reuse. */
    cp_async_wait_group<YOUNGER>();
    __syncthreads();
    if (FUSED) {
        kv.issue(2 * (it + STAGES - 1));
        kv.issue(2 * (it + STAGES - 1) + 1);
    } else {
        kv.issue(2 * it + 2 * STAGES - 1);
    }
#if FA4_FP8
    gemm_qk_e4m3(s, qf, fl, sq_w, kv.sk + slot * K_TILE_BYTES, kofs);
#else
    gemm_qk(s, qf, fl, sq_w, kv.sk + slot * K_TILE_BYTES, kofs);
#endif
#if FA4_SOFTCAP
    softcap_scores(s, sc.cap_pre);
#endif
    if (key_mask::block_needs_mask(p, t, n_block))
        mask.apply(p, t, s, n_block * BN + kofs, lane);
    sm.step(s, o, sc.log2);
    u32 pf[MT][KN / 16][4];
    pack_p(pf, s);

    if (!FUSED) {
        /* V(it) landed; every warp is done with K(it). */
        cp_async_wait_group<YOUNGER>();
        __syncthreads();
        kv.issue(2 * it + 2 * STAGES);
    }
#if FA4_FP8
    gemm_pv_e4m3(o, pf, fl, kv.sv + slot * V_TILE_BYTES, kofs);
#else
    gemm_pv(o, pf, fl, kv.sv + slot * V_TILE_BYTES, kofs);
#endif
}

/* The whole main loop of one query tile (or its split's share of the key
 * range): leaves the unnormalised O and the softmax state (max, partial
 * sums) in registers. */
__device__ __forceinline__ void mainloop_run(const fa4_params &p, const fa4_serving &sv_args,
                                             const tile_info &t, const q_rows &gq,
                                             const kv_rows &gk, const kv_rows &gv,
                                             u32 sq, u32 sk, u32 sv,
                                             float (&o)[MT][DV / 8][4],
                                             online_softmax &sm)
{
    const int tid = (int)threadIdx.x;
    const int warp = tid >> 5, lane = tid & 31;
    const int row0 = KV_SPLIT_WARPS ? 0 : warp * WARP_ROWS;
    const int kofs = KV_SPLIT_WARPS ? warp * KN : 0;

#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int j = 0; j < DV / 8; j++)
            o[mt][j][0] = o[mt][j][1] = o[mt][j][2] = o[mt][j][3] = 0.f;
    sm.init(p.scale_log2);   /* sc.log2 for bf16, the only FA4_SOFTCAP_FIXED_MAX dtype */

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
    kv.init_ptrs();

    load_tile<BM, D>(sq, gq, 0, t.rows - t.m_start);
    cp_async_commit_group();
    if (kv.nblocks == 0)
        return;   /* no key visible: O = 0, l = 0 (the epilogue waits) */

#pragma unroll
    for (int i = 0; i < AHEAD; i++)
        kv.issue(i);

    key_mask mask;
    mask.init(row0, lane);
    frag_lanes fl;
    fl.init(lane);
    const u32 sq_w = sq + row0 * SWZ;   /* the warp's first Q row */

    /* Q's fragments, when kept in registers, before the loop: Q's group is
     * the oldest, AHEAD loads are younger. */
    q_frags qf;
    if (Q_IN_REGS) {
        cp_async_wait_group<AHEAD>();
        __syncthreads();
#if FA4_FP8
        e4m3_q_frags(qf, fl, sq_w);
#else
#pragma unroll
        for (int mt = 0; mt < (Q_IN_REGS ? MT : 1); mt++)
#pragma unroll
            for (int kk = 0; kk < (Q_IN_REGS ? D / 16 : 1); kk++)
                ldmatrix_x4(qf[mt][kk], sq_w + fl.at<BM>(16 * mt, kk));
#endif
    }

    const score_scale sc = score_scale_make(p, t);
    for (int it = 0; it < kv.nblocks; it++) {
        mainloop_block(p, t, sc, kv, mask, fl, qf, sq_w, it, kofs, lane, o, sm);
    }
}

} /* namespace sm80 */

#endif
