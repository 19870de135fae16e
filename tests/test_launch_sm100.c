/*
** test_launch_sm100.c -- the sm100 launch path without a GPU.  The TMA
** maps launch_sm100_describe() gives, for every enumerated sm100 config of
** several head dims, against what the kernel's mbarrier transaction
** counts and the epilogue's TMA store of O assume (kernels/sm100/
** mainloop.cuh and correction.cuh, with the constants budget_defines()
** compiles them with), CTA pairs included (half K boxes, half of V's
** depth boxes per CTA, the leader arming the pair's bytes); the kernel
** text still holding the byte counts and coordinates this test mirrors
** (and the per-token scales' indexing); strides, GQA and a
** call's own sizes; what it refuses; and fa4_forward() through a
** stand-in driver that records the maps it encodes and the launch it
** queues (a pair's: clusters of 2 x 1 x 1 through cuLaunchKernelEx;
** per-token scales: the pointers in the argument block, refused when
** missing or misaligned).  fp8 (e4m3) configs are checked the same way
** with 1-byte elements in their 64 or 128 B swizzle (byte maps, O's
** 16-bit boxes of one swizzle span), rope mode included, and an fp8 plan
** through the stand-in driver (UINT8 maps, the descale pointers in the
** argument block beside the per-token scales', no workspace).  The
** decode mode (bm 32): every enumerated decode config's Q map in packed
** (token, head) boxes and K/V maps against kernels/sm100/decode.cuh's
** expect_tx counts, its grid, and fa4_forward() with and without the
** split workspace (fa4_fwd over the splits, then fa4_combine).
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "tap.h"
#include "budget.h"
#include "config.h"
#include "dtype.h"
#include "embedded.h"
#include "family.h"
#include "launch_sm100.h"
#include "budget_sm100.h"
#include "sm100/decode_rows.h"
#include "plan.h"
#include "problem.h"

/* The value of "#define NAME v" in DEFS, or -1. */
static int define_of(const char *defs, const char *name)
{
    char key[96];
    const char *at;

    snprintf(key, sizeof key, "#define %s ", name);
    at = strstr(defs, key);
    return at ? atoi(at + strlen(key)) : -1;
}

/*
** What kernels/sm100/kernel.cuh and mainloop.cuh assume of the maps, from
** the constants the variant is compiled with (DEFS); the first broken
** rule into BAD, or "" when the maps M keep them all.  G = CTA_GROUP
** (2: a CTA pair); every count is one CTA's, and the leader arms its
** barrier with G times it (arm_full), as each CTA brings as many bytes.
** E = SM100_ESIZE (2, or 1 for fp8: FA4_DTYPE 3), R = FA4_SWIZZLE (128,
** or 64 / 128 for fp8), W = R / E elements a box row:
**   SM100_ROW_BYTES R, SM100_SW_ELEMS W
**   SM100_K_ROWS BN / G                     SM100_V_COLS PAD_DV / G
**   SM100_Q_CHUNK_BYTES  128 * R            SM100_K_CHUNK_BYTES  K_ROWS * R
**   SM100_V_CHUNK_BYTES  BN * R             SM100_V_CHUNKS       V_COLS / W
**   SM100_Q_TILE_BYTES   128 * PAD_DQK * E  SM100_K_TILE_BYTES   K_ROWS * PAD_DQK * E
**   SM100_V_TILE_BYTES   BN * V_COLS * E
**   Q1_FULL[ch]:  expect Q_CHUNK;  one Q box at (W ch, m0 + 128, head, batch)
**   K_j full:     expect K_CHUNKS > 1 ? K_CHUNK : K_TILE, + Q_TILE for j = 0;
**                 one K box per depth chunk at (W ch, key0 + rank K_ROWS,
**                 kv_head, batch) (one barrier each when K_CHUNKS > 1), and
**                 for j = 0 the DQK_CHUNKS boxes of Q tile 0 at (W ch, m0,
**                 head, batch)
**   V_j full:     expect V_TILE; V_CHUNKS V boxes from depth box rank V_CHUNKS
**   box ch lands at +ch * Q_CHUNK (Q), +ch * K_CHUNK (K) or +ch * V_CHUNK
**   (V) of its tile.
**   Rope mode (ROPE_CHUNKS > 0, a fused ring): K_j's first DV_CHUNKS boxes
**   land in its slot (K_SLOT_BYTES = DV_CHUNKS * K_CHUNK, at most the
**   slot), the last ROPE_CHUNKS in ROPE buffer j % ceil(KV_SLOTS / 2) of
**   ROPE_BUF_BYTES = ROPE_CHUNKS * K_CHUNK; both on K_j's barrier, whose
**   expect_tx (K_TILE) is then what the slot's and the rope's boxes
**   bring; the ROPE region holds exactly the buffers.
**   O (16-bit): each warp w of the correction WG stores boxes of {R / 2,
**   32} -- 32 rows of one swizzle span, R / 2 columns -- at (R / 2 b,
**   m0 + 128 i + 32 w, head, batch), staged in tile i's Q region (16-bit:
**   box ch at +ch * Q_CHUNK + 32 w * R; fp8: in rounds through the same
**   DQK_CHUNKS slots): 32 rows x R B each, so four warps' boxes cover the
**   128 rows of one Q box.
*/
static void check_maps(char *bad, size_t n, const sm100_map m[4], const char *defs)
{
    const int bn = define_of(defs, "FA4_BN"), pad_dqk = define_of(defs, "FA4_PAD_DQK");
    const int pad_dv = define_of(defs, "FA4_PAD_DV"), k_chunks = define_of(defs, "FA4_K_CHUNKS");
    const int g = define_of(defs, "FA4_CTA_GROUP"), r = define_of(defs, "FA4_SWIZZLE");
    const int e = define_of(defs, "FA4_DTYPE") == 3 ? 1 : 2, w = r > 0 ? r / e : 0;
    const int k_rows = g > 0 ? bn / g : 0, v_cols = g > 0 ? pad_dv / g : 0;
    const long long q_chunk = 128LL * r, k_chunk = (long long)k_rows * r;
    const long long v_chunk = (long long)bn * r;
    const long long q_tile = 128LL * pad_dqk * e, k_tile = (long long)k_rows * pad_dqk * e;
    const long long v_tile = (long long)bn * v_cols * e;
    const int dqk_chunks = w ? pad_dqk / w : 0, dv_chunks = w ? pad_dv / w : 0;
    const int v_loads = w ? v_cols / w : 0;
    const long long q = launch_sm100_box_bytes(&m[0]), k = launch_sm100_box_bytes(&m[1]);
    const long long v = launch_sm100_box_bytes(&m[2]), o = launch_sm100_box_bytes(&m[3]);
    const int k_loads = k_chunks > 1 ? 1 : dqk_chunks;       /* K boxes per K barrier */
    const long long k_tx = k_chunks > 1 ? k_chunk : k_tile;
    const int dv = define_of(defs, "FA4_DV") > 0 ? define_of(defs, "FA4_DV")
                                                 : define_of(defs, "FA4_D");
    /* O's boxes: 16-bit, one per 64 columns of the padded depth; fp8, one
       per R / 2 columns that hold part of head_dim_v (SM100_O_BOXES) */
    const int o_boxes = e == 2 ? dv_chunks : (dv + r / 2 - 1) / (r / 2);
    const int chunks[4] = { dqk_chunks, dqk_chunks, dv_chunks, o_boxes };
    const int esize[4] = { e, e, e, 2 };
    const int rope_chunks = define_of(defs, "FA4_ROPE_CHUNKS");
    const int slots = define_of(defs, "FA4_KV_SLOTS");
    const int kv_size = define_of(defs, "FA4_SMEM_KV_SIZE");
    const int rope_size = define_of(defs, "FA4_SMEM_ROPE_SIZE");
    int i;

    bad[0] = '\0';
    if (bn <= 0 || pad_dqk <= 0 || pad_dv <= 0 || k_chunks <= 0 || (g != 1 && g != 2) ||
        (r != 64 && r != 128))
        snprintf(bad, n, "defines lack FA4_BN / FA4_PAD_* / FA4_K_CHUNKS / FA4_CTA_GROUP / "
                 "FA4_SWIZZLE");
    else if (q != q_chunk)
        snprintf(bad, n, "Q1_FULL expects %lld B, a Q box is %lld B", q_chunk, q);
    else if (dqk_chunks * q + k_loads * k != k_tx + q_tile)
        snprintf(bad, n, "K_0's barrier expects %lld B, its %d Q + %d K boxes bring %lld B",
                 k_tx + q_tile, dqk_chunks, k_loads, dqk_chunks * q + k_loads * k);
    else if (k_loads * k != k_tx)
        snprintf(bad, n, "K_j's barrier expects %lld B, its %d boxes bring %lld B", k_tx,
                 k_loads, k_loads * k);
    else if (v_loads * v != v_tile || g * v_loads != dv_chunks)
        snprintf(bad, n, "V_j's barrier expects %lld B, its %d boxes bring %lld B (%d CTAs "
                 "x %d boxes for %d depth boxes)", v_tile, v_loads, v_loads * v, g, v_loads,
                 dv_chunks);
    else if (k != k_chunk || v != v_chunk)
        snprintf(bad, n, "K/V boxes of %lld/%lld B do not step by the kernel's %lld/%lld B "
                 "chunks", k, v, k_chunk, v_chunk);
    else if (m[0].box[1] != 128 || m[1].box[1] != k_rows || m[2].box[1] != bn ||
             m[3].box[1] != 32)
        snprintf(bad, n, "box rows %d/%d/%d/%d; the kernel steps 128 query rows, %d keys "
                 "of K, %d of V and 32 output rows", m[0].box[1], m[1].box[1], m[2].box[1],
                 m[3].box[1], k_rows, bn);
    else if (rope_chunks < 0 || (rope_chunks > 0 && (kv_size <= 0 || slots <= 0)))
        snprintf(bad, n, "defines lack FA4_ROPE_CHUNKS (or rope mode without a fused ring)");
    else if (rope_chunks > 0 &&
             ((dqk_chunks - rope_chunks) * k + rope_chunks * k != k_tx ||
              dqk_chunks - rope_chunks != dv_chunks ||
              (dqk_chunks - rope_chunks) * k > kv_size / slots ||
              rope_size != (slots + 1) / 2 * rope_chunks * k))
        snprintf(bad, n, "rope mode: K_j's %d slot + %d rope boxes of %lld B against its "
                 "barrier's %lld B, a slot of %d B, ROPE %d B for %d buffers",
                 dqk_chunks - rope_chunks, rope_chunks, k, k_tx, kv_size / slots, rope_size,
                 (slots + 1) / 2);
    else if (rope_chunks == 0 && rope_size >= 0)
        snprintf(bad, n, "a ROPE region of %d B without rope mode", rope_size);
    else if (4 * o != q_chunk)
        snprintf(bad, n, "an O box is %lld B; four warps' boxes must fill a Q chunk of %lld B",
                 o, q_chunk);
    else if (m[3].dims[1] != m[0].dims[1] || m[3].dims[2] != m[0].dims[2] ||
             m[3].dims[3] != m[0].dims[3] || m[3].dims[0] != m[2].dims[0])
        snprintf(bad, n, "O dims {%lld, %lld, %lld, %lld}: want V's depth and Q's rows, "
                 "heads, batch", m[3].dims[0], m[3].dims[1], m[3].dims[2], m[3].dims[3]);
    for (i = 0; i < 4 && !bad[0]; i++) {
        const int bw = m[i].box[0];
        if (bw * m[i].esize != r || m[i].esize != esize[i] || m[i].swizzle != r ||
            m[i].box[2] != 1 || m[i].box[3] != 1)
            snprintf(bad, n, "%s box {%d, %d, %d, %d} x %d B, swizzle %d: a box row must be "
                     "one %d B swizzle row of %d-byte elements", m[i].name, m[i].box[0],
                     m[i].box[1], m[i].box[2], m[i].box[3], m[i].esize, m[i].swizzle, r,
                     esize[i]);
        else if (m[i].dims[0] > (long long)bw * chunks[i] ||
                 m[i].dims[0] <= (long long)bw * (chunks[i] - 1))
            snprintf(bad, n, "%s head dim %lld is not covered by %d boxes of %d (or one "
                     "lies outside it)", m[i].name, m[i].dims[0], chunks[i], bw);
    }
}

