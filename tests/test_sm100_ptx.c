/*
** test_sm100_ptx.c -- static checks that stand in for the sm_100 GPU we do
** not have.  A sample of sm100 variants (2Q fused and split rings, K
** staged by depth chunk, head_dim_v < head_dim_qk, 1Q, CTA pairs, causal
** and not, bf16, fp16 and fp8 e4m3 with 64 and 128 B swizzle, rope rings
** and per-token scales) is compiled by NVRTC for sm_100a and its PTX is
** read for what the mode needs (G = the variant's cta_group: 1, or 2 for
** a CTA pair):
**   - tcgen05.mma cta_group::G of one kind on every MMA: kind::f16 (A/B
**     formats bf16 1 or f16 0) for 16-bit inputs, kind::f8f6f4 (formats
**     E4M3 0) for fp8; S = Q K^T from two smem descriptors (M 128 G, N =
**     BN, both K-major), O += P V with P from TMEM (M 128 G, N = padded
**     dv, V MN-major: transpose-B 1, allowed for 8-bit types); whole
**     k-steps (k16, or k32 for fp8); the descriptor constants (the
**     variant's swizzle: 128 B layout 2 / 64 B layout 4, SBO 8 swizzle
**     rows, LBO 16 or BN x one swizzle row);
**   - fp8: P goes to TMEM as e4m3 -- every tcgen05.st.32x32b.x4 (P's
**     store) holds packed cvt.rn.satfinite.e4m3x2.f32 results or zeros,
**     and there is no 16-bit P store (x8); 16-bit: no e4m3 conversion;
**   - the K ring's placement: every S k-step's K descriptor and every TMA
**     load of K starts in the K ring, or in rope mode (MLA 192/128 and
**     other head_dim_v < head_dim_qk fused rings, 16-bit or fp8) the
**     k-steps of each tile's last rope_depth columns and the K boxes past
**     padded_dv start in the ROPE region (each address traced back to the
**     smem base through its def chain: the immediates it adds give where
**     it starts at least);
**   - per-token Q/K scales (problem token_scales): global loads from the
**     argument block's q_token_scale / k_token_scale stored into QSCALE /
**     KSCALE, every read of them after the wait on their full barrier
**     (KS_FULL since the buffer was last given back), every refill of
**     KSCALE after the wait on its KS_EMPTY, on every path; none of it
**     without scales;
**   - tcgen05.ld / st: 32x32b shapes (a warp reaches its 32 lanes), as
**     many registers as the shape moves; no register of a load read
**     before tcgen05.wait::ld; every store waited (wait::st) and fenced
**     (fence::before_thread_sync) before the next mbarrier arrive; every
**     TMEM access after an mbarrier wait fenced (fence::after_thread_sync);
**   - tcgen05.commit: the arrive::one form of cta_group::G (a pair's
**     multicast to both CTAs, mask 0b11), each on a barrier of the BAR
**     region initialised with count 1; every barrier's count the kernel's
**     (P_FULL 128 G, C_FULL / C_EMPTY 128, QS_FULL / KS_FULL 32, KS_EMPTY
**     128 per query tile, the rest 1);
**   - a pair: no tcgen05 instruction of the other cta_group; every TMA
**     load the cta_group::2 form on a barrier mapped to rank 0 (the
**     leader's), P_FULL reached by remote arrives on rank 0 with release
**     at cluster scope and waited with acquire at cluster scope; the
**     cluster barrier at the start and the end; alone: no cluster
**     instruction at all;
**   - one tcgen05.alloc and one dealloc of the budget's column count; the
**     kernel's own TMEM and smem reach (fa4_sm100_*_reach, from its tile
**     sizes and barrier enum) equal to the budget's map and request;
**   - the epilogue: one TMA store of O per box of 64 columns (fp8: one
**     swizzle row of 16-bit O, 32 or 64 columns), each reading shared
**     memory fenced for the async proxy (fence.proxy.async after the
**     st.shared that staged it, on every path), the bulk group waited on
**     before the kernel exits;
**   - masked-tile skipping of whole MMAs: in 2Q mode alone every S and P V
**     MMA can be passed (a CFG path from its barrier wait to the next
**     commit around it), in 1Q and pairs none can;
**   - the smem base rounded up to 1024 B at run time, no trap, no static
**     shared memory, no spills, at most 128 registers.
** With an nvdisasm (FA4_NVDISASM, or $CUDA_HOME/bin) the SASS is counted
** too: at least as many UTCHMMA (fp8: UTCQMMA, and no UTCHMMA; 16-bit:
** no UTCQMMA), UTCBAR, LDTM, STTM and UTMASTG as the PTX has MMAs,
** commits, TMEM loads and stores and TMA stores of O (ptxas may duplicate
** code), alone none of the MMAs 2-CTA, and no local-memory access.
** Without one that line is a skip.  Nothing here runs a kernel.
*/
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "budget.h"
#include "config.h"
#include "family.h"
#include "sm100_cases.h"
#include "jit.h"
#include "compile_test_util.h"
#include "../kernels/common/params.h"

/* The PTX as lines; each line's text trimmed of leading blanks. */
typedef struct ptx_text {
    char **line;
    int n;
} ptx_text;

