/*
** test_token_scales.c -- per-token Q/K scales (fa4_problem.token_scales,
** fa4_tensors.q_token_scale / k_token_scale) without a GPU: what
** fa4_problem_check accepts and refuses, which families run them (sm100
** alone: sm80 and sm90 say FA4_ENOTSUP, naming the field), plans on
** sm_100a and sm_90a (fp8 too), and the CPU reference's meaning of them,
** beside fp8's descales as well, which a GPU test will hold the sm100
** kernel to.
*/
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "tap.h"
#include "budget.h"
#include "config.h"
#include "reference.h"
#include "compile_test_util.h"

/* The largest |a - b| over N doubles. */
static double max_diff(const double *a, const double *b, size_t n)
{
    double m = 0;
    size_t i;

    for (i = 0; i < n; i++)
        if (fabs(a[i] - b[i]) > m || isnan(a[i] - b[i]))
            m = isnan(a[i] - b[i]) ? INFINITY : fabs(a[i] - b[i]);
    return m;
}

/* fa4_problem_check on the field. */
static void check_problem(void)
{
    fa4_problem p = ct_problem(FA4_DTYPE_BF16, 2, 300, 128, 128, 1);
    char why[512] = "";   /* the ok() below may read it before the call writes it */

    p.token_scales = 1;
    ok(fa4_problem_check(&p, why, sizeof why) == FA4_OK,
       "problem_check accepts token_scales=1 on a dense batch (%s)", why[0] ? why : "ok");
    p.token_scales = 2;
    ok(fa4_problem_check(&p, why, sizeof why) == FA4_EINVAL &&
       strstr(why, "token_scales=2; must be 0 or 1"),
       "problem_check rejects token_scales=2 (%s)", why);
    p.token_scales = 1;
    p.varlen = 1;
    ok(fa4_problem_check(&p, why, sizeof why) == FA4_ENOTSUP &&
       strstr(why, "token_scales=1 with varlen=1") && strstr(why, "dense batches only"),
       "token_scales with varlen is FA4_ENOTSUP (%s)", why);
    p.varlen = 0;
    p.page_size = 16;
    ok(fa4_problem_check(&p, why, sizeof why) == FA4_ENOTSUP &&
       strstr(why, "page_size=16"), "token_scales over a paged cache is FA4_ENOTSUP (%s)", why);
    /* a caller built before the field: its struct_size does not cover it */
    p = ct_problem(FA4_DTYPE_BF16, 2, 300, 128, 128, 1);
    p.token_scales = 7;
    p.struct_size = offsetof(fa4_problem, token_scales);
    ok(fa4_problem_check(&p, why, sizeof why) == FA4_OK,
       "a struct_size that ends before token_scales leaves it unread (%s)",
       why[0] ? why : "ok");
    p = (fa4_problem)FA4_PROBLEM_INIT;
    ok(p.token_scales == 0 && p.reserved2 == 0, "FA4_PROBLEM_INIT sets token_scales 0");
    {
        fa4_tensors t = FA4_TENSORS_INIT;
        ok(t.q_token_scale == NULL && t.k_token_scale == NULL &&
           t.struct_size == sizeof t, "FA4_TENSORS_INIT leaves both scale pointers NULL");
    }
}

/* Which families take the field. */
static void check_families(void)
{
    fa4_problem p = ct_problem(FA4_DTYPE_BF16, 2, 2048, 128, 128, 0);
    device_limits h100, b200;
    fa4_layout l;
    fa4_config c;
    char why[512];
    fa4_status st;

    p.token_scales = 1;
    if (device_limits_for_arch(&h100, "sm_90a", why, sizeof why) != FA4_OK ||
        device_limits_for_arch(&b200, "sm_100a", why, sizeof why) != FA4_OK) {
        skip("no sm_90a / sm_100a limits table (%s)", why);
        skip("no limits table");
        skip("no limits table");
        skip("no limits table");
        skip("no limits table");
        return;
    }
    st = config_default(&c, &h100, &p, FA4_FAMILY_SM90, why, sizeof why);
    ok(st == FA4_ENOTSUP && strstr(why, "sm90 kernels: token_scales=1 (per-token Q/K scales) "
                                   "not implemented; only the sm100 family applies them"),
       "the sm90 family refuses token_scales with FA4_ENOTSUP (%s)", why);
    st = config_default(&c, &h100, &p, FA4_FAMILY_SM80, why, sizeof why);
    ok(st == FA4_ENOTSUP && strstr(why, "sm80 kernels: token_scales=1"),
       "the sm80 family refuses token_scales with FA4_ENOTSUP (%s)", why);
    /* an explicit config of either family is refused the same way */
    p.token_scales = 0;
    st = config_default(&c, &h100, &p, FA4_FAMILY_SM90, why, sizeof why);
    p.token_scales = 1;
    ok(st == FA4_OK && budget_fit(&l, &h100, &p, &c, why, sizeof why) == FA4_ENOTSUP &&
       strstr(why, "token_scales=1"),
       "an sm90 config that fits the unscaled problem is FA4_ENOTSUP with scales (%s)", why);
    st = config_default(&c, &b200, &p, FA4_FAMILY_SM100, why, sizeof why);
    ok(st == FA4_OK && c.family == FA4_FAMILY_SM100 &&
       budget_fit(&l, &b200, &p, &c, why, sizeof why) == FA4_OK &&
       budget_region_find(&l, "KSCALE")->size > 0,
       "the sm100 family plans it, with a KSCALE region (%s)", st == FA4_OK ? "ok" : why);
    /* fp8: the scales multiply the scores beside the descales */
    p.dtype = FA4_DTYPE_FP8_E4M3;
    st = config_default(&c, &b200, &p, FA4_FAMILY_SM100, why, sizeof why);
    ok(st == FA4_OK && c.family == FA4_FAMILY_SM100 && c.swizzle == 64 &&
       budget_fit(&l, &b200, &p, &c, why, sizeof why) == FA4_OK &&
       budget_region_find(&l, "QSCALE")->size == c.bm * 4 &&
       budget_region_find(&l, "KSCALE")->size > 0,
       "the sm100 family plans fp8 with token_scales, QSCALE and KSCALE beside its e4m3 "
       "tiles (%s)", st == FA4_OK ? "ok" : why);
}

