/*
** budget_sm100.c -- the sm100 (Blackwell, sm_100a) family: shared-memory
** layout, tensor-memory column map, config space and default.  The rules
** are the seeds' FA4Config (KERNEL_NOTES.md, "SM100 budgets"); the kernel
** they describe is kernels/sm100/kernel.cuh, which receives every number
** computed here as a compile-time constant.
**
** Shape of a CTA (2Q layout): BM = 256 query rows as two tiles of
** MMA_M = 128, one per softmax warpgroup; 512 threads = softmax WG 0,
** softmax WG 1, correction WG, and a fourth WG whose warp 0 loads (TMA)
** and warp 1 issues the MMAs.
**
** Tensor memory (512 columns x 128 lanes x 32 bit):
**     S0 at 0, S1 at BN, O0 at 2*BN, O1 at 2*BN + padded_dv;  P aliases S.
** so 2*BN + 2*padded_dv <= 512, and the automatic BN is
**     BN = align_down(min(256, 256 - padded_dv), MMA_K).
**
** Shared memory, low -> high, from the 1024-aligned dynamic base:
**     split:  Q | K stages | V stages | CORR | QSCALE | KSCALE | BAR | TMEMPTR
**     fused:  Q | KV ring (K, V alternate) | ROPE | CORR | ... same tail
**
** How the byte counts come out (worked backwards from the seeds' numbers,
** and checked by tests/test_budget_sm100.c):
**
**   fixed   = TMEMPTR 4 B + CORR 2*128*4 = 1024 B + QSCALE BM*scale (0)
**             + Q  BM * padded_dqk * esize
**             + 8 B * (8 + 2*PV_STAGES + QK_CHUNKS) barriers        (a)
**   per slot = BN * max(padded_dqk, padded_dv) * esize + 2 * 8 B    (b)
**   slots   = (carveout - fixed) / per slot, rounded down           (c)
**   odd  -> fused ring of `slots` tiles;
**   even -> split: slots/2 K stages and slots/2 V stages, and the K
**           stages are staged by depth chunk: (QK_CHUNKS-1)*stages*2
**           more barriers when they still fit, else QK_CHUNKS := 1. (d)
**   The slot count (c) decides the ring; the bytes are then what the
**   regions hold (sm100_shape's q/k/v/kv/bar fields, which sm100_fit
**   places): a fused slot holds either tile, so BN * max(...) each; a
**   split K stage BN * padded_dqk and a V stage BN * padded_dv, so with
**   head_dim_v < head_dim_qk the split rings take less than (c) counted.
**
**   (a) The barriers of the kernel (kernels/sm100/kernel.cuh, enum
**       sm100_bar) that do not scale with the ring: S_FULL[2], O_FULL[2],
**       C_FULL[2], C_EMPTY[2] (= 8), P_FULL[2][PV_STAGES = 2] (P is
**       written back in two column halves), Q1_FULL[QK_CHUNKS] (Q tile 1
**       arrives per 128-byte-swizzle depth chunk; Q tile 0 rides on the
**       first K barrier).  QK_CHUNKS = gcd(padded_dqk / swizzle_elems,
**       padded_dqk / MMA_K): 2 for d128, 1 for d64.
**   (b) Each ring slot carries a full and an empty barrier: 16 B.
**   (c) The slot count counts (b) per slot, so the barrier region grows
**       with the ring and the total stays exact, with no padding: every
**       tile is a multiple of 1024 B (BN multiple of 16, 64 elements of
**       128 B swizzle rows; fp8: 64 B rows), CORR starts 1024-aligned and
**       QSCALE/KSCALE are multiples of 8, so BAR is 8-aligned as is.
**   (d) In split mode each K stage has one full/empty pair per depth
**       chunk, so the MMA may start on chunk 0 while chunk 1 lands.
**   ROPE: the fused ring keeps ceil(slots/2) rope buffers of
**       BN * rope_depth; libfa4 problems carry no separate rope part of
**       the depth, so rope_depth = 0 and the region is empty (omitted).
**
**   bf16 d128: pad 128, BN 128, QK_CHUNKS 2 -> 14 fixed barriers.
**       fixed = 4 + 1024 + 65536 + 112 = 66676; per slot 32768 + 16;
**       (232448 - 66676) / 32784 = 5 (odd: fused);
**       66676 + 5 * 32784 = 230,596 B  (24 barriers).
**   bf16 d64: pad 64, BN 192, QK_CHUNKS 1 -> 13 fixed barriers.
**       fixed = 4 + 1024 + 32768 + 104 = 33900; per slot 24576 + 16;
**       (232448 - 33900) / 24592 = 8 (even: 4 K + 4 V stages);
**       33900 + 8 * 24592 = 230,636 B  (29 barriers).
**   fp8 d128 (64 B swizzle, MMA_K 32, no per-token scales): pad 128,
**       BN 128, QK_CHUNKS gcd(2, 4) = 2; fixed = 33908; per slot 16400;
**       12 slots (even: 6 K + 6 V stages) = 230,708 B, plus 12 K-chunk
**       barriers = 230,804 B.
**   d256: pad 256, BN = 0 < 64: unsupported in 2Q.
**   An explicit bn must be a multiple of 2 * MMA_K: P goes back to TMEM in
**   two column halves of whole MMA k-steps (PV_STAGES = 2).
*/
#include <stdio.h>
#include <string.h>

