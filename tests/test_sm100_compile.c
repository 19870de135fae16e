/*
** test_sm100_compile.c -- NVRTC compiles the sm100 heuristic variants
** (kernels/sm100/) for sm_100a: bf16 d64 (split rings) and d128 (fused
** ring), with and without the causal mask, plus one split ring with K
** staged by depth chunk, one with head_dim_v < head_dim_qk, rope rings
** (MLA's 192/128 causal and not, 256/128: K's columns past head_dim_v in
** ROPE buffers beside the fused ring), per-token Q/K scales (d128 causal
** and not, 192/128, d256 1Q, a CTA pair), d256 in its
** 1Q mode (one query tile, S double-buffered), causal and not, and CTA
** pairs (cluster 2, cta_group::2): d128 2Q causal and not, d192/128 2Q
** and d256 1Q at their automatic pair configs.  fp8 (e4m3): 2Q and 1Q,
** split and fused rings, 64 and 128 B swizzle, d64/d128/d256 and
** d192/128, causal and not, CTA pairs (d128 at 64 B, d256 at 128 B),
** rope rings (d192/128 at 64 B, d256/128 1Q at 128 B) and per-token
** scales (d128 causal and not, with a rope ring).  The decode mode (bm
** 32): bf16 and fp16 d64, d96, d128, d192/128 and d256 decode steps of
** 1-4 tokens over group 8, causal and not; fp8 refused (FA4_ENOTSUP).
** Each must compile with no spill and within the registers one CTA per
** SM leaves (128 for 512 threads, 255 for the decode mode's 192).  The
** kernel cannot run here (no sm_100 GPU), which the last line records as
** a skip.  FA4_TEST_ALL=1 compiles every enumerated bf16, fp16 and fp8
** config of d64, 96, 128, 192/128, 128/64, 256 and 256/128, and of d128
** and 192/128 with per-token scales, causal and not, instead (make
** check-compile-all).
*/
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "budget.h"
#include "config.h"
#include "family.h"
#include "jit.h"
#include "compile_test_util.h"

/* A bf16 problem with head dim D. */
static fa4_problem problem(int d, int causal)
{
    return ct_problem(FA4_DTYPE_BF16, 2, 4096, d, d, causal);
}
/* CFG's bn, stages and ring as the enumerator resolves them for a CTA
** pair (cluster 2): the first enumerated pair config of its q_tiles. */
static void pair_resolve(fa4_config *cfg, const device_limits *dev, const fa4_problem *p)
{
    config_space sp;
    char why[512];
    int i;

    if (config_enumerate(&sp, dev, p, FA4_FAMILY_SM100, why, sizeof why) != FA4_OK)
        return;
    for (i = 0; i < sp.count; i++)
        if (sp.configs[i].cluster == 2 && sp.configs[i].q_tiles == cfg->q_tiles &&
            sp.configs[i].swizzle == cfg->swizzle) {
            cfg->bn = sp.configs[i].bn;
            cfg->stages = sp.configs[i].stages;
            cfg->fused_kv = sp.configs[i].fused_kv;
            break;
        }
    config_space_free(&sp);
}

/* Compile CFG for sm_100a; one ok line saying what compiled and how. */
static void check_compile(const device_limits *dev, const fa4_problem *p,
                          const fa4_config *cfg, const char *what)
{
    char why[1024], desc[256], name[128];
    fa4_layout layout;
    jit_kernel k;
    fa4_status st;
    int max_regs;

    fa4_config_format(cfg, desc, sizeof desc);
    ct_name(name, sizeof name, "sm_100a", p, 0);
    if (!ct_fits(&layout, dev, p, cfg, name, desc))
        return;
    /* one CTA per SM: the register file over the CTA's threads, at most 255 */
    max_regs = 65536 / layout.threads < 255 ? 65536 / layout.threads : 255;
    st = jit_compile(&k, "sm_100a", p, cfg, &layout, why, sizeof why);
    if (!ok(st == FA4_OK && k.spill_bytes == 0 && k.regs > 0 && k.regs <= max_regs,
            "%s %s (%s) compiles without spills (%d regs of %d, %.0f ms)",
            name, what, desc, st == FA4_OK ? k.regs : -1, max_regs,
            st == FA4_OK ? k.compile_ms : 0.0))
        diag("  %s", st == FA4_OK ? k.log : why);
    if (st == FA4_OK)
        jit_kernel_free(&k);
}

