/*
** test_gpu_fp8.c -- fp8 e4m3 inputs (sm90 family) against the float64
** reference on the dequantised inputs: per-(batch, KV head) descale
** factors (and NULL ones), N(0,1) inputs and inputs with outlier channels
** (4 columns of Q and K 20x larger), ragged lengths, GQA, causal, head
** dims 64..256 and 192/128, bf16 and fp16 output, the heuristic and
** explicit configs.  O and LSE are poisoned (NaN) before each run.
**
** The check is tests/gpu_check.h's, the tuner's too (lib/verify.c): O
** within 4e-2 relative, LSE within 2^-8 (1 + |ref|), no NaN or Inf
** (P is rounded to e4m3 for P V, an error the reference does not model;
** verify.h says why these bounds).  Skips without an sm_90 GPU.
** FA4_TEST_ONLY=defaults or =configs runs one of its two parts.
*/
#include <math.h>
#include "tap.h"
#include "config.h"

/* The fp8 reference decodes every element; about 5e8 multiply-adds a case
   keep the run as long as it was with ~400 sampled rows. */
#define GPU_CHECK_BUDGET 5.0e8
#include "gpu_check.h"

typedef struct fp8_case {
    int batch, sq, sk, hq, hkv, d, dv, causal;
    int outliers;      /* 1: columns 3, 17, 40, 61 of Q and K times 20 */
    int null_descale;  /* 1: descale arrays NULL (inputs quantised at scale 1) */
    fa4_dtype out;
} fp8_case;

