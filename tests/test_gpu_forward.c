/*
** test_gpu_forward.c -- every kernel family that runs on this GPU, against
** the float64 CPU reference: bf16 and fp16, head dims 64..256 (and
** 192/128), causal and not, GQA, ragged lengths (1, 17, 129, 1000),
** seqlen_q != seqlen_k, sliding window, LSE; the sm80 family at both row
** splits (its default and the same tile at the other of 16 and 32 query
** rows per warp); the dynamic tile scheduler's counter across launches;
** exponentials on the FMA pipe; inputs for each path of the sm90 max-free
** loop (max jumps); the sm90 tail split; sm90 GQA packing (the
** grid's configs packed, and groups 4 to 8 by scheduler).  Skips without a
** GPU.  FA4_TEST_ONLY (gpu_test_section) runs some of its sections: grid
** window softcap jumps dynamic exp2 tail pack ranges half qslots hgroup.
*/
#include "tap.h"
#define GPU_CHECK_BUDGET 2.5e8   /* sampled rows beyond this: the test stays under a minute */
#include "gpu_check.h"
#include "config.h"

typedef struct shape { int sq, sk; } shape;

/* The sm80 tile CFG at the other row split: 16 query rows per warp for a
   32-row tile and 32 for a 16-row one (bn 32 when the estimate refuses
   the same bn).  0 when the config has no such twin (split-key decode
   tiles, other families) or none fits, with the reason in WHY. */
static int sm80_twin(fa4_config *twin, const fa4_config *cfg, const device_limits *dev,
                     const fa4_problem *p, char *why, size_t wn)
{
    fa4_layout lay;

    snprintf(why, wn, "no other row split for this tile");
    if (cfg->family != FA4_FAMILY_SM80 || cfg->kv_split_warps)
        return 0;
    *twin = *cfg;
    twin->warps = cfg->bm / (cfg->warps == cfg->bm / 32 ? 16 : 32);
    if (budget_fit(&lay, dev, p, twin, why, wn) == FA4_OK)
        return 1;
    twin->bn = 32;
    return budget_fit(&lay, dev, p, twin, why, wn) == FA4_OK;
}

/* The sm90 config CFG with GQA packing (the tail split off: its records
   are per query head); 0 when it does not fit, with the reason in WHY. */
static int sm90_pack_twin(fa4_config *twin, const fa4_config *cfg, const device_limits *dev,
                          const fa4_problem *p, char *why, size_t wn)
{
    fa4_layout lay;

    snprintf(why, wn, "not an sm90 config");
    if (cfg->family != FA4_FAMILY_SM90)
        return 0;
    *twin = *cfg;
    twin->pack_gqa = 1;
    if (twin->splits == 0)
        twin->splits = 1;
    return budget_fit(&lay, dev, p, twin, why, wn) == FA4_OK;
}

/* The dynamic scheduler: more tiles than CTAs, so CTAs draw from the
   counter; the same plan three times with its own counter (the kernel must
   leave it zero for the next launch), then twice with a caller's workspace,
   which must be zero again afterwards. */
static void check_dynamic_scheduler(fa4_context *ctx, uint64_t *seed)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
    fa4_config cfg = FA4_CONFIG_INIT;
    fa4_plan *plan = NULL;
    gpu_case gc;
    gpu_check_result r;
    size_t ws = 0;
    char why[512], msg[512];
    unsigned counter[4];
    int run;

    p.batch = 2; p.heads_q = 8; p.heads_kv = 2; p.head_dim_qk = 128; p.causal = 1;
    p.seqlen_q = 2048; p.seqlen_k = 2048; p.return_lse = 1;
    if (ctx->limits.cc != 90) {
        skip("dynamic scheduler: sm90 only (this GPU is sm_%d)", ctx->limits.cc);
        return;
    }
    if (config_parse(&cfg, "sm90 bm=128 bn=128 stages=2 swizzle=128 fused_kv=0 wgs=2 "
                     "regs=24/240 rescale=8 pingpong=1 sched=dynamic", why, sizeof why) != FA4_OK) {
        ok(0, "dynamic config parses: %s", why);
        return;
    }
    po.config = &cfg;
    if (fa4_plan_create(&plan, ctx, &p, &po) != FA4_OK) {
        ok(0, "dynamic scheduler plan: %s", fa4_context_errmsg(ctx));
        return;
    }
    ok(fa4_plan_workspace_size(plan, &ws) == FA4_OK && ws == 16,
       "a dynamic-scheduler plan needs a 16-byte workspace (%zu)", ws);
    if (gpu_case_prepare(&gc, ctx, &p, seed, msg, sizeof msg) != 0) {
        ok(0, "dynamic scheduler inputs: %s", msg);
        gpu_case_free(&gc);
        fa4_plan_destroy(plan);
        return;
    }
    for (run = 0; run < 5; run++) {
        if (run == 3) {
            context_push(ctx);
            if (ctx->cu->cuMemAlloc(&gc.workspace, 16) != CUDA_SUCCESS ||
                ctx->cu->cuMemsetD8(gc.workspace, 0, 16) != CUDA_SUCCESS)
                gc.workspace = 0;
            context_pop(ctx);
        }
        if (gpu_case_run(&r, &gc, plan) != 0)
            ok(0, "dynamic scheduler run %d: %s", run + 1, r.msg);
        else
            ok(r.pass,
               "dynamic scheduler, causal d128 2048, 256 tiles, run %d (%s) matches (rel err %.2e)",
               run + 1, run < 3 ? "plan's counter" : "caller's workspace", r.rel_err);
    }
    if (gc.workspace) {
        context_push(ctx);
        ctx->cu->cuMemcpyDtoH(counter, gc.workspace, sizeof counter);
        ctx->cu->cuMemFree(gc.workspace);
        context_pop(ctx);
        gc.workspace = 0;
        ok(counter[0] == 0 && counter[1] == 0, "the kernel leaves the workspace zero (%u %u)",
           counter[0], counter[1]);
    } else {
        ok(0, "workspace allocation");
    }
    gpu_case_free(&gc);
    fa4_plan_destroy(plan);
}

