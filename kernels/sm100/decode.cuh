/*
** sm100/decode.cuh -- the decode mode of the sm100 family (FA4_DECODE 1,
** config bm 32): few query rows (decode and speculative steps), GQA
** packing, split-KV, products by tcgen05.mma.ws with M = 32.  Included by
** sm100/kernel.cuh in place of the prefill kernel; kernel.cuh's header
** gives the design, this file the details.
**
** STATUS: UNVERIFIED ON HARDWARE, like the rest of the family: it compiles
** for sm_100a without spills and its PTX passes tests/test_sm100_ptx.c.
**
** Rows: the 32 packed rows of sm100/decode_rows.h -- (token, head) pairs
** of one (batch, KV head) with FA4_PACK_GQA, else 32 tokens of one head.
** Grid (m_tiles, heads * splits, batch): y = head * splits + split, the
** head a KV head when packed (the sm80 family's order).
**
** TMEM (Layout G: an M 32 accumulator of N columns is N / 4 columns of
** all 128 lanes, sub-partition q holding columns q N / 4 .. of each row):
**     S0 at FA4_TMEM_S0 = 0, S1 at FA4_TMEM_S1 = BN / 4 (BN / 4 each),
**     O  at FA4_TMEM_O = BN / 2: padded dv / FA4_PV_N pieces of FA4_PV_N /
**        4 columns (an N = FA4_PV_N MMA each: .ws has no N = 192).
** Warp q of the softmax warpgroup reaches sub-partition q only (32x32b
** loads of lanes 32 q ..), so every row's S and O are spread over the
** four warps: each holds BN / 4 keys of S and FA4_PV_N / 4 columns of each
** O piece of all 32 rows (lane = row).  The row max goes through RED
** (one exchange per key block); the row sum stays per warp until the end.
**
** Shared memory (budget_sm100.c, "decode"): Q [32 rows x padded dqk] |
** K stages | V stages | P [2][32 x BN] | RED [2][4][32] f32 | BAR |
** TMEMPTR.  Q, K, P as 128 B swizzled K-major boxes of 64 columns (Q and
** P: 32 rows x 128 B = 4096 B a box), V MN-major as the prefill reads it.
**
** Per key block j (buffers j % 2):
**   load warp:  K_j, V_j into stage j % STAGES (Q first, on Q_FULL)
**   MMA warp:   S_j = Q K_j^T (M 32, N BN, smem A and B) -> S_FULL;
**               then for j - 1: P_{j-1} V_{j-1} (M 32, N FA4_PV_N per O
**               piece, A = P from smem) after P_FULL -> O_FULL
**   softmax WG: S_j -> row max (RED exchange), lazy rescale, P_j =
**               exp2(S - m) as 16-bit into P buffer j % 2 (st.shared,
**               fence.proxy.async), after O_FULL of P_{j-1} V: O *= alpha
**               where a row needs it; arrive P_FULL.
** Buffer reuse needs no more barriers: S_{j+2} is issued after P_FULL of
** j (so S_j was read), and P_{j+2} is written after the softmax waited
** O_FULL of P_j V (at step j + 1).
** Epilogue (softmax WG): O / l, st.global into O at the rows' (token,
** head), LSE by warp 0; with splits, O / l and the LSE as float32 into
** the workspace ([splits][heads_q][rows_cap][dv], the sm80 layout) and
** fa4_combine (common/combine.cuh, same module) merges them.
*/
#ifndef FA4_SM100_DECODE_CUH
#define FA4_SM100_DECODE_CUH

#include "common/serving.h"
#include "common/exp2.cuh"
#include "sm100/decode_rows.h"

#ifndef FA4_VARLEN
#define FA4_VARLEN 0              /* fa4_combine: dense rows */
#endif
#define FA4_OUT_DTYPE FA4_DTYPE   /* 16-bit inputs write O in their own type */

