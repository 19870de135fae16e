/*
** budget_sm80.c -- the sm80 family (mma.sync + ldmatrix + cp.async,
** kernels/sm80/): shared-memory layout, register estimate, config space
** and default.  Every number here reaches the kernel as a compile-time
** constant; the kernel static_asserts what it relies on.
**
** Shape of a CTA: BM query rows, WARPS warps of ROWS = BM / WARPS rows
** each (16 or 32; warps 0 in a config means 16), BN keys per step,
** STAGES-deep cp.async rings for K and V.  A warp of 32 rows reads each
** K and V fragment once for two m16 tiles, half the shared-memory traffic
** per MMA of 16 rows, at twice the accumulator registers.  For decode
** (kv_split_warps) BM is 16 and the WARPS warps take BN/WARPS keys of each
** block; their states merge in the K region at the end (WARPS x 16 x
** (DV + 2) floats, so the K region is at least that large).
**
** Serving: varlen, paged K/V (any power-of-two page size: cp.async
** addresses each 16-byte chunk through the block table), GQA packing and
** split-KV are all this family's (kernels/sm80/seqinfo.cuh).
**
** Shared memory, from the 1024-aligned dynamic base (the kernel aligns it):
**     Q [BM x D] | K [STAGES][BN x D] | V [STAGES][BN x DV]
** each region 1024 B aligned, plus 1024 B of slack for the base alignment.
** A tile is stored as boxes SWIZZLE bytes wide (rows x SWIZZLE B), chunk c
** of row r at c ^ (r % 8) (128 B) or c ^ ((r >> 1) % 4) (64 B), so a head
** dim must fill whole boxes: 128 B swizzle needs D and DV multiples of 64,
** 64 B swizzle multiples of 32.  The epilogue stages O in the Q region.
**
** Registers per thread, fitted to ptxas (CUDA 13.0, sm_80 and sm_90a,
** bf16 and fp16, causal or not, softcap, varlen, pages of 16, stages
** 1-3), with MT = ROWS / 16 row tiles per warp and KN keys per warp:
**     MT x (O accumulator DV/2 + S accumulator and packed P 3 KN/4)
**     + Q fragments MT x D/4 when kept in registers (sm80_q_in_regs)
**     + 40 (fragment and cp.async addresses, softmax state, indices),
**       24 for the plain variant at 32 rows (sm80_regs_rest)
**     + 16 with fused_kv (one barrier per key block: ptxas holds both
**       loads' addresses; d64 bn64 at 32 rows 243 registers, d128 bn64
**       spills 128-320 B)
** e.g. d128 bm128 bn64, 16 rows: 64+48+32+40 = 184 (ptxas 174-190);
**      d128 bm128 bn32, 32 rows: 2 x (64+24)+40 = 216 (ptxas 234-245);
**      d64 bm128 bn64, 32 rows: 2 x (32+48)+32+40 = 232 (ptxas 207-225);
**      d256 bm128 bn64, 16 rows: 128+48+40 = 216 (ptxas 226-239);
**      d128 bn64, 32 rows: plain 248 (ptxas 249-255 on sm_80 to sm_90a,
**      no spills; 28 B on sm_100a and sm_120, so refused on Blackwell);
**      264 and rejected otherwise (spills 8-212 B with softcap, varlen
**      or pages on sm_100a, softcap + varlen on sm_90a).
** ptxas takes what registers are free, so it reports more than this
** estimate where there is room; what the estimate must do is put every
** variant that spills above 255.  Variants over 255 are rejected: the
** JIT rejects spills anyway.
*/
#include <stdio.h>
#include <string.h>

#include "family.h"
#include "config.h"
#include "dtype.h"
#include "problem.h"

