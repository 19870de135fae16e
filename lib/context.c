/*
** context.c -- fa4_context: the device, its primary CUDA context, its
** limits, the config databases and the in-memory kernel cache.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "context.h"
#include "plan.h"

/* Open the databases; a failure to open is a warning, never fatal. */
static void open_databases(fa4_context *ctx, const fa4_context_options *opts)
{
    char path[4096], syspath[4096], warn[512] = "", why[512] = "", why2[512] = "";
    const char *user = opts ? opts->db_path : NULL;
    /* The one rule fa4-tune follows too (db.h): option, $FA4_SYSTEM_DB
       ("" = none), the installed fa4-system.db. */
    const char *sys = db_system_db_path(syspath, sizeof syspath,
                                        opts ? opts->system_db_path : NULL);

    if (!user)
        user = db_default_path(path, sizeof path);
    if (db_open(&ctx->db, user, sys, 0, warn, sizeof warn, why, sizeof why) == FA4_OK) {
        if (warn[0])
            snprintf(ctx->warnings, sizeof ctx->warnings, "%s\n", warn);
        return;
    }
    /* A bad system database must not cost the user's own: retry without it. */
    ctx->db = NULL;
    if (db_open(&ctx->db, user, NULL, 0, warn, sizeof warn, why2, sizeof why2) == FA4_OK) {
        snprintf(ctx->warnings, sizeof ctx->warnings, "system database not used: %s\n%s%s", why, warn,
                 warn[0] ? "\n" : "");
        return;
    }
    ctx->db = NULL;
    snprintf(ctx->warnings, sizeof ctx->warnings, "config database not used: %s\n", why2);
}

fa4_status context_options_read(fa4_context_options *out, const fa4_context_options *user,
                                char *why, size_t why_size)
{
    const fa4_context_options init = FA4_CONTEXT_OPTIONS_INIT;

    *out = init;
    if (user) {
        size_t n = user->struct_size;
        if (n < sizeof(size_t) || n > sizeof *out) {
            snprintf(why, why_size, "fa4_context_options.struct_size=%zu; use "
                     "FA4_CONTEXT_OPTIONS_INIT", n);
            return FA4_EINVAL;
        }
        memcpy(out, user, n);   /* fields past an old caller's size keep their defaults */
    }
    return FA4_OK;
}

int context_sm100_opt_in(const fa4_context_options *opts)
{
    return opts->enable_sm100 || device_sm100_opt_in_env();
}

fa4_status fa4_context_create(fa4_context **out, int device,
                              const fa4_context_options *user_opts)
{
    fa4_context_options opts;
    fa4_context *ctx = NULL;
    char why[512];
    fa4_status st;
    CUresult res;

    if (!out)
        return error_set(NULL, FA4_EINVAL, "out is NULL");
    *out = NULL;
    if ((st = context_options_read(&opts, user_opts, why, sizeof why)) != FA4_OK)
        return error_set(NULL, st, "%s", why);
    if (!(ctx = calloc(1, sizeof *ctx)))
        return error_set(NULL, FA4_ENOMEM, "out of memory for the context");
    ctx->device = device;
    ctx->plan_only = opts.plan_only;
    ctx->check_inputs = opts.struct_size >= offsetof(fa4_context_options, check_inputs) + sizeof(int)
                        && opts.check_inputs;
    pthread_mutex_init(&ctx->lock, NULL);
    if (pthread_key_create(&ctx->errkey, error_thread_exit) != 0) {
        pthread_mutex_destroy(&ctx->lock);
        free(ctx);
        return error_set(NULL, FA4_ENOMEM, "no thread-specific key left");
    }

    if (opts.plan_only) {
        st = device_limits_for_arch(&ctx->limits, opts.arch, why, sizeof why);
        if (st != FA4_OK) {
            error_set(NULL, st, "plan_only: %s", why);
            goto fail;
        }
        ctx->device = -1;
    } else {
        if ((st = cuda_load(&ctx->cu, why, sizeof why)) != FA4_OK) {
            error_set(NULL, st, "%s", why);
            goto fail;
        }
        if ((st = device_limits_query(&ctx->limits, ctx->cu, device, why, sizeof why)) != FA4_OK) {
            error_set(NULL, st, "%s", why);
            goto fail;
        }
        ctx->cu->cuDeviceGet(&ctx->cudev, device);
        if ((res = ctx->cu->cuDevicePrimaryCtxRetain(&ctx->cuctx, ctx->cudev)) != CUDA_SUCCESS) {
            char t[256];
            st = error_set(NULL, FA4_ECUDA, "cuDevicePrimaryCtxRetain(%d): %s",
                           device, cuda_error_text(res, t, sizeof t));
            ctx->cuctx = NULL;
            goto fail;
        }
        ctx->limits.sm100_opt_in = context_sm100_opt_in(&opts);
    }
    if (!opts.no_database)
        open_databases(ctx, &opts);
    /* After the database's lines: a B200 without the opt-in runs sm80. */
    if (config_sm100_note(why, sizeof why, &ctx->limits))
        context_warn(ctx, "%s", why);
    *out = ctx;
    return FA4_OK;

fail:
    fa4_context_destroy(ctx);
    return st;
}

