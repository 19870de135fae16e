/*
** test_config.c -- the budget front and the enumerator: every emitted
** config fits its budgets, defaults fit, the text form round-trips, and
** families refuse devices they cannot run on (sm100 on a B200 without the
** opt-in among them); the sm80 rows per warp.
*/
#include "tap.h"
#include "config.h"
#include "family.h"

/*
** A B200 as the driver would describe it (limits of the sm_100a table,
** cc 10.0, a driver version), with or without the sm100 opt-in: the
** families it lists, what the heuristic's first choice becomes, the
** budget's refusal and the context warning.
*/
static void check_sm100_opt_in(void)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    device_limits b200;
    fa4_family fams[3];
    fa4_config c;
    fa4_layout l;
    char why[512], note[512];
    int n, i, first = 0;

    if (!ok(device_limits_for_arch(&b200, "sm_100a", why, sizeof why) == FA4_OK &&
            b200.sm100_opt_in == 1, "planned sm_100a limits may use the sm100 family"))
        return;
    snprintf(b200.name, sizeof b200.name, "NVIDIA B200");
    b200.driver_version = 13000;
    b200.sm100_opt_in = 0;
    p.batch = 4; p.seqlen_q = p.seqlen_k = 4096; p.heads_q = p.heads_kv = 16;
    p.head_dim_qk = 128;

    n = config_families_for(fams, &b200, &p);
    ok(n == 2 && fams[0] == FA4_FAMILY_SM100 && fams[1] == FA4_FAMILY_SM80,
       "a B200 lists sm100 then sm80");
    ok(config_default(&c, &b200, &p, FA4_FAMILY_SM100, why, sizeof why) == FA4_ENOTSUP &&
       strstr(why, "unvalidated") && strstr(why, "NVIDIA B200") &&
       strstr(why, "fa4_context_options.enable_sm100 = 1") && strstr(why, "FA4_ENABLE_SM100=1"),
       "without the opt-in the sm100 default is FA4_ENOTSUP, saying how to opt in (%s)", why);
    c = (fa4_config)FA4_CONFIG_INIT;
    family_sm100.heuristic(&c, &b200, &p);
    ok(budget_fit(&l, &b200, &p, &c, why, sizeof why) == FA4_ENOTSUP,
       "and so is an explicit sm100 config");
    /* The heuristic's choice (lib/plan.c): the first family whose default fits. */
    for (i = 0; i < n && !first; i++)
        if (config_default(&c, &b200, &p, fams[i], why, sizeof why) == FA4_OK)
            first = (int)fams[i];
    is_int(first, FA4_FAMILY_SM80, "the heuristic runs the sm80 family there");
    ok(config_sm100_note(note, sizeof note, &b200) && strstr(note, "NVIDIA B200") &&
       strstr(note, "unvalidated") && strstr(note, "sm80") && strstr(note, "FA4_ENABLE_SM100=1"),
       "the context warning says so and how to opt in: %s", note);

    b200.sm100_opt_in = 1;
    ok(config_default(&c, &b200, &p, FA4_FAMILY_SM100, why, sizeof why) == FA4_OK &&
       c.family == FA4_FAMILY_SM100, "with the opt-in the sm100 default fits");
    ok(!config_sm100_note(note, sizeof note, &b200) && !note[0], "and no warning is due");

    /* a decode step: sm80 first without the opt-in (its serving tiles), the
       sm100 decode mode with it; fp8 decode keeps sm80 first either way */
    p.seqlen_q = 1;
    p.heads_q = 32;
    p.heads_kv = 4;
    b200.sm100_opt_in = 0;
    n = config_families_for(fams, &b200, &p);
    ok(n == 2 && fams[0] == FA4_FAMILY_SM80 && config_sm100_note(note, sizeof note, &b200),
       "without the opt-in a decode step on a B200 goes to sm80 first, with the warning");
    b200.sm100_opt_in = 1;
    n = config_families_for(fams, &b200, &p);
    ok(n == 2 && fams[0] == FA4_FAMILY_SM100 &&
       config_default(&c, &b200, &p, FA4_FAMILY_SM100, why, sizeof why) == FA4_OK &&
       c.bm == 32 && c.pack_gqa == 1 && c.splits == 0,
       "with it the decode step stays on sm100 first, in the decode mode (bm 32, heads "
       "packed, splits per call)");
    p.dtype = FA4_DTYPE_FP8_E4M3;
    n = config_families_for(fams, &b200, &p);
    ok(n == 2 && fams[0] == FA4_FAMILY_SM80,
       "an fp8 decode step goes to sm80 first even with the opt-in (no fp8 decode mode)");
    p.dtype = FA4_DTYPE_BF16;
    p.seqlen_q = 4096;
    p.heads_q = p.heads_kv = 16;

    b200.cc = 103;
    snprintf(b200.name, sizeof b200.name, "NVIDIA B300");
    ok(config_sm100_note(note, sizeof note, &b200) && strstr(note, "10.3") &&
       strstr(note, "sm_100a (compute capability 10.0) only"),
       "a 10.3 GPU is told the sm100 family is built for 10.0 only: %s", note);
    ok(config_default(&c, &b200, &p, FA4_FAMILY_SM100, why, sizeof why) == FA4_ENOTSUP,
       "and cannot use it, opt-in or not");
    b200.cc = 90;
    ok(!config_sm100_note(note, sizeof note, &b200), "an sm_90 GPU gets no sm100 warning");
}

