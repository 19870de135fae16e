/*
** compile_test_util.h -- what the budget and NVRTC compile tests
** (tests/test_sm*_compile.c, tests/test_budget_sm100.c) share: the test
** problem, the name an ok line gives it, and the budget fit that must come
** before a compile.  Header-only; every function is static inline so that
** a test that does not call one gets no warning.  Include after tap.h,
** budget.h and config.h.
*/
#ifndef FA4_COMPILE_TEST_UTIL_H
#define FA4_COMPILE_TEST_UTIL_H

#include <stdio.h>
#include "dtype.h"

/* A problem of DTYPE: BATCH x 16 heads x SEQLEN (q and k), head dims D /
** DV, CAUSAL (with the matching right window: 0 causal, -1 none). */
static inline fa4_problem ct_problem(fa4_dtype dtype, int batch, int seqlen,
                                     int d, int dv, int causal)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    p.dtype = dtype;
    p.batch = batch;
    p.seqlen_q = p.seqlen_k = seqlen;
    p.heads_q = p.heads_kv = 16;
    p.head_dim_qk = d;
    p.head_dim_v = dv;
    p.causal = causal;
    p.window_right = causal ? 0 : -1;
    return p;
}

/* The sm80 and sm90 compile tests' problem: DTYPE, 2 x 16 x 2048, head
** dims D / DV, CAUSAL, softmax scale 1. */
static inline fa4_problem ct_problem_2k(fa4_dtype dtype, int d, int dv,
                                        int causal)
{
    fa4_problem p = ct_problem(dtype, 2, 2048, d, dv, causal);
    p.softmax_scale = 1.0f;
    return p;
}

/* How an ok line names P on ARCH, into BUF: "sm_90a bf16 d128/128 causal"
** (WITH_DV 0: "d128", for families where dv is always d). */
static inline const char *ct_name(char *buf, size_t size, const char *arch,
                                  const fa4_problem *p, int with_dv)
{
    char dims[32];

    if (with_dv)
        snprintf(dims, sizeof dims, "d%d/%d", p->head_dim_qk, p->head_dim_v);
    else
        snprintf(dims, sizeof dims, "d%d", p->head_dim_qk);
    snprintf(buf, size, "%s %s %s%s", arch,
             dtype_of(p->dtype) ? dtype_of(p->dtype)->name : "?", dims,
             p->causal ? " causal" : "");
    return buf;
}

/* Fit CFG (formatted as DESC) for P on DEV into *LAYOUT; 1 when it fits.
** When it does not, the failing ok line "NAME DESC fits" and the reason
** as a diag line, and 0. */
static inline int ct_fits(fa4_layout *layout, const device_limits *dev,
                          const fa4_problem *p, const fa4_config *cfg,
                          const char *name, const char *desc)
{
    char why[1024];

    if (budget_fit(layout, dev, p, cfg, why, sizeof why) == FA4_OK)
        return 1;
    ok(0, "%s %s fits", name, desc);
    diag("  %s", why);
    return 0;
}

/* FAMILY's default config for P on DEV into *CFG, and the defines it
** compiles with into DEFS (budget_defines()): their length, or -1 when
** there is no default, it does not fit, or DEFS is too small. */
static inline int ct_default_defines(char *defs, size_t size, fa4_config *cfg,
                                     const device_limits *dev, const fa4_problem *p,
                                     fa4_family family)
{
    char why[512];
    fa4_layout l;

    if (config_default(cfg, dev, p, family, why, sizeof why) != FA4_OK ||
        budget_fit(&l, dev, p, cfg, why, sizeof why) != FA4_OK)
        return -1;
    return budget_defines(defs, size, p, cfg, &l);
}

#endif
