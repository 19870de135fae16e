/*
** test_tune_layout.c -- the tuner's tensor layouts (tuner/layout.c)
** without a GPU: cu_seqlens as multiples of the lengths, the shuffled and
** deterministic block table of a paged pool, ragged verification
** lengths, the row maps (every (sequence, row) its own row, gathered
** back exactly as scattered), the index arrays' device image, the sink
** logits that travel with them, and the per-sequence reference agreeing
** with the dense one (sinks and softcap included).  fp8 problems: one-byte
** inputs and a 16-bit O (dtype_out), descale factors in the index block,
** the per-sequence reference applying them as the dense one does, and the
** N(0, 1) e4m3 inputs the tuner draws.
*/
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "problem.h"
#include "reference.h"
#include "dtype.h"
#include "../tuner/layout.h"

/* A resolved problem of the given sizes (bf16, d64, 4/2 heads). */
static fa4_problem make(int batch, int sq, int sk, int varlen, int page)
{
    fa4_problem p = FA4_PROBLEM_INIT;

    p.batch = batch;
    p.seqlen_q = sq;
    p.seqlen_k = sk;
    p.heads_q = 4;
    p.heads_kv = 2;
    p.head_dim_qk = 64;
    p.causal = 1;
    p.varlen = varlen;
    p.page_size = page;
    if (problem_resolve(&p, &p, NULL, 0) != FA4_OK)
        diag("test problem does not resolve");
    return p;
}

/* 1 when every key row of L belongs to at most one (sequence, key). */
static int rows_distinct(const tune_layout *l)
{
    char *seen = calloc(l->kv_rows ? l->kv_rows : 1, 1);
    int b, j, good = seen != NULL;

    for (b = 0; good && b < l->batch; b++)
        for (j = 0; good && j < l->len_k[b]; j++) {
            size_t r = layout_k_row(l, b, j);
            good = r < l->kv_rows && !seen[r];
            if (good)
                seen[r] = 1;
        }
    free(seen);
    return good;
}

static void check_full_varlen(void)
{
    fa4_problem p = make(5, 300, 300, 1, 0);
    tune_layout l;
    int b, good = 1;

    ok(layout_build(&l, &p, LAYOUT_FULL) == 0, "varlen layout builds");
    for (b = 0; b <= 5; b++)
        good &= l.cu_q[b] == b * 300 && (b == 5 || l.len_q[b] == 300);
    ok(good && l.q_rows == 1500 && l.kv_rows == 1500,
       "full varlen: cu_seqlens are multiples of 300, 1500 packed rows");
    is_int((int)layout_q_row(&l, 2, 7), 607, "query row 7 of sequence 2 is "
           "packed row 607");
    is_int((int)layout_lse_index(&l, 2, 3, 7), 3 * 1500 + 607,
           "its LSE of head 3 is at [heads_q, total_q]");
    ok(l.index_bytes == 2 * 32 && l.off_cu_k == 32,
       "index block: cu_seqlens_q and cu_seqlens_k, 16-byte aligned");
    {
        fa4_tensors t = FA4_TENSORS_INIT;
        layout_tensors(&t, &l, 0x10000);
        ok((uintptr_t)t.cu_seqlens_q == 0x10000 &&
           (uintptr_t)t.cu_seqlens_k == 0x10020 && !t.block_table &&
           !t.seqused_k, "varlen tensors get both cu_seqlens, no table");
    }
    layout_free(&l);
}

