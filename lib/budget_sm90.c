/*
** budget_sm90.c -- the sm90 family (sm_90a: TMA + wgmma + warp
** specialization, kernels/sm90/): shared-memory layout, register check,
** config space and default.  Every number here reaches the kernel as a
** compile-time constant; the kernel static_asserts what it relies on.
**
** Shape of a CTA: one producer warpgroup (one thread issues the TMA loads)
** and CONSUMER_WGS consumer warpgroups of 64 query rows each, so
** BM = 64 * CONSUMER_WGS and THREADS = 128 * (1 + CONSUMER_WGS).
**
** Shared memory, from the 1024-aligned dynamic base (the kernel aligns it):
**     Q [BM x DP] | K [STAGES][BN x DP] | V [STAGES][BN x DVP] | O [BM x DVP] | BAR
** with tiles stored as chunks of rows x SWIZZLE bytes (SWIZZLE / 2 columns:
** 64 for 128 B, 32 for 64 B, 16 for 32 B), DP and DVP the head dims (at
** least 64) rounded up to whole chunks (TMA zero-fills the pad columns:
** d96 is 128 wide with 128 B swizzle, 96 with 64 or 32 B), each region
** 1024 B aligned, plus 1024 B of slack for the base alignment.
** When O does not fit beside Q it takes Q's bytes (O region offset = Q's):
** O is stored in Q's layout (same swizzle), so each consumer warpgroup
** writes O only over its own Q rows, after its last Q K^T, and the
** producer reloads Q only after the O store has read shared memory.
** BAR: q_full, q_empty, then k_full, k_empty, v_full, v_empty per stage,
** then (dynamic scheduler) 16 B for the tile the producer passes on, and
** for varlen 16 B more for its cursor over the sequences.
**
** Fused K/V ring (fused_kv = 1):
**     Q [BM x DP] | KV [SLOTS][BN x DP] | O | BAR
** K and V tiles alternate in one ring of slots of max(K, V) = BN x DP
** elements; one key block takes two slots.  SLOTS = 2 x stages when that
** fits the opt-in limit (with O in Q's bytes), else as many as fit; the
** config fits only when that is at least 2 x stages - 1, so stages = s
** gives 2s - 1 or 2s slots and no two configs share a layout (odd counts,
** e.g. d256 bn64 5 slots or bn96 3 slots, are what the split rings cannot
** do).  BAR: q_full, q_empty, then full and empty per slot.
**
** Registers: setmaxnreg gives the producer warpgroup PRODUCER_REGS and each
** consumer CONSUMER_REGS; the block's total must stay within the register
** file (65536).  A consumer thread holds the O accumulator (DVP/2 f32), the
** S accumulator of the next block (BN/2) and P of the current one (BN/4,
** packed 16-bit pairs) at once, plus about 28 for addresses, softmax state
** and indices (fitted to ptxas, CUDA 13.0: d256 bn80 -> 216 of 240 without
** spills, d128 bn192 -> 236 without, bn208 -> 248 spills; d64 bn128 at 160
** registers without spills).  The persistent schedulers keep tile state
** live across the epilogue: DVP/4 - 16 more (+16 above bn 192).
*/
#include <stdio.h>
#include <string.h>

#include "family.h"
#include "dtype.h"
#include "launch_sm90.h"
#include "problem.h"

#define SM90_ALIGN       1024   /* region alignment, bytes */
#define SM90_SLACK       1024   /* the kernel aligns its base up to 1024 B */
#define SM90_ROWS_PER_WG 64
#define SM90_REG_FILE    65536
#define SM90_REG_OVERHEAD 28
#define SM90_MAX_STAGES  4
#define SM90_RESCALE_THRESHOLD 8  /* log2 units: 2^8 headroom before O rescales */
#define SM90_D256_SHORT_KEYS 2048 /* d256 default: 128x64 persistent tiles up to here */

/* N rounded up to a multiple of A. */
static int align_up(int n, int a) { return (n + a - 1) / a * a; }

/* 1 when GQA packing applies (kernels/sm90/seqlen.cuh): grouped heads and
** a group dividing a 64-row O box, dense, varlen or paged. */
static int sm90_pack_applies(const fa4_problem *pb)
{
    const int group = problem_group(pb);
    return group >= 2 && 64 % group == 0;
}

/* Extra consumer registers of the persistent schedulers (tile state live
** across the epilogue), DVP/4 - 16 but at most 32, and 16 more above bn
** 192, fitted to ptxas: without it d128 bn192 (236) and d64 bn240 (240)
** spill; d192 bn112 (208 + 32), d128 bn176 (224 + 16) and d64 bn128 at 160
** registers (156 + 0) do not.  d256 takes 32, not 48: bn64 (204 + 32) compiles
** without spills under every scheduler and variant (swizzle 64 and 128,
** late_k, 3 stages, split rings, fp16, softcap, GQA), bn80 (216 + 32)
** spills 24-56 B (NVRTC 13.0, 2026-11-24); d192 bn128 (220 + 32) spills
** 16 B under a mask.  The 64 and 32 B swizzle epilogues need 8
** more (H100 sweep, 2026-11-22: d128 bn176 at 240 spills 60-76 B with 64 B),
** and so does the dynamic scheduler above bn 160 (d96 and d128 bn176 spill
** 52-64 B at 240; d128 bn160 does not), and, under a mask (MASKED), every
** persistent scheduler with WGS = 3 consumer warpgroups (160 registers)
** from bn 128 (d64 192x128 causal spills 32-56 B at 160 under the
** persistent ones, 308 B under the static one after an unrelated edit of
** the paged producer; 192x112 does not; without a mask 192x128 does not
** spill under the persistent and dynamic ones, 8 B under longest-first;
** NVRTC 13.0, 2026-11-23).  Softcap's constant max counts as a mask here:
** d64 192x128 persistent spills 248-252 B at 160 with it, 0 without. */
static int sm90_persistent_extra(int dv, int bn, fa4_scheduler sched, int swizzle, int wgs,
                                 int masked)
{
    const int tile_state = sm90_pad_dim(dv, swizzle / 2) / 4 - 16;

    if (sched == FA4_SCHED_PLAIN)
        return 0;
    return (tile_state < 32 ? tile_state : 32) + (bn > 192 ? 16 : 0) + (swizzle < 128 ? 8 : 0) +
           (((masked || sched == FA4_SCHED_LPT) && wgs == 3 && bn > 112) ||
                    (sched == FA4_SCHED_DYNAMIC && bn > 160) ? 8 : 0);
}

/* MASKED of sm90_persistent_extra() for PB. */
static int sm90_loop_masked(const fa4_problem *pb)
{
    return problem_has_mask(pb) || problem_softcap_fixed_max(pb);
}

/* 1 when softcap's tanh may run on the FMA pipe (tanh_poly_pct): a
** softcapped problem, and under bf16's constant max a scale / cap of at
** least 1e-5, since the polynomial's coefficients then hold (scale /
** cap)^7 (kernels/common/exp2.cuh, tanh_fold) and must stay normal. */
static int sm90_tanh_poly_fits(const fa4_problem *pb)
{
    return pb->softcap > 0 &&
           !(problem_softcap_fixed_max(pb) && problem_softmax_scale(pb) / pb->softcap < 1e-5);
}

/* The consumer's register need (file comment) with WGS consumer warpgroups. */
static int sm90_consumer_need(int dv, int bn, fa4_scheduler sched, int swizzle, int esize, int wgs,
                              int masked)
{
    return sm90_pad_dim(dv, swizzle / 2) / 2 + bn / 2 + bn * esize / 8 + SM90_REG_OVERHEAD +
           sm90_persistent_extra(dv, bn, sched, swizzle, wgs, masked);
}

