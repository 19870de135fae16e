/*
** sm100/kernel.cuh -- FlashAttention-4-style forward for Blackwell (sm_100a):
** entry point, constants, shared-memory carve-up, barrier map and the
** warp-role split.  The roles live in mainloop.cuh (TMA load warp, MMA
** warp), softmax.cuh (two softmax warpgroups) and correction.cuh (O
** rescale and epilogue).
**
** STATUS: UNVERIFIED ON HARDWARE.  We have no sm_100 GPU; this kernel is
** only known to compile with NVRTC 13.0 for sm_100a without spills
** (tests/test_sm100_compile.c) and to pass the static checks of its PTX
** (tests/test_sm100_ptx.c).  Descriptor bit layouts, the TMEM layout of
** P as the A operand, and the in-order execution of tcgen05.mma that the
** P-aliases-S schedule relies on are taken from the PTX ISA and not
** checked.  Do not trust its output until a probe on an sm_100 part agrees
** with the sm80 reference.  The CTA-pair mode (below) adds the cluster
** rules of the PTX ISA (cta_group::2 operand split, multicast commit,
** barriers signalled across the pair), equally unchecked on hardware.
** Not implemented: persistent schedulers, varlen/paged.
**
** CTA: 512 threads, BM = 128 x FA4_Q_TILES query rows.
**   warps 0-3   softmax WG 0 (query tile 0, one TMEM lane = one row each)
**   warps 4-7   softmax WG 1 (query tile 1; idle in 1Q)
**   warps 8-11  correction WG (rescales O_i in TMEM, epilogue O and 1/l)
**   warp 12     TMA loads (Q once, then the K/V ring)
**   warp 13     TMEM allocation and the tcgen05.mma issue (a pair: the leader's)
**   warp 14     per-token Q/K scales into shared memory (FA4_TOKEN_SCALES;
**               sm100/scales.cuh), else idle
**   warp 15     idle
** TMEM: S0/P0 at FA4_TMEM_S0, S1/P1 at FA4_TMEM_S1, O0, O1 (budget_sm100.c).
** 2Q (BM 256): S/P buffer i belongs to query tile i, and the MMA warp
**   alternates the tiles (P0 V | S0 | P1 V | S1 per key block).
** 1Q (BM 128, for head dims whose two O tiles leave TMEM no key block,
**   d256): one query tile, its S/P double-buffered over the key blocks
**   (block j in buffer j % 2), so S_{j+1} = Q K_{j+1}^T runs while the
**   softmax works on S_j: S0 | S1 | P0 V | S2 | P1 V | ...  No O1.
**
** CTA pair (FA4_CTA_GROUP 2, config cluster 2, launched as clusters of
**   2 x 1 x 1): the two CTAs of a cluster share every MMA, M = 256 over
**   their query tiles i (CTA rank r holds rows 128 r .. 128 r + 127 of
**   the 256, and their D lanes in its own TMEM at the same columns), N
**   split for B: each CTA loads FA4_BN / 2 keys of K_j (S = Q K^T: N =
**   keys) and padded_dv / 2 columns of V_j (O = P V: N = dv).  Rank 0
**   (the leader) issues every tcgen05.mma with cta_group::2 and commits
**   with the multicast mask 0b11 to the same barrier in both CTAs; both
**   CTAs' TMA loads complete on the leader's full barriers, which the
**   leader alone arms with the pair's bytes; each softmax thread arrives
**   on the leader's P_FULL (count 256); TMEM is allocated by warp 13 of
**   both CTAs together.  The pair's rows are consecutive: CTA r of pair q
**   runs rows (2q + r) * FA4_BM.., and both visit the key blocks of the
**   pair's rows.
**
** Rope mode (FA4_ROPE_CHUNKS > 0: a fused ring with padded head_dim_qk >
**   padded head_dim_v, MLA's 192/128): a ring slot holds V_j or K_j's
**   first padded_dv columns, and K_j's remaining depth boxes (the rope
**   columns) land in ROPE buffer j % ceil(slots / 2) on the same K
**   barrier; S = Q K^T runs its k-steps over the slot, then the buffer.
**
** TMA maps (host side, 4-D tiled, dims innermost first):
**   tm_q: {head_dim_qk, seqlen_q, heads_q, batch}, box {64, 128, 1, 1}
**   tm_k: {head_dim_qk, seqlen_k, heads_kv, batch}, box {64, FA4_BN / G, 1, 1}
**   tm_v: {head_dim_v,  seqlen_k, heads_kv, batch}, box {64, FA4_BN, 1, 1}
**   (G = FA4_CTA_GROUP; in a pair CTA r loads K rows key0 + r FA4_BN / 2
**   and V's depth boxes r padded_dv / 128 ..)
**   tm_o: {head_dim_v,  seqlen_q, heads_q, batch}, box {64, 32, 1, 1}
**   strides from fa4_params in bytes, 128 B swizzle, OOB zero fill (loads)
**   and clipping (the store of O: one box per warp and 64 columns, staged
**   in the tile's Q region once its last S MMA is done).
**   fp8 (below): byte maps whose box rows are FA4_SWIZZLE elements (64 or
**   128 B swizzle) in place of 64; tm_o's boxes {FA4_SWIZZLE / 2, 32} of
**   the 16-bit O, staged in rounds (correction.cuh).
** Grid: (m_blocks = ceil(seqlen_q / FA4_BM), heads_q, batch), m_blocks
** rounded up to even for pairs; causal runs the longest query tiles (or
** tile pairs) first.  Dynamic smem: FA4_SMEM_BYTES.
** Masked-tile skipping (sm100/blocks.h): every role loops over the key
** blocks some row of the CTA sees; per query tile, blocks its rows never
** see get P = 0 without a max or exp2 and, in 2Q mode alone, no S or P V
** MMA either (tile_sees(): the tile's O starts at its first seen block;
** every barrier is still waited and committed per block), and blocks
** they see whole skip the per-element mask (only the diagonal, window
** edges and the ragged tail are masked element by element).
**
** Decode mode (FA4_DECODE 1, config bm 32; sm100/decode.cuh, entry
**   fa4_fwd(p, tm_q, tm_k, tm_v, fa4_serving s)), for few query rows:
**   - Rows: a CTA holds 32 packed rows, the (token, head of the group)
**     pairs of one (batch, KV head), row-major (sm100/decode_rows.h):
**     min(group, 32) heads x 32 / that many tokens; tm_q's box {64, H, T,
**     1} over {dim, heads_q, seq, batch} lands them so.  Optionally one
**     split of the key range: grid (m_tiles, heads_kv x splits, batch);
**     splits write O / l and the LSE as float32 to the plan's workspace
**     in the sm80 family's layout and fa4_combine merges them.
**   - MMAs: tcgen05.mma.ws.cta_group::1.kind::f16, M 32 (the PTX ISA's
**     .ws shapes: M 32/64/128, N 64/128/256, k16).  S = Q K^T: N = BN,
**     A = Q and B = K from smem.  O += P V: N = FA4_PV_N per O piece
**     (padded dv, or 64-column pieces where it is no .ws N: d192), A = P
**     from smem (the ISA lets .ws read A from TMEM too, but the TMEM
**     layout of an M 32 A operand is not pinned down there; smem's
**     K-major layout is the one Q already uses), B = V MN-major.
**   - TMEM: an M 32 accumulator of N columns is data-path Layout G, N / 4
**     columns x 128 lanes, columns q N / 4 .. of every row in lanes 32 q
**     .. 32 q + 31.  So S0, S1 take BN / 4 columns each and O padded dv /
**     4, and a warp reaches only its quarter of every row (tcgen05.ld
**     32x32b from sub-partition warp % 4): the softmax must be the four
**     warps of one warpgroup, exchanging the row max once per key block.
**   - Warps (192 threads): 0-3 softmax, O rescale and epilogue (O by
**     st.global at the rows' (token, head), LSE), 4 TMA loads (Q, then
**     the K/V stages), 5 TMEM allocation and the MMA issue.
*/
#ifndef FA4_SM100_KERNEL_CUH
#define FA4_SM100_KERNEL_CUH

