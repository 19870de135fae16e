/*
** test_problem.c -- fa4_problem_check: every error path gives its status
** and a message naming the field.
*/
#include <stddef.h>

#include "tap.h"
#include "fa4.h"

static fa4_problem good(void)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    p.batch = 2; p.seqlen_q = 1000; p.seqlen_k = 1000;
    p.heads_q = 8; p.heads_kv = 2; p.head_dim_qk = 128;
    return p;
}

#define CHECK(mutation, want_st, want_text, desc)                        \
    do {                                                                 \
        fa4_problem p = good();                                          \
        char why[512] = "";                                              \
        fa4_status st;                                                   \
        mutation;                                                        \
        st = fa4_problem_check(&p, why, sizeof why);                     \
        ok(st == (want_st) && strstr(why, want_text) != NULL,            \
           "problem_check %s (%s)", desc, why);                          \
    } while (0)

int main(void)
{
    fa4_problem p = good();
    char why[512] = "x";

    plan_lazy();
    ok(fa4_problem_check(&p, why, sizeof why) == FA4_OK && why[0] == '\0',
       "problem_check accepts a valid GQA problem with an empty message");
    ok(fa4_problem_check(NULL, why, sizeof why) == FA4_EINVAL && strstr(why, "NULL"),
       "problem_check rejects a NULL problem");
    CHECK(p.struct_size = 3, FA4_EINVAL, "struct_size", "rejects a bad struct_size");
    /* A caller built before softcap: its struct_size (184) covers the old
       padding, now `reserved`, and not softcap, whatever those bytes hold. */
    CHECK((p.struct_size = offsetof(fa4_problem, softcap), p.reserved = 0x7fc00000,
           p.softcap = -5.0f), FA4_OK, "", "an older struct_size leaves softcap at 0");
    CHECK(p.dtype = 9, FA4_EINVAL, "dtype=9", "rejects an unknown dtype");
    CHECK(p.dtype = FA4_DTYPE_FP8_E4M3; p.varlen = 1, FA4_OK, "", "accepts fp8 varlen");
    CHECK(p.dtype = FA4_DTYPE_FP8_E4M3; p.page_size = 16, FA4_OK, "",
          "accepts fp8 over 16-row pages");
    CHECK(p.dtype = FA4_DTYPE_FP8_E4M3; p.varlen = 1; p.page_size = 16, FA4_OK, "",
          "accepts fp8 varlen queries over pages (the sm80 family's)");
    CHECK(p.dtype = FA4_DTYPE_FP8_E4M3; p.page_size = 8, FA4_OK, "",
          "accepts fp8 over 8-row pages (the sm80 family's)");
    CHECK(p.dtype = FA4_DTYPE_FP8_E4M3; p.varlen = 1; p.head_dim_qk = 256, FA4_OK, "",
          "accepts fp8 varlen with head_dim_v 256 (the sm80 family's)");
    CHECK(p.dtype = FA4_DTYPE_FP8_E4M3; p.out_dtype = FA4_DTYPE_FP8_E4M3, FA4_EINVAL, "out_dtype", "rejects an fp8 output");
    CHECK(p.out_dtype = FA4_DTYPE_FP16, FA4_ENOTSUP, "out_dtype", "rejects another output type for 16-bit inputs");
    CHECK(p.out_dtype = (fa4_dtype)9, FA4_EINVAL, "out_dtype=9", "names a bad out_dtype");
    CHECK(p.batch = 0, FA4_EINVAL, "batch=0", "rejects batch 0");
    CHECK(p.seqlen_q = -5, FA4_EINVAL, "seqlen_q=-5", "rejects a negative seqlen_q");
    CHECK(p.seqlen_k = 0, FA4_EINVAL, "seqlen_k=0", "rejects seqlen_k 0");
    CHECK(p.heads_q = 0, FA4_EINVAL, "heads_q=0", "rejects heads_q 0");
    CHECK(p.heads_kv = 3, FA4_EINVAL, "heads_q=8 is not a multiple of heads_kv=3", "rejects heads_q not a multiple of heads_kv");
    CHECK(p.head_dim_qk = 72, FA4_EINVAL, "head_dim_qk=72; supported: 64 96 128 192 256", "rejects head_dim 72");
    CHECK(p.head_dim_v = 80, FA4_EINVAL, "head_dim_v=80", "rejects head_dim_v 80");
    CHECK(p.head_dim_v = 256, FA4_ENOTSUP, "head_dim_v=256 > head_dim_qk=128", "rejects head_dim_v above head_dim_qk");
    CHECK(p.causal = 2, FA4_EINVAL, "causal=2", "rejects causal 2");
    CHECK(p.window_left = -2, FA4_EINVAL, "window_left=-2", "rejects window_left -2");
    CHECK(p.window_right = -7, FA4_EINVAL, "window_right=-7", "rejects window_right -7");
    CHECK((p.causal = 1, p.window_right = 4), FA4_EINVAL, "causal means window_right 0", "rejects causal with window_right 4");
    CHECK(p.softmax_scale = -1.0f, FA4_EINVAL, "softmax_scale=-1", "rejects a negative scale");
    CHECK(p.softmax_scale = 0.0f / 0.0f, FA4_EINVAL, "nan; must be > 0", "rejects a NaN scale");
    CHECK(p.return_lse = 5, FA4_EINVAL, "return_lse=5", "rejects return_lse 5");
    CHECK(p.varlen = 3, FA4_EINVAL, "varlen=3", "names a varlen flag that is not 0 or 1");
    CHECK(p.page_size = 48, FA4_EINVAL, "page_size=48", "names a page size that is not a power of two");
    CHECK(p.page_size = -16, FA4_EINVAL, "page_size=-16", "names a negative page size");
    CHECK((p.page_size = 16, p.block_table_stride = -1), FA4_EINVAL, "block_table_stride=-1",
          "names a negative block-table stride");
    CHECK(p.num_pages = 8, FA4_EINVAL, "num_pages=8", "names paging fields without page_size");
    CHECK(p.q_strides[0] = p.q_strides[1] = p.q_strides[2] = (int64_t)1 << 62, FA4_EINVAL,
          "q_strides[0]", "refuses a stride whose byte size overflows 64 bits");
    CHECK(p.attention_sinks = 2, FA4_EINVAL, "attention_sinks=2", "names a sinks flag that is not 0 or 1");
    CHECK(p.softcap = -1.0f, FA4_EINVAL, "softcap=-1", "rejects a negative softcap");
    CHECK(p.softcap = 0.0f / 0.0f, FA4_EINVAL, "finite positive cap", "rejects a NaN softcap");
    CHECK((p.batch = 1 << 20, p.seqlen_q = 1 << 20), FA4_EINVAL, "2^40-byte", "rejects a q tensor over 2^40 bytes");
    CHECK((p.batch = 1 << 20, p.seqlen_q = 1, p.seqlen_k = 1 << 20), FA4_EINVAL, "k is", "rejects a k tensor over 2^40 bytes");
    CHECK((p.q_strides[0] = 1000 * 8 * 128, p.q_strides[1] = 100, p.q_strides[2] = 128), FA4_EINVAL,
          "q_strides[1]=100 (row stride): must be a multiple of 8 elements", "rejects a row stride TMA cannot use");
    CHECK((p.k_strides[0] = 1, p.k_strides[1] = 0, p.k_strides[2] = 128), FA4_EINVAL,
          "k_strides[0]=1", "rejects a misaligned batch stride");
    CHECK((p.v_strides[1] = -8), FA4_EINVAL, "v_strides[0]=0", "rejects a partly set stride triple");
    {
        fa4_problem q = good();
        q.q_strides[0] = 8 * 1000 * 128; q.q_strides[1] = 128; q.q_strides[2] = 1000 * 128;   /* BHSD */
        ok(fa4_problem_check(&q, NULL, 0) == FA4_OK, "problem_check accepts BHSD strides and a NULL message buffer");
    }
    return done_testing();
}
