/*
** builds.c -- compile slots and build-once variants across the devices'
** searches.  See builds.h.
*/
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "builds.h"

enum { REC_EMPTY = 0, REC_RUNNING, REC_BUILT, REC_FAILED };

/* One variant, by its jit_key as a number. */
typedef struct build_rec {
    uint64_t key;
    int state;               /* REC_* */
    fa4_status status;       /* of a failed build */
    char *why;               /* its message */
} build_rec;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;     /* a slot was given back or a build ended */
    int slots, busy, held;   /* slots 0: no limit */
    build_rec *recs;         /* open addressing, size a power of two */
    size_t cap, used;        /* used counts tombstones too */
} b = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, NULL, 0, 0 };

/* Abandoned records stay as tombstones so probing runs past them. */
#define REC_GONE (-1)

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* KEY (16 hex digits) as a number; never 0, which marks an empty slot. */
static uint64_t key_value(const char *key)
{
    uint64_t v = strtoull(key, NULL, 16);

    return v ? v : 1;
}

/* The record of V, or the empty one where it would go; NULL when the
** table is empty.  Caller holds the lock. */
static build_rec *rec_find(uint64_t v)
{
    size_t i, mask = b.cap - 1;

    if (!b.cap)
        return NULL;
    for (i = (size_t)(v ^ (v >> 29)) & mask;; i = (i + 1) & mask)
        if (b.recs[i].state == REC_EMPTY || b.recs[i].key == v)
            return &b.recs[i];
}

/* Room for one more record: 0, or -1 when out of memory.  Caller holds
** the lock. */
static int rec_room(void)
{
    build_rec *old = b.recs;
    size_t oldcap = b.cap, i;

    if ((b.used + 1) * 2 <= b.cap)
        return 0;
    b.cap = oldcap ? 2 * oldcap : 256;
    if (!(b.recs = calloc(b.cap, sizeof *b.recs))) {
        b.recs = old;
        b.cap = oldcap;
        return -1;
    }
    b.used = 0;
    for (i = 0; i < oldcap; i++)
        if (old[i].state != REC_EMPTY && old[i].state != REC_GONE) {
            *rec_find(old[i].key) = old[i];
            b.used++;
        }
    free(old);
    return 0;
}

/* The compiles allowed at once now.  Caller holds the lock. */
static int slot_limit(void)
{
    int n = b.slots - b.held;

    return n < 1 ? 1 : n;
}

void builds_slots(int n)
{
    pthread_mutex_lock(&b.lock);
    b.slots = n > 0 ? n : 0;
    pthread_cond_broadcast(&b.cond);
    pthread_mutex_unlock(&b.lock);
}

void builds_hold(int delta)
{
    pthread_mutex_lock(&b.lock);
    b.held += delta;
    if (b.held < 0)
        b.held = 0;
    if (delta < 0)
        pthread_cond_broadcast(&b.cond);
    pthread_mutex_unlock(&b.lock);
}

double builds_slot_take(void)
{
    double t0 = 0;

    pthread_mutex_lock(&b.lock);
    if (b.slots > 0 && b.busy >= slot_limit()) {
        t0 = now();
        while (b.busy >= slot_limit())
            pthread_cond_wait(&b.cond, &b.lock);
    }
    b.busy++;
    pthread_mutex_unlock(&b.lock);
    return t0 > 0 ? now() - t0 : 0;
}

void builds_slot_give(void)
{
    pthread_mutex_lock(&b.lock);
    b.busy--;
    pthread_cond_broadcast(&b.cond);
    pthread_mutex_unlock(&b.lock);
}

build_claim builds_claim(const char *key, fa4_status *status, char *why,
                         size_t why_size, double *waited)
{
    build_claim c = BUILD_MINE;
    double t0 = 0;
    uint64_t v;
    build_rec *r;

    if (!key[0])
        return BUILD_MINE;
    v = key_value(key);
    pthread_mutex_lock(&b.lock);
    while ((r = rec_find(v)) && r->state == REC_RUNNING) {
        if (t0 == 0)
            t0 = now();
        pthread_cond_wait(&b.cond, &b.lock);
    }
    if (r && r->state == REC_BUILT) {
        c = BUILD_BUILT;
    } else if (r && r->state == REC_FAILED) {
        c = BUILD_FAILED;
        *status = r->status;
        snprintf(why, why_size, "%s", r->why ? r->why : "failed");
    } else if (rec_room() == 0) {
        /* a failed allocation leaves KEY unclaimed: built, not shared */
        r = rec_find(v);
        if (r->state == REC_EMPTY)
            b.used++;
        r->key = v;
        r->state = REC_RUNNING;
    }
    pthread_mutex_unlock(&b.lock);
    if (waited && t0 > 0)
        *waited += now() - t0;
    return c;
}

int builds_running(const char *key)
{
    build_rec *r;
    int found;

    if (!key[0])
        return 0;
    pthread_mutex_lock(&b.lock);
    r = rec_find(key_value(key));
    found = r && r->state == REC_RUNNING;
    pthread_mutex_unlock(&b.lock);
    return found;
}

/* End KEY's build with STATE.  Takes the lock. */
static void finish(const char *key, int state, fa4_status status,
                   const char *why)
{
    build_rec *r;

    if (!key[0])
        return;
    pthread_mutex_lock(&b.lock);
    r = rec_find(key_value(key));
    if (r && r->state == REC_RUNNING) {
        r->state = state;
        r->status = status;
        r->why = state == REC_FAILED && why ? strdup(why) : NULL;
    }
    pthread_cond_broadcast(&b.cond);
    pthread_mutex_unlock(&b.lock);
}

void builds_finish(const char *key, fa4_status status, const char *why)
{
    finish(key, status == FA4_OK ? REC_BUILT : REC_FAILED, status, why);
}

void builds_abandon(const char *key)
{
    finish(key, REC_GONE, FA4_OK, NULL);
}

void builds_reset(void)
{
    size_t i;

    pthread_mutex_lock(&b.lock);
    for (i = 0; i < b.cap; i++)
        free(b.recs[i].why);
    free(b.recs);
    b.recs = NULL;
    b.cap = b.used = 0;
    pthread_mutex_unlock(&b.lock);
}
