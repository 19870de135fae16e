/*
** test_sm80_compile.c -- NVRTC compiles a representative sample of sm80
** variants (kernels/sm80/) for sm_80 and sm_90a: the heuristic default of
** every head dim (64, 96, 128, 192/128, 256) in bf16 and fp16, causal and
** not, both row splits (16 and 32 query rows per warp) of the prefill
** tile, the 32-row default over paged and varlen K/V, the default with
** the config switches rescale=8 and fused_kv=1, and a spread of
** enumerated configs; fp8 e4m3 inputs (head dims multiples of 64) in the
** defaults of prefill, a decode step (packed heads, splits), a decode
** step over 8-row pages with softcap and sinks, and varlen queries over
** 16-row pages; and the widening rule fp8.cuh uses before sm_89 (e4m3 bits
** moved into fp16's places), on the CPU for all 256 bytes; which variants
** take the lean loop per arch, and the defaults that depend on the SM's
** shared memory, the tile count and the cache layout.
** Each must compile with no spill, since the JIT
** rejects spilling variants.  No GPU needed; FA4_TEST_ALL=1 compiles every
** enumerated config instead of a sample.  FA4_TEST_ARCHS="sm_80 sm_90a
** sm_100a sm_120" compiles for those archs instead; an arch without a
** table of planned limits (sm_86, sm_120, ...) is planned with sm_80's at
** its own compute capability.
*/
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "budget.h"
#include "config.h"
#include "family.h"
#include "jit.h"
#include "compile_test_util.h"
#include "dtype.h"

/* Compile CFG for ARCH; one ok line saying what compiled and how. */
static void check_compile(const char *arch, const device_limits *dev,
                          const fa4_problem *p, const fa4_config *cfg)
{
    char why[1024], desc[256], name[128];
    fa4_layout layout;
    jit_kernel k;
    fa4_status st;

    fa4_config_format(cfg, desc, sizeof desc);
    ct_name(name, sizeof name, arch, p, 1);
    if (p->page_size > 0 || p->varlen)
        snprintf(name + strlen(name), sizeof name - strlen(name), "%s",
                 p->page_size > 0 ? " paged" : " varlen");
    if (!ct_fits(&layout, dev, p, cfg, name, desc))
        return;
    st = jit_compile(&k, arch, p, cfg, &layout, why, sizeof why);
    if (!ok(st == FA4_OK && k.spill_bytes == 0,
            "%s %s compiles without spills (%d regs, estimate %d, %.0f ms)",
            name, desc, st == FA4_OK ? k.regs : -1, layout.regs_estimate,
            k.compile_ms))
        diag("  %s", why);
    if (st == FA4_OK)
        jit_kernel_free(&k);
}

/* The bm 128 prefill tile at 32 query rows per warp for every bn the
** budget admits there, and at 16 rows for the same bn, causal or not;
** then the defaults of the head dim over 16-row pages and over varlen
** sequences, when they have 32 rows.  Returns how many 32-row tiles fit. */
static int check_rows(const char *arch, const device_limits *dev, int d, int dv)
{
    static const int bns[] = { 32, 64, 128 };
    const int swz = d % 64 == 0 && dv % 64 == 0 ? 128 : 64;
    fa4_config cfg;
    fa4_layout layout;
    char text[128], why[512];
    int j, rows, causal, n32 = 0;

    for (j = 0; j < 3; j++) {
        fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, d, dv, 0);
        snprintf(text, sizeof text, "sm80 bm=128 bn=%d stages=2 swizzle=%d warps=4 splits=0",
                 bns[j], swz);
        if (config_parse(&cfg, text, why, sizeof why) != FA4_OK ||
            budget_fit(&layout, dev, &p, &cfg, why, sizeof why) != FA4_OK)
            continue;   /* over the register estimate: not in the space */
        n32++;
        for (rows = 32; rows >= 16; rows -= 16)
            for (causal = 0; causal <= 1; causal++) {
                p = ct_problem_2k(FA4_DTYPE_BF16, d, dv, causal);
                cfg.warps = 128 / rows;
                check_compile(arch, dev, &p, &cfg);
            }
    }
    for (j = 0; j < 2; j++) {   /* paged, then varlen: each problem's own default */
        fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, d, dv, 1);
        if (j == 0) {
            p.page_size = 16;
            p.num_pages = p.batch * p.seqlen_k / 16;
        } else {
            p.varlen = 1;
        }
        if (config_default(&cfg, dev, &p, FA4_FAMILY_SM80, why, sizeof why) == FA4_OK &&
            cfg.warps == cfg.bm / 32)
            check_compile(arch, dev, &p, &cfg);
    }
    return n32;
}