/* Varlen's extra consumer registers (the sequence's lengths live through
** the main loop, the clipped epilogue), fitted to ptxas (CUDA 13.0): d128
** causal 128x160 dynamic spills 72-80 B at 240 (estimate 228 without this
** term); d64 causal 192x128 spills 24 B at 160 (156), 192x112 does not.
** 16-bit inputs under the dynamic scheduler with two warpgroups above bn
** 128 need 16 more since seqused_k and the V rows of no key joined the
** loop: d128 causal 128x144 spills 32 B at 240 (estimate 232 without it),
** 128x128 does not (fp8 128x192 under the plain grid does not either). */
static int sm90_varlen_extra(const fa4_problem *pb, int bn, fa4_scheduler sched, int wgs)
{
    if (!pb->varlen)
        return 0;
    return 16 + (wgs == 2 && bn > 128 && sched == FA4_SCHED_DYNAMIC && dtype_bytes(pb->dtype) == 2
                     ? 16 : 0);
}
/* 1 when CFG's consumer registers hold its tile under SCHED for PB's dense
 * batches (the heuristics' scheduler checks). */
static int sm90_sched_fits(const fa4_problem *pb, const fa4_config *cfg, fa4_scheduler sched)
{
    return sm90_consumer_need(problem_head_dim_v(pb), cfg->bn, sched, cfg->swizzle,
                              dtype_bytes(pb->dtype), cfg->consumer_wgs, sm90_loop_masked(pb)) <=
           cfg->consumer_regs;
}
static int sm90_varlen_need(const fa4_problem *pb, int bn, fa4_scheduler sched, int swizzle,
                            int wgs)
{
    return sm90_consumer_need(problem_head_dim_v(pb), bn, sched, swizzle, dtype_bytes(pb->dtype), wgs,
                              sm90_loop_masked(pb)) +
           sm90_varlen_extra(pb, bn, sched, wgs);
}

/* 1 when the tail split (splits = 0) goes with the plain grid for PB in
** tiles of WGS consumer warpgroups: dense, no mask (tiles of equal length),
** not fp8 above head_dim_v 128 (sm90_fit) nor fp8 with three warpgroups past
** d96 (its partial-O path spills 24 B at d128, 192x96).  It is decided per
** call and costs nothing where it does not split, so the plain grid takes it
** wherever it may. */
static int sm90_tail_split_fits(const fa4_problem *pb, int wgs)
{
    const int fp8 = pb->dtype == FA4_DTYPE_FP8_E4M3;
    return !pb->varlen && !pb->page_size && !problem_has_mask(pb) &&
           !(fp8 && problem_head_dim_v(pb) > 128) && !(fp8 && wgs == 3 && pb->head_dim_qk > 96);
}

/* The setmaxnreg split used for WGS consumer warpgroups. */
static void sm90_reg_split(int wgs, int *producer, int *consumer)
{
    *producer = wgs == 2 ? 24 : 32;
    *consumer = wgs == 2 ? 240 : 160;
}

/* Append region NAME of SIZE bytes at *OFF (1024-aligned) to L. */
static void add_region(fa4_layout *l, const char *name, int *off, int size)
{
    budget_region *r = &l->region[l->nregions++];
    *off = align_up(*off, SM90_ALIGN);
    r->name = name;
    r->offset = *off;
    r->size = size;
    *off += size;
}


/* 1 when paged K/V under CFG spills the producer: with 24 registers (two
** consumer warpgroups), its box loop over the block table fits beside the
** plain grid's tile and the dynamic scheduler's over the fused ring only
** (ptxas, CUDA 13.0, bf16 and fp8 d128 causal over 16-row pages: 16 B
** with the persistent and longest-first walks, 12 B with the dynamic
** scheduler and split rings; none with 32 registers, three warpgroups). */
static int sm90_paged_producer_spills(const fa4_problem *pb, const fa4_config *cfg)
{
    return pb->page_size > 0 && cfg->producer_regs < 32 &&
           (cfg->scheduler == FA4_SCHED_PERSISTENT || cfg->scheduler == FA4_SCHED_LPT ||
            (cfg->scheduler == FA4_SCHED_DYNAMIC && !cfg->fused_kv));
}

/* Largest key count (seqlen_k) of a problem whose tiles take two Q slots,
** without a mask and with one (a build may move them, for measurements). */
#ifndef SM90_Q2_MAX_KEYS
#define SM90_Q2_MAX_KEYS 2048
#endif
#ifndef SM90_Q2_MAX_KEYS_MASKED
#define SM90_Q2_MAX_KEYS_MASKED 512
#endif

/* 1 when CFG's tiles take two Q slots (FA4_Q_SLOTS, mainloop.cuh): under
** a persistent scheduler a CTA runs tile after tile, and with one slot the
** next tile's Q is loaded only once every consumer warp has run its last
** Q K^T, so a short tile starts by waiting for it (bench/NOTES.md, sm90
** v18: 600-2,000 cycles of a 7,000-13,000-cycle tile at 512 keys).  Dense
** 16-bit batches of short sequences: 1.4-5% faster up to 2k keys without
** a mask, at 512 with one; masked tiles of 1k-4k keys lost up to 1.5% (the
** dynamic scheduler hands each CTA its next tile a tile earlier).  Varlen
** batches (the dynamic scheduler) take them under a mask, their longest
** sequence up to 512 keys: 2.7-5.7% on packed causal batches of 16-512
** tokens; without a mask +0.9% / -1.0% / +-4% at 64-2k tokens, so not
** there (bench/NOTES.md, sm90 v19).  The budget then also needs O in its
** own bytes and the fused ring no shorter. */
static int sm90_q_double(const fa4_problem *pb, const fa4_config *cfg)
{
    const int max_keys = problem_has_mask(pb) ? SM90_Q2_MAX_KEYS_MASKED : SM90_Q2_MAX_KEYS;
    /* (The tail split, splits=0, runs only on the plain grid: sm90_fit.) */
    return cfg->scheduler != FA4_SCHED_PLAIN && !pb->page_size &&
           (!pb->varlen || problem_has_mask(pb)) &&
           pb->dtype != FA4_DTYPE_FP8_E4M3 && pb->seqlen_k <= max_keys;
}

/* The heads whose causal tiles run together (FA4_HEAD_GROUP, scheduler.cuh),
** or 0.  A head's query tiles from the longest leave the last heads'
** longest tiles to start last and run on alone: the plain grid's and the
** dynamic scheduler's tail (3.6-11% in a simulation of the grid's causal
** rows).  Ordering the tiles longest first across a group of heads
** balances them; keeping the group's K/V within half of L2 keeps what all
** heads at once (the longest-first scheduler) loses to L2.  Measured on the
** H100 (bench/NOTES.md): d256 causal 2k-8k 5-9% faster, d128 causal 2k-8k
** 1-3%, d64 causal 4k-8k 2-4%; the 1k rows lost 1-5% with every head in
** the group, hence at least 16 query tiles and at most 8 heads.  A power
** of two dividing the grid's heads (launch_sm90.c: a group per grid row).
** fp8 causal 4k-16k 4-9% faster.  Not with the tail split (splits=0: its
** own 1-D grid). */
static int sm90_head_group(const device_limits *dev, const fa4_problem *pb,
                           const fa4_config *cfg)
{
    const int heads = cfg->pack_gqa ? pb->heads_kv : pb->heads_q;
    const int rows = pb->seqlen_q * (cfg->pack_gqa ? problem_group(pb) : 1);
    const double kv = (double)pb->seqlen_k * (pb->head_dim_qk + problem_head_dim_v(pb)) *
                      dtype_bytes(pb->dtype);
    const double l2 = dev->l2_bytes > 0 ? dev->l2_bytes : 50.0 * 1024 * 1024;
    int g = 1;

    if (!pb->causal || pb->varlen || pb->page_size ||
        (rows + cfg->bm - 1) / cfg->bm < 16 ||
        (cfg->scheduler != FA4_SCHED_PLAIN && cfg->scheduler != FA4_SCHED_DYNAMIC) ||
        cfg->splits == 0)
        return 0;
    while (2 * g <= 8 && heads % (2 * g) == 0 && 2 * g * kv <= l2 / 2)
        g *= 2;
    return g >= 2 ? g : 0;
}

