/*
** layout.c -- the tuner's tensor layouts: sequence lengths, cu_seqlens,
** the block table of a shuffled page pool, and the row maps.  See
** layout.h.
*/
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "reference.h"
#include "layout.h"

/* Round N up to a multiple of 16 bytes (the index arrays share a block;
** int32 arrays need 4, 16 keeps each on its own vector boundary). */
static size_t align16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

/* How much shorter than the maximum MAX sequence B is, in rows: 0 for the
** first (the maxima are reached), else up to a third of MAX, spread by a
** multiplicative hash so that neighbours differ (MULT keeps Q and K
** apart where they vary independently). */
static int shortfall(int b, int max, unsigned mult)
{
    if (b == 0)
        return 0;
    return (int)(((unsigned long)b * mult + 13u) % (unsigned long)(max / 3 + 1));
}

/* Sequence lengths into L->len_q/len_k: the problem's, or ragged where
** the layout has a per-sequence length for that tensor. */
static void choose_lengths(tune_layout *l, layout_lengths lengths)
{
    int b;

    for (b = 0; b < l->batch; b++) {
        int dq = 0, dk = 0;

        if (lengths == LAYOUT_RAGGED && l->varlen)
            dq = shortfall(b, l->seqlen_q, 7919u);
        if (lengths == LAYOUT_RAGGED && (l->varlen || l->page_size))
            /* Square self-attention stays square (a causal row then sees
               the keys it would in a batch of its own length). */
            dk = l->varlen && l->seqlen_q == l->seqlen_k
                 ? dq : shortfall(b, l->seqlen_k, 104729u);
        l->len_q[b] = l->seqlen_q - dq;
        l->len_k[b] = l->seqlen_k - dk;
    }
}

/* Offsets of the packed sequences into L->cu_q/cu_k; -1 when the total
** does not fit an int32 offset. */
static int fill_offsets(tune_layout *l)
{
    long long tq = 0, tk = 0;
    int b;

    l->cu_q[0] = l->cu_k[0] = 0;
    for (b = 0; b < l->batch; b++) {
        tq += l->len_q[b];
        tk += l->len_k[b];
        if (tq > INT32_MAX || tk > INT32_MAX)
            return -1;
        l->cu_q[b + 1] = (int32_t)tq;
        l->cu_k[b + 1] = (int32_t)tk;
    }
    return 0;
}