/* The lean loop (FA4_K_PAIRS and FA4_KV_PTRS, budget_sm80.c): on every
** arch where the register estimate leaves a margin, and on 32-row tiles
** with head_dim_v over 96 only before Blackwell, whose ptxas spills them.
** The tables' limits, as the planner has them; no compile. */
static void check_lean_loop(void)
{
    static const struct {
        const char *arch;
        int d;
        const char *text;
        int lean;
    } cases[] = {
        { "sm_80", 128, "sm80 bm=128 bn=64 stages=2 swizzle=128 warps=4", 1 },
        { "sm_90a", 128, "sm80 bm=128 bn=64 stages=2 swizzle=128 warps=4", 1 },
        { "sm_90a", 128, "sm80 bm=128 bn=32 stages=2 swizzle=128 warps=4", 1 },
        { "sm_100a", 128, "sm80 bm=128 bn=32 stages=2 swizzle=128 warps=4", 0 },
        { "sm_100a", 128, "sm80 bm=128 bn=64 stages=2 swizzle=128 warps=8", 1 },
        { "sm_100a", 64, "sm80 bm=128 bn=64 stages=2 swizzle=128 warps=4", 1 },
        { "sm_100a", 256, "sm80 bm=128 bn=64 stages=2 swizzle=128 warps=8", 1 },
    };
    char defs[8192], why[512];
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, cases[i].d, cases[i].d, 0);
        device_limits dev;
        fa4_config c;
        fa4_layout l;
        int nd = -1;

        if (device_limits_for_arch(&dev, cases[i].arch, why, sizeof why) == FA4_OK &&
            config_parse(&c, cases[i].text, why, sizeof why) == FA4_OK &&
            budget_fit(&l, &dev, &p, &c, why, sizeof why) == FA4_OK)
            nd = budget_defines(defs, sizeof defs, &p, &c, &l);
        ok(nd > 0 && !strstr(defs, "#define FA4_K_PAIRS 1\n") == !cases[i].lean &&
           !strstr(defs, "#define FA4_KV_PTRS 1\n") == !cases[i].lean,
           "%s d%d [%s]: lean loop %s", cases[i].arch, cases[i].d, cases[i].text,
           cases[i].lean ? "on" : "off");
        if (nd <= 0)
            diag("  %s", why);
    }
    /* Where Blackwell's ptxas spills the older form, the budget refuses the
       tile (d128 bn 64 at 32 rows) and the default takes bn 32. */
    {
        fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, 128, 128, 0);
        device_limits dev;
        fa4_config c;
        fa4_layout l;
        int st = device_limits_for_arch(&dev, "sm_100a", why, sizeof why);
        if (st == FA4_OK)
            st = config_parse(&c, "sm80 bm=128 bn=64 stages=2 swizzle=128 warps=4", why,
                              sizeof why);
        ok(st == FA4_OK && budget_fit(&l, &dev, &p, &c, why, sizeof why) == FA4_ENOFIT &&
           strstr(why, "Blackwell"), "sm_100a d128 bn 64 at 32 rows is refused: %s", why);
        st = config_default(&c, &dev, &p, FA4_FAMILY_SM80, why, sizeof why);
        ok(st == FA4_OK && c.bn == 32 && c.warps == 4, "sm_100a d128 default: bn 32 at 32 rows");
    }
}