static_assert(FA4_FAMILY == 100 && FA4_DECODE == 1, "sm100 decode mode constants");
static_assert(FA4_DTYPE == 1 || FA4_DTYPE == 2, "sm100 decode: bf16 or fp16 inputs");
static_assert(FA4_BM == SM100_DECODE_ROWS && FA4_THREADS == 192, "decode: 32 rows, 6 warps");
static_assert(FA4_BN == 64 || FA4_BN == 128 || FA4_BN == 256, "tcgen05.mma.ws N: 64 128 256");
static_assert(FA4_PV_N == 64 || FA4_PV_N == 128 || FA4_PV_N == 256, "O piece: a .ws N");
static_assert(FA4_SWIZZLE == 128 && FA4_CTA_GROUP == 1, "decode: 128 B swizzle, one CTA");
static_assert(FA4_PAD_DQK % 64 == 0 && FA4_PAD_DV % FA4_PV_N == 0 && FA4_PAD_DV <= FA4_PAD_DQK,
              "depths in whole boxes and O pieces");
static_assert(FA4_STAGES >= 2, "a K/V ring of two stages at least");

#define DEC_ROWS SM100_DECODE_ROWS
#define DEC_BOX_BYTES (DEC_ROWS * 128)          /* a 64-column box of Q or P */
#define DEC_Q_BYTES (FA4_PAD_DQK / 64 * DEC_BOX_BYTES)
#define DEC_K_CHUNK (FA4_BN * 128)              /* a 64-column box of K or V */
#define DEC_K_BYTES (FA4_PAD_DQK / 64 * DEC_K_CHUNK)
#define DEC_V_BYTES (FA4_PAD_DV / 64 * DEC_K_CHUNK)
#define DEC_P_BYTES (FA4_BN / 64 * DEC_BOX_BYTES)
#define DEC_QUARTER (FA4_BN / 4)                 /* keys of S a warp holds */
#define DEC_PIECES (FA4_PAD_DV / FA4_PV_N)
#define DEC_PIECE_COLS (FA4_PV_N / 4)            /* O columns of a piece a warp holds */
#define DEC_RED_BAR 1                            /* named barrier of the softmax WG */

static_assert(FA4_SMEM_Q_SIZE == DEC_Q_BYTES && FA4_SMEM_K_SIZE == FA4_STAGES * DEC_K_BYTES
              && FA4_SMEM_V_SIZE == FA4_STAGES * DEC_V_BYTES
              && FA4_SMEM_P_SIZE == 2 * DEC_P_BYTES && FA4_SMEM_RED_SIZE == 2 * 4 * 32 * 4,
              "decode regions");
static_assert(FA4_SMEM_Q_OFF % 1024 == 0 && FA4_SMEM_K_OFF % 1024 == 0
              && FA4_SMEM_V_OFF % 1024 == 0 && FA4_SMEM_P_OFF % 1024 == 0
              && FA4_SMEM_BAR_OFF % 8 == 0, "swizzled tiles 1024-aligned");
static_assert(FA4_TMEM_S0 == 0 && FA4_TMEM_S1 == DEC_QUARTER && FA4_TMEM_O == 2 * DEC_QUARTER
              && FA4_TMEM_O + FA4_PAD_DV / 4 <= FA4_TMEM_COLS, "decode TMEM map");
static_assert(FA4_SMEM_SLACK >= 1024 - 16
              && FA4_SMEM_TMEMPTR_OFF + FA4_SMEM_TMEMPTR_SIZE + FA4_SMEM_SLACK == FA4_SMEM_BYTES,
              "layout + base-alignment slack == FA4_SMEM_BYTES");