#define SM80_ALIGN      1024     /* region alignment, bytes */
#define SM80_SLACK      1024     /* the kernel aligns its base up to 1024 B */
#define SM80_MAX_REGS   255
#define SM80_FUSED_REGS 16       /* the fused schedule's extra registers */
/* Estimates above this are at the edge: the plain variant's d128 and
** d192/128 bn 64 at 32 rows (248) compile without spills on sm_80, 90a,
** 100a and 120 only as bm 128 with 2 stages and d <= 128; bm 64, 1 or 3
** stages and d192 spill 8-236 B on some of them (NVRTC 13.0,
** FA4_TEST_ARCHS test_sm80_compile). */
#define SM80_EDGE_REGS  (SM80_MAX_REGS - 16)
#define SM80_MAX_RESCALE 8       /* lazy rescale: P <= 2^8, far inside fp16 */
#define SM80_FP8_REGS   8        /* fp8: widened fragments beside the loaded ones */

static const int sm80_bms[] = { 64, 128 };
static const int sm80_rows[] = { 16, 32 };
static const int sm80_bns[] = { 32, 64, 128 };
static const int sm80_swizzles[] = { 64, 128 };

/* N rounded up to a multiple of A. */
static int align_up(int n, int a) { return (n + a - 1) / a * a; }

/* 1 when the kernel keeps Q's mma fragments in registers (ROWS/16 x D/4
** of them, beside O's ROWS/16 x DV/2 and S's ROWS/16 x KN/2): d <= 128
** and the three together at most 160, else Q is re-read from shared
** memory at each k-step. */
static int sm80_q_in_regs(int d, int dv, int rows, int kn)
{
    return d <= 128 && rows / 16 * (d / 4 + dv / 2 + kn / 2) <= 160;
}

/* The widest swizzle PB's rows fill: 128 B where both head dims' rows
** are whole 128-byte boxes, else 64 B. */
static int sm80_swizzle_max(const fa4_problem *pb)
{
    const int esize = dtype_bytes(pb->dtype);
    return (pb->head_dim_qk * esize) % 128 == 0 && (problem_head_dim_v(pb) * esize) % 128 == 0 ? 128 : 64;
}

/* 1 when V is one of the N values in SET. */
static int in_set(int v, const int *set, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (set[i] == v)
            return 1;
    return 0;
}

/* 1 when PB has none of softcap, sinks, varlen or pages: the kernel's
** plain variant, which needs fewer registers (no cap, no per-sequence or
** per-page addresses). */
static int sm80_plain(const fa4_problem *pb)
{
    return !(pb->softcap > 0) && !pb->attention_sinks && !pb->varlen && !pb->page_size;
}

/* The estimate's constant part (addresses, softmax state, indices): the
** plain variant at 32 rows needs 16 fewer (ptxas: d128 and d192/128 at bn
** 64 in 248-255 without spills on sm_80, 90a and 100a); at 16 rows it does
** not (d256 bn 128 spills on sm_100a). */
static int sm80_regs_rest(int rows, int plain)
{
    return plain && rows == 32 ? 24 : 40;
}

/* The register estimate of the file comment for warps of ROWS query rows
** holding KN keys of a block each (bn, or bn / warps when they split it),
** of the plain variant or not (PLAIN). */
static int sm80_regs_estimate(int d, int dv, int rows, int kn, int plain)
{
    int mt = rows / 16;
    int q = sm80_q_in_regs(d, dv, rows, kn) ? mt * d / 4 : 0;
    return mt * (dv / 2 + 3 * kn / 4) + q + sm80_regs_rest(rows, plain);
}

/* The estimate for PB's inputs: fp8 adds SM80_FP8_REGS (ptxas, d128 bn 64
** at 32 rows: 16-bit inputs fit, e4m3 ones spill 12-360 B on sm_80, 90a
** and 100a). */
static int sm80_regs_problem(const fa4_problem *pb, int rows, int kn)
{
    return sm80_regs_estimate(pb->head_dim_qk, problem_head_dim_v(pb), rows, kn, sm80_plain(pb)) +
           (pb->dtype == FA4_DTYPE_FP8_E4M3 ? SM80_FP8_REGS : 0);
}

/* 1 when the problem has few query rows per KV head (decode, speculative
** decoding, short chunks): the serving variants join the space. */
static int sm80_few_rows(const fa4_problem *pb)
{
    int group = problem_group(pb);
    return (long long)pb->seqlen_q * group <= 128;
}

