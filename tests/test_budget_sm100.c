/*
** test_budget_sm100.c -- the sm100 budget model against the seeds' worked
** numbers (KERNEL_NOTES.md, "SM100 budgets"; the derivation is at the top
** of lib/budget_sm100.c), the CTA-pair mode's and fp8's other swizzle and
** head dims' numbers derived there (the seeds give none), and the
** invariants every enumerated sm100 config must keep: TMEM <= 512
** columns, smem <= the carveout, regions contiguous and the tiles
** 1024-aligned; and the decode mode's (bm 32) tiles, bytes, TMEM map,
** choice and refusals.  No GPU needed.
*/
#include <stdlib.h>

#include "tap.h"
#include "budget.h"
#include "config.h"
#include "family.h"
#include "budget_sm100.h"
#include "compile_test_util.h"

static device_limits dev;

/* A problem of DTYPE with head dim D (V the same). */
static fa4_problem problem(fa4_dtype dtype, int d)
{
    return ct_problem(dtype, 1, 4096, d, d, 0);
}
/* A config with bm, bn, stages and swizzle left to the family (0). */
static fa4_config auto_config(void)
{
    fa4_config c = FA4_CONFIG_INIT;
    c.family = FA4_FAMILY_SM100;
    return c;
}

/* The heuristic's config of P: every field resolved. */
static fa4_config resolved(const fa4_problem *p)
{
    fa4_config c;
    family_sm100.heuristic(&c, &dev, p);
    return c;
}

/* Size of region NAME, -1 when absent. */
static int rsize(const fa4_layout *l, const char *name)
{
    const budget_region *r = budget_region_find(l, name);
    return r ? r->size : -1;
}

static int roff(const fa4_layout *l, const char *name)
{
    const budget_region *r = budget_region_find(l, name);
    return r ? r->offset : -1;
}

/* The TMEM column past the last one L's map reaches: O1 + padded dv
** (2Q) or O0 + padded dv (1Q, no O1). */
static int tmem_end(const fa4_layout *l, const fa4_problem *p, int q_tiles)
{
    int dv = p->head_dim_v > 0 ? p->head_dim_v : p->head_dim_qk;
    return (q_tiles == 2 ? l->tmem_o1 : l->tmem_o0) + (dv + 63) / 64 * 64;
}

/* 1 when L's regions follow one another with no gap and, with the
** 1024 B the kernel may spend aligning its base, sum to smem. */
static int contiguous(const fa4_layout *l)
{
    int i, off = 0;
    for (i = 0; i < l->nregions; i++) {
        if (l->region[i].offset != off)
            return 0;
        off += l->region[i].size;
    }
    return off + SM100_SLACK == l->smem_bytes;
}

/* CFG of P fits with SMEM bytes requested, NBAR barriers, split K/V
** stages of K_TILE / V_TILE bytes (0: a fused ring of SLOTS) and the
** compile-time constants DEFS must hold; WHAT names it. */
static void fp8_fits(const fa4_problem *p, const fa4_config *cfg, int smem, int nbar,
                     int stages, int k_tile, int v_tile, const char *defs_want,
                     const char *what)
{
    fa4_layout l;
    char why[256], defs[4096];
    fa4_status st = budget_fit(&l, &dev, p, cfg, why, sizeof why);
    int n = st == FA4_OK ? budget_defines(defs, sizeof defs, p, cfg, &l) : -1;

    ok(st == FA4_OK && l.smem_bytes == smem && rsize(&l, "BAR") == 8 * nbar && contiguous(&l)
       && rsize(&l, "K") == stages * k_tile && rsize(&l, "V") == stages * v_tile
       && l.kv_slots == stages && n > 0 && strstr(defs, defs_want),
       "%s fits: %d split stages, %d barriers, %d B requested (%s)", what, stages, nbar,
       smem, st == FA4_OK ? "ok" : why);
}

/* fp8: the seeds' d128 (64 B swizzle) and the derived 128 B swizzle, d256
** (1Q) and d64 numbers (lib/budget_sm100.c's header), the CTA pairs, the
** enumerated space and what is refused. */
static void check_fp8(void)
{
    fa4_problem p = problem(FA4_DTYPE_FP8_E4M3, 128);
    fa4_config c = resolved(&p);
    fa4_layout l;
    config_space sp;
    char why[256];
    fa4_status st;
    int i, n64 = 0, n128 = 0, pairs = 0, bad = 0;

    ok(c.bm == 256 && c.q_tiles == 2 && c.bn == 128 && c.stages == 6 && c.fused_kv == 0
       && c.swizzle == 64 && c.exp2_emu_pct == 25 && c.rescale_threshold == 8,
       "fp8 d128 heuristic: 2Q, bn 128, 6 split stages, the seeds' 64 B swizzle");
    fp8_fits(&p, &c, 231828, 50, 6, 128 * 128, 128 * 128, "#define FA4_K_CHUNKS 2\n",
             "fp8 d128 64 B (the seeds' 230,804 B of regions)");
    c.swizzle = 128;
    fp8_fits(&p, &c, 231724, 37, 6, 128 * 128, 128 * 128, "#define FA4_QK_CHUNKS 1\n",
             "fp8 d128 128 B (230,700 B of regions, K in one chunk)");
    c.stages = 7;
    c.fused_kv = 1;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && rsize(&l, "KV") == 7 * 128 * 128 && l.kv_slots == 7 && contiguous(&l),
       "fp8 d128 128 B as a fused ring of 7 slots of 16 KiB fits (%s)",
       st == FA4_OK ? "ok" : why);
    c = resolved(&p);
    c.rescale_threshold = 9;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_EINVAL && strstr(why, "rescale_threshold=9"),
       "fp8 with rescale_threshold 9 is refused: P's offset 2^(8 - threshold) (%s)", why);
    c = resolved(&p);
    c.bn = 96;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_EINVAL && strstr(why, "bn=96 not a multiple of 64"),
       "fp8 bn 96 is refused: P halves of whole k32 steps (%s)", why);

    p = problem(FA4_DTYPE_FP8_E4M3, 256);
    c = resolved(&p);
    ok(c.bm == 128 && c.q_tiles == 1 && c.bn == 128 && c.stages == 3 && !c.fused_kv,
       "fp8 d256 heuristic: 1Q, bn 128, 3 split stages");
    fp8_fits(&p, &c, 231228, 39, 3, 128 * 256, 128 * 256, "#define FA4_K_CHUNKS 4\n",
             "fp8 d256 1Q 64 B (230,204 B of regions, K by 4 depth chunks)");
    c.swizzle = 128;
    fp8_fits(&p, &c, 231132, 27, 3, 128 * 256, 128 * 256, "#define FA4_K_CHUNKS 2\n",
             "fp8 d256 1Q 128 B (230,108 B of regions, K by 2 depth chunks)");

    p = problem(FA4_DTYPE_FP8_E4M3, 64);
    c = resolved(&p);
    ok(c.q_tiles == 2 && c.bn == 192 && c.stages == 8 && !c.fused_kv,
       "fp8 d64 heuristic: 2Q, bn 192, 17 slots capped to 8 split stages");
    fp8_fits(&p, &c, 215404, 45, 8, 192 * 64, 192 * 64, "#define FA4_KV_SLOTS 8\n",
             "fp8 d64 64 B (214,380 B of regions)");

    /* CTA pairs: d128 at 64 B (half of V: one 64-column box), d256 1Q at
       128 B; at 128 B d128 cannot pair (64 columns are no 128 B box) */
    p = problem(FA4_DTYPE_FP8_E4M3, 128);
    c = resolved(&p);
    c.cluster = 2;
    c.stages = 8;
    fp8_fits(&p, &c, 166388, 62, 8, 64 * 128, 128 * 64, "#define FA4_CTA_GROUP 2\n",
             "fp8 d128 CTA pair 64 B (165,364 B of regions)");
    c.swizzle = 128;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_ENOFIT && strstr(why, "64 columns, not whole 128-column swizzle boxes"),
       "an fp8 d128 CTA pair at 128 B swizzle is refused (%s)", why);
    p = problem(FA4_DTYPE_FP8_E4M3, 256);
    c = resolved(&p);
    c.cluster = 2;
    c.swizzle = 128;
    c.stages = 6;
    fp8_fits(&p, &c, 231276, 45, 6, 64 * 256, 128 * 128, "#define FA4_CTA_GROUP 2\n",
             "fp8 d256 1Q CTA pair 128 B (230,252 B of regions)");

    /* the space: 64 B everywhere, 128 B beside it where it pads no more */
    p = problem(FA4_DTYPE_FP8_E4M3, 128);
    st = config_enumerate(&sp, &dev, &p, FA4_FAMILY_SM100, why, sizeof why);
    for (i = 0; st == FA4_OK && i < sp.count; i++) {
        n64 += sp.configs[i].swizzle == 64;
        n128 += sp.configs[i].swizzle == 128;
        pairs += sp.configs[i].cluster == 2;
        bad += sp.configs[i].rescale_threshold > 8 || sp.configs[i].bn % 64 != 0;
    }
    ok(st == FA4_OK && sp.count == 36 && n64 == 24 && n128 == 12 && pairs == 12 && bad == 0,
       "fp8 d128 enumerates bn {128, 64} x 3 exp2 x 2 thresholds alone at 64 B and at 128 B, "
       "and as CTA pairs at 64 B (%d fit, %d considered)", sp.count, sp.considered);
    config_space_free(&sp);
    p = problem(FA4_DTYPE_FP8_E4M3, 64);
    st = config_enumerate(&sp, &dev, &p, FA4_FAMILY_SM100, why, sizeof why);
    for (i = n128 = 0; st == FA4_OK && i < sp.count; i++)
        n128 += sp.configs[i].swizzle == 128;
    ok(st == FA4_OK && sp.count > 0 && n128 == 0,
       "fp8 d64 enumerates %d configs, none at 128 B swizzle (it would pad to 128)",
       sp.count);
    config_space_free(&sp);
}