#include "family.h"

#define SM100_Q_TILES      2
#define SM100_MMA_M        128
#define SM100_BM           (SM100_Q_TILES * SM100_MMA_M)
#define SM100_TMEM_MAX     512
#define SM100_PV_STAGES    2
#define SM100_MBAR_BYTES   8
#define SM100_CORR_BYTES   (2 * 128 * 4)
#define SM100_TMEMPTR_BYTES 4
#define SM100_THREADS      512
#define SM100_SMEM_DEFAULT 232448   /* 228 KiB - 1 KiB reserved */

/* Bytes of one element; 0 for an unknown dtype. */
static int sm100_esize(fa4_dtype dtype)
{
    switch (dtype) {
    case FA4_DTYPE_BF16:
    case FA4_DTYPE_FP16:
        return 2;
    case FA4_DTYPE_FP8_E4M3:
        return 1;
    }
    return 0;
}

/* K extent of one tcgen05.mma: 16 for 16-bit inputs, 32 for fp8. */
static int sm100_mma_k(int esize) { return esize == 1 ? 32 : 16; }

/* Swizzle span in bytes: 128 B for 16-bit types, 64 B for fp8. */
static int sm100_swizzle(int esize) { return esize == 1 ? 64 : 128; }

static int align_up(int x, int a) { return (x + a - 1) / a * a; }
static int align_down(int x, int a) { return x / a * a; }
static int gcd(int a, int b) { while (b) { int t = a % b; a = b; b = t; } return a; }

/* Smallest power of two >= COLS and >= 32 (tcgen05.alloc granularity). */
static int tmem_alloc_cols(int cols)
{
    int n = 32;
    while (n < cols)
        n *= 2;
    return n;
}

/* Everything the budget derives from (problem, config) before placing
** regions: depths, BN, the ring, the barrier count. */
typedef struct sm100_shape {
    int esize, swz_elems, mma_k;
    int dqk, dv, pad_qk, pad_dv;
    int bn;
    int qk_chunks;          /* depth chunks of Q1 (and of K in split mode) */
    int k_chunks;           /* barrier pairs per K stage (split); 1 if fused */
    int slots;              /* ring tiles (fused) or K+V stages (split) */
    int fused;
    int stages;             /* fused: slots; split: slots / 2 */
    int nbar;
    /* Region bytes, the one account that the budget sums and sm100_fit
       lays out: Q, the ring (fused: kv; split: k and v), the barriers. */
    int q_bytes, kv_bytes, k_bytes, v_bytes, bar_bytes;
    int smem;               /* bytes, exact sum of the regions */
    int tmem_used;
} sm100_shape;

static void add_region(fa4_layout *l, const char *name, int *off, int size)
{
    budget_region *r = &l->region[l->nregions++];
    r->name = name;
    r->offset = *off;
    r->size = size;
    *off += size;
}