/* Append region NAME of SIZE bytes at *OFF (1024-aligned) to L. */
static void add_region(fa4_layout *l, const char *name, int *off, int size)
{
    budget_region *r = &l->region[l->nregions++];
    *off = align_up(*off, SM80_ALIGN);
    r->name = name;
    r->offset = *off;
    r->size = size;
    *off += size;
}

/* The register estimate up to which the kernel trades registers for
** instructions in its loop on every arch: K fragments read in mma pair
** order (FA4_K_PAIRS; the order that pairs registers 0-2 and 1-3 costs
** ptxas a move per K register, about 210 per key block at d128 bn 64) and
** K/V stream addresses held between blocks (FA4_KV_PTRS; else formed from
** the block and thread index at each load).  Both cost ptxas's schedule
** registers: on Blackwell (sm_100a, sm_120) d128 bn 64 at 32 rows spills
** 8-56 B with the pairs alone and d128 bn 32 at 32 rows 28-116 B with
** both (NVRTC 13.0), so there tiles of 32 rows with head_dim_v over 96 (O
** alone 128 registers) keep the older form.  Before Blackwell (sm_80 to
** sm_90a) ptxas fits both in every tile the estimate admits (d128 bn 64
** at 32 rows: 255 registers, no spills), and there they make the d128
** loop 9-11% faster on the H100 (bench/NOTES.md "sm80 v5"). */
#define SM80_SPARE_REGS_MAX 240

/* 1 when a variant of ROWS query rows per warp, head_dim_v DV and
** register estimate REGS (without fused_kv's share, so that fused_kv=1
** against 0 compares the schedules alone) takes the lean loop on DEV. */
static int sm80_lean_loop(const device_limits *dev, int rows, int dv, int regs)
{
    if (regs <= SM80_SPARE_REGS_MAX && (rows == 16 || dv <= 96))
        return 1;
    return rows == 32 && dev->cc < 100;
}