/* Check every enumerated config of (DTYPE, D/DV), with per-token scales
** when SCALES; returns failures.  A ROPE region exactly in the fused rings
** of DV < D, 1024-aligned; QSCALE of bm floats and KSCALE of bn floats
** per K tile in flight exactly with scales. */
static int check_space_scaled(fa4_dtype dtype, int d, int dv, int scales, int *count)
{
    fa4_problem p = ct_problem(dtype, 1, 4096, d, dv, 0);
    fa4_config *c;
    int n, i, bad = 0;

    p.token_scales = scales;
    n = family_sm100.candidates(NULL, 0, &dev, &p);
    c = calloc((size_t)(n ? n : 1), sizeof *c);
    family_sm100.candidates(c, n, &dev, &p);
    for (i = 0; i < n; i++) {
        fa4_layout l;
        char why[160];
        if (budget_fit(&l, &dev, &p, &c[i], why, sizeof why) != FA4_OK)
            continue;
        ++*count;
        const int q_tiles = c[i].bm / 128;
        /* depth boxes: 64 columns for 16-bit types, fp8's swizzle in bytes */
        const int swz = dtype == FA4_DTYPE_FP8_E4M3 ? c[i].swizzle : 64;
        if (tmem_end(&l, &p, q_tiles) > 512 || l.tmem_columns > 512 || c[i].q_tiles != q_tiles
            || l.smem_bytes > dev.smem_per_block_optin || l.kv_slots < 2
            || !contiguous(&l) || roff(&l, "CORR") % 1024 != 0
            || c[i].bn < 64 || c[i].bn % 16 != 0
            || (budget_region_find(&l, "ROPE") != NULL)
               != (c[i].fused_kv && (dv + swz - 1) / swz < (d + swz - 1) / swz)
            || (budget_region_find(&l, "ROPE") && roff(&l, "ROPE") % 1024 != 0)
            || rsize(&l, "QSCALE") != (scales ? c[i].bm * 4 : 0)
            || rsize(&l, "KSCALE") != (scales ? (c[i].fused_kv ? (c[i].stages + 1) / 2
                                                               : c[i].stages) * c[i].bn * 4 : 0)) {
            char buf[256];
            diag("  bad: %s (smem %d, tmem to %d)",
                 fa4_config_format(&c[i], buf, sizeof buf), l.smem_bytes,
                 tmem_end(&l, &p, q_tiles));
            bad++;
        }
    }
    free(c);
    return bad;
}

static int check_space_dv(fa4_dtype dtype, int d, int dv, int *count)
{
    return check_space_scaled(dtype, d, dv, 0, count);
}

static int check_space(fa4_dtype dtype, int d, int *count)
{
    return check_space_dv(dtype, d, d, count);
}

