#include <stdio.h>
#include <fa4.h>

/* The CUDA runtime calls used below, as <cuda_runtime_api.h>
   declares them (cudaStream_t is fa4_stream; 0 is success).
   Real programs include that header; link with -lcudart. */
int cudaMalloc(void **ptr, size_t size);
int cudaFree(void *ptr);
int cudaStreamCreate(fa4_stream *stream);
int cudaStreamSynchronize(fa4_stream stream);
int cudaStreamDestroy(fa4_stream stream);

enum { BATCH = 2, SEQ = 1024, HEADS = 8, DIM = 128 };

int main(void)
{
    const size_t n = (size_t)BATCH * SEQ * HEADS;  /* rows */
    const size_t bytes = n * DIM * 2;                /* bf16 */
    fa4_context *ctx = NULL;
    fa4_plan *plan = NULL;
    fa4_problem problem = FA4_PROBLEM_INIT;
    fa4_tensors t = FA4_TENSORS_INIT;
    fa4_stream stream = NULL;
    void *q = NULL, *k = NULL, *v = NULL, *o = NULL, *lse = NULL;
    fa4_status st;
    int rc = 1;

    st = fa4_context_create(&ctx, 0, NULL);
    if (st != FA4_OK) {
        printf("fa4_context_create: %s: %s\n",
               fa4_status_string(st), fa4_context_last_error());
        return st == FA4_ENODEV ? 0 : 1;
    }

    problem.batch = BATCH;
    problem.seqlen_q = SEQ;
    problem.seqlen_k = SEQ;
    problem.heads_q = HEADS;
    problem.heads_kv = HEADS;
    problem.head_dim_qk = DIM;
    problem.causal = 1;
    problem.return_lse = 1;
    st = fa4_plan_create(&plan, ctx, &problem, NULL);
    if (st != FA4_OK)
        goto done;

    if (cudaMalloc(&q, bytes) || cudaMalloc(&k, bytes) ||
        cudaMalloc(&v, bytes) || cudaMalloc(&o, bytes) ||
        cudaMalloc(&lse, n * sizeof(float)) ||
        cudaStreamCreate(&stream)) {
        fprintf(stderr, "CUDA allocation failed\n");
        goto done;
    }
    /* ... fill q, k and v: bf16, [batch, seq, heads, dim] ... */

    t.q = q;
    t.k = k;
    t.v = v;
    t.o = o;
    t.lse = lse;
    if ((st = fa4_forward(plan, &t, stream)) != FA4_OK)
        goto done;
    if (cudaStreamSynchronize(stream) != 0) {
        fprintf(stderr, "the attention kernel failed\n");
        goto done;
    }
    printf("attention done: o and lse hold the result\n");
    rc = 0;

done:
    if (st != FA4_OK)
        fprintf(stderr, "%s: %s\n", fa4_status_string(st),
                fa4_context_errmsg(ctx));
    if (stream != NULL) {
        cudaStreamSynchronize(stream);   /* before the plan goes */
        cudaStreamDestroy(stream);
    }
    fa4_plan_destroy(plan);
    cudaFree(q);
    cudaFree(k);
    cudaFree(v);
    cudaFree(o);
    cudaFree(lse);
    fa4_context_destroy(ctx);
    return rc;
}