static void check_full_paged(void)
{
    fa4_problem p = make(6, 1, 1000, 0, 16);
    tune_layout l, again;
    int b, i, shuffled = 0, good = 1, fresh = 1;
    char *used;

    ok(layout_build(&l, &p, LAYOUT_FULL) == 0 &&
       layout_build(&again, &p, LAYOUT_FULL) == 0, "paged layout builds");
    is_int(l.num_pages, 6 * 63 + 2, "pool: batch x ceil(1000 / 16) pages + 2 "
           "spare");
    ok(l.table_stride == 63 && l.kv_rows == (size_t)l.num_pages * 16,
       "the table is ceil(seqlen_k / page_size) wide; K/V are the pool");
    used = calloc((size_t)l.num_pages, 1);
    for (b = 0; b < 6; b++) {
        good &= l.used[b] == 1000;
        for (i = 0; i < 63; i++) {
            int32_t pg = l.table[b * 63 + i];
            good &= pg >= 0 && pg < l.num_pages;
            fresh &= pg >= 0 && pg < l.num_pages && !used[pg];
            if (pg >= 0 && pg < l.num_pages)
                used[pg] = 1;
            shuffled |= pg != b * 63 + i;
        }
    }
    free(used);
    ok(good && fresh, "seqused_k = seqlen_k; every page in the pool, none "
       "shared");
    ok(shuffled, "pages are not assigned in order");
    ok(memcmp(l.table, again.table, (size_t)6 * 63 * 4) == 0,
       "the same problem gets the same table (deterministic)");
    ok(rows_distinct(&l), "every key row of every sequence is its own row");
    {
        fa4_tensors t = FA4_TENSORS_INIT;
        layout_tensors(&t, &l, 0x20000);
        ok(!t.cu_seqlens_q && !t.cu_seqlens_k &&
           (uintptr_t)t.block_table == 0x20000 + l.off_table &&
           (uintptr_t)t.seqused_k == 0x20000 + l.off_used &&
           l.off_used % 16 == 0,
           "paged dense-Q tensors get the table and seqused_k only");
    }
    {
        char *img = malloc(l.index_bytes);
        layout_index_image(&l, img);
        ok(memcmp(img + l.off_table, l.table, (size_t)6 * 63 * 4) == 0 &&
           memcmp(img + l.off_used, l.used, 6 * 4) == 0,
           "the device image holds the table and seqused_k");
        free(img);
    }
    layout_free(&l);
    layout_free(&again);
}

/* Ragged lengths, and the gather being the inverse of the scatter. */
static void check_ragged(void)
{
    fa4_problem p = make(7, 1000, 1000, 1, 64);
    tune_layout l;
    int b, varied = 0, good = 1;

    ok(layout_build(&l, &p, LAYOUT_RAGGED) == 0, "ragged varlen paged layout");
    ok(l.len_q[0] == 1000 && l.len_k[0] == 1000,
       "sequence 0 is at the maxima");
    for (b = 0; b < 7; b++) {
        good &= l.len_q[b] >= 1000 - 333 && l.len_q[b] <= 1000 &&
                l.len_k[b] == l.len_q[b] && l.used[b] == l.len_k[b] &&
                l.cu_q[b + 1] - l.cu_q[b] == l.len_q[b];
        varied |= l.len_q[b] != 1000;
    }
    ok(good && varied, "the others are up to a third shorter, square, with "
       "seqused_k and cu_seqlens_q following");
    ok(rows_distinct(&l), "ragged pages: every key its own row");
    {
        fa4_tensors t = FA4_TENSORS_INIT;
        layout_tensors(&t, &l, 0x30000);
        ok(t.cu_seqlens_q && !t.cu_seqlens_k && t.block_table && t.seqused_k,
           "varlen Q with paged K/V: cu_seqlens_q, the table, seqused_k");
    }
    {
        size_t kw = (size_t)l.heads_kv * l.head_dim_qk, qw = (size_t)l.heads_q * l.head_dim_qk;
        uint16_t *q = calloc(l.nq, 2), *k = calloc(l.nk, 2), *v = calloc(l.nv, 2);
        uint16_t *gq = malloc(1000 * qw * 2), *gk = malloc(1000 * kw * 2);
        uint16_t *gv = malloc(1000 * kw * 2);
        int j, x, back = 1;

        /* Write (sequence, key) into each row as laid out; read back. */
        for (b = 0; b < 7; b++)
            for (j = 0; j < l.len_k[b]; j++)
                for (x = 0; x < (int)kw; x++) {
                    k[layout_k_row(&l, b, j) * kw + x] = (uint16_t)(b * 1000 + j);
                    v[layout_k_row(&l, b, j) * kw + x] = (uint16_t)(b * 1000 + j + 1);
                }
        for (b = 0; b < 7; b++)
            for (j = 0; j < l.len_q[b]; j++)
                q[layout_q_row(&l, b, j) * qw] = (uint16_t)(b * 1000 + j);
        for (b = 0; b < 7 && back; b++) {
            layout_gather(&l, b, q, k, v, gq, gk, gv);
            for (j = 0; j < l.len_k[b]; j++)
                back &= gk[j * kw + kw - 1] == b * 1000 + j &&
                        gv[j * kw] == b * 1000 + j + 1;
            for (j = 0; j < l.len_q[b]; j++)
                back &= gq[j * qw] == b * 1000 + j;
        }
        ok(back, "a sequence gathered through cu_seqlens and the block table "
           "is the one scattered");
        free(q); free(k); free(v); free(gq); free(gk); free(gv);
    }
    layout_free(&l);

    p = make(9, 1, 1100, 0, 16);
    ok(layout_build(&l, &p, LAYOUT_RAGGED) == 0, "ragged paged decode");
    for (b = 0, good = 1, varied = 0; b < 9; b++) {
        good &= l.len_q[b] == 1 && l.len_k[b] >= 1100 - 366 &&
                l.used[b] == l.len_k[b];
        varied |= l.len_k[b] % 16 != 0;
    }
    ok(good && varied && rows_distinct(&l),
       "decode: one query row each, seqused_k ragged, last pages part-used");
    layout_free(&l);

    p = make(4, 500, 500, 0, 0);
    ok(layout_build(&l, &p, LAYOUT_RAGGED) == 0 && l.len_q[3] == 500 &&
       l.len_k[3] == 500 && l.index_bytes == 0 &&
       layout_k_row(&l, 3, 9) == 3 * 500 + 9,
       "dense stays dense: no index arrays, BSHD rows");
    layout_free(&l);
}