/* Carve shared memory for CFG with Q_SLOTS Q tiles into OUT (regions,
** smem_bytes, kv_slots, q_slots): Q, the K/V ring (split, or fused with
** the most slots up to 2 x stages that fit), O in its own bytes where it
** fits (always for fp8, whose 16-bit O rows are wider than Q's) or else in
** Q's, the barriers.  Returns 1 when O has its own bytes. */
static int sm90_carve(fa4_layout *out, const device_limits *dev, const fa4_problem *pb,
                      const fa4_config *cfg, int dp, int dvp, int q_slots)
{
    const int esize = dtype_bytes(pb->dtype), fp8 = pb->dtype == FA4_DTYPE_FP8_E4M3;
    /* The dynamic scheduler's tile slot follows the barriers (with varlen,
       the producer's walk over the sequences too: kernels/sm90/mainloop.cuh);
       a second Q slot adds its two barriers and tile slot. */
    const int tile_slot = cfg->scheduler != FA4_SCHED_DYNAMIC ? 0 : pb->varlen ? 32 : 16;
    const int q1_bar = q_slots == 1 ? 0 : cfg->scheduler != FA4_SCHED_DYNAMIC ? 16 : 32;
    int off = 0, o_off, slots = cfg->stages, bar_bytes = 16 + 32 * cfg->stages + tile_slot + q1_bar;
    int own_o;

    out->nregions = 0;
    add_region(out, "Q", &off, q_slots * cfg->bm * dp * esize);
    if (cfg->fused_kv) {
        /* The most slots, up to 2 x stages, that fit with O in Q (file
           comment; fp8: with O after the ring). */
        const int slot_bytes = cfg->bn * dp * esize, kv_off = align_up(off, SM90_ALIGN);
        const int o_bytes = fp8 ? align_up(cfg->bm * dvp * 2, SM90_ALIGN) : 0;
        for (slots = 2 * cfg->stages; slots > 2 * cfg->stages - 1; slots--)
            if (align_up(align_up(kv_off + slots * slot_bytes, SM90_ALIGN) + o_bytes + 16 +
                         16 * slots + tile_slot + q1_bar,
                         16) + SM90_SLACK <= dev->smem_per_block_optin)
                break;
        bar_bytes = 16 + 16 * slots + tile_slot + q1_bar;
        add_region(out, "KV", &off, slots * slot_bytes);
    } else {
        add_region(out, "K", &off, cfg->stages * cfg->bn * dp * esize);
        add_region(out, "V", &off, cfg->stages * cfg->bn * dvp * esize);
    }
    o_off = align_up(off, SM90_ALIGN);
    own_o = fp8 || o_off + cfg->bm * dvp * 2 + bar_bytes + SM90_SLACK <= dev->smem_per_block_optin;
    if (own_o) {
        /* fp8: O's 16-bit rows are wider than Q's, never in Q's bytes. */
        add_region(out, "O", &off, cfg->bm * dvp * 2);
    } else {
        /* O takes Q's bytes (dv <= d, same rows): see the file comment. */
        budget_region *r = &out->region[out->nregions++];
        r->name = "O";
        r->offset = out->region[0].offset;
        r->size = cfg->bm * dvp * 2;
    }
    add_region(out, "BAR", &off, bar_bytes);
    out->smem_bytes = align_up(off, 16) + SM90_SLACK;
    out->kv_slots = slots;
    out->q_slots = q_slots;
    return own_o;
}