/* The kernel's argument block for P (contiguous BSHD) at aligned addresses. */
static fa4_params params_of(const fa4_problem *p)
{
    const int dv = p->head_dim_v > 0 ? p->head_dim_v : p->head_dim_qk;
    fa4_params k;

    memset(&k, 0, sizeof k);
    k.q = 0x7f0000000000ULL;
    k.k = 0x7f1000000000ULL;
    k.v = 0x7f2000000000ULL;
    k.o = 0x7f3000000000ULL;
    k.q_head_stride = k.k_head_stride = p->head_dim_qk;
    k.q_row_stride = (long long)p->heads_q * p->head_dim_qk;
    k.q_batch_stride = k.q_row_stride * p->seqlen_q;
    k.k_row_stride = (long long)p->heads_kv * p->head_dim_qk;
    k.k_batch_stride = k.k_row_stride * p->seqlen_k;
    k.v_head_stride = k.o_head_stride = dv;
    k.v_row_stride = (long long)p->heads_kv * dv;
    k.v_batch_stride = k.v_row_stride * p->seqlen_k;
    k.o_row_stride = (long long)p->heads_q * dv;
    k.o_batch_stride = k.o_row_stride * p->seqlen_q;
    k.batch = p->batch;
    k.seqlen_q = p->seqlen_q;
    k.seqlen_k = p->seqlen_k;
    k.heads_q = p->heads_q;
    k.heads_kv = p->heads_kv;
    k.group = p->heads_q / p->heads_kv;
    k.m_blocks = (p->seqlen_q + 255) / 256;
    return k;
}

/* Every enumerated sm100 config of (DTYPE, D/DV): its maps against the
** kernel's counts.  One ok line; returns the number checked. */
static int check_space(const device_limits *dev, fa4_dtype dtype, int d, int dv)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    config_space sp;
    char why[512], defs[8192], bad[640] = "", text[256] = "";
    int i, checked = 0, rope = 0, fused = 0;

    p.dtype = dtype;
    p.batch = 3;
    p.seqlen_q = 1000;
    p.seqlen_k = 777;
    p.heads_q = 8;
    p.heads_kv = 2;
    p.head_dim_qk = d;
    p.head_dim_v = dv;
    if (config_enumerate(&sp, dev, &p, FA4_FAMILY_SM100, why, sizeof why) != FA4_OK) {
        ok(0, "sm100 %s d%d/%d enumerates: %s", dtype_of(dtype)->name, d, dv, why);
        return 0;
    }
    for (i = 0; i < sp.count && !bad[0]; i++) {
        fa4_params k = params_of(&p);
        sm100_map m[4];

        fa4_config_format(&sp.configs[i], text, sizeof text);
        if (budget_defines(defs, sizeof defs, &p, &sp.configs[i], &sp.layouts[i]) < 0) {
            snprintf(bad, sizeof bad, "budget_defines overflow");
            break;
        }
        if (launch_sm100_describe(m, &p, &sp.configs[i], &k, why, sizeof why) != FA4_OK) {
            snprintf(bad, sizeof bad, "describe: %s", why);
            break;
        }
        check_maps(bad, sizeof bad, m, defs);
        rope += define_of(defs, "FA4_ROPE_CHUNKS") > 0;
        fused += sp.configs[i].fused_kv != 0;
        checked++;
    }
    /* every fused ring of dv < dqk is in rope mode (fp8's slot rule mostly
       splits those rings: see the fp8 d192/128 example of budget_sm100.c) */
    ok(sp.count > 0 && !bad[0] && rope == (d == dv ? 0 : fused)
       && (d == dv || dtype == FA4_DTYPE_FP8_E4M3 || rope > 0),
       "sm100 %s d%d/%d: the maps of all %d configs (%d in rope mode) match the kernel's "
       "expect_tx counts, boxes and chunk steps", dtype_of(dtype)->name, d, dv, sp.count, rope);
    if (bad[0])
        diag("  [%s]: %s", text, bad);
    config_space_free(&sp);
    return checked;
}

