#include <stdio.h>
#include <fa4.h>

int main(void)
{
    static const int head_dims[] = { 64, 72, 128 };
    char why[256];
    size_t i;

    for (i = 0; i < sizeof head_dims / sizeof head_dims[0]; i++) {
        fa4_problem p = FA4_PROBLEM_INIT;
        fa4_status st;

        /* Decode with GQA: one new token per sequence against an
           8192-token cache, 32 query heads sharing 8 K/V heads. */
        p.dtype = FA4_DTYPE_BF16;
        p.batch = 16;
        p.seqlen_q = 1;
        p.seqlen_k = 8192;
        p.heads_q = 32;
        p.heads_kv = 8;
        p.head_dim_qk = head_dims[i];
        p.causal = 1;

        st = fa4_problem_check(&p, why, sizeof why);
        if (st == FA4_OK)
            printf("head_dim %d: ok\n", head_dims[i]);
        else
            printf("head_dim %d: %s: %s\n", head_dims[i],
                   fa4_status_string(st), why);
    }
    return 0;
}
