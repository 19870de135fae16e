/*
** jit.c -- NVRTC compilation of one kernel variant.  The generated source
** is the config's "#define" lines plus one #include; the kernel sources
** come from the library itself (embedded at build time) or, while
** developing, from $FA4_KERNEL_DIR.
*/
#include <nvrtc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "jit.h"
#include "problem.h"
#include "hash.h"
#include "embedded.h"
#include "family.h"

static atomic_long compile_count;

long jit_compile_count(void)
{
    return atomic_load(&compile_count);
}

int jit_nvrtc_version(void)
{
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
        return 0;
    return major * 1000 + minor * 10;
}

/* $FA4_KERNEL_DIR, or NULL for the embedded sources. */
static const char *kernel_dir(void)
{
    const char *d = getenv("FA4_KERNEL_DIR");
    return d && *d ? d : NULL;
}

/* Read DIR/NAME into a malloc'd string, or NULL. */
static char *read_kernel_file(const char *dir, const char *name)
{
    char path[4096];
    FILE *f;
    long n;
    char *text;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!(f = fopen(path, "rb")))
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n < 0 || !(text = malloc((size_t)n + 1))) {
        fclose(f);
        return NULL;
    }
    if (fread(text, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(text);
        return NULL;
    }
    text[n] = '\0';
    fclose(f);
    return text;
}

/* Index of embedded file NAME, or -1. */
static int embedded_index(const char *name, size_t len)
{
    int i;

    for (i = 0; i < embedded_kernels_count; i++)
        if (strlen(embedded_kernels[i].name) == len && !strncmp(embedded_kernels[i].name, name, len))
            return i;
    return -1;
}

/*
** Mark in SEEN the embedded file I and every file it includes
** (#include "x"), recursively: the sources that make up one family.
*/
static void mark_includes(char *seen, int i)
{
    const char *t;

    if (i < 0 || seen[i])
        return;
    seen[i] = 1;
    for (t = strstr(embedded_kernels[i].text, "#include \""); t; t = strstr(t + 1, "#include \"")) {
        const char *name = t + 10, *end = strchr(name, '"');
        if (end)
            mark_includes(seen, embedded_index(name, (size_t)(end - name)));
    }
}

static char source_hashes[3][17];
static pthread_once_t hash_once = PTHREAD_ONCE_INIT;

/* The next #include "NAME" in TEXT at or after *POS: NAME's start and
** length, *POS moved past it; NULL when there is none.  Spaces may
** follow '#' and "include", as the preprocessor allows. */
static const char *next_include(const char *text, const char **pos, size_t *len)
{
    const char *t = *pos, *name, *end;

    while ((t = strchr(t, '#'))) {
        const char *u = t + 1;

        while (*u == ' ' || *u == '\t')
            u++;
        if (strncmp(u, "include", 7) != 0) {
            t = u;
            continue;
        }
        u += 7;
        while (*u == ' ' || *u == '\t')
            u++;
        if (*u != '"' || !(end = strchr(u + 1, '"'))) {
            t = u;
            continue;
        }
        name = u + 1;
        *len = (size_t)(end - name);
        *pos = end + 1;
        return name;
    }
    return NULL;
}

/* The files of one family read from DIR, by name, in the order found. */
typedef struct disk_closure {
    char **names;
    int n, cap;
} disk_closure;

/* 1 when NAME is in C already. */
static int closure_has(const disk_closure *c, const char *name)
{
    int i;

    for (i = 0; i < c->n; i++)
        if (!strcmp(c->names[i], name))
            return 1;
    return 0;
}

/*
** Add to C the file NAME under DIR and, depth first, every file it
** includes, each once, as NVRTC resolves them: beside the including file,
** then under DIR (-I).  A name found nowhere is kept too (hashed as
** missing), so a file that appears later changes the hash.
*/
static void disk_closure_add(disk_closure *c, const char *dir, const char *name,
                             int depth)
{
    const char *pos, *inc;
    char *text, *copy;
    size_t len;

    if (depth > 64 || closure_has(c, name))
        return;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 32;
        char **v = realloc(c->names, (size_t)cap * sizeof *v);
        if (!v)
            return;
        c->names = v;
        c->cap = cap;
    }
    if (!(copy = strdup(name)))
        return;
    c->names[c->n++] = copy;
    if (!(text = read_kernel_file(dir, name)))
        return;
    for (pos = text; (inc = next_include(text, &pos, &len));) {
        char rel[1024], local[2200];
        const char *slash = strrchr(name, '/');
        char *probe;

        if (len >= sizeof rel)
            continue;
        memcpy(rel, inc, len);
        rel[len] = '\0';
        /* Beside the including file first, as the preprocessor looks. */
        if (slash && (size_t)(slash - name) + 1 + len < sizeof local) {
            snprintf(local, sizeof local, "%.*s/%s", (int)(slash - name), name, rel);
            if ((probe = read_kernel_file(dir, local))) {
                free(probe);
                disk_closure_add(c, dir, local, depth + 1);
                continue;
            }
        }
        disk_closure_add(c, dir, rel, depth + 1);
    }
    free(text);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The hash of ROOT's include closure read from DIR: the files by name