#include "common/types.cuh"
#include "common/params.h"
#include "common/ptx_sm100.cuh"

/* ------------------------------------------------------------ constants */

#ifndef FA4_BN
#error "sm100/kernel.cuh needs the budget's #defines (budget_defines())"
#endif

/* --------------------------------------- what both modes' roles share */

/* The dynamic shared memory.  CUDA promises only 16 B alignment of its
 * start, so fa4_fwd rounds it up to 1024 B (128 B swizzle repeat, and
 * descriptors with base offset 0) inside the budget's FA4_SMEM_SLACK.
 * Declared 16-aligned so the compiler cannot fold the rounding away. */
extern __shared__ __align__(16) u8 fa4_smem[];

/* The dynamic shared memory's 1024-aligned base: its shared address
 * (returned) and the same byte as a generic pointer (*BASE). */
FA4_DEV u32 smem_base_1024(u8 **base)
{
    const u32 raw = smem_u32(fa4_smem);
    const u32 smem = (raw + 1023u) & ~1023u;
    *base = fa4_smem + (smem - raw);
    return smem;
}

/* Allocate NCOLS TMEM columns (warp ALLOC, with ALLOC true; the address
 * lands in the TMEMPTR region of the base SMEM / BASE), then past a
 * barrier of the whole CTA, fenced for tcgen05 on both sides, the TMEM
 * base every role reads. */
template <u32 NCOLS>
FA4_DEV u32 tmem_alloc_cta(u32 smem, const u8 *base, bool alloc)
{
    if (alloc) {
        tcgen05_alloc<NCOLS>(smem + FA4_SMEM_TMEMPTR_OFF);
        tcgen05_relinquish_alloc_permit();
    }
    tcgen05_fence_before_thread_sync();
    __syncthreads();
    tcgen05_fence_after_thread_sync();
    return *(const volatile u32 *)(base + FA4_SMEM_TMEMPTR_OFF);
}

