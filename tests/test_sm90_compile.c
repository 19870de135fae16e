/*
** test_sm90_compile.c -- the sm90 family without a GPU: the budget model's
** answers (layout, precise reasons for configs that do not fit) and NVRTC
** compiles for sm_90a of a representative sample of variants: the default
** of every head dim (64, 96, 128, 192/128, 192, 256) in bf16 and fp16,
** causal and not, and a spread of enumerated configs (ping-pong, exp2
** emulation, 3 stages, persistent and longest-first schedulers; 64 and
** 32 B swizzle and the fused K/V ring, each explicitly too), and fp8 over
** varlen and paged batches (every head dim's default), GQA packing.  Each must
** compile with no spill, since the JIT rejects spilling variants.
** FA4_TEST_ALL=1 compiles every enumerated config (causal and not) instead
** of a sample; FA4_TEST_SHARD=i/N takes every N-th of those from the i-th,
** so N processes share the work (make check-compile-all).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "budget.h"
#include "config.h"
#include "family.h"
#include "jit.h"
#include "launch_sm90.h"
#include "compile_test_util.h"

/* The sm90 config WGS x BN, STAGES, with the family's register split. */
static fa4_config sm90_config(int wgs, int bn, int stages)
{
    fa4_config c = FA4_CONFIG_INIT;
    c.family = FA4_FAMILY_SM90;
    c.consumer_wgs = wgs;
    c.bm = 64 * wgs;
    c.bn = bn;
    c.stages = stages;
    c.swizzle = 128;
    c.cluster = 1;
    c.producer_regs = wgs == 2 ? 24 : 32;
    c.consumer_regs = wgs == 2 ? 240 : 160;
    c.rescale_threshold = 8;
    return c;
}

/* Compile CFG for sm_90a; one ok line saying what compiled and how. */
static void check_compile(const device_limits *dev, const fa4_problem *p, const fa4_config *cfg)
{
    char why[1024], desc[256], name[128];
    fa4_layout layout;
    jit_kernel k;
    fa4_status st;

    fa4_config_format(cfg, desc, sizeof desc);
    ct_name(name, sizeof name, "sm_90a", p, 1);
    if (!ct_fits(&layout, dev, p, cfg, name, desc))
        return;
    st = jit_compile(&k, "sm_90a", p, cfg, &layout, why, sizeof why);
    if (!ok(st == FA4_OK && k.spill_bytes == 0 && !strstr(k.log, "serialized"),
            "%s %s compiles without spills or serialised wgmma (%d regs, estimate %d, "
            "%d B smem, %.0f ms)", name, desc, st == FA4_OK ? k.regs : -1,
            layout.regs_estimate, layout.smem_bytes, k.compile_ms))
        diag("  %s", st == FA4_OK ? k.log : why);
    if (st == FA4_OK)
        jit_kernel_free(&k);
}

/* A variant compiled twice gives the same binary with ptxas's report both
   times.  NVRTC 12.9+ keeps a disk cache (where a driver is present) whose
   hits carry no report, so the spill check would pass whatever came back:
   the max-free loop of this d64 tile spills 12 bytes (NVRTC 13.0), and a
   second compile served from that cache returned the spilling binary
   instead of the max-first fallback, which the plan's loader then refused
   ("8 bytes of local memory").  lib/jit.c compiles with --no-cache. */
static void check_repeat_compile(const device_limits *dev)
{
    fa4_problem p = ct_problem(FA4_DTYPE_BF16, 32, 512, 64, 64, 0);
    fa4_config cfg = sm90_config(3, 128, 2);
    fa4_layout layout;
    jit_kernel k[2];
    fa4_status st[2];
    char why[1024];
    int i;

    cfg.scheduler = FA4_SCHED_PERSISTENT;
    cfg.pingpong = 1;
    if (!ct_fits(&layout, dev, &p, &cfg, "sm_90a bf16 d64/64", "192x128 persistent"))
        return;
    for (i = 0; i < 2; i++)
        st[i] = jit_compile(&k[i], "sm_90a", &p, &cfg, &layout, why, sizeof why);
    ok(st[0] == FA4_OK && st[1] == FA4_OK && k[0].regs > 0 && k[1].regs > 0 &&
       k[0].stack_bytes == 0 && k[1].stack_bytes == 0 && k[0].cubin_size == k[1].cubin_size &&
       !memcmp(k[0].cubin, k[1].cubin, k[0].cubin_size),
       "a variant compiled twice: the same binary, ptxas's report both times (%d and %d regs)",
       st[0] == FA4_OK ? k[0].regs : -1, st[1] == FA4_OK ? k[1].regs : -1);
    for (i = 0; i < 2; i++)
        if (st[i] == FA4_OK)
            jit_kernel_free(&k[i]);
}

/* The tail split's records for plan maxima of every size below a few
   waves: enough for every call within them, and no more than the bound
   (sm90_tail_bytes: min(SMs, 16 x tiles), none below 8 key blocks). */
static void check_tail_records(const fa4_config *c)
{
    const size_t rec = (size_t)c->bm * 129 * 4;
    fa4_problem plan = ct_problem(FA4_DTYPE_BF16, 1, 128, 128, 128, 0), call = plan;
    int sq, sk, b, h, csq, csk, first, splits, bad = 0, shorts = 0, smalls = 0;

    for (sq = 1; sq <= 4 * c->bm && !bad; sq += c->bm / 3)
        for (sk = 1; sk <= 12 * c->bn && !bad; sk += c->bn / 2)
            for (b = 1; b <= 9 && !bad; b += 4)
            for (h = 1; h <= 16 && !bad; h += 15) {
                plan.seqlen_q = sq, plan.seqlen_k = sk, plan.batch = b, plan.heads_q = h;
                const size_t have = sm90_tail_bytes(&plan, c, 132);
                const long long tiles = (sq + c->bm - 1LL) / c->bm * h * b;
                if ((sk + c->bn - 1) / c->bn < 8) {
                    bad |= have != 0;
                    shorts++;
                } else if (tiles < 8) {
                    bad |= have != (size_t)(16 * tiles < 132 ? 16 * tiles : 132) * rec;
                    smalls++;
                }
                for (csq = 1; csq <= sq && !bad; csq += c->bm / 2)
                    for (csk = 1; csk <= sk && !bad; csk += c->bn) {
                        call.seqlen_q = csq, call.seqlen_k = csk, call.batch = b, call.heads_q = h;
                        const int t = (csq + c->bm - 1) / c->bm * h * b;
                        sm90_tail_split(t, 132, (csk + c->bn - 1) / c->bn, &first, &splits);
                        if ((size_t)(t - first) * (size_t)splits * rec > have ||
                            sm90_tail_bytes(&call, c, 132) > have)
                            bad = 1;
                    }
            }
    ok(!bad && shorts > 0 && smalls > 0, "plan maxima up to %d x %d keys: every call's parts fit "
       "the plan's records; none below 8 key blocks (%d plans), 16 per tile in grids of fewer "
       "than 8 tiles (%d plans)", 4 * c->bm, 12 * c->bn, shorts, smalls);
}

/* The tail split (config splits = 0): which tiles split and into how many
   parts, where the budget takes it, its workspace, and its variants compile
   without spills (the GPU check is tests/test_gpu_forward). */
