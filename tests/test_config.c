/*
** test_config.c -- the budget front and the enumerator: every emitted
** config fits its budgets, defaults fit, the text form round-trips, and
** families refuse devices they cannot run on.
*/
#include "tap.h"
#include "config.h"
#include "family.h"

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
    return done_testing();
}