/* Key KEY is visible to query ROW (absolute indices), FlashAttention's
 * bottom-right aligned causal / sliding window. */
FA4_DEV bool key_visible(const fa4_params &p, int row, int key)
{
    if (key >= p.seqlen_k)
        return false;
#if FA4_MASK
    {
        int d = row + p.seqlen_k - p.seqlen_q;
        if (p.window_left >= 0 && key < d - p.window_left)
            return false;
        if (p.window_right >= 0 && key > d + p.window_right)
            return false;
    }
#endif
    return true;
}

/* Two f32 as the 16-bit input type's pair, LO in the low half (P; the
 * decode mode's O). */
FA4_DEV u32 pack_p(float lo, float hi)
{
#if FA4_DTYPE == 1
    return cvt_rn_bf16x2_f32(lo, hi);
#else
    return cvt_rn_f16x2_f32(lo, hi);
#endif
}

/* TMEM columns COL .. COL + COLS - 1 of this thread's lane times ALPHA,
 * 16 at a time, stores waited: the lazy rescale of O. */
template <int COLS>
FA4_DEV void tmem_scale(u32 col, float alpha)
{
    int ch, e;
    for (ch = 0; ch < COLS / 16; ch++) {
        u32 v[16];
        tcgen05_ld_32x32b_x16(v, col + (u32)ch * 16);
        tcgen05_wait_ld();
#pragma unroll
        for (e = 0; e < 16; e++)
            v[e] = __float_as_uint(__uint_as_float(v[e]) * alpha);
        tcgen05_st_32x32b_x16(col + (u32)ch * 16, v);
    }
    tcgen05_wait_st();
}

#if defined(FA4_DECODE) && FA4_DECODE
#include "sm100/decode.cuh"        /* the decode mode: its own entry point */
#else

static_assert(FA4_FAMILY == 100, "sm100 kernel built with another family's constants");
static_assert(FA4_DTYPE == 1 || FA4_DTYPE == 2 || FA4_DTYPE == 3,
              "sm100 kernel: bf16, fp16 or fp8 e4m3 inputs");
static_assert((FA4_Q_TILES == 2 || FA4_Q_TILES == 1) && FA4_BM == 128 * FA4_Q_TILES,
              "sm100 kernel: 2Q (BM 256) or 1Q (BM 128)");
static_assert(FA4_THREADS == 512, "sm100 roles need 16 warps");

/* ------------------------------------------------------- element type */
/* fp8 (FA4_DTYPE 3): Q, K, V e4m3, both MMAs tcgen05.mma kind::f8f6f4 (k32
 * per instruction: 32 bytes of each K-major row, as kind::f16's k16), P
 * rounded to e4m3 into TMEM where the 16-bit path writes its pairs, O in
 * FA4_OUT_DTYPE (bf16 or fp16), descales as the sm90 family applies them
 * (q * k into the softmax scale, v into 1/l).  V stays MN-major: the PTX
 * ISA's instruction descriptor (9.7.16.4.2, table "Instruction descriptor
 * format for .kind::tf32, .kind::f16, .kind::f8f6f4 and .kind::i8") gives
 * kind::f8f6f4 the transpose-A/B bits as kind::f16 has them (CUTLASS's
 * UMMA::InstrDescriptor: MN-major valid for E4M3, E5M2, INT8, F16, BF16,
 * TF32, not for the 6- and 4-bit types), and the stride rules of 9.7.16.3
 * are in 16-byte units whatever the element size -- so unlike 8-bit wgmma
 * (KERNEL_NOTES.md: no transpose, sm90 copies V^T first) P V reads V as
 * loaded, with no V^T copy and no workspace.  P as the A operand from TMEM
 * packs four e4m3 per 32-bit column, the lowest key in the lowest byte
 * (the 16-bit pairs' rule carried over; unverified, like all of this). */
#if FA4_DTYPE == 3
#define SM100_FP8 1
#define SM100_ESIZE 1
#else
#define SM100_FP8 0
#define SM100_ESIZE 2
#endif
#ifndef FA4_OUT_DTYPE                  /* O's type: the inputs' for 16-bit inputs */
#define FA4_OUT_DTYPE FA4_DTYPE
#endif
#define SM100_MMA_K (32 / SM100_ESIZE)   /* k16 (16-bit) or k32 (fp8): 32 B of a row */
#define SM100_KSTEPS_ROW (SM100_ROW_BYTES / 32)   /* MMA k-steps per swizzle row */
#define SM100_P_COLS (16 * SM100_ESIZE / 4)       /* TMEM columns of 16 P values */
/* fp8: P <= 2^FA4_RESCALE_THRESHOLD (the lazy max lags by at most that) is
 * computed as 2^(8 - threshold) times itself (the max it subtracts lowered
 * by SM100_P_LOG2), so it spans e4m3's range up to 256 < 448 and small P
 * keep mantissa bits; l carries the factor too, which cancels in O / l,
 * and the LSE takes it back out -- sm90's rule (kernels/sm90/kernel.cuh). */
