/*
** rehash.c -- fa4-tune codes / rehash: keep stored winners current across
** kernel edits that leave their machine code unchanged.
**
** A winners row records the hash of the kernel sources it was tuned with
** (jit_source_hash); any edit of those sources makes the row stale, and
** lookups rank it below current rows.  An edit that leaves a row's
** compiled code byte for byte the same (a comment, another path's code, a
** refactor that compiles to the same instructions) leaves its timing as it
** was.  `codes`, run under the sources the rows were tuned with
** ($FA4_KERNEL_DIR on an old tree), prints each row's machine-code hash;
** `rehash FILE`, under the current sources, compiles every stale row
** again and gives the rows whose code matches FILE's the current source
** hash.  Rows whose code changed stay stale for `fa4-tune tune` to redo.
** No GPU: compiles for the arch of the row's device (NVRTC and ptxas).
** See fa4-tune(1).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "commands.h"
#include "config.h"
#include "db_verify.h"
#include "device.h"
#include "hash.h"
#include "jit.h"

/* One line of a codes table: a row, the sources it was compiled with, its code. */
typedef struct code_line {
    char row[17], source[17], code[17];
} code_line;

/* The identity of winners row W in a codes table: its device, family,
** source hash, key and config (the fields the database tells rows by). */
static void row_id(char out[17], const db_verify_winner *w)
{
    const int key[17] = { w->family, w->dtype, w->head_dim_qk, w->head_dim_v, w->gqa_group,
                          w->causal, w->window_left, w->window_right, w->varlen, w->paged,
                          w->page_size, w->seqlen_q_bucket, w->seqlen_k_bucket,
                          w->work_bucket, w->softcap, w->sinks, 0 };
    uint64_t h = HASH_FNV1A_INIT;

    h = hash_fnv1a(h, w->fingerprint, strlen(w->fingerprint) + 1);
    h = hash_fnv1a(h, w->source_hash, strlen(w->source_hash) + 1);
    h = hash_fnv1a(h, key, sizeof key);
    h = hash_fnv1a(h, w->config, strlen(w->config));
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* Little-endian reads from the cubin (ELF64, as NVRTC writes it). */
static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    while (n--)
        v = v << 8 | p[n];
    return v;
}

/* Hash of the machine code in CUBIN: every ".text." section's name and
** bytes, in section order (metadata, symbol tables and the notes NVRTC
** stamps are left out).  0 when the file is no ELF64 it can read. */
static uint64_t code_hash(const unsigned char *cubin, size_t size)
{
    uint64_t h = HASH_FNV1A_INIT, shoff, stroff;
    unsigned shentsize, shnum, shstrndx, i;
    int texts = 0;

    if (size < 64 || memcmp(cubin, "\177ELF", 4) != 0 || cubin[4] != 2)
        return 0;
    shoff = le(cubin + 40, 8);
    shentsize = (unsigned)le(cubin + 58, 2);
    shnum = (unsigned)le(cubin + 60, 2);
    shstrndx = (unsigned)le(cubin + 62, 2);
    if (shentsize < 64 || shstrndx >= shnum || shoff + (uint64_t)shnum * shentsize > size)
        return 0;
    stroff = le(cubin + shoff + (uint64_t)shstrndx * shentsize + 24, 8);
    for (i = 0; i < shnum; i++) {
        const unsigned char *s = cubin + shoff + (uint64_t)i * shentsize;
        const uint64_t name = stroff + le(s, 4), off = le(s + 24, 8), n = le(s + 32, 8);
        const char *nm = (const char *)cubin + name;
        if (name >= size || !memchr(nm, '\0', size - name) || strncmp(nm, ".text.", 6) != 0)
            continue;
        if (off + n > size)
            return 0;
        h = hash_fnv1a(h, nm, strlen(nm) + 1);
        h = hash_fnv1a(h, cubin + off, (size_t)n);
        texts++;
    }
    return texts ? h : 0;
}

/* Compile winner W under the sources in use and put its machine-code hash
** in CODE.  FA4_OK, or the status with WHY. */
static fa4_status winner_code(char code[17], const db_verify_winner *w, char *why, size_t wn)
{
    const char *bar = strchr(w->fingerprint, '|');
    fa4_problem p = winner_problem(w);
    device_limits dev;
    fa4_config cfg;
    fa4_layout lay;
    jit_kernel k;
    char cc[16];
    fa4_status st;
    uint64_t h;

    /* Fingerprint "name|cc|...": the row's arch from its compute capability. */
    snprintf(cc, sizeof cc, "%d", bar ? atoi(bar + 1) : 0);
    if ((st = device_limits_for_arch(&dev, cc, why, wn)) != FA4_OK ||
        (st = config_parse(&cfg, w->config, why, wn)) != FA4_OK ||
        (st = budget_fit(&lay, &dev, &p, &cfg, why, wn)) != FA4_OK ||
        (st = jit_compile(&k, dev.arch, &p, &cfg, &lay, why, wn)) != FA4_OK)
        return st;
    h = code_hash(k.cubin, k.cubin_size);
    jit_kernel_free(&k);
    if (!h) {
        snprintf(why, wn, "the compiled module has no code section this reader knows");
        return FA4_ECOMPILE;
    }
    snprintf(code, 17, "%016llx", (unsigned long long)h);
    return FA4_OK;
}

