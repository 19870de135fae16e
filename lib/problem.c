/*
** problem.c -- one function checks a problem and says exactly what is
** wrong with it; the rest of the library sees only resolved problems.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "problem.h"
#include "family.h"
#include "dtype.h"

#define FAIL(st, ...) do { if (why) snprintf(why, why_size, __VA_ARGS__); return (st); } while (0)

static int head_dim_supported(int d)
{
    return d == 64 || d == 96 || d == 128 || d == 192 || d == 256;
}

/* Check one tensor's strides; fill zeros with contiguous BSHD values. */
static fa4_status resolve_strides(int64_t s[3], const char *name, int seqlen,
                                  int heads, int dim, int elem_bytes,
                                  char *why, size_t why_size)
{
    static const char *axis[3] = { "batch", "row", "head" };
    int64_t contiguous[3];
    int i;

    contiguous[2] = dim;
    contiguous[1] = (int64_t)heads * dim;
    contiguous[0] = (int64_t)seqlen * heads * dim;
    if (s[0] == 0 && s[1] == 0 && s[2] == 0) {
        memcpy(s, contiguous, sizeof contiguous);
        return FA4_OK;
    }
    for (i = 0; i < 3; i++) {
        if (s[i] <= 0)
            FAIL(FA4_EINVAL, "%s_strides[%d]=%lld (%s stride): must be > 0 when any stride is set",
                 name, i, (long long)s[i], axis[i]);
        /* TMA needs every stride but the innermost to be a multiple of 16 B. */
        /* Bound first: stride * elem_bytes must not overflow below. */
        if (s[i] >= ((int64_t)1 << 40) / elem_bytes)
            FAIL(FA4_EINVAL, "%s_strides[%d]=%lld (%s stride): over the 2^40-byte TMA stride limit",
                 name, i, (long long)s[i], axis[i]);
        if ((s[i] * elem_bytes) % 16 != 0)
            FAIL(FA4_EINVAL, "%s_strides[%d]=%lld (%s stride): must be a multiple of %d elements (16 bytes)",
                 name, i, (long long)s[i], axis[i], 16 / elem_bytes);
        if (s[i] * elem_bytes >= ((int64_t)1 << 40))
            FAIL(FA4_EINVAL, "%s_strides[%d]=%lld (%s stride): over the 2^40-byte TMA stride limit",
                 name, i, (long long)s[i], axis[i]);
    }
    return FA4_OK;
}

fa4_status problem_resolve(fa4_problem *out, const fa4_problem *in,
                           char *why, size_t why_size)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    double elems;
    int eb, kv_rows;
    fa4_status st;

    if (!in)
        FAIL(FA4_EINVAL, "problem is NULL");
    if (in->struct_size < offsetof(fa4_problem, softmax_scale) || in->struct_size > sizeof p)
        FAIL(FA4_EINVAL, "fa4_problem.struct_size=%zu; use FA4_PROBLEM_INIT", in->struct_size);
    memcpy(&p, in, in->struct_size);
    p.struct_size = sizeof p;

    if (p.dtype != FA4_DTYPE_BF16 && p.dtype != FA4_DTYPE_FP16 && p.dtype != FA4_DTYPE_FP8_E4M3)
        FAIL(FA4_EINVAL, "dtype=%d; supported: FA4_DTYPE_BF16 (1) FA4_DTYPE_FP16 (2) "
             "FA4_DTYPE_FP8_E4M3 (3)", (int)p.dtype);
    p.out_dtype = dtype_out(&p);
    if (p.out_dtype != FA4_DTYPE_BF16 && p.out_dtype != FA4_DTYPE_FP16)
        FAIL(FA4_EINVAL, "out_dtype=%d; supported: 0 (default) FA4_DTYPE_BF16 (1) "
             "FA4_DTYPE_FP16 (2)", (int)p.out_dtype);
    if (p.dtype != FA4_DTYPE_FP8_E4M3 && p.out_dtype != p.dtype)
        FAIL(FA4_ENOTSUP, "out_dtype=%d with dtype=%d: 16-bit inputs write O in their own "
             "type (only fp8 inputs choose)", (int)p.out_dtype, (int)p.dtype);
