/*
** test_sm80_compile.c -- NVRTC compiles a representative sample of sm80
** variants (kernels/sm80/) for sm_80 and sm_90a: the heuristic default of
** every head dim (64, 96, 128, 192/128, 256) in bf16 and fp16, causal and
** not, and a spread of enumerated configs.  Each must compile with no
** spill, since the JIT rejects spilling variants.  No GPU needed;
** FA4_TEST_ALL=1 compiles every enumerated config instead of a sample.
*/
#include <stdlib.h>

#include "tap.h"
#include "budget.h"
#include "config.h"
#include "family.h"
#include "jit.h"
#include "compile_test_util.h"

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

int main(void)
{
    static const char *archs[] = { "sm_80", "sm_90a" };
    static const int dims[][2] = { { 64, 64 }, { 96, 96 }, { 128, 128 }, { 192, 128 },
                                   { 256, 256 } };
    const int all = getenv("FA4_TEST_ALL") && atoi(getenv("FA4_TEST_ALL"));
    char why[512];
    int a, i, t, c, j;

    if (jit_nvrtc_version() == 0)
        skip_all("NVRTC not available");
    plan_lazy();
    for (a = 0; a < 2; a++) {
        device_limits dev;
        if (device_limits_for_arch(&dev, archs[a], why, sizeof why) != FA4_OK) {
            ok(0, "device limits for %s", archs[a]);
            diag("  %s", why);
            continue;
        }
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