/* family_ops.fit: see budget_fit() in budget.h. */
static fa4_status sm80_fit(fa4_layout *out, const device_limits *dev,
                           const fa4_problem *pb, const fa4_config *cfg,
                           char *why, size_t wn)
{
    const int d = pb->head_dim_qk, dv = problem_head_dim_v(pb);
    const int esize = dtype_bytes(pb->dtype);
    int warps, rows, threads, off = 0, smem, regs, base_regs, kn, k_bytes;

    /* What the family cannot run at all (config_enumerate stops on these). */
    if (pb->dtype != FA4_DTYPE_BF16 && pb->dtype != FA4_DTYPE_FP16 &&
        pb->dtype != FA4_DTYPE_FP8_E4M3) {
        snprintf(why, wn, "sm80 kernels run bf16, fp16 and fp8 e4m3 (dtype=%d)", (int)pb->dtype);
        return FA4_ENOTSUP;
    }
    if (pb->token_scales) {
        snprintf(why, wn, "sm80 kernels: token_scales=1 (per-token Q/K scales) not "
                 "implemented; only the sm100 family applies them");
        return FA4_ENOTSUP;
    }
    if (d <= 0 || d > 256 || d % 32 != 0 || dv <= 0 || dv > d || dv % 32 != 0) {
        snprintf(why, wn, "sm80 kernels need head dims multiple of 32, head_dim_v <= "
                 "head_dim_qk <= 256 (head_dim_qk=%d head_dim_v=%d)", d, dv);
        return FA4_ENOTSUP;
    }
    if (esize == 1 && (d % 64 != 0 || dv % 64 != 0)) {
        snprintf(why, wn, "sm80 fp8: head dims must be multiples of 64 (64-byte swizzle rows of "
                 "e4m3; head_dim_qk=%d head_dim_v=%d)", d, dv);
        return FA4_ENOTSUP;
    }

    /* A config malformed for the family. */
    if (cfg->kv_split_warps != 0 && cfg->kv_split_warps != 1) {
        snprintf(why, wn, "sm80: kv_split_warps=%d; must be 0 or 1", cfg->kv_split_warps);
        return FA4_EINVAL;
    }
    if (cfg->pack_gqa != 0 && cfg->pack_gqa != 1) {
        snprintf(why, wn, "sm80: pack_gqa=%d; must be 0 or 1", cfg->pack_gqa);
        return FA4_EINVAL;
    }
    if (cfg->splits < 0 || cfg->splits > CONFIG_MAX_SPLITS) {
        snprintf(why, wn, "sm80: splits=%d; supported: 0 (per call) or 1..%d",
                 cfg->splits, CONFIG_MAX_SPLITS);
        return FA4_EINVAL;
    }
    if (cfg->kv_split_warps ? cfg->bm != 16 : !in_set(cfg->bm, sm80_bms, 2)) {
        snprintf(why, wn, "sm80: bm=%d; supported: 64 128 (16 with kv_split_warps)", cfg->bm);
        return FA4_EINVAL;
    }
    if (!in_set(cfg->bn, sm80_bns, 3)) {
        snprintf(why, wn, "sm80: bn=%d; supported: 32 64 128", cfg->bn);
        return FA4_EINVAL;
    }
    if (cfg->stages < 1 || cfg->stages > 4 || (cfg->stages == 4 && !cfg->kv_split_warps)) {
        snprintf(why, wn, "sm80: stages=%d; supported: 1 2 3 (4 with kv_split_warps)", cfg->stages);
        return FA4_EINVAL;
    }
    if (!in_set(cfg->swizzle, sm80_swizzles, 2)) {
        snprintf(why, wn, "sm80: swizzle=%d; supported: 64 128", cfg->swizzle);
        return FA4_EINVAL;
    }
    if ((d * esize) % cfg->swizzle != 0 || (dv * esize) % cfg->swizzle != 0) {
        snprintf(why, wn, "sm80: swizzle=%d needs head dims multiple of %d "
                 "(head_dim_qk=%d head_dim_v=%d)", cfg->swizzle, cfg->swizzle / esize, d, dv);
        return FA4_EINVAL;
    }
    if (cfg->kv_split_warps) {
        warps = cfg->warps;
        if (warps != 2 && warps != 4 && warps != 8) {
            snprintf(why, wn, "sm80: warps=%d with kv_split_warps; supported: 2 4 8", warps);
            return FA4_EINVAL;
        }
        if (cfg->bn % (16 * warps) != 0) {
            snprintf(why, wn, "sm80: bn=%d cannot give %d warps 16 keys each", cfg->bn, warps);
            return FA4_EINVAL;
        }
        rows = 16;
    } else {
        warps = cfg->warps ? cfg->warps : cfg->bm / 16;
        rows = cfg->bm / warps;
        if (cfg->bm % warps != 0 || !in_set(rows, sm80_rows, 2)) {
            snprintf(why, wn, "sm80: warps=%d; bm=%d takes %d or %d (16 or 32 rows per warp)",
                     cfg->warps, cfg->bm, cfg->bm / 16, cfg->bm / 32);
            return FA4_EINVAL;
        }
    }
    if (cfg->q_tiles > 1 || cfg->cluster > 1 || cfg->scheduler != FA4_SCHED_PLAIN) {
        snprintf(why, wn, "sm80: q_tiles=%d cluster=%d scheduler=%d; "
                 "supported: 1 Q tile, no cluster, plain scheduler",
                 cfg->q_tiles, cfg->cluster, (int)cfg->scheduler);
        return FA4_EINVAL;
    }
    if (cfg->rescale_threshold < 0 || cfg->rescale_threshold > SM80_MAX_RESCALE) {
        snprintf(why, wn, "sm80: rescale=%d; supported: 0 (every block) .. %d (lazy "
                 "rescale threshold, log2 units)", cfg->rescale_threshold, SM80_MAX_RESCALE);
        return FA4_EINVAL;
    }
    if (cfg->fused_kv != 0 && (cfg->fused_kv != 1 || cfg->stages < 2)) {
        snprintf(why, wn, "sm80: fused_kv=%d with stages=%d; fused_kv 1 (one barrier per "
                 "key block) needs 2 or more stages", cfg->fused_kv, cfg->stages);
        return FA4_EINVAL;
    }
    if (cfg->fused_kv && rows == 32 &&
        dv > 64) {
        snprintf(why, wn, "sm80: fused_kv=1 with 32 rows per warp needs head_dim_v <= 64 "
                 "(head_dim_v=%d; d96 and d128 spill 24-116 B on sm_120); use 16 rows "
                 "(warps=%d)", dv, cfg->bm / 16);
        return FA4_ENOFIT;
    }
    threads = 32 * warps;
    kn = cfg->kv_split_warps ? cfg->bn / warps : cfg->bn;

    /* Q, and O staged in its bytes by the epilogue (16-bit O of fp8 inputs
       is wider than Q). */
    add_region(out, "Q", &off, cfg->bm * (d * esize > dv * 2 ? d * esize : dv * 2));
    k_bytes = cfg->stages * cfg->bn * d * esize;
    if (cfg->kv_split_warps && k_bytes < warps * 16 * (dv + 2) * 4)
        k_bytes = warps * 16 * (dv + 2) * 4;   /* the warp merge's buffer */
    add_region(out, "K", &off, k_bytes);
    add_region(out, "V", &off, cfg->stages * cfg->bn * dv * esize);
    smem = align_up(off, SM80_ALIGN) + SM80_SLACK;
    base_regs = sm80_regs_problem(pb, rows, kn);   /* without fused_kv's share */
    regs = base_regs + (cfg->fused_kv ? SM80_FUSED_REGS : 0);

    out->threads = threads;
    out->smem_bytes = smem;
    out->regs_estimate = regs;
    out->kv_slots = cfg->stages;
    out->lean_loop = sm80_lean_loop(dev, rows, dv, base_regs);

    if (smem > dev->smem_per_block_optin) {
        snprintf(why, wn, "smem %d B > opt-in limit %d B", smem, dev->smem_per_block_optin);
        return FA4_ENOFIT;
    }
    if (threads > dev->max_threads_per_block) {
        snprintf(why, wn, "threads %d > limit %d", threads, dev->max_threads_per_block);
        return FA4_ENOFIT;
    }
    if (regs > SM80_MAX_REGS) {
        int mt = rows / 16;
        const int rest = sm80_regs_rest(rows, sm80_plain(pb));
        const int fused = cfg->fused_kv ? SM80_FUSED_REGS : 0;
        const int fp8 = esize == 1 ? SM80_FP8_REGS : 0;
        snprintf(why, wn, "regs estimate %d > %d per thread (%d rows per warp: O %d + S and "
                 "P %d + Q %d + %d%s%s)", regs, SM80_MAX_REGS, rows, mt * dv / 2,
                 mt * 3 * kn / 4, regs - mt * (dv / 2 + 3 * kn / 4) - rest - fused - fp8,
                 rest, fused ? " + 16 fused_kv" : "", fp8 ? " + 8 fp8" : "");
        return FA4_ENOFIT;
    }
    if (regs > SM80_EDGE_REGS && !(cfg->bm == 128 && cfg->stages == 2 && d <= 128)) {
        snprintf(why, wn, "regs estimate %d within %d of %d: only bm=128 stages=2 with "
                 "head_dim_qk <= 128 compile without spills there (bm=%d stages=%d "
                 "head_dim_qk=%d)", regs, SM80_MAX_REGS - SM80_EDGE_REGS, SM80_MAX_REGS,
                 cfg->bm, cfg->stages, d);
        return FA4_ENOFIT;
    }
    if (rows == 32 && dv > 96 && dev->cc >= 100 && base_regs > SM80_SPARE_REGS_MAX) {
        snprintf(why, wn, "regs estimate %d at 32 rows per warp with head_dim_v %d: "
                 "Blackwell's ptxas spills there (d128 bn=64: 28 B on sm_100a and sm_120, "
                 "NVRTC 13.0); use bn=32 or warps=%d (16 rows)", regs, dv, cfg->bm / 16);
        return FA4_ENOFIT;
    }
    if (dev->regs_per_block > 0 && regs * threads > dev->regs_per_block) {
        snprintf(why, wn, "regs %d x %d threads > %d per block", regs, threads,
                 dev->regs_per_block);
        return FA4_ENOFIT;
    }
    return FA4_OK;
}