** (sorted, as the build embeds them) and their text, the same bytes the
** embedded hash covers, so an unedited tree hashes as the embedded one. */
static uint64_t hash_disk_closure(const char *dir, const char *root)
{
    disk_closure c = { NULL, 0, 0 };
    uint64_t h = HASH_FNV1A_INIT;
    int i;

    disk_closure_add(&c, dir, root, 0);
    qsort(c.names, (size_t)c.n, sizeof *c.names, cmp_names);
    for (i = 0; i < c.n; i++) {
        char *text = read_kernel_file(dir, c.names[i]);

        h = hash_fnv1a(h, c.names[i], strlen(c.names[i]) + 1);
        if (text)
            h = hash_fnv1a(h, text, strlen(text));
        else
            h = hash_fnv1a(h, "\0missing", 9);
        free(text);
        free(c.names[i]);
    }
    free(c.names);
    return h;
}

/* Hash each family's include closure, from its kernel.cuh: an edit to one
   family's files leaves the others' database entries valid.  With
   $FA4_KERNEL_DIR the closure is read from that tree, not from the
   embedded copy, so a file the edited tree newly includes is covered. */
static void compute_source_hashes(void)
{
    static const fa4_family fams[3] = { FA4_FAMILY_SM80, FA4_FAMILY_SM90, FA4_FAMILY_SM100 };
    const char *dir = kernel_dir();
    char *seen = calloc((size_t)embedded_kernels_count + 1, 1);
    int f, i;

    for (f = 0; f < 3; f++) {
        char root[64];
        uint64_t h = HASH_FNV1A_INIT;
        snprintf(root, sizeof root, "%s/kernel.cuh", family_lookup(fams[f])->name);
        if (dir) {
            h = hash_disk_closure(dir, root);
            snprintf(source_hashes[f], 17, "%016llx", (unsigned long long)h);
            continue;
        }
        if (seen) {
            memset(seen, 0, (size_t)embedded_kernels_count);
            mark_includes(seen, embedded_index(root, strlen(root)));
        }
        for (i = 0; i < embedded_kernels_count; i++) {
            const char *name = embedded_kernels[i].name;
            if (seen && !seen[i])
                continue;
            h = hash_fnv1a(h, name, strlen(name) + 1);
            h = hash_fnv1a(h, embedded_kernels[i].text, strlen(embedded_kernels[i].text));
        }
        snprintf(source_hashes[f], 17, "%016llx", (unsigned long long)h);
    }
    free(seen);
}

const char *jit_source_hash(fa4_family family)
{
    pthread_once(&hash_once, compute_source_hashes);
    switch (family) {
    case FA4_FAMILY_SM80:  return source_hashes[0];
    case FA4_FAMILY_SM90:  return source_hashes[1];
    case FA4_FAMILY_SM100: return source_hashes[2];
    }
    return "unknown";
}

/* The generated source of a variant into BUF; returns FA4_OK or FA4_EINVAL. */
static fa4_status variant_source(char *buf, size_t size, const fa4_problem *p,
                                 const fa4_config *c, const fa4_layout *l, const char *extra)
{
    const family_ops *ops = family_lookup(c->family);
    int n;

    if (!ops)
        return FA4_EINVAL;
    n = snprintf(buf, size, "/* libfa4 %s variant */\n%s", ops->name, extra);
    if (n < 0 || (size_t)n >= size)
        return FA4_EINVAL;
    if (budget_defines(buf + n, size - (size_t)n, p, c, l) < 0)
        return FA4_EINVAL;
    n = (int)strlen(buf);
    if ((size_t)snprintf(buf + n, size - (size_t)n, "#include \"%s/kernel.cuh\"\n", ops->name) >= size - (size_t)n)
        return FA4_EINVAL;
    return FA4_OK;
}

/* NVRTC options for ARCH; the pointers are static or into ARCH_OPT. */
static int compile_options(const char *opts[8], char arch_opt[64], char inc_opt[4200], const char *arch)
{
    const char *dir = kernel_dir();
    int n = 0;

    snprintf(arch_opt, 64, "--gpu-architecture=%s", arch);
    opts[n++] = arch_opt;
    opts[n++] = "-std=c++17";
    opts[n++] = "--ptxas-options=-v";
    /* NVRTC 12.9+ keeps its own disk cache of compiled code, and a hit
       returns the binary without ptxas's report, which the spill and
       stack-frame checks read; the database's binary cache holds only
       checked binaries instead. */
    if (jit_nvrtc_version() >= 12090)
        opts[n++] = "--no-cache";
    if (dir) {
        snprintf(inc_opt, 4200, "-I%s", dir);
        opts[n++] = inc_opt;
    }
    return n;
}