/* The barrier map; lib/budget_sm100.c counts exactly these. */
enum sm100_decode_bar {
    DBAR_Q_FULL = 0,                        /* TMA -> MMA: Q */
    DBAR_S_FULL = 1,                        /* [2] MMA -> softmax: S buffer b */
    DBAR_P_FULL = 3,                        /* [2] softmax -> MMA: P buffer b (count 128) */
    DBAR_O_FULL = 5,                        /* MMA -> softmax: P V of a block done */
    DBAR_K_FULL = 6,                        /* [STAGES] */
    DBAR_K_EMPTY = DBAR_K_FULL + FA4_STAGES,
    DBAR_V_FULL = DBAR_K_EMPTY + FA4_STAGES,
    DBAR_V_EMPTY = DBAR_V_FULL + FA4_STAGES,
    DBAR_TOTAL = DBAR_V_EMPTY + FA4_STAGES
};
static_assert(DBAR_TOTAL == FA4_NUM_BARRIERS && FA4_SMEM_BAR_SIZE == 8 * FA4_NUM_BARRIERS,
              "barrier map differs from the budget's count");

/* The kernel's own account of what it reaches (tests/test_sm100_ptx.c
 * holds it against the budget): smem regions, barriers, TMEM pointer and
 * the base's slack; TMEM columns S0, S1 and O. */
extern "C" __device__ const u32 fa4_sm100_smem_reach =
    DEC_Q_BYTES + FA4_STAGES * (DEC_K_BYTES + DEC_V_BYTES) + 2 * DEC_P_BYTES + 2 * 4 * 32 * 4
    + 8 * DBAR_TOTAL + 4 + 1024;
extern "C" __device__ const u32 fa4_sm100_tmem_reach = 2 * DEC_QUARTER + FA4_PAD_DV / 4;

/* What a CTA works on; uniform over the CTA. */
struct dec_ctx {
    u32 smem;          /* shared address of the 1024-aligned base */
    u8 *base;
    u32 tmem;
    int m;             /* tile: token block x head chunk */
    int pg;            /* heads packed in the rows (sm100/decode_rows.h) */
    int token0;        /* first token of the tile */
    int q_head0;       /* query head of packed row 0 */
    int kv_head, batch, split;
    int n_begin, n;    /* the split's key blocks */
    int full_begin, full_end;  /* blocks every row of the tile sees whole */
};

FA4_DEV u32 dbar(const dec_ctx &c, int idx) { return c.smem + FA4_SMEM_BAR_OFF + 8u * (u32)idx; }
FA4_DEV u32 k_stage(const dec_ctx &c, int j)
{ return c.smem + FA4_SMEM_K_OFF + (u32)(j % FA4_STAGES) * DEC_K_BYTES; }
FA4_DEV u32 v_stage(const dec_ctx &c, int j)
{ return c.smem + FA4_SMEM_V_OFF + (u32)(j % FA4_STAGES) * DEC_V_BYTES; }
FA4_DEV u32 p_buf(const dec_ctx &c, int j)
{ return c.smem + FA4_SMEM_P_OFF + (u32)(j & 1) * DEC_P_BYTES; }
FA4_DEV u32 stage_phase(int j) { return (u32)(j / FA4_STAGES) & 1u; }

/* ------------------------------------------------------------ TMA warp */

/* Q once (per 64-column box: the {64, H, T, 1} box of decode_rows.h,
 * rows packed (token, head) row-major), then K_j and V_j per stage,
 * waiting on "empty" with the parity flipped (the first pass falls
 * through).  Rows of the box past T H are not loaded (never stored). */