/* Softcapping (a cap of 2 bends most scores) and attention sinks, alone and
   together, causal and not, ragged lengths, on both families' defaults
   (sm80 also at its other row split).  At d64 caps of 20 and 8 keep the
   scores inside the cap (every block of the sm90 loop on its polynomial
   tanh, softmax.cuh) or mostly inside it (blocks of both kinds). */
static void check_softcap_sinks(fa4_context *ctx, uint64_t *seed)
{
    static const fa4_family fams[] = { FA4_FAMILY_SM90, FA4_FAMILY_SM80 };
    static const int modes[][3] = { { 2, 0, 128 }, { 0, 1, 128 }, { 2, 1, 128 },
                                    { 20, 0, 64 }, { 8, 1, 64 } };   /* cap, sinks, head dim */
    static const int lens[][2] = { { 17, 17 }, { 1000, 1000 }, { 300, 700 } };
    size_t f, m, n;
    int causal, v;

    for (m = 0; m < sizeof modes / sizeof modes[0]; m++)
        for (n = 0; n < 3; n++)
            for (causal = 0; causal <= 1; causal++) {
                fa4_problem p = FA4_PROBLEM_INIT;
                gpu_case gc;
                char msg[512];
                p.batch = 2; p.heads_q = 4; p.heads_kv = 2; p.head_dim_qk = modes[m][2];
                p.seqlen_q = lens[n][0]; p.seqlen_k = lens[n][1];
                p.causal = causal; p.return_lse = 1;
                p.softcap = (float)modes[m][0];
                p.attention_sinks = modes[m][1];
                p.softmax_scale = 0.25f;   /* scores of several units: the cap matters */
                if (gpu_case_prepare(&gc, ctx, &p, seed, msg, sizeof msg) != 0) {
                    ok(0, "softcap/sinks inputs: %s", msg);
                    gpu_case_free(&gc);
                    continue;
                }
                for (f = 0; f < sizeof fams / sizeof fams[0]; f++) {
                    fa4_config cfg, run[3];
                    fa4_layout lay;
                    char why[512], cs[256];
                    int nrun = 1;
                    if (config_default(&cfg, &ctx->limits, &gc.p, fams[f], why, sizeof why) != FA4_OK ||
                        budget_fit(&lay, &ctx->limits, &gc.p, &cfg, why, sizeof why) != FA4_OK) {
                        skip("%s softcap/sinks: %s", config_family_name(fams[f]), why);
                        continue;
                    }
                    run[0] = cfg;
                    if (sm80_twin(&run[1], &cfg, &ctx->limits, &gc.p, why, sizeof why))
                        nrun = 2;
                    /* sm90: every tanh on the FMA pipe too (tanh_poly_pct, with the
                       constant max's folded coefficients), where a block stays
                       inside the cap (cap 20) and where few do (2, 8). */
                    if (fams[f] == FA4_FAMILY_SM90 && p.softcap > 0) {
                        run[nrun] = cfg;
                        run[nrun++].tanh_poly_pct = 100;
                    }
                    for (v = 0; v < nrun; v++) {
                        fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
                        fa4_plan *plan = NULL;
                        gpu_check_result r;
                        po.config = &run[v];
                        fa4_config_format(&run[v], cs, sizeof cs);
                        if (fa4_plan_create(&plan, ctx, &p, &po) != FA4_OK) {
                            ok(0, "[%s] softcap=%g sinks=%d: plan: %s", cs, (double)p.softcap,
                               p.attention_sinks, fa4_context_errmsg(ctx));
                            continue;
                        }
                        if (gpu_case_run(&r, &gc, plan) != 0)
                            ok(0, "[%s] softcap=%g sinks=%d: %s", cs, (double)p.softcap,
                               p.attention_sinks, r.msg);
                        else if (!ok(r.pass, "[%s] softcap=%g sinks=%d causal=%d sq=%d sk=%d matches "
                                     "(rel err %.2e, lse err %.1e)", cs, (double)p.softcap,
                                     p.attention_sinks, causal, p.seqlen_q, p.seqlen_k, r.rel_err,
                                     r.lse_err))
                            diag("  %s", r.msg);
                        fa4_plan_destroy(plan);
                    }
                }
                gpu_case_free(&gc);
            }
}

/* Exponentials on the FMA pipe (exp2_emu): a quarter, half and all of them,
   ragged lengths, causal and not, with and without softcap (the shape that
   turns the emulation on in practice). */
static void check_exp2_emulation(fa4_context *ctx, uint64_t *seed)
{
    static const int pcts[] = { 25, 50, 100 };
    static const int lens[][2] = { { 17, 17 }, { 1000, 1000 }, { 300, 700 } };
    size_t k, n;
    int causal, cap;

    if (ctx->limits.cc != 90) {
        skip("exp2 emulation: sm90 only (this GPU is sm_%d)", ctx->limits.cc);
        return;
    }
    for (n = 0; n < 3; n++)
        for (causal = 0; causal <= 1; causal++)
            for (cap = 0; cap <= 1; cap++) {
                fa4_problem p = FA4_PROBLEM_INIT;
                gpu_case gc;
                char msg[512];
                p.batch = 2; p.heads_q = 4; p.heads_kv = 2; p.head_dim_qk = 128;
                p.seqlen_q = lens[n][0]; p.seqlen_k = lens[n][1];
                p.causal = causal; p.return_lse = 1;
                p.softcap = cap ? 2.0f : 0.0f;
                p.softmax_scale = cap ? 0.25f : 0.0f;
                if (gpu_case_prepare(&gc, ctx, &p, seed, msg, sizeof msg) != 0) {
                    ok(0, "exp2 emulation inputs: %s", msg);
                    gpu_case_free(&gc);
                    continue;
                }
                for (k = 0; k < sizeof pcts / sizeof pcts[0]; k++) {
                    fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
                    fa4_config cfg = FA4_CONFIG_INIT;
                    fa4_plan *plan = NULL;
                    gpu_check_result r;
                    char text[256], why[512];
                    snprintf(text, sizeof text, "sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 "
                             "regs=24/240 rescale=8 pingpong=1 exp2_emu=%d", pcts[k]);
                    if (config_parse(&cfg, text, why, sizeof why) != FA4_OK) {
                        ok(0, "exp2 config parses: %s", why);
                        continue;
                    }
                    po.config = &cfg;
                    if (fa4_plan_create(&plan, ctx, &p, &po) != FA4_OK) {
                        ok(0, "exp2_emu=%d plan: %s", pcts[k], fa4_context_errmsg(ctx));
                        continue;
                    }
                    if (gpu_case_run(&r, &gc, plan) != 0)
                        ok(0, "exp2_emu=%d: %s", pcts[k], r.msg);
                    else if (!ok(r.pass, "exp2_emu=%d softcap=%d causal=%d sq=%d sk=%d matches "
                                 "(rel err %.2e, lse err %.1e)", pcts[k], cap, causal,
                                 p.seqlen_q, p.seqlen_k, r.rel_err, r.lse_err))
                        diag("  %s", r.msg);
                    fa4_plan_destroy(plan);
                }
                gpu_case_free(&gc);
            }
}