fa4_status jit_key(char key[17], const char *arch, const fa4_problem *problem,
                   const fa4_config *config, const fa4_layout *layout)
{
    char src[8192], arch_opt[64], inc_opt[4200];
    const char *opts[8];
    int nopt, i, nv = jit_nvrtc_version();
    uint64_t h = HASH_FNV1A_INIT;

    if (variant_source(src, sizeof src, problem, config, layout, "") != FA4_OK)
        return FA4_EINVAL;
    h = hash_fnv1a(h, src, strlen(src));
    nopt = compile_options(opts, arch_opt, inc_opt, arch);
    for (i = 0; i < nopt; i++)
        /* The directory is covered by the source hash; --no-cache does
           not change the binary. */
        if (strncmp(opts[i], "-I", 2) != 0 && strcmp(opts[i], "--no-cache") != 0)
            h = hash_fnv1a(h, opts[i], strlen(opts[i]) + 1);
    h = hash_fnv1a(h, &nv, sizeof nv);
    h = hash_fnv1a(h, FA4_VERSION_STRING, sizeof FA4_VERSION_STRING);
    h = hash_fnv1a(h, jit_source_hash(config->family), 16);
    snprintf(key, 17, "%016llx", (unsigned long long)h);
    return FA4_OK;
}

/* The start of the number that ends, before blanks, at S in LOG
** ("12 bytes stack frame": the "12"). */
static const char *number_before(const char *log, const char *s)
{
    while (s > log && s[-1] == ' ')
        s--;
    while (s > log && s[-1] >= '0' && s[-1] <= '9')
        s--;
    return s;
}

/* Pull the registers and the stack frame of the main kernel
** (JIT_KERNEL_NAME; the first function when the log does not name it) and
** the spill bytes of every function (a module may carry a merge step or
** the fp8 V^T copy) out of a ptxas log. */
static void parse_ptxas_log(jit_kernel *k)
{
    const char *s, *main_fn = strstr(k->log, "entry function '" JIT_KERNEL_NAME "'");
    int stack, stores, loads;

    k->regs = -1;
    k->spill_bytes = -1;
    k->stack_bytes = -1;
    if ((s = strstr(main_fn ? main_fn : k->log, "Used ")))
        sscanf(s, "Used %d registers", &k->regs);
    if ((s = strstr(main_fn ? main_fn : k->log, "bytes stack frame")))
        sscanf(number_before(k->log, s), "%d bytes stack frame", &k->stack_bytes);
    for (s = strstr(k->log, "bytes stack frame"); s; s = strstr(s + 1, "bytes stack frame")) {
        stack = stores = loads = 0;
        if (sscanf(number_before(k->log, s),
                   "%d bytes stack frame, %d bytes spill stores, %d bytes spill loads",
                   &stack, &stores, &loads) == 3)
            k->spill_bytes = (k->spill_bytes < 0 ? 0 : k->spill_bytes) + stores + loads;
    }
}

/* One compile of the variant's source with EXTRA (define lines or "")
   ahead of its defines; with PTX non-NULL the PTX text too (malloc'd). */