/* Sink logits: a float per query head in the layout and its device image,
** deterministic, spread over [-2, ln(seqlen_k) + 2); none without sinks. */
static void check_sinks(void)
{
    fa4_problem p = make(2, 300, 1000, 1, 16), plain = p;
    tune_layout l, l2;
    fa4_tensors t = FA4_TENSORS_INIT;
    char *img = NULL;
    float lo = 1e9f, hi = -1e9f;
    int h, good = 1;

    p.attention_sinks = 1;
    p.heads_q = 16;
    p.heads_kv = 2;
    ok(layout_build(&l, &p, LAYOUT_FULL) == 0 && l.sinks != NULL,
       "a layout with sinks builds, with a logit per query head");
    for (h = 0; h < 16; h++) {
        good &= l.sinks[h] >= -2.0f && l.sinks[h] < logf(1000.0f) + 2.0f;
        lo = l.sinks[h] < lo ? l.sinks[h] : lo;
        hi = l.sinks[h] > hi ? l.sinks[h] : hi;
    }
    ok(good && hi - lo > 2.0f, "the logits lie in [-2, ln(1000) + 2) and "
       "spread (%.2f .. %.2f)", lo, hi);
    ok(layout_build(&l2, &p, LAYOUT_RAGGED) == 0 && l2.sinks &&
       memcmp(l.sinks, l2.sinks, 16 * sizeof(float)) == 0,
       "the same problem gets the same logits, full or ragged");
    layout_free(&l2);
    ok(l.off_sinks % 16 == 0 && l.off_sinks >= l.off_used + 2 * 4 &&
       l.index_bytes >= l.off_sinks + 16 * 4,
       "they follow the index arrays in the device block, 16-byte aligned");
    img = malloc(l.index_bytes);
    if (img)
        layout_index_image(&l, img);
    ok(img && memcmp(img + l.off_sinks, l.sinks, 16 * sizeof(float)) == 0,
       "the device image holds them");
    free(img);
    layout_tensors(&t, &l, 0x10000);
    ok(t.sinks == (const float *)(uintptr_t)(0x10000 + l.off_sinks) &&
       t.block_table && t.cu_seqlens_q,
       "tensors.sinks points at them, beside the table and cu_seqlens_q");
    layout_free(&l);

    plain.heads_q = 16;
    plain.heads_kv = 2;
    memset(&t, 0, sizeof t);
    ok(layout_build(&l, &plain, LAYOUT_FULL) == 0 && l.sinks == NULL &&
       l.off_sinks == 0, "without sinks there are none");
    layout_tensors(&t, &l, 0x10000);
    ok(t.sinks == NULL, "and tensors.sinks stays NULL");
    layout_free(&l);

    plain = make(2, 64, 64, 0, 0);
    plain.attention_sinks = 1;
    memset(&t, 0, sizeof t);
    ok(layout_build(&l, &plain, LAYOUT_FULL) == 0 && l.index_bytes == 16 &&
       l.off_sinks == 0, "a dense problem with sinks has a block of its "
       "logits alone");
    layout_tensors(&t, &l, 0x20000);
    ok(t.sinks == (const float *)(uintptr_t)0x20000 && !t.cu_seqlens_q &&
       !t.block_table, "and only tensors.sinks set");
    layout_free(&l);
}

