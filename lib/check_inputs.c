/*
** check_inputs.c -- see check_inputs.h.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check_inputs.h"

int check_inputs_enabled(const fa4_context *ctx)
{
    const char *env = getenv("FA4_CHECK_INPUTS");
    return ctx->check_inputs || (env && !strcmp(env, "1"));
}

/* Copy N int32 from device address SRC into a new host array *OUT. */
static fa4_status fetch(const fa4_plan *plan, int32_t **out, const int32_t *src, size_t n,
                        const char *name)
{
    fa4_context *ctx = plan->ctx;
    char txt[256];
    CUresult res;
    fa4_status st;

    if (!(*out = malloc(n * sizeof **out)))
        return error_set(ctx, FA4_ENOMEM, "out of memory checking %s", name);
    if ((st = context_push(ctx)) != FA4_OK)
        return st;
    res = ctx->cu->cuMemcpyDtoH(*out, (CUdeviceptr)(uintptr_t)src, n * sizeof **out);
    context_pop(ctx);
    if (res != CUDA_SUCCESS)
        return error_set(ctx, FA4_ECUDA, "check_inputs: reading %s (%zu entries): %s", name, n,
                         cuda_error_text(res, txt, sizeof txt));
    return FA4_OK;
}

/* CU[0..batch] starts at 0, never decreases, no length above MAX. */
static fa4_status check_offsets(const fa4_plan *plan, const int32_t *cu, int batch, int max,
                                const char *name, const char *max_name)
{
    int b;

    if (cu[0] != 0)
        return error_set(plan->ctx, FA4_EINVAL, "%s[0]=%d; must be 0", name, (int)cu[0]);
    for (b = 0; b < batch; b++) {
        if (cu[b + 1] < cu[b])
            return error_set(plan->ctx, FA4_EINVAL, "%s[%d]=%d < %s[%d]=%d: offsets must not decrease",
                             name, b + 1, (int)cu[b + 1], name, b, (int)cu[b]);
        if (cu[b + 1] - cu[b] > max)
            return error_set(plan->ctx, FA4_EINVAL, "%s: sequence %d has %d rows > %s=%d",
                             name, b, (int)(cu[b + 1] - cu[b]), max_name, max);
    }
    return FA4_OK;
}

fa4_status check_inputs(const fa4_plan *plan, const fa4_problem *p, const fa4_tensors *t,
                        fa4_stream stream)
{
    fa4_context *ctx = plan->ctx;
    int32_t *cu_q = NULL, *cu_k = NULL, *used = NULL, *table = NULL;
    const int32_t *used_dev = TENSORS_FIELD(t, seqused_k);
    char txt[256];
    CUresult res;
    fa4_status st;
    int b, i;

    if ((st = context_push(ctx)) != FA4_OK)
        return st;
    res = ctx->cu->cuStreamSynchronize((CUstream)stream);
    context_pop(ctx);
    if (res != CUDA_SUCCESS)
        return error_set(ctx, FA4_ECUDA, "check_inputs: cuStreamSynchronize: %s",
                         cuda_error_text(res, txt, sizeof txt));
    if (p->varlen) {
        if ((st = fetch(plan, &cu_q, t->cu_seqlens_q, (size_t)p->batch + 1, "cu_seqlens_q")) ||
            (st = check_offsets(plan, cu_q, p->batch, p->seqlen_q, "cu_seqlens_q", "seqlen_q")))
            goto done;
        /* With seqused_k, a cu_seqlens_k length is the sequence's room in a
           cache, which may exceed seqlen_k; the keys used may not. */
        if (!p->page_size &&
            ((st = fetch(plan, &cu_k, t->cu_seqlens_k, (size_t)p->batch + 1, "cu_seqlens_k")) ||
             (st = check_offsets(plan, cu_k, p->batch, used_dev ? INT32_MAX : p->seqlen_k,
                                 "cu_seqlens_k", "seqlen_k"))))
            goto done;
    }
    if (used_dev) {
        if ((st = fetch(plan, &used, used_dev, (size_t)p->batch, "seqused_k")) != FA4_OK)
            goto done;
        for (b = 0; b < p->batch; b++) {
            int room = cu_k ? cu_k[b + 1] - cu_k[b] : p->seqlen_k;
            int cap = room < p->seqlen_k ? room : p->seqlen_k;
            if (used[b] < 0 || used[b] > cap) {
                st = error_set(ctx, FA4_EINVAL, "seqused_k[%d]=%d; must be in 0..%d (%s)", b,
                               (int)used[b], cap, cap < p->seqlen_k
                               ? "the sequence's cu_seqlens_k length" : "seqlen_k");
                goto done;
            }
        }
    }
    if (p->page_size) {
        size_t n = (size_t)p->batch * p->block_table_stride;
        if ((st = fetch(plan, &table, t->block_table, n, "block_table")) != FA4_OK)
            goto done;
        for (b = 0; b < p->batch; b++) {
            int len = used ? used[b] : p->seqlen_k;
            int pages = (len + p->page_size - 1) / p->page_size;
            for (i = 0; i < pages; i++) {
                int32_t e = table[(size_t)b * p->block_table_stride + i];
                if (e < 0 || (p->num_pages > 0 && e >= p->num_pages)) {
                    st = error_set(ctx, FA4_EINVAL, "block_table[%d][%d]=%d; must be in 0..%d%s", b, i,
                                   (int)e, p->num_pages > 0 ? p->num_pages - 1 : INT32_MAX,
                                   p->num_pages > 0 ? " (num_pages - 1)" : "");
                    goto done;
                }
            }
        }
    }
    st = FA4_OK;
done:
    free(cu_q);
    free(cu_k);
    free(used);
    free(table);
    return st;
}