FA4_DEV void dec_load_warp(const dec_ctx &c, const fa4_tma_map *tq, const fa4_tma_map *tk,
                           const fa4_tma_map *tv)
{
    const int h = sm100_decode_heads(c.pg), t = sm100_decode_tokens(c.pg);
    int j, ch;

    if (c.n == 0 || !elect_one_sync())
        return;
    mbarrier_arrive_expect_tx(dbar(c, DBAR_Q_FULL), (u32)(FA4_PAD_DQK / 64 * h * t * 128));
    for (ch = 0; ch < FA4_PAD_DQK / 64; ch++)
        tma_load_4d(c.smem + FA4_SMEM_Q_OFF + ch * DEC_BOX_BYTES, tq, dbar(c, DBAR_Q_FULL),
                    ch * 64, c.q_head0, c.token0, c.batch);
    for (j = 0; j < c.n; j++) {
        const int key0 = (c.n_begin + j) * FA4_BN;
        const int st = j % FA4_STAGES;
        mbarrier_wait(dbar(c, DBAR_K_EMPTY + st), stage_phase(j) ^ 1u);
        mbarrier_arrive_expect_tx(dbar(c, DBAR_K_FULL + st), DEC_K_BYTES);
        for (ch = 0; ch < FA4_PAD_DQK / 64; ch++)
            tma_load_4d(k_stage(c, j) + ch * DEC_K_CHUNK, tk, dbar(c, DBAR_K_FULL + st),
                        ch * 64, key0, c.kv_head, c.batch);
        mbarrier_wait(dbar(c, DBAR_V_EMPTY + st), stage_phase(j) ^ 1u);
        mbarrier_arrive_expect_tx(dbar(c, DBAR_V_FULL + st), DEC_V_BYTES);
        for (ch = 0; ch < FA4_PAD_DV / 64; ch++)
            tma_load_4d(v_stage(c, j) + ch * DEC_K_CHUNK, tv, dbar(c, DBAR_V_FULL + st),
                        ch * 64, key0, c.kv_head, c.batch);
    }
}

/* ------------------------------------------------------------ MMA warp */

/* Instruction descriptor of the mode's MMAs: f32 D, 16-bit A and B
 * (bf16 1 / f16 0), M 32, N, B MN-major when B_MN. */
FA4_DEV constexpr u32 dec_idesc(u32 n, u32 b_mn)
{
    return umma_idesc(FA4_DTYPE == 1, FA4_DTYPE == 1, DEC_ROWS, n, 0, b_mn);
}

/* S_j = Q K_j^T into S buffer j % 2: k16 steps over the padded depth,
 * each 32 B further into a 128 B row, a new 64-column box every 4. */
FA4_DEV void dec_mma_s(const dec_ctx &c, int j)
{
    constexpr u32 idesc = dec_idesc(FA4_BN, 0);
    const u32 q = c.smem + FA4_SMEM_Q_OFF, k = k_stage(c, j);
    const u32 d = c.tmem + ((j & 1) ? FA4_TMEM_S1 : FA4_TMEM_S0);
    int kk;

#pragma unroll
    for (kk = 0; kk < FA4_PAD_DQK / 16; kk++) {
        const u32 in = (u32)(kk % 4) * 32;
        tcgen05_mma_ws_f16_ss(d, umma_smem_desc(q + (kk / 4) * DEC_BOX_BYTES + in, 16, 1024, 2),
                              umma_smem_desc(k + (kk / 4) * DEC_K_CHUNK + in, 16, 1024, 2),
                              idesc, kk > 0);
    }
}

/* O (+)= P_j V_j: per O piece (FA4_PV_N columns of V: its boxes from
 * piece x PV_N / 64), BN / 16 k-steps; P K-major from P buffer j % 2, V
 * MN-major (LBO = a 64-column box of V, SBO 8 keys x 128 B, a k-step 16
 * keys).  The first block overwrites O. */
FA4_DEV void dec_mma_pv(const dec_ctx &c, int j)
{
    constexpr u32 idesc = dec_idesc(FA4_PV_N, 1);
    const u32 pb = p_buf(c, j), v = v_stage(c, j);
    int pc, kk;

#pragma unroll
    for (pc = 0; pc < DEC_PIECES; pc++)
#pragma unroll
        for (kk = 0; kk < FA4_BN / 16; kk++)
            tcgen05_mma_ws_f16_ss(
                c.tmem + FA4_TMEM_O + (u32)pc * DEC_PIECE_COLS,
                umma_smem_desc(pb + (kk / 4) * DEC_BOX_BYTES + (u32)(kk % 4) * 32, 16, 1024, 2),
                umma_smem_desc(v + (u32)pc * (FA4_PV_N / 64) * DEC_K_CHUNK + (u32)kk * 16 * 128,
                               DEC_K_CHUNK, 1024, 2),
                idesc, j > 0 || kk > 0);
}

