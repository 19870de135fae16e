/*
** plan.c -- fa4_plan_create: problem -> config (database or heuristic)
** -> budget -> compiled kernel (memory cache, database, NVRTC) -> loaded
** function.  The only slow step of the library.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan.h"
#include "config.h"
#include "family.h"
#include "jit.h"
#include "launch_sm90.h"
#include "launch_sm100.h"
#include "budget_sm100.h"
#include "problem.h"

/* One loaded kernel; lives as long as its context. */
struct plan_cache_entry {
    char key[17];
    CUmodule module;        /* NULL in a plan_only context */
    CUfunction fn;
    CUfunction fn_combine;  /* NULL when the module has no split merge */
    CUfunction fn_prepare;  /* NULL when the module has no V^T copy (fp8) */
    struct plan_cache_entry *next;
};

void plan_cache_free(fa4_context *ctx)
{
    struct plan_cache_entry *e = ctx->cache, *next;

    for (; e; e = next) {
        next = e->next;
        if (e->module)
            ctx->cu->cuModuleUnload(e->module);
        free(e);
    }
    ctx->cache = NULL;
}

/* The cached entry for KEY, or NULL.  Caller holds ctx->lock. */
static struct plan_cache_entry *cache_find(fa4_context *ctx, const char *key)
{
    struct plan_cache_entry *e;

    for (e = ctx->cache; e; e = e->next)
        if (!strcmp(e->key, key))
            return e;
    return NULL;
}

/* The heuristic's config of the best family that runs the problem here. */
static fa4_status choose_heuristic(fa4_plan *plan, fa4_context *ctx)
{
    const fa4_problem *p = &plan->problem;
    fa4_family fams[3];
    char why[512] = "", all[1200] = "";
    size_t len = 0;
    int i, n = config_families_for(fams, &ctx->limits, p);

    /* A family that cannot run here (sm100 without the opt-in: budget_fit
       says so) or whose kernel lacks the problem's kind gives way to the
       next.  Every family's reason is kept: the one that matters (fp8 on
       sm90, say) need not be the last tried. */
    for (i = 0; i < n; i++) {
        const family_ops *ops = family_lookup(fams[i]);
        if ((fams[i] == FA4_FAMILY_SM100 && launch_sm100_runs(p, why, sizeof why) != FA4_OK) ||
            config_default(&plan->config, &ctx->limits, p, fams[i], why, sizeof why) != FA4_OK ||
            budget_fit(&plan->layout, &ctx->limits, p, &plan->config, why, sizeof why) != FA4_OK) {
            if (len < sizeof all) {
                int m = snprintf(all + len, sizeof all - len, "%s%s: %s", len ? "; " : "",
                                 ops ? ops->name : "?", why);
                len += m > 0 ? (size_t)m : 0;
            }
            continue;
        }
        plan->source = FA4_SOURCE_HEURISTIC;
        return FA4_OK;
    }
    return error_set(ctx, FA4_ENOFIT, "no kernel family fits this problem on %s: %s", ctx->limits.name, all);
}

/* 1 when SOURCE is a database entry, which gives way to the heuristic
** when its config does not fit or compile. */
static int from_database(fa4_config_source source)
{
    return source != FA4_SOURCE_EXPLICIT && source != FA4_SOURCE_HEURISTIC;
}

/*
** PLAN's database config (FOUND: the lookup's text) cannot be used: it
** WHAT ("does not fit") for the reason WHY.  Take the heuristic's config
** instead, and say so in the context's warnings: the plan is no longer
** tuned, and re-tuning is the remedy.
*/
static fa4_status heuristic_instead(fa4_plan *plan, fa4_context *ctx, const char *found,
                                    const char *what, const char *why)
{
    char text[256];

    context_warn(ctx, "database config [%s] (%s) %s: %.400s; the plan uses the built-in default",
                 fa4_config_format(&plan->config, text, sizeof text), found, what, why);
    return choose_heuristic(plan, ctx);
}

