/*
** tap.h -- the Test Anything Protocol for libfa4's tests, read by
** automake's tap-driver.sh.  One behaviour per ok() line, described as a
** sentence.  Header-only: each test is one program.
*/
#ifndef FA4_TAP_H
#define FA4_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int tap_count;
static int tap_failed;
static int tap_planned;

/* Announce N tests. */
static inline void plan(int n) { tap_planned = 1; printf("1..%d\n", n); fflush(stdout); }

/* Announce that tests are numbered as they run; call done_testing() last. */
static inline void plan_lazy(void) {}
static inline int done_testing(void)
{
    if (!tap_planned)
        printf("1..%d\n", tap_count);
    return tap_failed ? 1 : 0;
}

/* Skip the whole program with REASON ("no CUDA device (...)"). */
static inline void skip_all(const char *fmt, ...)
{
    va_list ap;
    printf("1..0 # SKIP ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    exit(0);
}

static inline void diag(const char *fmt, ...)
{
    va_list ap;
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* One test: passes when COND.  Returns COND. */
static inline int ok(int cond, const char *fmt, ...)
{
    va_list ap;
    tap_count++;
    if (!cond)
        tap_failed++;
    printf("%sok %d - ", cond ? "" : "not ", tap_count);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    return cond;
}

/* Record a skipped test with REASON. */
static inline void skip(const char *fmt, ...)
{
    va_list ap;
    tap_count++;
    printf("ok %d # SKIP ", tap_count);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* ok() for integers, printing both values on failure. */
#define is_int(got, want, ...)                                           \
    do {                                                                 \
        long long g_ = (long long)(got), w_ = (long long)(want);         \
        if (!ok(g_ == w_, __VA_ARGS__))                                  \
            diag("  got %lld, want %lld", g_, w_);                       \
    } while (0)

/* ok() for a substring: HAY contains NEEDLE. */
#define has_str(hay, needle, ...)                                        \
    do {                                                                 \
        const char *h_ = (hay), *n_ = (needle);                          \
        if (!ok(h_ && strstr(h_, n_) != NULL, __VA_ARGS__))              \
            diag("  got \"%s\", want it to contain \"%s\"",              \
                 h_ ? h_ : "(null)", n_);                                \
    } while (0)

/* The test seed: $FA4_TEST_SEED, else from the clock; printed for replay. */
static inline unsigned tap_seed(void)
{
    const char *s = getenv("FA4_TEST_SEED");
    unsigned seed = s ? (unsigned)strtoul(s, NULL, 10)
                      : (unsigned)time(NULL) ^ (unsigned)clock();
    diag("seed %u (FA4_TEST_SEED=%u to replay)", seed, seed);
    return seed;
}

#endif