/* family_ops.fit: see budget_fit() in budget.h. */
static fa4_status sm90_fit(fa4_layout *out, const device_limits *dev,
                           const fa4_problem *pb, const fa4_config *cfg,
                           char *why, size_t wn)
{
    const int d = pb->head_dim_qk, dv = problem_head_dim_v(pb), esize = dtype_bytes(pb->dtype);
    const int fp8 = pb->dtype == FA4_DTYPE_FP8_E4M3;
    int dp, dvp, wgs, threads, smem, need, bar_bytes, slots;


    /* What the family cannot run at all (config_enumerate stops on these). */
    if (pb->dtype != FA4_DTYPE_BF16 && pb->dtype != FA4_DTYPE_FP16 && !fp8) {
        snprintf(why, wn, "sm90 kernels run bf16, fp16 and fp8 e4m3 (dtype=%d)", (int)pb->dtype);
        return FA4_ENOTSUP;
    }
    if (pb->token_scales) {
        snprintf(why, wn, "sm90 kernels: token_scales=1 (per-token Q/K scales) not "
                 "implemented; only the sm100 family applies them");
        return FA4_ENOTSUP;
    }
    if (d < 64 || d > 256 || d % 8 != 0 || dv < 8 || dv > d || dv % 8 != 0) {
        snprintf(why, wn, "sm90 kernels need 64 <= head_dim_qk <= 256, head_dim_v <= "
                 "head_dim_qk, both multiples of 8 (head_dim_qk=%d head_dim_v=%d)", d, dv);
        return FA4_ENOTSUP;
    }
    if (pb->page_size && pb->page_size < 16) {
        snprintf(why, wn, "sm90 kernels: page_size=%d; paged K/V takes pages of at least 16 "
                 "rows (TMA boxes of K%s; the sm80 family reads any size)", pb->page_size,
                 fp8 ? "" : " and V");
        return FA4_ENOTSUP;
    }

    if (pb->varlen && dv > 192) {
        /* The per-sequence lengths and the clipped epilogue take registers
           that a d256 O accumulator leaves no room for (ptxas spills every
           bn): the sm80 family runs it. */
        snprintf(why, wn, "sm90 kernels: varlen with head_dim_v %d > 192 not implemented (the "
                 "sm80 family runs it)", dv);
        return FA4_ENOTSUP;
    }

    /* A config malformed for the family. */
    if ((cfg->splits != 1 && cfg->splits != 0) || cfg->pack_gqa < 0 || cfg->pack_gqa > 1 ||
        cfg->kv_split_warps) {
        snprintf(why, wn, "sm90: splits=%d pack_gqa=%d kv_split_warps=%d; supported: splits 1 "
                 "or 0 (the tail split), pack_gqa 0 or 1, kv_split_warps 0 (split-KV of every "
                 "tile is the sm80 family's)", cfg->splits, cfg->pack_gqa, cfg->kv_split_warps);
        return FA4_EINVAL;
    }
    if (cfg->pack_gqa) {
        /* A tile's rows are (query, head) pairs of one KV head's group
           (kernels/sm90/seqlen.cuh): Q and O move as boxes of whole groups. */
        const int group = problem_group(pb);
        if (group < 2) {
            snprintf(why, wn, "sm90: pack_gqa=1 needs grouped heads (heads_q=%d heads_kv=%d)",
                     pb->heads_q, pb->heads_kv);
            return FA4_EINVAL;
        }
        if (cfg->splits == 0) {
            snprintf(why, wn, "sm90: pack_gqa=1 with splits=0: the tail split's records are "
                     "per query head; use splits=1");
            return FA4_EINVAL;
        }
        if (!sm90_pack_applies(pb)) {
            snprintf(why, wn, "sm90: pack_gqa=1 needs a group dividing 64 (a 64-row O box of "
                     "whole groups); here group %d", group);
            return FA4_ENOTSUP;
        }
    }
    if (cfg->splits == 0 && (cfg->scheduler != FA4_SCHED_PLAIN || pb->varlen || pb->page_size ||
                             problem_has_mask(pb))) {
        /* Only tiles of equal length fill whole waves (kernels/sm90/tail.cuh). */
        snprintf(why, wn, "sm90: splits=0 (the tail split) needs the plain grid (scheduler 0, "
                 "here %d) and a dense batch without a causal mask or window",
                 (int)cfg->scheduler);
        return FA4_EINVAL;
    }
    if (cfg->splits == 0 && fp8 && dv > 128) {
        /* ptxas keeps O's epilogue addresses across the main loop in local
           memory with the second store path: d256 128x128 spills 184 B. */
        snprintf(why, wn, "sm90: splits=0 (the tail split) with fp8 inputs and head_dim_v %d "
                 "> 128 spills", dv);
        return FA4_ENOFIT;
    }
    wgs = cfg->consumer_wgs;
    if (wgs != 2 && wgs != 3) {
        snprintf(why, wn, "sm90: consumer_wgs=%d; supported: 2 3", wgs);
        return FA4_EINVAL;
    }
    if (cfg->bm != SM90_ROWS_PER_WG * wgs) {
        snprintf(why, wn, "sm90: bm=%d; consumer_wgs=%d needs bm=%d (64 rows per warpgroup)",
                 cfg->bm, wgs, SM90_ROWS_PER_WG * wgs);
        return FA4_EINVAL;
    }
    if (cfg->bn < 64 || cfg->bn > 256 || cfg->bn % 16 != 0) {
        snprintf(why, wn, "sm90: bn=%d; supported: 64..256 in steps of 16", cfg->bn);
        return FA4_EINVAL;
    }
    if (cfg->stages < 2 || cfg->stages > SM90_MAX_STAGES) {
        snprintf(why, wn, "sm90: stages=%d; supported: 2..%d", cfg->stages, SM90_MAX_STAGES);
        return FA4_EINVAL;
    }
    if (cfg->swizzle != 128 && cfg->swizzle != 64 && cfg->swizzle != 32) {
        snprintf(why, wn, "sm90: swizzle=%d; supported: 128 64 32", cfg->swizzle);
        return FA4_EINVAL;
    }
    if (cfg->fused_kv < 0 || cfg->fused_kv > 1 || cfg->q_tiles > 1 || cfg->cluster > 1) {
        snprintf(why, wn, "sm90: fused_kv=%d q_tiles=%d cluster=%d; supported: fused_kv 0 "
                 "or 1, 1 Q tile, no cluster", cfg->fused_kv, cfg->q_tiles, cfg->cluster);
        return FA4_EINVAL;
    }
    if (cfg->scheduler != FA4_SCHED_PLAIN && cfg->scheduler != FA4_SCHED_PERSISTENT &&
        cfg->scheduler != FA4_SCHED_LPT && cfg->scheduler != FA4_SCHED_DYNAMIC) {
        snprintf(why, wn, "sm90: scheduler=%d; supported: 0 plain, 1 persistent, "
                 "2 longest-first, 3 dynamic", (int)cfg->scheduler);
        return FA4_EINVAL;
    }
    if (pb->varlen && pb->page_size && cfg->scheduler != FA4_SCHED_PLAIN) {
        /* The dynamic scheduler's walk over the sequences and the block
           table do not fit the producer's 24 registers (spills; 32 leaves
           the consumers too few). */
        snprintf(why, wn, "sm90: varlen queries over paged K/V take the plain grid (scheduler "
                 "%d: its walk over the sequences and the block table spill the producer)",
                 (int)cfg->scheduler);
        return FA4_EINVAL;
    }
    if (pb->varlen && cfg->scheduler != FA4_SCHED_DYNAMIC && cfg->scheduler != FA4_SCHED_PLAIN) {
        snprintf(why, wn, "sm90: varlen tiles come from the plain (0) or the dynamic "
                 "scheduler (3); scheduler=%d", (int)cfg->scheduler);
        return FA4_EINVAL;
    }
    if (cfg->exp2_emu_pct < 0 || cfg->exp2_emu_pct > 100 || cfg->rescale_threshold < 0 ||
        cfg->rescale_threshold > 16) {
        snprintf(why, wn, "sm90: exp2_emu_pct=%d (0..100), rescale_threshold=%d (0..16)",
                 cfg->exp2_emu_pct, cfg->rescale_threshold);
        return FA4_EINVAL;
    }
    /* (config_validate, which budget_fit asks first, checked -1..100.) */
    if (cfg->tanh_poly_pct > 0 && !sm90_tanh_poly_fits(pb)) {
        snprintf(why, wn, pb->softcap > 0
                 ? "sm90: tanh_poly_pct=%d: softmax_scale / softcap is below 1e-5, which "
                   "leaves the polynomial's coefficients outside fp32's range; use 0"
                 : "sm90: tanh_poly_pct=%d applies to softcapped problems only (0..100 "
                   "with softcap > 0, else 0 or -1)", cfg->tanh_poly_pct);
        return FA4_EINVAL;
    }
    if (cfg->producer_regs < 24 || cfg->producer_regs > 256 || cfg->producer_regs % 8 ||
        cfg->consumer_regs < 24 || cfg->consumer_regs > 256 || cfg->consumer_regs % 8) {
        snprintf(why, wn, "sm90: producer_regs=%d consumer_regs=%d; setmaxnreg takes "
                 "multiples of 8 in 24..256", cfg->producer_regs, cfg->consumer_regs);
        return FA4_EINVAL;
    }

    if (fp8 && (cfg->bn % cfg->swizzle != 0 ||
                cfg->rescale_threshold > 8)) {
        /* V^T tiles are whole chunks of swizzle-many keys; P x 2^(8 - threshold)
           must stay below e4m3's 448 (kernels/sm90/kernel.cuh, FA4_P_LOG2). */
        snprintf(why, wn, "sm90 fp8: swizzle=%d bn=%d rescale_threshold=%d; fp8 needs "
                 "swizzle 32, 64 or 128, bn a multiple of the swizzle, threshold <= 8",
                 cfg->swizzle, cfg->bn, cfg->rescale_threshold);
        return FA4_EINVAL;
    }

    /* Q and K pad to whole chunks of swizzle / esize columns, O (16-bit)
       and V (or V^T's rows) to whole O chunks (kernels/sm90/kernel.cuh). */
    dp = sm90_pad_dim(d, cfg->swizzle / esize);
    dvp = sm90_pad_dim(dv, cfg->swizzle / 2);
    threads = 128 * (1 + wgs);
    if (sm90_carve(out, dev, pb, cfg, dp, dvp, 1) && sm90_q_double(pb, cfg)) {
        /* Two Q slots only where they pay and cost nothing else: O keeps its
           own bytes, the fused ring its slots, and it all fits. */
        fa4_layout two = *out;
        if (sm90_carve(&two, dev, pb, cfg, dp, dvp, 2) && two.kv_slots == out->kv_slots &&
            two.smem_bytes <= dev->smem_per_block_optin)
            *out = two;
    }
    smem = out->smem_bytes;
    slots = out->kv_slots;
    bar_bytes = out->region[out->nregions - 1].size;   /* BAR, the last region */
    need = sm90_varlen_need(pb, cfg->bn, cfg->scheduler, cfg->swizzle, wgs);

    out->threads = threads;
    out->regs_estimate = need;
    out->head_group = sm90_head_group(dev, pb, cfg);

    if (smem > dev->smem_per_block_optin) {
        /* O in Q's bytes, or (fp8) a region of its own. */
        char o_text[32];
        if (fp8)
            snprintf(o_text, sizeof o_text, "O %d", cfg->bm * dvp * 2);
        else
            snprintf(o_text, sizeof o_text, "O in Q");
        if (cfg->fused_kv)
            snprintf(why, wn, "smem %d B > opt-in limit %d B (Q %d + KV %d slots x %d, %s, "
                     "BAR %d, slack %d; fused_kv needs at least 2 x stages - 1 = %d slots)",
                     smem, dev->smem_per_block_optin, out->region[0].size, slots,
                     cfg->bn * dp * esize, o_text, bar_bytes, SM90_SLACK, 2 * cfg->stages - 1);
        else
            snprintf(why, wn, "smem %d B > opt-in limit %d B (Q %d + K %d + V %d, %s, "
                     "BAR %d, slack %d)", smem, dev->smem_per_block_optin,
                     out->region[0].size, out->region[1].size, out->region[2].size, o_text,
                     bar_bytes, SM90_SLACK);
        return FA4_ENOFIT;
    }
    if (threads > dev->max_threads_per_block) {
        snprintf(why, wn, "threads %d > limit %d", threads, dev->max_threads_per_block);
        return FA4_ENOFIT;
    }
    /* setmaxnreg moves registers within the CTA's launch allocation (ptxas
       gives each of THREADS threads the file's share, in steps of 8): the
       consumers can gain only what the producer gives back.  24/240 with
       two consumer warpgroups and 32/160 with three use all of it; 32/240
       asks for 1024 more and the consumers' setmaxnreg.inc waits forever. */
    if (cfg->consumer_regs * 128 * wgs + cfg->producer_regs * 128 >
        (SM90_REG_FILE / threads) / 8 * 8 * threads) {
        snprintf(why, wn, "regs %d x %d consumer threads + %d x 128 producer threads > %d "
                 "(the launch allocation of %d threads)", cfg->consumer_regs, 128 * wgs,
                 cfg->producer_regs, (SM90_REG_FILE / threads) / 8 * 8 * threads, threads);
        return FA4_ENOFIT;
    }
    if (sm90_paged_producer_spills(pb, cfg)) {
        snprintf(why, wn, "paged K/V: producer_regs=%d with the %s scheduler%s spills (the box "
                 "loop over the block table); the plain grid, the dynamic scheduler over the "
                 "fused ring, or 32 producer registers fit", cfg->producer_regs,
                 cfg->scheduler == FA4_SCHED_PERSISTENT ? "persistent"
                 : cfg->scheduler == FA4_SCHED_LPT ? "longest-first" : "dynamic",
                 cfg->scheduler == FA4_SCHED_DYNAMIC ? " and split K/V rings" : "");
        return FA4_ENOFIT;
    }
    if (need > cfg->consumer_regs) {
        snprintf(why, wn, "consumer regs estimate %d > consumer_regs %d (O %d + S %d + "
                 "P %d + %d + persistent scheduler %d + varlen %d)", need, cfg->consumer_regs,
                 dvp / 2, cfg->bn / 2, cfg->bn * esize / 8, SM90_REG_OVERHEAD,
                 sm90_persistent_extra(dv, cfg->bn, cfg->scheduler, cfg->swizzle, wgs,
                                       sm90_loop_masked(pb)),
                 sm90_varlen_extra(pb, cfg->bn, cfg->scheduler, wgs));
        return FA4_ENOFIT;
    }
    return FA4_OK;
}