/* Row I of head H, batch B of the reference on Q, K, V, with the layout's
** descale factors from sequence FIRST on (none for 16-bit inputs). */
static void ref_row(double *o, double *lse, const fa4_problem *p, const tune_layout *l,
                    const void *q, const void *k, const void *v, const float *sinks,
                    int first, int b, int i, int h)
{
    ref_attention_row_scaled(o, lse, p, q, k, v, sinks, layout_descale(l, 0, first),
                             layout_descale(l, 1, first), layout_descale(l, 2, first),
                             b, i, h);
}

/* The per-sequence reference on gathered rows (one-byte ones for fp8, with
** each sequence's descale factors) is the dense reference. */
static void check_reference(fa4_dtype dtype)
{
    fa4_problem p = make(3, 70, 90, 0, 0);
    const char *name = dtype_of(dtype)->name;
    tune_layout l;
    uint64_t seed = 42;
    char *q, *k, *v, *gq, *gk, *gv;
    double a[64], b[64], c[64], la, lb, lc;
    int s, i, h, x, same = 1, back = 1, moved = 0;
    size_t e;

    p.dtype = dtype;
    p.out_dtype = 0;
    layout_build(&l, &p, LAYOUT_RAGGED);
    e = (size_t)l.in_bytes;
    q = malloc(l.nq * e); k = malloc(l.nk * e); v = malloc(l.nv * e);
    gq = malloc(70 * 4 * 64 * e); gk = malloc(90 * 2 * 64 * e); gv = malloc(90 * 2 * 64 * e);
    ref_fill_inputs(q, l.nq, p.dtype, &seed);
    ref_fill_inputs(k, l.nk, p.dtype, &seed);
    ref_fill_inputs(v, l.nv, p.dtype, &seed);
    for (s = 0; s < 3; s++) {
        fa4_problem sp = layout_sequence(&l, &p, s);
        layout_gather(&l, s, q, k, v, gq, gk, gv);
        back &= memcmp(gq, q + (size_t)s * 70 * 4 * 64 * e, 70 * 4 * 64 * e) == 0 &&
                memcmp(gv, v + (size_t)s * 90 * 2 * 64 * e, 90 * 2 * 64 * e) == 0;
        for (i = 0; i < 70; i += 23)
            for (h = 0; h < 4; h++) {
                ref_row(a, &la, &p, &l, q, k, v, NULL, 0, s, i, h);
                ref_row(b, &lb, &sp, &l, gq, gk, gv, NULL, s, 0, i, h);
                ref_attention_row_scaled(c, &lc, &sp, gq, gk, gv, NULL, NULL, NULL,
                                         NULL, 0, i, h);
                for (x = 0; x < 64; x++) {
                    same &= a[x] == b[x];
                    moved |= fabs(b[x] - c[x]) > 1e-3 * (1 + fabs(c[x]));
                }
                same &= la == lb && sp.batch == 1 && !sp.varlen &&
                        !sp.page_size && sp.dtype == dtype;
            }
    }
    ok(back, "%s: a dense sequence is gathered whole (%zu-byte elements)", name, e);
    ok(same, "%s: a sequence's reference on its gathered rows equals the dense "
       "reference (bit for bit)", name);
    if (dtype == FA4_DTYPE_FP8_E4M3)
        ok(moved, "fp8: with each sequence's descale factors, which change it");
    layout_free(&l);

    /* With sinks and softcap: the logits come from the layout. */
    p.attention_sinks = 1;
    p.softcap = 5;
    layout_build(&l, &p, LAYOUT_RAGGED);
    for (s = 0, same = 1; s < 3; s++) {
        fa4_problem sp = layout_sequence(&l, &p, s);
        layout_gather(&l, s, q, k, v, gq, gk, gv);
        same &= sp.attention_sinks == 1 && sp.softcap == 5;
        for (i = 0; i < 70; i += 23)
            for (h = 0; h < 4; h++) {
                ref_row(a, &la, &p, &l, q, k, v, l.sinks, 0, s, i, h);
                ref_row(b, &lb, &sp, &l, gq, gk, gv, l.sinks, s, 0, i, h);
                ref_row(c, &lc, &sp, &l, gq, gk, gv, NULL, s, 0, i, h);
                for (x = 0; x < 64; x++)
                    same &= a[x] == b[x];
                same &= la == lb && lb > lc;   /* the sink adds to the sum */
            }
    }
    ok(same, "%s: with sinks and softcap too, and the sink logits change LSE", name);
    free(q); free(k); free(v); free(gq); free(gk); free(gv);
    layout_free(&l);
}