/* P_j V_j once the softmax released P_j and V_j landed; then O_FULL and
 * the V stage back to the load warp. */
FA4_DEV void dec_pv_step(const dec_ctx &c, int j)
{
    mbarrier_wait(dbar(c, DBAR_P_FULL + (j & 1)), (u32)(j >> 1) & 1u);
    mbarrier_wait(dbar(c, DBAR_V_FULL + j % FA4_STAGES), stage_phase(j));
    tcgen05_fence_after_thread_sync();
    dec_mma_pv(c, j);
    tcgen05_commit(dbar(c, DBAR_O_FULL));
    tcgen05_commit(dbar(c, DBAR_V_EMPTY + j % FA4_STAGES));
}

/* One elected thread issues every MMA, in the order S_0 | S_1 | P_0 V |
 * S_2 | P_1 V | ... | P_{n-1} V (tcgen05.mma from one thread run in issue
 * order -- PTX ISA; unverified here). */
FA4_DEV void dec_mma_warp(const dec_ctx &c)
{
    int j;

    if (c.n == 0 || !elect_one_sync())
        return;
    mbarrier_wait(dbar(c, DBAR_Q_FULL), 0);
    for (j = 0; j < c.n; j++) {
        mbarrier_wait(dbar(c, DBAR_K_FULL + j % FA4_STAGES), stage_phase(j));
        tcgen05_fence_after_thread_sync();
        dec_mma_s(c, j);
        tcgen05_commit(dbar(c, DBAR_S_FULL + (j & 1)));
        tcgen05_commit(dbar(c, DBAR_K_EMPTY + j % FA4_STAGES));
        if (j > 0)
            dec_pv_step(c, j - 1);
    }
    dec_pv_step(c, c.n - 1);
}

/* ------------------------------------------------------ softmax warpgroup */

#define DEC_NEG_INF (-__int_as_float(0x7f800000))

/* The max over this warp's BN / 4 scores of row ROW_OK's token TOKEN in S
 * at S_AT (keys KEY0 ..), scaled by SC; masked element by element when
 * MASKED. */
template <bool MASKED>
FA4_DEV float dec_row_max(const fa4_params &p, u32 s_at, int token, int key0, float sc)
{
    float mx = DEC_NEG_INF;
    int ch, e;

    for (ch = 0; ch < DEC_QUARTER / 16; ch++) {
        u32 v[16];
        tcgen05_ld_32x32b_x16(v, s_at + (u32)ch * 16);
        tcgen05_wait_ld();
#pragma unroll
        for (e = 0; e < 16; e++)
            if (!MASKED || key_visible(p, token, key0 + ch * 16 + e))
                mx = fmaxf(mx, __uint_as_float(v[e]) * sc);
    }
    return mx;
}

/* P = exp2(s sc - MS) of this warp's BN / 4 scores (0 where masked, when
 * MASKED) as the 16-bit type into P buffer PB, row R's keys KQ .. (its
 * 128 B rows swizzled: 16 B unit u of row r at u ^ (r % 8)); returns
 * their sum. */