static fa4_status compile_source(jit_kernel *out, char **ptx, const char *arch,
                                 const fa4_problem *problem, const fa4_config *config,
                                 const fa4_layout *layout, const char *extra, char *why,
                                 size_t why_size)
{
    char src[8192], arch_opt[64], inc_opt[4200];
    const char *opts[8];
    const char **hdr_text = NULL, **hdr_name = NULL;
    int nopt, nhdr = 0, i;
    nvrtcProgram prog = NULL;
    nvrtcResult rc;
    size_t n;
    struct timespec t0, t1;
    fa4_status st = FA4_ECOMPILE;

    memset(out, 0, sizeof *out);
    if (variant_source(src, sizeof src, problem, config, layout, extra) != FA4_OK) {
        snprintf(why, why_size, "variant source does not fit %zu bytes", sizeof src);
        return FA4_EINVAL;
    }
    jit_key(out->key, arch, problem, config, layout);
    nopt = compile_options(opts, arch_opt, inc_opt, arch);
    if (!kernel_dir()) {
        hdr_text = malloc(sizeof *hdr_text * (size_t)embedded_kernels_count);
        hdr_name = malloc(sizeof *hdr_name * (size_t)embedded_kernels_count);
        if (!hdr_text || !hdr_name) {
            free(hdr_text);
            free(hdr_name);
            snprintf(why, why_size, "out of memory");
            return FA4_ENOMEM;
        }
        for (i = 0; i < embedded_kernels_count; i++) {
            hdr_text[nhdr] = embedded_kernels[i].text;
            hdr_name[nhdr++] = embedded_kernels[i].name;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    atomic_fetch_add(&compile_count, 1);
    rc = nvrtcCreateProgram(&prog, src, "fa4_variant.cu", nhdr, hdr_text, hdr_name);
    if (rc != NVRTC_SUCCESS) {
        snprintf(why, why_size, "nvrtcCreateProgram: %s", nvrtcGetErrorString(rc));
        goto done;
    }
    rc = nvrtcCompileProgram(prog, nopt, opts);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out->compile_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && (out->log = malloc(n + 1))) {
        nvrtcGetProgramLog(prog, out->log);
        out->log[n] = '\0';
    }
    if (!out->log && !(out->log = calloc(1, 1))) {
        st = FA4_ENOMEM;
        goto done;
    }
    if (rc != NVRTC_SUCCESS) {
        snprintf(why, why_size, "NVRTC %s for %s: %.400s", nvrtcGetErrorString(rc), arch, out->log);
        goto done;
    }
    parse_ptxas_log(out);
    if (out->spill_bytes > 0) {
        snprintf(why, why_size, "variant spills %d bytes (%d registers) for %s", out->spill_bytes,
                 out->regs, arch);
        goto done;
    }
    /* A stack frame without spills is local memory all the same (an array
       ptxas could not keep in registers); the plan's loader refuses it. */
    if (out->stack_bytes > 0) {
        snprintf(why, why_size, "variant uses a %d-byte stack frame (%d registers) for %s",
                 out->stack_bytes, out->regs, arch);
        goto done;
    }
    if (nvrtcGetCUBINSize(prog, &n) != NVRTC_SUCCESS || !(out->cubin = malloc(n))) {
        snprintf(why, why_size, "nvrtcGetCUBIN failed (arch %s must be a real sm_XX target)", arch);
        goto done;
    }
    nvrtcGetCUBIN(prog, out->cubin);
    out->cubin_size = n;
    if (ptx) {
        if (nvrtcGetPTXSize(prog, &n) != NVRTC_SUCCESS || !(*ptx = malloc(n + 1))) {
            snprintf(why, why_size, "nvrtcGetPTX failed for %s", arch);
            goto done;
        }
        nvrtcGetPTX(prog, *ptx);
        (*ptx)[n] = '\0';
    }
    st = FA4_OK;
done:
    nvrtcDestroyProgram(&prog);
    free(hdr_text);
    free(hdr_name);
    if (st != FA4_OK) {
        free(out->cubin);
        out->cubin = NULL;
    }
    return st;
}

/* jit_compile(), and with PTX non-NULL the PTX text too.  An sm90 variant
   whose max-free loop (kernels/sm90/softmax.cuh) spills or keeps a stack
   frame, which its few more live registers do in a handful of variants at
   the register limit, is compiled again with the max-first loop
   (FA4_MAX_FREE 0): the same inputs always give the same binary, so the
   key stays the variant's. */
static fa4_status compile_variant(jit_kernel *out, char **ptx, const char *arch,
                                  const fa4_problem *problem, const fa4_config *config,
                                  const fa4_layout *layout, char *why, size_t why_size)
{
    fa4_status st = compile_source(out, ptx, arch, problem, config, layout, "", why, why_size);

    if (st == FA4_ECOMPILE && (out->spill_bytes > 0 || out->stack_bytes > 0) &&
        config->family == FA4_FAMILY_SM90 &&
        !problem_softcap_fixed_max(problem)) {   /* softcap's constant max has no max to drop */
        jit_kernel_free(out);
        st = compile_source(out, ptx, arch, problem, config, layout, "#define FA4_MAX_FREE 0\n",
                            why, why_size);
    }
    return st;
}

fa4_status jit_compile(jit_kernel *out, const char *arch, const fa4_problem *problem,
                       const fa4_config *config, const fa4_layout *layout,
                       char *why, size_t why_size)
{
    return compile_variant(out, NULL, arch, problem, config, layout, why, why_size);
}

fa4_status jit_compile_ptx(jit_kernel *out, char **ptx, const char *arch,
                           const fa4_problem *problem, const fa4_config *config,
                           const fa4_layout *layout, char *why, size_t why_size)
{
    fa4_status st;

    *ptx = NULL;
    st = compile_variant(out, ptx, arch, problem, config, layout, why, why_size);
    if (st != FA4_OK) {
        free(*ptx);
        *ptx = NULL;
    }
    return st;
}

void jit_kernel_free(jit_kernel *k)
{
    if (!k)
        return;
    free(k->cubin);
    free(k->log);
    k->cubin = NULL;
    k->log = NULL;
}