#define SM100_P_LOG2 (SM100_FP8 ? 8 - FA4_RESCALE_THRESHOLD : 0)
static_assert(!SM100_FP8 || (FA4_RESCALE_THRESHOLD <= 8 &&
                             (FA4_OUT_DTYPE == 1 || FA4_OUT_DTYPE == 2)),
              "sm100 fp8: rescale threshold <= 8 (P's offset), O in bf16 or fp16");
static_assert(FA4_SWIZZLE == 128 || (SM100_FP8 && FA4_SWIZZLE == 64),
              "16-bit types use 128 B swizzle, fp8 64 or 128 B");
static_assert(FA4_BN >= 64 && FA4_BN <= 256 && FA4_BN % (2 * SM100_MMA_K) == 0,
              "BN: 64..256, two P halves of whole MMA k-steps");
static_assert(FA4_PV_STAGES == 2, "P is written back in two halves");
static_assert(FA4_CTA_GROUP == 1 || FA4_CTA_GROUP == 2, "one CTA or a CTA pair per MMA");

#define SM100_ROW_BYTES FA4_SWIZZLE    /* one swizzle row: 64 x 16 bit, 64 or 128 x 8 bit */
#define SM100_SW_ELEMS (SM100_ROW_BYTES / SM100_ESIZE)
#define SM100_MMA_M (128 * FA4_CTA_GROUP)  /* rows of one MMA: 256 over a pair */
#define SM100_K_ROWS (FA4_BN / FA4_CTA_GROUP)     /* keys of K_j this CTA holds */
#define SM100_V_COLS (FA4_PAD_DV / FA4_CTA_GROUP) /* columns of V_j this CTA holds */
#define SM100_Q_CHUNK_BYTES (128 * SM100_ROW_BYTES)
#define SM100_K_CHUNK_BYTES (SM100_K_ROWS * SM100_ROW_BYTES)
#define SM100_V_CHUNK_BYTES (FA4_BN * SM100_ROW_BYTES)
#define SM100_Q_TILE_BYTES (128 * FA4_PAD_DQK * SM100_ESIZE)
#define SM100_K_TILE_BYTES (SM100_K_ROWS * FA4_PAD_DQK * SM100_ESIZE)
#define SM100_V_TILE_BYTES (FA4_BN * SM100_V_COLS * SM100_ESIZE)
#define SM100_DQK_CHUNKS (FA4_PAD_DQK / SM100_SW_ELEMS)
#define SM100_DV_CHUNKS (FA4_PAD_DV / SM100_SW_ELEMS)
#define SM100_V_CHUNKS (SM100_V_COLS / SM100_SW_ELEMS)  /* V boxes this CTA loads */

static_assert(FA4_PAD_DQK % SM100_SW_ELEMS == 0 && FA4_PAD_DV % SM100_SW_ELEMS == 0,
              "depth padding");
static_assert(SM100_V_COLS % SM100_SW_ELEMS == 0 && SM100_K_ROWS % 8 == 0,
              "a pair splits V into whole swizzle boxes, K into 8-row groups");
static_assert(FA4_QK_CHUNKS == SM100_DQK_CHUNKS,
              "Q1 arrives per swizzle box of the depth");
static_assert(FA4_SMEM_Q_SIZE == FA4_Q_TILES * SM100_Q_TILE_BYTES, "Q region");
static_assert(FA4_PAD_DV <= FA4_PAD_DQK, "the epilogue stages O_i in Q_i's region");
static_assert(FA4_TMEM_S0 == 0 && FA4_TMEM_S1 == FA4_BN && FA4_TMEM_O0 == 2 * FA4_BN
              && (FA4_Q_TILES == 1 || FA4_TMEM_O1 == FA4_TMEM_O0 + FA4_PAD_DV)
              && 2 * FA4_BN + FA4_Q_TILES * FA4_PAD_DV <= FA4_TMEM_COLS, "TMEM map");
static_assert(FA4_SMEM_CORR_SIZE == FA4_Q_TILES * 128 * 4, "CORR: one f32 per row per tile");
static_assert(FA4_TOKEN_SCALES == 0 || FA4_TOKEN_SCALES == 1, "per-token scales: on or off");
static_assert(FA4_SMEM_Q_OFF % 1024 == 0, "swizzled tiles 1024-aligned");
static_assert(FA4_SMEM_BAR_OFF % 8 == 0, "mbarriers 8-aligned");
/* The base is rounded up to 1024 B at run time (fa4_fwd): the launch
 * requests the regions plus that much slack. */
static_assert(FA4_SMEM_SLACK >= 1024 - 16
              && FA4_SMEM_TMEMPTR_OFF + FA4_SMEM_TMEMPTR_SIZE + FA4_SMEM_SLACK == FA4_SMEM_BYTES,
              "layout + base-alignment slack == FA4_SMEM_BYTES");

/* Rope mode (FA4_ROPE_CHUNKS > 0, budget_sm100.c (e)): in the fused ring
 * a slot holds K_j's first SM100_K_SLOT_CHUNKS depth boxes (or V_j), and
 * K_j's last FA4_ROPE_CHUNKS boxes go to ROPE buffer j % SM100_ROPE_BUFS
 * -- at most that many K tiles are in the ring at once. */