/* A prefill problem: 4 x 16 heads x 4096, head dims D / DV. */
static fa4_problem prefill(int d, int dv)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    p.batch = 4; p.seqlen_q = p.seqlen_k = 4096; p.heads_q = 16; p.heads_kv = 16;
    p.head_dim_qk = d; p.head_dim_v = dv;
    return p;
}

/* The sm80 warps field: bm / warps rows per warp, 16 (warps 0 too, as
   text written before 32-row warps existed) or 32; the heuristic's
   choice per head dim; the estimate's refusal of 32-row tiles that
   spill. */
static void check_sm80_rows(void)
{
    static const struct { int d, dv, warps, bn; } want[] = {
        { 64, 64, 4, 64 }, { 96, 96, 4, 64 }, { 128, 128, 4, 64 },
        { 192, 128, 8, 64 }, { 256, 256, 8, 64 },
    };
    fa4_problem p = prefill(128, 128);
    device_limits dev;
    fa4_config c, back;
    fa4_layout l;
    char why[512], text[256];
    fa4_status st;
    size_t i;

    if (device_limits_for_arch(&dev, "sm_80", why, sizeof why) != FA4_OK) {
        ok(0, "limits for sm_80: %s", why);
        return;
    }
    st = config_parse(&c, "sm80 bm=128 bn=64 stages=2 swizzle=128", why, sizeof why);
    if (st == FA4_OK)
        st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && l.threads == 256,
       "sm80 text without warps keeps 16 rows per warp (%d threads)", st ? -1 : l.threads);
    st = config_parse(&c, "sm80 bm=128 bn=32 stages=2 swizzle=128 warps=4", why, sizeof why);
    if (st == FA4_OK)
        st = budget_fit(&l, &dev, &p, &c, why, sizeof why);
    ok(st == FA4_OK && l.threads == 128,
       "sm80 bm=128 warps=4 runs 32 rows per warp (%d threads)", st ? -1 : l.threads);
    fa4_config_format(&c, text, sizeof text);
    ok(config_parse(&back, text, why, sizeof why) == FA4_OK && config_equal(&c, &back) &&
       strstr(text, "warps=4"), "a 32-row config round-trips: %s", text);
    c.warps = 3;
    ok(budget_fit(&l, &dev, &p, &c, why, sizeof why) == FA4_EINVAL && strstr(why, "warps=3") &&
       strstr(why, "16 or 32 rows"), "warps=3 with bm=128 is refused: %s", why);
    c.bm = 64; c.warps = 1;
    ok(budget_fit(&l, &dev, &p, &c, why, sizeof why) == FA4_EINVAL && strstr(why, "warps=1"),
       "64 rows per warp is refused: %s", why);
    c.bm = 128; c.bn = 64; c.warps = 4;
    ok(budget_fit(&l, &dev, &p, &c, why, sizeof why) == FA4_OK,
       "d128 bn64 at 32 rows per warp fits the plain variant");
    p.softcap = 30.0f;
    ok(budget_fit(&l, &dev, &p, &c, why, sizeof why) == FA4_ENOFIT &&
       strstr(why, "32 rows per warp"),
       "and is over the register estimate with softcap: %s", why);
    ok(config_default(&c, &dev, &p, FA4_FAMILY_SM80, why, sizeof why) == FA4_OK &&
       c.warps == 4 && c.bn == 32, "where the default takes bn 32 at 32 rows");
    p.softcap = 0.0f;
    p.page_size = 16;
    ok(config_default(&c, &dev, &p, FA4_FAMILY_SM80, why, sizeof why) == FA4_OK &&
       c.warps == 4 && c.bn == 32, "and so with pages");
    p.page_size = 0;
    for (i = 0; i < sizeof want / sizeof want[0]; i++) {
        p = prefill(want[i].d, want[i].dv);
        st = config_default(&c, &dev, &p, FA4_FAMILY_SM80, why, sizeof why);
        fa4_config_format(&c, text, sizeof text);
        ok(st == FA4_OK && c.bm == 128 && c.warps == want[i].warps && c.bn == want[i].bn &&
           !c.kv_split_warps,
           "sm80 prefill default for d%d/%d: bm 128, %d warps of %d rows, bn %d (%s)",
           want[i].d, want[i].dv, want[i].warps, 128 / want[i].warps, want[i].bn,
           st == FA4_OK ? text : why);
    }
    p = prefill(256, 256);
    ok(config_default(&c, &dev, &p, FA4_FAMILY_SM80, why, sizeof why) == FA4_OK &&
       c.stages == 1 && c.bn == 64, "an A100's 164 KB takes d256's bn 64 tile in one stage");
    p = prefill(128, 128);
    p.seqlen_q = 1; p.heads_kv = 2;
    ok(config_default(&c, &dev, &p, FA4_FAMILY_SM80, why, sizeof why) == FA4_OK &&
       c.kv_split_warps == 1 && c.bm == 16, "a decode step keeps the split-key tile of 16 rows");
    p.seqlen_q = 16;
    ok(config_default(&c, &dev, &p, FA4_FAMILY_SM80, why, sizeof why) == FA4_OK &&
       c.pack_gqa == 1 && c.bm == 64 && c.warps == 4,
       "a short chunk with packed heads keeps 64 rows in 4 warps of 16");
}