/*
** Choose the config: explicit, then the database, then the heuristic of
** the best family that runs the problem on this device.  FOUND gets the
** lookup's text (which entry, or why none).
*/
static fa4_status choose_config(fa4_plan *plan, fa4_context *ctx, const fa4_plan_options *o,
                                char *found, size_t found_size)
{
    char why[512], text[256];
    const fa4_problem *p = &plan->problem;
    fa4_status st;

    snprintf(found, found_size, "no database");
    if (o->config) {
        if (o->config->struct_size < sizeof(size_t) || o->config->struct_size > sizeof plan->config)
            return error_set(ctx, FA4_EINVAL, "fa4_config.struct_size=%zu; use FA4_CONFIG_INIT",
                             o->config->struct_size);
        plan->config = (fa4_config)FA4_CONFIG_INIT;
        memcpy(&plan->config, o->config, o->config->struct_size);
        plan->config.struct_size = sizeof plan->config;
        plan->source = FA4_SOURCE_EXPLICIT;
        if ((st = budget_fit(&plan->layout, &ctx->limits, p, &plan->config, why, sizeof why)) != FA4_OK)
            return error_set(ctx, st, "config [%s]: %s",
                             fa4_config_format(&plan->config, text, sizeof text), why);
        return FA4_OK;
    }
    if (ctx->db) {
        /* The db handle locks itself; ctx->lock guards only the kernel cache,
           so a plan never waits on another process's database lock for it. */
        st = db_lookup(ctx->db, &plan->config, &plan->source, &ctx->limits, p, found, found_size);
        /* A stored config that no longer fits (another driver's limits, a
           stale entry's kernels since edited) gives way to the heuristic. */
        if (st == FA4_OK) {
            st = budget_fit(&plan->layout, &ctx->limits, p, &plan->config, why, sizeof why);
            if (st == FA4_OK)
                return FA4_OK;
            if (o->allow_heuristic)
                return heuristic_instead(plan, ctx, found, st == FA4_ENOTSUP
                                         ? "cannot run here" : "does not fit", why);
            return error_set(ctx, FA4_ENOTSUP, "no tuned config for this problem on %s that fits "
                             "(%s: %s) and allow_heuristic=0", ctx->limits.name, found, why);
        }
    }
    if (!o->allow_heuristic)
        return error_set(ctx, FA4_ENOTSUP, "no tuned config for this problem on %s (%s) and allow_heuristic=0",
                         ctx->limits.name, found);
    return choose_heuristic(plan, ctx);
}

/* Load CUBIN into a module and fill E; ctx current.  Rejects local memory. */
static fa4_status load_kernel(fa4_context *ctx, struct plan_cache_entry *e, const void *cubin,
                              const fa4_layout *layout)
{
    const cuda_api *cu = ctx->cu;
    CUresult res;
    int local = 0;
    char t[256];

    if ((res = cu->cuModuleLoadData(&e->module, cubin)) != CUDA_SUCCESS)
        return error_set(ctx, FA4_ECUDA, "cuModuleLoadData: %s", cuda_error_text(res, t, sizeof t));
    if ((res = cu->cuModuleGetFunction(&e->fn, e->module, JIT_KERNEL_NAME)) != CUDA_SUCCESS)
        return error_set(ctx, FA4_ECUDA, "cuModuleGetFunction(%s): %s", JIT_KERNEL_NAME,
                         cuda_error_text(res, t, sizeof t));
    /* Families with split-KV carry their merge step in the same module. */
    if (cu->cuModuleGetFunction(&e->fn_combine, e->module, JIT_COMBINE_NAME) != CUDA_SUCCESS)
        e->fn_combine = NULL;
    if (cu->cuModuleGetFunction(&e->fn_prepare, e->module, JIT_VT_NAME) != CUDA_SUCCESS)
        e->fn_prepare = NULL;
    cu->cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, e->fn);
    if (local > 0)
        return error_set(ctx, FA4_ECOMPILE, "kernel uses %d bytes of local memory (spills)", local);
    res = cu->cuFuncSetAttribute(e->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, layout->smem_bytes);
    if (res != CUDA_SUCCESS)
        return error_set(ctx, FA4_ECUDA, "dynamic shared memory %d B: %s", layout->smem_bytes,
                         cuda_error_text(res, t, sizeof t));
    return FA4_OK;
}

/* A cubin compiled by the caller, for the variant of key KEY. */
typedef struct given_cubin {
    const char *key;
    const void *cubin;
    size_t size;
} given_cubin;