#define POSITIVE(f) if (p.f < 1) FAIL(FA4_EINVAL, #f "=%d; must be >= 1", p.f)
    POSITIVE(batch);
    POSITIVE(seqlen_q);
    POSITIVE(seqlen_k);
    POSITIVE(heads_q);
    POSITIVE(heads_kv);
#undef POSITIVE
    if (p.heads_q % p.heads_kv != 0)
        FAIL(FA4_EINVAL, "heads_q=%d is not a multiple of heads_kv=%d", p.heads_q, p.heads_kv);
    if (!head_dim_supported(p.head_dim_qk))
        FAIL(FA4_EINVAL, "head_dim_qk=%d; supported: 64 96 128 192 256", p.head_dim_qk);
    if (p.head_dim_v == 0)
        p.head_dim_v = p.head_dim_qk;
    if (!head_dim_supported(p.head_dim_v))
        FAIL(FA4_EINVAL, "head_dim_v=%d; supported: 64 96 128 192 256 (<= head_dim_qk)", p.head_dim_v);
    if (p.head_dim_v > p.head_dim_qk)
        FAIL(FA4_ENOTSUP, "head_dim_v=%d > head_dim_qk=%d: not supported", p.head_dim_v, p.head_dim_qk);
    if (p.causal != 0 && p.causal != 1)
        FAIL(FA4_EINVAL, "causal=%d; must be 0 or 1", p.causal);
    if (p.window_left < -1)
        FAIL(FA4_EINVAL, "window_left=%d; must be >= 0, or -1 for unbounded", p.window_left);
    if (p.window_right < -1)
        FAIL(FA4_EINVAL, "window_right=%d; must be >= 0, or -1 for unbounded", p.window_right);
    if (p.causal) {
        if (p.window_right > 0)
            FAIL(FA4_EINVAL, "window_right=%d with causal=1: causal means window_right 0", p.window_right);
        p.window_right = 0;
    }
    if (isnan(p.softmax_scale) || isinf(p.softmax_scale) || p.softmax_scale < 0)
        FAIL(FA4_EINVAL, "softmax_scale=%g; must be > 0 (0 selects 1/sqrt(head_dim_qk))",
             (double)p.softmax_scale);
    p.softmax_scale = (float)problem_softmax_scale(&p);
    if (p.return_lse != 0 && p.return_lse != 1)
        FAIL(FA4_EINVAL, "return_lse=%d; must be 0 or 1", p.return_lse);
    if (p.varlen != 0 && p.varlen != 1)
        FAIL(FA4_EINVAL, "varlen=%d; must be 0 or 1", p.varlen);
    if (p.page_size < 0 || (p.page_size & (p.page_size - 1)) != 0 || p.page_size > (1 << 20))
        FAIL(FA4_EINVAL, "page_size=%d; must be 0 (not paged) or a power of two up to 2^20",
             p.page_size);
    if (p.page_size == 0 && (p.block_table_stride != 0 || p.num_pages != 0))
        FAIL(FA4_EINVAL, "block_table_stride=%d num_pages=%d without page_size: "
             "they describe a paged cache", p.block_table_stride, p.num_pages);
    if (p.page_size > 0) {
        int64_t need = ((int64_t)p.seqlen_k + p.page_size - 1) / p.page_size;
        if (p.block_table_stride < 0)
            FAIL(FA4_EINVAL, "block_table_stride=%d; must be >= 0 (0: ceil(seqlen_k / page_size))",
                 p.block_table_stride);
        if (p.block_table_stride == 0)
            p.block_table_stride = (int)need;
        if (p.block_table_stride < need)
            FAIL(FA4_EINVAL, "block_table_stride=%d < ceil(seqlen_k=%d / page_size=%d) = %lld pages",
                 p.block_table_stride, p.seqlen_k, p.page_size, (long long)need);
        if (p.num_pages < 0)
            FAIL(FA4_EINVAL, "num_pages=%d; must be >= 0 (0: unknown)", p.num_pages);
    }
    if (p.attention_sinks != 0 && p.attention_sinks != 1)
        FAIL(FA4_EINVAL, "attention_sinks=%d; must be 0 or 1", p.attention_sinks);
    if (!(p.softcap >= 0) || isinf(p.softcap))
        FAIL(FA4_EINVAL, "softcap=%g; must be 0 (none) or a finite positive cap",
             (double)p.softcap);
    if (p.token_scales != 0 && p.token_scales != 1)
        FAIL(FA4_EINVAL, "token_scales=%d; must be 0 or 1", p.token_scales);
    if (p.token_scales && (p.varlen || p.page_size))
        FAIL(FA4_ENOTSUP, "token_scales=1 with varlen=%d page_size=%d: per-token Q/K scales "
             "are defined for dense batches only ([batch, heads, seq] float32)", p.varlen,
             p.page_size);
    /* Sizes: every tensor must be addressable by TMA (< 2^40 bytes per
       stride, dims < 2^31) and its element count must not overflow. */
    eb = dtype_bytes(p.dtype);
    elems = (double)p.batch * p.seqlen_q * p.heads_q * p.head_dim_qk;
    if (elems * eb >= 1099511627776.0)
        FAIL(FA4_EINVAL, "q is %.0f bytes (batch=%d seqlen_q=%d heads_q=%d head_dim_qk=%d): over the 2^40-byte limit",
             elems * eb, p.batch, p.seqlen_q, p.heads_q, p.head_dim_qk);
    elems = (double)p.batch * p.seqlen_k * p.heads_kv * p.head_dim_qk;
    if (elems * eb >= 1099511627776.0)
        FAIL(FA4_EINVAL, "k is %.0f bytes (batch=%d seqlen_k=%d heads_kv=%d head_dim_qk=%d): over the 2^40-byte limit",
             elems * eb, p.batch, p.seqlen_k, p.heads_kv, p.head_dim_qk);
    if ((double)p.batch * p.heads_q * (((int64_t)p.seqlen_q + 63) / 64) >= 2147483647.0)
        FAIL(FA4_EINVAL, "batch=%d heads_q=%d seqlen_q=%d: too many query tiles for one launch",
             p.batch, p.heads_q, p.seqlen_q);

    /* Paged K/V: the "batch" stride is the page stride.  Varlen tensors
       have no batch stride (sequences are offsets in the row dimension);
       the contiguous value is kept, unused. */
    kv_rows = p.page_size > 0 ? p.page_size : p.seqlen_k;
    if ((st = resolve_strides(p.q_strides, "q", p.seqlen_q, p.heads_q, p.head_dim_qk, eb, why, why_size)) ||
        (st = resolve_strides(p.k_strides, "k", kv_rows, p.heads_kv, p.head_dim_qk, eb, why, why_size)) ||
        (st = resolve_strides(p.v_strides, "v", kv_rows, p.heads_kv, p.head_dim_v, eb, why, why_size)) ||
        (st = resolve_strides(p.o_strides, "o", p.seqlen_q, p.heads_q, p.head_dim_v,
                              dtype_bytes(p.out_dtype), why, why_size)))
        return st;
    if (out)
        *out = p;
    return FA4_OK;
}

fa4_status fa4_problem_check(const fa4_problem *problem, char *why, size_t why_size)
{
    if (why && why_size)
        why[0] = '\0';
    return problem_resolve(NULL, problem, why, why_size);
}

int problem_has_mask(const fa4_problem *p)
{
    return p->causal || p->window_left >= 0 || p->window_right >= 0;
}

double problem_softmax_scale(const fa4_problem *p)
{
    return p->softmax_scale > 0 ? p->softmax_scale : 1.0 / sqrt((double)p->head_dim_qk);
}

int problem_softcap_fixed_max(const fa4_problem *p)
{
    return p->softcap > 0 && p->softcap <= PROBLEM_SOFTCAP_FIXED_MAX_CAP &&
           p->dtype == FA4_DTYPE_BF16;
}