static void check_tail_split(const device_limits *dev)
{
    static const int heads[][3] = { /* head_dim_qk, head_dim_v, consumer warpgroups */
        { 64, 64, 3 }, { 128, 128, 3 }, { 128, 128, 2 }, { 192, 128, 2 }, { 256, 256, 2 }
    };
    fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, 128, 128, 0);
    fa4_config c = sm90_config(3, 80, 3);
    fa4_layout l;
    char why[512];
    int first, splits, i, t;

    sm90_tail_split(1376, 132, 205, &first, &splits);
    ok(first == 1320 && splits == 2, "1376 tiles on 132 SMs: the last 56 in 2 parts (%d, %d)",
       first, splits);
    sm90_tail_split(2048, 132, 128, &first, &splits);
    ok(first == 2048 && splits == 1, "2048 tiles: the last 68 stay whole (2 parts would not run "
       "in one round) (%d, %d)", first, splits);
    sm90_tail_split(1056, 132, 205, &first, &splits);
    ok(first == 1056 && splits == 1, "1056 tiles fill 8 waves: no split (%d, %d)", first, splits);
    sm90_tail_split(24, 132, 205, &first, &splits);
    ok(first == 0 && splits == 5, "24 tiles: all in 5 parts (%d, %d)", first, splits);
    sm90_tail_split(4, 132, 205, &first, &splits);
    ok(first == 0 && splits == 16, "4 tiles: at most 16 parts (%d, %d)", first, splits);
    sm90_tail_split(24, 132, 8, &first, &splits);
    ok(first == 0 && splits == 2, "8 key blocks: parts of at least 4 (%d, %d)", first, splits);
    sm90_tail_split(24, 132, 7, &first, &splits);
    ok(first == 24 && splits == 1, "7 key blocks: no split (%d, %d)", first, splits);
    for (t = 1; t <= 1000; t++) {
        sm90_tail_split(t, 132, 64, &first, &splits);
        if ((t - first) * splits > 132 || splits > 16 || 4 * splits > 64 ||
            (splits > 1 && first != t / 132 * 132) || (splits == 1 && first != t))
            break;
    }
    ok(t > 1000, "1..1000 tiles: parts only of the last wave's tiles, all in one round "
       "(first bad: %d)", t);

    c.splits = 0;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_OK, "splits=0 fits the plain grid");
    ok(sm90_tail_bytes(&p, &c, 132) == (size_t)132 * 192 * 129 * 4 &&
           launch_sm90_workspace(&p, &c, 132) == 256 + (size_t)132 * 192 * 129 * 4,
       "its workspace: the counter, then a record of 192 x 129 floats per SM");
    check_tail_records(&c);
    p.dtype = FA4_DTYPE_FP8_E4M3;
    c = sm90_config(2, 192, 2);
    c.swizzle = 64;
    c.splits = 0;
    ok(launch_sm90_workspace(&p, &c, 132) ==
           256 + (size_t)132 * 128 * 129 * 4 + launch_sm90_vt_bytes(&p, &c),
       "fp8: V^T after the records");
    p.dtype = FA4_DTYPE_BF16;
    c.splits = 1;
    ok(launch_sm90_workspace(&p, &c, 132) == 0, "splits=1: no workspace");
    c = sm90_config(3, 80, 3);
    c.splits = 0;
    c.scheduler = FA4_SCHED_PERSISTENT;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_EINVAL,
           "splits=0 refuses a persistent scheduler");
    has_str(why, "plain grid", "and says what it needs");
    c.scheduler = FA4_SCHED_PLAIN;
    p.causal = 1;
    p.window_right = 0;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_EINVAL,
           "splits=0 refuses a causal mask (tiles of unequal length)");
    p = ct_problem_2k(FA4_DTYPE_BF16, 128, 128, 0);
    p.varlen = 1;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_EINVAL, "and varlen batches");
    c.splits = 2;
    p.varlen = 0;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_EINVAL,
           "splits=2 is the sm80 family's");
    if (jit_nvrtc_version() == 0)
        return;
    for (i = 0; i < (int)(sizeof heads / sizeof heads[0]); i++)
        for (t = 0; t < 3; t++) {
            static const fa4_dtype dts[3] = { FA4_DTYPE_BF16, FA4_DTYPE_FP16, FA4_DTYPE_FP8_E4M3 };
            const int fp8 = dts[t] == FA4_DTYPE_FP8_E4M3;
            p = ct_problem_2k(dts[t], heads[i][0], heads[i][1], 0);
            c = sm90_config(heads[i][2], heads[i][2] == 3 ? (heads[i][0] <= 64 ? 128 : 80)
                                         : fp8 ? 128 : heads[i][0] <= 128 ? 176 : 80, 2);
            c.pingpong = 1;
            c.splits = 0;
            if (fp8 && heads[i][2] == 3)
                continue;
            if (fp8 && heads[i][1] > 128) {
                is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_ENOFIT,
                       "splits=0 with fp8 d%d is refused (it spills)", heads[i][1]);
                continue;
            }
            if (t == 1) {   /* the flavours: softcap and sinks */
                p.softcap = 30.0f;
                p.attention_sinks = 1;
            }
            check_compile(dev, &p, &c);
        }
}

/* The budget model's answers for a few configs, one behaviour each. */
static void check_budget(const device_limits *dev)
{
    fa4_problem p128 = ct_problem_2k(FA4_DTYPE_BF16, 128, 128, 0);
    fa4_problem p256 = ct_problem_2k(FA4_DTYPE_BF16, 256, 256, 0);
    fa4_problem p64 = ct_problem_2k(FA4_DTYPE_BF16, 64, 64, 0);
    fa4_problem p8 = ct_problem_2k(FA4_DTYPE_FP8_E4M3, 128, 128, 0);
    const budget_region *q, *o, *bar;
    fa4_layout l;
    fa4_config c;
    char why[512];
    fa4_status st;

    c = sm90_config(2, 128, 2);
    st = budget_fit(&l, dev, &p128, &c, why, sizeof why);
    q = budget_region_find(&l, "Q");
    o = budget_region_find(&l, "O");
    bar = budget_region_find(&l, "BAR");
    ok(st == FA4_OK && l.threads == 384 && q && o && bar && o->offset != q->offset &&
       o->offset % 1024 == 0 && l.smem_bytes >= bar->offset + bar->size + 1024,
       "d128 128x128 2 stages fits with its own O region, 384 threads (%d B smem)",
       l.smem_bytes);

    c = sm90_config(2, 80, 2);
    st = budget_fit(&l, dev, &p256, &c, why, sizeof why);
    q = budget_region_find(&l, "Q");
    o = budget_region_find(&l, "O");
    ok(st == FA4_OK && q && o && o->offset == q->offset,
       "d256 128x80 fits with O sharing Q's bytes (%d B smem)", l.smem_bytes);

    c = sm90_config(2, 96, 2);
    st = budget_fit(&l, dev, &p256, &c, why, sizeof why);
    is_int(st, FA4_ENOFIT, "d256 128x96 2 stages does not fit");
    has_str(why, "> opt-in limit", "and the reason names the opt-in shared-memory limit");

    c = sm90_config(3, 176, 2);
    st = budget_fit(&l, dev, &p64, &c, why, sizeof why);
    is_int(st, FA4_ENOFIT, "d64 192x176 does not fit 160 consumer registers");
    has_str(why, "consumer regs estimate", "and the reason gives the register estimate");

    c = sm90_config(2, 128, 2);
    c.consumer_regs = 256;
    c.producer_regs = 56;
    st = budget_fit(&l, dev, &p128, &c, why, sizeof why);
    is_int(st, FA4_ENOFIT, "a 56/256 register split over 384 threads does not fit");
    has_str(why, "launch allocation", "and the reason names the launch's register allocation");

    c = sm90_config(2, 128, 2);
    c.producer_regs = 32;   /* 32 x 128 + 240 x 256 > 168 x 384: setmaxnreg.inc would wait */
    st = budget_fit(&l, dev, &p128, &c, why, sizeof why);
    is_int(st, FA4_ENOFIT, "a 32/240 split over 384 threads does not fit the launch allocation");

    c = sm90_config(2, 128, 2);
    c.bm = 192;
    st = budget_fit(&l, dev, &p128, &c, why, sizeof why);
    is_int(st, FA4_EINVAL, "bm=192 with 2 consumer warpgroups is malformed");
    has_str(why, "needs bm=128", "and the reason says which bm");

    c = sm90_config(2, 128, 2);
    c.swizzle = 16;
    st = budget_fit(&l, dev, &p128, &c, why, sizeof why);
    is_int(st, FA4_EINVAL, "swizzle=16 is rejected");
    has_str(why, "supported: 128 64 32", "and the reason lists the swizzles");

    c = sm90_config(2, 128, 2);
    c.swizzle = 64;
    st = budget_fit(&l, dev, &p128, &c, why, sizeof why);
    ok(st == FA4_OK && budget_region_find(&l, "K") && budget_region_find(&l, "V"),
       "swizzle=64 fits with the split layout (%d B smem)", l.smem_bytes);

    {
        /* d96 pads to 128 columns with 128 B swizzle, to none with 64 or 32 B. */
        static const int swz[3] = { 128, 64, 32 }, width[3] = { 128, 96, 96 };
        fa4_problem p96 = ct_problem_2k(FA4_DTYPE_BF16, 96, 96, 0);
        int k;
        for (k = 0; k < 3; k++) {
            c = sm90_config(2, 128, 2);
            c.swizzle = swz[k];
            st = budget_fit(&l, dev, &p96, &c, why, sizeof why);
            q = budget_region_find(&l, "Q");
            ok(st == FA4_OK && q && q->size == 128 * width[k] * 2,
               "d96 with swizzle=%d stores %d-column tiles (Q %d B)", swz[k], width[k],
               q ? q->size : -1);
        }
    }

    c = sm90_config(2, 128, 2);
    c.swizzle = 32;
    st = budget_fit(&l, dev, &p64, &c, why, sizeof why);
    q = budget_region_find(&l, "Q");
    ok(st == FA4_OK && q && q->size == 128 * 64 * 2,
       "d64 with swizzle=32 keeps 64-column tiles (the narrowest wgmma N)");

    c = sm90_config(2, 176, 2);
    c.swizzle = 64;
    c.scheduler = FA4_SCHED_PERSISTENT;
    st = budget_fit(&l, dev, &p128, &c, why, sizeof why);
    is_int(st, FA4_ENOFIT, "d128 128x176 persistent with swizzle=64 does not fit 240 registers");

    c = sm90_config(2, 64, 3);
    c.fused_kv = 1;
    st = budget_fit(&l, dev, &p256, &c, why, sizeof why);
    ok(st == FA4_OK && l.kv_slots == 5 && budget_region_find(&l, "KV") &&
       !budget_region_find(&l, "K") && budget_region_find(&l, "KV")->size == 5 * 64 * 256 * 2,
       "d256 128x64 fused, 3 stages fits 5 slots in one KV region (%d slots, %d B smem)",
       l.kv_slots, l.smem_bytes);

    c = sm90_config(2, 96, 2);
    c.fused_kv = 1;
    st = budget_fit(&l, dev, &p256, &c, why, sizeof why);
    ok(st == FA4_OK && l.kv_slots == 3,
       "d256 128x96 fused, 2 stages fits 3 slots where the split rings do not (%d slots)",
       l.kv_slots);

    c = sm90_config(2, 128, 2);
    c.fused_kv = 1;
    st = budget_fit(&l, dev, &p128, &c, why, sizeof why);
    ok(st == FA4_OK && l.kv_slots == 4, "d128 128x128 fused, 2 stages has 4 slots (%d)",
       l.kv_slots);

    c = sm90_config(2, 112, 2);
    c.fused_kv = 1;
    st = budget_fit(&l, dev, &p256, &c, why, sizeof why);
    is_int(st, FA4_ENOFIT, "d256 128x112 fused, 2 stages (3 slots) does not fit");
    has_str(why, "2 x stages - 1", "and the reason gives the slot minimum");

    /* fp8: half the bytes of Q and K, O (16-bit) never in Q's bytes; the
       V^T chunks need bn to be whole swizzle spans of keys. */
    c = sm90_config(2, 128, 2);
    st = budget_fit(&l, dev, &p8, &c, why, sizeof why);
    is_int(st, FA4_OK, "fp8 d128 128x128, 2 stages fits");
    ok(st == FA4_OK && l.region[0].size == 128 * 128 && l.region[3].offset != l.region[0].offset,
       "fp8: Q is 1 byte an element and O has its own region");
    c = sm90_config(2, 144, 2);
    st = budget_fit(&l, dev, &p8, &c, why, sizeof why);
    is_int(st, FA4_EINVAL, "fp8 bn 144 with 128 B swizzle is refused");
    has_str(why, "multiple of the swizzle", "and the reason names the rule");
    p8.varlen = 1;
    c = sm90_config(2, 128, 2);
    c.scheduler = FA4_SCHED_DYNAMIC;
    st = budget_fit(&l, dev, &p8, &c, why, sizeof why);
    is_int(st, FA4_OK, "fp8 varlen 128x128 with the dynamic scheduler fits");
    p8.varlen = 0;
}