/* An fp8 problem's layout: element sizes, O's dtype, the descale factors
** in the layout, its device image and the tensors. */
static void check_fp8_layout(void)
{
    fa4_problem p = make(3, 300, 500, 0, 0), bf = p;
    tune_layout l, again;
    fa4_tensors t = FA4_TENSORS_INIT;
    char *img;
    int i, good = 1, varied = 0;

    p.dtype = FA4_DTYPE_FP8_E4M3;
    p.out_dtype = 0;
    ok(layout_build(&l, &p, LAYOUT_FULL) == 0 && l.in_bytes == 1 &&
       l.out_bytes == 2 && l.dtype == FA4_DTYPE_FP8_E4M3 &&
       l.out_dtype == FA4_DTYPE_BF16,
       "fp8 layout: one-byte inputs, O in bf16 by default");
    ok(l.nq == (size_t)3 * 300 * 4 * 64 && l.no == l.nq && l.nk == (size_t)3 * 500 * 2 * 64,
       "element counts do not depend on the dtype (%zu, %zu)", l.nq, l.nk);
    ok(l.descale && l.ndescale == 3 * 2, "descale factors: batch x heads_kv "
       "(%zu) for each of Q, K, V", l.ndescale);
    for (i = 0; l.descale && i < 3 * 6; i++) {
        good &= l.descale[i] >= 0.5f && l.descale[i] < 2.0f;
        varied |= l.descale[i] != l.descale[0];
    }
    ok(good && varied, "they lie in [0.5, 2) and differ");
    ok(layout_build(&again, &p, LAYOUT_RAGGED) == 0 && again.descale &&
       memcmp(l.descale, again.descale, 18 * sizeof(float)) == 0,
       "the same problem gets the same factors, full or ragged");
    layout_free(&again);
    ok(l.off_descale % 16 == 0 && l.index_bytes == 80,
       "a dense fp8 problem's block holds the 18 factors alone (%zu bytes)",
       l.index_bytes);
    img = malloc(l.index_bytes);
    if (img)
        layout_index_image(&l, img);
    ok(img && memcmp(img + l.off_descale, l.descale, 18 * sizeof(float)) == 0,
       "the device image holds them");
    free(img);
    layout_tensors(&t, &l, 0x40000);
    ok(t.q_descale == (const float *)(uintptr_t)(0x40000 + l.off_descale) &&
       t.k_descale == (const float *)(uintptr_t)(0x40000 + l.off_descale + 24) &&
       t.v_descale == (const float *)(uintptr_t)(0x40000 + l.off_descale + 48) &&
       !t.sinks && !t.cu_seqlens_q,
       "tensors.q/k/v_descale point at Q's, K's and V's");
    ok(layout_descale(&l, 1, 2) == l.descale + 6 + 2 * 2,
       "sequence 2's K factors follow sequences 0 and 1's");
    layout_free(&l);

    p.out_dtype = FA4_DTYPE_FP16;
    p.attention_sinks = 1;
    memset(&t, 0, sizeof t);
    ok(layout_build(&l, &p, LAYOUT_FULL) == 0 && l.out_dtype == FA4_DTYPE_FP16 &&
       l.out_bytes == 2 && l.sinks && l.off_descale >= l.off_sinks + 4 * 4 &&
       l.index_bytes >= l.off_descale + 18 * 4,
       "out_dtype fp16 is kept; the factors follow the sink logits");
    layout_tensors(&t, &l, 0x40000);
    ok(t.sinks && t.q_descale && t.v_descale, "with both in the tensors");
    layout_free(&l);

    memset(&t, 0, sizeof t);
    ok(layout_build(&l, &bf, LAYOUT_FULL) == 0 && l.in_bytes == 2 &&
       l.out_bytes == 2 && !l.descale && l.index_bytes == 0 &&
       !layout_descale(&l, 0, 0),
       "bf16: two-byte elements and no factors");
    layout_tensors(&t, &l, 0);
    ok(!t.q_descale && !t.k_descale && !t.v_descale, "and no descale tensors");
    layout_free(&l);
}