template <bool MASKED>
FA4_DEV float dec_exp_p(const fa4_params &p, u32 s_at, u32 pb, int r, int token, int key0,
                        int kq, float sc, float ms)
{
    const int emu = 16 * FA4_EXP2_EMU_PCT / 100;      /* per 16-column chunk */
    float sum = 0.0f;
    int ch, e;

    for (ch = 0; ch < DEC_QUARTER / 16; ch++) {
        const int k = kq + ch * 16;                   /* key within the block */
        const u32 row_at = pb + (u32)(k / 64) * DEC_BOX_BYTES + (u32)r * 128;
        const u32 unit = (u32)(k % 64) / 8, sw = (u32)(r & 7);
        u32 v[16], pk[8];
        tcgen05_ld_32x32b_x16(v, s_at + (u32)ch * 16);
        tcgen05_wait_ld();
#pragma unroll
        for (e = 0; e < 8; e++) {
            float a = __uint_as_float(v[2 * e]) * sc - ms;
            float b = __uint_as_float(v[2 * e + 1]) * sc - ms;
            a = 2 * e < emu ? exp2_fma(a) : ex2_approx_ftz_f32(a);
            b = 2 * e + 1 < emu ? exp2_fma(b) : ex2_approx_ftz_f32(b);
            if (MASKED && !key_visible(p, token, key0 + ch * 16 + 2 * e))
                a = 0.0f;
            if (MASKED && !key_visible(p, token, key0 + ch * 16 + 2 * e + 1))
                b = 0.0f;
            sum += a + b;
            pk[e] = pack_p(a, b);
        }
        st_shared_v4_u32(row_at + ((unit ^ sw) << 4), pk[0], pk[1], pk[2], pk[3]);
        st_shared_v4_u32(row_at + (((unit + 1) ^ sw) << 4), pk[4], pk[5], pk[6], pk[7]);
    }
    return sum;
}

/* The epilogue of this thread's row: its O columns (16 at a time: TMEM
 * column ch * 16 is O column (ch / (PIECE_COLS / 16)) PV_N + warp
 * PIECE_COLS + ..) times INV_L to O in the 16-bit type, or with splits
 * as float32 to the split's partial rows; zeros when the CTA saw no key
 * (HAVE_O 0, uniform).  The loads are whole-warp; a row holding no
 * (token, head) (ROW_OK 0) writes nothing, nor do columns past
 * head_dim_v. */
FA4_DEV void dec_store_o(const fa4_params &p, const fa4_serving &s, const dec_ctx &c,
                         u32 o_at, int wq, bool row_ok, int token, int head, float inv_l,
                         bool have_o)
{
    int ch, e;

    for (ch = 0; ch < DEC_PIECES * DEC_PIECE_COLS / 16; ch++) {
        const int col = ch / (DEC_PIECE_COLS / 16) * FA4_PV_N + wq * DEC_PIECE_COLS
                        + ch % (DEC_PIECE_COLS / 16) * 16;
        u32 v[16];
        if (col >= FA4_DV)
            continue;
        if (have_o) {
            tcgen05_ld_32x32b_x16(v, o_at + (u32)ch * 16);
            tcgen05_wait_ld();
        } else {
#pragma unroll
            for (e = 0; e < 16; e++)
                v[e] = 0u;
        }
        if (!row_ok)
            continue;
        if (s.num_splits > 1) {
            const i64 row = ((i64)c.split * p.heads_q + head) * s.rows_cap
                            + (i64)c.batch * p.seqlen_q + token;
            float *dst = (float *)s.o_partial + row * FA4_DV + col;
#pragma unroll
            for (e = 0; e < 4; e++) {
                u32 q4[4];
                q4[0] = __float_as_uint(__uint_as_float(v[4 * e]) * inv_l);
                q4[1] = __float_as_uint(__uint_as_float(v[4 * e + 1]) * inv_l);
                q4[2] = __float_as_uint(__uint_as_float(v[4 * e + 2]) * inv_l);
                q4[3] = __float_as_uint(__uint_as_float(v[4 * e + 3]) * inv_l);
                st_global_v4_u32(dst + 4 * e, q4);
            }
        } else {
            u8 *dst = (u8 *)p.o + ((i64)c.batch * p.o_batch_stride + (i64)token * p.o_row_stride
                                   + (i64)head * p.o_head_stride + col) * 2;
            u32 pk[8];
#pragma unroll
            for (e = 0; e < 8; e++)
                pk[e] = pack_p(__uint_as_float(v[2 * e]) * inv_l,
                                 __uint_as_float(v[2 * e + 1]) * inv_l);
            st_global_v4_u32(dst, pk);
            st_global_v4_u32(dst + 16, pk + 4);
        }
    }
}

