/*
** error.c -- status strings, per-context per-thread error text, version.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "context.h"

const char *fa4_version(void)
{
    return FA4_VERSION_STRING;
}

const char *fa4_status_string(fa4_status status)
{
    switch (status) {
    case FA4_OK:       return "success";
    case FA4_EINVAL:   return "invalid argument";
    case FA4_ENOMEM:   return "out of memory";
    case FA4_ENODEV:   return "no CUDA driver or device";
    case FA4_ENOTSUP:  return "not supported";
    case FA4_ECOMPILE: return "kernel compilation failed";
    case FA4_EDB:      return "config database error";
    case FA4_ECUDA:    return "CUDA driver call failed";
    case FA4_ENOFIT:   return "config does not fit the device";
    }
    return "unknown status";
}

const char *fa4_config_source_string(fa4_config_source source)
{
    switch (source) {
    case FA4_SOURCE_USER_EXACT:   return "exact";
    case FA4_SOURCE_SYSTEM_EXACT: return "system-exact";
    case FA4_SOURCE_NEAREST:      return "nearest";
    case FA4_SOURCE_SAME_ARCH:    return "same-arch";
    case FA4_SOURCE_HEURISTIC:    return "heuristic";
    case FA4_SOURCE_EXPLICIT:     return "explicit";
    }
    return "unknown";
}

/* Thread-local text for failures that have no context (context_create). */
static _Thread_local char create_error[FA4_ERRMSG_MAX];

const char *fa4_context_last_error(void)
{
    return create_error;
}

/* The calling thread's error buffer on CTX, allocated on first use. */
static char *thread_buffer(const fa4_context *ctx)
{
    char *buf;

    if (!ctx)
        return create_error;
    buf = pthread_getspecific(ctx->errkey);
    if (!buf) {
        buf = calloc(1, FA4_ERRMSG_MAX);
        if (!buf || pthread_setspecific(ctx->errkey, buf) != 0) {
            free(buf);
            return NULL;
        }
    }
    return buf;
}

fa4_status error_set(const fa4_context *ctx, fa4_status status,
                     const char *fmt, ...)
{
    char *buf = thread_buffer(ctx);
    va_list ap;

    if (buf) {
        va_start(ap, fmt);
        vsnprintf(buf, FA4_ERRMSG_MAX, fmt, ap);
        va_end(ap);
    }
    return status;
}

const char *fa4_context_errmsg(const fa4_context *ctx)
{
    const char *buf;

    if (!ctx)
        return create_error;
    buf = pthread_getspecific(ctx->errkey);
    return buf ? buf : "";
}