/* Rope mode (budget_sm100.c, (e)): MLA's 192/128 and the other dv < dqk
** shapes, against the numbers worked out in the header. */
static void check_rope(void)
{
    fa4_problem p = ct_problem(FA4_DTYPE_BF16, 1, 4096, 192, 128, 0);
    fa4_config c = auto_config();
    fa4_layout l;
    sm100_shape s;
    char why[256], defs[4096];
    fa4_status st;
    int n;

    /* fixed 99452; per slot 32784, per K 16384: 3 slots, 2 ROPE buffers */
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.q_tiles == 2 && s.bn == 128 && s.rope_depth == 64 && s.fused
       && s.slots == 3 && s.rope_bufs == 2 && s.kv_bytes == 3 * 32768
       && s.rope_bytes == 2 * 16384 && s.nbar == 21 && s.regions == 230572
       && s.smem == 231596 && s.tmem_used == 512,
       "model: bf16 d192/128 is 2Q, bn 128, 3 fused slots of 128 x 128 and 2 ROPE buffers "
       "of 128 x 64, 21 barriers, 230,572 B (request 231,596) (%s)",
       st == FA4_OK ? "ok" : why);
    c = resolved(&p);
    ok(c.bn == 128 && c.stages == 3 && c.fused_kv == 1 && c.q_tiles == 2,
       "the d192/128 heuristic keeps bn 128 (the TMEM bound) with 3 fused slots: slots "
       "of the whole K (49,168 B) would hold one stage and drop bn to 96");
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    n = st == FA4_OK ? budget_defines(defs, sizeof defs, &p, &c, &l) : -1;
    ok(st == FA4_OK && l.smem_bytes == 231596 && contiguous(&l) && roff(&l, "KV") == 98304
       && rsize(&l, "KV") == 98304 && roff(&l, "ROPE") == 196608 && rsize(&l, "ROPE") == 32768
       && roff(&l, "CORR") == 229376 && rsize(&l, "BAR") == 21 * 8,
       "bf16 d192/128 fits: Q 0, KV 98304 (3 x 32 KiB), ROPE 196608 (2 x 16 KiB), CORR "
       "229376, 21 barriers (%s)", st == FA4_OK ? "ok" : why);
    ok(n > 0 && strstr(defs, "#define FA4_ROPE_CHUNKS 1\n")
       && strstr(defs, "#define FA4_SMEM_ROPE_OFF 196608\n")
       && strstr(defs, "#define FA4_KV_SLOTS 3\n") && strstr(defs, "#define FA4_FUSED_KV 1\n")
       && strstr(defs, "#define FA4_NUM_BARRIERS 21\n"),
       "budget_defines gives the rope kernel ROPE_CHUNKS 1 (K's third depth box) and the "
       "ROPE offset");

    /* an explicit even fused ring keeps slots / 2 buffers */
    c.bn = 64;
    c.stages = 4;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && rsize(&l, "KV") == 4 * 64 * 128 * 2 && rsize(&l, "ROPE") == 2 * 64 * 64 * 2
       && contiguous(&l),
       "an explicit fused ring of 4 slots at bn 64 has 2 ROPE buffers (%s)",
       st == FA4_OK ? "ok" : why);
    /* split rings hold the whole K in each stage: no ROPE region */
    c.stages = 3;
    c.fused_kv = 0;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    n = st == FA4_OK ? budget_defines(defs, sizeof defs, &p, &c, &l) : -1;
    ok(st == FA4_OK && !budget_region_find(&l, "ROPE") && rsize(&l, "K") == 3 * 64 * 192 * 2
       && n > 0 && strstr(defs, "#define FA4_ROPE_CHUNKS 0\n"),
       "split rings at d192/128 keep K's 192 columns in each stage, no ROPE region");

    /* d128/64: per slot 24592, per K 24576: 4 slots, even: 2 + 2 split stages */
    p = ct_problem(FA4_DTYPE_BF16, 1, 4096, 128, 64, 0);
    c = auto_config();
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.bn == 192 && !s.fused && s.stages == 2 && s.rope_bytes == 0
       && s.k_bytes == 2 * 192 * 128 * 2 && s.v_bytes == 2 * 192 * 64 * 2 && s.k_chunks == 2
       && s.regions == 66676 + 147520 + 4 * 8,
       "model: bf16 d128/64 is bn 192, 4 slots: 2 split stages (K 192 x 128, V 192 x 64), "
       "%d B (%s)", s.regions, st == FA4_OK ? "ok" : why);

    /* a CTA pair: per slot 16400, per K 64 x 64 x 2 = 8192: 6 slots, 3 split
       stages, K by 3 depth chunks (12 more barriers) */
    p = ct_problem(FA4_DTYPE_BF16, 1, 4096, 192, 128, 0);
    c = auto_config();
    c.cluster = 2;
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.bn == 128 && !s.fused && s.stages == 3 && s.k_chunks == 3
       && s.nbar == 39 && s.regions == 99452 + 6 * 16400 + 3 * 8192 + 12 * 8,
       "model: bf16 d192/128 CTA pair is bn 128, 3 split stages, K by 3 depth chunks, "
       "%d B (%s)", s.regions, st == FA4_OK ? "ok" : why);
    c.bn = 128;
    c.stages = 5;
    c.fused_kv = 1;
    c.bm = 256;
    c.q_tiles = 2;
    c.swizzle = 128;
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.fused && s.rope_bufs == 3 && s.rope_bytes == 3 * 64 * 64 * 2
       && s.kv_bytes == 5 * 16384,
       "a fused pair ring keeps ROPE buffers of bn / 2 keys: 5 slots of 16 KiB, 3 buffers "
       "of 8 KiB (%s)", st == FA4_OK ? "ok" : why);

    /* the enumerator offers the rope ring where the slot rule makes it fused */
    {
        config_space sp;
        int i, rope = 0, other = 0;
        p = ct_problem(FA4_DTYPE_BF16, 1, 4096, 192, 128, 0);
        st = config_enumerate(&sp, &dev, &p, FA4_FAMILY_SM100, why, sizeof why);
        for (i = 0; st == FA4_OK && i < sp.count; i++) {
            const int has = budget_region_find(&sp.layouts[i], "ROPE") != NULL;
            rope += has && sp.configs[i].bn == 128 && sp.configs[i].stages == 3
                    && sp.configs[i].cluster == 1;
            other += has != sp.configs[i].fused_kv;
        }
        ok(st == FA4_OK && rope == 6 && other == 0,
           "d192/128 enumerates the rope ring (bn 128, 3 slots) with its 6 exp2/threshold "
           "variants, and every fused ring has ROPE (%d configs fit)", sp.count);
        config_space_free(&sp);
    }
    /* without a rope part the region is absent and the seeds' numbers hold */
    p = problem(FA4_DTYPE_BF16, 128);
    c = resolved(&p);
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    n = st == FA4_OK ? budget_defines(defs, sizeof defs, &p, &c, &l) : -1;
    ok(st == FA4_OK && !budget_region_find(&l, "ROPE") && n > 0
       && strstr(defs, "#define FA4_ROPE_CHUNKS 0\n") && l.smem_bytes == 231620,
       "d128/128 has no ROPE region and FA4_ROPE_CHUNKS 0");
}

/* Per-token Q/K scales (budget_sm100.c, (f)), against the header's numbers. */
static void check_token_scales(void)
{
    fa4_problem p = problem(FA4_DTYPE_BF16, 128);
    fa4_config c = auto_config();
    fa4_layout l;
    sm100_shape s;
    char why[256], defs[4096];
    fa4_status st;
    int n;

    /* fixed 67708; per slot 32784, per K 528: 4 slots, 2 + 2 split stages */
    p.token_scales = 1;
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.bn == 128 && !s.fused && s.stages == 2 && s.k_chunks == 2
       && s.ks_bufs == 2 && s.qscale_bytes == 1024 && s.kscale_bytes == 1024 && s.nbar == 31
       && s.regions == 199932 && s.smem == 200956,
       "model: bf16 d128 with per-token scales is bn 128, 4 slots: 2 split stages, QSCALE "
       "1 KiB, 2 KSCALE buffers of 512 B, 31 barriers, 199,932 B (%s)",
       st == FA4_OK ? "ok" : why);
    c = resolved(&p);
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    n = st == FA4_OK ? budget_defines(defs, sizeof defs, &p, &c, &l) : -1;
    ok(st == FA4_OK && c.stages == 2 && !c.fused_kv && contiguous(&l)
       && rsize(&l, "QSCALE") == 1024 && roff(&l, "QSCALE") == roff(&l, "CORR") + 1024
       && rsize(&l, "KSCALE") == 1024 && roff(&l, "BAR") == roff(&l, "KSCALE") + 1024
       && rsize(&l, "BAR") == 31 * 8 && l.smem_bytes == 200956,
       "bf16 d128 with scales fits: QSCALE after CORR, KSCALE, then 31 barriers, %d B (%s)",
       l.smem_bytes, st == FA4_OK ? "ok" : why);
    ok(n > 0 && strstr(defs, "#define FA4_TOKEN_SCALES 1\n")
       && strstr(defs, "#define FA4_KSCALE_BUFS 2\n") && strstr(defs, "#define FA4_K_CHUNKS 2\n")
       && strstr(defs, "#define FA4_NUM_BARRIERS 31\n"),
       "budget_defines gives the kernel TOKEN_SCALES 1, 2 key-scale buffers, and K still "
       "staged by 2 depth chunks (the scale barriers counted apart)");

    /* a fused ring: one KSCALE buffer per K tile in flight, ceil(slots / 2) */
    p = ct_problem(FA4_DTYPE_BF16, 1, 4096, 192, 128, 0);
    p.token_scales = 1;
    c = resolved(&p);
    c.bn = 96;
    c.stages = 3;
    c.fused_kv = 1;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    n = st == FA4_OK ? budget_defines(defs, sizeof defs, &p, &c, &l) : -1;
    ok(st == FA4_OK && rsize(&l, "KSCALE") == 2 * 96 * 4 && rsize(&l, "ROPE") == 2 * 96 * 64 * 2
       && rsize(&l, "BAR") == (15 + 1 + 6 + 4) * 8 && contiguous(&l) && n > 0
       && strstr(defs, "#define FA4_KSCALE_BUFS 2\n") && strstr(defs, "#define FA4_ROPE_CHUNKS 1\n"),
       "a d192/128 rope ring of 3 slots at bn 96 with scales: 2 KSCALE buffers beside its "
       "2 ROPE buffers, 26 barriers (%s)", st == FA4_OK ? "ok" : why);
    /* 192/128 with scales: bn 128 leaves 2 slots (131,112 B of ring and
       scales past 130,940), so the automatic bn is 96: 4 slots, 2 stages */
    c = auto_config();
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.bn == 96 && !s.fused && s.stages == 2 && s.ks_bufs == 2,
       "model: bf16 d192/128 with scales drops to bn 96 (2 split stages) (%s)",
       st == FA4_OK ? "ok" : why);

    /* 1Q: QSCALE of 128 rows */
    p = problem(FA4_DTYPE_BF16, 256);
    p.token_scales = 1;
    c = resolved(&p);
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && c.q_tiles == 1 && rsize(&l, "QSCALE") == 512
       && rsize(&l, "KSCALE") == (c.fused_kv ? (c.stages + 1) / 2 : c.stages) * c.bn * 4
       && contiguous(&l),
       "bf16 d256 1Q with scales: QSCALE 512 B, KSCALE %d B (%s)", rsize(&l, "KSCALE"),
       st == FA4_OK ? "ok" : why);

    /* a CTA pair stages every key's scale in each CTA (its rows see all bn) */
    p = problem(FA4_DTYPE_BF16, 128);
    p.token_scales = 1;
    c = resolved(&p);
    c.cluster = 2;
    c.stages = 4;
    c.fused_kv = 0;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && rsize(&l, "KSCALE") == 4 * 128 * 4 && rsize(&l, "QSCALE") == 1024,
       "a d128 CTA pair of 4 stages with scales keeps 4 KSCALE buffers of all 128 keys (%s)",
       st == FA4_OK ? "ok" : why);
}