/* Warps 0-3: warp WQ holds sub-partition WQ of S and O (lane = packed
 * row), i.e. a quarter of the keys and of O's columns of all 32 rows. */
FA4_DEV void dec_softmax_warpgroup(const fa4_params &p, const fa4_serving &s, const dec_ctx &c,
                                   int wq)
{
    const int r = (int)(threadIdx.x & 31);
    const u32 lane_base = (u32)(wq * 32) << 16;
    const u32 o_at = c.tmem + lane_base + FA4_TMEM_O;
    float *red = (float *)(c.base + FA4_SMEM_RED_OFF);     /* [2][4][32] */
    const float sc = p.scale_log2;
    float m = DEC_NEG_INF, l = 0.0f;
    int token, hg, j;
    const bool row_ok = sm100_decode_row(c.m, r, p.seqlen_q, c.pg, &token, &hg);
    const int head = c.q_head0 - sm100_decode_head0(c.m, c.pg) + hg;

    for (j = 0; j < c.n; j++) {
        const int blk = c.n_begin + j, kq = wq * DEC_QUARTER;
        const int key0 = blk * FA4_BN + kq;
        const u32 s_at = c.tmem + lane_base + ((j & 1) ? FA4_TMEM_S1 : FA4_TMEM_S0);
        const bool full = blk >= c.full_begin && blk < c.full_end;
        float mx, alpha = 1.0f, ms, sum;
        int q;

        mbarrier_wait(dbar(c, DBAR_S_FULL + (j & 1)), (u32)(j >> 1) & 1u);
        tcgen05_fence_after_thread_sync();
        mx = full ? dec_row_max<false>(p, s_at, token, key0, sc)
                  : dec_row_max<true>(p, s_at, token, key0, sc);
        /* the row's max over the four warps' keys (RED buffer j % 2: the
           one the barrier of step j - 1 saw every warp finish reading) */
        red[((j & 1) * 4 + wq) * 32 + r] = mx;
        named_barrier_sync<DEC_RED_BAR, 128>();
        for (q = 0; q < 4; q++)
            mx = fmaxf(mx, red[((j & 1) * 4 + q) * 32 + r]);

        /* lazy rescale: the same decision in all four warps (same values) */
        if (mx > m + (float)FA4_RESCALE_THRESHOLD || (m == DEC_NEG_INF && mx > m)) {
            alpha = m == DEC_NEG_INF ? 0.0f : ex2_approx_ftz_f32(m - mx);
            m = mx;
        }
        /* a row with no visible key yet has max -inf: use 0, exp2 gives 0 */
        ms = m == DEC_NEG_INF ? 0.0f : m;
        sum = full ? dec_exp_p<false>(p, s_at, p_buf(c, j), r, token, key0, kq, sc, ms)
                   : dec_exp_p<true>(p, s_at, p_buf(c, j), r, token, key0, kq, sc, ms);
        if (j > 0) {
            /* O holds P V up to block j - 1: rescale it before j adds */
            mbarrier_wait(dbar(c, DBAR_O_FULL), (u32)(j - 1) & 1u);
            tcgen05_fence_after_thread_sync();
            if (__any_sync(0xffffffffu, alpha != 1.0f))
                tmem_scale<DEC_PIECES * DEC_PIECE_COLS>(o_at, alpha);
        }
        /* P's st.shared to the MMA's async proxy; O's stores before the arrive */
        fence_proxy_async_shared();
        tcgen05_fence_before_thread_sync();
        mbarrier_arrive(dbar(c, DBAR_P_FULL + (j & 1)));
        l = l * alpha + sum;
    }

    /* the row sum over the four warps (RED buffer n % 2, free as above) */
    red[((c.n & 1) * 4 + wq) * 32 + r] = l;
    named_barrier_sync<DEC_RED_BAR, 128>();
    l = 0.0f;
    for (j = 0; j < 4; j++)
        l += red[((c.n & 1) * 4 + j) * 32 + r];
    if (c.n > 0) {
        mbarrier_wait(dbar(c, DBAR_O_FULL), (u32)(c.n - 1) & 1u);
        tcgen05_fence_after_thread_sync();
    }
    dec_store_o(p, s, c, o_at, wq, row_ok, token, head, l > 0.0f ? 1.0f / l : 0.0f, c.n > 0);
    if (wq == 0 && row_ok && (p.lse || s.num_splits > 1)) {
        /* natural log-sum-exp of the scaled scores: (m + log2 l) ln 2 */
        const float lse = l > 0.0f && m != DEC_NEG_INF
                              ? (m + lg2_approx_ftz_f32(l)) * 0.6931471805599453f
                              : DEC_NEG_INF;
        if (s.num_splits > 1)
            ((float *)s.lse_partial)[((i64)c.split * p.heads_q + head) * s.rows_cap
                                     + (i64)c.batch * p.seqlen_q + token] = lse;
        else
            ((float *)p.lse)[((i64)c.batch * p.heads_q + head) * p.seqlen_q + token] = lse;
    }
}