/* late_k_release: the sm90 heuristic takes it with two consumer
   warpgroups and with three at d64 on the plain grid (bf16, measured),
   not with three at d128 or fp8; the tuner's space holds both settings
   of the same tile. */
static void check_late_k(void)
{
    device_limits dev;
    fa4_problem p = FA4_PROBLEM_INIT;
    fa4_config def;
    config_space sp;
    char why[512];
    int i, late = 0, early = 0;
    fa4_status st;

    if (!ok(device_limits_for_arch(&dev, "sm_90a", why, sizeof why) == FA4_OK, "sm_90a limits"))
        return;
    p.batch = 1; p.seqlen_q = p.seqlen_k = 16384; p.heads_q = p.heads_kv = 16;
    p.head_dim_qk = p.head_dim_v = 128; p.causal = 1; p.window_right = 0;
    ok(config_default(&def, &dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
       def.consumer_wgs == 2 && def.late_k_release == 1,
       "sm90 d128 causal 16k default: two consumer warpgroups, K freed late");
    p.head_dim_qk = p.head_dim_v = 64;
    ok(config_default(&def, &dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
       def.consumer_wgs == 3 && def.scheduler == FA4_SCHED_PLAIN && def.late_k_release == 1,
       "sm90 d64 causal 16k default: three consumer warpgroups on the plain grid, K freed late");
    p.head_dim_qk = p.head_dim_v = 128; p.causal = 0; p.window_right = -1;
    st = config_default(&def, &dev, &p, FA4_FAMILY_SM90, why, sizeof why);
    ok(st == FA4_OK && (def.consumer_wgs == 2) == (def.late_k_release == 1),
       "sm90 d128 non-causal 16k default: late_k only with two consumer warpgroups (%d, late_k %d)",
       def.consumer_wgs, def.late_k_release);
    p.causal = 1; p.window_right = 0; p.dtype = FA4_DTYPE_FP8_E4M3;
    ok(config_default(&def, &dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
       def.late_k_release == 0, "sm90 fp8 default keeps K freed early");
    p.dtype = FA4_DTYPE_BF16;
    if (!ok(config_enumerate(&sp, &dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK,
            "sm90 d128 causal enumerates"))
        return;
    for (i = 0; i < sp.count; i++) {
        fa4_config c = sp.configs[i];
        int j;
        if (!c.late_k_release)
            continue;
        late++;
        c.late_k_release = 0;
        for (j = 0; j < sp.count; j++)
            early += config_equal(&c, &sp.configs[j]);
    }
    ok(late > 0 && early == late, "sm90 space: %d configs with late_k, each with its twin", late);
    config_space_free(&sp);
}

/* GQA packing in the sm90 family: the heuristic packs grouped heads (dense
   or varlen) under a mask or with fewer queries than a tile (never in place
   of the tail split), not MHA or a group that does not divide 64; the
   tuner's space holds packed configs only where packing applies. */
static void check_pack_gqa(void)
{
    device_limits dev;
    fa4_problem p = FA4_PROBLEM_INIT;
    fa4_config def;
    config_space sp;
    char why[512];
    int i, packed = 0;

    if (!ok(device_limits_for_arch(&dev, "sm_90a", why, sizeof why) == FA4_OK, "sm_90a limits"))
        return;
    p.batch = 1; p.seqlen_q = p.seqlen_k = 16384; p.heads_q = 32; p.heads_kv = 8;
    p.head_dim_qk = p.head_dim_v = 128; p.causal = 1; p.window_right = 0;
    ok(config_default(&def, &dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
       def.pack_gqa == 1 && def.splits == 1, "sm90 GQA 32/8 causal default packs");
    p.causal = 0; p.window_right = -1;
    ok(config_default(&def, &dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
       def.pack_gqa == 0, "sm90 GQA 32/8 non-causal 16k default does not (splits %d)", def.splits);
    p.seqlen_q = 16;
    ok(config_default(&def, &dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
       def.pack_gqa == 0 && def.splits == 0,
       "16 queries over 16k keys: the tail split (a tile per head in parts), not packing");
    p.causal = 1; p.window_right = 0;
    ok(config_default(&def, &dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
       def.pack_gqa == 1, "16 queries over 16k keys, causal: packed");
    p.seqlen_q = 16384; p.heads_kv = 32;
    ok(config_default(&def, &dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
       def.pack_gqa == 0, "MHA is not packed");
    p.heads_q = 24; p.heads_kv = 8;
    ok(config_default(&def, &dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
       def.pack_gqa == 0, "group 3 is not packed");
    p.heads_q = 32; p.varlen = 1;
    ok(config_default(&def, &dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK &&
       def.pack_gqa == 1, "varlen GQA causal is packed");
    p.varlen = 0;
    if (!ok(config_enumerate(&sp, &dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK,
            "sm90 GQA causal enumerates"))
        return;
    for (i = 0; i < sp.count; i++)
        packed += sp.configs[i].pack_gqa == 1 && sp.configs[i].swizzle == 128 &&
                  sp.configs[i].splits == 1;
    ok(packed > 0, "sm90 GQA space: %d packed configs (128 B swizzle, no tail split)", packed);
    config_space_free(&sp);
    p.heads_kv = 32;
    if (!ok(config_enumerate(&sp, &dev, &p, FA4_FAMILY_SM90, why, sizeof why) == FA4_OK,
            "sm90 MHA causal enumerates"))
        return;
    for (i = packed = 0; i < sp.count; i++)
        packed += sp.configs[i].pack_gqa;
    ok(packed == 0, "sm90 MHA space: no packed configs");
    config_space_free(&sp);
}

int main(void)
{
    static const char *arches[] = { "sm_80", "sm_90a", "sm_100a" };
    static const int dims[][2] = { { 64, 64 }, { 96, 96 }, { 128, 128 }, { 192, 128 }, { 256, 256 } };
    static const fa4_family fams[] = { FA4_FAMILY_SM80, FA4_FAMILY_SM90, FA4_FAMILY_SM100 };
    device_limits dev;
    char why[512];
    size_t a, d, f;

    plan_lazy();
    for (a = 0; a < 3; a++) {
        if (!ok(device_limits_for_arch(&dev, arches[a], why, sizeof why) == FA4_OK, "limits table has %s", arches[a]))
            continue;
        for (f = 0; f < 3; f++)
            for (d = 0; d < 5; d++) {
                fa4_problem p = FA4_PROBLEM_INIT;
                config_space sp;
                fa4_config def;
                fa4_layout lay;
                fa4_status st;
                int i, bad = 0, total_dropped = 0;
                const family_ops *ops = family_lookup(fams[f]);
                int runs = ops->exact_cc ? dev.cc == ops->exact_cc : dev.cc >= ops->min_cc;

                p.batch = 4; p.seqlen_q = p.seqlen_k = 4096; p.heads_q = 16; p.heads_kv = 16;
                p.head_dim_qk = dims[d][0]; p.head_dim_v = dims[d][1];
                st = config_enumerate(&sp, &dev, &p, fams[f], why, sizeof why);
                if (!runs) {
                    ok(st == FA4_ENOTSUP || (st == FA4_OK && sp.count == 0),
                       "%s: %s refuses d%d (%s)", arches[a], ops->name, dims[d][0], why);
                    config_space_free(&sp);
                    continue;
                }
                if (!ok(st == FA4_OK, "%s: %s enumerates d%d/%d", arches[a], ops->name, dims[d][0], dims[d][1])) {
                    diag("  %s", why);
                    continue;
                }
                for (i = 0; i < sp.count; i++) {
                    fa4_layout l2;
                    if (budget_fit(&l2, &dev, &p, &sp.configs[i], why, sizeof why) != FA4_OK ||
                        l2.smem_bytes > dev.smem_per_block_optin ||
                        (dev.tmem_columns && l2.tmem_columns > dev.tmem_columns) ||
                        l2.regs_estimate > 255)
                        bad++;
                }
                for (i = 0; i < sp.ndrops; i++)
                    total_dropped += sp.drops[i].count;
                ok(bad == 0 && sp.count + total_dropped == sp.considered,
                   "%s: %s d%d/%d: %d of %d configs fit, none over a budget, drops add up (%d)",
                   arches[a], ops->name, dims[d][0], dims[d][1], sp.count, sp.considered, total_dropped);
                st = config_default(&def, &dev, &p, fams[f], why, sizeof why);
                if (sp.count > 0)
                    ok(st == FA4_OK && budget_fit(&lay, &dev, &p, &def, why, sizeof why) == FA4_OK,
                       "%s: %s default for d%d fits", arches[a], ops->name, dims[d][0]);
                config_space_free(&sp);
            }
    }

    {
        fa4_config c = FA4_CONFIG_INIT, back;
        char text[256];
        c.family = FA4_FAMILY_SM90; c.bm = 128; c.bn = 176; c.stages = 2; c.swizzle = 128;
        c.consumer_wgs = 2; c.producer_regs = 24; c.consumer_regs = 240; c.pingpong = 1;
        c.rescale_threshold = 8; c.exp2_emu_pct = 25; c.scheduler = FA4_SCHED_LPT;
        fa4_config_format(&c, text, sizeof text);
        ok(config_parse(&back, text, why, sizeof why) == FA4_OK && config_equal(&c, &back),
           "config text round-trips: %s", text);
        c.scheduler = FA4_SCHED_DYNAMIC; c.swizzle = 32; c.fused_kv = 1;
        fa4_config_format(&c, text, sizeof text);
        ok(config_parse(&back, text, why, sizeof why) == FA4_OK && config_equal(&c, &back) &&
           strstr(text, "sched=dynamic") && strstr(text, "swizzle=32"),
           "config text round-trips: %s", text);
        c.late_k_release = 1;
        fa4_config_format(&c, text, sizeof text);
        ok(config_parse(&back, text, why, sizeof why) == FA4_OK && config_equal(&c, &back) &&
           strstr(text, " late_k=1"), "late_k round-trips: %s", text);
        ok(config_parse(&back, "sm90 bm=128 bn=128", why, sizeof why) == FA4_OK &&
           back.late_k_release == 0, "text stored before late_k existed reads as late_k=0");
        c.late_k_release = 2;
        ok(config_validate(&c, why, sizeof why) == FA4_EINVAL && strstr(why, "late_k_release=2"),
           "late_k_release=2 is refused: %s", why);
        c.late_k_release = 1; c.family = FA4_FAMILY_SM80;
        ok(config_validate(&c, why, sizeof why) == FA4_EINVAL && strstr(why, "sm90 option"),
           "late_k_release=1 outside sm90 is refused: %s", why);
        c.family = FA4_FAMILY_SM90;
        c.tanh_poly_pct = 75;
        fa4_config_format(&c, text, sizeof text);
        ok(config_parse(&back, text, why, sizeof why) == FA4_OK && config_equal(&c, &back) &&
           strstr(text, " tanh_poly=75"), "tanh_poly round-trips: %s", text);
        ok(config_parse(&back, "sm90 bm=128 bn=128 late_k=1", why, sizeof why) == FA4_OK &&
           back.tanh_poly_pct == -1, "text stored before tanh_poly existed reads as -1, the "
           "family's default share");
        back.tanh_poly_pct = -1;
        fa4_config_format(&back, text, sizeof text);
        ok(!strstr(text, "tanh_poly"), "tanh_poly=-1 is the text without the key: %s", text);
        c.tanh_poly_pct = 101;
        ok(config_validate(&c, why, sizeof why) == FA4_EINVAL && strstr(why, "tanh_poly_pct=101"),
           "tanh_poly_pct=101 is refused: %s", why);
        c.tanh_poly_pct = 50; c.late_k_release = 0; c.family = FA4_FAMILY_SM80;
        ok(config_validate(&c, why, sizeof why) == FA4_EINVAL && strstr(why, "sm90 option"),
           "tanh_poly_pct=50 outside sm90 is refused: %s", why);
        c.family = FA4_FAMILY_SM90; c.tanh_poly_pct = 0; c.late_k_release = 1;
        ok(config_parse(&back, "sm90 bm=128 frob=1", why, sizeof why) == FA4_EINVAL && strstr(why, "frob"),
           "config_parse names an unknown key (%s)", why);
        ok(config_parse(&back, "sm70 bm=1", why, sizeof why) == FA4_EINVAL && strstr(why, "sm70"),
           "config_parse names an unknown family (%s)", why);
        ok(config_parse(&back, "sm80 bm=-3", why, sizeof why) == FA4_EINVAL,
           "config_parse rejects a negative value");
    }
    check_sm100_opt_in();
    check_sm80_rows();
    check_late_k();
    check_pack_gqa();
    return done_testing();
}