/* fp8 with the rope mode and the per-token scales: the header's fp8
** d128-with-scales, d192/128 and d256/128 (128 B) numbers, where the slot
** rule, the 8-stage cap and rope mode meet. */
static void check_fp8_rope_scales(void)
{
    fa4_problem p = problem(FA4_DTYPE_FP8_E4M3, 128);
    fa4_config c = auto_config();
    fa4_layout l;
    sm100_shape s;
    char why[256], defs[4096];
    fa4_status st;
    int n;

    /* 11 slots fit beside the scales; odd above 8: the split ring of 10 */
    p.token_scales = 1;
    c.swizzle = 64;
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.bn == 128 && !s.fused && s.slots == 10 && s.stages == 5
       && s.k_chunks == 2 && s.ks_bufs == 5 && s.kscale_bytes == 5 * 512 && s.nbar == 55
       && s.regions == 201660 && s.smem == 202684,
       "model: fp8 d128 with scales: 11 slots capped to 5 + 5 split stages, 5 KSCALE "
       "buffers, 55 barriers, 201,660 B (%s)", st == FA4_OK ? "ok" : why);
    c = resolved(&p);
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    n = st == FA4_OK ? budget_defines(defs, sizeof defs, &p, &c, &l) : -1;
    ok(st == FA4_OK && c.stages == 5 && !c.fused_kv && c.swizzle == 64
       && l.smem_bytes == 202684 && contiguous(&l) && n > 0
       && strstr(defs, "#define FA4_TOKEN_SCALES 1\n") && strstr(defs, "#define FA4_KSCALE_BUFS 5\n")
       && strstr(defs, "#define FA4_K_CHUNKS 2\n") && strstr(defs, "#define FA4_DTYPE 3\n"),
       "fp8 d128 with scales fits its heuristic config: TOKEN_SCALES 1, 5 key-scale "
       "buffers, K by 2 depth chunks (%s)", st == FA4_OK ? "ok" : why);

    /* d192/128 at 64 B: 8 slots, even: split (no ROPE) */
    p = ct_problem(FA4_DTYPE_FP8_E4M3, 1, 4096, 192, 128, 0);
    c = auto_config();
    c.swizzle = 64;
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.bn == 128 && s.rope_depth == 64 && !s.fused && s.slots == 8
       && s.stages == 4 && s.k_chunks == 3 && s.rope_bytes == 0 && s.nbar == 47
       && s.k_bytes == 4 * 128 * 192 && s.v_bytes == 4 * 128 * 128
       && s.regions == 214396 && s.smem == 215420,
       "model: fp8 d192/128 (64 B) is bn 128, 8 slots: 4 split stages, K by 3 depth chunks, "
       "47 barriers, 214,396 B (%s)", st == FA4_OK ? "ok" : why);
    /* an explicit fused ring of 5: rope mode, 3 ROPE buffers of 128 x 64 */
    c = resolved(&p);
    c.stages = 5;
    c.fused_kv = 1;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    n = st == FA4_OK ? budget_defines(defs, sizeof defs, &p, &c, &l) : -1;
    ok(st == FA4_OK && c.swizzle == 64 && rsize(&l, "KV") == 5 * 128 * 128
       && rsize(&l, "ROPE") == 3 * 128 * 64 && roff(&l, "ROPE") % 1024 == 0
       && rsize(&l, "BAR") == 25 * 8 && l.smem_bytes == 156876 + 1024 && contiguous(&l)
       && n > 0 && strstr(defs, "#define FA4_ROPE_CHUNKS 1\n"),
       "fp8 d192/128 as a fused ring of 5 is rope mode: 5 slots of 128 x 128, 3 ROPE "
       "buffers of 128 x 64, 156,876 B, ROPE_CHUNKS 1 (%s)", st == FA4_OK ? "ok" : why);

    /* d256/128 at 128 B: rope_depth 128; 2Q splits, 1Q is a rope ring */
    p = ct_problem(FA4_DTYPE_FP8_E4M3, 1, 4096, 256, 128, 0);
    c = auto_config();
    c.swizzle = 128;
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.q_tiles == 2 && s.bn == 128 && s.rope_depth == 128 && !s.fused
       && s.stages == 3 && s.k_chunks == 2 && s.nbar == 32 && s.regions == 214276
       && s.smem == 215300,
       "model: fp8 d256/128 (128 B) 2Q is bn 128, 6 slots: 3 split stages, 32 barriers, "
       "214,276 B (%s)", st == FA4_OK ? "ok" : why);
    c.bm = 128;
    c.q_tiles = 1;
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.bn == 192 && s.fused && s.slots == 5 && s.rope_bufs == 3
       && s.kv_bytes == 5 * 192 * 128 && s.rope_bytes == 3 * 192 * 128 && s.nbar == 19
       && s.regions == 230044 && s.smem == 231068,
       "model: fp8 d256/128 (128 B) 1Q is bn 192, 5 fused slots and 3 ROPE buffers of "
       "192 x 128, 19 barriers, 230,044 B (%s)", st == FA4_OK ? "ok" : why);
    c.bn = 192;
    c.stages = 5;
    c.fused_kv = 1;
    c.exp2_emu_pct = 25;
    c.rescale_threshold = 8;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    n = st == FA4_OK ? budget_defines(defs, sizeof defs, &p, &c, &l) : -1;
    ok(st == FA4_OK && rsize(&l, "ROPE") == 73728 && n > 0
       && strstr(defs, "#define FA4_ROPE_CHUNKS 1\n") && strstr(defs, "#define FA4_SWIZZLE 128\n"),
       "fp8 d256/128 1Q at 128 B fits as that rope ring, ROPE_CHUNKS 1 (one 128-column "
       "box) (%s)", st == FA4_OK ? "ok" : why);
}

/* A decode step of DTYPE: BATCH sequences of SEQLEN_Q tokens over 4096
** keys, 32 query heads over 4 KV heads (group 8), head dims D / DV. */
static fa4_problem decode_problem(fa4_dtype dtype, int seqlen_q, int d, int dv)
{
    fa4_problem p = ct_problem(dtype, 8, 4096, d, dv, 0);
    p.seqlen_q = seqlen_q;
    p.heads_q = 32;
    p.heads_kv = 4;
    return p;
}