/* Every enumerated config of the head dims the family runs, both 16-bit
** types, causal and not. */
static void compile_all(const device_limits *dev)
{
    static const int dims[][2] = { { 64, 64 }, { 96, 96 }, { 128, 128 }, { 192, 128 },
                                   { 128, 64 }, { 256, 256 }, { 256, 128 } };
    char why[512];
    int d, dt, causal, i;

    for (d = 0; d < (int)(sizeof dims / sizeof dims[0]) + 2; d++)
        for (dt = FA4_DTYPE_BF16; dt <= FA4_DTYPE_FP8_E4M3; dt++)
            for (causal = 0; causal < 2; causal++) {
                /* the last two: d128 and 192/128 with per-token scales */
                const int n = (int)(sizeof dims / sizeof dims[0]), scaled = d >= n;
                const int *dd = scaled ? dims[d == n ? 2 : 3] : dims[d];
                fa4_problem p = ct_problem((fa4_dtype)dt, 2, 4096, dd[0], dd[1], causal);
                config_space sp;

                p.token_scales = scaled;

                if (config_enumerate(&sp, dev, &p, FA4_FAMILY_SM100, why, sizeof why) != FA4_OK) {
                    ok(0, "sm100 d%d/%d enumerates: %s", dd[0], dd[1], why);
                    continue;
                }
                for (i = 0; i < sp.count; i++)
                    check_compile(dev, &p, &sp.configs[i], "enumerated");
                config_space_free(&sp);
            }
}

