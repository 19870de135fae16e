/*
** family.h -- what each kernel family contributes to the budget model and
** the config space.  budget.c and config.c dispatch through these tables;
** each family keeps its layout rules in one file (budget_sm80.c,
** budget_sm90.c, budget_sm100.c) next to the kernel it describes.
*/
#ifndef FA4_FAMILY_H
#define FA4_FAMILY_H

#include "fa4.h"
#include "device.h"
#include "budget.h"

typedef struct family_ops {
    fa4_family family;
    const char *name;          /* "sm80" */
    int min_cc;                /* lowest compute capability that runs it */
    int exact_cc;              /* arch-specific (sm_90a): only this cc, else 0 */
    /* Layout, registers and fit of CONFIG (family already checked; OUT is
       zeroed and WHY is a non-NULL buffer).  The budget's contract: see
       budget_fit() in budget.h. */
    fa4_status (*fit)(fa4_layout *out, const device_limits *dev,
                      const fa4_problem *problem, const fa4_config *config,
                      char *why, size_t why_size);
    /* Family-specific "#define" lines appended after the common ones;
       returns length written or -1 when SIZE is too small. */
    int (*defines)(char *buf, size_t size, const fa4_problem *problem,
                   const fa4_config *config, const fa4_layout *layout);
    /* The unfiltered config space: writes at most MAX configs, returns how
       many there are (call with MAX 0 to count). Deterministic order. */
    int (*candidates)(fa4_config *out, int max, const device_limits *dev,
                      const fa4_problem *problem);
    /* The heuristic default (need not fit: config_default() checks it and
       falls back to the first candidate that does). */
    void (*heuristic)(fa4_config *out, const device_limits *dev,
                      const fa4_problem *problem);
} family_ops;

extern const family_ops family_sm80;
extern const family_ops family_sm90;
extern const family_ops family_sm100;

/* The ops of FAMILY, or NULL. */
const family_ops *family_lookup(fa4_family family);

/* Append printf output to BUF (SIZE bytes) at *LEN, for the defines
   hooks; once BUF is full *LEN is -1 and later calls write nothing.
   Returns *LEN. */
int budget_append(char *buf, size_t size, int *len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
