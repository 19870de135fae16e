/*
** jit.h -- run-time compilation: a config becomes a small generated source
** ("#define" lines from budget_defines() plus one #include of the family's
** kernel), compiled by NVRTC for an arch against the kernel sources
** embedded in the library (or $FA4_KERNEL_DIR while developing).
*/
#ifndef FA4_JIT_H
#define FA4_JIT_H

#include "fa4.h"
#include "budget.h"

/* Every kernel family's entry point carries this name. */
#define JIT_KERNEL_NAME "fa4_fwd"
/* The split-KV merge of families that split (kernels/common/combine.cuh). */
#define JIT_COMBINE_NAME "fa4_combine"
/* The V^T copy of the sm90 family's fp8 variants (kernels/sm90/vtranspose.cuh). */
#define JIT_VT_NAME "fa4_v_transpose"

typedef struct jit_kernel {
    void *cubin;          /* malloc'd */
    size_t cubin_size;
    char *log;            /* NVRTC/ptxas log, malloc'd, may be "" */
    int regs;             /* registers per thread of fa4_fwd from ptxas (-1: unknown) */
    int spill_bytes;      /* spill stores + loads bytes, all the module's functions (-1: unknown) */
    int stack_bytes;      /* fa4_fwd's stack frame (local memory, which the plan's
                             loader refuses as it does spills; -1: unknown) */
    double compile_ms;
    char key[17];         /* hex hash of (source, defines, options, NVRTC
                             version, arch, library version) */
} jit_kernel;

/*
** The generated source and the cache key of (ARCH, PROBLEM, CONFIG, LAYOUT)
** without compiling: fills KEY (17 bytes).  Returns FA4_OK or FA4_EINVAL.
*/
fa4_status jit_key(char key[17], const char *arch, const fa4_problem *problem,
                   const fa4_config *config, const fa4_layout *layout);

/*
** Compile (PROBLEM, CONFIG, LAYOUT) for ARCH ("sm_90a") into *OUT (release
** with jit_kernel_free()).  Rejects a variant that spills or whose kernel
** has a stack frame (FA4_ECOMPILE, "spills 64 bytes"): the plan's loader
** refuses any local memory.  An sm90 variant whose max-free loop spills is
** first compiled again with the max-first loop (kernels/README.md).
** FA4_ECOMPILE with the first log lines in WHY on a compile error.
** Thread-safe (NVRTC is).
*/
fa4_status jit_compile(jit_kernel *out, const char *arch,
                       const fa4_problem *problem, const fa4_config *config,
                       const fa4_layout *layout, char *why, size_t why_size);
void jit_kernel_free(jit_kernel *k);

/*
** jit_compile(), and the PTX NVRTC produced on the way into *PTX
** (malloc'd, NUL-terminated; the caller frees it; NULL on failure).  For
** tests that inspect the instructions a variant uses.  Thread-safe.
*/
fa4_status jit_compile_ptx(jit_kernel *out, char **ptx, const char *arch,
                           const fa4_problem *problem, const fa4_config *config,
                           const fa4_layout *layout, char *why, size_t why_size);

/* Hex hash (17 bytes incl. NUL) of FAMILY's kernel sources: its
** kernel.cuh and every file that includes, transitively (embedded copies,
** or $FA4_KERNEL_DIR's).  Database entries tuned with other sources are
** stale. */
const char *jit_source_hash(fa4_family family);

/* NVRTC's version as major*1000 + minor*10, 0 if unavailable. */
int jit_nvrtc_version(void);

/* Process-wide count of NVRTC compilations (tests and logs show that a
** warm binary cache compiles nothing). */
long jit_compile_count(void);

#endif
