/* A libfa4 consumer built through find_package(fa4): header and library
   agree, and a problem checks without a GPU. */
#include <stdio.h>
#include <string.h>
#include <fa4.h>

int main(void)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    char why[256];

    if (strcmp(fa4_version(), FA4_VERSION_STRING) != 0) {
        fprintf(stderr, "header %s, library %s\n", FA4_VERSION_STRING, fa4_version());
        return 1;
    }
    p.batch = 2;
    p.seqlen_q = p.seqlen_k = 1024;
    p.heads_q = 16;
    p.heads_kv = 4;
    p.head_dim_qk = 128;
    p.causal = 1;
    if (fa4_problem_check(&p, why, sizeof why) != FA4_OK) {
        fprintf(stderr, "fa4_problem_check: %s\n", why);
        return 1;
    }
    printf("libfa4 %s\n", fa4_version());
    return 0;
}