/* Paged K/V: how many boxes' page numbers the producer loads together
** before issuing their TMA loads (kernels/sm90/mainloop.cuh,
** load_paged_block): 4 under the plain grid, one latency of the block
** table per 4 boxes instead of per box; 1 under the persistent schedulers,
** whose tile state the producer also holds: the dynamic one spills 12-24 B
** holding even 2 with 24 registers, and 16 B holding 4 with 32 (192x64,
** three consumer warpgroups; ptxas, CUDA 13.0). */
static int sm90_page_gather(const fa4_config *cfg)
{
    return cfg->scheduler == FA4_SCHED_PLAIN ? 4 : 1;
}

/* 1 when each consumer warpgroup of a masked tile takes its own key range
** (FA4_WG_RANGES, mask.cuh): where the tile spans more queries than a key
** block, its first warpgroups' rows end blocks before the tile's and they
** skip those wholly masked blocks (d64 causal 2k-16k, 192x128, and d256
** causal, 128x64/80: 1-6% faster on the H100).  Where it does not
** (128x128, 128x176) a skip is rare, and the extra code alone cost the
** d64 causal 512-1k tiles 2-5% (bench/NOTES.md, sm90 v16). */
static int sm90_wg_ranges(const fa4_problem *pb, const fa4_config *cfg)
{
    const int queries = cfg->pack_gqa ? cfg->bm / problem_group(pb) : cfg->bm;
    return problem_has_mask(pb) && cfg->consumer_wgs > 1 && queries > cfg->bn;
}

/* 1 when a consumer warpgroup whose rows see only the first half of its
** first key block (the diagonal one under a causal mask) runs that block's
** GEMMs and softmax at half width (FA4_DIAG_HALF, mask.cuh): masked 16-bit
** problems whose BN / 2 is a wgmma width (a multiple of 16, at least 64),
** in tiles that take no warpgroup key ranges.  There (128x128) it saves
** warpgroup 0 half of every diagonal block: d64 causal 512-1k 4-5%, d128
** causal 512-4k 1-3% on the H100.  In the taller tiles (192x128) the ranges
** already skip the masked blocks, only half the warpgroups' last blocks
** are half blocks, and it measured -1..+4% (bench/NOTES.md, sm90 v17). */
static int sm90_diag_half(const fa4_problem *pb, const fa4_config *cfg)
{
    return problem_has_mask(pb) && pb->dtype != FA4_DTYPE_FP8_E4M3 && cfg->bn % 32 == 0 &&
           cfg->bn >= 128 && !sm90_wg_ranges(pb, cfg);
}

/* The default tanh_poly_pct for TILE (softcap's tanh on the FMA pipe,
** kernels/sm90/softmax.cuh, softcap_scores), from H100 measurements under
** cap 30, each share in one process, then against HEAD's default in
** alternating processes (bench/NOTES.md, sm90 v24).  bf16 under the
** constant max, where the share's scale and max are folded into the
** polynomial: d64 75% (16k -8.6%, 4 x 4k -9.7%), causal 50% (16k -5.7%);
** d128 causal on the long 128 x 176 tile 50% (16k -4.4%; the 128 x 128
** dynamic tile of 4 x 4k +2%), d128 otherwise none (16k within the noise).
** fp8: d64 75% (-0.6% against 50%, within the noise), d128 50% (75% +11%).
** Other 16-bit problems (fp16, caps above 52) keep 50% at head dims up to
** 64, as measured before the fold (sm90 v23).  ptxas schedules each share
** its own way, so shares in between can lose (d64 50% +5% where 75% gains):
** fa4-tune tries 0 and 50 beside the default.  Dense batches, and one
** serving shape: causal d65-128 chunks of dense queries over a paged cache
** under the constant max, in two-warpgroup tiles, 50% (b8 x 512 queries
** over 8k keys, d128 32/8, pages of 64, cap 50: -4.5..-10% in nine rounds
** across processes; bench/NOTES.md, sm90 v25).  Three
** warpgroups' 160 registers spill with it (192 x 64: 8 B), and so does the
** varlen d64 causal default (192 x 112, dynamic); varlen queries take none
** (their chunk gained in three rounds of six). */
static int sm90_tanh_poly_default(const fa4_problem *pb, const fa4_config *tile)
{
    const int d = pb->head_dim_qk, masked = problem_has_mask(pb);

    if (!sm90_tanh_poly_fits(pb) || pb->varlen)
        return 0;
    if (pb->page_size)
        return problem_softcap_fixed_max(pb) && masked && d > 64 && d <= 128 &&
               tile->consumer_wgs == 2 ? 50 : 0;
    if (pb->dtype == FA4_DTYPE_FP8_E4M3)
        return d <= 64 ? 75 : d <= 128 ? 50 : 0;
    if (problem_softcap_fixed_max(pb)) {
        if (d <= 64)
            return masked ? 50 : 75;
        return d <= 128 && masked && tile->bn >= 176 ? 50 : 0;
    }
    return d <= 64 ? 50 : 0;
}