/* Compile PLAN's variant into *CUBIN (malloc'd) and *SIZE. */
static fa4_status compile_kernel(fa4_plan *plan, fa4_context *ctx, void **cubin, size_t *size)
{
    jit_kernel jk = { 0 };
    char why[1024];
    fa4_status st;

    /* Compiling takes ~0.3-3 s: outside the lock, so threads compile in parallel. */
    st = jit_compile(&jk, ctx->limits.arch, &plan->problem, &plan->config, &plan->layout, why, sizeof why);
    if (st != FA4_OK) {
        jit_kernel_free(&jk);
        return error_set(ctx, st, "%s", why);
    }
    *cubin = jk.cubin;
    *size = jk.cubin_size;
    jk.cubin = NULL;
    jit_kernel_free(&jk);
    return FA4_OK;
}

/* Load CUBIN into E (no module in E on failure); ctx not current. */
static fa4_status load_entry(fa4_context *ctx, struct plan_cache_entry *e, const void *cubin,
                             const fa4_layout *layout)
{
    fa4_status st = context_push(ctx);

    if (st == FA4_OK) {
        st = load_kernel(ctx, e, cubin, layout);
        context_pop(ctx);
    }
    if (st != FA4_OK && e->module) {
        ctx->cu->cuModuleUnload(e->module);
        e->module = NULL;
    }
    return st;
}

/*
** Find or build the kernel of PLAN: the context's memory cache, then
** GIVEN when it is this variant's, then the database's binary cache, then
** NVRTC.  A binary goes into the database once it has loaded (or, planning
** without a GPU, once it compiled); a cached binary that does not load (a
** local-memory kernel an earlier library stored) is compiled afresh and
** replaced.
*/
static fa4_status get_kernel(fa4_plan *plan, fa4_context *ctx, const fa4_plan_options *o,
                             const given_cubin *given)
{
    struct plan_cache_entry *e = NULL, *raced;
    char key[17], why[1024];
    void *cubin = NULL, *owned = NULL;
    size_t size = 0;
    int from_db = 0, store = 0;
    fa4_status st;

    if (jit_key(key, ctx->limits.arch, &plan->problem, &plan->config, &plan->layout) != FA4_OK)
        return error_set(ctx, FA4_EINVAL, "cannot form the variant source for this config");
    pthread_mutex_lock(&ctx->lock);
    e = cache_find(ctx, key);
    pthread_mutex_unlock(&ctx->lock);
    if (e) {
        plan->fn = e->fn;
        plan->fn_combine = e->fn_combine;
        plan->fn_prepare = e->fn_prepare;
        return FA4_OK;
    }
    if (given && given->cubin && !strcmp(given->key, key)) {
        cubin = (void *)given->cubin;
        size = given->size;
    } else if (ctx->db && !o->no_binary_cache) {
        st = db_binary_get(ctx->db, &owned, &size, key, why, sizeof why);
        cubin = st == FA4_OK ? owned : NULL;
        from_db = cubin != NULL;
    }
    if (!cubin) {
        if ((st = compile_kernel(plan, ctx, &owned, &size)) != FA4_OK)
            return st;
        cubin = owned;
        store = ctx->db != NULL;
    }
    if (!(e = calloc(1, sizeof *e))) {
        free(owned);
        return error_set(ctx, FA4_ENOMEM, "out of memory");
    }
    memcpy(e->key, key, sizeof key);
    st = FA4_OK;
    if (!ctx->plan_only) {
        st = load_entry(ctx, e, cubin, &plan->layout);
        if (st == FA4_ECOMPILE && from_db) {
            free(owned);
            owned = NULL;
            if ((st = compile_kernel(plan, ctx, &owned, &size)) == FA4_OK) {
                cubin = owned;
                store = 1;
                st = load_entry(ctx, e, cubin, &plan->layout);
            }
        }
    }
    if (st == FA4_OK && store)
        db_binary_put(ctx->db, key, ctx->limits.arch, cubin, size, why, sizeof why);
    free(owned);
    if (st != FA4_OK) {
        free(e);
        return st;
    }
    pthread_mutex_lock(&ctx->lock);
    if ((raced = cache_find(ctx, key))) {
        /* Another thread loaded the same variant meanwhile: keep one. */
        if (e->module)
            ctx->cu->cuModuleUnload(e->module);
        free(e);
        e = raced;
    } else {
        e->next = ctx->cache;
        ctx->cache = e;
    }
    pthread_mutex_unlock(&ctx->lock);
    plan->fn = e->fn;
    plan->fn_combine = e->fn_combine;
    plan->fn_prepare = e->fn_prepare;
    return FA4_OK;
}

