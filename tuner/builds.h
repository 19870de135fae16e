/*
** builds.h -- the kernel builds of one fa4-tune process, shared by every
** device's search (one worker thread per GPU, each with its own compile
** threads):
**  - slots: at most N NVRTC compiles at once in all, less one for each
**    device thread busy on its own (host work, verification, timing), so
**    a device that is timing keeps a core while the others compile;
**  - variants: each kernel variant (jit_key) is built once.  The first
**    thread to claim a key builds it; a thread that claims it meanwhile
**    waits for that build, and one that claims it later takes the outcome:
**    built (its cubin is in the database's binary cache) or failed (the
**    same failure, without compiling it again).
** Only the tuner shares this; the library keeps no global state.  Builds
** are remembered until builds_reset(): one run, one database.
*/
#ifndef FA4_TUNE_BUILDS_H
#define FA4_TUNE_BUILDS_H

#include <stddef.h>
#include "fa4.h"

typedef enum build_claim {
    BUILD_MINE = 0,      /* build it, then builds_finish() or builds_abandon() */
    BUILD_BUILT,         /* built in this process: load it */
    BUILD_FAILED         /* failed in this process: *STATUS and WHY say how */
} build_claim;

/* At most N compiles at once (0: no limit).  Call before the searches. */
void builds_slots(int n);

/* A device thread starts (DELTA 1) or stops (-1) using a core of its own
** (the compiles then get one slot fewer, never less than one). */
void builds_hold(int delta);

/* Wait for a compile slot and take it; returns the seconds waited.
** Give it back with builds_slot_give(). */
double builds_slot_take(void);
void builds_slot_give(void);

/*
** Claim the variant KEY ("" claims nothing and returns BUILD_MINE): waits
** while another thread builds it (the seconds waited are added to
** *WAITED, which may be NULL), then says what to do.
*/
build_claim builds_claim(const char *key, fa4_status *status, char *why,
                         size_t why_size, double *waited);

/* 1 when another thread is building KEY now. */
int builds_running(const char *key);

/* The build of KEY (claimed BUILD_MINE) is over: STATUS FA4_OK when built
** and stored where others load it from, else the failure and WHY. */
void builds_finish(const char *key, fa4_status status, const char *why);

/* The build of KEY is over, but others cannot load it (the database did
** not take it): the next claim builds it again. */
void builds_abandon(const char *key);

/* Forget every build (the end of a run; tests). */
void builds_reset(void);

#endif