/* fp8 varlen and paged (the V^T copy follows K's address layer): the
** budget's answers, the V^T bytes, and compiles of every head dim's
** default, causal and not, plus a spread of each enumerated space. */
static void check_fp8_serving(const device_limits *dev)
{
    static const int dims[][2] = { { 64, 64 }, { 96, 96 }, { 128, 128 }, { 192, 128 },
                                   { 192, 192 }, { 256, 256 } };
    static const int pages[] = { 0, 16, 64, 256 };   /* 0: varlen */
    fa4_problem p = ct_problem_2k(FA4_DTYPE_FP8_E4M3, 128, 128, 1);
    fa4_layout l;
    fa4_config c;
    char why[512];
    int i, k, causal;

    p.varlen = 1;
    p.page_size = 16;
    c = sm90_config(2, 128, 2);
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_OK,
           "fp8 varlen queries over paged K/V fit the plain grid");
    c.scheduler = FA4_SCHED_DYNAMIC;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_EINVAL,
           "fp8 varlen queries over paged K/V refuse the dynamic scheduler");
    has_str(why, "plain grid", "and the reason names the grid that does");
    c.scheduler = FA4_SCHED_PLAIN;
    p.varlen = 0;
    p.page_size = 8;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_ENOTSUP,
           "fp8 over 8-row pages is not the sm90 family's");
    p.page_size = 16;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_OK,
           "fp8 dense queries over 16-row pages fit (16-row K boxes of 128 B rows)");
    c.bn = 144;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_EINVAL,
           "fp8 paged bn 144 with 128 B swizzle is refused (V^T chunks)");
    c = sm90_config(2, 192, 2);
    c.swizzle = 64;
    p.page_size = 0;
    p.varlen = 1;
    p.causal = 0;
    p.window_right = -1;
    ok(launch_sm90_vt_bytes(&p, &c) == (size_t)2 * 16 * 128 * 2112,
       "fp8 varlen V^T with bn 192: 2048 keys pad to 2112 (whole key blocks)");
    p.varlen = 0;
    p.page_size = 16;
    ok(launch_sm90_vt_bytes(&p, &c) == (size_t)2 * 16 * 128 * 2048,
       "fp8 paged V^T: 2048 keys, whole 64-key copy blocks");
    p.page_size = 0;
    p.seqlen_k = 1000;
    ok(launch_sm90_vt_bytes(&p, &c) == (size_t)2 * 16 * 128 * 1024,
       "fp8 dense V^T: 1000 keys pad to 1024");
    for (i = 0; i < (int)(sizeof dims / sizeof dims[0]); i++)
        for (k = 0; k < (int)(sizeof pages / sizeof pages[0]); k++)
            for (causal = 0; causal < 2; causal++) {
                p = ct_problem_2k(FA4_DTYPE_FP8_E4M3, dims[i][0], dims[i][1], causal);
                p.varlen = pages[k] == 0;
                p.page_size = pages[k];
                if (p.varlen && dims[i][1] > 192) {
                    is_int(config_default(&c, dev, &p, FA4_FAMILY_SM90, why, sizeof why),
                           FA4_ENOTSUP, "fp8 varlen d%d is not the sm90 family's", dims[i][1]);
                    continue;
                }
                if (!ok(config_default(&c, dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
                            c.bn % c.swizzle == 0 &&
                            (!p.varlen || c.scheduler == FA4_SCHED_DYNAMIC ||
                             c.scheduler == FA4_SCHED_PLAIN),
                        "fp8 d%d/%d %s%.0d%s has a default, bn whole swizzle spans (next: its "
                        "compile)", dims[i][0], dims[i][1], p.varlen ? "varlen" : "paged ",
                        pages[k], causal ? " causal" : ""))
                    diag("  %s", why);
                else
                    check_compile(dev, &p, &c);
            }
    /* A spread of the varlen and the 16-row paged spaces. */
    for (k = 0; k < 2; k++) {
        config_space sp;
        int j;
        p = ct_problem_2k(FA4_DTYPE_FP8_E4M3, 128, 128, 1);
        p.varlen = k == 0;
        p.page_size = k == 0 ? 0 : 16;
        if (config_enumerate(&sp, dev, &p, FA4_FAMILY_SM90, why, sizeof why) != FA4_OK ||
            sp.count == 0) {
            ok(0, "fp8 d128 %s enumerates sm90 configs", k ? "paged" : "varlen");
            continue;
        }
        ok(1, "fp8 d128 causal %s: %d of %d sm90 configs fit", k ? "paged 16" : "varlen",
           sp.count, sp.considered);
        for (j = k; j < sp.count; j += (sp.count + 2) / 3)
            check_compile(dev, &p, &sp.configs[j]);
        config_space_free(&sp);
    }
}

/* Explicit compiles of the 64 and 32 B swizzles, the fused ring and the
   dynamic scheduler. */