#define SM100_K_SLOT_CHUNKS (SM100_DQK_CHUNKS - FA4_ROPE_CHUNKS)
#define SM100_K_SLOT_BYTES (SM100_K_SLOT_CHUNKS * SM100_K_CHUNK_BYTES)
#define SM100_ROPE_BUFS (FA4_ROPE_CHUNKS ? (FA4_KV_SLOTS + 1) / 2 : 0)
#define SM100_ROPE_BUF_BYTES (FA4_ROPE_CHUNKS * SM100_K_CHUNK_BYTES)
static_assert(FA4_ROPE_CHUNKS == 0 || (FA4_FUSED_KV && SM100_K_SLOT_CHUNKS == SM100_DV_CHUNKS),
              "rope mode: a fused ring whose slot holds K's first padded_dv columns");
#if FA4_ROPE_CHUNKS
static_assert(FA4_SMEM_ROPE_SIZE == SM100_ROPE_BUFS * SM100_ROPE_BUF_BYTES
              && FA4_SMEM_ROPE_OFF % 1024 == 0
              && FA4_SMEM_ROPE_OFF == FA4_SMEM_KV_OFF + FA4_SMEM_KV_SIZE, "ROPE region");
#endif

#if FA4_FUSED_KV
#define SM100_SLOT_BYTES (FA4_SMEM_KV_SIZE / FA4_KV_SLOTS)
static_assert(SM100_SLOT_BYTES >= SM100_K_SLOT_BYTES && SM100_SLOT_BYTES >= SM100_V_TILE_BYTES
              && SM100_SLOT_BYTES % 1024 == 0 && FA4_KV_SLOTS >= 2, "fused ring slot");
static_assert(FA4_K_CHUNKS == 1, "the fused ring does not stage K by depth");
#else
static_assert(FA4_SMEM_K_SIZE == FA4_KV_SLOTS * SM100_K_TILE_BYTES
              && FA4_SMEM_V_SIZE == FA4_KV_SLOTS * SM100_V_TILE_BYTES
              && FA4_SMEM_K_OFF % 1024 == 0 && FA4_SMEM_V_OFF % 1024 == 0, "split rings");
static_assert(FA4_K_CHUNKS == 1 || FA4_K_CHUNKS == SM100_DQK_CHUNKS, "K depth chunks");
#endif

/* ----------------------------------------------------- the barrier map */
/* One enum of mbarrier indices in the BAR region; lib/budget_sm100.c
 * counts exactly these (FA4_NUM_BARRIERS).  S_FULL and P_FULL belong to
 * the two S/P buffers, O_FULL, C_FULL and C_EMPTY to the query tiles.
 * A pair has the same map in both CTAs; the MMA warp's inputs (Q1_FULL,
 * the ring's full barriers, P_FULL) are used in the leader's only. */
enum sm100_bar {
    BAR_S_FULL = 0,                       /* [2] MMA -> softmax: S buffer b ready */
    BAR_P_FULL = 2,                       /* [2][PV_STAGES] softmax -> MMA: P half */
    BAR_O_FULL = BAR_P_FULL + 2 * FA4_PV_STAGES,   /* [Q_TILES] MMA -> correction: P_i V done */
    BAR_C_FULL = BAR_O_FULL + FA4_Q_TILES,         /* [Q_TILES] softmax i -> correction: alpha */
    BAR_C_EMPTY = BAR_C_FULL + FA4_Q_TILES,        /* [Q_TILES] correction -> softmax i: O_i rescaled */
    BAR_Q1_FULL = BAR_C_EMPTY + FA4_Q_TILES,       /* [QK_CHUNKS] Q tile 1 (2Q only) */
    BAR_RING = BAR_Q1_FULL + (FA4_Q_TILES == 2 ? FA4_QK_CHUNKS : 0),
#if FA4_FUSED_KV
    BAR_RING_END = BAR_RING + 2 * FA4_KV_SLOTS,   /* full[slots], empty[slots] */
#else
    /* K full[stages][K_CHUNKS], K empty[..], V full[stages], V empty[..] */
    BAR_RING_END = BAR_RING + 2 * FA4_KV_SLOTS * FA4_K_CHUNKS + 2 * FA4_KV_SLOTS,
#endif
    /* per-token scales (sm100/scales.cuh): scale warp -> softmax */
    BAR_QS_FULL = BAR_RING_END,                            /* [TOKEN_SCALES] QSCALE */
    BAR_KS_FULL = BAR_QS_FULL + FA4_TOKEN_SCALES,          /* [KSCALE_BUFS] */
    BAR_KS_EMPTY = BAR_KS_FULL + FA4_KSCALE_BUFS,          /* [KSCALE_BUFS] softmax -> warp */
    BAR_TOTAL = BAR_KS_EMPTY + FA4_KSCALE_BUFS
};
static_assert(BAR_TOTAL == FA4_NUM_BARRIERS && FA4_SMEM_BAR_SIZE == 8 * FA4_NUM_BARRIERS,
              "barrier map differs from the budget's count");

