/*
** budget_sm100.h -- the arithmetic of the sm100 budget model
** (budget_sm100.c): the shape a (problem, config) takes under the seeds'
** rules (KERNEL_NOTES.md, "SM100 budgets"), before budget_fit() asks
** whether the kernel runs it.  The library's one entry is budget_fit();
** this one lets tests check the seeds' numbers for layouts the kernel
** does not build (fp8).
*/
#ifndef FA4_BUDGET_SM100_H
#define FA4_BUDGET_SM100_H

#include "fa4.h"
#include "device.h"

#define SM100_MMA_M        128      /* query rows of one tcgen05.mma tile */
#define SM100_SLACK        1024     /* the kernel aligns its smem base up to 1024 B */
#define SM100_DECODE_BM    32       /* the decode mode's config bm: M of tcgen05.mma.ws */

/* 1 when CONFIG is the sm100 family's decode mode (bm 32). */
static inline int sm100_is_decode(const fa4_config *config)
{
    return config->family == FA4_FAMILY_SM100 && config->bm == SM100_DECODE_BM;
}

typedef struct sm100_shape {
    int q_tiles;            /* query tiles of MMA_M rows per CTA: 2 or 1 */
    int pair;               /* CTAs sharing each MMA: 1, or 2 (config cluster 2:
                               cta_group::2, M 256, each CTA holding half of
                               every K and V tile) */
    int bm;                 /* q_tiles * 128 */
    int esize, swizzle, swz_elems, mma_k;
    int dqk, dv, pad_qk, pad_dv;
    int bn;
    int k_rows, v_cols;     /* of each K / V tile, what one CTA holds: bn / pair
                               keys of K, pad_dv / pair columns of V */
    int qk_chunks;          /* depth chunks of Q1 (and of K in split mode) */
    int k_chunks;           /* barrier pairs per K stage (split); 1 if fused */
    int slots;              /* ring tiles (fused) or K+V stages (split) */
    int fused;
    int stages;             /* fused: slots; split: slots / 2 */
    int nbar;               /* mbarriers, all of them */
    /* Region bytes, the one account that the budget sums and the layout
       places: Q, the ring (fused: kv; split: k and v), CORR, barriers. */
    int q_bytes, kv_bytes, k_bytes, v_bytes, corr_bytes, bar_bytes;
    int regions;            /* bytes, exact sum of the regions */
    int smem;               /* regions + SM100_SLACK: what a launch requests */
    int tmem_used;          /* columns the map reaches: 2 * bn + q_tiles * pad_dv */
    int tmem_s1, tmem_o0, tmem_o1;   /* o1: -1 with one query tile */
    /* Rope mode (a fused ring with pad_qk > pad_dv): a slot holds a V
       tile or K's first pad_dv columns, and K's last rope_depth columns
       go to one of rope_bufs buffers of k_rows x rope_depth (ROPE). */
    int rope_depth;         /* pad_qk - pad_dv, the seeds' rope_depth() */
    int rope_bufs;          /* ceil(slots / 2) in rope mode, else 0 */
    int rope_bytes;         /* the ROPE region: rope_bufs buffers */
    /* Per-token Q/K scales (problem token_scales): QSCALE of bm floats,
       KSCALE of ks_bufs buffers of bn floats, one per K tile in flight
       (fused: ceil(slots / 2); split: stages); 0 without. */
    int scales;
    int ks_bufs, qscale_bytes, kscale_bytes;
    /* The decode mode (bm 32, budget_sm100.c "Decode mode"): P's two
       buffers of 32 x bn, RED (the row-max exchange), and the N of each
       O = P V piece (pv_n columns of V each). */
    int decode;
    int p_bytes, red_bytes, pv_n;
} sm100_shape;

/*
** The shape of CONFIG for PROBLEM on DEV (DEV may be NULL: the seeds'
** 232,448 B and 512 columns).  bn 0 and stages 0 are the automatic
** choices of the seeds' rules (the TMEM bound, then the slot rule); bm,
** q_tiles and swizzle 0 take the family's; cluster 2 sizes the CTA pair
** (per CTA: half of each K and V tile); bm 32 sizes the decode mode
** (bn 0: 128, or 64 where 128 leaves no two stages).  Any dtype the seeds describe
** (fp8 included) is sized here.  Returns FA4_OK, or FA4_ENOFIT /
** FA4_EINVAL / FA4_ENOTSUP with WHY.  Pure; thread-safe.
*/
fa4_status budget_sm100_shape(sm100_shape *out, const device_limits *dev,
                              const fa4_problem *problem, const fa4_config *config,
                              char *why, size_t why_size);

/* Query rows per KV head up to which a problem is decode-shaped: the
** sm80 family's serving threshold (config.c), two tiles of 32 rows. */
#define SM100_DECODE_MAX_ROWS 64

/*
** 1 when PROBLEM is a decode shape the sm100 decode mode (bm 32) runs:
** seqlen_q x (heads_q / heads_kv) <= SM100_DECODE_MAX_ROWS, bf16 or fp16,
** a dense batch without softcap, sinks or per-token scales.  The
** family's heuristic then takes the decode mode, and config.c keeps sm100
** first for it on an opted-in device.  Pure; thread-safe.
*/
int budget_sm100_decode_suits(const fa4_problem *problem);

#endif