/* The explicit config TEXT on problem P (fresh inputs, LSE checked): one ok
   line, WHAT first, then the problem and the config. */
static void check_config_case(fa4_context *ctx, uint64_t *seed, const fa4_problem *p,
                              const char *text, const char *what)
{
    fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
    fa4_config cfg = FA4_CONFIG_INIT;
    fa4_plan *plan = NULL;
    gpu_case gc;
    gpu_check_result r;
    char why[512], msg[512];

    if (config_parse(&cfg, text, why, sizeof why) != FA4_OK) {
        ok(0, "%s config parses: %s", what, why);
        return;
    }
    if (gpu_case_prepare(&gc, ctx, p, seed, msg, sizeof msg) != 0) {
        ok(0, "%s inputs: %s", what, msg);
        gpu_case_free(&gc);
        return;
    }
    po.config = &cfg;
    if (fa4_plan_create(&plan, ctx, p, &po) != FA4_OK)
        ok(0, "%s [%s] plan: %s", what, text, fa4_context_errmsg(ctx));
    else if (gpu_case_run(&r, &gc, plan) != 0)
        ok(0, "%s [%s]: %s", what, text, r.msg);
    else if (!ok(r.pass, "%s %s %d/%d d%d/%d b%d sq=%d sk=%d%s%s%s [%s] matches (rel err %.2e, "
                 "lse err %.1e)", what, p->dtype == FA4_DTYPE_FP8_E4M3 ? "fp8" :
                 p->dtype == FA4_DTYPE_FP16 ? "fp16" : "bf16", p->heads_q, p->heads_kv,
                 p->head_dim_qk, p->head_dim_v, p->batch, p->seqlen_q, p->seqlen_k,
                 p->causal ? " causal" : "", p->window_left >= 0 ? " window" : "",
                 p->softcap > 0 ? " softcap+sinks" : "", text, r.rel_err, r.lse_err))
        diag("  %s", r.msg);
    fa4_plan_destroy(plan);
    gpu_case_free(&gc);
}

/* Each family's default config on GC's problem, and on sm90 with TWINS
   also its late_k twin: one ok line each, WHAT naming the case. */
static void check_defaults(fa4_context *ctx, gpu_case *gc, int twins, const char *what)
{
    static const fa4_family fams[] = { FA4_FAMILY_SM90, FA4_FAMILY_SM80 };
    size_t f;
    int twin;

    for (f = 0; f < sizeof fams / sizeof fams[0]; f++)
        for (twin = 0; twin <= (twins && fams[f] == FA4_FAMILY_SM90); twin++) {
            fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
            fa4_config cfg;
            fa4_plan *plan = NULL;
            gpu_check_result r;
            char why[512], cs[256];
            if (config_default(&cfg, &ctx->limits, &gc->p, fams[f], why, sizeof why) != FA4_OK) {
                skip("%s %s: %s", config_family_name(fams[f]), what, why);
                break;
            }
            if (twin)
                cfg.late_k_release = !cfg.late_k_release;
            po.config = &cfg;
            fa4_config_format(&cfg, cs, sizeof cs);
            if (fa4_plan_create(&plan, ctx, &gc->p, &po) != FA4_OK)
                ok(0, "[%s] %s: plan: %s", cs, what, fa4_context_errmsg(ctx));
            else if (gpu_case_run(&r, gc, plan) != 0)
                ok(0, "[%s] %s: %s", cs, what, r.msg);
            else if (!ok(r.pass, "[%s] %s: matches (rel err %.2e, lse err %.1e)", cs, what,
                         r.rel_err, r.lse_err))
                diag("  %s", r.msg);
            fa4_plan_destroy(plan);
        }
}

/* Softcap's range: every key positive and half the query rows negative, at
   a scale that saturates the tanh, so those rows sit wholly at the cap's
   bottom (scores near -cap) and the others at its top.  bf16 under a cap
   of 50 takes sm90's constant max (P down to 2^(32 - 2 cap log2 e),
   kernels/sm90/softmax.cuh); a cap of 60 and fp16 keep the running max.
   With and without sinks, causal and not, ragged lengths, each family's
   default. */