/* family_ops.defines: FA4_WARPS, FA4_WARP_ROWS, FA4_Q_IN_REGS (the
** register estimate above assumes the same choice), FA4_K_PAIRS and
** FA4_KV_PTRS (the layout's lean_loop), FA4_FUSED_KV and
** FA4_RESCALE_THRESHOLD (the config's rescale; kernels/sm80/softmax.cuh),
** and FA4_SOFTCAP_FIXED_MAX only where it applies (the other sources, and
** so their cubin cache keys, stay as they were). */
static int sm80_defines(char *buf, size_t size, const fa4_problem *pb,
                        const fa4_config *cfg, const fa4_layout *l)
{
    int warps = l->threads / 32, rows = cfg->kv_split_warps ? 16 : cfg->bm / warps;
    int kn = cfg->kv_split_warps ? cfg->bn / warps : cfg->bn;
    int n = 0;

    budget_append(buf, size, &n, "#define FA4_WARPS %d\n#define FA4_WARP_ROWS %d\n"
                  "#define FA4_Q_IN_REGS %d\n#define FA4_K_PAIRS %d\n"
                  "#define FA4_KV_PTRS %d\n#define FA4_FUSED_KV %d\n"
                  "#define FA4_RESCALE_THRESHOLD %d\n"
                  "#define FA4_KV_SPLIT_WARPS %d\n#define FA4_PACK_GQA %d\n"
                  "#define FA4_VARLEN %d\n#define FA4_PAGED %d\n",
                  warps, rows, sm80_q_in_regs(pb->head_dim_qk, problem_head_dim_v(pb), rows, kn),
                  l->lean_loop, l->lean_loop, cfg->fused_kv, cfg->rescale_threshold,
                  cfg->kv_split_warps, cfg->pack_gqa, pb->varlen != 0, pb->page_size > 0);
    if (problem_softcap_fixed_max(pb))
        budget_append(buf, size, &n, "#define FA4_SOFTCAP_FIXED_MAX 1\n");
    return n;
}

