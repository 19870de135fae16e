/*
** test_sm100_compile.c -- NVRTC compiles the sm100 heuristic variants
** (kernels/sm100/) for sm_100a: bf16 d64 (split rings) and d128 (fused
** ring), with and without the causal mask, plus one split ring with K
** staged by depth chunk and one with head_dim_v < head_dim_qk.  Each
** must compile with no spill and within the 128 registers a 512-thread
** CTA has.  The kernel cannot run here (no sm_100 GPU), which the last
** line records as a skip.
*/
#include <stdlib.h>

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
/* Compile CFG for sm_100a; one ok line saying what compiled and how. */
static void check_compile(const device_limits *dev, const fa4_problem *p,
                          const fa4_config *cfg, const char *what)
{
    char why[1024], desc[256], name[128];
    fa4_layout layout;
    jit_kernel k;
    fa4_status st;

    fa4_config_format(cfg, desc, sizeof desc);
    ct_name(name, sizeof name, "sm_100a", p, 0);
    if (!ct_fits(&layout, dev, p, cfg, name, desc))
        return;
    st = jit_compile(&k, "sm_100a", p, cfg, &layout, why, sizeof why);
    if (!ok(st == FA4_OK && k.spill_bytes == 0 && k.regs > 0 && k.regs <= 128,
            "%s %s (%s) compiles without spills (%d regs of 128, %.0f ms)",
            name, what, desc, st == FA4_OK ? k.regs : -1,
            st == FA4_OK ? k.compile_ms : 0.0))
        diag("  %s", st == FA4_OK ? k.log : why);
    if (st == FA4_OK)
        jit_kernel_free(&k);
}

int main(void)
{
    static const int dims[] = { 64, 128 };
    device_limits dev;
    fa4_problem p;
    fa4_config cfg;
    char why[512];
    int i, causal;

    if (jit_nvrtc_version() == 0)
        skip_all("NVRTC not available");
    if (device_limits_for_arch(&dev, "sm_100a", why, sizeof why) != FA4_OK)
        skip_all("no sm_100a limits table (%s)", why);
    plan(7);
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
    skip("sm100 kernel compiled only; needs an sm_100 GPU to run");
    return done_testing() ? 1 : 0;
}