static void check_softcap_range(fa4_context *ctx, uint64_t *seed)
{
    static const fa4_dtype dts[] = { FA4_DTYPE_BF16, FA4_DTYPE_FP16 };
    static const float caps[] = { 50.0f, 60.0f };
    size_t t, c, x;
    int causal, sinks;

    for (t = 0; t < 2; t++)
        for (c = 0; c < 2; c++)
            for (causal = 0; causal <= 1; causal++)
                for (sinks = 0; sinks <= 1; sinks++) {
                    fa4_problem p = FA4_PROBLEM_INIT;
                    gpu_case gc;
                    uint16_t *q, *k, *v;
                    float *sk = NULL;
                    size_t nq, nk;
                    char msg[512], what[128];
                    int h;

                    p.dtype = dts[t];
                    p.batch = 1; p.heads_q = 4; p.heads_kv = 2; p.head_dim_qk = 128;
                    p.seqlen_q = 300; p.seqlen_k = causal ? 300 : 1000;
                    p.causal = causal; p.return_lse = 1;
                    p.softcap = caps[c]; p.attention_sinks = sinks;
                    p.softmax_scale = 2.0f;
                    nq = (size_t)p.seqlen_q * p.heads_q * 128;
                    nk = (size_t)p.seqlen_k * p.heads_kv * 128;
                    q = malloc(2 * nq); k = malloc(2 * nk); v = malloc(2 * nk);
                    if (sinks && (sk = malloc(sizeof *sk * (size_t)p.heads_q)))
                        for (h = 0; h < p.heads_q; h++)
                            sk[h] = (float)h - 2.0f;
                    if (!q || !k || !v || (sinks && !sk)) {
                        ok(0, "softcap range: host allocation failed");
                        free(q); free(k); free(v); free(sk);
                        continue;
                    }
                    ref_fill_inputs(q, nq, p.dtype, seed);
                    ref_fill_inputs(k, nk, p.dtype, seed);
                    ref_fill_inputs(v, nk, p.dtype, seed);
                    /* K in [0.5, 1); Q's rows of even position in [-1, -0.5). */
                    for (x = 0; x < nk; x++)
                        k[x] = ref_float_to_half(0.75f + 0.25f * ref_half_to_float(k[x], p.dtype), p.dtype);
                    for (x = 0; x < nq; x++) {
                        const float a = 0.75f + 0.25f * ref_half_to_float(q[x], p.dtype);
                        q[x] = ref_float_to_half(((x / (128 * 4)) % 2) ? a : -a, p.dtype);
                    }
                    if (gpu_case_prepare_inputs(&gc, ctx, &p, q, k, v, sk, NULL, NULL, NULL, msg,
                                                sizeof msg) != 0) {
                        ok(0, "softcap range inputs: %s", msg);
                        gpu_case_free(&gc);
                        free(q); free(k); free(v); free(sk);
                        continue;
                    }
                    snprintf(what, sizeof what, "%s softcap=%g sinks=%d causal=%d: rows at the "
                             "cap's bottom and top", p.dtype == FA4_DTYPE_FP16 ? "fp16" : "bf16",
                             (double)p.softcap, sinks, causal);
                    check_defaults(ctx, &gc, 0, what);
                    gpu_case_free(&gc);
                    free(q); free(k); free(v); free(sk);
                }
}

/* After its first block the sm90 main loop exponentiates against the
   running max without a new one, and moves it only when a row's sum
   outgrows the P type's bound (kernels/sm90/softmax.cuh); inputs built for
   each path.  The early keys (processed last) score above the rest by
   about 50 log2 units (past fp16's and fp8's bounds: m moves), 100 (past
   bf16's too) or 400 (the sum overflows: the block goes back to its
   scores); under a causal mask every score is far negative, and rows
   still empty after their first block take the max first.  Every dtype,
   each family's default and, on sm90, its late_k twin. */
static float unit(float u)   /* fp8's N(0, 1) inputs clamped to [-1, 1] */
{
    return u < -1.0f ? -1.0f : u > 1.0f ? 1.0f : u;
}

static void check_max_jumps(fa4_context *ctx, uint64_t *seed)
{
    static const fa4_dtype dts[] = { FA4_DTYPE_BF16, FA4_DTYPE_FP16, FA4_DTYPE_FP8_E4M3 };
    static const struct { float scale; int causal; const char *what; } cases[] = {
        { 0.5f, 0, "a max jump of ~50" },
        { 1.0f, 0, "a max jump of ~100" },
        { 4.0f, 0, "a max jump of ~400" },
        { 4.0f, 1, "empty rows meeting scores of ~-400" },
    };
    size_t t, c, x;

    for (t = 0; t < sizeof dts / sizeof dts[0]; t++)
        for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            fa4_problem p = FA4_PROBLEM_INIT;
            gpu_case gc;
            void *q, *k, *v;
            size_t nq, nk;
            char msg[512];
            const int eb = dtype_bytes(dts[t]);

            p.dtype = dts[t];
            p.batch = 1; p.heads_q = 4; p.heads_kv = 2; p.head_dim_qk = 128;
            p.seqlen_q = cases[c].causal ? 1000 : 300; p.seqlen_k = 1000;
            p.causal = cases[c].causal; p.return_lse = 1;
            p.softmax_scale = cases[c].scale;
            nq = (size_t)p.seqlen_q * p.heads_q * 128;
            nk = (size_t)p.seqlen_k * p.heads_kv * 128;
            q = malloc(eb * nq); k = malloc(eb * nk); v = malloc(eb * nk);
            if (!q || !k || !v) {
                ok(0, "max jumps: host allocation failed");
                free(q); free(k); free(v);
                continue;
            }
            ref_fill_inputs(q, nq, p.dtype, seed);
            ref_fill_inputs(k, nk, p.dtype, seed);
            ref_fill_inputs(v, nk, p.dtype, seed);
            /* Q in [0.5, 1); K in [0.5, 1) for the first 200 keys and
               small after them, or in (-1, -0.5] everywhere (causal). */
            for (x = 0; x < nq; x++)
                dtype_store(q, x, 0.75f + 0.25f * unit(dtype_load(q, x, p.dtype)), p.dtype);
            for (x = 0; x < nk; x++) {
                const float u = unit(dtype_load(k, x, p.dtype));
                const size_t key = x / (128 * 2);
                dtype_store(k, x, p.causal ? -(0.75f + 0.25f * u) :
                                  key < 200 ? 0.75f + 0.25f * u : 0.015625f * u, p.dtype);
            }
            if (gpu_case_prepare_inputs(&gc, ctx, &p, q, k, v, NULL, NULL, NULL, NULL, msg,
                                        sizeof msg) != 0) {
                ok(0, "max jumps inputs: %s", msg);
                gpu_case_free(&gc);
                free(q); free(k); free(v);
                continue;
            }
            snprintf(msg, sizeof msg, "%s %s", dtype_of(p.dtype)->name, cases[c].what);
            check_defaults(ctx, &gc, 1, msg);
            gpu_case_free(&gc);
            free(q); free(k); free(v);
        }
}

