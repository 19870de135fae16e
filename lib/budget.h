/*
** budget.h -- the budget model: for (device limits, problem, config), the
** shared-memory layout (every region's offset and size), the register
** estimate and, on sm100, the tensor-memory column map; "fits" or the
** precise reason it does not.  The one source of truth for layouts: the
** kernels receive them as compile-time constants (budget_defines()).
*/
#ifndef FA4_BUDGET_H
#define FA4_BUDGET_H

#include "fa4.h"
#include "device.h"

#define BUDGET_MAX_REGIONS 16

typedef struct budget_region {
    const char *name;   /* "Q", "K", "V", "KV", "O", "BAR", ... (static) */
    int offset;         /* bytes from the 1024-aligned dynamic smem base */
    int size;           /* bytes */
} budget_region;

typedef struct fa4_layout {
    int threads;              /* threads per CTA */
    int smem_bytes;           /* dynamic shared memory to request, bytes
                                 (regions + alignment slack) */
    int nregions;
    budget_region region[BUDGET_MAX_REGIONS];
    int regs_estimate;        /* registers per thread, the largest role */
    int kv_slots;             /* sm100 fused ring: slots; else = stages */
    int lean_loop;            /* sm80: the loop trades registers for
                                 instructions (budget_sm80.c); else 0 */
    int q_slots;              /* sm90: Q tiles resident, 1 or 2 (the next
                                 tile's Q loads under this one); else 0 */
    int head_group;           /* sm90: causal tiles ordered longest first
                                 across groups of this many heads (2 or
                                 more); 0: a head's tiles together */
    /* sm100 tensor memory (columns); 0 elsewhere */
    int tmem_columns;         /* allocated, a power of two >= 32 */
    int tmem_s0, tmem_s1, tmem_o0, tmem_o1;
} fa4_layout;

/*
** Compute CONFIG's layout for PROBLEM on DEV into *OUT.  Returns FA4_OK
** when it fits; FA4_ENOFIT with WHY giving the exact reason ("smem 241664
** B > opt-in limit 232448 B", "tmem 576 columns > 512", "bn=48 < 64"),
** FA4_EINVAL for a config that is malformed for its family (bm not a
** multiple of 64, ...), FA4_ENOTSUP when the family cannot run the problem
** (fp8 on sm80).  Pure function; thread-safe.
*/
fa4_status budget_fit(fa4_layout *out, const device_limits *dev,
                      const fa4_problem *problem, const fa4_config *config,
                      char *why, size_t why_size);

/* Find region NAME in LAYOUT; NULL when absent. */
const budget_region *budget_region_find(const fa4_layout *layout,
                                        const char *name);

/*
** Write the compile-time constants of (PROBLEM, CONFIG, LAYOUT) as
** "#define FA4_X value\n" lines into BUF (NUL-terminated).  The names are
** listed in kernels/README.md.  Returns the length written, or -1 when
** SIZE is too small.
*/
int budget_defines(char *buf, size_t size, const fa4_problem *problem,
                   const fa4_config *config, const fa4_layout *layout);

#endif