/* The kernel's own account of what it reaches, from its tile sizes and
 * barrier enum (not the budget's offsets), kept in the module so that
 * tests/test_sm100_ptx.c can hold it against the budget: bytes of dynamic
 * shared memory (Q tiles, the ring with its ROPE buffers, CORR, the
 * per-token scales, barriers,
 * TMEM pointer and the 1024 B the base may be moved up by), and TMEM columns (S0, S1, then one
 * O per query tile). */
#if FA4_FUSED_KV
#define SM100_RING_BYTES (FA4_KV_SLOTS * (SM100_K_SLOT_BYTES > SM100_V_TILE_BYTES \
                                          ? SM100_K_SLOT_BYTES : SM100_V_TILE_BYTES) \
                          + SM100_ROPE_BUFS * SM100_ROPE_BUF_BYTES)
#else
#define SM100_RING_BYTES (FA4_KV_SLOTS * (SM100_K_TILE_BYTES + SM100_V_TILE_BYTES))
#endif
extern "C" __device__ const u32 fa4_sm100_smem_reach =
    FA4_Q_TILES * SM100_Q_TILE_BYTES + SM100_RING_BYTES + FA4_Q_TILES * 128 * 4
    + FA4_TOKEN_SCALES * 4 * (FA4_BM + FA4_KSCALE_BUFS * FA4_BN) + 8 * BAR_TOTAL + 4 + 1024;
extern "C" __device__ const u32 fa4_sm100_tmem_reach = 2 * FA4_BN + FA4_Q_TILES * FA4_PAD_DV;

/* The S/P buffer of query tile I at key block J (2Q: the tile's own; 1Q:
 * alternating), the parity of its S_FULL / P_FULL phase, its TMEM column. */
FA4_DEV int s_buf(int i, int j) { return FA4_Q_TILES == 2 ? i : j & 1; }
FA4_DEV u32 s_phase(int j) { return (u32)(FA4_Q_TILES == 2 ? j : j >> 1) & 1u; }
FA4_DEV u32 s_col(int b) { return b ? FA4_TMEM_S1 : FA4_TMEM_S0; }

/* Per-CTA constants every role shares. */
struct sm100_ctx {
    u32 smem;        /* shared address of the 1024-aligned base */
    u8 *base;        /* the same byte, as a generic pointer */
    u32 tmem;        /* TMEM base address (lane 0, first column) */
    int m0;          /* first query row of the CTA */
    int rank;        /* in the CTA pair: 0 the leader, 1 the peer; 0 alone */
    int head, kv_head, batch;
    int n_begin;     /* first KV block */
    int n;           /* KV blocks to visit; 0 = no visible key */
};

FA4_DEV u32 bar_addr(const sm100_ctx &c, int idx)
{
    return c.smem + FA4_SMEM_BAR_OFF + 8u * (u32)idx;
}

/* The barrier at local address BAR as the pair's loads and P arrivals
 * reach it: the leader's copy (a shared::cluster address); alone, BAR. */
FA4_DEV u32 lead_bar(u32 bar)
{
#if FA4_CTA_GROUP == 2
    return mapa_shared_cluster(bar, 0);
#else
    return bar;
#endif
}

/* fp8: the descale factor of the CTA's (batch, KV head) in the float32
 * [batch, heads_kv] array at ADDR (fa4_params q/k/v_descale; 0 means
 * 1.0), as the sm90 family reads it.  1 for 16-bit inputs. */
FA4_DEV float descale(unsigned long long addr, const fa4_params &p, const sm100_ctx &c)
{
#if SM100_FP8
    return addr ? ((const float *)addr)[c.batch * p.heads_kv + c.kv_head] : 1.0f;
#else
    (void)addr;
    (void)p;
    (void)c;
    return 1.0f;
#endif
}

/* The K/V ring.  Fused: K_j is item 2j, V_j item 2j+1 of one ring of
 * KV_SLOTS slots.  Split: K_j and V_j both in stage j % KV_SLOTS. */
