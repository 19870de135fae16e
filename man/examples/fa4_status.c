#include <stdio.h>
#include <fa4.h>

/* Print the fixed text of ST and the detail recorded on CTX. */
static void report(const char *fn, fa4_status st,
                   const fa4_context *ctx)
{
    fprintf(stderr, "%s: %s (%d): %s\n", fn, fa4_status_string(st),
            (int)st, fa4_context_errmsg(ctx));
}

int main(void)
{
    fa4_context *ctx = NULL;
    fa4_plan *plan = NULL;
    fa4_problem problem = FA4_PROBLEM_INIT;
    fa4_status st;
    int code;

    for (code = FA4_OK; code <= FA4_ENOFIT; code++)
        printf("%d  %s\n", code,
               fa4_status_string((fa4_status)code));

    st = fa4_context_create(&ctx, 0, NULL);
    if (st != FA4_OK) {
        report("fa4_context_create", st, NULL);
        return st == FA4_ENODEV ? 0 : 1;
    }

    problem.batch = 1;
    problem.seqlen_q = 512;
    problem.seqlen_k = 512;
    problem.heads_q = 12;
    problem.heads_kv = 12;
    problem.head_dim_qk = 72;       /* not a supported head size */
    st = fa4_plan_create(&plan, ctx, &problem, NULL);
    if (st != FA4_OK)           /* FA4_EINVAL, naming the field */
        report("fa4_plan_create", st, ctx);

    fa4_plan_destroy(plan);
    fa4_context_destroy(ctx);
    return 0;
}