static void ptx_split(ptx_text *t, char *text)
{
    char *s, *nl;
    int cap = 1024;

    t->n = 0;
    t->line = malloc(sizeof *t->line * (size_t)cap);
    for (s = text; s && *s; s = nl ? nl + 1 : NULL) {
        nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        while (*s == ' ' || *s == '\t')
            s++;
        if (t->n == cap)
            t->line = realloc(t->line, sizeof *t->line * (size_t)(cap *= 2));
        t->line[t->n++] = s;
    }
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* 1 when LINE names register REG as a whole token (%r12, not %r123). */
static int uses_reg(const char *line, const char *reg)
{
    size_t n = strlen(reg);
    const char *at;

    for (at = strstr(line, reg); at; at = strstr(at + 1, reg))
        if (!isalnum((unsigned char)at[n]) && at[n] != '_')
            return 1;
    return 0;
}

/* The first operand of an instruction line ("%r12" of "add.s32 %r12, ..."),
** into BUF. */
static const char *first_operand(char *buf, size_t size, const char *line)
{
    const char *s = line;
    size_t k = 0;

    while (*s && !isspace((unsigned char)*s))
        s++;
    while (isspace((unsigned char)*s))
        s++;
    while (*s && *s != ',' && *s != ';' && !isspace((unsigned char)*s) && k + 1 < size)
        buf[k++] = *s++;
    buf[k] = '\0';
    return buf;
}

/* The immediate REG last received, before line AT, from an instruction
** starting with OP whose last operand is a number ("mov.b32 %r5, 136;"
** or, with OP "add.s32", "add.s32 %r5, %rB, 230400;" -- then *SRC gets
** %rB).  1 when found. */
static int def_imm(const ptx_text *t, int at, const char *reg, const char *op,
                   long long *val, char *src, size_t src_size)
{
    char buf[64];
    int i;

    for (i = at - 1; i >= 0; i--) {
        const char *l = t->line[i], *last;
        if (!starts(l, op) || strcmp(first_operand(buf, sizeof buf, l), reg) != 0)
            continue;
        last = strrchr(l, ',');
        if (!last)
            return 0;
        if (src) {
            const char *c = strchr(l, ',') + 1;
            size_t k = 0;
            while (isspace((unsigned char)*c))
                c++;
            while (*c && *c != ',' && k + 1 < src_size)
                src[k++] = *c++;
            src[k] = '\0';
        }
        *val = strtoll(last + 1, NULL, 10);
        return 1;
    }
    return 0;
}

/* The operands of a tcgen05.mma line: D, A, B, idesc registers; 1 for
** the TMEM-A form ("[%rD], [%rA], %rdB, %rI"). */
static int mma_operands(const char *l, char d[32], char a[32], char b[32], char id[32])
{
    const char *s = strchr(l, '[');
    int ts;

    d[0] = a[0] = b[0] = id[0] = '\0';
    if (!s)
        return -1;
    ts = strchr(s + 1, '[') != NULL;
    if (ts)
        sscanf(s, "[%31[^]]], [%31[^]]], %31[^,], %31[^,]", d, a, b, id);
    else
        sscanf(s, "[%31[^]]], %31[^,], %31[^,], %31[^,]", d, a, b, id);
    return ts;
}

/* What one variant must show; filled from its defines. */
typedef struct expect {
    int bn, pad_dqk, pad_dv, q_tiles, bf16;
    int fp8;                     /* e4m3 inputs: kind::f8f6f4 */
    int swizzle;                 /* bytes of a swizzle row: 128, or 64 (fp8) */
    int mma_k;                   /* elements of an MMA k-step: 16, or 32 (fp8) */
    int g;                       /* FA4_CTA_GROUP: 1, or 2 for a CTA pair */
    int bar_off, bar_size;
    int rope_chunks;             /* FA4_ROPE_CHUNKS: K boxes in the ROPE buffers */
    int k_off, k_end;            /* the K ring: KV (fused) or K (split) region */
    int rope_off, rope_end;      /* the ROPE region; 0, 0 without */
    int scales, ks_bufs;         /* FA4_TOKEN_SCALES, FA4_KSCALE_BUFS */
    int qs_off, ks_off, ks_end;  /* QSCALE, KSCALE regions */
    int qs_bar;                  /* index of QS_FULL: KS_FULL, KS_EMPTY follow */
    int decode;                  /* the decode mode (bm 32): its barrier map */
} expect;

/*
** 1 when the tcgen05.mma at line L can be passed by: some path from the
** last mbarrier wait or tcgen05.commit before it in the text (its anchor)
** reaches a tcgen05.commit without going through L.  SUCC: the CFG of
** ptx_successors().  Straight-line MMAs between a wait and a commit
** cannot be; the 2Q mode's masked-tile skipping branches around each.
*/
static int mma_skippable(const ptx_text *t, const int *succ, int at)
{
    int *queue = malloc(sizeof *queue * ((size_t)t->n + 1));
    char *seen = calloc((size_t)t->n + 1, 1);
    int a, head = 0, tail = 0, k, found = 0;

    for (a = at - 1; a >= 0; a--)
        if (starts(t->line[a], "tcgen05.commit") || starts(t->line[a], "mbarrier.try_wait"))
            break;
    if (a >= 0) {
        seen[a] = 1;
        queue[tail++] = a;
    }
    while (head < tail && !found) {
        const int i = queue[head++];
        for (k = 0; k < 2; k++) {
            const int nx = succ[2 * i + k];
            if (nx < 0 || nx >= t->n || nx == at || seen[nx])
                continue;
            if (starts(t->line[nx], "tcgen05.commit")) {
                found = 1;
                break;
            }
            seen[nx] = 1;
            queue[tail++] = nx;
        }
    }
    free(queue);
    free(seen);
    return found;
}

/* The operands of instruction LINE after its mnemonic, into OPS (at most
** 4, each trimmed); returns how many. */
static int operands(char ops[4][48], const char *line)
{
    const char *s = line;
    int n = 0;

    while (*s && !isspace((unsigned char)*s))
        s++;
    while (*s && n < 4) {
        size_t k = 0;
        while (isspace((unsigned char)*s) || *s == ',')
            s++;
        if (!*s || *s == ';')
            break;
        while (*s && *s != ',' && *s != ';' && k + 1 < sizeof ops[0])
            ops[n][k++] = *s++;
        while (k > 0 && isspace((unsigned char)ops[n][k - 1]))
            k--;
        ops[n++][k] = '\0';
    }
    return n;
}

static int is_imm(const char *op)
{
    return op[0] == '-' || isdigit((unsigned char)op[0]);
}

/* The line defining REG last before line AT (its first operand), or -1. */
static int def_line(const ptx_text *t, int at, const char *reg)
{
    char buf[64];
    int i;

    for (i = at - 1; i >= 0; i--)
        if (t->line[i][0] != '/' && t->line[i][0] != '$' &&
            strcmp(first_operand(buf, sizeof buf, t->line[i]), reg) == 0)
            return i;
    return -1;
}

/* The shared-memory roots of a kernel's addresses: the 1024-aligned base
** ("and.b32 BASE, RAW1023, -1024") and RAW1023 = RAW + 1023, RAW the
** dynamic smem's own address. */
typedef struct smem_roots {
    char base[32], raw1023[32], raw[32];
} smem_roots;

static int find_roots(smem_roots *r, const ptx_text *t)
{
    char ops[4][48];
    int i, d;

    for (i = 0; i < t->n; i++)
        if (starts(t->line[i], "and.b32") && strstr(t->line[i], ", -1024;"))
            break;
    if (i == t->n || operands(ops, t->line[i]) != 3)
        return 0;
    snprintf(r->base, sizeof r->base, "%.31s", ops[0]);
    snprintf(r->raw1023, sizeof r->raw1023, "%.31s", ops[1]);
    if ((d = def_line(t, i, r->raw1023)) < 0 || !starts(t->line[d], "add.s32") ||
        operands(ops, t->line[d]) != 3 || strcmp(ops[2], "1023") != 0)
        return 0;
    snprintf(r->raw, sizeof r->raw, "%.31s", ops[1]);
    return 1;
}

/* 1 when REG at line AT holds fa4_smem's own (generic) address. */
static int is_smem_sym(const ptx_text *t, int at, const char *reg)
{
    char ops[4][48];
    int d = def_line(t, at, reg);

    return d >= 0 && starts(t->line[d], "mov.u64") && operands(ops, t->line[d]) == 2 &&
           !strcmp(ops[1], "fa4_smem");
}

/*
** Where the shared-memory address in REG (used at line AT) starts at the
** least, as a byte offset from the 1024-aligned base: the immediates its
** def chain adds (add.s32; mad.lo adds an index times a stride), through
** the moves, conversions, shifts and
** masks that encode a descriptor (a sub.s32 of a register: its minuend,
** below), down to the base (or the raw address it
** is rounded from, less its 1023; for a generic 64-bit pointer, fa4_smem
** plus the base's distance from it).  The run-time terms of the chain
** (ring and buffer indices) are unsigned additions and left out.  1 with *OFF;
** 0 when the chain is not of that form.
*/
static int smem_floor(const ptx_text *t, int at, const char *reg, const smem_roots *r,
                      int depth, long long *off)
{
    char ops[4][48];
    int d, n;

    if (!strcmp(reg, r->base) || !strcmp(reg, r->raw1023)) {
        *off = 0;
        return 1;
    }
    if (!strcmp(reg, r->raw)) {
        *off = -1023;
        return 1;
    }
    if (depth > 24 || (d = def_line(t, at, reg)) < 0 || (n = operands(ops, t->line[d])) < 2)
        return 0;
    if (starts(t->line[d], "add.s64") && n == 3 && !is_imm(ops[1]) && !is_imm(ops[2]) &&
        (is_smem_sym(t, d, ops[1]) || is_smem_sym(t, d, ops[2]))) {
        /* fa4_smem's generic address plus (base - raw): the base itself */
        *off = 0;
        return 1;
    }
    if ((starts(t->line[d], "add.s32") || starts(t->line[d], "add.s64")) && n == 3) {
        long long sub;
        if (is_imm(ops[2]) && smem_floor(t, d, ops[1], r, depth + 1, &sub)) {
            *off = sub + strtoll(ops[2], NULL, 10);
            return 1;
        }
        if (!is_imm(ops[2]) && !is_imm(ops[1]))
            return smem_floor(t, d, ops[1], r, depth + 1, off) ||
                   smem_floor(t, d, ops[2], r, depth + 1, off);
        return 0;
    }
    if (starts(t->line[d], "mad.lo.s32") && n == 4)     /* index * stride + address */
        return !is_imm(ops[3]) && smem_floor(t, d, ops[3], r, depth + 1, off);
    /* a ring index kept as a running offset less whole turns of the ring
       (j % slots strength-reduced): the address is the minuend's, less a
       run-time term that keeps it in the ring */
    if (starts(t->line[d], "sub.s32") && n == 3 && !is_imm(ops[1]) && !is_imm(ops[2]))
        return smem_floor(t, d, ops[1], r, depth + 1, off);
    if (starts(t->line[d], "mov.") || starts(t->line[d], "cvt.") ||
        starts(t->line[d], "shr.") || starts(t->line[d], "and.") ||
        starts(t->line[d], "or.b64"))
        return !is_imm(ops[1]) && smem_floor(t, d, ops[1], r, depth + 1, off);
    return 0;
}

/* 1 when map register REG at line AT is the kernel parameter fa4_fwd_param_N
** (through cvta.param and moves). */
static int is_param(const ptx_text *t, int at, const char *reg, int n)
{
    char ops[4][48], want[32];
    int d, depth;

    snprintf(want, sizeof want, "fa4_fwd_param_%d", n);
    for (depth = 0; depth < 8; depth++) {
        if ((d = def_line(t, at, reg)) < 0 || operands(ops, t->line[d]) != 2)
            return 0;
        if (!strcmp(ops[1], want))
            return 1;
        if (!starts(t->line[d], "mov.") && !starts(t->line[d], "cvta.param"))
            return 0;
        at = d;
        reg = ops[1];
    }
    return 0;
}

/*
** Rope mode's placement, "" into BAD when it holds: every S = Q K^T MMA's
** K descriptor starts in the K ring or the ROPE region -- the ROPE one
** for exactly the last swizzle / 32 x ROPE_CHUNKS k-steps of each tile's
** PAD_DQK / MMA_K (the slot's depth, then the rope's) and never without
** rope mode; and
** every TMA load of the K map (fa4_fwd_param_2) lands in the ROPE region
** when its depth coordinate (a constant) is past the slot's padded_dv
** columns, in the K ring otherwise.  Counts the rope k-steps and loads.
*/
static void check_rope(char *bad, size_t bn, const ptx_text *t, const expect *e,
                       int *nrope_mma, int *nrope_load)
{
    /* a depth box is one swizzle row: swizzle / 32 k-steps of 32 bytes,
       swizzle / esize columns (64 for 16-bit types, 64 or 128 for fp8) */
    const int steps = e->pad_dqk / e->mma_k, rope_steps = e->swizzle / 32 * e->rope_chunks;
    const int slot_cols = e->pad_dqk - e->swizzle / (e->fp8 ? 1 : 2) * e->rope_chunks;
    smem_roots r;
    int i, nss = 0;

    *nrope_mma = *nrope_load = 0;
    bad[0] = '\0';
    if (!find_roots(&r, t)) {
        snprintf(bad, bn, "no 1024-aligned base rounded from the smem address");
        return;
    }
    for (i = 0; i < t->n && !bad[0]; i++) {
        const char *l = t->line[i];
        char d[32], a[32], b[32], id[32], ops[4][48];
        long long off, col;
        int in_rope, in_k;

        if (starts(l, "tcgen05.mma") && mma_operands(l, d, a, b, id) == 0) {
            if (!smem_floor(t, i, b, &r, 0, &off)) {
                snprintf(bad, bn, "line %d: the K descriptor %s is not base + offset", i + 1, b);
                break;
            }
            in_rope = off >= e->rope_off && off < e->rope_end;
            in_k = off >= e->k_off && off < e->k_end;
            if (!in_rope && !in_k)
                snprintf(bad, bn, "line %d: a K descriptor starts at smem +%lld, outside the "
                         "K ring [%d, %d) and ROPE [%d, %d)", i + 1, off, e->k_off, e->k_end,
                         e->rope_off, e->rope_end);
            else if (in_rope != (nss % steps >= steps - rope_steps))
                snprintf(bad, bn, "line %d: k-step %d of %d reads %s (smem +%lld)", i + 1,
                         nss % steps, steps, in_rope ? "the ROPE region" : "the ring slot", off);
            *nrope_mma += in_rope;
            nss++;
        } else if (starts(l, "cp.async.bulk.tensor") && strstr(l, ".global.tile.mbarrier") &&
                   sscanf(l, "%*[^[][%31[^]]], [%31[^,], {%31[^,]", d, b, a) == 3 &&
                   is_param(t, i, b, 2)) {
            int dl = def_line(t, i, a);
            if (dl < 0 || !starts(t->line[dl], "mov.b32") || operands(ops, t->line[dl]) != 2 ||
                !is_imm(ops[1])) {
                snprintf(bad, bn, "line %d: a K load's depth coordinate %s is not a constant",
                         i + 1, a);
                break;
            }
            col = strtoll(ops[1], NULL, 10);
            if (!smem_floor(t, i, d, &r, 0, &off)) {
                snprintf(bad, bn, "line %d: a K load's destination %s is not base + offset",
                         i + 1, d);
                break;
            }
            in_rope = off >= e->rope_off && off < e->rope_end;
            in_k = off >= e->k_off && off < e->k_end;
            if (col >= slot_cols ? !in_rope : !in_k)
                snprintf(bad, bn, "line %d: K's depth box at column %lld lands at smem +%lld, "
                         "not in %s", i + 1, col, off, col >= slot_cols ? "ROPE" : "the K ring");
            *nrope_load += in_rope;
        }
    }
    if (!bad[0] && (nss == 0 || nss % steps != 0 || *nrope_mma != nss / steps * rope_steps))
        snprintf(bad, bn, "%d S MMAs (whole tiles of %d k-steps?), %d on ROPE (want %d per tile)",
                 nss, steps, *nrope_mma, rope_steps);
    else if (!bad[0] && (e->rope_chunks > 0) != (*nrope_load > 0))
        snprintf(bad, bn, "%d K loads land in ROPE (rope chunks %d)", *nrope_load, e->rope_chunks);
}

/* The byte offset in the kernel's argument block (fa4_fwd_param_0) of the
** field a global pointer REG at line AT was loaded from, through the
** additions of an index and the move to the global window; -1 if none. */
static long long param_field(const ptx_text *t, int at, const char *reg, int depth)
{
    char ops[4][48];
    const char *plus;
    long long f;
    int d, n;

    if (depth > 16 || (d = def_line(t, at, reg)) < 0 || (n = operands(ops, t->line[d])) < 2)
        return -1;
    if (starts(t->line[d], "ld.param.u64"))
        return (plus = strchr(ops[1], '+')) ? strtoll(plus + 1, NULL, 10) : 0;
    if (starts(t->line[d], "add.s64") && n == 3) {
        if (!is_imm(ops[1]) && (f = param_field(t, d, ops[1], depth + 1)) >= 0)
            return f;
        return is_imm(ops[2]) ? -1 : param_field(t, d, ops[2], depth + 1);
    }
    if (starts(t->line[d], "cvta.to.global") || starts(t->line[d], "mov.u64") ||
        starts(t->line[d], "mov.b64"))
        return is_imm(ops[1]) ? -1 : param_field(t, d, ops[1], depth + 1);
    return -1;
}

/* The address register and immediate of a memory operand "[%rd5+64]". */
static int mem_operand(const char *line, char reg[48], long long *imm)
{
    const char *s = strchr(line, '['), *e;
    size_t k = 0;

    if (!s || !(e = strchr(s, ']')))
        return 0;
    for (s++; s < e && *s != '+' && k + 1 < 48; s++)
        reg[k++] = *s;
    reg[k] = '\0';
    *imm = *s == '+' ? strtoll(s + 1, NULL, 10) : 0;
    return reg[0] == '%';
}

static const char *branch_target(char *buf, size_t size, const char *line, int *uncond);

/* The successors of every PTX line of T into SUCC[2 i], SUCC[2 i + 1]
** (-1: none): the next line unless it ends the path, a branch's target. */
static void ptx_successors(int *succ, const ptx_text *t)
{
    int i, k;

    for (i = 0; i < t->n; i++) {
        const char *l = t->line[i];
        char label[96];
        int uncond;
        succ[2 * i] = i + 1;
        succ[2 * i + 1] = -1;
        if (branch_target(label, sizeof label, l, &uncond)) {
            size_t len = strlen(label);
            if (uncond)
                succ[2 * i] = -1;
            for (k = 0; k < t->n; k++)
                if (!strncmp(t->line[k], label, len) && t->line[k][len] == ':')
                    succ[2 * i + 1] = k;
        } else if (starts(l, "ret;") || starts(l, "exit;")) {
            succ[2 * i] = -1;
        }
    }
}

/* Which of E's scale barriers the mbarrier line AT names: 1 QS_FULL,
** 2 a KS_FULL, 3 a KS_EMPTY (by where its address starts), else 0. */
static int scale_bar(const ptx_text *t, int at, const expect *e, const smem_roots *r)
{
    char reg[48];
    long long off, imm, idx;
    const char *b = strchr(t->line[at], '[');

    if (!e->scales || !b || !mem_operand(b, reg, &imm) || !smem_floor(t, at, reg, r, 0, &off))
        return 0;
    idx = (off + imm - e->bar_off) / 8;
    if (off + imm < e->bar_off || idx < e->qs_bar)
        return 0;
    return idx == e->qs_bar ? 1 : idx <= e->qs_bar + e->ks_bufs ? 2
           : idx <= e->qs_bar + 2 * e->ks_bufs ? 3 : 0;
}

/*
** The per-token scales (FA4_TOKEN_SCALES), "" into BAD when they hold:
** global loads of the query and key scales (pointers loaded from the
** argument block's q_token_scale / k_token_scale) and stores of them
** into QSCALE and KSCALE; and over every path of the control-flow graph,
** no read of QSCALE before a wait on QS_FULL, no read of KSCALE without
** a wait on a KS_FULL since the last arrive on KS_EMPTY (the buffer given
** back), no store into KSCALE without a wait on a KS_EMPTY since the last
** arrive on KS_FULL.  Without scales: no such load and no access to the
** regions.  Counts loads, reads and the scale barriers' waits out.
*/
static void check_scales(char *bad, size_t bn, const ptx_text *t, const expect *e, int *nload,
                         int *nread, int *nwait)
{
    const long long qf = (long long)offsetof(fa4_params, q_token_scale);
    const long long kf = (long long)offsetof(fa4_params, k_token_scale);
    unsigned char *in = calloc((size_t)t->n + 1, 1);
    int *succ = malloc(sizeof *succ * 2 * ((size_t)t->n + 1));
    int i, k, changed, nq = 0, nk = 0, nqs = 0, nks = 0, nqr = 0, nkr = 0;
    smem_roots r;

    *nload = *nread = *nwait = 0;
    bad[0] = '\0';
    if (!find_roots(&r, t)) {
        snprintf(bad, bn, "no 1024-aligned base rounded from the smem address");
        goto out;
    }
    ptx_successors(succ, t);
    /* Flow bits, may-analysis from the entry (all set): 1 QS_FULL not
       waited, 2 no KS_FULL wait since the last KS_EMPTY arrive, 4 no
       KS_EMPTY wait since the last KS_FULL arrive. */
    in[0] = 7;
    for (changed = 1; changed; ) {
        changed = 0;
        for (i = 0; i < t->n; i++) {
            unsigned char out = in[i];
            const char *l = t->line[i];
            int sb = starts(l, "mbarrier.") ? scale_bar(t, i, e, &r) : 0;
            if (starts(l, "mbarrier.try_wait"))
                out &= (unsigned char)~(sb == 1 ? 1 : sb == 2 ? 2 : sb == 3 ? 4 : 0);
            else if (starts(l, "mbarrier.arrive"))
                out |= (unsigned char)(sb == 3 ? 2 : sb == 2 ? 4 : 0);
            for (k = 0; k < 2; k++)
                if (succ[2 * i + k] >= 0 && succ[2 * i + k] < t->n &&
                    (in[succ[2 * i + k]] | out) != in[succ[2 * i + k]]) {
                    in[succ[2 * i + k]] |= out;
                    changed = 1;
                }
        }
    }
    for (i = 0; i < t->n && !bad[0]; i++) {
        const char *l = t->line[i];
        char reg[48];
        long long off, imm, f;
        int in_q, in_k;

        if (starts(l, "ld.global") && mem_operand(l, reg, &imm) &&
            (f = param_field(t, i, reg, 0)) >= 0 && (f == qf || f == kf)) {
            nq += f == qf;
            nk += f == kf;
            continue;
        }
        if (starts(l, "mbarrier.try_wait"))
            *nwait += scale_bar(t, i, e, &r) != 0;
        if ((!starts(l, "ld.shared") && !starts(l, "st.shared")) || !mem_operand(l, reg, &imm) ||
            !smem_floor(t, i, reg, &r, 0, &off))
            continue;
        off += imm;
        in_q = off >= e->qs_off && off < e->ks_off;
        in_k = off >= e->ks_off && off < e->ks_end;
        if (!in_q && !in_k)
            continue;
        if (starts(l, "st.shared")) {
            nqs += in_q;
            nks += in_k;
            if (in_k && (in[i] & 4))
                snprintf(bad, bn, "line %d: a store into KSCALE (+%lld) may come with no wait "
                         "on KS_EMPTY since the last KS_FULL arrive", i + 1, off);
        } else {
            nqr += in_q;
            nkr += in_k;
            if (in[i] & (in_q ? 1 : 2))
                snprintf(bad, bn, "line %d: a read of %s (+%lld) may come with no wait on %s",
                         i + 1, in_q ? "QSCALE" : "KSCALE", off,
                         in_q ? "QS_FULL" : "KS_FULL since the last KS_EMPTY arrive");
        }
    }
    *nload = nq + nk;
    *nread = nqr + nkr;
    if (bad[0])
        goto out;
    if (e->scales && (nq < 1 || nk < 1 || nqs < 1 || nks < 1 || nqr < 1 || nkr < 1 ||
                      *nwait < 3))
        snprintf(bad, bn, "%d / %d loads of the Q / K scales, %d / %d stores into QSCALE / "
                 "KSCALE, %d / %d reads, %d waits on their barriers", nq, nk, nqs, nks, nqr,
                 nkr, *nwait);
    else if (!e->scales && nq + nk + nqs + nks + nqr + nkr > 0)
        snprintf(bad, bn, "no per-token scales, yet %d loads and %d accesses of QSCALE/KSCALE",
                 nq + nk, nqs + nks + nqr + nkr);
out:
    free(in);
    free(succ);
}

/* Check the MMA instructions; "" into BAD when all hold.  Counts out. */
static void check_mma(char *bad, size_t bn, const ptx_text *t, const expect *e, int *nss,
                      int *nts)
{
    int i;

    *nss = *nts = 0;
    bad[0] = '\0';
    for (i = 0; i < t->n && !bad[0]; i++) {
        const char *l = t->line[i];
        char d[32], a[32], b[32], id[32], src[32];
        long long idesc, desc;
        int ts, n, m;

        if (!starts(l, "tcgen05.mma"))
            continue;
        {
            char want[64];
            snprintf(want, sizeof want, "tcgen05.mma.cta_group::%d.kind::%s ", e->g,
                     e->fp8 ? "f8f6f4" : "f16");
            if (!starts(l, want)) {
                snprintf(bad, bn, "line %d: %.80s (want cta_group::%d kind::%s)", i + 1, l,
                         e->g, e->fp8 ? "f8f6f4" : "f16");
                break;
            }
        }
        ts = mma_operands(l, d, a, b, id);
        if (ts < 0 || !def_imm(t, i, id, "mov.b32", &idesc, NULL, 0)) {
            snprintf(bad, bn, "line %d: instruction descriptor %s not a constant", i + 1, id);
            break;
        }
        n = (int)((idesc >> 17) & 63) * 8;
        m = (int)((idesc >> 24) & 31) * 16;
        /* formats: kind::f16 bf16 1 / f16 0; kind::f8f6f4 E4M3 0 (PTX ISA
           9.7.16.4.2); D f32 1; A K-major (bit 15) */
        if (((idesc >> 4) & 3) != 1 || ((idesc >> 7) & 7) != (e->bf16 ? 1 : 0) ||
            ((idesc >> 10) & 7) != (e->bf16 ? 1 : 0) || m != 128 * e->g || ((idesc >> 15) & 1) ||
            n != (ts ? e->pad_dv : e->bn) || ((idesc >> 16) & 1) != ts ||
            (idesc & ~0x1F7F9FB0LL) != 0) {
            snprintf(bad, bn, "line %d: idesc 0x%llx is M %d N %d, A/B format %lld/%lld, "
                     "B %s-major; want M %d N %d, %s, B %s-major, no other bit", i + 1, idesc,
                     m, n, (idesc >> 7) & 7, (idesc >> 10) & 7,
                     ((idesc >> 16) & 1) ? "MN" : "K", 128 * e->g, ts ? e->pad_dv : e->bn,
                     e->fp8 ? "e4m3" : e->bf16 ? "bf16" : "f16", ts ? "MN" : "K");
            break;
        }
        /* B's descriptor, and A's in the smem form: base | LBO | SBO | 1<<46 | layout */
        {
            const char *regs[2] = { b, a };
            int k;
            for (k = 0; k < (ts ? 1 : 2) && !bad[0]; k++) {
                const int layout = e->swizzle == 128 ? 2 : 4, sbo_want = 8 * e->swizzle;
                int lbo, sbo, want_lbo = ts ? e->bn * e->swizzle : 16;
                if (!def_imm(t, i, regs[k], "or.b64", &desc, src, sizeof src)) {
                    snprintf(bad, bn, "line %d: descriptor %s has no constant part", i + 1,
                             regs[k]);
                    break;
                }
                lbo = (int)((desc >> 16) & 0x3FFF) << 4;
                sbo = (int)((desc >> 32) & 0x3FFF) << 4;
                if (((unsigned long long)desc >> 61) != (unsigned long long)layout ||
                    sbo != sbo_want || lbo != want_lbo || !((desc >> 46) & 1))
                    snprintf(bad, bn, "line %d: %s descriptor 0x%llx: layout %llu, LBO %d, "
                             "SBO %d; want %d (%d B swizzle), LBO %d, SBO %d, version 1",
                             i + 1, k ? "A" : "B", (unsigned long long)desc,
                             (unsigned long long)desc >> 61, lbo, sbo, layout, e->swizzle,
                             want_lbo, sbo_want);
            }
        }
        if (ts)
            ++*nts;
        else
            ++*nss;
    }
}

static int count_lines(const ptx_text *t, const char *prefix);

/* What register REG, as last set before line AT, holds: 2 when four e4m3
** values packed by the conversion wrapper ("mov.b32 REG, {lo, hi}; }"
** right after "cvt.rn.satfinite.e4m3x2.f32 lo, .." and ".. hi, .."), 1
** when the constant 0 (a block no row sees), else 0. */
static int e4m3_or_zero(const ptx_text *t, int at, const char *reg)
{
    char buf[64];
    int i;

    for (i = at - 1; i >= 0; i--) {
        const char *l = t->line[i];
        if (!starts(l, "mov.b32") || strcmp(first_operand(buf, sizeof buf, l), reg) != 0)
            continue;
        if (strstr(l, ", 0;"))
            return 1;
        return strstr(l, "{lo, hi}") != NULL && i >= 2 &&
               starts(t->line[i - 1], "cvt.rn.satfinite.e4m3x2.f32 hi,") &&
               starts(t->line[i - 2], "cvt.rn.satfinite.e4m3x2.f32 lo,") ? 2 : 0;
    }
    return 0;
}

/* P's stores into TMEM.  fp8: every tcgen05.st.32x32b.x4 (P's store: 16
** e4m3 in 4 columns) stores e4m3_or_zero registers, some of them packed
** conversions, and no x8 store (the 16-bit P's) exists; 16-bit: no e4m3
** conversion and no x4 store.  Counts P stores (x4, or x8 for 16-bit)
** and e4m3 conversions. */
static void check_p(char *bad, size_t bn, const ptx_text *t, const expect *e, int *np,
                    int *ncvt)
{
    const int nx8 = count_lines(t, "tcgen05.st.sync.aligned.32x32b.x8");
    int i, packed = 0;

    *ncvt = count_lines(t, "cvt.rn.satfinite.e4m3x2.f32");
    *np = e->fp8 ? 0 : nx8;
    bad[0] = '\0';
    for (i = 0; i < t->n && !bad[0]; i++) {
        const char *l = t->line[i], *s;
        char reg[16];
        if (!starts(l, "tcgen05.st.sync.aligned.32x32b.x4"))
            continue;
        ++*np;
        if (!e->fp8) {
            snprintf(bad, bn, "line %d: a 4-column TMEM store in a 16-bit kernel", i + 1);
            break;
        }
        for (s = strchr(l, '{'); s && *s && *s != '}' && !bad[0]; s = strpbrk(s, ",}")) {
            int what;
            s++;
            if (sscanf(s, " %15[^,} ]", reg) != 1)
                break;
            if ((what = e4m3_or_zero(t, i, reg)) == 0)
                snprintf(bad, bn, "line %d: P store register %s is neither an e4m3 pack nor 0",
                         i + 1, reg);
            packed += what == 2;
        }
    }
    if (bad[0])
        return;
    if (e->fp8 && (nx8 || *ncvt < 8 || packed < 4))
        snprintf(bad, bn, "fp8: %d x8 (16-bit P) stores, %d e4m3 conversions, %d packed "
                 "registers stored", nx8, *ncvt, packed);
    else if (!e->fp8 && *ncvt)
        snprintf(bad, bn, "%d e4m3 conversions in a 16-bit kernel", *ncvt);
}

/* The label a branch line jumps to ("@%p1 bra $L__BB0_7;"), into BUF;
** NULL when LINE is not a branch.  *UNCOND: no predicate. */
static const char *branch_target(char *buf, size_t size, const char *line, int *uncond)
{
    const char *s = line, *b;
    size_t k = 0;

    *uncond = line[0] != '@';
    if (line[0] == '@')
        while (*s && !isspace((unsigned char)*s))
            s++;
    while (isspace((unsigned char)*s))
        s++;
    if (!starts(s, "bra"))
        return NULL;
    for (b = s + 3; *b && !isspace((unsigned char)*b); b++)
        ;
    while (isspace((unsigned char)*b))
        b++;
    while (*b && *b != ';' && !isspace((unsigned char)*b) && k + 1 < size)
        buf[k++] = *b++;
    buf[k] = '\0';
    return buf;
}

#define MAX_LD 256

/* What may be outstanding on entry to a PTX line, over every path. */
typedef struct flow {
    unsigned char wait;          /* an mbarrier wait with no fence::after since */
    unsigned char st;            /* 2: a tcgen05.st not waited; 1: waited, not fenced */
    unsigned char gs;            /* an st.shared with no fence.proxy.async since */
    unsigned char bulk;          /* a bulk store group not waited (wait_group.read) */
    uint64_t ld[MAX_LD / 64];    /* tcgen05.ld i (i-th in the text) not waited */
} flow;

/* Merge B into A; 1 when A grew. */
static int flow_merge(flow *a, const flow *b)
{
    int k, grew = 0;

    if (b->wait > a->wait)
        a->wait = b->wait, grew = 1;
    if (b->st > a->st)
        a->st = b->st, grew = 1;
    if (b->gs > a->gs)
        a->gs = b->gs, grew = 1;
    if (b->bulk > a->bulk)
        a->bulk = b->bulk, grew = 1;
    for (k = 0; k < MAX_LD / 64; k++)
        if ((a->ld[k] | b->ld[k]) != a->ld[k])
            a->ld[k] |= b->ld[k], grew = 1;
    return grew;
}

/*
** tcgen05.ld / st: 32x32b shapes with the register count of .xN; and, over
** every path of the control-flow graph (branches, loops): no destination
** of a load read before tcgen05.wait::ld; each store waited (wait::st) and
** fenced (fence::before_thread_sync) before any mbarrier arrive; no TMEM
** load or store after an mbarrier wait without fence::after_thread_sync
** in between; no TMA store of shared memory an st.shared wrote without
** fence.proxy.async between them (with PROXY_BEFORE_ARRIVE, no mbarrier
** arrive either: the decode mode's P, which an MMA reads); no exit with
** a bulk store group not waited on (wait_group.read).  Counts out (NTMA:
** TMA stores).
*/
static void check_ldst(char *bad, size_t bn, const ptx_text *t, int *nld, int *nst, int *ntma,
                       int proxy_before_arrive)
{
    flow *in = calloc((size_t)t->n + 1, sizeof *in);
    int *succ = malloc(sizeof *succ * 2 * ((size_t)t->n + 1));
    int *ld_of = malloc(sizeof *ld_of * ((size_t)t->n + 1));
    char (*regs)[32][16] = calloc(MAX_LD, sizeof *regs);
    int nreg[MAX_LD], i, k, changed;

    *nld = *nst = *ntma = 0;
    bad[0] = '\0';
    /* Shapes, register lists, and each line's successors. */
    for (i = 0; i < t->n && !bad[0]; i++) {
        const char *l = t->line[i];
        char label[96];
        int uncond, x = 0, n = 0;
        const char *s;

        ld_of[i] = -1;
        succ[2 * i] = i + 1;
        succ[2 * i + 1] = -1;
        if (branch_target(label, sizeof label, l, &uncond)) {
            size_t len = strlen(label);
            if (uncond)
                succ[2 * i] = -1;
            for (k = 0; k < t->n; k++)
                if (!strncmp(t->line[k], label, len) && t->line[k][len] == ':')
                    succ[2 * i + 1] = k;
        } else if (starts(l, "ret;") || starts(l, "exit;")) {
            succ[2 * i] = -1;
        }
        if (starts(l, "cp.async.bulk.tensor") && strstr(l, ".global.shared::cta"))
            ++*ntma;
        if (!starts(l, "tcgen05.ld.") && !starts(l, "tcgen05.st."))
            continue;
        if (!strstr(l, ".sync.aligned.32x32b.x") ||
            sscanf(strstr(l, ".32x32b.x") + 9, "%d", &x) != 1) {
            snprintf(bad, bn, "line %d: %.80s (want the 32x32b shape)", i + 1, l);
            break;
        }
        if (*nld >= MAX_LD) {
            snprintf(bad, bn, "more than %d tcgen05.ld", MAX_LD);
            break;
        }
        for (s = strchr(l, '{'); s && *s && *s != '}' && n < 32; ) {
            s++;
            if (sscanf(s, " %15[^,} ]", regs[*nld][n]) == 1)
                n++;
            s = strpbrk(s, ",}");
        }
        if (n != x) {
            snprintf(bad, bn, "line %d: .x%d moves %d registers here", i + 1, x, n);
            break;
        }
        if (starts(l, "tcgen05.ld.")) {
            nreg[*nld] = n;
            ld_of[i] = (*nld)++;
        } else {
            ++*nst;
        }
    }
    /* Forward may-analysis to a fixed point. */
    for (changed = !bad[0]; changed; ) {
        changed = 0;
        for (i = 0; i < t->n; i++) {
            const char *l = t->line[i];
            flow out = in[i];
            if (starts(l, "mbarrier.try_wait"))
                out.wait = 1;
            else if (starts(l, "tcgen05.fence::after_thread_sync"))
                out.wait = 0;
            else if (starts(l, "tcgen05.st."))
                out.st = 2;
            else if (starts(l, "tcgen05.wait::st") && out.st == 2)
                out.st = 1;
            else if (starts(l, "tcgen05.fence::before_thread_sync") && out.st == 1)
                out.st = 0;
            else if (starts(l, "tcgen05.wait::ld"))
                memset(out.ld, 0, sizeof out.ld);
            else if (starts(l, "st.shared"))
                out.gs = 1;
            else if (starts(l, "fence.proxy.async"))
                out.gs = 0;
            else if (starts(l, "cp.async.bulk.commit_group"))
                out.bulk = 1;
            else if (starts(l, "cp.async.bulk.wait_group.read"))
                out.bulk = 0;
            if (ld_of[i] >= 0)
                out.ld[ld_of[i] / 64] |= 1ULL << (ld_of[i] % 64);
            for (k = 0; k < 2; k++)
                if (succ[2 * i + k] >= 0 && succ[2 * i + k] < t->n)
                    changed |= flow_merge(&in[succ[2 * i + k]], &out);
        }
    }
    /* The rules, on what may reach each line. */
    for (i = 0; i < t->n && !bad[0]; i++) {
        const char *l = t->line[i];
        int q;
        if ((starts(l, "tcgen05.ld.") || starts(l, "tcgen05.st.")) && in[i].wait)
            snprintf(bad, bn, "line %d: %.60s may follow an mbarrier wait with no "
                     "tcgen05.fence::after_thread_sync", i + 1, l);
        else if (starts(l, "mbarrier.arrive") && in[i].st)
            snprintf(bad, bn, "line %d: an mbarrier arrive a tcgen05.st may reach without %s",
                     i + 1, in[i].st == 2 ? "tcgen05.wait::st"
                                          : "tcgen05.fence::before_thread_sync");
        else if (starts(l, "cp.async.bulk.tensor") && strstr(l, ".global.shared::cta") &&
                 in[i].gs)
            snprintf(bad, bn, "line %d: a TMA store an st.shared may reach without "
                     "fence.proxy.async", i + 1);
        else if (proxy_before_arrive && starts(l, "mbarrier.arrive") && in[i].gs)
            snprintf(bad, bn, "line %d: an mbarrier arrive an st.shared may reach without "
                     "fence.proxy.async (the MMA reads that memory)", i + 1);
        else if (starts(l, "ret;") && in[i].bulk)
            snprintf(bad, bn, "line %d: the kernel may exit with a bulk store group not "
                     "waited on", i + 1);
        for (q = 0; q < *nld && !bad[0]; q++) {
            if (!(in[i].ld[q / 64] >> (q % 64) & 1))
                continue;
            for (k = 0; k < nreg[q]; k++)
                if (uses_reg(l, regs[q][k])) {
                    snprintf(bad, bn, "line %d reads %s of a tcgen05.ld that may not have "
                             "been waited (tcgen05.wait::ld)", i + 1, regs[q][k]);
                    break;
                }
        }
    }
    free(in);
    free(succ);
    free(ld_of);
    free(regs);
}

/* The register holding the 1024-aligned smem base ("and.b32 %rB, %rX,
** -1024;"), into BASE; 0 when the kernel does not round its base. */
static int find_base(char base[32], const ptx_text *t)
{
    int i;

    for (i = 0; i < t->n; i++)
        if (starts(t->line[i], "and.b32") && strstr(t->line[i], ", -1024;")) {
            first_operand(base, 32, t->line[i]);
            return 1;
        }
    return 0;
}

/* The byte offset from BASE of the address register REG used on line AT
** ("add.s32 REG, BASE, off"); -1 when it is not of that form. */
static long long base_offset(const ptx_text *t, int at, const char *reg, const char *base)
{
    char src[32];
    long long off;

    if (!def_imm(t, at, reg, "add.s32", &off, src, sizeof src) || strcmp(src, base) != 0)
        return -1;
    return off;
}

/* The init count the kernel gives barrier IDX of E's map (kernel.cuh,
** enum sm100_bar): P_FULL[4] 128 per CTA of the group, C_FULL and C_EMPTY
** 128, the per-token scales' QS_FULL and KS_FULL 32 (the scale warp's
** lanes) and KS_EMPTY 128 per query tile (the CTA's softmax threads), the
** rest (TMA, commits) 1. */
static int bar_count(const expect *e, int idx)
{
    const int p_full = 2, o_full = p_full + 4, c_full = o_full + e->q_tiles;
    if (e->decode)          /* decode.cuh: P_FULL[2] at 3, 4 (the softmax WG), the rest 1 */
        return idx == 3 || idx == 4 ? 128 : 1;
    if (idx >= p_full && idx < o_full)
        return 128 * e->g;
    if (idx >= c_full && idx < c_full + 2 * e->q_tiles)
        return 128;
    if (e->scales && idx >= e->qs_bar && idx < e->qs_bar + 1 + e->ks_bufs)
        return 32;
    if (e->scales && idx >= e->qs_bar + 1 + e->ks_bufs)
        return 128 * e->q_tiles;
    return 1;
}

/* Commits: the arrive::one form of cta_group::G (G 2: multicast, mask a
** constant 3); each whose barrier resolves to base + offset lies in BAR
** and was initialised with count 1; and every barrier of BAR initialised
** once with the kernel's count (bar_count).  Counts commits and resolved
** ones. */
static void check_commits(char *bad, size_t bn, const ptx_text *t, const expect *e,
                          int *ncommit, int *nresolved)
{
    int count_of[512], i, ninit = 0;
    char base[32], want[128];

    *ncommit = *nresolved = 0;
    bad[0] = '\0';
    memset(count_of, 0, sizeof count_of);
    if (!find_base(base, t)) {
        snprintf(bad, bn, "no 1024-aligned base (and.b32 ..., -1024)");
        return;
    }
    /* The unrolled init loop: mbarrier.init [base + off], count. */
    for (i = 0; i < t->n; i++) {
        char addr[32], cnt[32];
        long long off, c;
        if (!starts(t->line[i], "mbarrier.init") ||
            sscanf(strchr(t->line[i], '['), "[%31[^]]], %31[^;]", addr, cnt) != 2)
            continue;
        off = base_offset(t, i, addr, base);
        if (off >= e->bar_off && off < e->bar_off + e->bar_size && (off - e->bar_off) / 8 < 512 &&
            def_imm(t, i, cnt, "mov.b32", &c, NULL, 0)) {
            ninit += count_of[(off - e->bar_off) / 8] == 0;
            count_of[(off - e->bar_off) / 8] = (int)c;
        }
    }
    if (ninit != e->bar_size / 8) {
        snprintf(bad, bn, "%d of the %d barriers of BAR initialised with a constant count",
                 ninit, e->bar_size / 8);
        return;
    }
    for (i = 0; i < e->bar_size / 8; i++)
        if (count_of[i] != bar_count(e, i)) {
            snprintf(bad, bn, "barrier %d initialised with count %d, the kernel's is %d", i,
                     count_of[i], bar_count(e, i));
            return;
        }
    if (e->g == 2)
        snprintf(want, sizeof want, "tcgen05.commit.cta_group::2.mbarrier::arrive::one"
                 ".shared::cluster.multicast::cluster.b64 [");
    else
        snprintf(want, sizeof want, "tcgen05.commit.cta_group::1.mbarrier::arrive::one"
                 ".shared::cluster.b64 [");
    for (i = 0; i < t->n && !bad[0]; i++) {
        const char *l = t->line[i];
        char addr[32];
        long long off;
        if (!starts(l, "tcgen05.commit"))
            continue;
        ++*ncommit;
        if (!starts(l, want)) {
            snprintf(bad, bn, "line %d: %.80s", i + 1, l);
            break;
        }
        if (e->g == 2) {
            char mask[32];
            long long m;
            if (sscanf(strchr(l, ']'), "], %31[^;]", mask) != 1 ||
                !def_imm(t, i, mask, "mov.b16", &m, NULL, 0) || m != 3) {
                snprintf(bad, bn, "line %d: multicast mask %s not the constant 3", i + 1, mask);
                break;
            }
        }
        sscanf(strchr(l, '['), "[%31[^]]]", addr);
        if ((off = base_offset(t, i, addr, base)) < 0)
            continue;              /* a ring slot's barrier, indexed at run time */
        ++*nresolved;
        if (off < e->bar_off || off >= e->bar_off + e->bar_size || off % 8 ||
            count_of[(off - e->bar_off) / 8] != 1)
            snprintf(bad, bn, "line %d commits to smem +%lld: %s", i + 1, off,
                     off < e->bar_off || off >= e->bar_off + e->bar_size || off % 8
                         ? "not a barrier of the BAR region"
                         : "a barrier not initialised with count 1");
    }
}

/* 1 when address register REG at line AT comes from "mapa.shared::cluster
** REG, x, R" with R the constant 0: the leader's copy of a barrier. */
static int mapped_to_leader(const ptx_text *t, int at, const char *reg)
{
    char buf[64], rank[32];
    long long r;
    int i;

    for (i = at - 1; i >= 0; i--) {
        const char *l = t->line[i], *c;
        if (!starts(l, "mapa.shared::cluster") || strcmp(first_operand(buf, sizeof buf, l), reg))
            continue;
        c = strrchr(l, ',');
        return c && sscanf(c + 1, " %31[^;]", rank) == 1 &&
               def_imm(t, i, rank, "mov.b32", &r, NULL, 0) && r == 0;
    }
    return 0;
}

/* The cluster side of a variant of cta_group G, "" into BAD when it holds:
** no tcgen05 instruction names the other cta_group; G 2: every TMA load
** is the cta_group::2 form completing on a barrier mapped to rank 0, the
** remote arrives (P_FULL's; at least one) release at cluster scope on
** rank 0's barriers, some wait acquires at cluster scope, the cluster
** barrier opens and closes the kernel; G 1: no cluster instruction.
** Counts TMA loads and remote arrives out. */
static void check_cluster(char *bad, size_t bn, const ptx_text *t, const expect *e,
                          int *nload, int *nremote)
{
    char other[32];
    int i, nbar = 0, nacq = 0, ncl = 0;

    *nload = *nremote = 0;
    bad[0] = '\0';
    snprintf(other, sizeof other, "cta_group::%d", 3 - e->g);
    for (i = 0; i < t->n && !bad[0]; i++) {
        const char *l = t->line[i];
        char mbar[32];
        if (starts(l, "tcgen05.") && strstr(l, other))
            snprintf(bad, bn, "line %d: %.60s names %s", i + 1, l, other);
        ncl += starts(l, "mapa.") || starts(l, "barrier.cluster") ||
               strstr(l, "%cluster_ctarank") != NULL || strstr(l, ".cluster.shared") != NULL;
        nbar += starts(l, "barrier.cluster.arrive.release.aligned") ||
                starts(l, "barrier.cluster.wait.acquire.aligned");
        nacq += starts(l, "mbarrier.try_wait.parity.acquire.cluster");
        if (starts(l, "cp.async.bulk.tensor") && strstr(l, ".global.tile.mbarrier")) {
            ++*nload;
            if (e->g == 2 && (!strstr(l, ".mbarrier::complete_tx::bytes.cta_group::2 [") ||
                              sscanf(strrchr(l, '['), "[%31[^]]]", mbar) != 1 ||
                              !mapped_to_leader(t, i, mbar)))
                snprintf(bad, bn, "line %d: a TMA load not on the leader's barrier in the "
                         "cta_group::2 form: %.80s", i + 1, l);
        }
        if (starts(l, "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [")) {
            ++*nremote;
            if (sscanf(strchr(l, '['), "[%31[^]]]", mbar) != 1 || !mapped_to_leader(t, i, mbar))
                snprintf(bad, bn, "line %d: a remote arrive not on the leader's barrier", i + 1);
        }
    }
    if (bad[0])
        return;
    if (e->g == 1 && ncl)
        snprintf(bad, bn, "%d cluster instructions in a kernel of one CTA per MMA", ncl);
    else if (e->g == 2 && (nbar != 4 || nacq < 1 || *nremote < 1))
        snprintf(bad, bn, "%d cluster barrier halves (want 4: start and end), %d cluster-scope "
                 "waits, %d remote arrives (want those of P_FULL)", nbar, nacq, *nremote);
}

/* The number of PTX lines starting with PREFIX. */
static int count_lines(const ptx_text *t, const char *prefix)
{
    int i, n = 0;
    for (i = 0; i < t->n; i++)
        n += starts(t->line[i], prefix);
    return n;
}

/* The value of "#define NAME v" in DEFS, or -1. */
static int define_of(const char *defs, const char *name)
{
    char key[96];
    const char *at;

    snprintf(key, sizeof key, "#define %s ", name);
    at = strstr(defs, key);
    return at ? atoi(at + strlen(key)) : -1;
}

/* The value of a module-scope ".u32 NAME = v;" in the PTX, or -1. */
static long long global_u32(const ptx_text *t, const char *name)
{
    char key[96];
    int i;

    snprintf(key, sizeof key, ".u32 %s = ", name);
    for (i = 0; i < t->n; i++) {
        const char *at = strstr(t->line[i], key);
        if (at)
            return strtoll(at + strlen(key), NULL, 10);
    }
    return -1;
}

/* The tcgen05.alloc and dealloc lines of cta_group G: how many of each
** (*NALLOC, *NDEALLOC) and the column count of the last (*COLS, *DCOLS;
** -1 without one). */
static void tmem_allocs(const ptx_text *t, int g, int *nalloc, int *cols, int *ndealloc,
                        int *dcols)
{
    char alloc[80], dealloc[80];
    int i;

    snprintf(alloc, sizeof alloc, "tcgen05.alloc.cta_group::%d.sync.aligned.shared::cta.b32", g);
    snprintf(dealloc, sizeof dealloc, "tcgen05.dealloc.cta_group::%d.sync.aligned.b32", g);
    *nalloc = *ndealloc = 0;
    *cols = *dcols = -1;
    for (i = 0; i < t->n; i++) {
        if (starts(t->line[i], alloc)) {
            ++*nalloc;
            *cols = atoi(strrchr(t->line[i], ',') + 1);
        } else if (starts(t->line[i], dealloc)) {
            ++*ndealloc;
            *dcols = atoi(strrchr(t->line[i], ',') + 1);
        }
    }
}

/* Compile CFG for P (layout L) to a cubin and PTX, split into T; one ok
** line naming NAME: no spills, no static shared memory, at most MAX_REGS
** registers.  1 on success (the caller frees K, *PTX and T's lines). */
static int compile_split(jit_kernel *k, char **ptx, ptx_text *t, const fa4_problem *p,
                         const fa4_config *cfg, const fa4_layout *l, const char *name,
                         int max_regs)
{
    char why[1024];
    fa4_status st = jit_compile_ptx(k, ptx, "sm_100a", p, cfg, l, why, sizeof why);

    if (!ok(st == FA4_OK && k->spill_bytes == 0 && k->regs > 0 && k->regs <= max_regs &&
            !strstr(k->log, "bytes smem"),
            "%s compiles without spills, no static smem (%d regs of %d)", name,
            st == FA4_OK ? k->regs : -1, max_regs)) {
        diag("  %s", st == FA4_OK ? k->log : why);
        if (st == FA4_OK)
            jit_kernel_free(k);
        return 0;
    }
    ptx_split(t, *ptx);
    return 1;
}

/* An nvdisasm to read SASS with, or NULL. */
static const char *nvdisasm_path(void)
{
    static char path[4096];
    const char *env = getenv("FA4_NVDISASM"), *home = getenv("CUDA_HOME");

    if (env && *env)
        return access(env, X_OK) == 0 ? env : NULL;
    snprintf(path, sizeof path, "%s/bin/nvdisasm", home && *home ? home : "/usr/local/cuda");
    return access(path, X_OK) == 0 ? path : NULL;
}

/* Count SASS opcodes of CUBIN with TOOL: MMA (the MMA opcode: UTCHMMA for
** kind::f16, UTCQMMA for kind::f8f6f4), UTCBAR, LDTM, STTM, local-memory
** accesses (LDL/STL), 2-CTA MMAs (an MMA naming 2CTA) and TMA stores
** (UTMASTG) into N[0..6]; MMAs of the other kind into N[7].  0 on
** success. */
static int sass_counts(int n[8], const char *tool, const void *cubin, size_t size,
                       const char *mma, const char *other_mma)
{
    const char *const ops[4] = { mma, "UTCBAR", "LDTM", "STTM" };
    char file[] = "/tmp/fa4-sm100-XXXXXX", cmd[4300], line[1024];
    int fd = mkstemp(file), k;
    FILE *p;

    memset(n, 0, 8 * sizeof *n);
    if (fd < 0)
        return -1;
    if (write(fd, cubin, size) != (ssize_t)size) {
        close(fd);
        unlink(file);
        return -1;
    }
    close(fd);
    snprintf(cmd, sizeof cmd, "'%s' -c '%s' 2>/dev/null", tool, file);
    if (!(p = popen(cmd, "r"))) {
        unlink(file);
        return -1;
    }
    while (fgets(line, sizeof line, p)) {
        char op[64];
        const char *s = strstr(line, "*/");
        if (!s || sscanf(s + 2, " %63s", op) != 1)
            continue;
        if (op[0] == '@' && sscanf(s + 2, " %*s %63s", op) != 1)
            continue;
        for (k = 0; k < 4; k++)
            n[k] += starts(op, ops[k]) && (op[strlen(ops[k])] == '\0' || op[strlen(ops[k])] == '.');
        n[4] += starts(op, "LDL") || starts(op, "STL");
        n[5] += starts(op, mma) && strstr(line, "2CTA") != NULL;
        n[6] += starts(op, "UTMASTG");
        n[7] += starts(op, other_mma);
    }
    k = pclose(p);
    unlink(file);
    return k;
}

/* Compile CFG for P and run every check; one ok line per behaviour. */
static void check_variant(const device_limits *dev, const fa4_problem *p, const fa4_config *cfg,
                          const char *what)
{
    char name[128], defs[8192], bad[512];
    fa4_layout l;
    jit_kernel k;
    ptx_text t = { NULL, 0 };
    char *ptx = NULL;
    expect e;
    int nss, nts, nld, nst, ntma, ncommit, nres, nload, nremote, tmem_end, np, ncvt, obox;
    const int dv = p->head_dim_v > 0 ? p->head_dim_v : p->head_dim_qk;
    int nobox;
    char relinq[80];
    const char *tool;
    char base[32];

    ct_name(name, sizeof name, "sm_100a", p, 1);
    snprintf(name + strlen(name), sizeof name - strlen(name), " %s", what);
    if (!ct_fits(&l, dev, p, cfg, name, what))
        return;
    budget_defines(defs, sizeof defs, p, cfg, &l);
    memset(&e, 0, sizeof e);
    e.bn = cfg->bn;
    e.pad_dqk = define_of(defs, "FA4_PAD_DQK");
    e.pad_dv = define_of(defs, "FA4_PAD_DV");
    e.q_tiles = define_of(defs, "FA4_Q_TILES");
    e.g = define_of(defs, "FA4_CTA_GROUP");
    e.bf16 = p->dtype == FA4_DTYPE_BF16;
    e.fp8 = p->dtype == FA4_DTYPE_FP8_E4M3;
    e.swizzle = define_of(defs, "FA4_SWIZZLE");
    e.mma_k = e.fp8 ? 32 : 16;
    e.bar_off = budget_region_find(&l, "BAR")->offset;
    e.bar_size = budget_region_find(&l, "BAR")->size;
    e.rope_chunks = define_of(defs, "FA4_ROPE_CHUNKS");
    e.scales = define_of(defs, "FA4_TOKEN_SCALES") == 1;
    e.ks_bufs = define_of(defs, "FA4_KSCALE_BUFS");
    e.qs_off = budget_region_find(&l, "QSCALE")->offset;
    e.ks_off = budget_region_find(&l, "KSCALE")->offset;
    e.ks_end = e.ks_off + budget_region_find(&l, "KSCALE")->size;
    e.qs_bar = e.bar_size / 8 - (e.scales ? 1 + 2 * e.ks_bufs : 0);
    {
        const budget_region *kr = budget_region_find(&l, cfg->fused_kv ? "KV" : "K");
        const budget_region *rr = budget_region_find(&l, "ROPE");
        e.k_off = kr ? kr->offset : 0;
        e.k_end = kr ? kr->offset + kr->size : 0;
        e.rope_off = rr ? rr->offset : 0;
        e.rope_end = rr ? rr->offset + rr->size : 0;
    }
    if (!compile_split(&k, &ptx, &t, p, cfg, &l, name, 128))
        return;

    check_mma(bad, sizeof bad, &t, &e, &nss, &nts);
    ok(!bad[0], "%s: every tcgen05.mma cta_group::%d kind::%s (A/B %s); S M%d N%d K-major, "
       "PV M%d N%d V MN-major; %d B swizzle descriptors", name, e.g,
       e.fp8 ? "f8f6f4" : "f16", e.fp8 ? "e4m3" : e.bf16 ? "bf16" : "f16", 128 * e.g, e.bn,
       128 * e.g, e.pad_dv, e.swizzle);
    if (bad[0])
        diag("  %s", bad);
    ok(nss >= e.q_tiles * e.pad_dqk / e.mma_k && nss % (e.pad_dqk / e.mma_k) == 0 &&
       nts >= e.q_tiles * e.bn / e.mma_k && nts % (e.bn / e.mma_k / 2) == 0,
       "%s: %d S MMAs in whole %d-step tiles, %d PV MMAs in whole %d-step halves (k%d)", name,
       nss, e.pad_dqk / e.mma_k, nts, e.bn / e.mma_k / 2, e.mma_k);
    {
        /* masked-tile skipping of whole MMAs: 2Q alone only (kernel.cuh,
           SM100_SKIP_UNSEEN) */
        int *succ = malloc(sizeof *succ * 2 * ((size_t)t.n + 1));
        int i, nmma = 0, nskip = 0;
        const int skip = e.q_tiles == 2 && e.g == 1;
        ptx_successors(succ, &t);
        for (i = 0; i < t.n; i++)
            if (starts(t.line[i], "tcgen05.mma")) {
                nmma++;
                nskip += mma_skippable(&t, succ, i);
            }
        free(succ);
        ok(nmma > 0 && nskip == (skip ? nmma : 0),
           "%s: %s (%d of %d MMAs can be passed between their barrier wait and the next "
           "commit)", name, skip ? "2Q alone: every S and P V MMA sits behind the tile's "
                                   "seen-block test, so unseen blocks issue none"
                                 : "every MMA is issued on each step (1Q sees every block; a "
                                   "pair's MMA covers both CTAs)", nskip, nmma);
    }
    check_p(bad, sizeof bad, &t, &e, &np, &ncvt);
    ok(!bad[0], "%s: P in TMEM as %s (%d P stores, %d e4m3 conversions)", name,
       e.fp8 ? "e4m3: every x4 store packed cvt.rn.satfinite.e4m3x2.f32 pairs or zeros, no "
               "16-bit P store" : "16-bit pairs: no e4m3 conversion, no 8-bit P store",
       np, ncvt);
    if (bad[0])
        diag("  %s", bad);

    {
        int nrope_mma, nrope_load;
        check_rope(bad, sizeof bad, &t, &e, &nrope_mma, &nrope_load);
        if (e.rope_chunks > 0)
            ok(!bad[0], "%s: rope mode: %d TMA loads put K's last %d depth box(es) in the "
               "ROPE region, and the last %d k-steps of each S tile (%d of them) read it, "
               "the first %d the ring slot", name, nrope_load, e.rope_chunks,
               e.swizzle / 32 * e.rope_chunks, nrope_mma,
               e.pad_dqk / e.mma_k - e.swizzle / 32 * e.rope_chunks);
        else
            ok(!bad[0], "%s: every S k-step and K load is in the K ring (no rope mode)", name);
        if (bad[0])
            diag("  %s", bad);
    }

    {
        int nload, nread, nwait;
        check_scales(bad, sizeof bad, &t, &e, &nload, &nread, &nwait);
        if (e.scales)
            ok(!bad[0], "%s: per-token scales: %d global loads of the Q and K scales staged "
               "in QSCALE / KSCALE, %d reads by the softmax, each after its barrier's wait "
               "on every path (%d waits), KSCALE refilled only after KS_EMPTY", name, nload,
               nread, nwait);
        else
            ok(!bad[0], "%s: no per-token scale load and no QSCALE / KSCALE access", name);
        if (bad[0])
            diag("  %s", bad);
    }

    check_ldst(bad, sizeof bad, &t, &nld, &nst, &ntma, 0);
    ok(!bad[0] && nld > 0 && nst > 0, "%s: %d tcgen05.ld / %d st of 32x32b, each load waited "
       "before use, each store waited and fenced before an arrive, every access after a wait "
       "fenced", name, nld, nst);
    if (bad[0])
        diag("  %s", bad);
    /* 16-bit O columns of a box, and the boxes of a tile: fp8, those that
       hold part of head_dim_v */
    obox = e.fp8 ? e.swizzle / 2 : 64;
    nobox = e.fp8 ? (dv + obox - 1) / obox : e.pad_dv / 64;
    ok(!bad[0] && ntma >= nobox && ntma % nobox == 0 &&
       count_lines(&t, "cp.async.bulk.commit_group") >= 1,
       "%s: the epilogue's %d TMA stores of O (whole sets of %d, one per %d columns) read "
       "shared memory fenced for the async proxy, and their group is waited on before exit",
       name, ntma, nobox, obox);

    check_commits(bad, sizeof bad, &t, &e, &ncommit, &nres);
    ok(!bad[0] && ncommit >= 2 * e.q_tiles + 2 && nres >= 2 * e.q_tiles,
       "%s: %d tcgen05.commit arrive::one%s, the %d fixed ones on count-1 barriers of BAR; "
       "every barrier's count the kernel's (P_FULL %d)", name, ncommit,
       e.g == 2 ? " multicast to both CTAs" : "", nres, 128 * e.g);
    if (bad[0])
        diag("  %s", bad);

    check_cluster(bad, sizeof bad, &t, &e, &nload, &nremote);
    if (e.g == 2)
        ok(!bad[0], "%s: pair: only cta_group::2; %d TMA loads (cta_group::2 form) and %d "
           "remote P_FULL arrive line(s) on the leader's barriers, cluster-scope release/"
           "acquire, the cluster barrier at start and end", name, nload, nremote);
    else
        ok(!bad[0], "%s: alone: only cta_group::1, no cluster instruction (%d TMA loads)",
           name, nload);
    if (bad[0])
        diag("  %s", bad);

    {
        int nalloc, ndealloc, cols, dcols;
        snprintf(relinq, sizeof relinq, "tcgen05.relinquish_alloc_permit.cta_group::%d", e.g);
        tmem_allocs(&t, e.g, &nalloc, &cols, &ndealloc, &dcols);
        tmem_end = (e.q_tiles == 2 ? l.tmem_o1 : l.tmem_o0) + e.pad_dv;
        ok(nalloc == 1 && ndealloc == 1 && cols == l.tmem_columns && dcols == cols &&
           count_lines(&t, relinq) == 1 &&
           global_u32(&t, "fa4_sm100_tmem_reach") == tmem_end && tmem_end <= cols,
           "%s: TMEM: one cta_group::%d alloc/dealloc of %d columns (budget %d), the kernel "
           "reaches column %lld (budget's map %d)", name, e.g, cols, l.tmem_columns,
           global_u32(&t, "fa4_sm100_tmem_reach"), tmem_end);
    }
    ok(global_u32(&t, "fa4_sm100_smem_reach") == l.smem_bytes && find_base(base, &t) &&
       count_lines(&t, "trap;") == 0,
       "%s: smem: the kernel's own total %lld B == the budget's request %d B; the base is "
       "rounded up to 1024 at run time, no trap", name,
       global_u32(&t, "fa4_sm100_smem_reach"), l.smem_bytes);

    if ((tool = nvdisasm_path()) != NULL) {
        /* ptxas may duplicate code (tail duplication), never drop it: at
           least as many of each as the PTX has. */
        int n[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
        int mma = count_lines(&t, "tcgen05.mma");
        const char *op = e.fp8 ? "UTCQMMA" : "UTCHMMA";     /* kind::f8f6f4 / f16 */
        int rc = sass_counts(n, tool, k.cubin, k.cubin_size, op,
                             e.fp8 ? "UTCHMMA" : "UTCQMMA");
        /* 2-CTA MMAs: none alone; a pair's SASS spelling is not asserted */
        if (!ok(rc == 0 && n[0] >= mma && n[1] >= ncommit && n[2] >= nld && n[3] >= nst &&
                n[4] == 0 && (e.g == 2 || n[5] == 0) && n[6] >= ntma && n[7] == 0,
                "%s: SASS has %d %s (none of the other kind: %d), %d UTCBAR, %d LDTM, %d STTM, "
                "%d UTMASTG (PTX %d, %d, %d, %d, %d), %d local accesses, %d 2-CTA MMAs", name,
                n[0], op, n[7], n[1], n[2], n[3], n[6], mma, ncommit, nld, nst, ntma, n[4],
                n[5]))
            diag("  nvdisasm: %s", tool);
    } else {
        skip("%s: SASS not read (no nvdisasm: set FA4_NVDISASM)", name);
    }

    free(t.line);
    free(ptx);
    jit_kernel_free(&k);
}

/*
** The decode mode's MMAs (kernels/sm100/decode.cuh): every one
** tcgen05.mma.ws.cta_group::1.kind::f16 with both operands from smem
** descriptors (no TMEM A: P goes through shared memory); its instruction
** descriptor M 32 (bits 24-28 = 2), D f32, A/B bf16 1 or f16 0, A
** K-major, and either S = Q K^T (N = BN, B K-major, A in Q, B in the K
** ring) or O += P V (N = PV_N, B MN-major, A in the P buffers, B in the V
** ring); 128 B swizzle, SBO 1024, LBO 16 (K-major) or BN x 128 (V).  ""
** into BAD when all hold; counts the two kinds.
*/
static void check_decode_mma(char *bad, size_t bn, const ptx_text *t, const expect *e,
                             const fa4_layout *l, int pv_n, int *ns, int *npv)
{
    static const char *const region[4] = { "Q", "K", "P", "V" };
    smem_roots r;
    int i;

    *ns = *npv = 0;
    bad[0] = '\0';
    if (!find_roots(&r, t)) {
        snprintf(bad, bn, "no 1024-aligned base rounded from the smem address");
        return;
    }
    for (i = 0; i < t->n && !bad[0]; i++) {
        const char *l0 = t->line[i];
        char d[32], a[32], b[32], id[32];
        long long idesc, desc, off;
        int pv, n, k;

        if (!starts(l0, "tcgen05.mma"))
            continue;
        if (!starts(l0, "tcgen05.mma.ws.cta_group::1.kind::f16 ") ||
            mma_operands(l0, d, a, b, id) != 0) {
            snprintf(bad, bn, "line %d: %.80s (want tcgen05.mma.ws.cta_group::1.kind::f16, "
                     "A and B from smem)", i + 1, l0);
            break;
        }
        if (!def_imm(t, i, id, "mov.b32", &idesc, NULL, 0)) {
            snprintf(bad, bn, "line %d: instruction descriptor %s not a constant", i + 1, id);
            break;
        }
        pv = (int)((idesc >> 16) & 1);
        n = (int)((idesc >> 17) & 63) * 8;
        if (((idesc >> 24) & 31) != 2 || ((idesc >> 4) & 3) != 1 ||
            ((idesc >> 7) & 7) != (e->bf16 ? 1 : 0) || ((idesc >> 10) & 7) != (e->bf16 ? 1 : 0) ||
            ((idesc >> 15) & 1) || n != (pv ? pv_n : e->bn) || (idesc & ~0x1F7F9FB0LL) != 0) {
            snprintf(bad, bn, "line %d: idesc 0x%llx: M %lld N %d, formats %lld/%lld, B %s-major; "
                     "want M 32, N %d, %s", i + 1, idesc, ((idesc >> 24) & 31) * 16, n,
                     (idesc >> 7) & 7, (idesc >> 10) & 7, pv ? "MN" : "K", pv ? pv_n : e->bn,
                     e->bf16 ? "bf16" : "f16");
            break;
        }
        for (k = 0; k < 2 && !bad[0]; k++) {
            const char *reg = k ? b : a;
            const budget_region *want = budget_region_find(l, region[2 * pv + k]);
            const int want_lbo = pv && k ? e->bn * 128 : 16;
            int lbo, sbo;
            if (!def_imm(t, i, reg, "or.b64", &desc, NULL, 0)) {
                snprintf(bad, bn, "line %d: descriptor %s has no constant part", i + 1, reg);
                break;
            }
            lbo = (int)((desc >> 16) & 0x3FFF) << 4;
            sbo = (int)((desc >> 32) & 0x3FFF) << 4;
            if (((unsigned long long)desc >> 61) != 2 || sbo != 1024 || lbo != want_lbo ||
                !((desc >> 46) & 1))
                snprintf(bad, bn, "line %d: %s descriptor 0x%llx: layout %llu LBO %d SBO %d; "
                         "want 2 (128 B), LBO %d, SBO 1024, version 1", i + 1, k ? "B" : "A",
                         (unsigned long long)desc, (unsigned long long)desc >> 61, lbo, sbo,
                         want_lbo);
            else if (!smem_floor(t, i, reg, &r, 0, &off) || !want ||
                     off < want->offset || off >= want->offset + want->size)
                snprintf(bad, bn, "line %d: the %s operand of %s starts at smem +%lld, not in %s",
                         i + 1, k ? "B" : "A", pv ? "P V" : "Q K^T", off, region[2 * pv + k]);
        }
        if (pv)
            ++*npv;
        else
            ++*ns;
    }
}

/* Compile the decode-mode CFG for P and read its PTX; one ok line per
** behaviour, as check_variant() does for the prefill modes. */
static void check_decode_variant(const device_limits *dev, const fa4_problem *p,
                                 const fa4_config *cfg, const char *what)
{
    char name[128], defs[8192], bad[512], base[32];
    fa4_layout l;
    jit_kernel k;
    ptx_text t = { NULL, 0 };
    char *ptx = NULL;
    expect e;
    int ns, npv, nld, nst, ntma, ncommit, nres, nload, nremote, pv_n, pieces, i;
    int nalloc, ndealloc, cols, dcols, n16 = 0, nred = 0;

    ct_name(name, sizeof name, "sm_100a", p, 1);
    snprintf(name + strlen(name), sizeof name - strlen(name), " %s", what);
    if (!ct_fits(&l, dev, p, cfg, name, what))
        return;
    budget_defines(defs, sizeof defs, p, cfg, &l);
    memset(&e, 0, sizeof e);
    e.decode = 1;
    e.bn = cfg->bn;
    e.pad_dqk = define_of(defs, "FA4_PAD_DQK");
    e.pad_dv = define_of(defs, "FA4_PAD_DV");
    e.bf16 = p->dtype == FA4_DTYPE_BF16;
    e.g = 1;
    e.q_tiles = 1;
    e.swizzle = 128;
    e.mma_k = 16;
    e.bar_off = budget_region_find(&l, "BAR")->offset;
    e.bar_size = budget_region_find(&l, "BAR")->size;
    pv_n = define_of(defs, "FA4_PV_N");
    pieces = pv_n > 0 ? e.pad_dv / pv_n : 0;
    if (!compile_split(&k, &ptx, &t, p, cfg, &l, name, 255))
        return;

    check_decode_mma(bad, sizeof bad, &t, &e, &l, pv_n, &ns, &npv);
    ok(!bad[0] && ns > 0 && ns % (e.pad_dqk / 16) == 0 && npv > 0 &&
       npv % (pieces * e.bn / 16) == 0,
       "%s: every MMA tcgen05.mma.ws.cta_group::1.kind::f16, idesc M 32; S = Q K^T N %d "
       "(%d k16 steps a block, A in Q, B in K), O += P V N %d x %d piece(s) (%d steps a "
       "block, A = P in shared memory, B = V MN-major); 128 B swizzle descriptors", name,
       e.bn, e.pad_dqk / 16, pv_n, pieces, pieces * e.bn / 16);
    if (bad[0])
        diag("  %s", bad);

    check_ldst(bad, sizeof bad, &t, &nld, &nst, &ntma, 1);
    for (i = 0; i < t.n; i++) {
        n16 += starts(t.line[i], "tcgen05.ld.sync.aligned.32x32b.x16.b32");
        nred += starts(t.line[i], "bar.sync") && strstr(t.line[i], " 1, 128;") != NULL;
    }
    ok(!bad[0] && nld > 0 && nld == n16 && nst > 0 && ntma == 0 && nred >= 1,
       "%s: %d tcgen05.ld, all 32x32b.x16 (a warp's own 32 lanes: Layout G puts a quarter of "
       "each row's columns in each sub-partition), %d st (O's rescale), each waited and "
       "fenced; P's st.shared fenced for the async proxy before every arrive; the row max "
       "exchanged over a 128-thread named barrier; O by st.global (no TMA store)", name, nld,
       nst);
    if (bad[0])
        diag("  %s", bad);

    check_commits(bad, sizeof bad, &t, &e, &ncommit, &nres);
    ok(!bad[0] && ncommit >= 6 && nres >= 1,
       "%s: %d tcgen05.commit arrive::one (S_FULL, K / V empty, O_FULL) on count-1 barriers; "
       "every barrier's count the kernel's (P_FULL 128, the rest 1)", name, ncommit);
    if (bad[0])
        diag("  %s", bad);
    check_cluster(bad, sizeof bad, &t, &e, &nload, &nremote);
    ok(!bad[0] && nload >= 3, "%s: only cta_group::1, no cluster instruction (%d TMA loads)",
       name, nload);
    if (bad[0])
        diag("  %s", bad);

    tmem_allocs(&t, 1, &nalloc, &cols, &ndealloc, &dcols);
    ok(nalloc == 1 && ndealloc == 1 && cols == l.tmem_columns && dcols == cols &&
       global_u32(&t, "fa4_sm100_tmem_reach") == l.tmem_o0 + e.pad_dv / 4 &&
       l.tmem_s1 == e.bn / 4 && l.tmem_o0 == e.bn / 2 &&
       global_u32(&t, "fa4_sm100_tmem_reach") <= cols,
       "%s: TMEM: one alloc/dealloc of %d columns (budget %d); S0, S1 of %d columns and O of "
       "%d (Layout G: N / 4 each), the kernel reaches column %lld (budget's map %d)", name,
       cols, l.tmem_columns, e.bn / 4, e.pad_dv / 4, global_u32(&t, "fa4_sm100_tmem_reach"),
       l.tmem_o0 + e.pad_dv / 4);
    ok(global_u32(&t, "fa4_sm100_smem_reach") == l.smem_bytes && find_base(base, &t) &&
       count_lines(&t, "trap;") == 0 && count_lines(&t, ".visible .entry fa4_combine(") == 1,
       "%s: smem: the kernel's own total %lld B == the budget's request %d B; base rounded "
       "at run time, no trap; fa4_combine in the module", name,
       global_u32(&t, "fa4_sm100_smem_reach"), l.smem_bytes);

    free(t.line);
    free(ptx);
    jit_kernel_free(&k);
}

/* The variants checked: the heuristic's config of each problem, with the
** overrides that reach each mode (sm100_cases.h). */
static const sm100_case variants[] = {
    { SM100_CASE("2Q fused ring", FA4_DTYPE_BF16, 128, 128, 0) },
    { SM100_CASE("2Q split rings", FA4_DTYPE_BF16, 64, 64, 1) },
    { SM100_CASE("2Q split rings, K by depth chunk", FA4_DTYPE_FP16, 128, 128, 1),
      .bn = 96, .stages = 3,
      .ring = SM100_SPLIT },
    /* rope mode: MLA's 192/128 at its automatic bn 128, 3 fused slots and
       2 ROPE buffers; 256/128 with two rope boxes per K tile */
    { SM100_CASE("2Q rope ring", FA4_DTYPE_BF16, 192, 128, 0) },
    { SM100_CASE("2Q rope ring, two rope boxes", FA4_DTYPE_FP16, 256, 128, 1),
      .bn = 64, .stages = 3,
      .ring = SM100_FUSED },
    { SM100_CASE("1Q", FA4_DTYPE_BF16, 256, 256, 0) },
    { SM100_CASE("1Q split rings, K by depth chunk", FA4_DTYPE_FP16, 256, 256, 1),
      .bn = 64, .stages = 2,
      .ring = SM100_SPLIT },
    /* CTA pairs: 2Q split rings with K by depth chunk (bn 128, 5 stages),
       1Q fused ring (d256, bn 128, 5 slots) */
    { SM100_CASE("2Q CTA pair, split rings", FA4_DTYPE_BF16, 128, 128, 1),
      .cluster = 2, .stages = 5,
      .ring = SM100_SPLIT },
    { SM100_CASE("1Q CTA pair, fused ring", FA4_DTYPE_FP16, 256, 256, 0), .cluster = 2, .bn = 128,
      .stages = 5, .ring = SM100_FUSED },
    /* fp8 e4m3 (kind::f8f6f4, P as e4m3 in TMEM, O 16-bit): the seeds' d128
       (64 B swizzle, 6 split stages, K by 2 depth chunks), 128 B swizzle
       (rows of 128 elements: one depth chunk) split and fused, 64 B fused,
       d64 (8 split stages), d96 (O's last box past head_dim_v not stored),
       d256 1Q, O in fp16, and CTA pairs */
    { SM100_CASE("2Q split rings, 64 B swizzle", FA4_DTYPE_FP8_E4M3, 128, 128, 0) },
    { SM100_CASE("2Q split rings, 128 B swizzle", FA4_DTYPE_FP8_E4M3, 128, 128, 1),
      .swizzle = 128 },
    { SM100_CASE("2Q fused ring, 128 B swizzle", FA4_DTYPE_FP8_E4M3, 128, 128, 1), .swizzle = 128,
      .stages = 5, .ring = SM100_FUSED },
    { SM100_CASE("2Q fused ring, 64 B swizzle", FA4_DTYPE_FP8_E4M3, 128, 128, 1), .swizzle = 64,
      .stages = 5, .ring = SM100_FUSED },
    { SM100_CASE("2Q d64", FA4_DTYPE_FP8_E4M3, 64, 64, 1) },
    { SM100_CASE("2Q d96 (O in 3 boxes of 32)", FA4_DTYPE_FP8_E4M3, 96, 96, 0) },
    { SM100_CASE("1Q, 64 B swizzle", FA4_DTYPE_FP8_E4M3, 256, 256, 0) },
    { SM100_CASE("1Q, 128 B swizzle, O fp16", FA4_DTYPE_FP8_E4M3, 256, 256, 0),
      .out = FA4_DTYPE_FP16,
      .swizzle = 128 },
    { SM100_CASE("2Q CTA pair, 64 B swizzle", FA4_DTYPE_FP8_E4M3, 128, 128, 1),
      .cluster = 2, .bn = 128,
      .stages = 6, .ring = SM100_SPLIT },
    { SM100_CASE("1Q CTA pair, 128 B swizzle", FA4_DTYPE_FP8_E4M3, 256, 256, 0), .cluster = 2,
      .swizzle = 128, .bn = 128, .stages = 5, .ring = SM100_FUSED },
    /* a pair's rope ring: 5 slots of 64 keys of K / 64 columns of V, 3
       ROPE buffers of 64 keys */
    { SM100_CASE("2Q CTA pair, rope ring", FA4_DTYPE_BF16, 192, 128, 1), .cluster = 2, .stages = 5,
      .ring = SM100_FUSED },
    /* per-token Q/K scales: 2Q (bn 128, the slot rule's 2 split stages),
       a rope ring, 1Q, and a CTA pair */
    { SM100_CASE("2Q per-token scales", FA4_DTYPE_BF16, 128, 128, 0), .token_scales = 1 },
    { SM100_CASE("2Q rope ring, per-token scales", FA4_DTYPE_BF16, 192, 128, 1), .token_scales = 1,
      .bn = 96, .stages = 3, .ring = SM100_FUSED },
    { SM100_CASE("1Q per-token scales", FA4_DTYPE_FP16, 256, 256, 1), .token_scales = 1 },
    /* the slot rule's 9 slots, capped to 8: 4 split stages */
    { SM100_CASE("2Q CTA pair, per-token scales", FA4_DTYPE_BF16, 128, 128, 1), .token_scales = 1,
      .cluster = 2, .stages = 4, .ring = SM100_SPLIT },
    /* fp8 with the rope mode and the per-token scales: rope rings (the
       slot rule splits these shapes, so explicit fused rings) at 64 B
       (one rope box of 64 columns: two k32 steps) and 1Q at 128 B (one
       box of 128: four k32 steps); scales beside the descales, in split
       rings and in a rope ring */
    { SM100_CASE("2Q rope ring, 64 B swizzle", FA4_DTYPE_FP8_E4M3, 192, 128, 1), .stages = 5,
      .ring = SM100_FUSED },
    { SM100_CASE("1Q rope ring, 128 B swizzle", FA4_DTYPE_FP8_E4M3, 256, 128, 0),
      .bm = 128, .q_tiles = 1,
      .bn = 192, .swizzle = 128, .stages = 5, .ring = SM100_FUSED },
    { SM100_CASE("2Q per-token scales, 64 B swizzle", FA4_DTYPE_FP8_E4M3, 128, 128, 1),
      .token_scales = 1 },
    { SM100_CASE("2Q rope ring, per-token scales, 64 B swizzle", FA4_DTYPE_FP8_E4M3, 192, 128, 0),
      .token_scales = 1, .stages = 5, .ring = SM100_FUSED },
    /* the decode mode (bm 32, tcgen05.mma.ws M 32): one token over group
       8, 4 tokens causal (32 packed rows), fp16 d64, d256 (bn 64), MLA's
       192/128 (O in pieces of N 128... padded dv 128), and explicit splits */
    { SM100_CASE("decode", FA4_DTYPE_BF16, 128, 128, 0), .tokens = 1, .group = 8 },
    { SM100_CASE("decode, 4 tokens", FA4_DTYPE_BF16, 128, 128, 1), .tokens = 4, .group = 8 },
    { SM100_CASE("decode", FA4_DTYPE_FP16, 64, 64, 0), .tokens = 1, .group = 4, .splits = 8 },
    { SM100_CASE("decode", FA4_DTYPE_BF16, 256, 256, 1), .tokens = 2, .group = 2 },
    { SM100_CASE("decode", FA4_DTYPE_BF16, 192, 128, 0), .tokens = 1, .group = 16 },
    { SM100_CASE("decode, bn 256", FA4_DTYPE_FP16, 64, 64, 1), .tokens = 3, .group = 1,
      .bn = 256, .stages = 2 },
};

int main(void)
{
    device_limits dev;
    fa4_problem p;
    fa4_config cfg;
    char why[512];
    size_t i;

    if (jit_nvrtc_version() == 0)
        skip_all("NVRTC not available");
    if (device_limits_for_arch(&dev, "sm_100a", why, sizeof why) != FA4_OK)
        skip_all("no sm_100a limits table (%s)", why);
    plan_lazy();

    for (i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        sm100_case_make(&p, &cfg, &dev, &variants[i]);
        if (cfg.bm == 32)
            check_decode_variant(&dev, &p, &cfg, variants[i].what);
        else
            check_variant(&dev, &p, &cfg, variants[i].what);
    }

    skip("sm100 kernels checked statically only; they need an sm_100 GPU to run");
    return done_testing() ? 1 : 0;
}