/* The decode mode (bm 32; lib/budget_sm100.c "Decode mode"): the worked
** numbers, the TMEM map, the heuristic's and the enumerator's choices,
** the config text, and what it refuses. */
static void check_decode(void)
{
    static const struct {
        int d, dv, bn, stages, pv_n, smem, nbar;
    } rows[] = {
        { 128, 128, 128, 3, 128, 223380, 18 },
        { 64, 64, 128, 6, 64, 219380, 30 },
        { 256, 256, 64, 3, 256, 223380, 18 },
        { 192, 128, 128, 2, 128, 194676, 14 },
        { 96, 96, 128, 3, 128, 223380, 18 },
    };
    fa4_problem p;
    fa4_config c;
    fa4_layout l;
    sm100_shape s;
    char why[512], defs[4096];
    fa4_status st;
    int i, n, fit, bad;

    for (i = 0; i < (int)(sizeof rows / sizeof rows[0]); i++) {
        p = decode_problem(FA4_DTYPE_BF16, 1, rows[i].d, rows[i].dv);
        c = resolved(&p);
        st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
        n = st == FA4_OK ? budget_defines(defs, sizeof defs, &p, &c, &l) : -1;
        budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
        ok(st == FA4_OK && c.bm == 32 && c.q_tiles == 1 && c.pack_gqa == 1 && c.splits == 0 &&
           c.bn == rows[i].bn && c.stages == rows[i].stages && l.smem_bytes == rows[i].smem &&
           rsize(&l, "BAR") == 8 * rows[i].nbar && contiguous(&l) && l.threads == 192 &&
           rsize(&l, "Q") == 32 * ((rows[i].d + 63) / 64 * 64) * 2 &&
           rsize(&l, "P") == 2 * 32 * rows[i].bn * 2 && rsize(&l, "RED") == 1024 &&
           roff(&l, "P") % 1024 == 0 && roff(&l, "K") % 1024 == 0 && roff(&l, "V") % 1024 == 0 &&
           l.tmem_s1 == rows[i].bn / 4 && l.tmem_o0 == rows[i].bn / 2 &&
           l.tmem_columns == 128 && s.pv_n == rows[i].pv_n && n > 0 &&
           strstr(defs, "#define FA4_DECODE 1\n") && strstr(defs, "#define FA4_BM 32\n"),
           "decode bf16 d%d/%d, 1 token x group 8: bm 32, bn %d, %d stages, O pieces of N %d, "
           "%d barriers, %d B requested, TMEM S0 0 / S1 %d / O %d of 128 columns (%s)",
           rows[i].d, rows[i].dv, rows[i].bn, rows[i].stages, rows[i].pv_n, rows[i].nbar,
           rows[i].smem, rows[i].bn / 4, rows[i].bn / 2, st == FA4_OK ? "ok" : why);
    }
    /* worked example: regions of d128 add up as the header says */
    p = decode_problem(FA4_DTYPE_BF16, 1, 128, 128);
    c = resolved(&p);
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.decode && s.q_bytes == 8192 && s.k_bytes == 3 * 32768 &&
       s.v_bytes == 3 * 32768 && s.p_bytes == 16384 && s.red_bytes == 1024 && s.nbar == 18 &&
       s.regions == 8192 + 196608 + 16384 + 1024 + 144 + 4 && s.tmem_used == 96,
       "decode d128 regions: Q 8192 + K/V 3 x 65536 + P 16384 + RED 1024 + 18 barriers + 4 "
       "= 222,356 B; TMEM 2 x 32 + 32 = 96 columns (%s)", st == FA4_OK ? "ok" : why);

    /* the heuristic takes the mode for decode shapes only */
    p = decode_problem(FA4_DTYPE_FP16, 4, 128, 128);
    c = resolved(&p);
    ok(c.bm == 32 && budget_fit(&l, &dev, &p, &c, why, sizeof why) == FA4_OK,
       "fp16 d128, 4 tokens x group 8 (32 rows): the decode mode fits");
    p = decode_problem(FA4_DTYPE_BF16, 9, 128, 128);
    c = resolved(&p);
    ok(c.bm == 256 && !budget_sm100_decode_suits(&p),
       "9 tokens x group 8 (72 rows > 64): the prefill's 2Q, not the decode mode");
    p = decode_problem(FA4_DTYPE_FP8_E4M3, 1, 128, 128);
    c = resolved(&p);
    ok(c.bm == 256 && !budget_sm100_decode_suits(&p),
       "fp8 decode shapes keep the prefill modes (the decode mode is 16-bit only)");

    /* config text: the existing fields name the mode */
    p = decode_problem(FA4_DTYPE_BF16, 1, 128, 128);
    st = config_parse(&c, "sm100 bm=32 bn=64 stages=4 swizzle=128 splits=8 pack_gqa=1", why,
                      sizeof why);
    ok(st == FA4_OK && budget_fit(&l, &dev, &p, &c, why, sizeof why) == FA4_OK &&
       l.kv_slots == 4 && l.tmem_s1 == 16,
       "config text \"sm100 bm=32 bn=64 stages=4 swizzle=128 splits=8 pack_gqa=1\" fits (%s)",
       why[0] ? why : "ok");

    /* the enumerator: the mode's 18 candidates first; every one that fits keeps the rules */
    n = family_sm100.candidates(NULL, 0, &dev, &p);
    {
        fa4_config *cs = calloc((size_t)n, sizeof *cs);
        family_sm100.candidates(cs, n, &dev, &p);
        fit = bad = 0;
        for (i = 0; i < 18; i++) {
            if (cs[i].bm != 32)
                bad++;
            if (budget_fit(&l, &dev, &p, &cs[i], why, sizeof why) != FA4_OK)
                continue;
            fit++;
            if (!contiguous(&l) || l.tmem_columns > 512 || l.smem_bytes > 232448 ||
                l.kv_slots < 2 || roff(&l, "P") % 1024 != 0)
                bad++;
        }
        ok(n == 18 + 36 && bad == 0 && fit == 12 && cs[18].bm == 256,
           "bf16 d128 decode enumerates the decode mode's bn {128, 64, 256} x splits {0, 1, 2, "
           "4, 8, 16} first (%d of 18 fit: bn 256 holds one stage), then the prefill's 36",
           fit);
        free(cs);
    }

    /* refusals, each naming the limit */
    c = resolved(&p);
    c.bn = 96;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_EINVAL && strstr(why, "bn=96") && strstr(why, "64, 128 or 256"),
       "decode bn 96 is FA4_EINVAL: the .ws MMA's N is 64, 128 or 256 (%s)", why);
    c = resolved(&p);
    c.bn = 256;
    c.stages = 0;
    budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    c.stages = 2;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(s.stages == 1 && st == FA4_ENOFIT && strstr(why, "smem") && strstr(why, "opt-in limit"),
       "decode d128 bn 256: one stage fits the carveout, two are FA4_ENOFIT (%s)", why);
    c = resolved(&p);
    c.q_tiles = 2;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_EINVAL && strstr(why, "q_tiles=2"), "decode q_tiles 2 is FA4_EINVAL (%s)", why);
    c = resolved(&p);
    c.cluster = 2;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_EINVAL && strstr(why, "cluster=2"), "decode cluster 2 is FA4_EINVAL (%s)", why);
    p = decode_problem(FA4_DTYPE_FP8_E4M3, 1, 128, 128);
    c = resolved(&p);
    c.bm = 32;
    c.q_tiles = 1;
    c.swizzle = 128;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_ENOTSUP && strstr(why, "fp8") && strstr(why, "not implemented"),
       "decode fp8 is FA4_ENOTSUP (%s)", why);
    p = decode_problem(FA4_DTYPE_BF16, 1, 128, 128);
    p.token_scales = 1;
    c = resolved(&p);
    ok(c.bm != 32, "per-token scales keep the prefill modes");
    c.bm = 32;
    c.q_tiles = 1;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_ENOTSUP && strstr(why, "token_scales=1"),
       "decode with per-token scales is FA4_ENOTSUP (%s)", why);
    p.token_scales = 0;
    c = resolved(&p);
    c.bm = 256;
    c.q_tiles = 2;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_EINVAL && strstr(why, "splits=0") && strstr(why, "decode mode"),
       "splits and pack_gqa outside the decode mode are FA4_EINVAL (%s)", why);
}