/* Plans through the public API in plan_only contexts. */
static void check_plans(void)
{
    fa4_context_options o = FA4_CONTEXT_OPTIONS_INIT;
    fa4_problem p = ct_problem(FA4_DTYPE_BF16, 2, 2048, 128, 128, 1);
    fa4_context *ctx = NULL;
    fa4_plan *plan = NULL;
    fa4_config c = FA4_CONFIG_INIT;
    fa4_status st;

    p.token_scales = 1;
    o.plan_only = 1;
    o.no_database = 1;
    o.arch = "sm_90a";
    if (fa4_context_create(&ctx, 0, &o) != FA4_OK) {
        skip("no plan_only context");
        skip("no plan_only context");
        return;
    }
    st = fa4_plan_create(&plan, ctx, &p, NULL);
    ok(st != FA4_OK && plan == NULL && strstr(fa4_context_errmsg(ctx), "token_scales=1"),
       "on sm_90a no family plans token_scales, and the message says why (%s: %s)",
       fa4_status_string(st), fa4_context_errmsg(ctx));
    fa4_context_destroy(ctx);
    ctx = NULL;
    o.arch = "sm_100a";
    if (fa4_context_create(&ctx, 0, &o) != FA4_OK) {
        skip("no plan_only sm_100a context");
        return;
    }
    st = fa4_plan_create(&plan, ctx, &p, NULL);
    ok(st == FA4_OK && fa4_plan_config(plan, &c, NULL) == FA4_OK &&
       c.family == FA4_FAMILY_SM100,
       "on sm_100a the heuristic plans it with the sm100 family (%s)",
       st == FA4_OK ? "ok" : fa4_context_errmsg(ctx));
    fa4_plan_destroy(plan);
    fa4_context_destroy(ctx);
}

