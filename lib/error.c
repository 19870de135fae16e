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
    case FA4_SOURCE_STALE:        return "stale";
    }
    return "unknown";
}

/* Thread-local text for failures that have no context (context_create). */
static _Thread_local char create_error[FA4_ERRMSG_MAX];

const char *fa4_context_last_error(void)
{
    return create_error;
}

/*
** Per-thread error buffers.  Each is registered in one process-wide list,
** so that fa4_context_destroy() can free the buffers of every thread that
** used the context -- pthread_key_delete() runs no destructor, and a
** thread that outlives the context would leak its buffer -- and so that a
** thread exiting while the context is destroyed frees its buffer exactly
** once: the exit destructor frees only a buffer still in the list.
*/
typedef struct errbuf {
    struct errbuf *next;
    const fa4_context *ctx;
    pthread_t thread;
    char text[FA4_ERRMSG_MAX];
} errbuf;

static pthread_mutex_t errbuf_lock = PTHREAD_MUTEX_INITIALIZER;
static errbuf *errbufs;

/* Unlink B from the list; 1 when it was there.  Holds errbuf_lock. */
static int errbuf_unlink(errbuf *b)
{
    errbuf **pp;

    for (pp = &errbufs; *pp; pp = &(*pp)->next)
        if (*pp == b) {
            *pp = b->next;
            return 1;
        }
    return 0;
}

void error_thread_exit(void *p)
{
    errbuf *b = p;
    int mine;

    pthread_mutex_lock(&errbuf_lock);
    mine = errbuf_unlink(b) && pthread_equal(b->thread, pthread_self());
    pthread_mutex_unlock(&errbuf_lock);
    if (mine)
        free(b);
}

void error_context_free(fa4_context *ctx)
{
    errbuf **pp, *b;

    pthread_mutex_lock(&errbuf_lock);
    pthread_key_delete(ctx->errkey);    /* no destructor runs after this */
    for (pp = &errbufs; (b = *pp);) {
        if (b->ctx == ctx) {
            *pp = b->next;
            free(b);
        } else {
            pp = &b->next;
        }
    }
    pthread_mutex_unlock(&errbuf_lock);
}

long error_buffers_live(void)
{
    long n = 0;
    errbuf *b;

    pthread_mutex_lock(&errbuf_lock);
    for (b = errbufs; b; b = b->next)
        n++;
    pthread_mutex_unlock(&errbuf_lock);
    return n;
}

/* The calling thread's error text on CTX, allocated on first use. */
static char *thread_buffer(const fa4_context *ctx)
{
    errbuf *b;

    if (!ctx)
        return create_error;
    b = pthread_getspecific(ctx->errkey);
    if (!b) {
        if (!(b = calloc(1, sizeof *b)))
            return NULL;
        b->ctx = ctx;
        b->thread = pthread_self();
        pthread_mutex_lock(&errbuf_lock);
        b->next = errbufs;
        errbufs = b;
        pthread_mutex_unlock(&errbuf_lock);
        if (pthread_setspecific(ctx->errkey, b) != 0) {
            pthread_mutex_lock(&errbuf_lock);
            errbuf_unlink(b);
            pthread_mutex_unlock(&errbuf_lock);
            free(b);
            return NULL;
        }
    }
    return b->text;
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
    const errbuf *b;

    if (!ctx)
        return create_error;
    b = pthread_getspecific(ctx->errkey);
    return b ? b->text : "";
}