/* A chunk of device counters (context_counter_alloc). */
#define COUNTER_CHUNK_BYTES 4096
struct counter_chunk {
    struct counter_chunk *next;
    CUdeviceptr base;
    int used;                   /* counters handed out */
};

fa4_status context_counter_alloc(fa4_context *ctx, unsigned long long *addr)
{
    struct counter_chunk *c;
    fa4_status st = FA4_OK;
    CUresult res;
    char t[256];

    pthread_mutex_lock(&ctx->lock);
    c = ctx->counters;
    if (!c || c->used == COUNTER_CHUNK_BYTES / CONTEXT_COUNTER_BYTES) {
        if (!(c = calloc(1, sizeof *c))) {
            st = error_set(ctx, FA4_ENOMEM, "out of memory");
            goto done;
        }
        if ((st = context_push(ctx)) != FA4_OK) {
            free(c);
            goto done;
        }
        res = ctx->cu->cuMemAlloc(&c->base, COUNTER_CHUNK_BYTES);
        if (res == CUDA_SUCCESS)
            res = ctx->cu->cuMemsetD8(c->base, 0, COUNTER_CHUNK_BYTES);
        context_pop(ctx);
        if (res != CUDA_SUCCESS) {
            if (c->base)
                ctx->cu->cuMemFree(c->base);
            free(c);
            st = error_set(ctx, FA4_ECUDA, "allocating the dynamic scheduler's tile counters: %s",
                           cuda_error_text(res, t, sizeof t));
            goto done;
        }
        c->next = ctx->counters;
        ctx->counters = c;
    }
    *addr = (unsigned long long)c->base + (unsigned long long)(c->used++ * CONTEXT_COUNTER_BYTES);
done:
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

/* Free the counter chunks (a plan_only context has none). */
static void counters_free(fa4_context *ctx)
{
    struct counter_chunk *c, *next;
    const int pushed = ctx->counters && context_push(ctx) == FA4_OK;

    for (c = ctx->counters; c; c = next) {
        next = c->next;
        if (pushed)
            ctx->cu->cuMemFree(c->base);
        free(c);
    }
    if (pushed)
        context_pop(ctx);
    ctx->counters = NULL;
}

void fa4_context_destroy(fa4_context *ctx)
{
    if (!ctx)
        return;
    counters_free(ctx);
    plan_cache_free(ctx);
    db_close(ctx->db);
    if (ctx->cuctx)
        ctx->cu->cuDevicePrimaryCtxRelease(ctx->cudev);
    error_context_free(ctx);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

db *context_db(const fa4_context *ctx)
{
    return ctx ? ctx->db : NULL;
}

const char *fa4_context_warnings(const fa4_context *ctx)
{
    return ctx ? ctx->warnings : "";
}

void context_warn(fa4_context *ctx, const char *fmt, ...)
{
    char line[1024], *c;
    size_t n, len;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (c = line; *c; c++)     /* one line each, a compiler log included */
        if (*c == '\n')
            *c = ' ';
    len = strlen(line);
    pthread_mutex_lock(&ctx->lock);
    n = strlen(ctx->warnings);
    /* Written in place, never terminated anew: the byte after the new
       newline is still the zero a reader meanwhile stops at. */
    if (n + len + 1 < sizeof ctx->warnings && !strstr(ctx->warnings, line)) {
        memcpy(ctx->warnings + n, line, len);
        ctx->warnings[n + len] = '\n';
    }
    pthread_mutex_unlock(&ctx->lock);
}

fa4_status context_push(fa4_context *ctx)
{
    CUresult res;
    char t[256];

    if (!ctx->cu)
        return error_set(ctx, FA4_ENOTSUP,
                         "context was created plan_only for %s: nothing can run", ctx->limits.arch);
    if ((res = ctx->cu->cuCtxPushCurrent(ctx->cuctx)) != CUDA_SUCCESS)
        return error_set(ctx, FA4_ECUDA, "cuCtxPushCurrent: %s",
                         cuda_error_text(res, t, sizeof t));
    return FA4_OK;
}

void context_pop(fa4_context *ctx)
{
    CUcontext dummy;
    if (ctx->cu)
        ctx->cu->cuCtxPopCurrent(&dummy);
}