static void check_layouts(const device_limits *dev)
{
    static const int cases[][8] = { /* d, wgs, bn, stages, swizzle, fused, pingpong, sched */
        { 128, 2, 128, 2, 64, 0, 1, 0 }, { 128, 2, 128, 2, 128, 1, 1, 0 },
        { 128, 3, 80, 3, 64, 1, 0, 0 }, { 256, 2, 80, 2, 64, 0, 1, 0 },
        { 256, 2, 64, 3, 128, 1, 1, 0 }, { 256, 2, 96, 2, 64, 1, 1, 0 },
        { 64, 3, 128, 2, 64, 1, 1, 0 }, { 192, 2, 112, 2, 64, 1, 1, 0 },
        { 128, 2, 128, 2, 32, 0, 1, 0 }, { 96, 2, 128, 2, 32, 0, 1, 0 },
        { 96, 2, 128, 2, 64, 1, 1, 0 }, { 64, 3, 128, 2, 32, 1, 1, 0 },
        { 256, 2, 80, 2, 32, 0, 1, 0 }, { 192, 2, 112, 2, 32, 1, 0, 0 },
        { 64, 3, 112, 2, 128, 0, 1, 3 }, { 128, 2, 128, 2, 128, 1, 1, 3 },
        { 128, 2, 160, 2, 128, 0, 1, 3 }, { 96, 2, 128, 2, 32, 1, 1, 3 },
    };
    int i;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        fa4_problem p = ct_problem_2k(i & 1 ? FA4_DTYPE_FP16 : FA4_DTYPE_BF16, cases[i][0],
                                      cases[i][0] == 192 ? 128 : cases[i][0], (i >> 1) & 1);
        fa4_config c = sm90_config(cases[i][1], cases[i][2], cases[i][3]);
        c.swizzle = cases[i][4];
        c.fused_kv = cases[i][5];
        c.pingpong = cases[i][6];
        c.scheduler = (fa4_scheduler)cases[i][7];
        check_compile(dev, &p, &c);
    }
}

/* Varlen: the budget's rules (the dynamic scheduler only, paged K/V not
   here) and compiles of the varlen default and a spread of its space. */
static void check_varlen(const device_limits *dev)
{
    static const int dims[][2] = { { 64, 64 }, { 96, 96 }, { 128, 128 }, { 192, 128 } };
    char why[512], name[160];
    fa4_layout l;
    fa4_config c;
    fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, 128, 128, 1);
    fa4_status st;
    int i, causal;

    p.varlen = 1;
    c = sm90_config(2, 128, 2);
    st = budget_fit(&l, dev, &p, &c, why, sizeof why);
    c.scheduler = FA4_SCHED_PERSISTENT;
    st = budget_fit(&l, dev, &p, &c, why, sizeof why);
    is_int(st, FA4_EINVAL, "varlen with the static persistent scheduler is malformed");
    has_str(why, "dynamic scheduler", "and the reason names the schedulers it takes");
    p.page_size = 32;
    c.scheduler = FA4_SCHED_DYNAMIC;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_EINVAL,
           "varlen queries over paged K/V refuse the dynamic scheduler");
    c.scheduler = FA4_SCHED_PLAIN;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_OK,
           "varlen queries over paged K/V fit the plain grid");
    c.scheduler = FA4_SCHED_DYNAMIC;
    p.varlen = 0;
    p.page_size = 8;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_ENOTSUP,
           "8-row pages are not the sm90 family's (TMA boxes of 16 rows or more)");
    p.page_size = 256;
    c.bn = 176;
    c.scheduler = FA4_SCHED_PLAIN;
    st = budget_fit(&l, dev, &p, &c, why, sizeof why);
    if (!ok(st == FA4_OK, "176-row key blocks over 256-row pages fit (16-row boxes: none "
            "crosses a page)"))
        diag("  %s", why);
    if (st == FA4_OK && jit_nvrtc_version() != 0)
        check_compile(dev, &p, &c);
    p.page_size = 32;
    c.bn = 128;
    c.scheduler = FA4_SCHED_DYNAMIC;
    c.fused_kv = 1;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_OK,
           "dense queries over 32-row pages with 128-row key blocks fit (dynamic, fused ring)");
    c.fused_kv = 0;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_ENOFIT,
           "paged with the dynamic scheduler and split rings does not fit a 24-register producer");
    has_str(why, "producer_regs=24", "and the reason names the producer's registers");
    c.scheduler = FA4_SCHED_PERSISTENT;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_ENOFIT,
           "paged with the persistent scheduler does not fit a 24-register producer");
    if (jit_nvrtc_version() != 0) {
        /* The paged defaults that took those schedulers: d128 up to 2k keys. */
        fa4_problem q = ct_problem_2k(FA4_DTYPE_BF16, 128, 128, 0);
        q.page_size = 16;
        q.seqlen_k = 1024;
        if (config_default(&c, dev, &q, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK)
            check_compile(dev, &q, &c);
        else
            ok(0, "bf16 d128 paged 1k default: %s", why);
        q.causal = 1;
        q.window_right = 0;
        if (config_default(&c, dev, &q, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK)
            check_compile(dev, &q, &c);
        else
            ok(0, "bf16 d128 causal paged 1k default: %s", why);
    }
    p.page_size = 0;
    p.varlen = 1;
    p = ct_problem_2k(FA4_DTYPE_BF16, 256, 256, 0);
    p.varlen = 1;
    c = sm90_config(2, 64, 2);
    c.scheduler = FA4_SCHED_DYNAMIC;
    is_int(budget_fit(&l, dev, &p, &c, why, sizeof why), FA4_ENOTSUP,
           "varlen d256 is not the sm90 family's (its registers spill)");
    if (jit_nvrtc_version() == 0)
        return;
    /* The defaults of long batches (the dense heuristic's key block grows
       with the keys; varlen caps it by the register estimate): a batch of
       32 sequences up to 8k tokens, as an inference engine plans it. */
    for (i = 0; i < (int)(sizeof dims / sizeof dims[0]); i++)
        for (causal = 0; causal < 4; causal++) {
            p = ct_problem(FA4_DTYPE_BF16, 32, 8192, dims[i][0], dims[i][1], causal & 1);
            p.varlen = 1;
            p.softcap = causal & 2 ? 30.0f : 0.0f;    /* 2, 3: with softcap and sinks */
            p.attention_sinks = causal >> 1;
            if (!ok(config_default(&c, dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK,
                    "varlen 32 x 8k d%d%s%s has a default", dims[i][0],
                    causal & 1 ? " causal" : "", causal & 2 ? " softcap sinks" : ""))
                diag("  %s", why);
            else
                check_compile(dev, &p, &c);
        }
    for (i = 0; i < (int)(sizeof dims / sizeof dims[0]); i++)
        for (causal = 0; causal < 2; causal++) {
            config_space sp;
            p = ct_problem_2k(i & 1 ? FA4_DTYPE_FP16 : FA4_DTYPE_BF16, dims[i][0], dims[i][1],
                              causal);
            p.varlen = 1;
            if (!ok(config_default(&c, dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
                        c.scheduler == FA4_SCHED_DYNAMIC,
                    "varlen d%d%s default takes the dynamic scheduler", dims[i][0],
                    causal ? " causal" : ""))
                diag("  %s", why);
            else
                check_compile(dev, &p, &c);
            if (config_enumerate(&sp, dev, &p, FA4_FAMILY_SM90, why, sizeof why) != FA4_OK ||
                sp.count == 0) {
                ok(0, "varlen d%d enumerates sm90 configs", dims[i][0]);
                continue;
            }
            snprintf(name, sizeof name, "varlen d%d%s: %d configs", dims[i][0],
                     causal ? " causal" : "", sp.count);
            {
                int j, bad = 0;
                for (j = 0; j < sp.count; j++)
                    bad += sp.configs[j].scheduler != FA4_SCHED_PLAIN &&
                           sp.configs[j].scheduler != FA4_SCHED_DYNAMIC;
                ok(bad == 0, "%s, all plain or dynamic", name);
            }
            check_compile(dev, &p, &sp.configs[(i * 7 + causal * 13) % sp.count]);
            check_compile(dev, &p, &sp.configs[(i * 11 + causal * 5 + 1) % sp.count]);
            config_space_free(&sp);
        }
}

/* The constant softmax max (kernels/sm90/softmax.cuh) only for bf16 under
   a cap of at most 52; the running max's variants under a larger cap and
   for fp16 compile too. */
static void check_softcap_fixed_max(const device_limits *dev)
{
    static const struct { fa4_dtype dt; float cap; int fixed; } cases[] = {
        { FA4_DTYPE_BF16, 30.0f, 1 }, { FA4_DTYPE_BF16, 52.0f, 1 },
        { FA4_DTYPE_BF16, 60.0f, 0 }, { FA4_DTYPE_FP16, 30.0f, 0 },
        { FA4_DTYPE_FP8_E4M3, 30.0f, 0 },
    };
    char defs[8192];
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fa4_problem p = ct_problem_2k(cases[i].dt, 128, 128, 0);
        fa4_config c;
        int n;
        p.softcap = cases[i].cap;
        n = ct_default_defines(defs, sizeof defs, &c, dev, &p, FA4_FAMILY_SM90);
        ok(n > 0 && !strstr(defs, "FA4_SOFTCAP_FIXED_MAX") == !cases[i].fixed,
           "%s softcap %g: %s max", dtype_of(cases[i].dt)->name, (double)cases[i].cap,
           cases[i].fixed ? "constant" : "running");
        if (n > 0 && !cases[i].fixed && cases[i].dt != FA4_DTYPE_FP8_E4M3)
            check_compile(dev, &p, &c);
    }
}

/* Softcap's polynomial tanh (config tanh_poly_pct, FA4_TANH_POLY_PCT,
   softmax.cuh): the default's share (sm90_tanh_poly_default) on dense
   batches, bf16 under the constant max by head dim, mask and tile (d128
   causal: the 128 x 176 tile of 16k keys, not 2k's), fp8 d64 and d128,
   other 16-bit problems at d64; causal d128 chunks over a paged cache
   under the constant max 50%; none at d256, on varlen batches, on other
   paged ones, or without a cap.  Every default with a share compiles (d64
   ones without the exponentials' share).  As a config it needs a cap, and
   under bf16's constant max a scale / cap the folded coefficients can
   hold; a share the tuner tries on the d128 default tile compiles. */
static void check_tanh_poly(const device_limits *dev)
{
    static const struct { fa4_dtype dt; int d; float cap; int causal, varlen, page, pct; } cases[] = {
        { FA4_DTYPE_BF16, 64, 30.0f, 0, 0, 0, 75 },  { FA4_DTYPE_BF16, 64, 30.0f, 1, 0, 0, 50 },
        { FA4_DTYPE_BF16, 128, 30.0f, 0, 0, 0, 0 },  { FA4_DTYPE_BF16, 128, 30.0f, 1, 0, 0, 0 },
        { FA4_DTYPE_BF16, 128, 30.0f, 2, 0, 0, 50 },
        { FA4_DTYPE_BF16, 256, 30.0f, 0, 0, 0, 0 },  { FA4_DTYPE_FP16, 64, 60.0f, 0, 0, 0, 50 },
        { FA4_DTYPE_BF16, 128, 60.0f, 0, 0, 0, 0 },  { FA4_DTYPE_FP8_E4M3, 64, 30.0f, 0, 0, 0, 75 },
        { FA4_DTYPE_FP8_E4M3, 128, 30.0f, 0, 0, 0, 50 },
        { FA4_DTYPE_FP8_E4M3, 256, 30.0f, 0, 0, 0, 0 },
        { FA4_DTYPE_BF16, 64, 0.0f, 0, 0, 0, 0 },    { FA4_DTYPE_BF16, 64, 30.0f, 0, 1, 0, 0 },
        { FA4_DTYPE_BF16, 64, 30.0f, 0, 0, 16, 0 },   { FA4_DTYPE_BF16, 128, 50.0f, 1, 0, 64, 50 },
        { FA4_DTYPE_BF16, 128, 50.0f, 0, 0, 64, 0 },  { FA4_DTYPE_BF16, 128, 50.0f, 1, 1, 64, 0 },
        { FA4_DTYPE_FP16, 128, 50.0f, 1, 0, 64, 0 },
    };
    char defs[8192];
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fa4_problem p = ct_problem_2k(cases[i].dt, cases[i].d, cases[i].d, cases[i].causal != 0);
        fa4_config c;
        int n;
        if (cases[i].causal == 2) {   /* 16k keys */
            p.batch = 1;
            p.seqlen_q = p.seqlen_k = 16384;
        }
        p.softcap = cases[i].cap;
        p.varlen = cases[i].varlen;
        p.page_size = cases[i].page;
        n = ct_default_defines(defs, sizeof defs, &c, dev, &p, FA4_FAMILY_SM90);
        ok(n > 0 && !strstr(defs, "FA4_TANH_POLY_PCT") == !cases[i].pct &&
           c.tanh_poly_pct == (cases[i].cap > 0 ? cases[i].pct : -1) &&
           !(c.tanh_poly_pct > 0 && c.exp2_emu_pct),
           "%s d%d%s softcap %g%s: tanh_poly=%d (want %d), exp2_emu=%d",
           dtype_of(cases[i].dt)->name, cases[i].d,
           cases[i].causal == 2 ? " causal 16k" : cases[i].causal ? " causal" : "",
           (double)cases[i].cap, cases[i].varlen ? " varlen" : cases[i].page ? " paged" : "",
           c.tanh_poly_pct, cases[i].cap > 0 ? cases[i].pct : -1, c.exp2_emu_pct);
        if (n > 0 && cases[i].pct)
            check_compile(dev, &p, &c);
    }

    {
        const char *d128 = "sm90 bm=192 bn=80 stages=3 swizzle=128 wgs=3 regs=32/160 rescale=8 "
                           "pingpong=1 sched=plain late_k=1 tanh_poly=75";
        char why[512];
        fa4_config c;
        fa4_layout l;
        fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, 128, 128, 0);
        fa4_status st;

        config_parse(&c, d128, why, sizeof why);
        st = budget_fit(&l, dev, &p, &c, why, sizeof why);
        ok(st == FA4_EINVAL && strstr(why, "softcapped problems only"),
           "tanh_poly=75 without a cap: refused (%s)", why);
        p.softcap = 30.0f;
        p.softmax_scale = 1e-4f;   /* scale / cap 3e-6: (scale / cap)^7 is not normal */
        st = budget_fit(&l, dev, &p, &c, why, sizeof why);
        ok(st == FA4_EINVAL && strstr(why, "below 1e-5"),
           "tanh_poly=75 under the constant max at scale / cap 3e-6: refused (%s)", why);
        p.softmax_scale = 0.0f;
        check_compile(dev, &p, &c);
    }

    {
        /* The paged chunk's share goes to two-warpgroup tiles only: a
           three-warpgroup tile asked for with the default share (-1)
           takes none, and compiles without spills. */
        const char *wg3 = "sm90 bm=192 bn=64 stages=3 swizzle=128 wgs=3 regs=32/160 "
                          "pingpong=0 sched=dynamic";
        char why[512] = "", defs[8192];
        fa4_config c;
        fa4_layout l;
        fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, 128, 128, 1);

        p.softcap = 50.0f;
        p.page_size = 64;
        config_parse(&c, wg3, why, sizeof why);
        ok(budget_fit(&l, dev, &p, &c, why, sizeof why) == FA4_OK &&
           budget_defines(defs, sizeof defs, &p, &c, &l) > 0 &&
           !strstr(defs, "FA4_TANH_POLY_PCT"),
           "paged d128 causal softcap 50, three warpgroups: no tanh share by default (%s)", why);
        check_compile(dev, &p, &c);
    }

    {
        /* A config stored before the field (no key: -1) takes the default
           share; an explicit 0 takes none. */
        static const char *texts[] = {
            "sm90 bm=192 bn=128 stages=2 swizzle=128 wgs=3 regs=32/160 rescale=8 pingpong=1 "
            "sched=plain splits=0 late_k=1",
            "sm90 bm=192 bn=128 stages=2 swizzle=128 wgs=3 regs=32/160 rescale=8 pingpong=1 "
            "sched=plain splits=0 late_k=1 tanh_poly=0",
        };
        fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, 64, 64, 0);
        size_t t;
        p.softcap = 30.0f;
        for (t = 0; t < 2; t++) {
            char why[512];
            fa4_config c;
            fa4_layout l;
            int nd = -1;
            if (config_parse(&c, texts[t], why, sizeof why) == FA4_OK &&
                budget_fit(&l, dev, &p, &c, why, sizeof why) == FA4_OK)
                nd = budget_defines(defs, sizeof defs, &p, &c, &l);
            ok(nd > 0 && !strstr(defs, "FA4_TANH_POLY_PCT 75") == (t == 1) &&
               !strstr(defs, "FA4_TANH_POLY_PCT") == (t == 1),
               "bf16 d64 softcap 30, config text %s: tanh share %s", t ? "with tanh_poly=0"
               : "without tanh_poly (-1)", t ? "none" : "the default's 75%");
        }
    }
}

