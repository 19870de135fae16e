#include <stdio.h>
#include <fa4.h>

int main(void)
{
    fa4_context *ctx = NULL;
    fa4_plan *plan = NULL;
    fa4_problem problem = FA4_PROBLEM_INIT;
    fa4_config config = FA4_CONFIG_INIT;
    fa4_config_source source;
    char text[256];
    fa4_status st;

    st = fa4_context_create(&ctx, 0, NULL);
    if (st == FA4_ENODEV) {
        printf("no GPU: %s\n", fa4_context_last_error());
        return 0;
    }
    if (st != FA4_OK) {
        fprintf(stderr, "fa4_context_create: %s: %s\n",
                fa4_status_string(st), fa4_context_last_error());
        return 1;
    }

    /* 4 sequences of 4096 tokens, 16 heads of 128, causal, bf16. */
    problem.dtype = FA4_DTYPE_BF16;
    problem.batch = 4;
    problem.seqlen_q = 4096;
    problem.seqlen_k = 4096;
    problem.heads_q = 16;
    problem.heads_kv = 16;
    problem.head_dim_qk = 128;
    problem.causal = 1;

    /* The slow step: look up, compile or load, bind the kernel. */
    st = fa4_plan_create(&plan, ctx, &problem, NULL);
    if (st == FA4_OK)
        st = fa4_plan_config(plan, &config, &source);
    if (st != FA4_OK) {
        fprintf(stderr, "fa4_plan_create: %s: %s\n",
                fa4_status_string(st), fa4_context_errmsg(ctx));
        fa4_plan_destroy(plan);
        fa4_context_destroy(ctx);
        return 1;
    }
    fa4_config_format(&config, text, sizeof text);
    printf("%s (%s)\n", text, fa4_config_source_string(source));

    /* Then, once per layer and step:
       fa4_forward(plan, &tensors, stream); see fa4_forward(3). */

    fa4_plan_destroy(plan);
    fa4_context_destroy(ctx);
    return 0;
}