/* Fill the fields every sm80 config shares: BM rows in warps of ROWS,
** splits 0 (chosen per call). */
static void sm80_base(fa4_config *c, int bm, int rows, int bn, int stages, int swizzle)
{
    fa4_config init = FA4_CONFIG_INIT;
    *c = init;
    c->family = FA4_FAMILY_SM80;
    c->bm = bm;
    c->bn = bn;
    c->stages = stages;
    c->swizzle = swizzle;
    c->warps = bm / rows;
    c->q_tiles = 1;
    c->cluster = 1;
    c->scheduler = FA4_SCHED_PLAIN;
    c->splits = 0;
}

/* A decode config: 16 query rows (packed heads), WARPS warps splitting
** each key block. */
static void sm80_decode(fa4_config *c, int warps, int bn, int stages, int swizzle,
                        int pack, int splits)
{
    sm80_base(c, 16, 16, bn, stages, swizzle);
    c->warps = warps;
    c->kv_split_warps = 1;
    c->pack_gqa = pack;
    c->splits = splits;
}

/* Append C to OUT (at most MAX) and count it. */
#define EMIT(expr) do { if (n < max) { expr; } n++; } while (0)

/* family_ops.candidates: bm {64, 128} x rows per warp {16, 32} x bn {32,
** 64, 128} x stages {1, 2, 3} x swizzle {64, 128} (128 only where the
** head dims fill 64-element boxes), splits chosen per call; the register
** estimate drops the 32-row tiles that would spill.  Problems with few
** query rows per KV head add the serving variants: decode tiles (16
** packed rows, 4 warps splitting the keys) and packed 64-row tiles (16
** rows per warp: a decode step fills few rows), over explicit split
** counts. */
static int sm80_candidates(fa4_config *out, int max, const device_limits *dev,
                           const fa4_problem *pb)
{
    static const int splits[] = { 0, 1, 2, 4, 8, 16 };
    int n = 0, i, j, r, s, w;
    int swz_best = sm80_swizzle_max(pb);
    int pack = problem_group(pb) > 1;

    (void)dev;
    for (i = 0; i < 2; i++)
        for (r = 0; r < 2; r++)
            for (j = 0; j < 3; j++)
                for (s = 1; s <= 3; s++)
                    for (w = 0; w < 2; w++) {
                        int swz = sm80_swizzles[w];
                        if (swz > swz_best)
                            continue;
                        EMIT(sm80_base(&out[n], sm80_bms[i], sm80_rows[r], sm80_bns[j], s, swz));
                    }
    if (!sm80_few_rows(pb))
        return max == 0 ? n : (n < max ? n : max);
    for (j = 1; j < 3; j++)
        for (s = 2; s <= 4; s++)
            for (i = 0; i < 6; i++)
                EMIT(sm80_decode(&out[n], 4, sm80_bns[j], s, swz_best, pack, splits[i]));
    if (pack)
        for (j = 1; j < 3; j++)
            for (s = 2; s <= 3; s++)
                for (i = 0; i < 4; i++)
                    EMIT((sm80_base(&out[n], 64, 16, sm80_bns[j], s, swz_best),
                          out[n].pack_gqa = 1, out[n].splits = splits[i]));
    return max == 0 ? n : (n < max ? n : max);
}