/* family_ops.defines: the sm90 constants of kernels/README.md
** (FA4_KV_SLOTS only with the fused ring, FA4_VT_KEYS only for fp8,
** FA4_TAIL_SPLIT only for splits=0, FA4_SOFTCAP_FIXED_MAX only under a
** small bf16 cap (problem_softcap_fixed_max), FA4_WG_RANGES only where
** sm90_wg_ranges(), FA4_DIAG_HALF only where sm90_diag_half() and
** FA4_PAGE_GATHER only for paged K/V:
** the other sources, and so their cubin cache keys, stay as they were). */
static int sm90_defines(char *buf, size_t size, const fa4_problem *pb,
                        const fa4_config *cfg, const fa4_layout *l)
{
    /* -1: the default share (a config stored, or built by a caller,
       before the field existed, as the rule gave it then). */
    const int tanh_pct = cfg->tanh_poly_pct < 0 ? sm90_tanh_poly_default(pb, cfg)
                                                : cfg->tanh_poly_pct;
    int m = 0;

    if (cfg->fused_kv)
        budget_append(buf, size, &m, "#define FA4_KV_SLOTS %d\n", l->kv_slots);
    if (l->q_slots == 2)   /* FA4_Q_SLOTS only where two: sm90_q_double() */
        budget_append(buf, size, &m, "#define FA4_Q_SLOTS 2\n");
    if (pb->dtype == FA4_DTYPE_FP8_E4M3)   /* the V^T copy's grid step (launch_sm90.c) */
        budget_append(buf, size, &m, "#define FA4_VT_KEYS %d\n#define FA4_VT_BLOCKS %d\n",
                      SM90_VT_KEYS, SM90_VT_BLOCKS);
    budget_append(buf, size, &m,
                  "#define FA4_CONSUMER_WGS %d\n#define FA4_PRODUCER_REGS %d\n"
                  "#define FA4_CONSUMER_REGS %d\n#define FA4_FUSED_KV %d\n"
                  "#define FA4_PINGPONG %d\n#define FA4_EXP2_EMU_PCT %d\n"
                  "#define FA4_RESCALE_THRESHOLD %d\n#define FA4_SCHEDULER %d\n"
                  "#define FA4_CLUSTER %d\n#define FA4_VARLEN %d\n#define FA4_PAGED %d\n"
                  "#define FA4_PAGE_BOX %d\n",
                  cfg->consumer_wgs, cfg->producer_regs, cfg->consumer_regs,
                  cfg->fused_kv, cfg->pingpong, cfg->exp2_emu_pct,
                  cfg->rescale_threshold, (int)cfg->scheduler,
                  cfg->cluster > 0 ? cfg->cluster : 1, pb->varlen != 0, pb->page_size > 0,
                  pb->page_size > 0 ? sm90_page_box(pb->page_size, cfg->bn) : 0);
    if (cfg->splits == 0)      /* FA4_TAIL_SPLIT only where it is on */
        budget_append(buf, size, &m, "#define FA4_TAIL_SPLIT 1\n");
    if (cfg->late_k_release)   /* likewise FA4_LATE_K_RELEASE */
        budget_append(buf, size, &m, "#define FA4_LATE_K_RELEASE 1\n");
    if (cfg->pack_gqa)         /* and GQA packing, with its group as a constant */
        budget_append(buf, size, &m, "#define FA4_PACK_GQA 1\n#define FA4_GROUP %d\n",
                      problem_group(pb));
    if (problem_softcap_fixed_max(pb))
        budget_append(buf, size, &m, "#define FA4_SOFTCAP_FIXED_MAX 1\n");
    if (tanh_pct)             /* tanh's share off MUFU (softcap only: sm90_fit) */
        budget_append(buf, size, &m, "#define FA4_TANH_POLY_PCT %d\n", tanh_pct);
    if (sm90_wg_ranges(pb, cfg))
        budget_append(buf, size, &m, "#define FA4_WG_RANGES 1\n");
    if (sm90_diag_half(pb, cfg))
        budget_append(buf, size, &m, "#define FA4_DIAG_HALF 1\n");
    if (l->head_group)         /* FA4_HEAD_GROUP only where sm90_head_group() */
        budget_append(buf, size, &m, "#define FA4_HEAD_GROUP %d\n", l->head_group);
    if (pb->page_size > 0)     /* FA4_PAGE_GATHER only where pages are */
        budget_append(buf, size, &m, "#define FA4_PAGE_GATHER %d\n", sm90_page_gather(cfg));
    return m;
}

/* Fill the fields every sm90 config shares. */
static void sm90_base(fa4_config *c, int wgs, int bn, int stages)
{
    fa4_config init = FA4_CONFIG_INIT;
    *c = init;
    c->family = FA4_FAMILY_SM90;
    c->consumer_wgs = wgs;
    c->bm = SM90_ROWS_PER_WG * wgs;
    c->bn = bn;
    c->stages = stages;
    c->swizzle = 128;
    c->fused_kv = 0;
    c->q_tiles = 1;
    c->cluster = 1;
    sm90_reg_split(wgs, &c->producer_regs, &c->consumer_regs);
    c->rescale_threshold = SM90_RESCALE_THRESHOLD;
    c->exp2_emu_pct = 0;
    c->pingpong = 0;
    c->scheduler = FA4_SCHED_PLAIN;
}

/* family_ops.candidates: consumer_wgs {2, 3} x bn {64..256 step 16} x
** stages {2..4} x pingpong {0, 1} x scheduler (plain, persistent; with a
** mask plain, longest-first and dynamic; varlen plain and dynamic) x K/V
** layout and softmax variant: split rings with 128 B swizzle, plain, with
** exp2_emu_pct 25 and with late_k_release (softcapped problems also with
** tanh_poly_pct 50, alone and with late_k_release); the fused ring with 128 B
** swizzle, plain and with late_k_release; 64 and 32 B swizzle, split and
** fused, plain only (neither variant touches shared memory, so the two
** most frequent winning layouts carry them); for GQA batches whose group
** divides 64, each 128 B swizzle config also with pack_gqa.
** Shapes whose registers cannot fit (bn too wide for the O accumulator)
** are left out here; the rest go through the budget filter. */
static int sm90_candidates(fa4_config *out, int max, const device_limits *dev,
                           const fa4_problem *pb)
{
    static const int variants[][3] = { /* exp2_emu_pct, late_k, tanh_poly_pct */
        { 0, 0, 0 }, { 0, 1, 0 }, { 25, 0, 0 }, { 0, 0, 50 }, { 0, 1, 50 }
    };
    static const int layouts[][3] = { /* swizzle, fused_kv, how many of variants[] */
        { 128, 0, 3 }, { 64, 0, 1 }, { 32, 0, 1 }, { 128, 1, 2 }, { 64, 1, 1 }, { 32, 1, 1 }
    };
    const int nlayouts = (int)(sizeof layouts / sizeof layouts[0]);
    const int dv = problem_head_dim_v(pb), esize = dtype_bytes(pb->dtype);
    /* Without a mask every tile costs the same: the static persistent walk
       balances.  With one, longest-first and the dynamic draw compete. */
    static const fa4_scheduler plain_scheds[] = { FA4_SCHED_PLAIN, FA4_SCHED_PERSISTENT };
    static const fa4_scheduler masked_scheds[] = { FA4_SCHED_PLAIN, FA4_SCHED_LPT,
                                                   FA4_SCHED_DYNAMIC };
    static const fa4_scheduler varlen_scheds[] = { FA4_SCHED_PLAIN, FA4_SCHED_DYNAMIC };
    const fa4_scheduler *scheds = pb->varlen ? varlen_scheds
                                  : problem_has_mask(pb) ? masked_scheds : plain_scheds;
    const int nsched = pb->varlen ? 2 : problem_has_mask(pb) ? 3 : 2;
    /* GQA packing where it applies, with the 128 B swizzle layouts (the
       most frequent winners) to keep the space small. */
    const int packs = sm90_pack_applies(pb);
    /* Softcap adds the 128 B split ring's variants with half of the tanh
       on the FMA pipe (sm90_fit refuses it for other problems). */
    const int tanh_variants = sm90_tanh_poly_fits(pb) ? 2 : 0;
    /* Without a cap the field keeps FA4_CONFIG_INIT's -1, as the default
       does: the config text stays as it was before the field. */
    const int tanh_none = pb->softcap > 0 ? 0 : -1;
    int n = 0, wgs, bn, st, pp, e, sc, lo, pk;

    (void)dev;
    for (wgs = 2; wgs <= 3; wgs++)
        for (bn = 64; bn <= 256; bn += 16) {
            int pr, cr;
            sm90_reg_split(wgs, &pr, &cr);
            for (lo = 0; lo < nlayouts; lo++) {
                if (sm90_consumer_need(dv, bn, FA4_SCHED_PLAIN, layouts[lo][0], esize, wgs, 0) > cr)
                    continue;
                /* fp8: V^T tiles are whole chunks of swizzle-many keys. */
                if (esize == 1 && (layouts[lo][0] == 32 || bn % layouts[lo][0] != 0))
                    continue;
                for (st = 2; st <= SM90_MAX_STAGES; st++)
                    for (pp = 0; pp <= 1; pp++)
                        for (e = 0; e < layouts[lo][2] + (lo == 0 ? tanh_variants : 0); e++)
                            for (sc = 0; sc < nsched; sc++)
                                for (pk = 0; pk <= (layouts[lo][0] == 128 ? packs : 0); pk++) {
                                    if (n < max) {
                                        sm90_base(&out[n], wgs, bn, st);
                                        out[n].swizzle = layouts[lo][0];
                                        out[n].fused_kv = layouts[lo][1];
                                        out[n].pingpong = pp;
                                        out[n].exp2_emu_pct = variants[e][0];
                                        out[n].late_k_release = variants[e][1];
                                        out[n].tanh_poly_pct = variants[e][2] ? variants[e][2]
                                                                              : tanh_none;
                                        out[n].scheduler = scheds[sc];
                                        out[n].pack_gqa = pk;
                                        if (scheds[sc] == FA4_SCHED_PLAIN && !pk &&
                                            sm90_tail_split_fits(pb, wgs))
                                            out[n].splits = 0;
                                    }
                                    n++;
                                }
            }
        }
    return max == 0 ? n : (n < max ? n : max);
}