/*
** The decode mode's maps M (config bm 32) for problem P against what
** kernels/sm100/decode.cuh assumes with the constants DEFS (PG heads
** packed): Q over {dim, heads_q, seqlen_q, batch} with the box {64, H, T,
** 1} of decode_rows.h (H T <= 32 rows of a 4096 B Q box), the padded_dqk /
** 64 boxes of 128 H T B filling Q_FULL's expect_tx (PAD_DQK / 64 x H x T x
** 128); K and V boxes {64, bn, 1, 1} of bn x 128 B whose padded_dqk / 64
** (padded_dv / 64) fill a stage's expect_tx, DEC_K_BYTES (DEC_V_BYTES),
** which is the K (V) region over the stages; 128 B swizzle, 2-byte
** elements.  The first broken rule into BAD.
*/
static void check_decode_maps(char *bad, size_t n, const sm100_map m[4], const fa4_problem *p,
                              int pg, const char *defs)
{
    const int bn = define_of(defs, "FA4_BN"), pad_dqk = define_of(defs, "FA4_PAD_DQK");
    const int pad_dv = define_of(defs, "FA4_PAD_DV"), stages = define_of(defs, "FA4_STAGES");
    const int h = sm100_decode_heads(pg), t = sm100_decode_tokens(pg);
    const long long q_tx = (long long)pad_dqk / 64 * h * t * 128;
    const long long k_tx = (long long)pad_dqk / 64 * bn * 128, v_tx = (long long)pad_dv / 64 * bn * 128;
    const int dv = p->head_dim_v > 0 ? p->head_dim_v : p->head_dim_qk;
    int i;

    bad[0] = '\0';
    if (bn <= 0 || pad_dqk <= 0 || pad_dv <= 0 || stages < 2 || define_of(defs, "FA4_DECODE") != 1)
        snprintf(bad, n, "defines lack FA4_DECODE 1 / FA4_BN / FA4_PAD_* / FA4_STAGES");
    else if (m[0].box[0] != 64 || m[0].box[1] != h || m[0].box[2] != t || m[0].box[3] != 1 ||
             h * t > 32)
        snprintf(bad, n, "Q box {%d, %d, %d, %d}; the kernel's is {64, %d, %d, 1}", m[0].box[0],
                 m[0].box[1], m[0].box[2], m[0].box[3], h, t);
    else if (m[0].dims[0] != p->head_dim_qk || m[0].dims[1] != p->heads_q ||
             m[0].dims[2] != p->seqlen_q || m[0].dims[3] != p->batch ||
             m[0].strides[0] != 2LL * p->head_dim_qk ||
             m[0].strides[1] != 2LL * p->heads_q * p->head_dim_qk)
        snprintf(bad, n, "Q dims {%lld, %lld, %lld, %lld} strides {%lld, %lld}: want {dim, "
                 "heads_q, seqlen_q, batch}, {head, row} in bytes", m[0].dims[0], m[0].dims[1],
                 m[0].dims[2], m[0].dims[3], m[0].strides[0], m[0].strides[1]);
    else if (pad_dqk / 64 * launch_sm100_box_bytes(&m[0]) != q_tx || launch_sm100_box_bytes(&m[0]) > 4096)
        snprintf(bad, n, "Q_FULL expects %lld B, %d Q boxes bring %lld B", q_tx, pad_dqk / 64,
                 pad_dqk / 64 * launch_sm100_box_bytes(&m[0]));
    else if (m[1].box[1] != bn || m[2].box[1] != bn ||
             pad_dqk / 64 * launch_sm100_box_bytes(&m[1]) != k_tx ||
             pad_dv / 64 * launch_sm100_box_bytes(&m[2]) != v_tx ||
             define_of(defs, "FA4_SMEM_K_SIZE") != stages * k_tx ||
             define_of(defs, "FA4_SMEM_V_SIZE") != stages * v_tx)
        snprintf(bad, n, "K/V boxes of %d/%d keys, %lld/%lld B: a stage expects %lld/%lld B "
                 "(regions %d/%d B over %d stages)", m[1].box[1], m[2].box[1],
                 launch_sm100_box_bytes(&m[1]), launch_sm100_box_bytes(&m[2]), k_tx, v_tx,
                 define_of(defs, "FA4_SMEM_K_SIZE"), define_of(defs, "FA4_SMEM_V_SIZE"), stages);
    else if (m[1].dims[0] != p->head_dim_qk || m[2].dims[0] != dv ||
             m[1].dims[1] != p->seqlen_k || m[1].dims[2] != p->heads_kv)
        snprintf(bad, n, "K/V dims {%lld, %lld, %lld}/{%lld}: want {dim, seqlen_k, heads_kv}",
                 m[1].dims[0], m[1].dims[1], m[1].dims[2], m[2].dims[0]);
    for (i = 0; i < 3 && !bad[0]; i++)
        if (m[i].swizzle != 128 || m[i].esize != 2 || m[i].box[0] != 64)
            snprintf(bad, n, "%s: swizzle %d, %d-byte elements, box rows of %d", m[i].name,
                     m[i].swizzle, m[i].esize, m[i].box[0]);
}

/* Every enumerated decode-mode config of bf16 / fp16 head dims, groups 1,
** 3, 8 and 48, and 1 or 2 tokens where that is a decode shape: the maps
** and the grid against the kernel.  One ok line. */
static void check_decode_space(const device_limits *dev)
{
    static const int dims[][2] = { { 64, 64 }, { 96, 96 }, { 128, 128 }, { 192, 128 },
                                   { 256, 256 } };
    static const int groups[] = { 1, 3, 8, 48 };
    char why[512], defs[8192], bad[640] = "", text[256] = "";
    int d, g, tok, dt, i, checked = 0;

    for (dt = FA4_DTYPE_BF16; dt <= FA4_DTYPE_FP16 && !bad[0]; dt++)
        for (d = 0; d < 5 && !bad[0]; d++)
            for (g = 0; g < 4 && !bad[0]; g++)
                for (tok = 1; tok <= 2 && !bad[0]; tok++) {
                    fa4_problem p = FA4_PROBLEM_INIT;
                    config_space sp;
                    p.dtype = (fa4_dtype)dt;
                    p.batch = 3;
                    p.seqlen_q = tok;
                    p.seqlen_k = 3000;
                    p.heads_kv = 2;
                    p.heads_q = 2 * groups[g];
                    p.head_dim_qk = dims[d][0];
                    p.head_dim_v = dims[d][1];
                    if (!budget_sm100_decode_suits(&p))
                        continue;
                    if (config_enumerate(&sp, dev, &p, FA4_FAMILY_SM100, why, sizeof why) != FA4_OK) {
                        snprintf(bad, sizeof bad, "enumerate: %s", why);
                        break;
                    }
                    for (i = 0; i < sp.count && !bad[0]; i++) {
                        fa4_params k = params_of(&p);
                        sm100_map m[4];
                        unsigned grid[3];
                        const int pg = sp.configs[i].pack_gqa ? groups[g] : 1;
                        if (sp.configs[i].bm != 32)
                            continue;
                        fa4_config_format(&sp.configs[i], text, sizeof text);
                        if (budget_defines(defs, sizeof defs, &p, &sp.configs[i], &sp.layouts[i]) < 0 ||
                            launch_sm100_describe(m, &p, &sp.configs[i], &k, why, sizeof why) != FA4_OK) {
                            snprintf(bad, sizeof bad, "defines or describe: %s", why);
                            break;
                        }
                        check_decode_maps(bad, sizeof bad, m, &p, pg, defs);
                        launch_sm100_decode_grid(grid, &k, &sp.configs[i], 3);
                        if (!bad[0] && (grid[0] != (unsigned)sm100_decode_m_tiles(tok, pg) ||
                                        grid[1] != (unsigned)(3 * p.heads_q / pg) || grid[2] != 3))
                            snprintf(bad, sizeof bad, "grid %u x %u x %u for %d tokens, %d heads "
                                     "packed, 3 splits", grid[0], grid[1], grid[2], tok, pg);
                        if (bad[0])
                            diag("  %s d%d/%d group %d, %d token(s) [%s]: %s",
                                 dtype_of(p.dtype)->name, dims[d][0], dims[d][1], groups[g], tok,
                                 text, bad);
                        checked++;
                    }
                    config_space_free(&sp);
                }
    ok(checked > 0 && !bad[0], "decode mode: the maps of all %d enumerated decode configs (bf16 "
       "and fp16 d64..256 and 192/128, groups 1, 3, 8, 48) match the kernel's expect_tx, Q box "
       "{64, H, T, 1} and the grid (m_tiles, heads x splits, batch)", checked);
}

/* The text of embedded kernel file NAME, or "". */
static const char *kernel_text(const char *name)
{
    int i;

    for (i = 0; i < embedded_kernels_count; i++)
        if (!strcmp(embedded_kernels[i].name, name))
            return embedded_kernels[i].text;
    return "";
}

/* ------------------------------------------------ a stand-in driver */

static struct {
    int encodes, launches, ex_launches, fail_encode;
    unsigned cluster[3];          /* cuLaunchKernelEx's cluster dimension attribute */
    CUtensorMapDataType type[4];
    cuuint32_t rank[4];
    cuuint64_t dims[4][4], strides[4][3];
    cuuint32_t box[4][4], estride[4][4];
    CUtensorMapSwizzle swizzle[4];
    CUtensorMapInterleave interleave[4];
    CUtensorMapFloatOOBfill fill[4];
    void *addr[4];
    unsigned grid[3], block[3], smem;
    unsigned grid0[3], block0;    /* the first launch's (a split call's fa4_fwd) */
    fa4_params params;
    unsigned long long tags[4];   /* opaque[0] of the four map arguments */
    fa4_serving serving;          /* a decode-mode fa4_fwd's fifth argument */
} rec;

static CUresult fake_push(CUcontext c) { (void)c; return CUDA_SUCCESS; }
static CUresult fake_pop(CUcontext *c) { *c = NULL; return CUDA_SUCCESS; }
static CUresult fake_name(CUresult r, const char **s) { (void)r; *s = "CUDA_ERROR_INVALID_VALUE"; return CUDA_SUCCESS; }
static CUresult fake_string(CUresult r, const char **s) { (void)r; *s = "invalid argument"; return CUDA_SUCCESS; }

static CUresult fake_encode(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
                            void *addr, const cuuint64_t *dims, const cuuint64_t *strides,
                            const cuuint32_t *box, const cuuint32_t *estride,
                            CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                            CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill fill)
{
    int i = rec.encodes++ % 4, j;

    (void)l2;
    if (rec.fail_encode)
        return CUDA_ERROR_INVALID_VALUE;
    rec.type[i] = type;
    rec.rank[i] = rank;
    rec.addr[i] = addr;
    for (j = 0; j < 4; j++) {
        rec.dims[i][j] = dims[j];
        rec.box[i][j] = box[j];
        rec.estride[i][j] = estride[j];
    }
    for (j = 0; j < 3; j++)
        rec.strides[i][j] = strides[j];
    rec.swizzle[i] = sw;
    rec.interleave[i] = il;
    rec.fill[i] = fill;
    memcpy(map, (unsigned long long[1]){ 0xA100ULL + (unsigned)i }, 8);
    return CUDA_SUCCESS;
}