#include "common/combine.cuh"

extern "C" __global__ void __launch_bounds__(FA4_THREADS, 1)
fa4_fwd(const __grid_constant__ fa4_params p,
        const __grid_constant__ fa4_tma_map tm_q,
        const __grid_constant__ fa4_tma_map tm_k,
        const __grid_constant__ fa4_tma_map tm_v,
        const fa4_serving s)
{
    dec_ctx c;
    const int warp = warp_id_uniform();
    const int heads_y = (int)blockIdx.y / s.num_splits;

    c.smem = smem_base_1024(&c.base);
    c.m = (int)blockIdx.x;
    c.split = (int)blockIdx.y % s.num_splits;
    c.batch = (int)blockIdx.z;
    c.pg = FA4_PACK_GQA ? p.group : 1;
    c.kv_head = FA4_PACK_GQA ? heads_y : heads_y / p.group;
    c.q_head0 = (FA4_PACK_GQA ? heads_y * p.group : heads_y) + sm100_decode_head0(c.m, c.pg);
    c.token0 = sm100_decode_token0(c.m, c.pg);
    {
        /* the tile's tokens' key blocks, then this split's share */
#if FA4_MASK
        const sm100_blocks b = sm100_block_range(c.token0, sm100_decode_tokens(c.pg), p.seqlen_q,
                                                 p.seqlen_k, p.window_left, p.window_right,
                                                 FA4_BN);
#else
        const sm100_blocks b = sm100_block_range(c.token0, sm100_decode_tokens(c.pg), p.seqlen_q,
                                                 p.seqlen_k, -1, -1, FA4_BN);
#endif
        int lo, hi;
        sm100_split_range(b.begin, b.end, c.split, s.num_splits, &lo, &hi);
        c.n_begin = lo;
        c.n = hi - lo;
        c.full_begin = b.full_begin;
        c.full_end = b.full_end;
    }

    if (threadIdx.x == 0) {
        int i;
#pragma unroll
        for (i = 0; i < DBAR_TOTAL; i++)
            mbarrier_init(dbar(c, i), i == DBAR_P_FULL || i == DBAR_P_FULL + 1 ? 128u : 1u);
        fence_mbarrier_init();
    }
    if (warp == 4 && elect_one_sync()) {
        prefetch_tensormap(&tm_q);
        prefetch_tensormap(&tm_k);
        prefetch_tensormap(&tm_v);
    }
    c.tmem = tmem_alloc_cta<FA4_TMEM_COLS>(c.smem, c.base, warp == 5);

    if (warp < 4)
        dec_softmax_warpgroup(p, s, c, warp);
    else if (warp == 4)
        dec_load_warp(c, &tm_q, &tm_k, &tm_v);
    else
        dec_mma_warp(c);

    tcgen05_fence_before_thread_sync();
    __syncthreads();
    if (warp == 5) {
        tcgen05_fence_after_thread_sync();
        tcgen05_dealloc<FA4_TMEM_COLS>(c.tmem);
    }
}

#endif
