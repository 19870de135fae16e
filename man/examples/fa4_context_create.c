#include <stdio.h>
#include <fa4.h>

int main(int argc, char **argv)
{
    fa4_context_options opts = FA4_CONTEXT_OPTIONS_INIT;
    fa4_context *ctx = NULL;
    const char *warnings;
    fa4_status st;

    if (argc > 1)
        opts.db_path = argv[1];   /* else $FA4_DB, or the cache */

    st = fa4_context_create(&ctx, 0, &opts);
    if (st == FA4_ENODEV) {
        /* No driver or no GPU: say why, then plan for Hopper. */
        printf("no GPU (%s); planning for sm_90a\n",
               fa4_context_last_error());
        opts.plan_only = 1;
        opts.arch = "sm_90a";
        st = fa4_context_create(&ctx, 0, &opts);
    }
    if (st != FA4_OK) {
        fprintf(stderr, "fa4_context_create: %s: %s\n",
                fa4_status_string(st), fa4_context_errmsg(NULL));
        return 1;
    }

    warnings = fa4_context_warnings(ctx);
    if (warnings[0] != '\0')
        fprintf(stderr, "libfa4 warnings:\n%s\n", warnings);
    printf("context ready%s\n",
           opts.plan_only ? " (plan only)" : "");

    fa4_context_destroy(ctx);
    return 0;
}