/* The fp8 inputs: e4m3 values of a standard normal, no NaN; descale
** factors in [0.5, 2). */
static void check_fp8_inputs(void)
{
    enum { N = 1 << 16 };
    static uint8_t x[N];
    float d[64];
    uint64_t seed = 99;
    double sum = 0, sq = 0, big = 0;
    int i, nan = 0, good = 1;

    ref_fill_inputs(x, N, FA4_DTYPE_FP8_E4M3, &seed);
    for (i = 0; i < N; i++) {
        double f = dtype_load(x, (size_t)i, FA4_DTYPE_FP8_E4M3);
        nan += isnan(f);
        sum += f;
        sq += f * f;
        big = fabs(f) > big ? fabs(f) : big;
    }
    ok(nan == 0 && fabs(sum / N) < 0.02 && fabs(sq / N - 1) < 0.05 && big > 3 &&
       big < 6, "fp8 inputs are N(0, 1) in e4m3 (mean %.3f, variance %.3f, "
       "largest %.2f), no NaN", sum / N, sq / N, big);
    ref_fill_descale(d, 64, &seed);
    for (i = 0; i < 64; i++)
        good &= d[i] >= 0.5f && d[i] < 2.0f;
    ok(good, "descale factors lie in [0.5, 2)");
    /* The 16-bit filler on an fp8 buffer (as bench/plan_bench once used it):
       its bytes are e4m3 values, never NaN codes. */
    ref_fill_random((uint16_t *)x, N / 2, FA4_DTYPE_FP8_E4M3, &seed);
    for (i = 0, nan = 0; i < N; i++)
        nan += isnan(dtype_load(x, (size_t)i, FA4_DTYPE_FP8_E4M3));
    ok(nan == 0, "ref_fill_random on an fp8 buffer leaves no NaN byte (%d of %d)", nan, N);
}

int main(void)
{
    plan_lazy();
    check_full_varlen();
    check_full_paged();
    check_ragged();
    check_sinks();
    check_reference(FA4_DTYPE_BF16);
    check_fp8_layout();
    check_reference(FA4_DTYPE_FP8_E4M3);
    check_fp8_inputs();
    return done_testing();
}