/* Defaults that depend on the device and the cache layout, on the tables'
** limits: d256 in two CTAs of bm 64 per SM up to 8k keys where the SM's
** shared memory holds them (the H100, not an A100); decode steps (1 query
** token) and speculative ones (4, 8) with 128-key blocks in 2 stages over a
** contiguous 16-bit cache up to d128 when the tiles (batch x 2 KV heads)
** fit the 132 SMs, 64-key blocks beyond, over pages, for fp8 and at d256.
** The few-row defaults are compiled too. */
static void check_defaults(void)
{
    static const struct {
        const char *arch;
        int batch, sq, sk, d, causal, page, fp8;
        int bm, bn, stages, rescale;
    } cases[] = {
        { "sm_90a", 1, 512, 512, 256, 0, 0, 0, 64, 64, 1, 8 },
        { "sm_90a", 1, 2048, 2048, 256, 1, 0, 0, 64, 64, 1, 8 },
        { "sm_90a", 1, 8192, 8192, 256, 0, 0, 0, 64, 64, 1, 8 },
        { "sm_90a", 1, 16384, 16384, 256, 0, 0, 0, 128, 64, 2, 0 },
        { "sm_90a", 1, 16384, 16384, 256, 1, 0, 0, 128, 64, 2, 0 },
        { "sm_80", 1, 2048, 2048, 256, 0, 0, 0, 128, 64, 1, 0 },
        { "sm_90a", 8, 1, 8192, 128, 0, 0, 0, 16, 128, 2, 0 },
        { "sm_90a", 66, 1, 8192, 64, 0, 0, 0, 16, 128, 2, 0 },
        { "sm_90a", 67, 1, 8192, 128, 0, 0, 0, 16, 64, 3, 0 },
        { "sm_90a", 8, 1, 8192, 128, 0, 16, 0, 16, 64, 3, 0 },
        { "sm_90a", 8, 1, 8192, 128, 0, 0, 1, 16, 64, 3, 0 },
        { "sm_90a", 8, 1, 8192, 256, 0, 0, 0, 16, 64, 2, 0 },
        { "sm_90a", 32, 4, 8192, 128, 1, 0, 0, 64, 128, 2, 0 },
        { "sm_90a", 66, 8, 8192, 128, 1, 0, 0, 64, 128, 2, 0 },
        { "sm_90a", 67, 8, 8192, 128, 1, 0, 0, 64, 64, 2, 0 },
        { "sm_90a", 32, 4, 8192, 128, 1, 16, 0, 64, 64, 2, 0 },
    };
    char why[512];
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fa4_problem p = ct_problem(cases[i].fp8 ? FA4_DTYPE_FP8_E4M3 : FA4_DTYPE_BF16,
                                   cases[i].batch, cases[i].sk, cases[i].d, cases[i].d,
                                   cases[i].causal);
        device_limits dev;
        fa4_config c;
        int st = device_limits_for_arch(&dev, cases[i].arch, why, sizeof why);

        p.seqlen_q = cases[i].sq;
        if (cases[i].sq < 16)
            p.heads_kv = 2;    /* a few rows per KV head: the serving tiles */
        if (cases[i].page) {
            p.page_size = cases[i].page;
            p.num_pages = p.batch * p.seqlen_k / cases[i].page;
        }
        if (st == FA4_OK)
            st = config_default(&c, &dev, &p, FA4_FAMILY_SM80, why, sizeof why);
        ok(st == FA4_OK && c.bm == cases[i].bm && c.bn == cases[i].bn &&
           c.stages == cases[i].stages && c.rescale_threshold == cases[i].rescale,
           "%s b%d %dx%d d%d%s%s%s: default bm=%d bn=%d stages=%d rescale=%d", cases[i].arch,
           cases[i].batch, cases[i].sq, cases[i].sk, cases[i].d, cases[i].causal ? " causal" : "",
           cases[i].page ? " paged" : "", cases[i].fp8 ? " fp8" : "", cases[i].bm, cases[i].bn,
           cases[i].stages, cases[i].rescale);
        if (st != FA4_OK)
            diag("  %s", why);
        else if (cases[i].sq < 16)
            check_compile(cases[i].arch, &dev, &p, &c);
    }
}

