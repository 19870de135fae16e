/*
** test_config.c -- the budget front and the enumerator: every emitted
** config fits its budgets, defaults fit, the text form round-trips, and
** families refuse devices they cannot run on (sm100 on a B200 without the
** opt-in among them).
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
        ok(config_parse(&back, "sm90 bm=128 frob=1", why, sizeof why) == FA4_EINVAL && strstr(why, "frob"),
           "config_parse names an unknown key (%s)", why);
        ok(config_parse(&back, "sm70 bm=1", why, sizeof why) == FA4_EINVAL && strstr(why, "sm70"),
           "config_parse names an unknown family (%s)", why);
        ok(config_parse(&back, "sm80 bm=-3", why, sizeof why) == FA4_EINVAL,
           "config_parse rejects a negative value");
    }
    check_sm100_opt_in();
    return done_testing();
}