/*
** The reference's meaning: the scores times q_token_scale[row] and
** k_token_scale[key].  With powers of two the scaled bf16 inputs are
** exact, so scaling Q's row i by 2^a and K's row j by 2^b in the inputs
** must give the same O and LSE as the scales (double arithmetic: 1e-12).
*/
static void check_reference(void)
{
    fa4_problem p = ct_problem(FA4_DTYPE_BF16, 2, 0, 64, 64, 1);
    uint64_t seed = tap_seed() | 1u;          /* xorshift needs a nonzero state */
    uint16_t *q, *k, *q2, *k2, *v;
    float *qs, *ks, *ones_q, *ones_k;
    double *o1, *o2, *l1, *l2;
    size_t nq, nk, no, i;
    int b, s, h, x, hk;

    p.seqlen_q = 37;
    p.seqlen_k = 53;
    p.heads_q = 4;
    p.heads_kv = 2;
    p.softmax_scale = 0.125f;
    p.token_scales = 1;
    nq = (size_t)p.batch * p.seqlen_q * p.heads_q * 64;
    nk = (size_t)p.batch * p.seqlen_k * p.heads_kv * 64;
    no = (size_t)p.batch * p.seqlen_q * p.heads_q * 64;
    q = malloc(nq * 2); q2 = malloc(nq * 2);
    k = malloc(nk * 2); k2 = malloc(nk * 2); v = malloc(nk * 2);
    qs = malloc(sizeof *qs * (size_t)p.batch * p.heads_q * p.seqlen_q);
    ks = malloc(sizeof *ks * (size_t)p.batch * p.heads_kv * p.seqlen_k);
    ones_q = malloc(sizeof *ones_q * (size_t)p.batch * p.heads_q * p.seqlen_q);
    ones_k = malloc(sizeof *ones_k * (size_t)p.batch * p.heads_kv * p.seqlen_k);
    o1 = malloc(sizeof *o1 * no); o2 = malloc(sizeof *o2 * no);
    l1 = malloc(sizeof *l1 * (size_t)p.batch * p.heads_q * p.seqlen_q);
    l2 = malloc(sizeof *l2 * (size_t)p.batch * p.heads_q * p.seqlen_q);
    ref_fill_random(q, nq, p.dtype, &seed);
    ref_fill_random(k, nk, p.dtype, &seed);
    ref_fill_random(v, nk, p.dtype, &seed);
    /* scales 2^-2 .. 2^2 per [batch, head, token] */
    for (b = 0; b < p.batch; b++)
        for (h = 0; h < p.heads_q; h++)
            for (s = 0; s < p.seqlen_q; s++)
                qs[((size_t)b * p.heads_q + h) * p.seqlen_q + s] = ldexpf(1.0f, (b + h + s) % 5 - 2);
    for (b = 0; b < p.batch; b++)
        for (h = 0; h < p.heads_kv; h++)
            for (s = 0; s < p.seqlen_k; s++)
                ks[((size_t)b * p.heads_kv + h) * p.seqlen_k + s] = ldexpf(1.0f, (2 * b + h + 3 * s) % 5 - 2);
    for (i = 0; i < (size_t)p.batch * p.heads_q * p.seqlen_q; i++)
        ones_q[i] = 1.0f;
    for (i = 0; i < (size_t)p.batch * p.heads_kv * p.seqlen_k; i++)
        ones_k[i] = 1.0f;
    /* the inputs scaled instead: Q [b, s, h, x] by qs[b, h, s], K by ks[b, hk, s] */
    for (b = 0; b < p.batch; b++)
        for (s = 0; s < p.seqlen_q; s++)
            for (h = 0; h < p.heads_q; h++)
                for (x = 0; x < 64; x++) {
                    size_t at = (((size_t)b * p.seqlen_q + s) * p.heads_q + h) * 64 + x;
                    q2[at] = ref_float_to_half(ref_half_to_float(q[at], p.dtype) *
                                               qs[((size_t)b * p.heads_q + h) * p.seqlen_q + s],
                                               p.dtype);
                }
    for (b = 0; b < p.batch; b++)
        for (s = 0; s < p.seqlen_k; s++)
            for (hk = 0; hk < p.heads_kv; hk++)
                for (x = 0; x < 64; x++) {
                    size_t at = (((size_t)b * p.seqlen_k + s) * p.heads_kv + hk) * 64 + x;
                    k2[at] = ref_float_to_half(ref_half_to_float(k[at], p.dtype) *
                                               ks[((size_t)b * p.heads_kv + hk) * p.seqlen_k + s],
                                               p.dtype);
                }

    ref_attention_tokens(o1, l1, &p, q, k, v, qs, ks);
    ref_attention(o2, l2, &p, q2, k2, v);
    ok(max_diff(o1, o2, no) < 1e-12 &&
       max_diff(l1, l2, (size_t)p.batch * p.heads_q * p.seqlen_q) < 1e-12,
       "reference: per-token scales (powers of two, GQA 4/2, causal) equal Q and K rows "
       "scaled in the inputs, O and LSE to 1e-12 (%.3g, %.3g)", max_diff(o1, o2, no),
       max_diff(l1, l2, (size_t)p.batch * p.heads_q * p.seqlen_q));
    ref_attention_tokens(o1, l1, &p, q, k, v, ones_q, ones_k);
    ref_attention(o2, l2, &p, q, k, v);
    ok(max_diff(o1, o2, no) == 0 && max_diff(l1, l2, (size_t)p.batch * p.heads_q * p.seqlen_q) == 0,
       "reference: scales of 1 give the unscaled result exactly");
    ref_attention_tokens(o1, l1, &p, q, k, v, qs, ks);
    ref_attention_tokens(o2, l2, &p, q, k, v, qs, NULL);
    ok(max_diff(o1, o2, no) > 1e-3,
       "reference: the key scales change O (%.3g), so a kernel that drops them is caught",
       max_diff(o1, o2, no));
    {
        double o_row[64], l_row;
        b = 1; s = 20; h = 3;
        ref_attention_row_tokens(o_row, &l_row, &p, q, k, v, NULL, NULL, NULL, NULL, qs, ks,
                                 b, s, h);
        ok(max_diff(o_row, o1 + (((size_t)b * p.seqlen_q + s) * p.heads_q + h) * 64, 64) == 0 &&
           l_row == l1[((size_t)b * p.heads_q + h) * p.seqlen_q + s],
           "reference: one row (batch 1, query 20, head 3) as the whole problem gives it");
    }
    free(q); free(q2); free(k); free(k2); free(v); free(qs); free(ks);
    free(ones_q); free(ones_k); free(o1); free(o2); free(l1); free(l2);
}