#undef EMIT

/* The heuristic's margin under SM80_MAX_REGS: the default must compile
** on every arch and problem flavour, not just those measured. */
#define SM80_HEURISTIC_MARGIN 16
/* Keys up to which d256 takes two CTAs of bm 64 per SM. */
#define SM80_SHORT_KEYS 8192

/* 1 when PB's few-row tiles (decode and speculative steps), TILES of them,
** take a ring of 128-key blocks in 2 stages (132-144 KB, one CTA per SM):
** a contiguous 16-bit cache up to d128 whose tiles fit one wave of the SMs.
** On the H100 that reads 1-4% more TB/s in decode (b1 at 128k keys, b32 at
** 8k) and 4-6% in speculative steps of 4 and 8 tokens; b64 (two waves)
** is level, and over pages of 16 rows it loses 22-27% (bench/NOTES.md
** "Decode v2"). */
static int sm80_wide_ring(const device_limits *dev, const fa4_problem *pb, long long tiles)
{
    return pb->head_dim_qk <= 128 && !pb->page_size && dtype_bytes(pb->dtype) == 2 &&
           tiles <= dev->sm_count;
}

/* OUT (a decode or few-row tile) with 128-key blocks in 2 stages where
** sm80_wide_ring() holds for its TILES and the budget fits it; else as is. */
static void sm80_widen(fa4_config *out, const device_limits *dev, const fa4_problem *pb,
                       long long tiles)
{
    fa4_config wide = *out;
    fa4_layout l;
    char why[256];

    wide.bn = 128;
    wide.stages = 2;
    if (sm80_wide_ring(dev, pb, tiles) && budget_fit(&l, dev, pb, &wide, why, sizeof why) == FA4_OK)
        *out = wide;
}