/*
** The workspace of PLAN's launches: the dynamic scheduler's tile counter
** (from the context's pool: a destroyed plan's queued launches may still
** use it), or the split-KV buffers, which the plan allocates once so that
** fa4_forward never allocates (CUDA-graph capture).
*/
static fa4_status plan_workspace(fa4_plan *plan, fa4_context *ctx)
{
    CUdeviceptr ptr;
    CUresult res;
    char t[256];
    fa4_status st;

    /* The tail split's records and fp8's V^T are the sm90 family's (sm100
       reads V as stored) */
    const size_t ws90 = plan->config.family == FA4_FAMILY_SM90
                        ? launch_sm90_workspace(&plan->problem, &plan->config,
                                                ctx->limits.sm_count) : 0;

    if (plan->config.scheduler == FA4_SCHED_DYNAMIC && !ws90) {
        plan->workspace_bytes = CONTEXT_COUNTER_BYTES;
        return plan->fn ? context_counter_alloc(ctx, &plan->workspace) : FA4_OK;
    }
    /* split-KV partials: the sm80 family and the sm100 decode mode */
    const int splits = plan->config.family == FA4_FAMILY_SM80 || sm100_is_decode(&plan->config);

    if (splits)
        plan->workspace_bytes = launch_split_workspace(plan);
    if (ws90)  /* the counter (used or not), the records, V^T (launch_sm90.h) */
        plan->workspace_bytes = ws90;
    if (!plan->workspace_bytes || !plan->fn)
        return FA4_OK;
    if ((splits || plan->config.splits == 0) && !plan->fn_combine)
        return error_set(ctx, FA4_ECOMPILE, "the kernel module has no %s", JIT_COMBINE_NAME);
    if ((st = context_push(ctx)) != FA4_OK)
        return st;
    res = ctx->cu->cuMemAlloc(&ptr, plan->workspace_bytes);
    if (res == CUDA_SUCCESS &&
        (res = ctx->cu->cuMemsetD8(ptr, 0, CONTEXT_COUNTER_BYTES)) != CUDA_SUCCESS)
        ctx->cu->cuMemFree(ptr); /* (a zero counter: fp8 with the dynamic scheduler) */
    context_pop(ctx);
    if (res != CUDA_SUCCESS)
        return error_set(ctx, FA4_ENOMEM, "workspace of %zu bytes: %s",
                         plan->workspace_bytes, cuda_error_text(res, t, sizeof t));
    plan->workspace = (unsigned long long)ptr;
    plan->owns_workspace = 1;
    return FA4_OK;
}