/* The budget's refusals of the config switches and of tiles at the
** register edge, each with its reason. */
static void check_refusals(const device_limits *dev)
{
    static const struct {
        const char *text;
        int d;
        const char *why;
    } cases[] = {
        { "sm80 bm=128 bn=64 stages=1 swizzle=128 warps=4 fused_kv=1", 64, "stages" },
        { "sm80 bm=128 bn=64 stages=2 swizzle=128 warps=4 rescale=9", 64, "rescale=9" },
        { "sm80 bm=128 bn=64 stages=2 swizzle=128 warps=4 fused_kv=1", 128, "fused_kv" },
        { "sm80 bm=64 bn=64 stages=2 swizzle=128 warps=2", 128, "bm=128 stages=2" },
        { "sm80 bm=128 bn=64 stages=3 swizzle=128 warps=4", 128, "bm=128 stages=2" },
        /* e4m3 rows of 96 B fill no swizzle box; bn 64 at 32 rows spills */
        { "sm80 bm=128 bn=32 stages=2 swizzle=64 warps=4", -96, "multiples of 64" },
        { "sm80 bm=128 bn=64 stages=2 swizzle=128 warps=4", -128, "+ 8 fp8" },
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* a negative head dim: the same with fp8 inputs */
        const int d = cases[i].d < 0 ? -cases[i].d : cases[i].d;
        fa4_problem p = ct_problem_2k(cases[i].d < 0 ? FA4_DTYPE_FP8_E4M3 : FA4_DTYPE_BF16,
                                      d, d, 0);
        fa4_config cfg;
        fa4_layout layout;
        char why[512] = "";
        fa4_status st = config_parse(&cfg, cases[i].text, why, sizeof why);
        if (st == FA4_OK)
            st = budget_fit(&layout, dev, &p, &cfg, why, sizeof why);
        ok(st != FA4_OK && strstr(why, cases[i].why), "%s budget refuses \"%s\" at %sd%d (%s)",
           dev->arch, cases[i].text, cases[i].d < 0 ? "fp8 " : "", d, why);
    }
}

/* fp16 bits to float (normals and subnormals; no infinities here). */
static double half_value(uint16_t h)
{
    const int e = (h >> 10) & 31, m = h & 1023;
    const double v = e ? ldexp(1.0 + m / 1024.0, e - 15) : ldexp(m / 1024.0, -14);
    return h & 0x8000 ? -v : v;
}

/* sm80/fp8.cuh before sm_89: byte B at the top of a 16-bit half, the sign
** kept and the rest shifted right by one, is B's e4m3 value times 2^-8
** (FP8_UNIT) for every byte but the two NaNs. */
static void check_fp8_widening(void)
{
    int b, bad = 0, first = -1;

    for (b = 0; b < 256; b++) {
        const uint32_t h = (uint32_t)b << 8;
        const uint16_t f = (uint16_t)((h & 0x8000u) | ((h >> 1) & 0x3f80u));
        if ((b & 0x7f) == 0x7f)
            continue;
        if (half_value(f) != ldexp(dtype_e4m3_to_float((uint8_t)b), -8)) {
            bad++;
            first = first < 0 ? b : first;
        }
    }
    if (!ok(bad == 0, "e4m3 widened by moving its bits into fp16's is the value times 2^-8 "
            "for the 254 non-NaN bytes"))
        diag("  %d differ, the first 0x%02x", bad, first);
}

/* fp8 e4m3 inputs: the defaults of the serving and prefill shapes of
** head dims D/DV (multiples of 64) compile without spills. */
static void check_fp8(const char *arch, const device_limits *dev, int d, int dv)
{
    int k;

    for (k = 0; k < 5; k++) {
        static const char *what[] = { "prefill", "prefill causal", "decode GQA 4",
                                      "decode GQA 4 over 8-row pages, softcap, sinks",
                                      "varlen causal over 16-row pages" };
        fa4_problem p = ct_problem_2k(FA4_DTYPE_FP8_E4M3, d, dv, k == 1 || k == 4);
        fa4_config cfg;
        char why[512];
        if (k >= 2 && k <= 3) {
            p.seqlen_q = 1;
            p.seqlen_k = 8192;
            p.heads_kv = p.heads_q / 4;
        }
        if (k == 3) {
            p.page_size = 8;
            p.softcap = 30.0f;
            p.attention_sinks = 1;
        }
        if (k == 4) {
            p.varlen = 1;
            p.page_size = 16;
        }
        if (k >= 3) {
            p.block_table_stride = p.seqlen_k / p.page_size;
            p.num_pages = p.batch * p.block_table_stride;
        }
        if (config_default(&cfg, dev, &p, FA4_FAMILY_SM80, why, sizeof why) != FA4_OK) {
            ok(0, "%s has an sm80 fp8 default for d%d/%d %s: %s", arch, d, dv, what[k], why);
            continue;
        }
        diag("fp8 d%d/%d %s:", d, dv, what[k]);
        check_compile(arch, dev, &p, &cfg);
    }
}

