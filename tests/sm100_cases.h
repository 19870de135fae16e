/*
** sm100_cases.h -- the sm100 variants the compile-only tests check, as
** data: a problem (2 x 4096 tokens, compile_test_util.h's ct_problem), the
** heuristic's config for it, and the overrides that reach a mode (1Q,
** rope rings, CTA pairs, swizzles, ring kinds, decode steps that take the
** decode mode).  test_sm100_ptx reads the PTX of each.
*/
#ifndef FA4_TEST_SM100_CASES_H
#define FA4_TEST_SM100_CASES_H

#include "budget.h"
#include "config.h"
#include "family.h"
#include "compile_test_util.h"

/* sm100_case.ring: keep the heuristic's, split K/V rings, or one fused ring. */
enum { SM100_RING_KEEP = 0, SM100_SPLIT, SM100_FUSED };

typedef struct sm100_case {
    const char *what;
    fa4_dtype dtype;
    int d, dv, causal;
    int token_scales;
    fa4_dtype out;                  /* 0: the dtype's default */
    /* Overrides of the heuristic's config; 0 keeps its value. */
    int bm, q_tiles, bn, swizzle, stages, ring, cluster;
    /* A decode step: this many query tokens (0: 4096) over 4096 keys, the
       16 query heads in groups of GROUP per KV head (the heuristic then
       takes the decode mode, bm 32); SPLITS overrides its splits. */
    int tokens, group, splits;
} sm100_case;

/* A case's problem fields, for designated initializers that leave the
** overrides at 0. */
#define SM100_CASE(WHAT, DTYPE, D, DV, CAUSAL) \
    .what = (WHAT), .dtype = (DTYPE), .d = (D), .dv = (DV), .causal = (CAUSAL)

/* The problem and config of C on DEV. */
static inline void sm100_case_make(fa4_problem *p, fa4_config *cfg, const device_limits *dev,
                                   const sm100_case *c)
{
    *p = ct_problem(c->dtype, 2, 4096, c->d, c->dv, c->causal);
    p->token_scales = c->token_scales;
    if (c->tokens) {
        p->seqlen_q = c->tokens;
        p->heads_kv = p->heads_q / (c->group ? c->group : 1);
    }
    if (c->out)
        p->out_dtype = c->out;
    family_sm100.heuristic(cfg, dev, p);
    if (c->cluster) cfg->cluster = c->cluster;
    if (c->bm) cfg->bm = c->bm;
    if (c->q_tiles) cfg->q_tiles = c->q_tiles;
    if (c->bn) cfg->bn = c->bn;
    if (c->swizzle) cfg->swizzle = c->swizzle;
    if (c->stages) cfg->stages = c->stages;
    if (c->ring) cfg->fused_kv = c->ring == SM100_FUSED;
    if (c->splits) cfg->splits = c->splits;
}

#endif
