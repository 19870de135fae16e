#include <stdio.h>
#include <fa4.h>

int main(void)
{
    fa4_context *ctx = NULL;
    fa4_plan *plan = NULL;
    fa4_problem problem = FA4_PROBLEM_INIT;
    fa4_plan_options opts = FA4_PLAN_OPTIONS_INIT;
    fa4_config config = FA4_CONFIG_INIT;
    fa4_config_source source;
    char text[256];
    fa4_status st;

    st = fa4_context_create(&ctx, 0, NULL);
    if (st != FA4_OK) {
        printf("fa4_context_create: %s: %s\n",
               fa4_status_string(st), fa4_context_last_error());
        return st == FA4_ENODEV ? 0 : 1;
    }

    problem.batch = 8;
    problem.seqlen_q = 2048;
    problem.seqlen_k = 2048;
    problem.heads_q = 16;
    problem.heads_kv = 16;
    problem.head_dim_qk = 128;

    /* 1. The config the databases (or the heuristic) propose. */
    st = fa4_plan_create(&plan, ctx, &problem, NULL);
    if (st == FA4_OK)
        st = fa4_plan_config(plan, &config, &source);
    if (st != FA4_OK)
        goto done;
    fa4_config_format(&config, text, sizeof text);
    printf("%-9s %s\n", fa4_config_source_string(source), text);
    fa4_plan_destroy(plan);
    plan = NULL;

    /* 2. The same variant with a deeper K/V pipeline, given
          explicitly: it may not fit, and the detail says why. */
    config.stages += 2;
    opts.config = &config;
    st = fa4_plan_create(&plan, ctx, &problem, &opts);
    if (st == FA4_ENOFIT || st == FA4_ENOTSUP) {
        printf("explicit  %s: %s\n", fa4_status_string(st),
               fa4_context_errmsg(ctx));
        st = FA4_OK;
    } else if (st == FA4_OK) {
        fa4_config_format(&config, text, sizeof text);
        printf("explicit  %s\n", text);
    }

done:
    if (st != FA4_OK)
        fprintf(stderr, "fa4_plan_create: %s: %s\n",
                fa4_status_string(st), fa4_context_errmsg(ctx));
    fa4_plan_destroy(plan);
    fa4_context_destroy(ctx);
    return st == FA4_OK ? 0 : 1;
}