/* The automatic BN of a padded V depth: 256 - padded_dv capped at 256,
** aligned down to MMA_K; <= 0 when nothing fits. */
static int sm100_auto_bn(int pad_dv, int mma_k)
{
    int bn = SM100_TMEM_MAX / 2 - pad_dv;
    if (bn > 256)
        bn = 256;
    return bn > 0 ? align_down(bn, mma_k) : 0;
}

/* Derive the shape; returns FA4_OK or FA4_ENOFIT/EINVAL/ENOTSUP with WHY. */
static fa4_status sm100_shape_of(sm100_shape *s, const device_limits *dev,
                                 const fa4_problem *pb, const fa4_config *cfg,
                                 char *why, size_t wn)
{
    int carve = dev && dev->smem_per_block_optin > 0
                    ? dev->smem_per_block_optin : SM100_SMEM_DEFAULT;
    int tmem_max = dev && dev->tmem_columns > 0 ? dev->tmem_columns
                                                : SM100_TMEM_MAX;
    int fixed, slot_bytes, per_slot, scale_bytes = 0;

    memset(s, 0, sizeof(*s));
    s->esize = sm100_esize(pb->dtype);
    if (s->esize == 0) {
        snprintf(why, wn, "dtype=%d unknown", (int)pb->dtype);
        return FA4_EINVAL;
    }
    if (cfg->bm != 0 && cfg->bm != SM100_BM) {
        snprintf(why, wn, "bm=%d; sm100 uses 2 query tiles of 128 (bm=256)",
                 cfg->bm);
        return FA4_EINVAL;
    }
    if (cfg->q_tiles > 1 && cfg->q_tiles != SM100_Q_TILES) {
        snprintf(why, wn, "q_tiles=%d; sm100 supports 2", cfg->q_tiles);
        return FA4_EINVAL;
    }
    s->mma_k = sm100_mma_k(s->esize);
    if (cfg->splits != 1 || cfg->pack_gqa || cfg->kv_split_warps) {
        snprintf(why, wn, "sm100: splits=%d pack_gqa=%d kv_split_warps=%d; supported: 1 0 0",
                 cfg->splits, cfg->pack_gqa, cfg->kv_split_warps);
        return FA4_EINVAL;
    }
    /* The launch (lib/launch_sm100.c) runs one CTA per query-tile pair,
       head and batch, with no cluster: the kernel has no other schedule. */
    if (cfg->cluster > 1 || cfg->scheduler != FA4_SCHED_PLAIN) {
        snprintf(why, wn, "sm100: cluster=%d scheduler=%d; supported: cluster 1, the "
                 "plain scheduler", cfg->cluster, (int)cfg->scheduler);
        return FA4_EINVAL;
    }
    if (pb->varlen || pb->page_size || pb->softcap > 0 || pb->attention_sinks) {
        snprintf(why, wn, "sm100 kernels: varlen=%d page_size=%d softcap=%g attention_sinks=%d "
                 "not implemented", pb->varlen, pb->page_size, (double)pb->softcap,
                 pb->attention_sinks);
        return FA4_ENOTSUP;
    }
    s->swz_elems = sm100_swizzle(s->esize) / s->esize;
    if (cfg->swizzle != 0 && cfg->swizzle != sm100_swizzle(s->esize)) {
        snprintf(why, wn, "swizzle=%d; sm100 %s uses %d", cfg->swizzle,
                 s->esize == 1 ? "fp8" : "bf16/fp16", sm100_swizzle(s->esize));
        return FA4_EINVAL;
    }
    s->dqk = pb->head_dim_qk;
    s->dv = pb->head_dim_v > 0 ? pb->head_dim_v : pb->head_dim_qk;
    if (s->dqk <= 0 || s->dqk > 256 || s->dv > s->dqk) {
        snprintf(why, wn, "head_dim_qk=%d head_dim_v=%d; sm100 needs "
                 "head_dim_v <= head_dim_qk <= 256", s->dqk, s->dv);
        return FA4_ENOTSUP;
    }
    s->pad_qk = align_up(s->dqk, s->swz_elems);
    s->pad_dv = align_up(s->dv, s->swz_elems);

    /* BN: automatic from TMEM, or the config's checked. */
    if (cfg->bn == 0) {
        s->bn = sm100_auto_bn(s->pad_dv, s->mma_k);
    } else {
        s->bn = cfg->bn;
        /* P goes back in PV_STAGES column halves of whole MMA k-steps. */
        if (s->bn % (SM100_PV_STAGES * s->mma_k) != 0) {
            snprintf(why, wn, "bn=%d not a multiple of %d (%d P halves of "
                     "MMA_K %d)", s->bn, SM100_PV_STAGES * s->mma_k,
                     SM100_PV_STAGES, s->mma_k);
            return FA4_EINVAL;
        }
        if (s->bn > 256) {
            snprintf(why, wn, "bn=%d > 256 (tcgen05.mma N limit)", s->bn);
            return FA4_ENOFIT;
        }
    }
    if (s->bn < 64) {
        snprintf(why, wn, "bn=%d < 64 (head_dim_v %d padded to %d leaves "
                 "TMEM for bn=%d)", s->bn, s->dv, s->pad_dv,
                 sm100_auto_bn(s->pad_dv, s->mma_k));
        return FA4_ENOFIT;
    }
    s->tmem_used = 2 * s->bn + 2 * s->pad_dv;
    if (s->tmem_used > tmem_max) {
        snprintf(why, wn, "tmem %d columns > %d", s->tmem_used, tmem_max);
        return FA4_ENOFIT;
    }

    /* Shared memory: fixed part, then as many ring slots as fit. */
    s->qk_chunks = gcd(s->pad_qk / s->swz_elems, s->pad_qk / s->mma_k);
    s->q_bytes = SM100_BM * s->pad_qk * s->esize;
    fixed = SM100_TMEMPTR_BYTES + SM100_CORR_BYTES + s->q_bytes
            + SM100_BM * scale_bytes;
    slot_bytes = s->bn * (s->pad_qk > s->pad_dv ? s->pad_qk : s->pad_dv) * s->esize;
    per_slot = slot_bytes + 2 * SM100_MBAR_BYTES;

    if (cfg->stages == 0) {
        int room = carve - fixed
                   - SM100_MBAR_BYTES * (8 + 2 * SM100_PV_STAGES + s->qk_chunks);
        s->slots = room > 0 ? room / per_slot : 0;
        s->fused = s->slots % 2;
    } else {
        s->fused = cfg->fused_kv ? 1 : 0;
        s->slots = s->fused ? cfg->stages : 2 * cfg->stages;
    }
    s->stages = s->fused ? s->slots : s->slots / 2;
    if (s->fused) {
        s->kv_bytes = s->slots * slot_bytes;
    } else {
        s->k_bytes = s->stages * s->bn * s->pad_qk * s->esize;
        s->v_bytes = s->stages * s->bn * s->pad_dv * s->esize;
    }
    s->k_chunks = 1;
    s->nbar = 8 + 2 * SM100_PV_STAGES + s->qk_chunks
              + (s->fused ? 2 * s->slots : 2 * s->stages * 2);
    s->smem = fixed + s->kv_bytes + s->k_bytes + s->v_bytes + SM100_MBAR_BYTES * s->nbar;
    if (!s->fused && s->qk_chunks > 1) {
        int extra = (s->qk_chunks - 1) * s->stages * 2;
        if (s->smem + SM100_MBAR_BYTES * extra < carve) {
            s->smem += SM100_MBAR_BYTES * extra;
            s->nbar += extra;
            s->k_chunks = s->qk_chunks;
        }
    }
    s->bar_bytes = SM100_MBAR_BYTES * s->nbar;

    if (s->stages < 2) {
        snprintf(why, wn, "kv stages %d < 2 (bn=%d, %s)", s->stages, s->bn,
                 s->fused ? "fused ring" : "split rings");
        return FA4_ENOFIT;
    }
    if (s->smem > carve) {
        snprintf(why, wn, "smem %d B > opt-in limit %d B", s->smem, carve);
        return FA4_ENOFIT;
    }
    return FA4_OK;
}