#if FA4_FUSED_KV
FA4_DEV u32 k_tile(const sm100_ctx &c, int j)
{ return c.smem + FA4_SMEM_KV_OFF + (u32)((2 * j) % FA4_KV_SLOTS) * SM100_SLOT_BYTES; }
FA4_DEV u32 v_tile(const sm100_ctx &c, int j)
{ return c.smem + FA4_SMEM_KV_OFF + (u32)((2 * j + 1) % FA4_KV_SLOTS) * SM100_SLOT_BYTES; }
FA4_DEV u32 k_full(const sm100_ctx &c, int j, int)
{ return bar_addr(c, BAR_RING + (2 * j) % FA4_KV_SLOTS); }
FA4_DEV u32 k_empty(const sm100_ctx &c, int j, int)
{ return bar_addr(c, BAR_RING + FA4_KV_SLOTS + (2 * j) % FA4_KV_SLOTS); }
FA4_DEV u32 v_full(const sm100_ctx &c, int j)
{ return bar_addr(c, BAR_RING + (2 * j + 1) % FA4_KV_SLOTS); }
FA4_DEV u32 v_empty(const sm100_ctx &c, int j)
{ return bar_addr(c, BAR_RING + FA4_KV_SLOTS + (2 * j + 1) % FA4_KV_SLOTS); }
FA4_DEV u32 k_phase(int j) { return (u32)((2 * j) / FA4_KV_SLOTS) & 1u; }
FA4_DEV u32 v_phase(int j) { return (u32)((2 * j + 1) / FA4_KV_SLOTS) & 1u; }
#else
FA4_DEV u32 k_tile(const sm100_ctx &c, int j)
{ return c.smem + FA4_SMEM_K_OFF + (u32)(j % FA4_KV_SLOTS) * SM100_K_TILE_BYTES; }
FA4_DEV u32 v_tile(const sm100_ctx &c, int j)
{ return c.smem + FA4_SMEM_V_OFF + (u32)(j % FA4_KV_SLOTS) * SM100_V_TILE_BYTES; }
FA4_DEV u32 k_full(const sm100_ctx &c, int j, int chunk)
{ return bar_addr(c, BAR_RING + (j % FA4_KV_SLOTS) * FA4_K_CHUNKS + chunk); }
FA4_DEV u32 k_empty(const sm100_ctx &c, int j, int chunk)
{ return bar_addr(c, BAR_RING + FA4_KV_SLOTS * FA4_K_CHUNKS
                     + (j % FA4_KV_SLOTS) * FA4_K_CHUNKS + chunk); }
FA4_DEV u32 v_full(const sm100_ctx &c, int j)
{ return bar_addr(c, BAR_RING + 2 * FA4_KV_SLOTS * FA4_K_CHUNKS + j % FA4_KV_SLOTS); }
FA4_DEV u32 v_empty(const sm100_ctx &c, int j)
{ return bar_addr(c, BAR_RING + 2 * FA4_KV_SLOTS * FA4_K_CHUNKS + FA4_KV_SLOTS
                     + j % FA4_KV_SLOTS); }
FA4_DEV u32 k_phase(int j) { return (u32)(j / FA4_KV_SLOTS) & 1u; }
FA4_DEV u32 v_phase(int j) { return (u32)(j / FA4_KV_SLOTS) & 1u; }
#endif

/* Depth box CH (SM100_SW_ELEMS columns: one swizzle row) of K_j in shared
 * memory: the ring's tile, or in rope mode, for the boxes past padded_dv,
 * its ROPE buffer. */
FA4_DEV u32 k_chunk(const sm100_ctx &c, int j, int ch)
{
#if FA4_ROPE_CHUNKS
    if (ch >= SM100_K_SLOT_CHUNKS)
        return c.smem + FA4_SMEM_ROPE_OFF + (u32)(j % SM100_ROPE_BUFS) * SM100_ROPE_BUF_BYTES
               + (u32)(ch - SM100_K_SLOT_CHUNKS) * SM100_K_CHUNK_BYTES;
#endif
    return k_tile(c, j) + (u32)ch * SM100_K_CHUNK_BYTES;
}

#include "sm100/blocks.h"

/* The key blocks rows [ROW0, ROW0 + ROWS) visit and see whole. */
FA4_DEV sm100_blocks tile_blocks(const fa4_params &p, int row0, int rows)
{
#if FA4_MASK
    return sm100_block_range(row0, rows, p.seqlen_q, p.seqlen_k, p.window_left,
                             p.window_right, FA4_BN);
#else
    return sm100_block_range(row0, rows, p.seqlen_q, p.seqlen_k, -1, -1, FA4_BN);
#endif
}

/* Masked-tile skipping of whole MMAs: in 2Q mode alone, a query tile's S
 * and P V MMAs are issued only for the CTA's blocks its own rows see (the
 * softmax gives the others P = 0 without reading S), so the MMA warp, the
 * softmax and the correction warpgroup all decide by tile_sees() on the
 * tile's tile_blocks().  Every barrier is still waited and committed per
 * block (a commit with no new MMA arrives when the earlier ones are
 * done), so no phase moves.  1Q has no unseen block; a CTA pair's MMA
 * covers two CTAs' tiles and keeps issuing. */
#define SM100_SKIP_UNSEEN (FA4_Q_TILES == 2 && FA4_CTA_GROUP == 1)

/* Whether the tile of blocks TB issues its MMAs at step J of C's loop. */
FA4_DEV bool tile_sees(const sm100_blocks &tb, const sm100_ctx &c, int j)
{
#if SM100_SKIP_UNSEEN
    return sm100_block_seen(tb, c.n_begin + j);
#else
    (void)tb;
    (void)c;
    (void)j;
    return true;
#endif
}

/* The step whose P V starts the O of the tile of blocks TB (overwriting,
 * not accumulating); c.n when it sees none of C's blocks. */
FA4_DEV int tile_first(const sm100_blocks &tb, const sm100_ctx &c)
{
#if SM100_SKIP_UNSEEN
    return sm100_first_seen(tb, c.n_begin, c.n);
#else
    (void)tb;
    return c.n > 0 ? 0 : c.n;
#endif
}

