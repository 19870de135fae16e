/*
** test_api.c -- the public API without a GPU: version, status strings,
** the sm100 opt-in (option and environment), context creation without a
** driver, plan_only contexts that compile for a named arch, and argument
** errors.
*/
#include <stdlib.h>
#include "tap.h"
#include "fa4.h"
#include "context.h"
#include "jit.h"

/* fa4_context_options.enable_sm100 and $FA4_ENABLE_SM100: what
** fa4_context_create() sets a real device's sm100_opt_in from. */
static void check_sm100_option(void)
{
    fa4_context_options o = FA4_CONTEXT_OPTIONS_INIT, got;
    fa4_context_options old = FA4_CONTEXT_OPTIONS_INIT;
    char why[256];

    unsetenv("FA4_ENABLE_SM100");
    ok(o.enable_sm100 == 0 && o.struct_size == sizeof o,
       "FA4_CONTEXT_OPTIONS_INIT leaves enable_sm100 0");
    ok(context_options_read(&got, NULL, why, sizeof why) == FA4_OK &&
       !context_sm100_opt_in(&got), "no options, no environment: the sm100 family is off");
    o.enable_sm100 = 1;
    ok(context_options_read(&got, &o, why, sizeof why) == FA4_OK && context_sm100_opt_in(&got),
       "enable_sm100 = 1 opts in");
    /* A caller built before the field: its struct ended after check_inputs,
       padded to the struct's alignment, and that padding may hold anything. */
    old.struct_size = (offsetof(fa4_context_options, check_inputs) + sizeof(int) +
                       _Alignof(fa4_context_options) - 1) /
                      _Alignof(fa4_context_options) * _Alignof(fa4_context_options);
    old.reserved = 7;
    old.enable_sm100 = 7;
    ok(context_options_read(&got, &old, why, sizeof why) == FA4_OK && got.enable_sm100 == 0 &&
       !context_sm100_opt_in(&got),
       "an older caller's options (struct_size %zu, padding set) never read enable_sm100",
       old.struct_size);
    setenv("FA4_ENABLE_SM100", "1", 1);
    ok(context_sm100_opt_in(&got) && device_sm100_opt_in_env(),
       "FA4_ENABLE_SM100=1 opts in without the option");
    setenv("FA4_ENABLE_SM100", "0", 1);
    ok(!context_sm100_opt_in(&got), "FA4_ENABLE_SM100=0 does not");
    setenv("FA4_ENABLE_SM100", "yes", 1);
    ok(!context_sm100_opt_in(&got), "FA4_ENABLE_SM100=yes does not (only \"1\")");
    unsetenv("FA4_ENABLE_SM100");
    old.struct_size = sizeof old + 8;
    ok(context_options_read(&got, &old, why, sizeof why) == FA4_EINVAL &&
       strstr(why, "struct_size="), "an unknown struct_size is refused (%s)", why);
}