/* family_ops.fit: see budget_fit() in budget.h. */
static fa4_status sm100_fit(fa4_layout *out, const device_limits *dev,
                            const fa4_problem *pb, const fa4_config *cfg,
                            char *why, size_t wn)
{
    sm100_shape s;
    fa4_status st;
    int off = 0;

    if ((st = sm100_shape_of(&s, dev, pb, cfg, why, wn)) != FA4_OK)
        return st;

    add_region(out, "Q", &off, s.q_bytes);
    if (s.fused) {
        add_region(out, "KV", &off, s.kv_bytes);
    } else {
        add_region(out, "K", &off, s.k_bytes);
        add_region(out, "V", &off, s.v_bytes);
    }
    add_region(out, "CORR", &off, SM100_CORR_BYTES);
    add_region(out, "QSCALE", &off, 0);
    add_region(out, "KSCALE", &off, 0);
    add_region(out, "BAR", &off, s.bar_bytes);
    add_region(out, "TMEMPTR", &off, SM100_TMEMPTR_BYTES);
    if (off != s.smem) {          /* the two accountings must agree */
        snprintf(why, wn, "internal: layout %d B != budget %d B", off, s.smem);
        return FA4_EINVAL;
    }

    out->threads = SM100_THREADS;
    out->smem_bytes = off;
    /* 512 threads at one CTA per SM: 65536 / 512 registers each. */
    out->regs_estimate = 128;
    out->kv_slots = s.fused ? s.slots : s.stages;
    out->tmem_columns = tmem_alloc_cols(s.tmem_used);
    out->tmem_s0 = 0;
    out->tmem_s1 = s.bn;
    out->tmem_o0 = 2 * s.bn;
    out->tmem_o1 = 2 * s.bn + s.pad_dv;
    return FA4_OK;
}