/* The dense default, from H100 measurements (2026-11-22, 16k tokens,
** hidden 2048, bf16, TFLOP/s): two stages; ping-pong on (d128 8k: 673 vs
** 587); no exp2 emulation (647 vs 578 at 4k).  d64 192x128 (3 consumers:
** 555 vs 430 with 2), d96 below, d128 128x176 above 2k keys (692 vs 673
** at 8k; 414 vs 428 at 512) else 128x128, d192 128x112, d256 128x80 (807
** vs 731 with bn 64).  Scheduler: without a mask and up to 2k keys (4k at
** d64) the persistent one (its epilogue overlaps the next tile's loads:
** d128 512 508 vs 428, 2k 635 vs 605, but 4k 630 vs 644; d64 512 389 vs
** 319, 4k 525 vs 508), where its registers fit;
** otherwise plain, causal tiles reversed (d128 causal 1k: 381 plain vs 333
** persistent vs 271 static longest-first), except short causal d64 and
** d128, where the dynamic scheduler wins (below; 447 at d128 causal 1k). */
static void sm90_dense_heuristic(fa4_config *out, const device_limits *dev,
                                 const fa4_problem *pb)
{
    const int d = pb->head_dim_qk;
    (void)dev;
    if (d <= 64 && problem_has_mask(pb) && pb->seqlen_k <= 2048) {
        /* fa4-tune, d64 causal (bench/NOTES.md, sm90 v5): the dynamic
           scheduler with the fused ring; up to 1k keys 128x128, 3 stages,
           64 B swizzle, no ping-pong (+23% over v4's default at 1k); at 2k
           192x96, 3 stages, 64 B, ping-pong (+13% over 192x128 plain). */
        if (pb->seqlen_k <= 1024) {
            sm90_base(out, 2, 128, 3);
        } else {
            sm90_base(out, 3, 96, 3);
            out->pingpong = 1;
        }
        out->swizzle = 64;
        out->fused_kv = 1;
        out->scheduler = FA4_SCHED_DYNAMIC;
        return;
    } else if (d <= 64)
        sm90_base(out, 3, 128, 2);
    else if (d <= 96) {
        /* fa4-tune, d96 (sm90 v5): 64 B swizzle stores 96-column tiles where
           128 B pads them to 128; with the fused ring it won by 30% at 4k
           (128x192, persistent) and by 25% causal at 2k (128x128, 3 stages,
           dynamic) over the padded 128x128 default. */
        if (problem_has_mask(pb) && pb->seqlen_k <= 4096) {
            sm90_base(out, 2, 128, 3);
            out->fused_kv = 1;
            out->scheduler = FA4_SCHED_DYNAMIC;
        } else if (!problem_has_mask(pb)) {
            sm90_base(out, 2, 192, 2);
            out->fused_kv = 1;
            out->scheduler = FA4_SCHED_PERSISTENT;
        } else {
            sm90_base(out, 2, 128, 2);
            out->pingpong = 1;
        }
        out->swizzle = 64;
        return;
    }
    else if (d <= 128 && d > 96 && !problem_has_mask(pb) && pb->seqlen_k >= 8192) {
        /* fa4-tune on H100: 3 consumer warpgroups, 192x80, 3 stages won at 8k
           (+4%) and 16k (+10%) non-causal (bench/NOTES.md, sm90 v2). */
        sm90_base(out, 3, 80, 3);
        return;                             /* the 16k winner ran without ping-pong */
    } else if (d <= 128 && problem_has_mask(pb) && pb->seqlen_k <= 4096) {
        /* fa4-tune, d128 causal (sm90 v5): 128x128, 2 stages, the dynamic
           scheduler: +17-21% at 512-1k (split rings, ping-pong), +16% / +7%
           at 2k / 4k (fused ring, no ping-pong). */
        sm90_base(out, 2, 128, 2);
        out->scheduler = FA4_SCHED_DYNAMIC;
        if (pb->seqlen_k > 1024)
            out->fused_kv = 1;
        else
            out->pingpong = 1;
        return;
    } else if (d <= 128)
        sm90_base(out, 2, pb->seqlen_k > 2048 ? 176 : 128, 2);
    else if (d <= 192)
        sm90_base(out, 2, 112, 2);
    else if (pb->seqlen_k <= SM90_D256_SHORT_KEYS && !pb->varlen && !pb->page_size) {
        /* H100, d256 at 512-2k keys (bench/NOTES.md, sm90 v19): 128x64
           with the fused ring in 5 slots under the persistent scheduler
           (no mask, below; -1.4..-4.5% against the seed's plain-grid
           128x64 / 128x80) or the dynamic one (mask; -1.4..-2.4%): one CTA
           per SM, so the plain grid exposes each tile's prologue and
           epilogue.  From 4k the plain grid's 128x80 stays ahead. */
        sm90_base(out, 2, 64, 3);
        out->fused_kv = 1;
        if (problem_has_mask(pb))
            out->scheduler = FA4_SCHED_DYNAMIC;
    } else
        sm90_base(out, 2, 80, 2);
    out->pingpong = 1;
    if (!problem_has_mask(pb) && pb->seqlen_k <= (d <= 64 ? 4096 : 2048) &&
        sm90_sched_fits(pb, out, FA4_SCHED_PERSISTENT))
        out->scheduler = FA4_SCHED_PERSISTENT;
}