int main(void)
{
    fa4_context *ctx = (fa4_context *)1;
    fa4_context_options o = FA4_CONTEXT_OPTIONS_INIT;
    fa4_problem p = FA4_PROBLEM_INIT;
    fa4_plan *plan = (fa4_plan *)1;
    fa4_config cfg = FA4_CONFIG_INIT;
    fa4_config_source src = 0;
    fa4_tensors t = FA4_TENSORS_INIT;
    fa4_status st;
    char buf[256];
    long before;

    plan_lazy();
    ok(!strcmp(fa4_version(), FA4_VERSION_STRING), "fa4_version matches the header (%s)", fa4_version());
    check_sm100_option();
    ok(!strcmp(fa4_status_string(FA4_EINVAL), "invalid argument"), "status string of FA4_EINVAL");
    ok(!strcmp(fa4_status_string((fa4_status)99), "unknown status"), "status string of an unknown code");
    ok(!strcmp(fa4_config_source_string(FA4_SOURCE_USER_EXACT), "exact"), "source string of user exact is \"exact\"");
    ok(!strcmp(fa4_config_source_string(FA4_SOURCE_STALE), "stale"), "source string of a stale entry is \"stale\"");

    ok(strlen(jit_source_hash(FA4_FAMILY_SM80)) == 16 &&
       strcmp(jit_source_hash(FA4_FAMILY_SM80), jit_source_hash(FA4_FAMILY_SM90)) != 0 &&
       strcmp(jit_source_hash(FA4_FAMILY_SM90), jit_source_hash(FA4_FAMILY_SM100)) != 0,
       "each family's source hash covers its own include closure (%s %s %s)",
       jit_source_hash(FA4_FAMILY_SM80), jit_source_hash(FA4_FAMILY_SM90), jit_source_hash(FA4_FAMILY_SM100));

    /* A machine without a driver: point the loader at a missing library. */
    setenv("FA4_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    st = fa4_context_create(&ctx, 0, NULL);
    ok(st == FA4_ENODEV && ctx == NULL, "context_create without a driver returns FA4_ENODEV and NULL");
    has_str(fa4_context_last_error(), "no CUDA driver", "the detail says there is no CUDA driver");
    unsetenv("FA4_CUDA_DRIVER");

    o.plan_only = 1;
    o.arch = "sm_42";
    o.no_database = 1;
    st = fa4_context_create(&ctx, 0, &o);
    ok(st == FA4_EINVAL, "plan_only context rejects an unknown arch");
    has_str(fa4_context_last_error(), "sm_42", "the detail names the arch");

    o.arch = "sm_90a";
    st = fa4_context_create(&ctx, 0, &o);
    if (!ok(st == FA4_OK, "plan_only context for sm_90a needs no GPU"))
        return done_testing();

    st = fa4_plan_create(&plan, ctx, &p, NULL);
    ok(st == FA4_EINVAL && plan == NULL, "plan_create rejects a problem with batch 0 and leaves NULL");
    has_str(fa4_context_errmsg(ctx), "batch=0", "the context's errmsg names the field");

    p.batch = 1; p.seqlen_q = 100; p.seqlen_k = 100; p.heads_q = 2; p.heads_kv = 2; p.head_dim_qk = 72;
    st = fa4_plan_create(&plan, ctx, &p, NULL);
    ok(st == FA4_EINVAL, "plan_create rejects head_dim 72");
    has_str(fa4_context_errmsg(ctx), "head_dim_qk=72; supported: 64 96 128 192 256", "errmsg lists the supported head dims");

    p.head_dim_qk = 128;
    cfg.family = FA4_FAMILY_SM80; cfg.bm = 128; cfg.bn = 64; cfg.stages = 2; cfg.swizzle = 128; cfg.warps = 8;
    cfg.bn = 4096;
    {
        fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
        po.config = &cfg;
        st = fa4_plan_create(&plan, ctx, &p, &po);
        ok(st == FA4_ENOFIT || st == FA4_EINVAL, "an explicit config with bn=4096 is refused (%s)", fa4_status_string(st));
        has_str(fa4_context_errmsg(ctx), "bn=4096", "the detail shows the config");
    }

    before = jit_compile_count();
    st = fa4_plan_create(&plan, ctx, &p, NULL);
    if (ok(st == FA4_OK, "plan_create compiles the heuristic sm_90a variant without a GPU (%s)",
           st ? fa4_context_errmsg(ctx) : "ok")) {
        ok(jit_compile_count() == before + 1, "one NVRTC compile");
        fa4_plan_config(plan, &cfg, &src);
        ok(src == FA4_SOURCE_HEURISTIC, "the config came from the heuristic");
        {
            size_t ws = 99;
            ok(fa4_plan_workspace_size(plan, &ws) == FA4_OK &&
               ws == (cfg.scheduler == FA4_SCHED_DYNAMIC ? 16u : 0u),
               "workspace size %zu for sched=%d", ws, (int)cfg.scheduler);
            ok(fa4_plan_workspace_size(NULL, &ws) == FA4_EINVAL &&
               fa4_plan_workspace_size(plan, NULL) == FA4_EINVAL,
               "fa4_plan_workspace_size rejects NULL arguments");
        }
        diag("config: %s", fa4_config_format(&cfg, buf, sizeof buf));
        t.q = t.k = t.v = t.o = (void *)(uintptr_t)0x10000;
        st = fa4_forward(plan, &t, NULL);
        ok(st == FA4_ENOTSUP, "forward on a plan_only plan is FA4_ENOTSUP");
        has_str(fa4_context_errmsg(ctx), "plan_only", "the detail says why");
        fa4_plan_destroy(plan);
        st = fa4_plan_create(&plan, ctx, &p, NULL);
        ok(st == FA4_OK && jit_compile_count() == before + 1, "a second plan for the same variant compiles nothing");
        fa4_plan_destroy(plan);
    }
    fa4_plan_destroy(NULL);
    fa4_context_destroy(ctx);
    fa4_context_destroy(NULL);
    ok(fa4_forward(NULL, &t, NULL) == FA4_EINVAL, "forward on a NULL plan is FA4_EINVAL");
    return done_testing();
}