static CUresult fake_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned smem, CUstream s, void **args,
                            void **extra)
{
    int i;

    (void)f; (void)s; (void)extra;
    rec.launches++;
    rec.grid[0] = gx; rec.grid[1] = gy; rec.grid[2] = gz;
    rec.block[0] = bx; rec.block[1] = by; rec.block[2] = bz;
    rec.smem = smem;
    memcpy(&rec.params, args[0], sizeof rec.params);
    if (bx == 128) {                /* fa4_combine: (fa4_params, fa4_serving) */
        memcpy(&rec.serving, args[1], sizeof rec.serving);
        return CUDA_SUCCESS;
    }
    if (rec.launches == 1) {
        memcpy(rec.grid0, rec.grid, sizeof rec.grid0);
        rec.block0 = bx;
    }
    for (i = 0; i < 4; i++)
        memcpy(&rec.tags[i], args[i + 1], 8);
    if (bx == 192)                  /* the decode mode: maps Q, K, V, then the block */
        memcpy(&rec.serving, args[4], sizeof rec.serving);
    return CUDA_SUCCESS;
}

static CUresult fake_launch_ex(const CUlaunchConfig *lc, CUfunction f, void **args,
                               void **extra)
{
    unsigned i;

    rec.ex_launches++;
    for (i = 0; i < lc->numAttrs; i++)
        if (lc->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
            rec.cluster[0] = lc->attrs[i].value.clusterDim.x;
            rec.cluster[1] = lc->attrs[i].value.clusterDim.y;
            rec.cluster[2] = lc->attrs[i].value.clusterDim.z;
        }
    rec.launches--;                 /* counted once, as an Ex launch */
    return fake_launch(f, lc->gridDimX, lc->gridDimY, lc->gridDimZ, lc->blockDimX,
                       lc->blockDimY, lc->blockDimZ, lc->sharedMemBytes, lc->hStream, args,
                       extra);
}

/* A plan of P on CTX with the sm100 default, its function a stand-in. */
static fa4_plan *fake_plan(fa4_context *ctx, const fa4_problem *p)
{
    fa4_plan *plan = calloc(1, sizeof *plan);
    char why[512];
    int i;

    if (!plan)
        return NULL;
    plan->ctx = ctx;
    if (problem_resolve(&plan->problem, p, why, sizeof why) != FA4_OK ||
        config_default(&plan->config, &ctx->limits, &plan->problem, FA4_FAMILY_SM100, why,
                       sizeof why) != FA4_OK ||
        budget_fit(&plan->layout, &ctx->limits, &plan->problem, &plan->config, why,
                   sizeof why) != FA4_OK) {
        diag("fake plan: %s", why);
        free(plan);
        return NULL;
    }
    for (i = 0; i < 4; i++)
        plan->default_strides[i] = 1;
    plan->source = FA4_SOURCE_HEURISTIC;
    plan->fn = (CUfunction)(uintptr_t)0x1234;
    return plan;
}

/* T's Q, K, V, O and LSE at distinct aligned stand-in addresses. */
static void stand_in_tensors(fa4_tensors *t)
{
    t->q = (void *)(uintptr_t)0x7f0000000000ULL;
    t->k = (void *)(uintptr_t)0x7f1000000000ULL;
    t->v = (void *)(uintptr_t)0x7f2000000000ULL;
    t->o = (void *)(uintptr_t)0x7f3000000000ULL;
    t->lse = (float *)(uintptr_t)0x7f4000000000ULL;
}

/* fa4_forward() on a decode-mode plan through the stand-in driver: three
** maps, 192 threads, one launch without a workspace (one split), and with
** the plan's split workspace fa4_fwd over splits then fa4_combine. */
static void check_decode_forward(fa4_context *ctx)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    fa4_tensors t = FA4_TENSORS_INIT;
    fa4_plan *plan;
    fa4_status st;
    size_t o_bytes;
    int s;

    p.batch = 2; p.seqlen_q = 1; p.seqlen_k = 4096; p.heads_q = 8; p.heads_kv = 2;
    p.head_dim_qk = 128; p.return_lse = 1;
    if (!ok((plan = fake_plan(ctx, &p)) != NULL && plan->config.bm == 32 &&
            plan->config.pack_gqa == 1 && plan->config.splits == 0,
            "a decode step (1 token, 8/2 heads, 4096 keys) plans the sm100 decode mode"))
        return;
    stand_in_tensors(&t);
    memset(&rec, 0, sizeof rec);
    st = fa4_forward(plan, &t, NULL);
    ok(st == FA4_OK && rec.encodes == 3 && rec.launches == 1 && rec.rank[0] == 4 &&
       rec.dims[0][0] == 128 && rec.dims[0][1] == 8 && rec.dims[0][2] == 1 &&
       rec.dims[0][3] == 2 && rec.strides[0][0] == 128 * 2 && rec.strides[0][1] == 8 * 128 * 2 &&
       rec.box[0][0] == 64 && rec.box[0][1] == 4 && rec.box[0][2] == 8 && rec.box[0][3] == 1 &&
       (int)rec.box[1][1] == plan->config.bn && rec.grid[0] == 1 && rec.grid[1] == 2 &&
       rec.grid[2] == 2 && rec.block[0] == 192 && (int)rec.smem == plan->layout.smem_bytes &&
       rec.serving.num_splits == 1,
       "without a workspace: Q {128, 8 heads, 1 token, 2} in boxes {64, 4 heads, 8 tokens, 1}, "
       "one launch (1, 2, 2) of 192 threads, one split (%s)", st ? fa4_context_errmsg(ctx) : "ok");

    /* the plan's split workspace: the splits fill a wave, then fa4_combine */
    plan->workspace_bytes = launch_split_workspace(plan);
    plan->workspace = 0x7f5000000000ULL;
    memset(&rec, 0, sizeof rec);
    st = fa4_forward(plan, &t, NULL);
    s = rec.serving.num_splits;
    o_bytes = (size_t)s * 8 * 2 * 128 * 4;
    ok(st == FA4_OK && plan->workspace_bytes > 0 && rec.launches == 2 && s > 1 &&
       s <= 4096 / plan->config.bn && rec.grid0[0] == 1 && rec.grid0[1] == 2u * (unsigned)s &&
       rec.grid0[2] == 2 && rec.block0 == 192 && rec.grid[0] == 1 && rec.grid[1] == 8 &&
       rec.grid[2] == 2 && rec.block[0] == 128 && rec.serving.rows_cap == 2 &&
       rec.serving.o_partial == 0x7f5000000000ULL &&
       rec.serving.lse_partial == 0x7f5000000000ULL + (o_bytes + 15) / 16 * 16,
       "with the plan's %zu B workspace: fa4_fwd over %d splits (grid 1 x %d x 2), partial O "
       "then LSE in the workspace (the sm80 layout), then fa4_combine (1, 8, 2) of 128 "
       "threads (%s)", plan->workspace_bytes, s, 2 * s, st ? fa4_context_errmsg(ctx) : "ok");
    plan->workspace = 0;
    fa4_plan_destroy(plan);
}