int main(void)
{
    fa4_problem p;
    fa4_config c;
    fa4_layout l;
    sm100_shape s;
    char why[256], defs[4096];
    fa4_status st;
    int n, bad, fitting;

    if (device_limits_for_arch(&dev, "sm_100a", why, sizeof why) != FA4_OK) {
        /* the lead's table missing: the numbers of KERNEL_NOTES.md */
        memset(&dev, 0, sizeof dev);
        dev.cc = 100;
        dev.smem_per_block_optin = 232448;
        dev.tmem_columns = 512;
        dev.sm100_opt_in = 1;
    }
    plan_lazy();

    is_int(dev.smem_per_block_optin, 232448, "sm_100a table carveout is 232448 B");

    /* The seeds' numbers from the model, bn and stages automatic. */
    p = problem(FA4_DTYPE_BF16, 128);
    c = auto_config();
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.q_tiles == 2 && s.bn == 128 && s.fused && s.slots == 5
       && s.regions == 230596 && s.nbar == 24,
       "model: bf16 d128 is 2Q, bn 128, 5 fused slots, 230,596 B, 24 barriers (%s)",
       st == FA4_OK ? "ok" : why);
    p = problem(FA4_DTYPE_BF16, 64);
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.bn == 192 && !s.fused && s.stages == 4 && s.regions == 230636
       && s.nbar == 29,
       "model: bf16 d64 is bn 192, 4 split stages, 230,636 B, 29 barriers");
    p = problem(FA4_DTYPE_FP8_E4M3, 128);
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.swizzle == 64 && s.pad_qk == 128 && s.bn == 128 && !s.fused
       && s.stages == 6 && s.k_chunks == 2 && s.regions == 230804,
       "model: fp8 d128 is 64 B swizzle, bn 128, 6 split stages with K in 2 depth "
       "chunks, 230,804 B");
    c.swizzle = 128;
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.swz_elems == 128 && s.qk_chunks == 1 && s.bn == 128
       && s.stages == 6 && s.k_chunks == 1 && s.regions == 33900 + 12 * 16400,
       "model: fp8 d128 with 128 B swizzle rows of 128 elements: one depth chunk, "
       "6 split stages, %d B", s.regions);
    c.swizzle = 32;
    ok(budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why) == FA4_EINVAL
       && strstr(why, "swizzle=32; sm100 fp8 uses 64 or 128"),
       "model: fp8 with 32 B swizzle is malformed (%s)", why);

    /* bf16 d128 resolved: BN 128, 5 fused slots, regions 230,596 B */
    p = problem(FA4_DTYPE_BF16, 128);
    c = resolved(&p);
    ok(c.bn == 128 && c.stages == 5 && c.fused_kv == 1 && c.bm == 256 && c.q_tiles == 2
       && c.swizzle == 128, "bf16 d128 heuristic resolves to bm 256, bn 128, 5 fused slots");
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    is_int(st, FA4_OK, "bf16 d128 fits (%s)", why);
    is_int(roff(&l, "TMEMPTR") + 4, 230596, "bf16 d128 regions take 230,596 B");
    is_int(l.smem_bytes, 230596 + 1024, "bf16 d128 requests them plus 1024 B of "
           "base-alignment slack");
    ok(budget_region_find(&l, "KV") && l.kv_slots == 5,
       "bf16 d128 has a fused ring of 5 slots");
    is_int(rsize(&l, "BAR"), 24 * 8, "bf16 d128 has 24 mbarriers (14 fixed + 2 per slot)");
    ok(l.tmem_s0 == 0 && l.tmem_s1 == 128 && l.tmem_o0 == 256
       && l.tmem_o1 == 384 && l.tmem_columns == 512,
       "bf16 d128 TMEM map S0 0, S1 128, O0 256, O1 384 of 512");
    ok(roff(&l, "Q") == 0 && rsize(&l, "Q") == 65536 && roff(&l, "KV") == 65536
       && roff(&l, "CORR") == 229376 && roff(&l, "TMEMPTR") == 230592,
       "bf16 d128 regions: Q 0, KV 65536, CORR 229376, TMEMPTR 230592");

    /* bf16 d64 resolved: BN 192, 4 split stages, 230,636 B */
    p = problem(FA4_DTYPE_BF16, 64);
    c = resolved(&p);
    ok(c.bn == 192 && c.stages == 4 && c.fused_kv == 0,
       "bf16 d64 heuristic resolves to bn 192, 4 split stages");
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    is_int(st, FA4_OK, "bf16 d64 fits (%s)", why);
    ok(roff(&l, "TMEMPTR") + 4 == 230636 && l.smem_bytes == 230636 + 1024,
       "bf16 d64 regions take 230,636 B, the request 231,660 B");
    ok(!budget_region_find(&l, "KV") && l.kv_slots == 4
       && rsize(&l, "K") == 4 * 192 * 64 * 2 && rsize(&l, "V") == 4 * 192 * 64 * 2,
       "bf16 d64 splits into 4 K and 4 V stages of 192 x 64");
    is_int(rsize(&l, "BAR"), 29 * 8, "bf16 d64 has 29 mbarriers (13 fixed + 16)");
    ok(l.tmem_s1 == 192 && l.tmem_o0 == 384 && l.tmem_o1 == 448,
       "bf16 d64 TMEM map S1 192, O0 384, O1 448");

    /* The slack is part of the request: a carveout that holds the regions
       but not the slack refuses the config, naming both. */
    {
        device_limits small = dev;
        p = problem(FA4_DTYPE_BF16, 128);
        c = resolved(&p);
        small.smem_per_block_optin = 231000;
        st = budget_fit(&l, &small, &p, &c, why, sizeof why);
        ok(st == FA4_ENOFIT && strstr(why, "smem 231620 B (regions 230596 + 1024 B "
                                      "base-alignment slack) > opt-in limit 231000 B"),
           "regions of 230,596 B under a 231,000 B carveout are refused for the slack (%s)",
           why);
    }

    check_fp8();

    /* Unresolved fields would be compiled as they stand (FA4_BN 0). */
    p = problem(FA4_DTYPE_BF16, 128);
    c = resolved(&p);
    c.bn = 0;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_EINVAL && strstr(why, "leaves bn=0 unresolved")
       && strstr(why, "automatic choice is bm=256 q_tiles=2 bn=128 stages=5 fused_kv=1"),
       "bn=0 is refused, naming the automatic choice (%s)", why);
    c = auto_config();
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_EINVAL && strstr(why, "leaves bm=0 bn=0 stages=0 swizzle=0 unresolved"),
       "FA4_CONFIG_INIT with the sm100 family is refused field by field (%s)", why);
    c = resolved(&p);
    c.stages = 0;
    c.bn = 96;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_EINVAL && strstr(why, "leaves stages=0 unresolved")
       && strstr(why, "bn=96 stages=3 fused_kv=0"),
       "stages=0 with bn 96 is refused, naming its ring (%s)", why);
    {
        config_space sp;
        int i, zero = 0;
        static const int ds[] = { 64, 96, 128, 192, 256 };
        for (i = 0; i < 5; i++) {
            int k;
            p = problem(FA4_DTYPE_BF16, ds[i]);
            if (config_enumerate(&sp, &dev, &p, FA4_FAMILY_SM100, why, sizeof why) != FA4_OK)
                continue;
            for (k = 0; k < sp.count; k++)
                zero += sp.configs[k].bn <= 0 || sp.configs[k].stages <= 0
                        || sp.configs[k].bm <= 0 || sp.configs[k].swizzle <= 0;
            config_space_free(&sp);
        }
        is_int(zero, 0, "no enumerated sm100 config of d64..256 has bm, bn, stages or "
               "swizzle 0");
    }

    /* d256 does not fit 2Q ... */
    p = problem(FA4_DTYPE_BF16, 256);
    c = auto_config();
    c.bm = 256;
    c.q_tiles = 2;
    c.swizzle = 128;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    is_int(st, FA4_ENOFIT, "bf16 d256 does not fit 2Q");
    has_str(why, "bn=0 < 64 (2 query tiles at head_dim_v 256, padded to 256, leave TMEM "
            "for bn=0", "the reason names bn=0 < 64 and the TMEM bound");

    /* ... so it runs 1Q: one query tile of 128, S double-buffered.  TMEM
       bound 2*bn + 256 <= 512: bn 128, whose 2 slots of 64 KiB make 1
       split stage; bn 96: (232448 - 1024 - 66052 - 9 * 8) / 49168 = 3
       slots, a fused ring.  Regions 65536 + 3 * 49152 + 512 + 15 * 8 + 4
       = 213,628 B, request 214,652 B. */
    c.bm = 128;
    c.q_tiles = 1;
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.q_tiles == 1 && s.bm == 128 && s.bn == 96 && s.fused && s.slots == 3
       && s.nbar == 15 && s.regions == 213628 && s.smem == 214652 && s.tmem_used == 448,
       "model: bf16 d256 1Q is bn 96, 3 fused slots, 15 barriers, 213,628 B (request "
       "214,652), TMEM to column 448 (%s)", st == FA4_OK ? "ok" : why);
    c = resolved(&p);
    ok(c.bm == 128 && c.q_tiles == 1 && c.bn == 96 && c.stages == 3 && c.fused_kv == 1,
       "the d256 heuristic resolves to 1Q: bm 128, bn 96, 3 fused slots");
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && l.smem_bytes == 214652 && contiguous(&l) && rsize(&l, "Q") == 65536
       && rsize(&l, "CORR") == 512 && rsize(&l, "BAR") == 15 * 8 && l.kv_slots == 3,
       "bf16 d256 1Q fits: Q 64 KiB, CORR 512 B, 15 barriers, %d B (%s)", l.smem_bytes,
       st == FA4_OK ? "ok" : why);
    ok(l.tmem_s0 == 0 && l.tmem_s1 == 96 && l.tmem_o0 == 192 && l.tmem_o1 == -1
       && l.tmem_columns == 512,
       "bf16 d256 1Q TMEM map S0 0, S1 96 (S double-buffered), O0 192, no O1, 512 allocated");
    n = budget_defines(defs, sizeof defs, &p, &c, &l);
    ok(n > 0 && strstr(defs, "#define FA4_Q_TILES 1\n") && strstr(defs, "#define FA4_BM 128\n")
       && strstr(defs, "#define FA4_NUM_BARRIERS 15\n") && strstr(defs, "#define FA4_TMEM_O1 -1\n"),
       "budget_defines gives the 1Q kernel Q_TILES 1, BM 128, 15 barriers, no O1");
    {
        config_space sp;
        int i, one = 0;
        st = config_enumerate(&sp, &dev, &p, FA4_FAMILY_SM100, why, sizeof why);
        for (i = 0; st == FA4_OK && i < sp.count; i++)
            one += sp.configs[i].q_tiles == 1 && sp.configs[i].bm == 128;
        for (i = 0; st == FA4_OK && i < sp.count; i++)
            one -= sp.configs[i].cluster == 2 && sp.configs[i].q_tiles == 1;
        ok(st == FA4_OK && sp.count == 30 && one == 12 && sp.ndrops == 1
           && strstr(sp.drops[0].reason, "bn=0 < 64 (2 query tiles"),
           "d256 enumerates 12 1Q configs (bn 96, 64) and 18 1Q CTA pairs (bn 128, 96, 64), "
           "and drops the 2Q one with its reason (%d fit, %d considered)", sp.count,
           sp.considered);
        config_space_free(&sp);
    }
    p = problem(FA4_DTYPE_BF16, 128);
    c = resolved(&p);
    c.bm = 128;
    c.q_tiles = 1;
    c.bn = 192;
    c.stages = 2;
    c.fused_kv = 0;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && l.tmem_s1 == 192 && l.tmem_o0 == 384 && l.tmem_o1 == -1,
       "an explicit 1Q config fits at d128 too: bn 192, S1 192, O0 384 (%s)",
       st == FA4_OK ? "ok" : why);
    c.bn = 256;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_ENOFIT && strstr(why, "tmem 640 columns > 512"),
       "1Q bn 256 at d128 is refused: 2*256 + 128 columns (%s)", why);

    /* d192 leaves bn 64 */
    p = problem(FA4_DTYPE_BF16, 192);
    c = resolved(&p);
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && l.tmem_s1 == 64, "bf16 d192 fits with BN 64");

    /* explicit configs are checked, not adjusted */
    p = problem(FA4_DTYPE_BF16, 128);
    c = resolved(&p);
    c.bn = 256;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_ENOFIT, "bn 256 at d128 is refused");
    has_str(why, "tmem 768 columns > 512", "the reason names the TMEM columns");
    c.bn = 32;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    has_str(why, "bn=32 < 64", "bn 32 is refused as < 64");
    c.bn = 120;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    is_int(st, FA4_EINVAL, "bn 120 (not a multiple of 16) is malformed");
    c.bn = 128;
    c.stages = 1;
    c.fused_kv = 1;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    has_str(why, "kv stages 1 < 2", "one KV stage is refused");
    c.stages = 4;
    c.fused_kv = 0;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    has_str(why, "> opt-in limit 232448 B", "4 split d128 stages exceed the carveout");
    c = resolved(&p);
    c.q_tiles = 1;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_EINVAL && strstr(why, "bm=256 q_tiles=1"),
       "bm 256 with q_tiles 1 is malformed (%s)", why);

    /* head_dim_v < head_dim_qk in split rings: V stages hold pad_dv columns,
       and the budget counts what the layout places (issue 14). */
    p = ct_problem(FA4_DTYPE_BF16, 1, 4096, 128, 64, 0);
    c = resolved(&p);
    c.bn = 128;
    c.stages = 2;
    c.fused_kv = 0;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    is_int(st, FA4_OK, "bf16 d128/64 split rings, bn 128, 2 stages fit (%s)", why);
    ok(rsize(&l, "K") == 2 * 128 * 128 * 2 && rsize(&l, "V") == 2 * 128 * 64 * 2
       && contiguous(&l) && l.smem_bytes == roff(&l, "TMEMPTR") + 4 + 1024,
       "bf16 d128/64 split: K 2 x 128 x 128, V 2 x 128 x 64, regions + slack sum to smem (%d B)",
       l.smem_bytes);
    {
        config_space sp;
        int i, internal = 0;
        st = config_enumerate(&sp, &dev, &p, FA4_FAMILY_SM100, why, sizeof why);
        for (i = 0; st == FA4_OK && i < sp.ndrops; i++)
            if (strstr(sp.drops[i].reason, "internal")) {
                diag("  dropped %d: %s", sp.drops[i].count, sp.drops[i].reason);
                internal += sp.drops[i].count;
            }
        ok(st == FA4_OK && internal == 0,
           "no bf16 d128/64 candidate is dropped as an internal layout mismatch (%d fit)",
           sp.count);
        config_space_free(&sp);
    }
    p = ct_problem(FA4_DTYPE_BF16, 1, 4096, 192, 128, 0);
    c = resolved(&p);
    c.bn = 64;
    c.stages = 3;
    c.fused_kv = 0;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && rsize(&l, "V") == 3 * 64 * 128 * 2 && contiguous(&l),
       "bf16 d192/128 split rings, bn 64, 3 stages fit with V of 3 x 64 x 128 (%s)",
       st == FA4_OK ? "ok" : why);
    p = problem(FA4_DTYPE_BF16, 128);
    check_rope();
    check_token_scales();
    check_fp8_rope_scales();

    /* the launch runs a CTA alone or a CTA pair: no other cluster */
    family_sm100.heuristic(&c, &dev, &p);
    c.cluster = 4;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_EINVAL && strstr(why, "cluster=4") && strstr(why, "2 (a CTA pair"),
       "an sm100 config with cluster 4 is refused (%s)", why);

    /* The CTA pair (cluster 2, cta_group::2): per CTA the Q tiles and TMEM
       map of one CTA alone, half of each K tile (bn / 2 keys) and half of
       V's depth.  bf16 d128 2Q: bn 128 (the TMEM bound); a slot holds
       max(64 x 128, 128 x 64) x 2 B = 16384 B; (232448 - 1024 - 66676) /
       16400 = 10 slots, even: 5 K + 5 V stages, K by 2 depth chunks (10
       more barriers): 66676 + 10 x 16400 + 80 = 230,756 B, request
       231,780 B. */
    c = auto_config();
    c.cluster = 2;
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.pair == 2 && s.q_tiles == 2 && s.bn == 128 && s.k_rows == 64
       && s.v_cols == 64 && !s.fused && s.stages == 5 && s.k_chunks == 2 && s.nbar == 44
       && s.k_bytes == 5 * 16384 && s.v_bytes == 5 * 16384 && s.regions == 230756
       && s.smem == 231780 && s.tmem_used == 512,
       "model: bf16 d128 CTA pair is 2Q, bn 128 (64 keys of K, 64 columns of V a CTA), 5 "
       "split stages, K by 2 depth chunks, 44 barriers, 230,756 B (%s)",
       st == FA4_OK ? "ok" : why);
    c = resolved(&p);
    c.cluster = 2;
    c.stages = 5;
    c.fused_kv = 0;
    st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    n = st == FA4_OK ? budget_defines(defs, sizeof defs, &p, &c, &l) : -1;
    ok(st == FA4_OK && l.smem_bytes == 231780 && contiguous(&l)
       && rsize(&l, "K") == 5 * 64 * 128 * 2 && rsize(&l, "V") == 5 * 128 * 64 * 2
       && l.tmem_s1 == 128 && l.tmem_o0 == 256 && l.tmem_o1 == 384 && n > 0
       && strstr(defs, "#define FA4_CTA_GROUP 2\n") && strstr(defs, "#define FA4_K_CHUNKS 2\n")
       && strstr(defs, "#define FA4_NUM_BARRIERS 44\n"),
       "bf16 d128 pair fits: K 5 x 64 x 128, V 5 x 128 x 64, the TMEM map of one CTA, "
       "FA4_CTA_GROUP 2 (%s)", st == FA4_OK ? "ok" : why);
    /* bf16 d256 1Q pair: bn 128 (alone, 2 slots of 64 KiB would be one
       stage); a slot max(64 x 256, 128 x 128) x 2 B = 32768 B;
       (232448 - 1024 - 66124) / 32784 = 5 slots, odd: fused;
       66124 + 5 x 32784 = 230,044 B, request 231,068 B. */
    p = problem(FA4_DTYPE_BF16, 256);
    c = auto_config();
    c.bm = 128;
    c.q_tiles = 1;
    c.cluster = 2;
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && s.bn == 128 && s.k_rows == 64 && s.v_cols == 128 && s.fused
       && s.slots == 5 && s.nbar == 19 && s.kv_bytes == 5 * 32768 && s.regions == 230044
       && s.smem == 231068 && s.tmem_used == 512,
       "model: bf16 d256 1Q CTA pair is bn 128, 5 fused slots of 32 KiB, 19 barriers, "
       "230,044 B (request 231,068) (%s)", st == FA4_OK ? "ok" : why);
    c.cluster = 1;
    c.bn = 128;
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_ENOFIT && strstr(why, "kv stages 1 < 2"),
       "alone, d256 1Q at bn 128 holds one stage (%s)", why);
    /* V's half must be whole swizzle boxes: d64 (32 columns a CTA) cannot pair */
    p = problem(FA4_DTYPE_BF16, 64);
    c = auto_config();
    c.cluster = 2;
    st = budget_sm100_shape(&s, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_ENOFIT && strstr(why, "half of V's padded depth 64, 32 columns"),
       "a d64 CTA pair is refused: half of V is 32 columns (%s)", why);
    {
        config_space sp;
        int i, pairs = 0;
        st = config_enumerate(&sp, &dev, &p, FA4_FAMILY_SM100, why, sizeof why);
        for (i = 0; st == FA4_OK && i < sp.count; i++)
            pairs += sp.configs[i].cluster == 2;
        ok(st == FA4_OK && pairs == 0 && sp.count > 0,
           "d64 enumerates no CTA pair (%d configs)", sp.count);
        config_space_free(&sp);
    }
    p = problem(FA4_DTYPE_BF16, 128);

    /* the kernel's constants */
    c = resolved(&p);
    budget_fit(&l, &dev, &p, &c, why, sizeof why);
    n = budget_defines(defs, sizeof defs, &p, &c, &l);
    ok(n > 0 && strstr(defs, "#define FA4_TMEM_O1 384\n")
       && strstr(defs, "#define FA4_KV_SLOTS 5\n")
       && strstr(defs, "#define FA4_FUSED_KV 1\n")
       && strstr(defs, "#define FA4_NUM_BARRIERS 24\n")
       && strstr(defs, "#define FA4_SMEM_BAR_OFF 230400\n")
       && strstr(defs, "#define FA4_SMEM_BYTES 231620\n")
       && strstr(defs, "#define FA4_SMEM_SLACK 1024\n")
       && strstr(defs, "#define FA4_BN 128\n") && strstr(defs, "#define FA4_STAGES 5\n"),
       "budget_defines carries the TMEM map, ring, barrier count, bn, stages and the "
       "request with its slack");

    /* invariants over the whole enumerated space */
    bad = 0;
    fitting = 0;
    bad += check_space(FA4_DTYPE_BF16, 64, &fitting);
    bad += check_space(FA4_DTYPE_BF16, 96, &fitting);
    bad += check_space(FA4_DTYPE_BF16, 128, &fitting);
    bad += check_space(FA4_DTYPE_FP16, 128, &fitting);
    bad += check_space(FA4_DTYPE_BF16, 192, &fitting);
    bad += check_space(FA4_DTYPE_BF16, 256, &fitting);
    bad += check_space(FA4_DTYPE_FP8_E4M3, 64, &fitting);
    bad += check_space(FA4_DTYPE_FP8_E4M3, 128, &fitting);
    bad += check_space(FA4_DTYPE_FP8_E4M3, 256, &fitting);
    bad += check_space_dv(FA4_DTYPE_BF16, 192, 128, &fitting);
    bad += check_space_dv(FA4_DTYPE_FP16, 192, 128, &fitting);
    bad += check_space_dv(FA4_DTYPE_BF16, 128, 64, &fitting);
    bad += check_space_dv(FA4_DTYPE_BF16, 256, 128, &fitting);
    bad += check_space_dv(FA4_DTYPE_FP8_E4M3, 192, 128, &fitting);
    bad += check_space_dv(FA4_DTYPE_FP8_E4M3, 256, 128, &fitting);
    bad += check_space_scaled(FA4_DTYPE_BF16, 128, 128, 1, &fitting);
    bad += check_space_scaled(FA4_DTYPE_FP16, 64, 64, 1, &fitting);
    bad += check_space_scaled(FA4_DTYPE_BF16, 192, 128, 1, &fitting);
    bad += check_space_scaled(FA4_DTYPE_BF16, 256, 256, 1, &fitting);
    bad += check_space_scaled(FA4_DTYPE_FP8_E4M3, 64, 64, 1, &fitting);
    bad += check_space_scaled(FA4_DTYPE_FP8_E4M3, 128, 128, 1, &fitting);
    bad += check_space_scaled(FA4_DTYPE_FP8_E4M3, 192, 128, 1, &fitting);
    diag("%d enumerated sm100 configs fit", fitting);
    ok(fitting > 0 && bad == 0,
       "every enumerated sm100 config (bf16/fp16 and fp8 d64..256, 192/128, 128/64, "
       "256/128, 2Q and 1Q, alone and in pairs, with and without per-token scales) keeps "
       "TMEM <= 512 and smem <= carveout, ROPE exactly in the fused rings of dv < dqk, "
       "QSCALE / KSCALE exactly with scales");
    check_decode();
    p = problem(FA4_DTYPE_BF16, 128);
    n = family_sm100.candidates(NULL, 0, &dev, &p);
    is_int(n, 2 * 3 * 6, "bf16 d128 enumerates bn {128, 96, 64} x 3 exp2 x 2 thresholds, "
           "alone and as CTA pairs");
    {
        config_space sp;
        int i, pairs = 0;
        st = config_enumerate(&sp, &dev, &p, FA4_FAMILY_SM100, why, sizeof why);
        for (i = 0; st == FA4_OK && i < sp.count; i++)
            pairs += sp.configs[i].cluster == 2 && sp.configs[i].bn == 128
                     && sp.configs[i].stages == 5;
        ok(st == FA4_OK && pairs == 6,
           "bf16 d128 keeps 6 CTA pairs at bn 128, 5 stages (%d configs fit; lower bn in "
           "pairs would ring more than 8 stages: capped to 8 split stages)", sp.count);
        config_space_free(&sp);
    }

    return done_testing() ? 1 : 0;
}