/* family_ops.heuristic: decode shapes (at most 16 query rows per KV head)
** take the decode tile with packed heads; up to 128 rows, packed 64-row
** tiles of 16 rows per warp; both with 128-key blocks where
** sm80_wide_ring() says so, else bn 64.  Otherwise bm 128.  Head dims up
** to 128 take FlashAttention-2's shape, 4 warps of 32 rows (each K and V
** fragment serves both row tiles) and bn 64: where Q stays in registers
** (d64), or for the plain variant (no softcap, sinks, varlen or pages:
** ptxas fits d128 in 248-255 registers without spills on sm_80, 86, 89
** and 90a; on the H100 it is 11-14% faster than bn 32, bench/NOTES.md
** "sm80 v2"); the other variants, and d128 on Blackwell (sm80_fit), take
** bn 32 (d128 at bn 64 spills with softcap, varlen or pages on sm_100a),
** and 16 rows if even that leaves no margin.  d256 up to 8k keys: bm 64 in
** 4 warps of 16 rows, bn 64, one stage, lazy rescale, where two such CTAs
** fit an SM's shared memory (FlashAttention-2's H100 tile; not on an
** A100).  Else 8 warps of 16 rows, bn 64 with 2 stages where they fit
** (d256: 192 KB, not on an A100), else 1 (FlashAttention-2's d256 tile on
** an A100; bn 32 was 16-20% slower on the H100), with one barrier per key
** block (fused_kv) where the registers allow it.  128 B swizzle where the
** head dims allow it.  Splits are chosen per call.  A default that spills
** under another NVRTC gives way to half its key block (lib/plan.c). */
static void sm80_heuristic(fa4_config *out, const device_limits *dev,
                           const fa4_problem *pb)
{
    int d = pb->head_dim_qk, dv = problem_head_dim_v(pb);
    int swz = sm80_swizzle_max(pb);
    int group = problem_group(pb);
    fa4_layout l;
    char why[256];

    if ((long long)pb->seqlen_q * group <= 16) {
        sm80_decode(out, 4, 64, d <= 128 ? 3 : 2, swz, group > 1, 0);
        sm80_widen(out, dev, pb, (long long)pb->batch * (group > 1 ? pb->heads_kv : pb->heads_q));
        return;
    }
    if (sm80_few_rows(pb) && group > 1) {
        const long long m_blocks = ((long long)pb->seqlen_q * group + 63) / 64;
        sm80_base(out, 64, 16, 64, 2, swz);
        out->pack_gqa = 1;
        sm80_widen(out, dev, pb, (long long)pb->batch * pb->heads_kv * m_blocks);
        return;
    }
    if (d <= 128) {
        if (sm80_q_in_regs(d, dv, 32, 64) ||
            (sm80_plain(pb) && sm80_regs_problem(pb, 32, 64) <= SM80_MAX_REGS)) {
            sm80_base(out, 128, 32, 64, 2, swz);
            if (budget_fit(&l, dev, pb, out, why, sizeof why) == FA4_OK)
                return;   /* not d128 on Blackwell (sm80_fit) */
        }
        if (sm80_regs_problem(pb, 32, 32) <= SM80_MAX_REGS - SM80_HEURISTIC_MARGIN) {
            sm80_base(out, 128, 32, 32, 2, swz);
            return;
        }
    }
    /* d256 up to SM80_SHORT_KEYS keys: FlashAttention-2's H100 tile where
       two of its CTAs share an SM, bm 64 of 4 warps, one stage (96 KB),
       lazy rescale.  Each CTA's prologue and epilogue then overlap the
       other's loop: 512-8k 2-11% faster on the H100 than bm 128 (d192/128
       at 2k: 6% slower, so not there; bench/NOTES.md "sm80 v5"). */
    if (d >= 256 && pb->seqlen_k <= SM80_SHORT_KEYS) {
        sm80_base(out, 64, 16, 64, 1, swz);
        out->rescale_threshold = SM80_MAX_RESCALE;
        if (budget_fit(&l, dev, pb, out, why, sizeof why) == FA4_OK &&
            2 * (l.smem_bytes + DEVICE_SMEM_PER_CTA_RESERVED) <= dev->smem_per_sm)
            return;
    }
    /* One barrier per key block (fused_kv) where it fits: d256 16k 10-11%
       faster on the H100, causal or not (bench/NOTES.md "sm80 v4"). */
    sm80_base(out, 128, 16, 64, 2, swz);
    out->fused_kv = 1;
    if (budget_fit(&l, dev, pb, out, why, sizeof why) == FA4_OK)
        return;
    out->fused_kv = 0;
    if (budget_fit(&l, dev, pb, out, why, sizeof why) != FA4_OK)
        out->stages = 1;
}

const family_ops family_sm80 = {
    FA4_FAMILY_SM80,
    "sm80",
    80,
    0,
    sm80_fit,
    sm80_defines,
    sm80_candidates,
    sm80_heuristic,
};