/* fa4_forward() on an sm100 plan through the stand-in driver. */
static void check_forward(void)
{
    static cuda_api fake;
    fa4_context_options o = FA4_CONTEXT_OPTIONS_INIT;
    fa4_context *ctx = NULL;
    fa4_problem p = FA4_PROBLEM_INIT;
    fa4_tensors t = FA4_TENSORS_INIT;
    fa4_plan *plan;
    fa4_status st;
    int bf16 = dtype_of(FA4_DTYPE_BF16)->tma_type;

    o.plan_only = 1;
    o.arch = "sm_100a";
    o.no_database = 1;
    if (!ok(fa4_context_create(&ctx, 0, &o) == FA4_OK, "a plan_only sm_100a context"))
        return;
    memset(&fake, 0, sizeof fake);
    fake.cuCtxPushCurrent = fake_push;
    fake.cuCtxPopCurrent = fake_pop;
    fake.cuTensorMapEncodeTiled = fake_encode;
    fake.cuLaunchKernel = fake_launch;
    fake.cuLaunchKernelEx = fake_launch_ex;
    fake.cuGetErrorName = fake_name;
    fake.cuGetErrorString = fake_string;
    ctx->cu = &fake;     /* as if a B200 were there */

    p.batch = 2; p.seqlen_q = 300; p.seqlen_k = 500; p.heads_q = 8; p.heads_kv = 2;
    p.head_dim_qk = 128; p.causal = 1; p.return_lse = 1;
    if (!ok((plan = fake_plan(ctx, &p)) != NULL, "an sm100 plan of bf16 d128, 8/2 heads, causal"))
        goto out;
    stand_in_tensors(&t);
    memset(&rec, 0, sizeof rec);
    st = fa4_forward(plan, &t, NULL);
    is_int(st, FA4_OK, "fa4_forward launches an sm100 plan (%s)", st ? fa4_context_errmsg(ctx) : "ok");
    ok(rec.encodes == 4 && rec.launches == 1 && rec.ex_launches == 0,
       "four maps encoded, one launch queued, no cluster");
    ok(rec.rank[0] == 4 && (int)rec.type[0] == bf16 && rec.addr[0] == t.q &&
       rec.dims[0][0] == 128 && rec.dims[0][1] == 300 && rec.dims[0][2] == 8 && rec.dims[0][3] == 2 &&
       rec.strides[0][0] == 8 * 128 * 2 && rec.strides[0][1] == 128 * 2 &&
       rec.strides[0][2] == 300 * 8 * 128 * 2 &&
       rec.box[0][0] == 64 && rec.box[0][1] == 128 && rec.box[0][2] == 1 && rec.box[0][3] == 1,
       "Q: dims {128, 300, 8, 2}, strides {row, head, batch} in bytes, box {64, 128, 1, 1}");
    ok(rec.addr[1] == t.k && rec.addr[2] == t.v &&
       rec.dims[1][1] == 500 && rec.dims[1][2] == 2 && rec.dims[2][1] == 500 &&
       rec.strides[1][0] == 2 * 128 * 2 && rec.strides[1][2] == 500 * 2 * 128 * 2 &&
       rec.box[1][0] == 64 && (int)rec.box[1][1] == plan->config.bn &&
       (int)rec.box[2][1] == plan->config.bn,
       "K and V: dims {128, 500, 2, 2}, box {64, bn = %d, 1, 1}", plan->config.bn);
    ok(rec.swizzle[0] == CU_TENSOR_MAP_SWIZZLE_128B && rec.swizzle[1] == CU_TENSOR_MAP_SWIZZLE_128B &&
       rec.swizzle[2] == CU_TENSOR_MAP_SWIZZLE_128B &&
       rec.interleave[0] == CU_TENSOR_MAP_INTERLEAVE_NONE &&
       rec.fill[1] == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE && rec.estride[2][0] == 1 &&
       rec.estride[2][3] == 1,
       "128 B swizzle, no interleave, zero fill out of bounds, element strides 1");
    ok(rec.grid[0] == 2 && rec.grid[1] == 8 && rec.grid[2] == 2 && rec.block[0] == 512 &&
       rec.block[1] == 1 && rec.block[2] == 1 && (int)rec.smem == plan->layout.smem_bytes,
       "grid (2, 8, 2) of 512 threads with the layout's %d B of shared memory",
       plan->layout.smem_bytes);
    ok(rec.params.m_blocks == 2 && rec.params.group == 4 && rec.params.seqlen_k == 500 &&
       rec.params.window_right == 0 && rec.params.lse == 0x7f4000000000ULL,
       "the argument block: 2 query blocks of 256, group 4, causal, LSE");
    ok(rec.params.q_token_scale == 0 && rec.params.k_token_scale == 0,
       "without token_scales the scale pointers stay 0");
    ok(rec.tags[0] == 0xA100 && rec.tags[1] == 0xA101 && rec.tags[2] == 0xA102 &&
       rec.tags[3] == 0xA103, "fa4_fwd gets the Q, K, V and O maps in order");
    ok(rec.addr[3] == t.o && rec.dims[3][0] == 128 && rec.dims[3][1] == 300 &&
       rec.dims[3][2] == 8 && rec.dims[3][3] == 2 && rec.strides[3][0] == 8 * 128 * 2 &&
       rec.strides[3][1] == 128 * 2 && rec.strides[3][2] == 300 * 8 * 128 * 2 &&
       rec.box[3][0] == 64 && rec.box[3][1] == 32 && rec.box[3][2] == 1 &&
       rec.swizzle[3] == CU_TENSOR_MAP_SWIZZLE_128B,
       "O: dims {128, 300, 8, 2}, strides {row, head, batch} in bytes, box {64, 32, 1, 1}, "
       "128 B swizzle (the epilogue's TMA store)");

    /* this call's sizes */
    t.seqlen_q = 17; t.seqlen_k = 33; t.batch = 1;
    memset(&rec, 0, sizeof rec);
    st = fa4_forward(plan, &t, NULL);
    ok(st == FA4_OK && rec.dims[0][1] == 17 && rec.dims[0][3] == 1 && rec.dims[1][1] == 33 &&
       rec.strides[0][2] == 17 * 8 * 128 * 2 && rec.grid[0] == 1 && rec.grid[2] == 1,
       "a call with seqlen_q 17, seqlen_k 33, batch 1 maps and launches those sizes");
    t.seqlen_q = t.seqlen_k = t.batch = 0;

    /* the driver refuses a map */
    rec.fail_encode = 1;
    st = fa4_forward(plan, &t, NULL);
    ok(st == FA4_ECUDA && strstr(fa4_context_errmsg(ctx), "cuTensorMapEncodeTiled(q: dims 128 300 8 2"),
       "an encode failure is FA4_ECUDA naming the map (%s)", fa4_context_errmsg(ctx));
    rec.fail_encode = 0;
    fa4_plan_destroy(plan);

    /* d256 runs 1Q: CTAs of 128 query rows */
    p.head_dim_qk = 256;
    if ((plan = fake_plan(ctx, &p)) != NULL) {
        memset(&rec, 0, sizeof rec);
        st = fa4_forward(plan, &t, NULL);
        ok(st == FA4_OK && plan->config.q_tiles == 1 && plan->config.bm == 128 &&
           rec.grid[0] == 3 && rec.grid[1] == 8 && rec.grid[2] == 2 && rec.box[0][1] == 128 &&
           rec.params.m_blocks == 3 && (int)rec.smem == plan->layout.smem_bytes,
           "a d256 plan is 1Q: grid (3, 8, 2) for 300 query rows, Q box 128 rows, %d B of "
           "shared memory (%s)", plan->layout.smem_bytes, st ? fa4_context_errmsg(ctx) : "ok");
        fa4_plan_destroy(plan);
    } else {
        ok(0, "an sm100 plan of bf16 d256");
    }
    /* a CTA pair (cluster 2) at d256, 1Q: 300 rows are 3 blocks of 128,
       launched as 4 CTAs in clusters of 2 x 1 x 1; each CTA loads K boxes
       of bn / 2 keys and V boxes of bn keys (half of V's depth boxes) */
    if ((plan = fake_plan(ctx, &p)) != NULL) {
        config_space sp;
        char w[512];
        int i;

        if (config_enumerate(&sp, &ctx->limits, &plan->problem, FA4_FAMILY_SM100, w,
                             sizeof w) == FA4_OK)
            for (i = 0; i < sp.count; i++)
                if (sp.configs[i].cluster == 2) {
                    plan->config = sp.configs[i];
                    plan->layout = sp.layouts[i];
                    break;
                }
        config_space_free(&sp);
        memset(&rec, 0, sizeof rec);
        st = fa4_forward(plan, &t, NULL);
        ok(st == FA4_OK && plan->config.cluster == 2 && rec.ex_launches == 1 &&
           rec.launches == 0 && rec.cluster[0] == 2 && rec.cluster[1] == 1 &&
           rec.cluster[2] == 1 && rec.grid[0] == 4 && rec.grid[1] == 8 && rec.grid[2] == 2 &&
           rec.block[0] == 512 && rec.params.m_blocks == 3 &&
           (int)rec.smem == plan->layout.smem_bytes,
           "a CTA-pair plan launches through cuLaunchKernelEx in clusters of 2 x 1 x 1: grid "
           "(4, 8, 2) for 3 query blocks of 128, %d B of shared memory (%s)",
           plan->layout.smem_bytes, st ? fa4_context_errmsg(ctx) : "ok");
        ok(st == FA4_OK && (int)rec.box[1][1] * 2 == plan->config.bn &&
           (int)rec.box[2][1] == plan->config.bn && rec.box[1][0] == 64 && rec.box[0][1] == 128,
           "its K box is {64, bn / 2 = %u}, V's {64, bn = %u}, Q's 128 rows", rec.box[1][1],
           rec.box[2][1]);
        fake.cuLaunchKernelEx = NULL;
        st = fa4_forward(plan, &t, NULL);
        ok(st == FA4_ENOTSUP && strstr(fa4_context_errmsg(ctx), "cuLaunchKernelEx unavailable"),
           "without cuLaunchKernelEx a pair plan is FA4_ENOTSUP (%s)", fa4_context_errmsg(ctx));
        fake.cuLaunchKernelEx = fake_launch_ex;
        fa4_plan_destroy(plan);
    } else {
        ok(0, "an sm100 plan of bf16 d256 for the pair");
    }
    p.head_dim_qk = 128;

    /* the caller's strides: Q rows padded to 1032 elements, V heads apart */
    p.q_strides[0] = 300 * 1032; p.q_strides[1] = 1032; p.q_strides[2] = 128;
    p.v_strides[0] = 2 * 500 * 128; p.v_strides[1] = 128; p.v_strides[2] = 500 * 128;
    if ((plan = fake_plan(ctx, &p)) != NULL) {
        plan->default_strides[0] = plan->default_strides[2] = 0;
        memset(&rec, 0, sizeof rec);
        st = fa4_forward(plan, &t, NULL);
        ok(st == FA4_OK && rec.strides[0][0] == 1032 * 2 && rec.strides[0][2] == 300 * 1032 * 2 &&
           rec.strides[2][0] == 128 * 2 && rec.strides[2][1] == 500 * 128 * 2 &&
           rec.strides[2][2] == 2 * 500 * 128 * 2,
           "the problem's strides reach the maps: Q rows 2064 B apart, V as [batch, head, "
           "seq, dim] (%s)", st ? fa4_context_errmsg(ctx) : "ok");
        fa4_plan_destroy(plan);
    } else {
        ok(0, "plan with the caller's strides");
    }
    /* per-token scales: both pointers reach the argument block; a missing
       or misaligned one (or a caller's struct that predates them) is
       refused before anything is encoded */
    p.q_strides[0] = p.q_strides[1] = p.q_strides[2] = 0;
    p.v_strides[0] = p.v_strides[1] = p.v_strides[2] = 0;
    p.token_scales = 1;
    if ((plan = fake_plan(ctx, &p)) != NULL) {
        fa4_tensors s = t;
        s.q_token_scale = (const float *)(uintptr_t)0x7f5000000000ULL;
        s.k_token_scale = (const float *)(uintptr_t)0x7f6000000000ULL;
        memset(&rec, 0, sizeof rec);
        st = fa4_forward(plan, &s, NULL);
        ok(st == FA4_OK && rec.params.q_token_scale == 0x7f5000000000ULL &&
           rec.params.k_token_scale == 0x7f6000000000ULL && rec.encodes == 4 &&
           (int)rec.smem == plan->layout.smem_bytes &&
           budget_region_find(&plan->layout, "KSCALE")->size > 0,
           "a token_scales plan passes q_token_scale and k_token_scale in the argument block, "
           "the same four maps, %d B of shared memory with its scale regions (%s)",
           plan->layout.smem_bytes, st ? fa4_context_errmsg(ctx) : "ok");
        s.k_token_scale = (const float *)(uintptr_t)0x7f6000000002ULL;
        memset(&rec, 0, sizeof rec);
        st = fa4_forward(plan, &s, NULL);
        ok(st == FA4_EINVAL && rec.encodes == 0 && rec.launches == 0 &&
           strstr(fa4_context_errmsg(ctx), "tensors.k_token_scale is NULL or not 4-byte aligned"),
           "a misaligned k_token_scale is FA4_EINVAL, nothing launched (%s)",
           fa4_context_errmsg(ctx));
        s.k_token_scale = (const float *)(uintptr_t)0x7f6000000000ULL;
        s.q_token_scale = NULL;
        st = fa4_forward(plan, &s, NULL);
        ok(st == FA4_EINVAL &&
           strstr(fa4_context_errmsg(ctx), "problem.token_scales=1 but tensors.q_token_scale"),
           "a NULL q_token_scale is FA4_EINVAL (%s)", fa4_context_errmsg(ctx));
        s.q_token_scale = (const float *)(uintptr_t)0x7f5000000000ULL;
        s.struct_size = offsetof(fa4_tensors, q_token_scale);
        st = fa4_forward(plan, &s, NULL);
        ok(st == FA4_EINVAL && strstr(fa4_context_errmsg(ctx), "q_token_scale"),
           "a tensors struct that predates the scale pointers is FA4_EINVAL for a token_scales "
           "plan (%s)", fa4_context_errmsg(ctx));
        fa4_plan_destroy(plan);
    } else {
        ok(0, "an sm100 plan with per-token scales");
    }
    p.token_scales = 0;

    /* fp8: the heuristic takes sm100 (opted in); no workspace; a launch maps
       Q, K, V as bytes and O as bf16, all 64 B swizzled, and passes the
       descale pointers */
    {
        fa4_problem f = FA4_PROBLEM_INIT;
        fa4_plan *fp = NULL;
        fa4_config got = FA4_CONFIG_INIT;
        size_t ws = 1;
        int u8 = CU_TENSOR_MAP_DATA_TYPE_UINT8;

        f.dtype = FA4_DTYPE_FP8_E4M3; f.batch = 1; f.seqlen_q = f.seqlen_k = 1024;
        f.heads_q = f.heads_kv = 4; f.head_dim_qk = 128;
        st = fa4_plan_create(&fp, ctx, &f, NULL);
        ok(st == FA4_OK && fa4_plan_config(fp, &got, NULL) == FA4_OK &&
           got.family == FA4_FAMILY_SM100 && got.swizzle == 64 &&
           fa4_plan_workspace_size(fp, &ws) == FA4_OK && ws == 0,
           "an fp8 problem gets an sm100 plan from the heuristic, 64 B swizzle, no "
           "workspace (V is not transposed) (%s)", st ? fa4_context_errmsg(ctx) : "ok");
        fa4_plan_destroy(fp);

        p.dtype = FA4_DTYPE_FP8_E4M3;
        p.head_dim_qk = 128;
        memset(p.q_strides, 0, sizeof p.q_strides);   /* contiguous again */
        memset(p.v_strides, 0, sizeof p.v_strides);
        if ((plan = fake_plan(ctx, &p)) != NULL) {
            t.q_descale = (const float *)(uintptr_t)0x7f5000000000ULL;
            t.k_descale = (const float *)(uintptr_t)0x7f5000000100ULL;
            t.v_descale = (const float *)(uintptr_t)0x7f5000000200ULL;
            memset(&rec, 0, sizeof rec);
            st = fa4_forward(plan, &t, NULL);
            ok(st == FA4_OK && rec.encodes == 4 && rec.launches == 1 &&
               (int)rec.type[0] == u8 && (int)rec.type[1] == u8 && (int)rec.type[2] == u8 &&
               (int)rec.type[3] == bf16 && rec.box[0][0] == 64 && rec.box[0][1] == 128 &&
               rec.box[1][0] == 64 && (int)rec.box[1][1] == plan->config.bn &&
               rec.box[2][0] == 64 && rec.box[3][0] == 32 && rec.box[3][1] == 32 &&
               rec.swizzle[0] == CU_TENSOR_MAP_SWIZZLE_64B &&
               rec.swizzle[2] == CU_TENSOR_MAP_SWIZZLE_64B &&
               rec.swizzle[3] == CU_TENSOR_MAP_SWIZZLE_64B &&
               rec.strides[0][0] == 8 * 128 && rec.strides[3][0] == 8 * 128 * 2 &&
               (int)rec.smem == plan->layout.smem_bytes,
               "an fp8 launch: Q, K, V UINT8 boxes {64, 128 / bn}, O bf16 boxes {32, 32}, "
               "64 B swizzle, byte strides of each type, %d B of shared memory (%s)",
               plan->layout.smem_bytes, st ? fa4_context_errmsg(ctx) : "ok");
            ok(st == FA4_OK && rec.params.q_descale == 0x7f5000000000ULL &&
               rec.params.k_descale == 0x7f5000000100ULL &&
               rec.params.v_descale == 0x7f5000000200ULL,
               "the fp8 launch passes the q, k and v descale pointers in the argument block");
            t.q_descale = t.k_descale = t.v_descale = NULL;
            fa4_plan_destroy(plan);
        } else {
            ok(0, "an sm100 plan of fp8 d128");
        }
        /* fp8 with per-token scales: both kinds of factor reach the kernel */
        p.token_scales = 1;
        if ((plan = fake_plan(ctx, &p)) != NULL) {
            fa4_tensors s = t;
            s.q_descale = (const float *)(uintptr_t)0x7f5000000000ULL;
            s.k_descale = (const float *)(uintptr_t)0x7f5000000100ULL;
            s.v_descale = (const float *)(uintptr_t)0x7f5000000200ULL;
            s.q_token_scale = (const float *)(uintptr_t)0x7f5100000000ULL;
            s.k_token_scale = (const float *)(uintptr_t)0x7f6100000000ULL;
            memset(&rec, 0, sizeof rec);
            st = fa4_forward(plan, &s, NULL);
            ok(st == FA4_OK && rec.launches == 1 && (int)rec.type[0] == u8 &&
               rec.params.q_descale == 0x7f5000000000ULL &&
               rec.params.k_descale == 0x7f5000000100ULL &&
               rec.params.v_descale == 0x7f5000000200ULL &&
               rec.params.q_token_scale == 0x7f5100000000ULL &&
               rec.params.k_token_scale == 0x7f6100000000ULL &&
               budget_region_find(&plan->layout, "KSCALE")->size > 0 &&
               (int)rec.smem == plan->layout.smem_bytes,
               "an fp8 token_scales launch passes the descales and the per-token scale "
               "pointers, %d B of shared memory with its scale regions (%s)",
               plan->layout.smem_bytes, st ? fa4_context_errmsg(ctx) : "ok");
            fa4_plan_destroy(plan);
        } else {
            ok(0, "an sm100 plan of fp8 d128 with per-token scales");
        }
        p.token_scales = 0;
        p.dtype = FA4_DTYPE_BF16;
    }
    check_decode_forward(ctx);
out:
    ctx->cu = NULL;
    fa4_context_destroy(ctx);
}

