/*
** context.h -- the inside of fa4_context, and error recording.
*/
#ifndef FA4_CONTEXT_H
#define FA4_CONTEXT_H

#include <pthread.h>
#include "fa4.h"
#include "device.h"
#include "db.h"

#define FA4_ERRMSG_MAX 1024

struct fa4_context {
    int device;                 /* ordinal, -1 when plan_only */
    int plan_only;
    int check_inputs;           /* check index arrays before launches */
    const cuda_api *cu;         /* NULL when plan_only */
    CUdevice cudev;
    CUcontext cuctx;            /* the device's primary context */
    device_limits limits;
    db *db;                     /* NULL with no_database */
    pthread_mutex_t lock;       /* guards cache, counters and warnings; never
                                   held across database I/O (db locks itself) */
    struct plan_cache_entry *cache;  /* in-memory compiled kernels */
    struct counter_chunk *counters;  /* device counters of dynamic-scheduler plans */
    pthread_key_t errkey;       /* per-thread error text */
    char warnings[4096];        /* fa4_context_warnings(); only grows */
};

/*
** Record the detail text for the calling thread on CTX (printf-style) and
** return STATUS, so a failure reads: return error_set(ctx, FA4_EINVAL, ...).
*/
fa4_status error_set(const fa4_context *ctx, fa4_status status,
                     const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
** Append one line (printf-style; newlines become spaces) to CTX's
** warnings, unless the same line is there already or it does not fit
** whole.  The text only grows, and the buffer past its end is zeros, so a
** reader in another thread always sees a terminated string.  Takes
** ctx->lock.
*/
void context_warn(fa4_context *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
** The per-thread error buffers of CTX: error_thread_exit() is the
** thread-exit destructor of ctx->errkey; error_context_free() frees the
** buffers of every thread (those still running included) and deletes the
** key, at fa4_context_destroy().  error_buffers_live() counts the buffers
** of all contexts (for tests).
*/
void error_thread_exit(void *buffer);
void error_context_free(fa4_context *ctx);
long error_buffers_live(void);

/*
** CTX's database handle, or NULL.  The db functions (db.h) lock the handle
** themselves and bound their waits: call them holding no lock of the
** context (not ctx->lock), so no plan or tuner thread waits behind
** another's database I/O.
*/
db *context_db(const fa4_context *ctx);

/*
** A zeroed device counter of CONTEXT_COUNTER_BYTES for one plan, in *ADDR.
** Counters live until the context is destroyed (a destroyed plan's queued
** launches may still use theirs); they come from 4 KiB chunks.  Takes
** ctx->lock.
*/
#define CONTEXT_COUNTER_BYTES 16
fa4_status context_counter_alloc(fa4_context *ctx, unsigned long long *addr);

/*
** The options fa4_context_create() works with, into *OUT: USER's fields as
** far as its struct_size reaches, FA4_CONTEXT_OPTIONS_INIT's beyond (an
** older caller's struct leaves the newer fields at their defaults), all
** defaults when USER is NULL.  FA4_EINVAL with WHY when struct_size is not
** one the library knows.
*/
fa4_status context_options_read(fa4_context_options *out, const fa4_context_options *user,
                                char *why, size_t why_size);

/* 1 when OPTS (from context_options_read()) or $FA4_ENABLE_SM100=1 opt in
** to the sm100 family: device_limits.sm100_opt_in of a real device. */
int context_sm100_opt_in(const fa4_context_options *opts);

/* Make CTX's CUDA context current on this thread; pair with context_pop(). */
fa4_status context_push(fa4_context *ctx);
void context_pop(fa4_context *ctx);

#endif
