/*
** report.h -- what fa4-tune shows: a progress line on stderr (count and
** ETA, only on a terminal and without --quiet), the table of each
** problem's winner and runners-up with the gain over the heuristic
** default, the config space and dry-run tables, and the same as JSON.
*/
#ifndef FA4_TUNE_REPORT_H
#define FA4_TUNE_REPORT_H

#include <pthread.h>
#include <stdio.h>
#include <jansson.h>
#include "search.h"

typedef struct progress {
    int enabled;          /* stderr is a TTY and not --quiet */
    pthread_mutex_t lock;
    long total, done;
    double start;
    int shown;            /* a progress line is on the screen */
} progress;

/* Start *P; ENABLED 0 makes every call a no-op but the counting. */
void progress_init(progress *p, int enabled);
void progress_destroy(progress *p);

/* Add N (may be negative) to the expected number of steps.  P may be NULL. */
void progress_add(progress *p, long n);

/* One step done; redraws "[####    ] 37/120 ETA 1m12s LABEL".  Thread-safe;
** P may be NULL. */
void progress_step(progress *p, const char *label);

/* Take the lock and erase the line, so the caller can print; pair with
** progress_unlock().  P may be NULL. */
void progress_lock(progress *p);
void progress_unlock(progress *p);

/* The tuned table of R: winner, up to RUNNERS_UP runners-up, the default,
** counts, and whether the search was cut. */
void report_tune(FILE *out, const search_result *r, int runners_up);

/* The config space of R (from search_space) on DEV, with each config's
** shared memory and register estimate, and the drop counts by reason. */
void report_space(FILE *out, const search_result *r, const device_limits *dev);

/* The dry run of R: registers, spills and compile time per variant. */
void report_dryrun(FILE *out, const search_result *r, const device_limits *dev);

/* R as a JSON object (new reference).  WHAT: "tune", "space" or "dry-run"
** chooses which per-config fields are written. */
json_t *report_json(const search_result *r, const char *what, int runners_up);

/* A search's wall-time phases (seconds): prepare, waiting, loading,
** timing, database (new reference). */
json_t *report_phases_json(const search_phases *ph);

/* A search's builds: NVRTC compiles, variants reused, and the seconds its
** compile threads spent compiling and waiting (new reference). */
json_t *report_builds_json(const search_phases *ph);

/* DEV as a JSON object (new reference). */
json_t *report_device_json(const device_limits *dev);

/* The gain of MS over the default's DEFAULT_MS as "+12.3%", or "n/a". */
char *report_gain(char *buf, size_t size, double ms, double default_ms);

#endif