int main(void)
{
    static const int dims[] = { 64, 128 };
    const int all = getenv("FA4_TEST_ALL") && atoi(getenv("FA4_TEST_ALL"));
    device_limits dev;
    fa4_problem p;
    fa4_config cfg;
    char why[512];
    int i, causal;

    if (jit_nvrtc_version() == 0)
        skip_all("NVRTC not available");
    if (device_limits_for_arch(&dev, "sm_100a", why, sizeof why) != FA4_OK)
        skip_all("no sm_100a limits table (%s)", why);
    if (all) {
        plan_lazy();
        compile_all(&dev);
        skip("sm100 kernel compiled only; needs an sm_100 GPU to run");
        return done_testing() ? 1 : 0;
    }
    plan(52);
    for (i = 0; i < 2; i++)
        for (causal = 0; causal < 2; causal++) {
            p = problem(dims[i], causal);
            family_sm100.heuristic(&cfg, &dev, &p);
            check_compile(&dev, &p, &cfg, cfg.fused_kv ? "fused ring" : "split rings");
        }
    /* bn 96 at d128: 6 slots, split into 3 stages, K in two depth chunks */
    p = problem(128, 0);
    family_sm100.heuristic(&cfg, &dev, &p);
    cfg.bn = 96;
    cfg.stages = 3;
    cfg.fused_kv = 0;
    check_compile(&dev, &p, &cfg, "split rings, K by depth chunk");
    /* head_dim_v < head_dim_qk in split rings (V stages of the V depth) */
    p = ct_problem(FA4_DTYPE_BF16, 2, 4096, 128, 64, 0);
    family_sm100.heuristic(&cfg, &dev, &p);
    cfg.bn = 128;
    cfg.stages = 2;
    cfg.fused_kv = 0;
    check_compile(&dev, &p, &cfg, "split rings, d128/64");
    /* rope mode: MLA 192/128 at bn 128, 3 fused slots and 2 ROPE buffers
       (causal and not), 256/128 with two rope boxes per K tile */
    for (causal = 0; causal < 2; causal++) {
        p = ct_problem(FA4_DTYPE_BF16, 2, 4096, 192, 128, causal);
        family_sm100.heuristic(&cfg, &dev, &p);
        check_compile(&dev, &p, &cfg, "rope ring, d192/128");
    }
    p = ct_problem(FA4_DTYPE_BF16, 2, 4096, 256, 128, 0);
    family_sm100.heuristic(&cfg, &dev, &p);
    cfg.bn = 64;
    cfg.stages = 3;
    cfg.fused_kv = 1;
    check_compile(&dev, &p, &cfg, "rope ring, d256/128");
    /* per-token Q/K scales (the scale warp, QSCALE / KSCALE): d128 causal
       and not, MLA 192/128, d256 1Q, a d128 CTA pair of 4 split stages */
    for (causal = 0; causal < 2; causal++) {
        p = problem(128, causal);
        p.token_scales = 1;
        family_sm100.heuristic(&cfg, &dev, &p);
        check_compile(&dev, &p, &cfg, "per-token scales");
    }
    p = ct_problem(FA4_DTYPE_BF16, 2, 4096, 192, 128, 1);
    p.token_scales = 1;
    family_sm100.heuristic(&cfg, &dev, &p);
    check_compile(&dev, &p, &cfg, "per-token scales, d192/128");
    p = problem(256, 0);
    p.token_scales = 1;
    family_sm100.heuristic(&cfg, &dev, &p);
    check_compile(&dev, &p, &cfg, "per-token scales, 1Q");
    p = problem(128, 1);
    p.token_scales = 1;
    family_sm100.heuristic(&cfg, &dev, &p);
    cfg.cluster = 2;
    cfg.stages = 4;
    cfg.fused_kv = 0;
    check_compile(&dev, &p, &cfg, "per-token scales, CTA pair");
    /* d256: 1Q, bn 96, 3 fused slots */
    for (causal = 0; causal < 2; causal++) {
        p = problem(256, causal);
        family_sm100.heuristic(&cfg, &dev, &p);
        check_compile(&dev, &p, &cfg, cfg.q_tiles == 1 ? "1Q" : "2Q?");
    }
    /* CTA pairs: the heuristic's tiles with cluster 2 and the pair's ring */
    {
        static const int pair_dims[][3] = { { 128, 128, 0 }, { 128, 128, 1 },
                                            { 192, 128, 0 }, { 256, 256, 1 } };
        for (i = 0; i < 4; i++) {
            p = ct_problem(FA4_DTYPE_BF16, 2, 4096, pair_dims[i][0], pair_dims[i][1],
                           pair_dims[i][2]);
            family_sm100.heuristic(&cfg, &dev, &p);
            cfg.cluster = 2;
            pair_resolve(&cfg, &dev, &p);
            check_compile(&dev, &p, &cfg, "CTA pair");
        }
    }
    /* fp8: each head dim's heuristic config (64 B), causal and not, then
       at 128 B where the enumerator offers it, a fused ring, and pairs */
    {
        static const int fp8_dims[][2] = { { 64, 64 }, { 128, 128 }, { 256, 256 },
                                           { 192, 128 } };
        for (i = 0; i < 4; i++)
            for (causal = 0; causal < 2; causal++) {
                p = ct_problem(FA4_DTYPE_FP8_E4M3, 2, 4096, fp8_dims[i][0], fp8_dims[i][1],
                               causal);
                family_sm100.heuristic(&cfg, &dev, &p);
                check_compile(&dev, &p, &cfg, cfg.q_tiles == 1 ? "1Q, 64 B swizzle"
                                                               : "2Q, 64 B swizzle");
            }
        for (causal = 0; causal < 2; causal++) {
            p = ct_problem(FA4_DTYPE_FP8_E4M3, 2, 4096, 128, 128, causal);
            family_sm100.heuristic(&cfg, &dev, &p);
            cfg.swizzle = 128;
            check_compile(&dev, &p, &cfg, "2Q split rings, 128 B swizzle");
            cfg.stages = 7;
            cfg.fused_kv = 1;
            check_compile(&dev, &p, &cfg, "2Q fused ring, 128 B swizzle");
            p = ct_problem(FA4_DTYPE_FP8_E4M3, 2, 4096, 256, 256, causal);
            family_sm100.heuristic(&cfg, &dev, &p);
            cfg.swizzle = 128;
            check_compile(&dev, &p, &cfg, "1Q, 128 B swizzle");
        }
        p = ct_problem(FA4_DTYPE_FP8_E4M3, 2, 4096, 128, 128, 0);
        family_sm100.heuristic(&cfg, &dev, &p);
        cfg.stages = 5;
        cfg.fused_kv = 1;
        check_compile(&dev, &p, &cfg, "2Q fused ring, 64 B swizzle");
        cfg.cluster = 2;
        pair_resolve(&cfg, &dev, &p);
        check_compile(&dev, &p, &cfg, "CTA pair, 64 B swizzle");
        p = ct_problem(FA4_DTYPE_FP8_E4M3, 2, 4096, 256, 256, 1);
        family_sm100.heuristic(&cfg, &dev, &p);
        cfg.cluster = 2;
        cfg.swizzle = 128;
        pair_resolve(&cfg, &dev, &p);
        check_compile(&dev, &p, &cfg, "1Q CTA pair, 128 B swizzle");
        /* rope mode in fp8 (explicit fused rings: the slot rule splits
           these shapes): d192/128 at 64 B, d256/128 1Q at 128 B */
        p = ct_problem(FA4_DTYPE_FP8_E4M3, 2, 4096, 192, 128, 1);
        family_sm100.heuristic(&cfg, &dev, &p);
        cfg.stages = 5;
        cfg.fused_kv = 1;
        check_compile(&dev, &p, &cfg, "rope ring, 64 B swizzle");
        p = ct_problem(FA4_DTYPE_FP8_E4M3, 2, 4096, 256, 128, 0);
        family_sm100.heuristic(&cfg, &dev, &p);
        cfg.bm = 128;
        cfg.q_tiles = 1;
        cfg.bn = 192;
        cfg.swizzle = 128;
        cfg.stages = 5;
        cfg.fused_kv = 1;
        check_compile(&dev, &p, &cfg, "1Q rope ring, 128 B swizzle");
        /* per-token scales beside the descales: d128 causal and not, and
           d192/128 as a rope ring with scales */
        for (causal = 0; causal < 2; causal++) {
            p = ct_problem(FA4_DTYPE_FP8_E4M3, 2, 4096, 128, 128, causal);
            p.token_scales = 1;
            family_sm100.heuristic(&cfg, &dev, &p);
            check_compile(&dev, &p, &cfg, "per-token scales");
        }
        p = ct_problem(FA4_DTYPE_FP8_E4M3, 2, 4096, 192, 128, 0);
        p.token_scales = 1;
        family_sm100.heuristic(&cfg, &dev, &p);
        cfg.stages = 5;
        cfg.fused_kv = 1;
        check_compile(&dev, &p, &cfg, "per-token scales, rope ring");
    }
    /* the decode mode (bm 32, tcgen05.mma.ws M 32): decode steps of 1 or 4
       tokens over group 8, each head dim's default, causal and not */
    {
        static const struct { int dt, d, dv, tokens, causal; } dec[] = {
            { FA4_DTYPE_BF16, 64, 64, 1, 0 },   { FA4_DTYPE_BF16, 128, 128, 1, 0 },
            { FA4_DTYPE_BF16, 128, 128, 4, 1 }, { FA4_DTYPE_FP16, 128, 128, 1, 0 },
            { FA4_DTYPE_FP16, 64, 64, 4, 1 },   { FA4_DTYPE_BF16, 256, 256, 1, 0 },
            { FA4_DTYPE_BF16, 192, 128, 2, 1 }, { FA4_DTYPE_BF16, 96, 96, 1, 0 },
        };
        for (i = 0; i < (int)(sizeof dec / sizeof dec[0]); i++) {
            p = ct_problem((fa4_dtype)dec[i].dt, 8, 4096, dec[i].d, dec[i].dv, dec[i].causal);
            p.seqlen_q = dec[i].tokens;
            p.heads_q = 32;
            p.heads_kv = 4;
            family_sm100.heuristic(&cfg, &dev, &p);
            check_compile(&dev, &p, &cfg, cfg.bm == 32 ? "decode mode" : "decode mode?");
        }
        /* fp8 has no decode mode: refused, not compiled */
        p = ct_problem(FA4_DTYPE_FP8_E4M3, 8, 4096, 128, 128, 0);
        p.seqlen_q = 1;
        p.heads_q = 32;
        p.heads_kv = 4;
        family_sm100.heuristic(&cfg, &dev, &p);
        cfg.bm = 32;
        cfg.q_tiles = 1;
        cfg.swizzle = 128;
        {
            fa4_layout l;
            fa4_status st = budget_fit(&l, &dev, &p, &cfg, why, sizeof why);
            ok(st == FA4_ENOTSUP && strstr(why, "fp8"),
               "sm_100a fp8 d128 decode mode is refused with FA4_ENOTSUP (%s)", why);
        }
    }
    skip("sm100 kernel compiled only; needs an sm_100 GPU to run");
    return done_testing() ? 1 : 0;
}