/* The tail split (sm90 splits=0): tiles of the last wave in parts along
   the keys, merged by fa4_combine.  Shapes where every tile splits, where
   whole tiles and parts mix (136 tiles on 132 SMs), where parts are 4 key
   blocks, and where nothing splits (too few key blocks); every dtype,
   d256, d192/128, softcap with sinks; LSE checked. */
static void check_tail_split(fa4_context *ctx, uint64_t *seed)
{
    static const struct {
        fa4_dtype dt;
        int d, dv, b, sq, sk, flavours;
        const char *cfg;
    } cases[] = {
        { FA4_DTYPE_BF16, 128, 128, 1, 1000, 4000, 0, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240" },
        { FA4_DTYPE_FP16, 64, 64, 34, 17, 1000, 0, "bm=192 bn=128 stages=2 swizzle=128 wgs=3 regs=32/160" },
        { FA4_DTYPE_BF16, 256, 256, 2, 300, 2000, 0, "bm=128 bn=80 stages=2 swizzle=128 wgs=2 regs=24/240" },
        { FA4_DTYPE_BF16, 192, 128, 1, 257, 1500, 1, "bm=128 bn=80 stages=2 swizzle=128 wgs=2 regs=24/240" },
        { FA4_DTYPE_FP8_E4M3, 128, 128, 1, 1000, 4000, 0, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240" },
        { FA4_DTYPE_FP8_E4M3, 64, 64, 2, 1, 4000, 1, "bm=192 bn=128 stages=2 swizzle=64 wgs=3 regs=32/160" },
        { FA4_DTYPE_BF16, 128, 128, 2, 1, 4000, 1, "bm=192 bn=80 stages=3 swizzle=128 wgs=3 regs=32/160" },
        { FA4_DTYPE_BF16, 128, 128, 1, 1000, 100, 0, "bm=192 bn=80 stages=3 swizzle=128 wgs=3 regs=32/160" },
    };
    size_t i;

    if (ctx->limits.cc != 90) {
        skip("tail split: sm90 only (this GPU is sm_%d)", ctx->limits.cc);
        return;
    }
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fa4_problem p = FA4_PROBLEM_INIT;
        char text[256];

        p.dtype = cases[i].dt;
        p.batch = cases[i].b; p.heads_q = 4; p.heads_kv = 2;
        p.head_dim_qk = cases[i].d; p.head_dim_v = cases[i].dv;
        p.seqlen_q = cases[i].sq; p.seqlen_k = cases[i].sk; p.return_lse = 1;
        if (cases[i].flavours) {
            p.softcap = 30.0f;
            p.attention_sinks = 1;
        }
        snprintf(text, sizeof text, "sm90 %s pingpong=1 sched=plain splits=0", cases[i].cfg);
        check_config_case(ctx, seed, &p, text, "tail split");
    }
}

/* One sm90 config on one problem, as the pack and ranges sections list
   them: MASK 1 causal, 2 a (100, 20) window; FLAVOURS softcap 30 and
   sinks; CFG without the family. */
typedef struct sm90_case {
    fa4_dtype dt;
    int hq, hkv, d, b, sq, sk, mask, flavours;
    const char *cfg;
} sm90_case;

/* Each of CASES with EXTRA appended to its config text, one ok line each
   named WHAT; skipped off sm90 (NAME says what). */
static void check_sm90_cases(fa4_context *ctx, uint64_t *seed, const sm90_case *cases, size_t n,
                             const char *extra, const char *what, const char *name)
{
    size_t i;

    if (ctx->limits.cc != 90) {
        skip("%s: sm90 only here (this GPU is sm_%d)", name, ctx->limits.cc);
        return;
    }
    for (i = 0; i < n; i++) {
        fa4_problem p = FA4_PROBLEM_INIT;
        char text[256];

        p.dtype = cases[i].dt;
        p.batch = cases[i].b; p.heads_q = cases[i].hq; p.heads_kv = cases[i].hkv;
        p.head_dim_qk = p.head_dim_v = cases[i].d;
        p.seqlen_q = cases[i].sq; p.seqlen_k = cases[i].sk; p.return_lse = 1;
        if (cases[i].mask == 1)
            p.causal = 1;
        else if (cases[i].mask == 2) {
            p.window_left = 100;
            p.window_right = 20;
        }
        if (cases[i].flavours) {
            p.softcap = 30.0f;
            p.attention_sinks = 1;
        }
        snprintf(text, sizeof text, "sm90 %s%s", cases[i].cfg, extra);
        check_config_case(ctx, seed, &p, text, what);
    }
}

/* sm90 tiles that compile each warpgroup's own key range (FA4_WG_RANGES:
   the tile spans more queries than a key block) under a causal mask and a
   window, with seqlen_k below seqlen_q (rows that see no key: whole
   warpgroups skip every block), above it, and ragged; ping-pong, the
   fused ring, the persistent and dynamic schedulers and fp8 among them. */
static void check_wg_ranges(fa4_context *ctx, uint64_t *seed)
{
    static const sm90_case cases[] = {
        { FA4_DTYPE_BF16, 4, 2, 256, 2, 1000, 1000, 1, 0, "bm=128 bn=64 stages=2 swizzle=128 fused_kv=1 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=plain late_k=1" },
        { FA4_DTYPE_BF16, 4, 2, 256, 2, 1000, 17, 1, 0, "bm=128 bn=80 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=plain late_k=1" },
        { FA4_DTYPE_BF16, 4, 2, 64, 2, 1000, 1000, 1, 0, "bm=192 bn=128 stages=2 swizzle=128 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=plain" },
        { FA4_DTYPE_FP16, 4, 2, 64, 2, 129, 700, 1, 0, "bm=192 bn=96 stages=2 swizzle=128 fused_kv=1 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=persistent late_k=1" },
        { FA4_DTYPE_BF16, 4, 4, 64, 1, 1000, 300, 1, 0, "bm=192 bn=64 stages=2 swizzle=128 fused_kv=1 wgs=3 regs=32/160 rescale=8 sched=dynamic" },
        { FA4_DTYPE_BF16, 4, 2, 64, 2, 1000, 1000, 2, 0, "bm=128 bn=64 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=dynamic" },
        { FA4_DTYPE_BF16, 2, 1, 128, 1, 300, 700, 2, 0, "bm=192 bn=64 stages=2 swizzle=128 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=plain" },
        { FA4_DTYPE_BF16, 8, 2, 128, 2, 1000, 1000, 1, 0, "bm=192 bn=80 stages=3 swizzle=128 wgs=3 regs=32/160 rescale=8 sched=plain late_k=1" },
        { FA4_DTYPE_FP8_E4M3, 4, 2, 64, 2, 1000, 1000, 1, 0, "bm=192 bn=128 stages=2 swizzle=128 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=plain" },
    };
    check_sm90_cases(ctx, seed, cases, sizeof cases / sizeof cases[0], "", "ranges",
                     "warpgroup key ranges");
}

/* sm90 tiles that run a warpgroup's first block at half width where its
   rows see only the block's first half (FA4_DIAG_HALF: 16-bit, masked, BN
   a multiple of 32 from 128, tiles without warpgroup key ranges): the
   diagonal block of 128x128 causal tiles under every scheduler, ping-pong
   on and off, the fused ring, BN 160 and 192, a window, GQA packing,
   softcap with sinks, and seqlen_k above, below and equal to seqlen_q,
   ragged. */
static void check_diag_half(fa4_context *ctx, uint64_t *seed)
{
    static const sm90_case cases[] = {
        { FA4_DTYPE_BF16, 4, 2, 64, 2, 1000, 1000, 1, 0, "bm=128 bn=128 stages=3 swizzle=128 fused_kv=1 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=dynamic late_k=1" },
        { FA4_DTYPE_FP16, 4, 2, 128, 2, 17, 1000, 1, 0, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=persistent" },
        { FA4_DTYPE_BF16, 4, 2, 64, 2, 1000, 300, 1, 0, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=0 sched=plain" },
        { FA4_DTYPE_BF16, 4, 4, 64, 3, 17, 17, 1, 0, "bm=128 bn=128 stages=2 swizzle=64 fused_kv=1 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=lpt" },
        { FA4_DTYPE_BF16, 4, 2, 128, 1, 1000, 1000, 2, 0, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=dynamic late_k=1" },
        { FA4_DTYPE_BF16, 4, 2, 128, 2, 1000, 1000, 1, 0, "bm=128 bn=128 stages=2 swizzle=128 fused_kv=1 wgs=2 regs=24/240 rescale=8 pingpong=0 sched=dynamic late_k=1" },
        { FA4_DTYPE_BF16, 4, 2, 64, 1, 1000, 1500, 1, 0, "bm=128 bn=192 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=plain" },
        { FA4_DTYPE_FP16, 4, 2, 64, 2, 129, 129, 1, 0, "bm=128 bn=160 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=0 sched=dynamic" },
        { FA4_DTYPE_BF16, 8, 2, 128, 2, 1000, 1000, 1, 0, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=dynamic late_k=1 pack_gqa=1" },
        { FA4_DTYPE_BF16, 4, 2, 128, 2, 129, 129, 1, 1, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=plain" },
    };
    check_sm90_cases(ctx, seed, cases, sizeof cases / sizeof cases[0], "", "half",
                     "half-width first blocks");
}

/* sm90 tiles that take two Q slots (FA4_Q_SLOTS: persistent schedulers,
   dense 16-bit problems up to 2k keys, 512 under a mask) with enough tiles
   that every CTA runs several and both slots turn: the persistent,
   longest-first and dynamic schedulers, both tile heights, the fused ring,
   causal, a window, GQA packing, softcap with sinks, ragged lengths and
   seqlen_k apart from seqlen_q. */
static void check_q_slots(fa4_context *ctx, uint64_t *seed)
{
    static const sm90_case cases[] = {
        { FA4_DTYPE_BF16, 32, 8, 64, 8, 500, 500, 1, 0, "bm=128 bn=128 stages=3 swizzle=64 fused_kv=1 wgs=2 regs=24/240 rescale=8 pingpong=0 sched=dynamic late_k=1" },
        { FA4_DTYPE_BF16, 16, 16, 128, 8, 1000, 1000, 0, 0, "bm=128 bn=128 stages=2 swizzle=128 fused_kv=1 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=persistent late_k=1" },
        { FA4_DTYPE_FP16, 32, 32, 64, 4, 1000, 1500, 0, 0, "bm=192 bn=128 stages=4 swizzle=128 fused_kv=1 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=persistent" },
        { FA4_DTYPE_BF16, 8, 2, 128, 16, 300, 300, 1, 0, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=dynamic late_k=1 pack_gqa=1" },
        { FA4_DTYPE_BF16, 32, 8, 64, 8, 500, 17, 1, 1, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=dynamic" },
        { FA4_DTYPE_BF16, 16, 4, 128, 8, 500, 500, 2, 0, "bm=128 bn=128 stages=2 swizzle=128 fused_kv=1 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=dynamic" },
        { FA4_DTYPE_BF16, 8, 8, 128, 16, 700, 700, 0, 0, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=0 sched=lpt" },
    };
    check_sm90_cases(ctx, seed, cases, sizeof cases / sizeof cases[0], "", "q slots",
                     "two Q slots");
}

/* sm90 causal tiles ordered longest first across groups of heads
   (FA4_HEAD_GROUP: dense causal problems of at least 16 query tiles under
   the plain grid or the dynamic scheduler; every case here takes a group):
   groups of 4 and 8 heads, batch above 1, both tile heights, GQA packing
   and unpacked GQA, seqlen_k apart from seqlen_q, ragged, softcap with
   sinks, fp8 on three warpgroups and two (split and fused rings). */
static void check_head_group(fa4_context *ctx, uint64_t *seed)
{
    static const sm90_case cases[] = {
        { FA4_DTYPE_BF16, 16, 16, 64, 2, 3100, 3100, 1, 0, "bm=192 bn=128 stages=2 swizzle=128 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=plain late_k=1" },
        { FA4_DTYPE_BF16, 8, 8, 128, 3, 2100, 2100, 1, 0, "bm=128 bn=176 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=plain late_k=1" },
        { FA4_DTYPE_FP16, 8, 2, 128, 2, 2050, 2050, 1, 0, "bm=128 bn=128 stages=2 swizzle=128 fused_kv=1 wgs=2 regs=24/240 rescale=8 pingpong=0 sched=dynamic late_k=1" },
        { FA4_DTYPE_BF16, 32, 8, 128, 1, 1000, 1000, 1, 0, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=plain late_k=1 pack_gqa=1" },
        { FA4_DTYPE_BF16, 4, 4, 256, 2, 2100, 2300, 1, 1, "bm=128 bn=80 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=plain late_k=1" },
        { FA4_DTYPE_BF16, 12, 12, 64, 1, 3100, 2000, 1, 0, "bm=192 bn=96 stages=2 swizzle=128 fused_kv=1 wgs=3 regs=32/160 rescale=8 sched=dynamic" },
        { FA4_DTYPE_FP8_E4M3, 8, 8, 128, 1, 3100, 3100, 1, 0, "bm=192 bn=96 stages=4 swizzle=32 wgs=3 regs=32/160 rescale=8 pingpong=0 sched=plain" },
        { FA4_DTYPE_FP8_E4M3, 8, 4, 128, 2, 2100, 2100, 1, 0, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=dynamic" },
        { FA4_DTYPE_FP8_E4M3, 8, 8, 128, 2, 2100, 2100, 1, 0, "bm=128 bn=128 stages=3 swizzle=128 fused_kv=1 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=dynamic" },
    };
    check_sm90_cases(ctx, seed, cases, sizeof cases / sizeof cases[0], "", "hgroup",
                     "causal tiles grouped by heads");
}

/* sm90 GQA packing beyond the grid's group of 2: groups 4 and 8 (16 and 8
   queries per 64-row box), both tile heights, every scheduler, causal and
   a sliding window, ragged lengths, softcap with sinks (a sink per query
   head: the two rows of a thread are two heads), fp8; LSE checked. */
static void check_pack_gqa(fa4_context *ctx, uint64_t *seed)
{
    static const sm90_case cases[] = {
        { FA4_DTYPE_BF16, 8, 2, 128, 2, 1000, 1000, 1, 0, "bm=128 bn=176 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=plain late_k=1" },
        { FA4_DTYPE_BF16, 8, 2, 128, 2, 1000, 1000, 0, 0, "bm=192 bn=80 stages=3 swizzle=128 wgs=3 regs=32/160 rescale=8 sched=plain" },
        { FA4_DTYPE_FP16, 8, 1, 128, 1, 17, 1000, 1, 0, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 sched=dynamic" },
        { FA4_DTYPE_BF16, 8, 1, 64, 3, 1, 1, 1, 0, "bm=192 bn=128 stages=2 swizzle=128 wgs=3 regs=32/160 rescale=8 sched=plain" },
        { FA4_DTYPE_BF16, 8, 2, 64, 2, 129, 129, 1, 1, "bm=192 bn=112 stages=2 swizzle=128 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=persistent" },
        { FA4_DTYPE_BF16, 8, 2, 64, 2, 1000, 17, 0, 1, "bm=128 bn=128 stages=3 swizzle=64 fused_kv=1 wgs=2 regs=24/240 rescale=8 sched=lpt" },
        { FA4_DTYPE_BF16, 16, 2, 128, 1, 1000, 700, 2, 1, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 sched=dynamic" },
        { FA4_DTYPE_BF16, 8, 2, 256, 1, 300, 1000, 1, 0, "bm=128 bn=80 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 sched=plain" },
        { FA4_DTYPE_FP8_E4M3, 8, 2, 128, 2, 1000, 1000, 1, 0, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 sched=plain" },
        { FA4_DTYPE_FP8_E4M3, 8, 1, 128, 1, 17, 1000, 0, 1, "bm=128 bn=128 stages=2 swizzle=64 wgs=2 regs=24/240 rescale=8 sched=persistent" },
    };
    check_sm90_cases(ctx, seed, cases, sizeof cases / sizeof cases[0], " pack_gqa=1", "pack",
                     "GQA packing");
}

int main(void)
{
    static const int dims[][2] = { { 64, 64 }, { 96, 96 }, { 128, 128 }, { 192, 128 }, { 256, 256 } };
    static const shape shapes[] = { { 1, 1 }, { 17, 17 }, { 129, 129 }, { 1000, 1000 }, { 17, 1000 }, { 1000, 17 } };
    static const fa4_family fams[] = { FA4_FAMILY_SM90, FA4_FAMILY_SM80 };
    fa4_context_options co = FA4_CONTEXT_OPTIONS_INIT;
    fa4_context *ctx = NULL;
    fa4_status st;
    uint64_t seed;
    size_t f, di, si;
    int dt, causal, v;

    co.no_database = 1;
    st = fa4_context_create(&ctx, 0, &co);
    if (st != FA4_OK)
        skip_all("no CUDA device (%s)", fa4_context_last_error());
    seed = tap_seed() * 0x9E3779B97F4A7C15ULL + 1;
    diag("device: %s (%s, %d SMs)", ctx->limits.name, ctx->limits.arch, ctx->limits.sm_count);

    /* One set of inputs and one reference per shape; every family runs on it. */
    for (di = 0; gpu_test_section("grid") && di < sizeof dims / sizeof dims[0]; di++)
        for (dt = FA4_DTYPE_BF16; dt <= FA4_DTYPE_FP16; dt++)
            for (causal = 0; causal <= 1; causal++)
                for (si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
                    fa4_problem p = FA4_PROBLEM_INIT;
                    gpu_case gc;
                    char msg[512];

                    p.dtype = (fa4_dtype)dt;
                    p.heads_q = 4;
                    p.heads_kv = 2;           /* GQA group of 2 */
                    p.head_dim_qk = dims[di][0];
                    p.head_dim_v = dims[di][1];
                    p.causal = causal;
                    p.return_lse = 1;
                    p.seqlen_q = shapes[si].sq;
                    p.seqlen_k = shapes[si].sk;
                    p.batch = p.seqlen_q * p.seqlen_k > 100000 ? 1 : 2;
                    if (gpu_case_prepare(&gc, ctx, &p, &seed, msg, sizeof msg) != 0) {
                        ok(0, "inputs for d%d sq=%d sk=%d: %s", p.head_dim_qk, p.seqlen_q, p.seqlen_k, msg);
                        gpu_case_free(&gc);
                        continue;
                    }
                    for (f = 0; f < sizeof fams / sizeof fams[0]; f++) {
                        fa4_family fam = fams[f];
                        const char *allowed = getenv("FA4_FAMILIES");
                        fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
                        fa4_plan *plan = NULL;
                        fa4_config cfg, run[3];
                        fa4_layout lay;
                        gpu_check_result r;
                        char why[512], cs[256];
                        int nrun;

                        if (allowed && *allowed && !strstr(allowed, config_family_name(fam))) {
                            skip("%s: not in FA4_FAMILIES=%s", config_family_name(fam), allowed);
                            continue;
                        }
                        if (config_default(&cfg, &ctx->limits, &gc.p, fam, why, sizeof why) != FA4_OK ||
                            budget_fit(&lay, &ctx->limits, &gc.p, &cfg, why, sizeof why) != FA4_OK) {
                            skip("%s d%d/%d: %s", config_family_name(fam), p.head_dim_qk, p.head_dim_v, why);
                            continue;
                        }
                        run[0] = cfg;
                        nrun = 1;
                        if (sm80_twin(&run[1], &cfg, &ctx->limits, &gc.p, why, sizeof why))
                            nrun = 2;
                        else if (fam == FA4_FAMILY_SM80 && !cfg.kv_split_warps)
                            skip("[%s] at the other row split: %s",
                                 fa4_config_format(&cfg, cs, sizeof cs), why);
                        if (sm90_pack_twin(&run[nrun], &cfg, &ctx->limits, &gc.p, why, sizeof why))
                            nrun++;
                        else if (fam == FA4_FAMILY_SM90)
                            skip("[%s] with GQA packing: %s",
                                 fa4_config_format(&cfg, cs, sizeof cs), why);
                        for (v = 0; v < nrun; v++) {
                            cfg = run[v];
                            po.config = &cfg;
                            fa4_config_format(&cfg, cs, sizeof cs);
                            if (fa4_plan_create(&plan, ctx, &p, &po) != FA4_OK) {
                                ok(0, "[%s] d%d/%d causal=%d sq=%d sk=%d: plan: %s", cs, p.head_dim_qk,
                                   p.head_dim_v, causal, p.seqlen_q, p.seqlen_k, fa4_context_errmsg(ctx));
                                continue;
                            }
                            if (gpu_case_run(&r, &gc, plan) != 0) {
                                ok(0, "[%s] sq=%d sk=%d: %s", cs, p.seqlen_q, p.seqlen_k, r.msg);
                            } else {
                                int good = r.pass;
                                ok(good, "[%s] %s d%d/%d causal=%d sq=%d sk=%d matches the reference "
                                   "(rel err %.2e, lse err %.1e, tol %.0e)", cs, dt == 1 ? "bf16" : "fp16",
                                   p.head_dim_qk, p.head_dim_v, causal, p.seqlen_q, p.seqlen_k,
                                   r.rel_err, r.lse_err, gpu_check_tolerance(p.dtype));
                                if (!good && r.msg[0])
                                    diag("  %s", r.msg);
                            }
                            fa4_plan_destroy(plan);
                            plan = NULL;
                        }
                    }
                    gpu_case_free(&gc);
                }

    /* Sliding window (left 100, right 20) with seqlen_q != seqlen_k, heuristic config. */
    if (gpu_test_section("window")) {
        fa4_problem p = FA4_PROBLEM_INIT;
        fa4_plan *plan = NULL;
        gpu_check_result r;
        p.batch = 1; p.heads_q = 2; p.heads_kv = 1; p.head_dim_qk = 128;
        p.seqlen_q = 300; p.seqlen_k = 700; p.window_left = 100; p.window_right = 20; p.return_lse = 1;
        st = fa4_plan_create(&plan, ctx, &p, NULL);
        if (st == FA4_OK && gpu_check(&r, ctx, plan, &p, &seed) == 0)
            ok(r.rel_err <= 1e-2 && !r.lse_bad, "sliding window (100, 20) sq=300 sk=700 matches (rel err %.2e)", r.rel_err);
        else
            ok(0, "sliding window case ran: %s", st ? fa4_context_errmsg(ctx) : r.msg);
        fa4_plan_destroy(plan);
    }
    if (gpu_test_section("softcap")) {
        check_softcap_sinks(ctx, &seed);
        check_softcap_range(ctx, &seed);
    }
    if (gpu_test_section("jumps"))
        check_max_jumps(ctx, &seed);
    if (gpu_test_section("dynamic"))
        check_dynamic_scheduler(ctx, &seed);
    if (gpu_test_section("exp2"))
        check_exp2_emulation(ctx, &seed);
    if (gpu_test_section("tail"))
        check_tail_split(ctx, &seed);
    if (gpu_test_section("pack"))
        check_pack_gqa(ctx, &seed);
    if (gpu_test_section("ranges"))
        check_wg_ranges(ctx, &seed);
    if (gpu_test_section("half"))
        check_diag_half(ctx, &seed);
    if (gpu_test_section("qslots"))
        check_q_slots(ctx, &seed);
    if (gpu_test_section("hgroup"))
        check_head_group(ctx, &seed);
    fa4_context_destroy(ctx);
    return done_testing();
}