int cmd_codes(const tune_args *a, FILE *out, FILE *err)
{
    db_verify_winner *ws = NULL;
    char pathbuf[4096], why[1024], id[17], code[17];
    const char *path = tune_db_path(a, pathbuf, sizeof pathbuf, err);
    int n = 0, i, failed = 0;

    if (!path)
        return TUNE_EXIT_FAIL;
    if (db_verify_list(&ws, &n, path, NULL, why, sizeof why) != FA4_OK) {
        fprintf(err, "fa4-tune: codes: %s\n", why);
        return TUNE_EXIT_FAIL;
    }
    fprintf(out, "# fa4-tune codes: row, kernel sources, machine code (%s)\n", path);
    for (i = 0; i < n; i++) {
        const db_verify_winner *w = &ws[i];
        row_id(id, w);
        if (winner_code(code, w, why, sizeof why) != FA4_OK) {
            /* No line: rehash leaves such a row stale. */
            fprintf(err, "fa4-tune: codes: %s [%s]: %s\n", id, w->config, why);
            failed++;
            continue;
        }
        fprintf(out, "%s %s %s  %s\n", id,
                jit_source_hash((fa4_family)w->family), code, w->config);
    }
    free(ws);
    if (!a->quiet)
        fprintf(err, "codes: %d winner%s, %d compiled, %d failed\n", n, n == 1 ? "" : "s",
                n - failed, failed);
    return failed ? TUNE_EXIT_FAIL : TUNE_EXIT_OK;
}

/* Read the codes table FILE into *LINES (malloc'd) and *N. */
static int read_codes(code_line **lines, int *n, const char *file, FILE *err)
{
    FILE *f = fopen(file, "r");
    char buf[1024];
    int cap = 0;

    *lines = NULL;
    *n = 0;
    if (!f) {
        fprintf(err, "fa4-tune: rehash: cannot read %s\n", file);
        return -1;
    }
    while (fgets(buf, sizeof buf, f)) {
        code_line l;
        if (buf[0] == '#' || buf[0] == '\n')
            continue;
        if (sscanf(buf, "%16s %16s %16s", l.row, l.source, l.code) != 3 ||
            strlen(l.row) != 16 || strlen(l.source) != 16 || strlen(l.code) != 16) {
            fprintf(err, "fa4-tune: rehash: %s: not a codes table line: %.80s", file, buf);
            fclose(f);
            free(*lines);
            *lines = NULL;
            return -1;
        }
        if (*n == cap) {
            code_line *m = realloc(*lines, sizeof *m * (size_t)(cap = cap ? 2 * cap : 64));
            if (!m) {
                fclose(f);
                free(*lines);
                *lines = NULL;
                fprintf(err, "fa4-tune: rehash: out of memory\n");
                return -1;
            }
            *lines = m;
        }
        (*lines)[(*n)++] = l;
    }
    fclose(f);
    return 0;
}

int cmd_rehash(const tune_args *a, FILE *out, FILE *err)
{
    db_verify_winner *ws = NULL;
    code_line *lines = NULL;
    char pathbuf[4096], why[1024], id[17], code[17];
    const char *path = tune_db_path(a, pathbuf, sizeof pathbuf, err);
    int n = 0, nl = 0, i, j, moved = 0, changed = 0, unknown = 0, failed = 0, kept = 0;

    if (!path || read_codes(&lines, &nl, a->file, err) != 0)
        return TUNE_EXIT_FAIL;
    if (db_verify_list(&ws, &n, path, NULL, why, sizeof why) != FA4_OK) {
        fprintf(err, "fa4-tune: rehash: %s\n", why);
        free(lines);
        return TUNE_EXIT_FAIL;
    }
    for (i = 0; i < n; i++) {
        const db_verify_winner *w = &ws[i];
        const char *cur = jit_source_hash((fa4_family)w->family);
        const code_line *l = NULL;
        int moved_row = 0;
        if (!w->stale)
            continue;
        row_id(id, w);
        /* The table's line for this row, made with the sources it was tuned with. */
        for (j = 0; j < nl && !l; j++)
            if (!strcmp(lines[j].row, id) && !strcmp(lines[j].source, w->source_hash))
                l = &lines[j];
        if (!l) {
            unknown++;
            continue;
        }
        if (winner_code(code, w, why, sizeof why) != FA4_OK) {
            fprintf(err, "fa4-tune: rehash: [%s]: %s\n", w->config, why);
            failed++;
            continue;
        }
        if (strcmp(code, l->code) != 0) {
            changed++;
            if (!a->quiet)
                fprintf(out, "changed  %s\n", w->config);
            continue;
        }
        if (db_verify_relabel(path, w, cur, &moved_row, why, sizeof why) != FA4_OK) {
            fprintf(err, "fa4-tune: rehash: %s\n", why);
            failed++;
            continue;
        }
        moved += moved_row;
        kept += !moved_row;
        if (!a->quiet)
            fprintf(out, "%s  %s\n", moved_row ? "current" : "kept   ", w->config);
    }
    if (!a->quiet)
        fprintf(out, "rehash: %d stale winner%s made current (same machine code), %d with "
                "changed code left stale, %d not in %s, %d beside a current row of their "
                "key, %d failed\n", moved, moved == 1 ? "" : "s", changed, unknown, a->file,
                kept, failed);
    free(ws);
    free(lines);
    return failed ? TUNE_EXIT_FAIL : TUNE_EXIT_OK;
}