/* One sm90 config on a 2k-token bf16 (or fp8) problem of head dim D:
   MASK 0 none, 1 causal, 2 a (100, 20) window; GROUP the GQA group; ON
   whether the define a gate check looks for is expected. */
typedef struct gate_case {
    int d, mask, group, fp8;
    const char *cfg;
    int on;
} gate_case;

/* For each of CASES: DEFINE is in the variant's defines exactly when the
   case says ON (one ok line naming WHAT), and the variants that have it
   compile without spills or serialised wgmma (check_compile). */
static void check_define_gate(const device_limits *dev, const gate_case *cases, size_t n,
                              const char *define, const char *what)
{
    static const char *masks[] = { "", " causal", " window" };
    char defs[8192], why[512];
    size_t i;

    for (i = 0; i < n; i++) {
        fa4_problem p = ct_problem_2k(cases[i].fp8 ? FA4_DTYPE_FP8_E4M3 : FA4_DTYPE_BF16,
                                      cases[i].d, cases[i].d, cases[i].mask == 1);
        fa4_config c;
        fa4_layout l;
        int nd = -1;

        p.heads_kv = p.heads_q / cases[i].group;
        if (cases[i].mask == 2) {
            p.window_left = 100;
            p.window_right = 20;
        }
        if (config_parse(&c, cases[i].cfg, why, sizeof why) == FA4_OK &&
            budget_fit(&l, dev, &p, &c, why, sizeof why) == FA4_OK)
            nd = budget_defines(defs, sizeof defs, &p, &c, &l);
        ok(nd > 0 && !strstr(defs, define) == !cases[i].on, "d%d%s%s group %d [%s]: %s %s",
           cases[i].d, masks[cases[i].mask], cases[i].fp8 ? " fp8" : "", cases[i].group,
           cases[i].cfg, what, cases[i].on ? "on" : "off");
        if (nd <= 0)
            diag("  %s", why);
        else if (cases[i].on)
            check_compile(dev, &p, &c);
    }
}

