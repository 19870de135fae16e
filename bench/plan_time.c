/*
** plan_time.c -- how long fa4_plan_create takes in a fresh process, and
** whether it compiled anything.  Run it twice on one database: the first
** run is cold (NVRTC), the second warm (cubin from the database).
**
**   plan_time DB_PATH [HEAD_DIM]
**
** Prints: context ms, plan ms, NVRTC compiles, config and its source.
*/
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "fa4.h"
#include "jit.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    fa4_context_options co = FA4_CONTEXT_OPTIONS_INIT;
    fa4_problem p = FA4_PROBLEM_INIT;
    fa4_context *ctx;
    fa4_plan *plan;
    fa4_config cfg = FA4_CONFIG_INIT;
    fa4_config_source src;
    char text[256];
    double t0, t1, t2;

    if (argc < 2) {
        fprintf(stderr, "usage: plan_time DB_PATH [HEAD_DIM]\n");
        return 2;
    }
    co.db_path = argv[1];
    p.batch = 4; p.seqlen_q = p.seqlen_k = 4096; p.heads_q = 16; p.heads_kv = 16;
    p.head_dim_qk = argc > 2 ? atoi(argv[2]) : 128;
    t0 = now_ms();
    if (fa4_context_create(&ctx, 0, &co) != FA4_OK) {
        fprintf(stderr, "plan_time: %s\n", fa4_context_last_error());
        return 1;
    }
    t1 = now_ms();
    if (fa4_plan_create(&plan, ctx, &p, NULL) != FA4_OK) {
        fprintf(stderr, "plan_time: %s\n", fa4_context_errmsg(ctx));
        return 1;
    }
    t2 = now_ms();
    fa4_plan_config(plan, &cfg, &src);
    printf("context %.2f ms, plan %.2f ms, NVRTC compiles %ld, config [%s] from %s%s%s\n", t1 - t0, t2 - t1,
           jit_compile_count(), fa4_config_format(&cfg, text, sizeof text), fa4_config_source_string(src),
           fa4_context_warnings(ctx)[0] ? ", warnings: " : "", fa4_context_warnings(ctx));
    fa4_plan_destroy(plan);
    fa4_context_destroy(ctx);
    return 0;
}