/* fa4_plan_create(), with the kernel GIVEN (NULL: none). */
static fa4_status plan_create(fa4_plan **out, fa4_context *ctx, const fa4_problem *problem,
                              const fa4_plan_options *user_opts, const given_cubin *given)
{
    fa4_plan_options o = FA4_PLAN_OPTIONS_INIT;
    fa4_plan *plan = NULL;
    char why[512], found[512];
    fa4_status st;

    if (out)
        *out = NULL;
    if (!out || !ctx)
        return error_set(ctx, FA4_EINVAL, "%s is NULL", out ? "ctx" : "out");
    if (user_opts) {
        if (user_opts->struct_size < sizeof(size_t) || user_opts->struct_size > sizeof o)
            return error_set(ctx, FA4_EINVAL, "fa4_plan_options.struct_size=%zu; use FA4_PLAN_OPTIONS_INIT",
                             user_opts->struct_size);
        memcpy(&o, user_opts, user_opts->struct_size);
    }
    if (!(plan = calloc(1, sizeof *plan)))
        return error_set(ctx, FA4_ENOMEM, "out of memory for the plan");
    plan->ctx = ctx;
    if ((st = problem_resolve(&plan->problem, problem, why, sizeof why)) != FA4_OK) {
        error_set(ctx, st, "%s", why);
        goto done;
    }
    {
        /* Strides the caller left 0 follow each call's sizes (launch.c). */
        const int64_t *given[4] = { problem->q_strides, problem->k_strides,
                                    problem->v_strides, problem->o_strides };
        int i;
        for (i = 0; i < 4; i++)
            plan->default_strides[i] = !given[i][0] && !given[i][1] && !given[i][2];
    }
    if ((st = choose_config(plan, ctx, &o, found, sizeof found)) != FA4_OK)
        goto done;
    st = get_kernel(plan, ctx, &o, given);
    /* A database config that does not compile (or spills) gives way to the
       heuristic as one that does not fit does. */
    if (st == FA4_ECOMPILE && from_database(plan->source) && o.allow_heuristic) {
        char err[FA4_ERRMSG_MAX];

        snprintf(err, sizeof err, "%s", fa4_context_errmsg(ctx));
        if ((st = heuristic_instead(plan, ctx, found, "does not compile", err)) == FA4_OK)
            st = get_kernel(plan, ctx, &o, given);
    }
    /* The defaults are checked spill-free with this build's NVRTC; another
       may allocate registers differently.  A default that spills there is
       retried once with half its key block, in whole 16-key steps (fewer
       score registers). */
    if (st == FA4_ECOMPILE && plan->source == FA4_SOURCE_HEURISTIC && plan->config.bn >= 64) {
        char err[FA4_ERRMSG_MAX], text[256];
        fa4_config half = plan->config;

        snprintf(err, sizeof err, "%s", fa4_context_errmsg(ctx));
        half.bn = plan->config.bn / 2 / 16 * 16;
        if (budget_fit(&plan->layout, &ctx->limits, &plan->problem, &half, why, sizeof why) == FA4_OK) {
            context_warn(ctx, "default config [%s] does not compile here (%.300s); the plan "
                         "uses bn=%d", fa4_config_format(&plan->config, text, sizeof text), err,
                         half.bn);
            plan->config = half;
            st = get_kernel(plan, ctx, &o, given);
        }
    }
    if (st != FA4_OK)
        goto done;
    if ((st = plan_workspace(plan, ctx)) != FA4_OK)
        goto done;
    *out = plan;
    plan = NULL;
done:
    fa4_plan_destroy(plan);
    return st;
}

fa4_status fa4_plan_create(fa4_plan **out, fa4_context *ctx, const fa4_problem *problem,
                           const fa4_plan_options *user_opts)
{
    return plan_create(out, ctx, problem, user_opts, NULL);
}

fa4_status plan_create_cubin(fa4_plan **out, fa4_context *ctx, const fa4_problem *problem,
                             const fa4_plan_options *opts, const char *key,
                             const void *cubin, size_t size)
{
    given_cubin g;

    g.key = key;
    g.cubin = cubin;
    g.size = size;
    return plan_create(out, ctx, problem, opts, key && cubin ? &g : NULL);
}

void fa4_plan_destroy(fa4_plan *plan)
{
    if (!plan)
        return;
    if (plan->owns_workspace && context_push(plan->ctx) == FA4_OK) {
        /* cuMemFree waits for queued work that may still use the buffer. */
        plan->ctx->cu->cuMemFree((CUdeviceptr)plan->workspace);
        context_pop(plan->ctx);
    }
    free(plan);   /* the kernel stays in the context's cache */
}

fa4_status fa4_plan_workspace_size(const fa4_plan *plan, size_t *bytes)
{
    if (!plan || !bytes)
        return FA4_EINVAL;
    *bytes = plan->workspace_bytes;
    return FA4_OK;
}

fa4_status fa4_plan_config(const fa4_plan *plan, fa4_config *config, fa4_config_source *source)
{
    if (!plan)
        return FA4_EINVAL;
    if (config) {
        /* An older caller's smaller struct gets only the fields it knows. */
        size_t n = config->struct_size >= sizeof(size_t) && config->struct_size < sizeof *config
                   ? config->struct_size : sizeof *config;
        memcpy(config, &plan->config, n);
        config->struct_size = n;
    }
    if (source)
        *source = plan->source;
    return FA4_OK;
}