/* Region NAME of L, or NULL (local, so this file stands alone). */
static const budget_region *find_region(const fa4_layout *l, const char *name)
{
    int i;
    for (i = 0; i < l->nregions; i++)
        if (strcmp(l->region[i].name, name) == 0)
            return &l->region[i];
    return NULL;
}

/* family_ops.defines: the sm100 constants of kernels/README.md, plus the
** pipeline counts the kernel's barrier enum is built from (the kernel
** static_asserts that its enum has FA4_NUM_BARRIERS entries). */
static int sm100_defines(char *buf, size_t size, const fa4_problem *pb,
                         const fa4_config *cfg, const fa4_layout *l)
{
    const budget_region *bar = find_region(l, "BAR");
    int esize = sm100_esize(pb->dtype);
    int dv = pb->head_dim_v > 0 ? pb->head_dim_v : pb->head_dim_qk;
    int fused = find_region(l, "KV") != NULL;
    int swz, mma_k, pad_qk, pad_dv, qk_chunks, k_chunks = 1, nbar, n;

    if (esize == 0 || bar == NULL || l->kv_slots <= 0)
        return -1;
    swz = sm100_swizzle(esize) / esize;
    mma_k = sm100_mma_k(esize);
    pad_qk = align_up(pb->head_dim_qk, swz);
    pad_dv = align_up(dv, swz);
    qk_chunks = gcd(pad_qk / swz, pad_qk / mma_k);
    nbar = bar->size / SM100_MBAR_BYTES;
    /* split: nbar = fixed + 2 * stages * (k_chunks + 1), see (d) above;
       k_chunks fell back to 1 when the extra barriers did not fit. */
    if (!fused)
        k_chunks = (nbar - (8 + 2 * SM100_PV_STAGES + qk_chunks))
                   / (2 * l->kv_slots) - 1;
    n = snprintf(buf, size,
                 "#define FA4_Q_TILES %d\n"
                 "#define FA4_KV_SLOTS %d\n"
                 "#define FA4_FUSED_KV %d\n"
                 "#define FA4_TMEM_COLS %d\n"
                 "#define FA4_TMEM_S0 %d\n"
                 "#define FA4_TMEM_S1 %d\n"
                 "#define FA4_TMEM_O0 %d\n"
                 "#define FA4_TMEM_O1 %d\n"
                 "#define FA4_PAD_DQK %d\n"
                 "#define FA4_PAD_DV %d\n"
                 "#define FA4_QK_CHUNKS %d\n"
                 "#define FA4_K_CHUNKS %d\n"
                 "#define FA4_PV_STAGES %d\n"
                 "#define FA4_NUM_BARRIERS %d\n"
                 "#define FA4_EXP2_EMU_PCT %d\n"
                 "#define FA4_RESCALE_THRESHOLD %d\n",
                 SM100_Q_TILES, l->kv_slots, fused, l->tmem_columns,
                 l->tmem_s0, l->tmem_s1, l->tmem_o0, l->tmem_o1,
                 pad_qk, pad_dv, qk_chunks, k_chunks, SM100_PV_STAGES, nbar,
                 cfg->exp2_emu_pct, cfg->rescale_threshold);
    return n < 0 || (size_t)n >= size ? -1 : n;
}