/* The KV blocks any of rows [ROW0, ROW0 + ROWS) can see -- the CTA's, or
 * a pair's, which share every MMA: the loop bounds every role shares
 * (blocks no row sees are never loaded). */
FA4_DEV void kv_range(const fa4_params &p, int row0, int rows, int &n_begin, int &n)
{
    const sm100_blocks b = tile_blocks(p, row0, rows);
    n_begin = b.begin;
    n = b.end - b.begin;
}

#include "sm100/mainloop.cuh"
#include "sm100/scales.cuh"
#include "sm100/softmax.cuh"
#include "sm100/correction.cuh"

extern "C" __global__ void __launch_bounds__(FA4_THREADS, 1)
fa4_fwd(const __grid_constant__ fa4_params p,
        const __grid_constant__ fa4_tma_map tm_q,
        const __grid_constant__ fa4_tma_map tm_k,
        const __grid_constant__ fa4_tma_map tm_v,
        const __grid_constant__ fa4_tma_map tm_o)
{
    sm100_ctx c;
    const int warp = warp_id_uniform();
    int m_block = (int)blockIdx.x;

    /* Every CTA of the kernel has its dynamic smem at the same shared::cta
       address, so a pair's bases (and every offset the leader's
       descriptors name) agree. */
    c.smem = smem_base_1024(&c.base);
#if FA4_CTA_GROUP == 2
    {
        /* pairs of query blocks; causal: the longest pairs first */
        int pair = (int)blockIdx.x >> 1;
#if FA4_CAUSAL
        pair = ((p.m_blocks + 1) >> 1) - 1 - pair;
#endif
        c.rank = (int)cluster_ctarank();
        m_block = 2 * pair + c.rank;
        kv_range(p, 2 * pair * FA4_BM, 2 * FA4_BM, c.n_begin, c.n);
    }
#else
#if FA4_CAUSAL
    m_block = p.m_blocks - 1 - m_block;        /* longest tiles first */
#endif
    c.rank = 0;
    kv_range(p, m_block * FA4_BM, FA4_BM, c.n_begin, c.n);
#endif
    c.m0 = m_block * FA4_BM;
    c.head = (int)blockIdx.y;
    c.kv_head = c.head / p.group;
    c.batch = (int)blockIdx.z;

    if (threadIdx.x == 0) {
        int i;
        /* unrolled: each init names its barrier and count as constants
           (tests/test_sm100_ptx.c reads them; fp8 rings reach 62) */
#pragma unroll
        for (i = 0; i < BAR_TOTAL; i++) {
            u32 count = 1;                    /* TMA tx, tcgen05.commit */
            if (i >= BAR_P_FULL && i < BAR_O_FULL)
                count = 128 * FA4_CTA_GROUP;  /* the softmax warpgroup(s) of the pair */
            else if (i >= BAR_C_FULL && i < BAR_Q1_FULL)
                count = 128;                  /* one warpgroup's arrivals */
            else if (i >= BAR_QS_FULL && i < BAR_KS_EMPTY)
                count = 32;                   /* the scale warp's lanes */
            else if (i >= BAR_KS_EMPTY)
                count = 128 * FA4_Q_TILES;    /* every softmax thread of the CTA */
            mbarrier_init(bar_addr(c, i), count);
        }
        fence_mbarrier_init();
    }
#if FA4_CTA_GROUP == 2
    /* Both CTAs' barriers initialised (and the peer running) before
       either is signalled from the other or the pair allocates TMEM. */
    cluster_sync();
#endif
    if (warp == 12 && elect_one_sync()) {
        prefetch_tensormap(&tm_q);
        prefetch_tensormap(&tm_k);
        prefetch_tensormap(&tm_v);
        prefetch_tensormap(&tm_o);
    }
    c.tmem = tmem_alloc_cta<FA4_TMEM_COLS>(c.smem, c.base, warp == 13);

    if (warp < 4 * FA4_Q_TILES)                /* 1Q: warps 4-7 idle */
        softmax_warpgroup(p, c, warp >> 2, warp & 3);
    else if (warp >= 8 && warp < 12)
        correction_warpgroup(p, c, &tm_o, warp & 3);
    else if (warp == 12)
        load_warp(p, c, &tm_q, &tm_k, &tm_v);
    else if (warp == 13)
        mma_warp(p, c);
    else if (warp == 14 && FA4_TOKEN_SCALES)
        scale_warp(p, c, (int)(threadIdx.x & 31));

    tcgen05_fence_before_thread_sync();
#if FA4_CTA_GROUP == 2
    /* Neither CTA of a pair leaves (or frees TMEM the leader's MMAs
       write) while the other may still reach its shared memory. */
    cluster_sync();
#else
    __syncthreads();
#endif
    if (warp == 13) {
        tcgen05_fence_after_thread_sync();
        tcgen05_dealloc<FA4_TMEM_COLS>(c.tmem);
    }
}

#endif /* FA4_DECODE */

#endif