/* Each warpgroup's own key range (FA4_WG_RANGES, kernels/sm90/mask.cuh) is
   compiled in only under a mask and where the tile spans more queries than
   a key block. */
static void check_wg_ranges(const device_limits *dev)
{
    static const gate_case cases[] = {
        { 256, 1, 1, 0, "sm90 bm=128 bn=64 stages=2 swizzle=128 fused_kv=1 wgs=2 regs=24/240 "
                        "pingpong=1 sched=plain late_k=1", 1 },
        { 64, 1, 1, 0, "sm90 bm=192 bn=128 stages=2 swizzle=128 wgs=3 regs=32/160 "
                       "pingpong=1 sched=plain", 1 },
        { 64, 1, 1, 0, "sm90 bm=128 bn=128 stages=3 swizzle=128 fused_kv=1 wgs=2 regs=24/240 "
                       "pingpong=1 sched=dynamic late_k=1", 0 },
        { 64, 0, 1, 0, "sm90 bm=192 bn=128 stages=2 swizzle=128 wgs=3 regs=32/160 "
                       "pingpong=1 sched=plain", 0 },
        { 128, 1, 4, 0, "sm90 bm=192 bn=80 stages=3 swizzle=128 wgs=3 regs=32/160 "
                        "pingpong=1 sched=plain pack_gqa=1 late_k=1", 0 },
        { 128, 1, 4, 0, "sm90 bm=192 bn=80 stages=3 swizzle=128 wgs=3 regs=32/160 "
                        "pingpong=1 sched=plain late_k=1", 1 },
    };
    check_define_gate(dev, cases, sizeof cases / sizeof cases[0], "FA4_WG_RANGES",
                      "warpgroup key ranges");
}

/* A warpgroup's first block at half width where its rows see only the
   block's first half (FA4_DIAG_HALF, kernels/sm90/mainloop.cuh) is
   compiled in under a mask for 16-bit inputs where BN / 2 is a wgmma
   width and the tile takes no warpgroup key ranges (not 192x128).  Its
   first form serialised every wgmma (O's registers copied under a P V in
   flight where the half block's path met the main loop's): check_compile
   fails that. */
static void check_diag_half(const device_limits *dev)
{
    static const gate_case cases[] = {
        { 64, 1, 1, 0, "sm90 bm=128 bn=128 stages=3 swizzle=128 fused_kv=1 wgs=2 regs=24/240 "
                       "pingpong=1 sched=dynamic late_k=1", 1 },
        { 64, 1, 1, 0, "sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 "
                       "pingpong=1 sched=plain late_k=1", 1 },
        { 64, 1, 1, 0, "sm90 bm=192 bn=128 stages=2 swizzle=128 wgs=3 regs=32/160 "
                       "pingpong=1 sched=plain", 0 },
        { 128, 2, 1, 0, "sm90 bm=128 bn=160 stages=2 swizzle=128 wgs=2 regs=24/240 "
                        "pingpong=1 sched=persistent", 1 },
        { 64, 0, 1, 0, "sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 "
                       "pingpong=1 sched=plain", 0 },
        { 128, 1, 1, 0, "sm90 bm=128 bn=176 stages=2 swizzle=128 wgs=2 regs=24/240 "
                        "pingpong=1 sched=plain late_k=1", 0 },
        { 256, 1, 1, 0, "sm90 bm=128 bn=80 stages=2 swizzle=128 wgs=2 regs=24/240 "
                        "pingpong=1 sched=plain late_k=1", 0 },
        { 128, 1, 1, 1, "sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 "
                        "pingpong=1 sched=plain", 0 },
    };
    check_define_gate(dev, cases, sizeof cases / sizeof cases[0], "FA4_DIAG_HALF",
                      "half-width first blocks");
}

/* Two Q slots (FA4_Q_SLOTS, kernels/sm90/mainloop.cuh) under the persistent
   schedulers for dense 16-bit problems of short sequences (2k keys here;
   masked ones only up to 512), where O keeps its own bytes and the fused
   ring its slots: not under the plain grid, under a mask past 512 keys, nor
   for fp8. */
static void check_q_slots(const device_limits *dev)
{
    static const gate_case cases[] = {
        { 64, 0, 1, 0, "sm90 bm=192 bn=128 stages=4 swizzle=128 fused_kv=1 wgs=3 regs=32/160 "
                       "pingpong=1 sched=persistent", 1 },
        { 128, 0, 1, 0, "sm90 bm=128 bn=128 stages=2 swizzle=128 fused_kv=1 wgs=2 regs=24/240 "
                        "pingpong=1 sched=persistent late_k=1", 1 },
        { 128, 0, 4, 0, "sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 "
                        "pingpong=1 sched=dynamic pack_gqa=1 late_k=1", 1 },
        { 128, 0, 1, 0, "sm90 bm=128 bn=128 stages=2 swizzle=128 fused_kv=1 wgs=2 regs=24/240 "
                        "pingpong=1 sched=plain late_k=1", 0 },
        { 128, 1, 1, 0, "sm90 bm=128 bn=128 stages=2 swizzle=128 fused_kv=1 wgs=2 regs=24/240 "
                        "pingpong=1 sched=dynamic", 0 },
        { 128, 0, 1, 1, "sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 "
                        "pingpong=0 sched=persistent", 0 },
    };
    check_define_gate(dev, cases, sizeof cases / sizeof cases[0], "FA4_Q_SLOTS",
                      "two Q slots");
}

/* Varlen batches take two Q slots under a mask (longest sequence up to 512
   keys, the dynamic scheduler), not without one: the defaults of packed
   causal and non-causal batches of 512 tokens, d64 and d128. */
static void check_q_slots_varlen(const device_limits *dev)
{
    static const struct { int d, causal, group, on; } cases[] = {
        { 128, 1, 4, 1 }, { 64, 1, 1, 1 }, { 128, 0, 1, 0 }, { 64, 0, 1, 0 },
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, cases[i].d, cases[i].d, cases[i].causal);
        fa4_config c;
        fa4_layout l;
        char why[512];
        int got = -1;
        p.varlen = 1;
        p.seqlen_q = p.seqlen_k = 512;
        p.heads_kv = p.heads_q / cases[i].group;
        if (config_default(&c, dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
            budget_fit(&l, dev, &p, &c, why, sizeof why) == FA4_OK)
            got = l.q_slots;
        ok(got == (cases[i].on ? 2 : 1) && c.scheduler == FA4_SCHED_DYNAMIC,
           "varlen d%d%s group %d, 512 keys: the default takes %d Q slot%s", cases[i].d,
           cases[i].causal ? " causal" : "", cases[i].group, cases[i].on ? 2 : 1,
           cases[i].on ? "s" : "");
        if (got == 2)
            check_compile(dev, &p, &c);
    }
}

/* d256 up to 2k keys: the default is 128x64 with the fused ring in 5 slots
   under the persistent scheduler (no mask) or the dynamic one (causal),
   and compiles without spills; past 2k the plain grid's 128x80 (varlen
   d256 is the sm80 family's).  The persistent schedulers' estimate admits
   d256 bn64 and still refuses bn80 (which spills 24-56 B there). */