/* Fill the fields every sm100 config shares. */
static void sm100_base(fa4_config *c, int esize)
{
    fa4_config init = FA4_CONFIG_INIT;
    *c = init;
    c->family = FA4_FAMILY_SM100;
    c->bm = SM100_BM;
    c->q_tiles = SM100_Q_TILES;
    c->swizzle = sm100_swizzle(esize);
    c->cluster = 1;
    c->scheduler = FA4_SCHED_PLAIN;
}

/* Resolve BN (0: automatic) and the slot rule into C's bn, stages and
** fused_kv; leaves them 0 when the shape does not fit. */
static void sm100_resolve(fa4_config *c, const device_limits *dev,
                          const fa4_problem *pb, int bn)
{
    sm100_shape s;
    char why[160];
    fa4_config probe = *c;

    probe.bn = bn;
    probe.stages = 0;
    if (sm100_shape_of(&s, dev, pb, &probe, why, sizeof(why)) != FA4_OK)
        s.bn = bn, s.stages = 0, s.fused = 0;
    c->bn = s.bn;
    c->stages = s.stages;
    c->fused_kv = s.fused;
}

/* family_ops.candidates: BN automatic and every multiple of 2*MMA_K (32
** for 16-bit types, 64 for fp8) below it down to 64, each with the slot rule's ring; exp2 emulation {0, 25, 50} %;
** rescale threshold {0, 8}. */
static int sm100_candidates(fa4_config *out, int max, const device_limits *dev,
                            const fa4_problem *pb)
{
    static const int emu[] = { 0, 25, 50 };
    static const int thr[] = { 0, 8 };
    int esize = sm100_esize(pb->dtype);
    int dv = pb->head_dim_v > 0 ? pb->head_dim_v : pb->head_dim_qk;
    int bns[8], nbn = 0, n = 0, auto_bn, bn, step, i, e, t;

    if (esize == 0 || dv <= 0)
        return 0;
    auto_bn = sm100_auto_bn(align_up(dv, sm100_swizzle(esize) / esize),
                            sm100_mma_k(esize));
    bns[nbn++] = auto_bn;                 /* may be < 64: fit says why */
    step = 2 * sm100_mma_k(esize);
    for (bn = align_down(auto_bn - 1, step); bn >= 64 && nbn < 8; bn -= step)
        bns[nbn++] = bn;

    for (i = 0; i < nbn; i++)
        for (e = 0; e < 3; e++)
            for (t = 0; t < 2; t++, n++) {
                if (n >= max)
                    continue;
                sm100_base(&out[n], esize);
                sm100_resolve(&out[n], dev, pb, bns[i]);
                out[n].exp2_emu_pct = emu[e];
                out[n].rescale_threshold = thr[t];
            }
    return n;
}

/* family_ops.heuristic: BN automatic, the slot rule's ring, 25 % of exp2
** on the FMA units, lazy rescale at 2^8 (the FA4 defaults). */
static void sm100_heuristic(fa4_config *out, const device_limits *dev,
                            const fa4_problem *pb)
{
    int esize = sm100_esize(pb->dtype);

    sm100_base(out, esize ? esize : 2);
    sm100_resolve(out, dev, pb, 0);
    out->exp2_emu_pct = 25;
    out->rescale_threshold = 8;
}

const family_ops family_sm100 = {
    FA4_FAMILY_SM100, "sm100", 100, 100,
    sm100_fit, sm100_defines, sm100_candidates, sm100_heuristic
};
