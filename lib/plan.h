/*
** plan.h -- the inside of fa4_plan, and the context's in-memory cache of
** loaded kernels.
*/
#ifndef FA4_PLAN_H
#define FA4_PLAN_H

#include "context.h"
#include "budget.h"

struct fa4_plan {
    fa4_context *ctx;
    fa4_problem problem;
    fa4_config config;
    fa4_config_source source;
    fa4_layout layout;
    CUfunction fn;            /* NULL for a plan_only context */
    struct plan_cache_entry *kernel;  /* shared, owned by ctx->cache */
    unsigned long long tile_counter;  /* dynamic scheduler, without a caller's
                                         workspace; owned by ctx */
};

/* Release every cached module of CTX (context destruction). */
void plan_cache_free(fa4_context *ctx);

/* Launch geometry of PLAN (kernels/README.md "Grid"). */
void launch_grid(const fa4_plan *plan, unsigned grid[3]);

#endif