/*
** fp8: the per-token scales and the descales are factors of one score.
** Scales that are the same power of two over each (batch, KV head) --
** every query row of its heads, every key -- must give what the descales
** times those powers give alone, O and LSE to 1e-12 (double arithmetic,
** exact products): the order of the factors does not matter and the LSE
** is of the scores with all of them.
*/
static void check_reference_fp8(void)
{
    fa4_problem p = ct_problem(FA4_DTYPE_FP8_E4M3, 2, 0, 64, 64, 0);
    uint64_t seed = tap_seed() | 2u;
    const int group = 2;
    uint8_t *q, *k, *v;
    float qd[4], kd[4], vd[4], qd2[4], kd2[4], *qs, *ks;
    double o1[64], o2[64], l1, l2, worst_o = 0, worst_l = 0;
    size_t nq, nk, i;
    int b, s, h, hk;

    p.seqlen_q = 29;
    p.seqlen_k = 45;
    p.heads_q = 4;
    p.heads_kv = 2;
    p.softmax_scale = 0.125f;
    p.token_scales = 1;
    nq = (size_t)p.batch * p.seqlen_q * p.heads_q * 64;
    nk = (size_t)p.batch * p.seqlen_k * p.heads_kv * 64;
    q = malloc(nq);                      /* e4m3: one byte each */
    k = malloc(nk);
    v = malloc(nk);
    qs = malloc(sizeof *qs * (size_t)p.batch * p.heads_q * p.seqlen_q);
    ks = malloc(sizeof *ks * (size_t)p.batch * p.heads_kv * p.seqlen_k);
    ref_fill_inputs(q, nq, p.dtype, &seed);
    ref_fill_inputs(k, nk, p.dtype, &seed);
    ref_fill_inputs(v, nk, p.dtype, &seed);
    ref_fill_descale(qd, 4, &seed);
    ref_fill_descale(kd, 4, &seed);
    ref_fill_descale(vd, 4, &seed);
    for (i = 0; i < 4; i++) {            /* [batch, heads_kv]: 2^-1 .. 2^1 and 2^-2 .. 2^0 */
        qd2[i] = qd[i] * ldexpf(1.0f, (int)i % 3 - 1);
        kd2[i] = kd[i] * ldexpf(1.0f, (int)(i + 1) % 3 - 2);
    }
    for (b = 0; b < p.batch; b++)
        for (h = 0; h < p.heads_q; h++)
            for (s = 0; s < p.seqlen_q; s++)
                qs[((size_t)b * p.heads_q + h) * p.seqlen_q + s] =
                    ldexpf(1.0f, (b * p.heads_kv + h / group) % 3 - 1);
    for (b = 0; b < p.batch; b++)
        for (hk = 0; hk < p.heads_kv; hk++)
            for (s = 0; s < p.seqlen_k; s++)
                ks[((size_t)b * p.heads_kv + hk) * p.seqlen_k + s] =
                    ldexpf(1.0f, (b * p.heads_kv + hk + 1) % 3 - 2);
    for (b = 0; b < p.batch; b++)
        for (h = 0; h < p.heads_q; h++)
            for (s = 0; s < p.seqlen_q; s++) {
                ref_attention_row_tokens(o1, &l1, &p, q, k, v, NULL, qd, kd, vd, qs, ks, b, s,
                                         h);
                ref_attention_row_tokens(o2, &l2, &p, q, k, v, NULL, qd2, kd2, vd, NULL, NULL,
                                         b, s, h);
                if (max_diff(o1, o2, 64) > worst_o)
                    worst_o = max_diff(o1, o2, 64);
                if (fabs(l1 - l2) > worst_l || isnan(l1 - l2))
                    worst_l = isnan(l1 - l2) ? INFINITY : fabs(l1 - l2);
            }
    ok(worst_o < 1e-12 && worst_l < 1e-12,
       "reference, fp8: per-token scales beside the descales equal descales that carry "
       "them (powers of two per batch and KV head), O and LSE to 1e-12 (%.3g, %.3g)",
       worst_o, worst_l);
    free(q); free(k); free(v); free(qs); free(ks);
}

int main(void)
{
    plan_lazy();
    check_problem();
    check_families();
    check_plans();
    check_reference();
    check_reference_fp8();
    return done_testing() ? 1 : 0;
}