/* The next value of a xorshift64 generator in *S. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/*
** The block table: every sequence's pages taken in turn from a shuffled
** permutation of the pool (a serving engine's pool is fragmented; pages
** in order would let a kernel pass that ignores the table), two pages
** left spare, and the entries past a sequence's last page pointing at a
** spare one (valid, never read).  The shuffle is seeded by the sizes
** only: the same problem always gets the same table.  0 or -1.
*/
static int fill_table(tune_layout *l)
{
    uint64_t s = 0x9E3779B97F4A7C15ull ^ ((uint64_t)l->batch << 32) ^
                 (uint64_t)l->seqlen_k ^ ((uint64_t)l->page_size << 20);
    int32_t *perm;
    int b, i, next = 0;
    long long pages = 2;

    for (b = 0; b < l->batch; b++)
        pages += (l->len_k[b] + l->page_size - 1) / l->page_size;
    if (pages > INT32_MAX / 2)
        return -1;
    l->num_pages = (int)pages;
    l->table = malloc((size_t)l->batch * l->table_stride * sizeof *l->table);
    if (!(perm = malloc((size_t)l->num_pages * sizeof *perm)) || !l->table) {
        free(perm);
        return -1;
    }
    for (i = 0; i < l->num_pages; i++)
        perm[i] = i;
    for (i = l->num_pages - 1; i > 0; i--) {      /* Fisher-Yates */
        int j = (int)(next_random(&s) % (uint64_t)(i + 1));
        int32_t x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    for (b = 0; b < l->batch; b++) {
        int used = (l->len_k[b] + l->page_size - 1) / l->page_size;
        for (i = 0; i < l->table_stride; i++)
            l->table[(size_t)b * l->table_stride + i] =
                i < used ? perm[next++] : perm[l->num_pages - 1];
        l->used[b] = l->len_k[b];
    }
    free(perm);
    return 0;
}

void layout_fill_sinks(float *out, int n, int seqlen_k, uint64_t *seed)
{
    double hi = log(seqlen_k > 1 ? (double)seqlen_k : 1.0) + 2.0;
    int i;

    for (i = 0; i < n; i++)
        out[i] = (float)(-2.0 + (hi + 2.0) *
                         (double)(next_random(seed) >> 11) / 9007199254740992.0);
}

/* Offsets of the index arrays within their device block. */
static void place_index(tune_layout *l)
{
    size_t off = 0, offsets = align16((size_t)(l->batch + 1) * 4);

    l->off_cu_q = l->off_cu_k = l->off_table = l->off_used = 0;
    if (l->varlen) {
        l->off_cu_q = off;
        off += offsets;
        if (!l->page_size) {
            l->off_cu_k = off;
            off += offsets;
        }
    }
    if (l->page_size) {
        l->off_table = off;
        off += align16((size_t)l->batch * l->table_stride * 4);
        l->off_used = off;
        off += align16((size_t)l->batch * 4);
    }
    if (l->sinks) {
        l->off_sinks = off;
        off += align16((size_t)l->heads_q * 4);
    }
    if (l->descale) {
        l->off_descale = off;
        off += align16(3 * l->ndescale * 4);
    }
    l->index_bytes = off;
}

int layout_build(tune_layout *l, const fa4_problem *p, layout_lengths lengths)
{
    memset(l, 0, sizeof *l);
    l->batch = p->batch;
    l->seqlen_q = p->seqlen_q;
    l->seqlen_k = p->seqlen_k;
    l->varlen = p->varlen != 0;
    l->page_size = p->page_size > 0 ? p->page_size : 0;
    l->heads_q = p->heads_q;
    l->heads_kv = p->heads_kv;
    l->head_dim_qk = p->head_dim_qk;
    l->head_dim_v = p->head_dim_v ? p->head_dim_v : p->head_dim_qk;
    l->dtype = p->dtype;
    l->out_dtype = dtype_out(p);
    l->in_bytes = dtype_bytes(l->dtype);
    l->out_bytes = dtype_bytes(l->out_dtype);
    l->len_q = malloc((size_t)l->batch * sizeof *l->len_q);
    l->len_k = malloc((size_t)l->batch * sizeof *l->len_k);
    l->cu_q = malloc((size_t)(l->batch + 1) * sizeof *l->cu_q);
    l->cu_k = malloc((size_t)(l->batch + 1) * sizeof *l->cu_k);
    l->used = malloc((size_t)l->batch * sizeof *l->used);
    if (!l->len_q || !l->len_k || !l->cu_q || !l->cu_k || !l->used)
        goto fail;
    choose_lengths(l, lengths);
    if (fill_offsets(l) != 0)
        goto fail;
    if (l->page_size) {
        int need = (l->seqlen_k + l->page_size - 1) / l->page_size;
        l->table_stride = p->block_table_stride > need ? p->block_table_stride
                                                       : need;
        if (fill_table(l) != 0)
            goto fail;
    }
    if (p->attention_sinks) {
        /* Seeded by the sizes, as the table: the same problem always gets
           the same logits. */
        uint64_t s = 0xD1B54A32D192ED03ull ^ ((uint64_t)l->heads_q << 32) ^
                     (uint64_t)l->seqlen_k;

        if (!(l->sinks = malloc((size_t)l->heads_q * sizeof *l->sinks)))
            goto fail;
        layout_fill_sinks(l->sinks, l->heads_q, l->seqlen_k, &s);
    }
    if (p->dtype == FA4_DTYPE_FP8_E4M3) {
        uint64_t s = 0x94D049BB133111EBull ^ ((uint64_t)l->batch << 32) ^
                     (uint64_t)l->heads_kv;

        l->ndescale = (size_t)l->batch * l->heads_kv;
        if (!(l->descale = malloc(3 * l->ndescale * sizeof *l->descale)))
            goto fail;
        ref_fill_descale(l->descale, 3 * l->ndescale, &s);
    }
    l->q_rows = l->varlen ? (size_t)l->cu_q[l->batch]
                          : (size_t)l->batch * l->seqlen_q;
    l->kv_rows = l->page_size ? (size_t)l->num_pages * l->page_size
               : l->varlen ? (size_t)l->cu_k[l->batch]
               : (size_t)l->batch * l->seqlen_k;
    l->nq = l->q_rows * l->heads_q * l->head_dim_qk;
    l->no = l->q_rows * l->heads_q * l->head_dim_v;
    l->nk = l->kv_rows * l->heads_kv * l->head_dim_qk;
    l->nv = l->kv_rows * l->heads_kv * l->head_dim_v;
    l->nlse = l->q_rows * l->heads_q;
    place_index(l);
    return 0;
fail:
    layout_free(l);
    return -1;
}

void layout_free(tune_layout *l)
{
    free(l->len_q);
    free(l->len_k);
    free(l->cu_q);
    free(l->cu_k);
    free(l->table);
    free(l->used);
    free(l->sinks);
    free(l->descale);
    memset(l, 0, sizeof *l);
}

size_t layout_q_row(const tune_layout *l, int b, int i)
{
    return l->varlen ? (size_t)l->cu_q[b] + i : (size_t)b * l->seqlen_q + i;
}

size_t layout_k_row(const tune_layout *l, int b, int j)
{
    if (l->page_size)
        return (size_t)l->table[(size_t)b * l->table_stride + j / l->page_size] *
               l->page_size + (size_t)(j % l->page_size);
    return l->varlen ? (size_t)l->cu_k[b] + j : (size_t)b * l->seqlen_k + j;
}

size_t layout_lse_index(const tune_layout *l, int b, int h, int i)
{
    if (l->varlen)
        return (size_t)h * l->q_rows + l->cu_q[b] + i;
    return ((size_t)b * l->heads_q + h) * l->seqlen_q + i;
}

fa4_problem layout_sequence(const tune_layout *l, const fa4_problem *p, int b)
{
    fa4_problem s = *p;

    s.batch = 1;
    s.seqlen_q = l->len_q[b];
    s.seqlen_k = l->len_k[b];
    s.varlen = 0;
    s.page_size = 0;
    s.block_table_stride = 0;
    s.num_pages = 0;
    memset(s.q_strides, 0, sizeof s.q_strides);
    memset(s.k_strides, 0, sizeof s.k_strides);
    memset(s.v_strides, 0, sizeof s.v_strides);
    memset(s.o_strides, 0, sizeof s.o_strides);
    return s;
}

void layout_gather(const tune_layout *l, int b, const void *q,
                   const void *k, const void *v, void *gq, void *gk,
                   void *gv)
{
    const size_t e = (size_t)l->in_bytes;
    size_t qw = (size_t)l->heads_q * l->head_dim_qk * e;
    size_t kw = (size_t)l->heads_kv * l->head_dim_qk * e;
    size_t vw = (size_t)l->heads_kv * l->head_dim_v * e;
    const char *cq = q, *ck = k, *cv = v;
    char *dq = gq, *dk = gk, *dv = gv;
    int i;

    for (i = 0; i < l->len_q[b]; i++)
        memcpy(dq + i * qw, cq + layout_q_row(l, b, i) * qw, qw);
    for (i = 0; i < l->len_k[b]; i++) {
        size_t row = layout_k_row(l, b, i);
        memcpy(dk + i * kw, ck + row * kw, kw);
        memcpy(dv + i * vw, cv + row * vw, vw);
    }
}

const float *layout_descale(const tune_layout *l, int which, int b)
{
    if (!l->descale)
        return NULL;
    return l->descale + (size_t)which * l->ndescale + (size_t)b * l->heads_kv;
}

void layout_index_image(const tune_layout *l, void *host)
{
    char *h = host;
    size_t offsets = (size_t)(l->batch + 1) * 4;

    memset(h, 0, l->index_bytes);
    if (l->varlen) {
        memcpy(h + l->off_cu_q, l->cu_q, offsets);
        if (!l->page_size)
            memcpy(h + l->off_cu_k, l->cu_k, offsets);
    }
    if (l->page_size) {
        memcpy(h + l->off_table, l->table,
               (size_t)l->batch * l->table_stride * 4);
        memcpy(h + l->off_used, l->used, (size_t)l->batch * 4);
    }
    if (l->sinks)
        memcpy(h + l->off_sinks, l->sinks, (size_t)l->heads_q * 4);
    if (l->descale)
        memcpy(h + l->off_descale, l->descale, 3 * l->ndescale * 4);
}

fa4_status layout_upload(CUdeviceptr *out, const tune_layout *l,
                         const cuda_api *cu, char *why, size_t why_size)
{
    char text[256];
    void *host;
    CUresult res;

    *out = 0;
    if (l->index_bytes == 0)
        return FA4_OK;
    if (!(host = malloc(l->index_bytes))) {
        snprintf(why, why_size, "out of host memory (index arrays, %zu bytes)",
                 l->index_bytes);
        return FA4_ENOMEM;
    }
    layout_index_image(l, host);
    if ((res = cu->cuMemAlloc(out, l->index_bytes)) != CUDA_SUCCESS ||
        (res = cu->cuMemcpyHtoD(*out, host, l->index_bytes)) != CUDA_SUCCESS) {
        snprintf(why, why_size, "index arrays (%zu bytes): %s", l->index_bytes,
                 cuda_error_text(res, text, sizeof text));
        if (*out)
            cu->cuMemFree(*out);
        *out = 0;
        free(host);
        return res == CUDA_ERROR_OUT_OF_MEMORY ? FA4_ENOMEM : FA4_ECUDA;
    }
    free(host);
    return FA4_OK;
}

void layout_tensors(fa4_tensors *t, const tune_layout *l, CUdeviceptr index)
{
    if (!index)
        return;
    if (l->varlen) {
        t->cu_seqlens_q = (const int32_t *)(uintptr_t)(index + l->off_cu_q);
        if (!l->page_size)
            t->cu_seqlens_k = (const int32_t *)(uintptr_t)(index + l->off_cu_k);
    }
    if (l->page_size) {
        t->block_table = (const int32_t *)(uintptr_t)(index + l->off_table);
        t->seqused_k = (const int32_t *)(uintptr_t)(index + l->off_used);
    }
    if (l->sinks)
        t->sinks = (const float *)(uintptr_t)(index + l->off_sinks);
    if (l->descale) {
        CUdeviceptr d = index + l->off_descale;
        t->q_descale = (const float *)(uintptr_t)d;
        t->k_descale = (const float *)(uintptr_t)(d + l->ndescale * 4);
        t->v_descale = (const float *)(uintptr_t)(d + 2 * l->ndescale * 4);
    }
}

char *layout_describe(const tune_layout *l, char *buf, size_t size)
{
    if (l->page_size)
        snprintf(buf, size, "%spaged %d (%d pages, shuffled)",
                 l->varlen ? "varlen Q, " : "", l->page_size, l->num_pages);
    else
        snprintf(buf, size, "%s", l->varlen ? "varlen" : "dense");
    return buf;
}