static void check_d256_short(const device_limits *dev)
{
    static const struct { int causal, seqlen, bn; fa4_scheduler sched; } cases[] = {
        { 0, 512, 64, FA4_SCHED_PERSISTENT }, { 1, 512, 64, FA4_SCHED_DYNAMIC },
        { 0, 2048, 64, FA4_SCHED_PERSISTENT }, { 1, 2048, 64, FA4_SCHED_DYNAMIC },
        { 0, 4096, 80, FA4_SCHED_PLAIN }, { 1, 4096, 80, FA4_SCHED_PLAIN },
    };
    size_t i;
    int bn;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, 256, 256, cases[i].causal);
        fa4_config c;
        char why[512];
        p.seqlen_q = p.seqlen_k = cases[i].seqlen;
        if (!ok(config_default(&c, dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
                    c.bn == cases[i].bn && c.scheduler == cases[i].sched &&
                    (c.bn == 80 || (c.stages == 3 && c.fused_kv)),
                "d256%s %d keys: the default is 128x%d under scheduler %d",
                cases[i].causal ? " causal" : "", cases[i].seqlen, cases[i].bn, (int)cases[i].sched))
            continue;
        if (c.bn == 64)
            check_compile(dev, &p, &c);
    }
    for (bn = 64; bn <= 80; bn += 16) {
        fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, 256, 256, 1);
        fa4_config c = sm90_config(2, bn, 2);
        fa4_layout layout;
        char why[512];
        c.fused_kv = 1;
        c.pingpong = 1;
        c.scheduler = FA4_SCHED_DYNAMIC;
        ok((budget_fit(&layout, dev, &p, &c, why, sizeof why) == FA4_OK) == (bn == 64),
           "d256 causal 128x%d under the dynamic scheduler is %s by the budget", bn,
           bn == 64 ? "admitted" : "refused");
    }
}

/* Causal tiles ordered across groups of heads (layout.head_group,
   FA4_HEAD_GROUP): the group the budget picks for each default (a power of
   two dividing the grid's heads, at most 8, its K/V within half of L2; none
   below 16 query tiles, without a causal mask, for varlen, the persistent
   scheduler), and the grouped defaults (fp8's too) compile without spills. */