/* The constant softmax max (kernels/sm80/softmax.cuh) for bf16 under a
   cap of at most 52 only; the fp16 and larger-cap variants compile. */
static void check_softcap_fixed_max(const char *arch, const device_limits *dev)
{
    static const struct { fa4_dtype dt; float cap; int fixed; } cases[] = {
        { FA4_DTYPE_BF16, 30.0f, 1 }, { FA4_DTYPE_BF16, 60.0f, 0 }, { FA4_DTYPE_FP16, 30.0f, 0 },
    };
    char defs[8192];
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fa4_problem p = ct_problem_2k(cases[i].dt, 128, 128, 1);
        fa4_config c;
        int n;
        p.softcap = cases[i].cap;
        n = ct_default_defines(defs, sizeof defs, &c, dev, &p, FA4_FAMILY_SM80);
        ok(n > 0 && !strstr(defs, "FA4_SOFTCAP_FIXED_MAX") == !cases[i].fixed,
           "%s sm80 %s softcap %g: %s max", arch, dtype_of(cases[i].dt)->name,
           (double)cases[i].cap, cases[i].fixed ? "constant" : "running");
        if (n > 0 && !cases[i].fixed)
            check_compile(arch, dev, &p, &c);
    }
}

int main(void)
{
    static const char *default_archs[] = { "sm_80", "sm_90a" };
    const char *archs[8];
    char arch_list[256];
    int narchs = 0;
    static const int dims[][2] = { { 64, 64 }, { 96, 96 }, { 128, 128 }, { 192, 128 },
                                   { 256, 256 } };
    const int all = getenv("FA4_TEST_ALL") && atoi(getenv("FA4_TEST_ALL"));
    char why[512];
    int a, i, t, c, j;

    if (jit_nvrtc_version() == 0)
        skip_all("NVRTC not available");
    if (getenv("FA4_TEST_ARCHS") && strlen(getenv("FA4_TEST_ARCHS")) < sizeof arch_list) {
        char *tok, *save = NULL;
        strcpy(arch_list, getenv("FA4_TEST_ARCHS"));
        for (tok = strtok_r(arch_list, " ,", &save); tok && narchs < 8;
             tok = strtok_r(NULL, " ,", &save))
            archs[narchs++] = tok;
    }
    if (narchs == 0)
        for (narchs = 0; narchs < 2; narchs++)
            archs[narchs] = default_archs[narchs];
    plan_lazy();
    check_fp8_widening();
    check_lean_loop();
    check_defaults();
    for (a = 0; a < narchs; a++) {
        device_limits dev;
        if (device_limits_for_arch(&dev, archs[a], why, sizeof why) != FA4_OK) {
            /* sm_80's table at the arch's own compute capability, which
               the budget's choices (the lean loop) depend on. */
            if (device_limits_for_arch(&dev, "sm_80", why, sizeof why) != FA4_OK) {
                ok(0, "device limits for %s", archs[a]);
                diag("  %s", why);
                continue;
            }
            dev.cc = atoi(archs[a] + (strncmp(archs[a], "sm_", 3) ? 0 : 3));
        }
        check_refusals(&dev);
        check_softcap_fixed_max(archs[a], &dev);
        for (i = 0; i < 5; i++) {
            /* The default, in both dtypes, causal and not. */
            for (t = 0; t < 2; t++)
                for (c = 0; c < 2; c++) {
                    fa4_problem p = ct_problem_2k(t ? FA4_DTYPE_FP16 : FA4_DTYPE_BF16,
                                            dims[i][0], dims[i][1], c);
                    fa4_config cfg;
                    if (config_default(&cfg, &dev, &p, FA4_FAMILY_SM80, why,
                                       sizeof why) != FA4_OK) {
                        ok(0, "%s has an sm80 default for d%d/%d", archs[a], dims[i][0],
                           dims[i][1]);
                        diag("  %s", why);
                        continue;
                    }
                    check_compile(archs[a], &dev, &p, &cfg);
                }
            /* Softcap and sinks with the default prefill and decode tiles. */
            for (c = 0; c < 2; c++) {
                fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, dims[i][0], dims[i][1], c);
                fa4_config cfg;
                p.softcap = 30.0f;
                p.attention_sinks = 1;
                if (c) {                  /* a decode step: packed heads, splits */
                    p.seqlen_q = 1;
                    p.heads_kv = 2;
                }
                if (config_default(&cfg, &dev, &p, FA4_FAMILY_SM80, why, sizeof why) == FA4_OK)
                    check_compile(archs[a], &dev, &p, &cfg);
                else
                    ok(0, "%s sm80 default with softcap and sinks: %s", archs[a], why);
            }
            /* The config switches on the default prefill tile: rescale=8
               (lazy rescale), and fused_kv=1 (one barrier per block) at the
               default's bn or, where that is over the register estimate,
               the largest smaller bn that fits (at 16 rows per warp where
               32 rows refuse it). */
            for (c = 0; c < 2; c++) {
                fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, dims[i][0], dims[i][1], c);
                fa4_config cfg;
                fa4_layout layout;
                if (config_default(&cfg, &dev, &p, FA4_FAMILY_SM80, why, sizeof why) != FA4_OK) {
                    ok(0, "%s has an sm80 default for d%d/%d", archs[a], dims[i][0],
                       dims[i][1]);
                    continue;
                }
                cfg.rescale_threshold = 8;
                check_compile(archs[a], &dev, &p, &cfg);
                cfg.rescale_threshold = 0;
                cfg.fused_kv = 1;
                if (cfg.stages < 2)
                    cfg.stages = 2;
                if (budget_fit(&layout, &dev, &p, &cfg, why, sizeof why) != FA4_OK &&
                    dims[i][1] > 64)
                    cfg.warps = cfg.bm / 16;    /* 32 rows: fused only up to dv 64 */
                while (cfg.bn > 32 &&
                       budget_fit(&layout, &dev, &p, &cfg, why, sizeof why) != FA4_OK)
                    cfg.bn /= 2;
                check_compile(archs[a], &dev, &p, &cfg);
            }
            if (dims[i][0] % 64 == 0 && dims[i][1] % 64 == 0)
                check_fp8(archs[a], &dev, dims[i][0], dims[i][1]);
            /* Both row splits; head dims up to 192/128 have 32-row tiles. */
            {
                int n32 = check_rows(archs[a], &dev, dims[i][0], dims[i][1]);
                if (dims[i][0] <= 192)
                    ok(n32 > 0, "%s d%d/%d: %d bm-128 tiles of 32 rows per warp fit the budget",
                       archs[a], dims[i][0], dims[i][1], n32);
            }
            /* A spread of the enumerated space (every config with
               FA4_TEST_ALL), dtype and causality alternating. */
            {
                fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, dims[i][0], dims[i][1], 0);
                config_space sp;
                int step;
                if (config_enumerate(&sp, &dev, &p, FA4_FAMILY_SM80, why, sizeof why) != FA4_OK
                    || sp.count == 0) {
                    ok(0, "%s enumerates sm80 configs for d%d/%d", archs[a], dims[i][0],
                       dims[i][1]);
                    diag("  %s", why);
                    continue;
                }
                step = all ? 1 : (sp.count + 3) / 4;
                for (j = (all ? 0 : (i + a) % step); j < sp.count; j += step) {
                    fa4_problem q = ct_problem_2k(j & 1 ? FA4_DTYPE_FP16 : FA4_DTYPE_BF16,
                                            dims[i][0], dims[i][1], (j >> 1) & 1);
                    check_compile(archs[a], &dev, &q, &sp.configs[j]);
                }
                config_space_free(&sp);
            }
        }
    }
    return done_testing();
}