/* fp8 inputs, from the first H100 runs (bench/NOTES.md, fp8 v1; dense,
** 16k tokens, TFLOP/s): d64 three consumer warpgroups, 192x128, 64 B
** swizzle (646 vs 472 with 128x128); d96..d128 128x192, 64 B swizzle (933
** vs 908 with 128x128 at 128 B); wider heads 128x128, 128 B swizzle (d256
** 1239; plan_bench's inputs then held e4m3 NaN codes, fixed 2026-11-25).
** Two stages, ping-pong; the dynamic scheduler for short causal
** where its registers fit (128x192 and d256 128x128 do not: without
** this check their default fell through to the first candidate that fits,
** 128x64 without ping-pong).  Later measurements refine it in the rules
** below (dense d96..d128 and masked d128, d64 dense).  Varlen and paged
** batches start from it (sm90_tile_heuristic). */
static void sm90_fp8_heuristic(fa4_config *out, const fa4_problem *pb)
{
    /* d96..d128 dense without a mask, or masked from 4k keys: three
       warpgroups of 192 x 96, V^T in 32-key chunks (32 B swizzle), 4
       stages, no ping-pong.  A warpgroup's softmax and P take as long per
       block at fp8 as at bf16 while its GEMMs halve, so a third warpgroup
       keeps the tensor cores busier than a wider block (H100, finite
       inputs, against 128 x 192 with two: 16k -5.5..-8%, causal 16k
       -3.6..-4.8%, 4 x 4k -4.2..-4.6%, d96 -6.6%; bench/NOTES.md,
       2026-11-25). */
    if (pb->head_dim_qk > 64 && pb->head_dim_qk <= 128 && !pb->varlen && !pb->page_size &&
        (!problem_has_mask(pb) || pb->seqlen_k >= 4096)) {
        sm90_base(out, 3, 96, 4);
        out->swizzle = 32;
        return;
    }
    /* d128 dense under a mask, fewer than 4k keys: 128x128, the fused ring
       in 3 stages, ping-pong, the dynamic scheduler (H100, causal, against
       the 128 x 192 below on the plain grid: 2k -8.5%, 1k -16.8%; 4k is
       the rule above's, -6.5%; bench/NOTES.md, sm90 v21). */
    if (pb->head_dim_qk > 96 && pb->head_dim_qk <= 128 && !pb->varlen && !pb->page_size) {
        sm90_base(out, 2, 128, 3);
        out->fused_kv = 1;
        out->pingpong = 1;
        out->scheduler = FA4_SCHED_DYNAMIC;
        return;
    }
    if (pb->head_dim_qk <= 64)
        sm90_base(out, 3, 128, 2);
    else
        sm90_base(out, 2, pb->head_dim_qk <= 128 ? 192 : 128, 2);
    out->pingpong = 1;
    out->swizzle = pb->head_dim_qk <= 128 ? 64 : 128;
    if (problem_has_mask(pb) && pb->seqlen_k <= 4096 && sm90_sched_fits(pb, out, FA4_SCHED_DYNAMIC))
        out->scheduler = FA4_SCHED_DYNAMIC;
    /* d64 dense: the persistent scheduler (H100, 32 heads, against the
       plain grid with the tail split: 8 x 2k -4.7..-5.0%, 2 x 8k -3.9%,
       16k -2.6%, 4 x 4k level with 192 x 96; bench/NOTES.md, sm90 v22). */
    if (pb->head_dim_qk <= 64 && !problem_has_mask(pb) && !pb->varlen && !pb->page_size &&
        sm90_sched_fits(pb, out, FA4_SCHED_PERSISTENT))
        out->scheduler = FA4_SCHED_PERSISTENT;
}

/* The default tile: the dense default (paged: bn a whole number of
** pages when pages are smaller than a block, so boxes are whole pages);
** varlen takes the dynamic
** scheduler (it hands out only real tiles, where the plain grid is sized for
** the longest sequence), bn at most 144 with a mask and 128 without (d128
** 128x144 spills 24 B without one, not with one: the estimate is not that
** precise) and narrowed in
** steps of 16 until its registers fit, or when none does with three
** consumer warpgroups, two (128x128, two stages); the plain grid only when
** nothing fits (and always for varlen queries over pages, whose sequence
** walk the producer cannot hold).  fp8 takes the same steps from its own
** default, bn kept a
** whole number of swizzle spans (V^T chunks): steps of the swizzle.  The
** fp8 varlen and paged defaults are the rule's, not measured yet. */
static void sm90_tile_heuristic(fa4_config *out, const device_limits *dev,
                                const fa4_problem *pb)
{
    const int fp8 = pb->dtype == FA4_DTYPE_FP8_E4M3;
    const int cap = problem_has_mask(pb) ? 144 : 128;
    fa4_config c;
    int bn, pass, step;

    if (fp8)
        sm90_fp8_heuristic(out, pb);
    else
        sm90_dense_heuristic(out, dev, pb);
    if (pb->page_size && pb->page_size < out->bn && out->bn % pb->page_size != 0)
        out->bn = out->bn / pb->page_size * pb->page_size;   /* page-sized boxes */
    if (fp8 && out->bn % out->swizzle != 0)
        out->bn = out->bn / out->swizzle * out->swizzle;
    /* Paged: a scheduler the 24-register producer cannot take (sm90_fit;
       the dense defaults' persistent walk up to 2k keys, the dynamic one
       with split rings) gives way to the plain grid. */
    if (sm90_paged_producer_spills(pb, out))
        out->scheduler = FA4_SCHED_PLAIN;
    if (out->scheduler == FA4_SCHED_PLAIN && sm90_tail_split_fits(pb, out->consumer_wgs))
        out->splits = 0;   /* H100: d128 16k 3.25 -> 3.14 ms (bench/NOTES.md, tail split) */
    if (!pb->varlen)
        return;
    for (pass = 0; pass < 2; pass++) {
        c = *out;
        if (pass == 1) {
            if (out->consumer_wgs == 2)
                break;
            sm90_base(&c, 2, 128, 2);
            c.pingpong = 1;
            c.swizzle = out->swizzle;
        }
        step = fp8 ? c.swizzle : 16;
        for (bn = (c.bn < cap ? c.bn : cap) / step * step; bn >= 64; bn -= step)
            if (sm90_varlen_need(pb, bn, FA4_SCHED_DYNAMIC, c.swizzle, c.consumer_wgs) <= c.consumer_regs) {
                *out = c;
                out->bn = bn;
                /* varlen over pages: the plain grid (sm90_fit) */
                out->scheduler = pb->page_size ? FA4_SCHED_PLAIN : FA4_SCHED_DYNAMIC;
                return;
            }
    }
    out->scheduler = FA4_SCHED_PLAIN;
}

/* family_ops.heuristic: sm90_tile_heuristic()'s tile, with late_k (K freed
** after the row max, P converted among the exponentials) for 16-bit inputs
** with two consumer warpgroups, and with three at d64 on the plain grid.
** H100, seed configs: two warpgroups gain 2.5-3.6% (d128 causal 4k and
** 16k, GQA 32/8 causal 16k), d256 +-0.5%; three at d64, plain grid, 8k and
** 16k, 1-4%; three at d128 and on persistent d64 tiles gain or lose 1-3%
** by shape, and fp8 d128 loses 2-5%: left to fa4-tune (bench/NOTES.md,
** sm90 v8 and v9).  GQA packing for grouped heads under a mask: H100,
** dense causal, group 8: 5-8% (d128 8k, d64 16k), group 4: 1% (d128 16k);
** without a mask it gains nothing measurable (bench/NOTES.md, sm90 v10);
** varlen and paged causal prefill 0-2% (group 8), chunks of 512 queries
** over 8k cached keys within the noise (bench/NOTES.md, serving packing). */
static void sm90_heuristic(fa4_config *out, const device_limits *dev,
                           const fa4_problem *pb)
{
    sm90_tile_heuristic(out, dev, pb);
    out->late_k_release = pb->dtype != FA4_DTYPE_FP8_E4M3 &&
                          (out->consumer_wgs == 2 ||
                           (problem_head_dim_v(pb) <= 64 && out->scheduler == FA4_SCHED_PLAIN));
    /* Softcap under the constant max: MUFU carries tanh and exp2 for each
       score.  At d64 (half d128's tensor work per score) a quarter of the
       exponentials on the FMA pipe gains 5% (16k: 6.15 -> 5.85 ms), where
       the tanh stays there (with a share of it on the FMA pipe the
       exponentials' share costs 6-12%: sm90 v24); the three-warpgroup d128
       tile gains 2-3% from ping-pong and late_k (16k: 3.58 -> 3.50 ms;
       bench/NOTES.md, softcap's constant max). */
    if (pb->softcap > 0)
        out->tanh_poly_pct = sm90_tanh_poly_default(pb, out);
    if (problem_softcap_fixed_max(pb)) {
        if (problem_head_dim_v(pb) <= 64 && !out->tanh_poly_pct)
            out->exp2_emu_pct = 25;
        else if (out->consumer_wgs == 3) {
            out->pingpong = 1;
            out->late_k_release = 1;
        }
    }
    /* GQA packing under a mask or when a query tile is not full (fewer
       padded rows); where the tail split is not on, so it is never lost. */
    if (sm90_pack_applies(pb) && out->splits != 0 &&
        (problem_has_mask(pb) || pb->seqlen_q < out->bm))
        out->pack_gqa = 1;
}

const family_ops family_sm90 = {
    FA4_FAMILY_SM90,
    "sm90",
    90,
    90,
    sm90_fit,
    sm90_defines,
    sm90_candidates,
    sm90_heuristic,
};