static void check_head_group(const device_limits *dev)
{
    static const struct {
        fa4_dtype dt;
        int d, b, s, hq, hkv, causal, varlen, group;
    } cases[] = {
        { FA4_DTYPE_BF16, 64, 1, 16384, 32, 32, 1, 0, 4 },   /* 4 MB of K/V a head */
        { FA4_DTYPE_BF16, 64, 4, 4096, 32, 32, 1, 0, 8 },
        { FA4_DTYPE_BF16, 64, 4, 4096, 12, 12, 1, 0, 4 },    /* 4 divides 12, 8 does not */
        { FA4_DTYPE_BF16, 128, 4, 4096, 16, 16, 1, 0, 8 },
        { FA4_DTYPE_FP16, 128, 2, 8192, 16, 16, 1, 0, 4 },
        { FA4_DTYPE_BF16, 256, 8, 2048, 8, 8, 1, 0, 8 },
        { FA4_DTYPE_BF16, 256, 1, 16384, 8, 8, 1, 0, 0 },    /* 16 MB a head */
        { FA4_DTYPE_BF16, 128, 1, 16384, 32, 8, 1, 0, 2 },   /* packed: KV heads */
        { FA4_DTYPE_BF16, 128, 16, 1024, 16, 16, 1, 0, 0 },  /* 8 query tiles */
        { FA4_DTYPE_BF16, 128, 1, 16384, 16, 16, 0, 0, 0 },  /* no mask */
        { FA4_DTYPE_FP8_E4M3, 128, 1, 16384, 16, 16, 1, 0, 4 },  /* 3 warpgroups: no spill */
        { FA4_DTYPE_FP8_E4M3, 128, 4, 4096, 16, 16, 1, 0, 8 },   /* 3 warpgroups from 4k keys */
        { FA4_DTYPE_BF16, 128, 4, 4096, 16, 16, 1, 1, 0 },   /* varlen */
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fa4_problem p = ct_problem(cases[i].dt, cases[i].b, cases[i].s, cases[i].d, cases[i].d,
                                   cases[i].causal);
        fa4_config c;
        fa4_layout layout;
        char why[512];
        p.heads_q = cases[i].hq;
        p.heads_kv = cases[i].hkv;
        p.varlen = cases[i].varlen;
        if (!ok(config_default(&c, dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
                    budget_fit(&layout, dev, &p, &c, why, sizeof why) == FA4_OK &&
                    layout.head_group == cases[i].group,
                "%s d%d b%d x %d %d/%d%s%s: heads grouped by %d", dtype_of(cases[i].dt)->name,
                cases[i].d, cases[i].b, cases[i].s, cases[i].hq, cases[i].hkv,
                cases[i].causal ? " causal" : "", cases[i].varlen ? " varlen" : "",
                cases[i].group))
            continue;
        if (layout.head_group)
            check_compile(dev, &p, &c);
    }
    {
        fa4_problem p = ct_problem(FA4_DTYPE_BF16, 1, 16384, 64, 64, 1);
        fa4_config c = sm90_config(2, 128, 2);
        fa4_layout layout;
        char why[512];
        p.heads_q = p.heads_kv = 32;
        c.scheduler = FA4_SCHED_PERSISTENT;
        ok(budget_fit(&layout, dev, &p, &c, why, sizeof why) == FA4_OK && layout.head_group == 0,
           "d64 causal 16k, 128x128 under the persistent scheduler: heads not grouped");
    }
}

/* Softcap and sinks with the defaults of each head dim, varlen and not
   (dense queries over 16- and 32-row pages for d64 and d128). */
static void check_softcap_sinks(const device_limits *dev)
{
    static const int dims[][2] = { { 64, 64 }, { 128, 128 }, { 192, 128 }, { 256, 256 } };
    char why[512];
    int i, varlen;

    for (i = 0; i < (int)(sizeof dims / sizeof dims[0]); i++)
        for (varlen = 0; varlen < 2; varlen++) {
            fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, dims[i][0], dims[i][1], i & 1);
            fa4_config c;
            p.softcap = 30.0f;
            p.attention_sinks = 1;
            p.varlen = varlen;
            p.page_size = !varlen && i < 2 ? 16 << i : 0;  /* paged K/V: 16 and 32 rows */
            if (config_default(&c, dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK)
                check_compile(dev, &p, &c);
            else if (!(varlen && dims[i][1] > 192))
                ok(0, "sm90 default with softcap and sinks, d%d varlen=%d: %s", dims[i][0],
                   varlen, why);
        }
    check_softcap_fixed_max(dev);
    check_tanh_poly(dev);
}

/* GQA packing: the budget's answers (grouped heads, a group dividing 64,
   no tail split) and compiles over groups 2 to 16, both tile heights,
   every scheduler, fp8, softcap with sinks, varlen and paged batches. */
static void check_pack_gqa(const device_limits *dev)
{
    static const struct {
        int hq, hkv, d, causal, flavours, varlen, page_size;
        fa4_dtype dt;
        const char *cfg;
    } builds[] = {
        { 32, 8, 128, 1, 0, 0, 0, FA4_DTYPE_BF16, "bm=128 bn=176 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 late_k=1" },
        { 32, 8, 128, 0, 0, 0, 0, FA4_DTYPE_BF16, "bm=192 bn=80 stages=3 swizzle=128 wgs=3 regs=32/160 rescale=8" },
        { 16, 2, 64, 1, 1, 0, 0, FA4_DTYPE_FP16, "bm=192 bn=112 stages=2 swizzle=128 wgs=3 regs=32/160 rescale=8 sched=dynamic" },
        { 32, 2, 128, 1, 0, 0, 0, FA4_DTYPE_BF16, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 sched=lpt" },
        { 8, 4, 256, 0, 1, 0, 0, FA4_DTYPE_BF16, "bm=128 bn=80 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 sched=plain" },
        { 64, 8, 128, 0, 0, 0, 0, FA4_DTYPE_BF16, "bm=128 bn=128 stages=2 swizzle=64 fused_kv=1 wgs=2 regs=24/240 rescale=8 sched=persistent" },
        { 32, 8, 128, 1, 0, 0, 0, FA4_DTYPE_FP8_E4M3, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8" },
        /* Varlen and paged batches (the defaults' tiles: dynamic varlen, plain paged). */
        { 32, 8, 128, 1, 0, 1, 0, FA4_DTYPE_BF16, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=dynamic late_k=1" },
        { 16, 2, 64, 0, 1, 1, 0, FA4_DTYPE_FP16, "bm=192 bn=64 stages=3 swizzle=128 wgs=3 regs=32/160 rescale=8 sched=dynamic" },
        { 32, 8, 128, 1, 0, 0, 16, FA4_DTYPE_BF16, "bm=128 bn=176 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=plain late_k=1" },
        { 32, 4, 128, 1, 1, 1, 64, FA4_DTYPE_BF16, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=plain" },
        { 32, 8, 128, 1, 0, 1, 0, FA4_DTYPE_FP8_E4M3, "bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=dynamic" },
    };
    static const struct {
        int hq, hkv, varlen, page_size, causal, splits, pack;
        fa4_status st;
        const char *needle;
    } answers[] = {
        { 32, 8, 0, 0, 1, 1, 1, FA4_OK, "" },
        { 32, 32, 0, 0, 1, 1, 1, FA4_EINVAL, "grouped heads" },
        { 24, 8, 0, 0, 1, 1, 1, FA4_ENOTSUP, "group 3" },   /* not a divisor of a 64-row box */
        { 32, 8, 1, 0, 1, 1, 1, FA4_OK, "" },                 /* varlen */
        { 32, 8, 0, 64, 1, 1, 1, FA4_OK, "" },                /* paged */
        { 32, 8, 1, 16, 0, 1, 1, FA4_OK, "" },                /* both */
        { 32, 8, 0, 0, 0, 0, 1, FA4_EINVAL, "tail split" },
        { 32, 8, 0, 0, 0, 1, 2, FA4_EINVAL, "pack_gqa=2" },
    };
    fa4_layout l;
    char why[512], text[256];
    size_t i;

    for (i = 0; i < sizeof answers / sizeof answers[0]; i++) {
        fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, 128, 128, answers[i].causal);
        fa4_config c = sm90_config(2, 128, 2);
        fa4_status st;
        p.heads_q = answers[i].hq;
        p.heads_kv = answers[i].hkv;
        p.varlen = answers[i].varlen;
        p.page_size = answers[i].page_size;
        c.splits = answers[i].splits;
        c.pack_gqa = answers[i].pack;
        st = budget_fit(&l, dev, &p, &c, why, sizeof why);
        ok(st == answers[i].st && strstr(why, answers[i].needle),
           "pack_gqa=%d, %d/%d heads, varlen %d, page_size %d, splits %d: status %d (%s)",
           c.pack_gqa, p.heads_q, p.heads_kv, p.varlen, p.page_size, c.splits, (int)st, why);
    }

    for (i = 0; i < sizeof builds / sizeof builds[0]; i++) {
        fa4_problem q = ct_problem_2k(builds[i].dt, builds[i].d, builds[i].d, builds[i].causal);
        fa4_config cfg;
        q.heads_q = builds[i].hq;
        q.heads_kv = builds[i].hkv;
        q.varlen = builds[i].varlen;
        if (builds[i].page_size) {
            q.page_size = builds[i].page_size;
            q.num_pages = q.batch * q.seqlen_k / q.page_size;
        }
        if (builds[i].flavours) {
            q.softcap = 30.0f;
            q.attention_sinks = 1;
        }
        snprintf(text, sizeof text, "sm90 %s pack_gqa=1", builds[i].cfg);
        if (config_parse(&cfg, text, why, sizeof why) != FA4_OK) {
            ok(0, "%s parses: %s", text, why);
            continue;
        }
        check_compile(dev, &q, &cfg);
    }
}

/* fp8's defaults: at d96-d128 three warpgroups of 192 x 96 at 32 B swizzle
   for dense batches and causal from 4k keys, compiled without spills (past
   d96 without the tail split, whose partial-O path spills there); d128
   causal below 4k keys two of 128 x 128 on the fused ring under the dynamic
   scheduler; d64 dense batches under the persistent scheduler. */
static void check_fp8_default(const device_limits *dev)
{
    static const struct { int d, causal, seqlen, wgs, bn; fa4_scheduler sched; } cases[] = {
        { 128, 0, 16384, 3, 96, FA4_SCHED_PLAIN },   { 128, 1, 16384, 3, 96, FA4_SCHED_PLAIN },
        { 96, 0, 16384, 3, 96, FA4_SCHED_PLAIN },    { 128, 1, 4096, 3, 96, FA4_SCHED_PLAIN },
        { 128, 1, 2048, 2, 128, FA4_SCHED_DYNAMIC }, { 64, 0, 16384, 3, 128, FA4_SCHED_PERSISTENT },
        { 64, 0, 2048, 3, 128, FA4_SCHED_PERSISTENT }, { 64, 1, 2048, 3, 128, FA4_SCHED_DYNAMIC },
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fa4_problem p = ct_problem_2k(FA4_DTYPE_FP8_E4M3, cases[i].d, cases[i].d, cases[i].causal);
        fa4_config c;
        char why[512];
        p.batch = 16384 / cases[i].seqlen;
        p.seqlen_q = p.seqlen_k = cases[i].seqlen;
        if (!ok(config_default(&c, dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
                    c.consumer_wgs == cases[i].wgs && c.bn == cases[i].bn &&
                    c.scheduler == cases[i].sched &&
                    (c.bn != 96 || (c.swizzle == 32 && (cases[i].d <= 96 || c.splits == 1))) &&
                    (cases[i].sched != FA4_SCHED_DYNAMIC || cases[i].d != 128 || c.fused_kv),
                "fp8 d%d%s %d keys: the default has %d consumer warpgroups, bn %d, the %s "
                "scheduler", cases[i].d, cases[i].causal ? " causal" : "", cases[i].seqlen,
                cases[i].wgs, cases[i].bn, config_scheduler_name(cases[i].sched)))
            continue;
        if (cases[i].wgs == 3 || cases[i].sched == FA4_SCHED_DYNAMIC)
            check_compile(dev, &p, &c);
    }
}

int main(void)
{
    static const int dims[][2] = { { 64, 64 }, { 96, 96 }, { 128, 128 }, { 192, 128 },
                                   { 192, 192 }, { 256, 256 } };
    const int ndims = (int)(sizeof dims / sizeof dims[0]);
    const int all = getenv("FA4_TEST_ALL") && atoi(getenv("FA4_TEST_ALL"));
    const char *shard_env = getenv("FA4_TEST_SHARD");   /* "i/N": every N-th config from i */
    device_limits dev;
    char why[512];
    int i, t, c, j, shard = 0, nshards = 1, seq = 0;

    if (shard_env && (sscanf(shard_env, "%d/%d", &shard, &nshards) != 2 || nshards < 1 ||
                      shard < 0 || shard >= nshards))
        skip_all("FA4_TEST_SHARD=%s: want i/N with 0 <= i < N", shard_env);

    if (device_limits_for_arch(&dev, "sm_90a", why, sizeof why) != FA4_OK)
        skip_all("no sm_90a limits (%s)", why);
    plan_lazy();
    check_budget(&dev);
    if (jit_nvrtc_version() == 0) {
        skip("NVRTC not available: compiles not run");
        return done_testing();
    }
    check_repeat_compile(&dev);
    check_layouts(&dev);
    check_varlen(&dev);
    check_softcap_sinks(&dev);
    check_fp8_serving(&dev);
    check_fp8_default(&dev);
    check_tail_split(&dev);
    check_pack_gqa(&dev);
    check_wg_ranges(&dev);
    check_diag_half(&dev);
    check_q_slots(&dev);
    check_q_slots_varlen(&dev);
    check_d256_short(&dev);
    check_head_group(&dev);
    for (i = 0; i < ndims; i++) {
        /* The default, in each dtype (fp8 e4m3 too), causal and not. */
        for (t = 0; t < 3; t++)
            for (c = 0; c < 2; c++) {
                static const fa4_dtype dts[3] = { FA4_DTYPE_BF16, FA4_DTYPE_FP16,
                                                  FA4_DTYPE_FP8_E4M3 };
                fa4_problem p = ct_problem_2k(dts[t], dims[i][0], dims[i][1], c);
                fa4_config cfg;
                if (config_default(&cfg, &dev, &p, FA4_FAMILY_SM90, why, sizeof why) != FA4_OK) {
                    ok(0, "sm_90a has an sm90 default for d%d/%d", dims[i][0], dims[i][1]);
                    diag("  %s", why);
                    continue;
                }
                check_compile(&dev, &p, &cfg);
            }
        /* A spread of each enumerated space, causal and not (the masked one
           adds the dynamic scheduler): two configs each, or with FA4_TEST_ALL
           every config, dtype alternating. */
        for (c = 0; c < 2; c++) {
            fa4_problem p = ct_problem_2k(FA4_DTYPE_BF16, dims[i][0], dims[i][1], c);
            config_space sp;
            int step;
            if (config_enumerate(&sp, &dev, &p, FA4_FAMILY_SM90, why, sizeof why) != FA4_OK ||
                sp.count == 0) {
                ok(0, "sm_90a enumerates sm90 configs for d%d/%d%s", dims[i][0], dims[i][1],
                   c ? " causal" : "");
                diag("  %s", why);
                continue;
            }
            ok(1, "d%d/%d%s: %d of %d sm90 configs fit", dims[i][0], dims[i][1],
               c ? " causal" : "", sp.count, sp.considered);
            step = all ? 1 : (sp.count + 1) / 2;
            for (j = (all ? 0 : (i + c) % step); j < sp.count; j += step) {
                fa4_problem q = ct_problem_2k(j & 1 ? FA4_DTYPE_FP16 : FA4_DTYPE_BF16, dims[i][0],
                                              dims[i][1], c);
                if (all && nshards > 1 && (seq++ % nshards) != shard)
                    continue;
                check_compile(&dev, &q, &sp.configs[j]);
            }
            config_space_free(&sp);
        }
    }
    return done_testing();
}