int main(void)
{
    static const int dims[][2] = { { 64, 64 }, { 96, 96 }, { 128, 128 }, { 192, 128 }, { 128, 64 },
                                   { 256, 256 }, { 256, 128 } };
    const char *kc = kernel_text("sm100/kernel.cuh"), *ml = kernel_text("sm100/mainloop.cuh");
    const char *cc = kernel_text("sm100/correction.cuh");
    device_limits dev;
    fa4_problem p = FA4_PROBLEM_INIT;
    fa4_config cfg;
    fa4_params k;
    sm100_map m[4];
    char why[512];
    int i, dt, checked = 0;

    plan_lazy();
    if (device_limits_for_arch(&dev, "sm_100a", why, sizeof why) != FA4_OK)
        skip_all("no sm_100a limits table (%s)", why);

    /* The byte counts and coordinates check_maps() mirrors are the kernel's. */
    ok(strstr(kc, "#define SM100_ROW_BYTES FA4_SWIZZLE ") &&
       strstr(kc, "#define SM100_SW_ELEMS (SM100_ROW_BYTES / SM100_ESIZE)\n") &&
       strstr(kc, "#if FA4_DTYPE == 3\n#define SM100_FP8 1\n#define SM100_ESIZE 1\n#else\n"
                  "#define SM100_FP8 0\n#define SM100_ESIZE 2\n#endif\n") &&
       strstr(kc, "#define SM100_K_ROWS (FA4_BN / FA4_CTA_GROUP) ") &&
       strstr(kc, "#define SM100_V_COLS (FA4_PAD_DV / FA4_CTA_GROUP) ") &&
       strstr(kc, "#define SM100_Q_CHUNK_BYTES (128 * SM100_ROW_BYTES)\n") &&
       strstr(kc, "#define SM100_K_CHUNK_BYTES (SM100_K_ROWS * SM100_ROW_BYTES)\n") &&
       strstr(kc, "#define SM100_V_CHUNK_BYTES (FA4_BN * SM100_ROW_BYTES)\n") &&
       strstr(kc, "#define SM100_Q_TILE_BYTES (128 * FA4_PAD_DQK * SM100_ESIZE)\n") &&
       strstr(kc, "#define SM100_K_TILE_BYTES (SM100_K_ROWS * FA4_PAD_DQK * SM100_ESIZE)\n") &&
       strstr(kc, "#define SM100_V_TILE_BYTES (FA4_BN * SM100_V_COLS * SM100_ESIZE)\n") &&
       strstr(kc, "#define SM100_V_CHUNKS (SM100_V_COLS / SM100_SW_ELEMS) "),
       "kernel.cuh's tile and chunk byte counts are the ones this test checks the maps against");
    ok(strstr(kc, "#define SM100_K_SLOT_CHUNKS (SM100_DQK_CHUNKS - FA4_ROPE_CHUNKS)\n") &&
       strstr(kc, "#define SM100_ROPE_BUFS (FA4_ROPE_CHUNKS ? (FA4_KV_SLOTS + 1) / 2 : 0)\n") &&
       strstr(kc, "#define SM100_ROPE_BUF_BYTES (FA4_ROPE_CHUNKS * SM100_K_CHUNK_BYTES)\n") &&
       strstr(kc, "return c.smem + FA4_SMEM_ROPE_OFF + (u32)(j % SM100_ROPE_BUFS) * "
              "SM100_ROPE_BUF_BYTES") &&
       strstr(ml, "tma_load_4d(k_chunk(c, j, ch), tk, lead_bar(full),"),
       "rope mode: kernel.cuh puts K's depth boxes past the slot's in ROPE buffer j %% "
       "ceil(slots / 2), and mainloop.cuh loads every K box through k_chunk() on K_j's "
       "barrier, as checked");
    ok(strstr(ml, "arm_full(c, bar, SM100_Q_CHUNK_BYTES);") &&
       strstr(ml, "mbarrier_arrive_expect_tx(bar, bytes * FA4_CTA_GROUP);") &&
       strstr(ml, "if (c.rank == 0)") &&
       strstr(ml, "tq, lead_bar(bar), ch * SM100_SW_ELEMS, c.m0 + 128, c.head, c.batch);") &&
       strstr(ml, "u32 bytes = FA4_K_CHUNKS > 1 ? SM100_K_CHUNK_BYTES : SM100_K_TILE_BYTES;") &&
       strstr(ml, "bytes += SM100_Q_TILE_BYTES;") &&
       strstr(ml, "ch * SM100_SW_ELEMS, key0 + c.rank * SM100_K_ROWS, c.kv_head, c.batch);") &&
       strstr(ml, "tq, lead_bar(full), qc * SM100_SW_ELEMS, c.m0, c.head, c.batch);") &&
       strstr(ml, "arm_full(c, v_full(c, j), SM100_V_TILE_BYTES);") &&
       strstr(ml, "for (ch = 0; ch < SM100_V_CHUNKS; ch++)") &&
       strstr(ml, "(c.rank * SM100_V_CHUNKS + ch) * SM100_SW_ELEMS, key0, c.kv_head,"),
       "mainloop.cuh's expect_tx counts (the leader arming the pair's) and {dim, seq, head, "
       "batch} coordinates (a pair CTA's K rows and V depth boxes) are as checked");
    ok(strstr(cc, "tma_store_4d(tm_o, stage + (u32)ch * SM100_Q_CHUNK_BYTES") &&
       strstr(cc, "+ (u32)(wq * 32) * SM100_ROW_BYTES,") &&
       strstr(cc, "ch * SM100_SW_ELEMS, c.m0 + i * 128 + wq * 32, c.head, c.batch);") &&
       strstr(cc, "for (ch = 0; ch < SM100_DV_CHUNKS; ch++)") &&
       strstr(cc, "const u32 stage = c.smem + FA4_SMEM_Q_OFF + (u32)i * SM100_Q_TILE_BYTES;"),
       "correction.cuh stores O per warp as {64, 32} boxes from tile i's Q region at "
       "(64 ch, m0 + 128 i + 32 w, head, batch), as checked");
    ok(strstr(cc, "#define SM100_O_BOX_COLS (SM100_ROW_BYTES / 2) ") &&
       strstr(cc, "const int slot = b % SM100_DQK_CHUNKS;") &&
       strstr(cc, "tma_store_4d(tm_o, stage + (u32)(k % SM100_DQK_CHUNKS) * SM100_Q_CHUNK_BYTES,") &&
       strstr(cc, "k * SM100_O_BOX_COLS, c.m0 + i * 128 + wq * 32, c.head,") &&
       strstr(cc, "+ (u32)(wq * 32) * SM100_ROW_BYTES;"),
       "correction.cuh stores fp8's 16-bit O per warp as {swizzle / 2, 32} boxes through "
       "its rows of tile i's Q chunks at (swizzle / 2 b, m0 + 128 i + 32 w, head, batch), "
       "as checked");
    {
        const char *sc = kernel_text("sm100/scales.cuh");
        ok(strstr(sc, "((long long)c.batch * p.heads_q + c.head) * p.seqlen_q;") &&
           strstr(sc, "((long long)c.batch * p.heads_kv + c.kv_head) * p.seqlen_k;") &&
           strstr(sc, "c.m0 + r < p.seqlen_q ? qs[c.m0 + r] : 0.0f;") &&
           strstr(sc, "key0 + r < p.seqlen_k ? ks[key0 + r] : 0.0f;") &&
           strstr(kc, "scale_warp(p, c, (int)(threadIdx.x & 31));"),
           "scales.cuh reads q_token_scale / k_token_scale as [batch, heads, seq] at the "
           "call's seqlen_q / seqlen_k (the layout fa4.h documents), nothing past the end");
    }
    ok(strstr(kc, "c.m0 = m_block * FA4_BM;") && strstr(kc, "c.head = (int)blockIdx.y;") &&
       strstr(kc, "c.batch = (int)blockIdx.z;") &&
       strstr(kc, "static_assert(FA4_THREADS == 512"),
       "kernel.cuh reads the grid as (query block of 256, head, batch) with 512 threads");

    for (dt = FA4_DTYPE_BF16; dt <= FA4_DTYPE_FP8_E4M3; dt++)
        for (i = 0; i < (int)(sizeof dims / sizeof dims[0]); i++)
            checked += check_space(&dev, (fa4_dtype)dt, dims[i][0], dims[i][1]);
    diag("%d sm100 configs checked", checked);

    /* fp8 in rope mode: the slot rule splits its rings (budget_sm100.c),
       so two explicit fused rings: d192/128 at 64 B (a rope box of 64
       columns) and d256/128 1Q at 128 B (one of 128) */
    for (i = 0; i < 2; i++) {
        const fa4_problem init = FA4_PROBLEM_INIT;
        fa4_layout l;
        char defs[8192], bad[640] = "";
        p = init;
        p.dtype = FA4_DTYPE_FP8_E4M3; p.batch = 3; p.seqlen_q = 1000; p.seqlen_k = 777;
        p.heads_q = 8; p.heads_kv = 2; p.head_dim_qk = i ? 256 : 192; p.head_dim_v = 128;
        config_default(&cfg, &dev, &p, FA4_FAMILY_SM100, why, sizeof why);
        if (i) {
            cfg.bm = 128; cfg.q_tiles = 1; cfg.bn = 192; cfg.swizzle = 128;
        }
        cfg.stages = 5;
        cfg.fused_kv = 1;
        k = params_of(&p);
        if (budget_fit(&l, &dev, &p, &cfg, why, sizeof why) != FA4_OK)
            snprintf(bad, sizeof bad, "fit: %s", why);
        else if (budget_defines(defs, sizeof defs, &p, &cfg, &l) < 0)
            snprintf(bad, sizeof bad, "budget_defines overflow");
        else if (launch_sm100_describe(m, &p, &cfg, &k, why, sizeof why) != FA4_OK)
            snprintf(bad, sizeof bad, "describe: %s", why);
        else if (define_of(defs, "FA4_ROPE_CHUNKS") != 1)
            snprintf(bad, sizeof bad, "FA4_ROPE_CHUNKS %d, want 1",
                     define_of(defs, "FA4_ROPE_CHUNKS"));
        else
            check_maps(bad, sizeof bad, m, defs);
        ok(!bad[0], "sm100 fp8 d%d/128 as a fused ring of 5 (%d B swizzle) is in rope mode "
           "and its maps match the kernel's counts%s%s", p.head_dim_qk, cfg.swizzle,
           bad[0] ? ": " : "", bad);
    }
    {
        const fa4_problem init = FA4_PROBLEM_INIT;
        p = init;
    }

    /* what the maps refuse */
    p.dtype = FA4_DTYPE_BF16; p.batch = 1; p.seqlen_q = p.seqlen_k = 256;
    p.heads_q = p.heads_kv = 1; p.head_dim_qk = 128;
    config_default(&cfg, &dev, &p, FA4_FAMILY_SM100, why, sizeof why);
    k = params_of(&p);
    k.q_head_stride = 7;       /* one head: the stride is never used */
    ok(launch_sm100_describe(m, &p, &cfg, &k, why, sizeof why) == FA4_OK &&
       m[0].strides[1] == 16,
       "a stride over an extent of 1 is not checked (set to 16) (%s)", why[0] ? why : "ok");
    k = params_of(&p);
    k.k_batch_stride = 0;
    p.batch = 2;
    k.batch = 2;
    ok(launch_sm100_describe(m, &p, &cfg, &k, why, sizeof why) == FA4_EINVAL &&
       strstr(why, "k batch stride 0 elements"), "a K batch stride of 0 is refused (%s)", why);
    k = params_of(&p);
    k.o_row_stride = 132;
    ok(launch_sm100_describe(m, &p, &cfg, &k, why, sizeof why) == FA4_EINVAL &&
       strstr(why, "o row stride 132 elements = 264 B; TMA needs a positive multiple of 16 B"),
       "an O row stride of 132 elements is refused by the TMA rule (%s)", why);
    k = params_of(&p);
    k.o += 8;
    ok(launch_sm100_describe(m, &p, &cfg, &k, why, sizeof why) == FA4_EINVAL &&
       strstr(why, "o address"), "an O address off 16 bytes is refused (%s)", why);
    k = params_of(&p);
    k.v += 8;
    ok(launch_sm100_describe(m, &p, &cfg, &k, why, sizeof why) == FA4_EINVAL &&
       strstr(why, "v address"), "a V address off 16 bytes is refused (%s)", why);
    k = params_of(&p);
    cfg.bn = 0;
    ok(launch_sm100_describe(m, &p, &cfg, &k, why, sizeof why) == FA4_EINVAL &&
       strstr(why, "bn=0"), "a config without a resolved bn is refused (%s)", why);
    config_default(&cfg, &dev, &p, FA4_FAMILY_SM100, why, sizeof why);
    cfg.cluster = 4;
    ok(launch_sm100_describe(m, &p, &cfg, &k, why, sizeof why) == FA4_EINVAL &&
       strstr(why, "cluster=4"), "a cluster of 4 is refused (%s)", why);
    {
        unsigned g[3];
        k.m_blocks = 5;
        launch_sm100_grid(g, &k, 1);
        ok(g[0] == 5, "alone, the grid has one CTA per query block (5)");
        launch_sm100_grid(g, &k, 2);
        ok(g[0] == 6, "in pairs, 5 query blocks take 6 CTAs (3 clusters of 2)");
        k = params_of(&p);
    }
    config_default(&cfg, &dev, &p, FA4_FAMILY_SM100, why, sizeof why);
    p.varlen = 1;
    ok(launch_sm100_describe(m, &p, &cfg, &k, why, sizeof why) == FA4_ENOTSUP &&
       strstr(why, "dense batches only"), "varlen is FA4_ENOTSUP (%s)", why);
    p.varlen = 0;
    p.page_size = 64;
    ok(launch_sm100_describe(m, &p, &cfg, &k, why, sizeof why) == FA4_ENOTSUP,
       "paged K/V is FA4_ENOTSUP");
    p.page_size = 0;
    ok(launch_sm100_describe(m, &p, &cfg, &k, why, sizeof why) == FA4_OK,
       "a bf16 d128 config describes (%s)", why[0] ? why : "ok");
    cfg.swizzle = 64;
    ok(launch_sm100_describe(m, &p, &cfg, &k, why, sizeof why) == FA4_EINVAL &&
       strstr(why, "swizzle=64") && strstr(why, "128 for 16-bit inputs"),
       "a 16-bit config with 64 B swizzle is refused (%s)", why);
    /* fp8: byte maps in the config's swizzle, O in its 16-bit out_dtype */
    p.dtype = FA4_DTYPE_FP8_E4M3;
    config_default(&cfg, &dev, &p, FA4_FAMILY_SM100, why, sizeof why);
    k = params_of(&p);
    ok(launch_sm100_describe(m, &p, &cfg, &k, why, sizeof why) == FA4_OK && cfg.swizzle == 64 &&
       m[0].tma_type == CU_TENSOR_MAP_DATA_TYPE_UINT8 && m[0].esize == 1 &&
       m[1].tma_type == CU_TENSOR_MAP_DATA_TYPE_UINT8 &&
       m[2].tma_type == CU_TENSOR_MAP_DATA_TYPE_UINT8 && m[0].box[0] == 64 &&
       m[1].box[0] == 64 && m[2].box[0] == 64 && m[0].swizzle == 64 && m[2].swizzle == 64 &&
       m[3].tma_type == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 && m[3].esize == 2 &&
       m[3].box[0] == 32 && m[3].box[1] == 32 && m[3].swizzle == 64 &&
       m[0].strides[0] == 128 && m[3].strides[0] == 256,
       "fp8 d128 (64 B swizzle): Q, K, V as UINT8 boxes of 64 bytes, O as bf16 boxes of "
       "{32, 32}, all 64 B swizzled, strides in bytes of each type (%s)", why[0] ? why : "ok");
    cfg.swizzle = 128;
    p.out_dtype = FA4_DTYPE_FP16;
    ok(launch_sm100_describe(m, &p, &cfg, &k, why, sizeof why) == FA4_OK && m[0].box[0] == 128 &&
       m[1].box[0] == 128 && m[2].box[0] == 128 && m[0].swizzle == 128 &&
       m[3].tma_type == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 && m[3].box[0] == 64 &&
       m[3].swizzle == 128,
       "fp8 d128 at 128 B swizzle: boxes of 128 bytes, O fp16 boxes of {64, 32} (%s)",
       why[0] ? why : "ok");
    p.out_dtype = 0;
    cfg.swizzle = 32;
    ok(launch_sm100_describe(m, &p, &cfg, &k, why, sizeof why) == FA4_EINVAL &&
       strstr(why, "swizzle=32") && strstr(why, "64 or 128 for fp8"),
       "an fp8 config with 32 B swizzle is refused (%s)", why);

    check_decode_space(&dev);
    {
        const char *dc = kernel_text("sm100/decode.cuh");
        ok(strstr(dc, "#define DEC_K_CHUNK (FA4_BN * 128)") &&
           strstr(dc, "#define DEC_K_BYTES (FA4_PAD_DQK / 64 * DEC_K_CHUNK)") &&
           strstr(dc, "#define DEC_V_BYTES (FA4_PAD_DV / 64 * DEC_K_CHUNK)") &&
           strstr(dc, "(u32)(FA4_PAD_DQK / 64 * h * t * 128)") &&
           strstr(dc, "ch * 64, c.q_head0, c.token0, c.batch") &&
           strstr(dc, "ch * 64, key0, c.kv_head, c.batch"),
           "the decode kernel's expect_tx counts and box coordinates are the ones "
           "check_decode_maps() mirrors");
    }
    check_forward();
    return done_testing();
}