static double normal(uint64_t *s)
{
    double u1, u2;
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    u1 = ((*s >> 11) + 1.0) / 9007199254740993.0;
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    u2 = (*s >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Random [batch, seq, heads, dim] values, quantised to e4m3 with one
** factor per (batch, KV head): the factor maps the slice's largest |x|
** to 448 (or 1 with NULL_DESCALE). */
static void make_input(uint8_t *out, float *descale, int batch, int seq, int heads, int hkv,
                       int dim, int outliers, int null_descale, uint64_t *seed)
{
    const size_t n = (size_t)batch * seq * heads * dim;
    float *x = malloc(sizeof *x * n);
    int b, s, h, c, g = heads / hkv;

    for (size_t i = 0; i < n; i++) {
        c = (int)(i % (size_t)dim);
        x[i] = (float)normal(seed);
        if (outliers && (c == 3 || c == 17 || c == 40 || c == 61))
            x[i] *= 20.0f;
    }
    for (b = 0; b < batch; b++)
        for (int k = 0; k < hkv; k++) {
            float amax = 0, f;
            for (s = 0; s < seq; s++)
                for (h = k * g; h < (k + 1) * g; h++)
                    for (c = 0; c < dim; c++) {
                        float a = fabsf(x[(((size_t)b * seq + s) * heads + h) * dim + c]);
                        amax = a > amax ? a : amax;
                    }
            f = null_descale ? 1.0f : amax / 448.0f;
            descale[b * hkv + k] = f;
            for (s = 0; s < seq; s++)
                for (h = k * g; h < (k + 1) * g; h++)
                    for (c = 0; c < dim; c++) {
                        size_t i = (((size_t)b * seq + s) * heads + h) * dim + c;
                        out[i] = dtype_float_to_e4m3(x[i] / f);
                    }
        }
    free(x);
}

/* Run CONFIG (NULL: the heuristic) on case C; report one TAP line. */
static void run_case(fa4_context *ctx, const fp8_case *c, const fa4_config *config,
                     uint64_t *seed)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
    fa4_plan *plan = NULL;
    fa4_config used = FA4_CONFIG_INIT;
    gpu_case gc;
    gpu_check_result r;
    const size_t nq = (size_t)c->batch * c->sq * c->hq * c->d;
    const size_t nk = (size_t)c->batch * c->sk * c->hkv * c->d;
    const size_t nv = (size_t)c->batch * c->sk * c->hkv * c->dv;
    const size_t nd = (size_t)c->batch * c->hkv;
    uint8_t *q = malloc(nq), *k = malloc(nk), *v = malloc(nv);
    float *qd = malloc(nd * 4), *kd = malloc(nd * 4), *vd = malloc(nd * 4);
    char cs[256] = "heuristic", label[160], msg[512];
    fa4_status st;

    memset(&gc, 0, sizeof gc);
    snprintf(label, sizeof label, "b%d sq=%d sk=%d h%d/%d d%d/%d causal=%d%s%s out=%s",
             c->batch, c->sq, c->sk, c->hq, c->hkv, c->d, c->dv, c->causal,
             c->outliers ? " outliers" : "", c->null_descale ? " descale=NULL" : "",
             c->out == FA4_DTYPE_FP16 ? "fp16" : "bf16");
    if (!q || !k || !v || !qd || !kd || !vd) {
        ok(0, "fp8 %s: host allocation failed", label);
        goto done;
    }
    p.dtype = FA4_DTYPE_FP8_E4M3;
    p.out_dtype = c->out;
    p.batch = c->batch; p.seqlen_q = c->sq; p.seqlen_k = c->sk;
    p.heads_q = c->hq; p.heads_kv = c->hkv; p.head_dim_qk = c->d; p.head_dim_v = c->dv;
    p.causal = c->causal; p.return_lse = 1;
    make_input(q, qd, c->batch, c->sq, c->hq, c->hkv, c->d, c->outliers, c->null_descale, seed);
    make_input(k, kd, c->batch, c->sk, c->hkv, c->hkv, c->d, c->outliers, c->null_descale, seed);
    make_input(v, vd, c->batch, c->sk, c->hkv, c->hkv, c->dv, 0, c->null_descale, seed);

    po.config = config;
    if ((st = fa4_plan_create(&plan, ctx, &p, &po)) != FA4_OK) {
        ok(0, "fp8 %s: plan: %s", label, fa4_context_errmsg(ctx));
        goto done;
    }
    fa4_plan_config(plan, &used, NULL);
    fa4_config_format(&used, cs, sizeof cs);
    if (gpu_case_prepare_inputs(&gc, ctx, &p, q, k, v, NULL, c->null_descale ? NULL : qd,
                                c->null_descale ? NULL : kd, c->null_descale ? NULL : vd,
                                msg, sizeof msg) != 0) {
        ok(0, "fp8 [%s] %s: %s", cs, label, msg);
        goto done;
    }
    if (gpu_case_run(&r, &gc, plan) != 0) {
        ok(0, "fp8 [%s] %s: %s", cs, label, r.msg);
        goto done;
    }
    if (!ok(r.pass, "fp8 [%s] %s: rel err %.2e (tol %.0e), lse err %.1e", cs, label,
            r.rel_err, gpu_check_tolerance(p.dtype), r.lse_err))
        diag("  %s", r.msg);
done:
    gpu_case_free(&gc);
    fa4_plan_destroy(plan);
    free(q); free(k); free(v); free(qd); free(kd); free(vd);
}

int main(void)
{
    static const fp8_case cases[] = {
        /* batch sq sk hq hkv d dv causal outliers null out */
        { 2, 1000, 1000, 4, 2, 128, 128, 0, 0, 0, FA4_DTYPE_BF16 },
        { 2, 1000, 1000, 4, 2, 128, 128, 1, 0, 0, FA4_DTYPE_BF16 },
        { 2, 1000, 1000, 4, 2, 128, 128, 0, 1, 0, FA4_DTYPE_BF16 },
        { 1, 17, 17, 2, 1, 64, 64, 1, 0, 0, FA4_DTYPE_BF16 },
        { 1, 1, 300, 4, 4, 128, 128, 0, 0, 1, FA4_DTYPE_BF16 },
        { 1, 300, 1, 4, 4, 128, 128, 1, 0, 0, FA4_DTYPE_FP16 },
        { 2, 777, 777, 4, 1, 256, 256, 0, 0, 0, FA4_DTYPE_BF16 },
        { 1, 500, 1500, 4, 2, 96, 96, 1, 1, 0, FA4_DTYPE_BF16 },
        { 1, 1024, 1024, 4, 4, 192, 128, 1, 0, 0, FA4_DTYPE_BF16 },
        { 1, 4096, 4096, 8, 2, 128, 128, 1, 0, 0, FA4_DTYPE_BF16 },
        { 2, 1000, 1000, 4, 2, 64, 64, 0, 1, 0, FA4_DTYPE_BF16 },   /* d64 persistent */
        { 1, 8500, 8500, 2, 2, 64, 64, 0, 0, 0, FA4_DTYPE_BF16 },   /* d64 persistent, long */
    };
    /* Explicit configs on the first cases: the other swizzle, three
       consumer warpgroups, wider key blocks, the fused ring, the dynamic
       and persistent schedulers. */
    static const char *configs[] = {
        "sm90 bm=128 bn=128 stages=2 swizzle=64 wgs=2 regs=24/240 pingpong=0",
        "sm90 bm=192 bn=64 stages=4 swizzle=64 wgs=3 regs=32/160 pingpong=1",
        "sm90 bm=128 bn=192 stages=2 swizzle=64 wgs=2 regs=24/240 pingpong=1",
        "sm90 bm=128 bn=128 stages=3 swizzle=128 fused_kv=1 wgs=2 regs=24/240 sched=dynamic",
        "sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 sched=persistent rescale=0",
    };
    fa4_context_options co = FA4_CONTEXT_OPTIONS_INIT;
    fa4_context *ctx = NULL;
    uint64_t seed;
    size_t i, j;

    co.no_database = 1;
    if (fa4_context_create(&ctx, 0, &co) != FA4_OK)
        skip_all("no CUDA device (%s)", fa4_context_last_error());
    if (strcmp(ctx->limits.arch, "sm_90a") != 0) {
        fa4_context_destroy(ctx);
        skip_all("fp8 runs on the sm90 family (sm_90a); this GPU is %s", ctx->limits.arch);
    }
    seed = tap_seed() * 0x9E3779B97F4A7C15ULL + 7;
    for (i = 0; gpu_test_section("defaults") && i < sizeof cases / sizeof cases[0]; i++)
        run_case(ctx, &cases[i], NULL, &seed);
    for (j = 0; gpu_test_section("configs") && j < sizeof configs / sizeof configs[0]; j++) {
        fa4_config cfg = FA4_CONFIG_INIT;
        char why[256];
        if (config_parse(&cfg, configs[j], why, sizeof why) != FA4_OK) {
            ok(0, "config \"%s\": %s", configs[j], why);
            continue;
        }
        for (i = 0; i < 3; i++)
            run_case(ctx, &cases[i], &cfg, &seed);
    }
    fa4_context_destroy(ctx);
    return done_testing();
}
