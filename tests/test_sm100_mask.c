/*
** test_sm100_mask.c -- masked-tile skipping of the sm100 kernel: the loop
** bounds of kernels/sm100/blocks.h (which key blocks a CTA or a query tile
** visits, and which of them need no per-element mask) against every
** (row, key) pair of FlashAttention's bottom-right aligned causal and
** sliding-window masks, on fixed cases and on random ones from a printed
** seed; which steps of a 2Q CTA's loop each query tile issues MMAs for
** (the blocks its rows see) and where its O starts.  And the decode
** mode's packing and splits (kernels/sm100/
** decode_rows.h): every (token, head) of every group size held by
** exactly one packed row, whose place is the TMA box's, and every key
** block visited by exactly one split.  The kernel runs these functions as
** they are here; nothing runs on a GPU.
*/
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "sm100/blocks.h"
#include "sm100/decode_rows.h"

/* The kernel's per-element rule (kernels/sm100/kernel.cuh, key_visible). */
static int visible(int row, int key, int seqlen_q, int seqlen_k, int wl, int wr)
{
    int d = row + seqlen_k - seqlen_q;

    if (key >= seqlen_k)
        return 0;
    if (wl >= 0 && key < d - wl)
        return 0;
    if (wr >= 0 && key > d + wr)
        return 0;
    return 1;
}

/* Compare sm100_block_range() with every pair; "" into BAD when block b
** is visited exactly when some row sees one of its keys, and mask-free
** exactly when every row sees all of them. */
static void check_case(char *bad, size_t n, int row0, int rows, int sq, int sk, int wl,
                       int wr, int bn)
{
    const sm100_blocks b = sm100_block_range(row0, rows, sq, sk, wl, wr, bn);
    const int last = row0 + rows < sq ? row0 + rows : sq;
    int blk, r, k;

    bad[0] = '\0';
    if (b.begin > b.end || b.full_begin > b.full_end ||
        (b.full_end > b.full_begin && (b.full_begin < b.begin || b.full_end > b.end))) {
        snprintf(bad, n, "ranges [%d, %d) full [%d, %d) out of order", b.begin, b.end,
                 b.full_begin, b.full_end);
        return;
    }
    for (blk = 0; blk <= (sk + bn - 1) / bn && !bad[0]; blk++) {
        int any = 0, all = last > row0;
        for (r = row0; r < last; r++)
            for (k = blk * bn; k < blk * bn + bn; k++) {
                int v = visible(r, k, sq, sk, wl, wr);
                any |= v;
                all &= v;
            }
        if (any != (blk >= b.begin && blk < b.end))
            snprintf(bad, n, "block %d: %s row sees a key, visited range [%d, %d)", blk,
                     any ? "a" : "no", b.begin, b.end);
        else if (all != (blk >= b.full_begin && blk < b.full_end))
            snprintf(bad, n, "block %d: %s seen whole, full range [%d, %d)", blk,
                     all ? "is" : "not", b.full_begin, b.full_end);
    }
}

/* 2Q mode alone: the CTA of rows [ROW0, ROW0 + 256) loops over its blocks
** and each query tile of 128 issues S and P V only for the blocks its
** rows see (sm100_block_seen) and starts O at sm100_first_seen.  "" into
** BAD when, for both tiles, the blocks they see lie in the CTA's loop, a
** step is seen exactly when some row of the tile sees a key of its block,
** and the first seen step is the first such step (n when none); counts
** the steps (of both tiles) whose MMAs are skipped into *SKIPPED. */
static void check_tiles(char *bad, size_t n, int row0, int sq, int sk, int wl, int wr, int bn,
                        int *skipped)
{
    const sm100_blocks cta = sm100_block_range(row0, 256, sq, sk, wl, wr, bn);
    const int steps = cta.end - cta.begin;
    int i, j, r, k;

    bad[0] = '\0';
    for (i = 0; i < 2 && !bad[0]; i++) {
        const int t0 = row0 + 128 * i, last = t0 + 128 < sq ? t0 + 128 : sq;
        const sm100_blocks t = sm100_block_range(t0, 128, sq, sk, wl, wr, bn);
        const int first = sm100_first_seen(t, cta.begin, steps);
        int want_first = steps;
        if (t.begin < t.end && (t.begin < cta.begin || t.end > cta.end)) {
            snprintf(bad, n, "tile %d sees blocks [%d, %d) outside the CTA's [%d, %d)", i,
                     t.begin, t.end, cta.begin, cta.end);
            break;
        }
        for (j = 0; j < steps && !bad[0]; j++) {
            const int blk = cta.begin + j;
            int any = 0;
            for (r = t0; r < last && !any; r++)
                for (k = blk * bn; k < blk * bn + bn && !any; k++)
                    any = visible(r, k, sq, sk, wl, wr);
            if (any != sm100_block_seen(t, blk))
                snprintf(bad, n, "tile %d step %d (block %d): %s row sees a key, seen says %d",
                         i, j, blk, any ? "a" : "no", sm100_block_seen(t, blk));
            if (any && want_first == steps)
                want_first = j;
            *skipped += !any;
        }
        if (!bad[0] && first != want_first)
            snprintf(bad, n, "tile %d: first seen step %d, want %d of %d", i, first,
                     want_first, steps);
    }
}

/* The decode packing for PG heads a tile and SEQLEN_Q tokens; "" into BAD
** when every (token, head in group) is held by exactly one row of one of
** the m_tiles tiles, a row holding one is the place the TMA box {64, H,
** T, 1} at (first head, first token) puts it (row t H + h for token
** token0 + t, head head0 + h), and the box stays within 32 rows. */
static void check_packing(char *bad, size_t n, int seqlen_q, int pg)
{
    const int tiles = sm100_decode_m_tiles(seqlen_q, pg);
    const int h = sm100_decode_heads(pg), t = sm100_decode_tokens(pg);
    static unsigned char seen[64 * 160];
    int m, r, token, head;

    bad[0] = '\0';
    memset(seen, 0, sizeof seen);
    if (h * t > SM100_DECODE_ROWS || h < 1 || t < 1) {
        snprintf(bad, n, "box of %d heads x %d tokens", h, t);
        return;
    }
    for (m = 0; m < tiles && !bad[0]; m++)
        for (r = 0; r < SM100_DECODE_ROWS && !bad[0]; r++) {
            const int held = sm100_decode_row(m, r, seqlen_q, pg, &token, &head);
            const int box = r < h * t;
            if (held && (!box || token != sm100_decode_token0(m, pg) + r / h ||
                         head != sm100_decode_head0(m, pg) + r % h))
                snprintf(bad, n, "tile %d row %d holds (%d, %d), the box puts (%d, %d) there",
                         m, r, token, head, sm100_decode_token0(m, pg) + r / h,
                         sm100_decode_head0(m, pg) + r % h);
            else if (held && (token < 0 || token >= seqlen_q || head < 0 || head >= pg))
                snprintf(bad, n, "tile %d row %d holds (%d, %d), outside %d x %d", m, r,
                         token, head, seqlen_q, pg);
            else if (held && seen[token * pg + head]++)
                snprintf(bad, n, "(%d, %d) held twice", token, head);
        }
    for (token = 0; token < seqlen_q && !bad[0]; token++)
        for (head = 0; head < pg && !bad[0]; head++)
            if (!seen[token * pg + head])
                snprintf(bad, n, "(%d, %d) held by no row of the %d tiles", token, head, tiles);
}

/* Splits of the blocks [BEGIN, END); "" into BAD when each block is in
** exactly one split's range, the ranges in order and at most ceil(n /
** splits) long. */
static void check_splits(char *bad, size_t n, int begin, int end, int splits)
{
    int s, blk, lo, hi, count[64] = { 0 };
    const int per = end > begin ? (end - begin + splits - 1) / splits : 0;

    bad[0] = '\0';
    for (s = 0; s < splits && !bad[0]; s++) {
        sm100_split_range(begin, end, s, splits, &lo, &hi);
        if (lo > hi || lo < begin || hi > end || (splits > 1 && hi - lo > per))
            snprintf(bad, n, "split %d of %d: [%d, %d) of [%d, %d)", s, splits, lo, hi,
                     begin, end);
        for (blk = lo; blk < hi && !bad[0]; blk++)
            count[blk]++;
    }
    for (blk = begin; blk < end && !bad[0]; blk++)
        if (count[blk] != 1)
            snprintf(bad, n, "block %d in %d splits of %d", blk, count[blk], splits);
}

/* A sequence length in 1..577: half of them on a multiple of 64 or one
** off it, where block and window edges meet. */
static int length(void)
{
    int n = 64 * (1 + rand() % 9) + rand() % 3 - 1;
    return rand() % 2 ? n : 1 + rand() % 577;
}

/* A window bound: one of 0..299, or near a multiple of 64. */
static int bound(void)
{
    return rand() % 2 ? rand() % 300 : 64 * (rand() % 5) + rand() % 3 - 1 + 1;
}

int main(void)
{
    static const int bns[] = { 64, 96, 128, 192, 256 };
    char bad[256] = "";
    unsigned seed;
    sm100_blocks b;
    int i, done = 0;

    plan_lazy();
    seed = tap_seed();
    srand(seed);

    /* causal, seqlen 1000, bn 128, the CTA of rows 0..255 (2Q) */
    b = sm100_block_range(0, 256, 1000, 1000, -1, 0, 128);
    ok(b.begin == 0 && b.end == 2, "causal 1000/1000 bn 128: the CTA of rows 0..255 "
       "visits blocks [0, 2)");
    b = sm100_block_range(0, 128, 1000, 1000, -1, 0, 128);
    ok(b.begin == 0 && b.end == 1 && b.full_begin == b.full_end,
       "its first query tile (rows 0..127) visits block 0 only, and masks it");
    b = sm100_block_range(128, 128, 1000, 1000, -1, 0, 128);
    ok(b.begin == 0 && b.end == 2 && b.full_begin == 0 && b.full_end == 1,
       "its second (rows 128..255) sees block 0 whole and masks block 1");
    b = sm100_block_range(768, 256, 1000, 1000, -1, 0, 128);
    ok(b.begin == 0 && b.end == 8 && b.full_begin == 0 && b.full_end == 6,
       "the last CTA (rows 768..999) visits [0, 8), [0, 6) without a mask");
    /* no mask: only the ragged tail needs one */
    b = sm100_block_range(0, 256, 300, 500, -1, -1, 128);
    ok(b.begin == 0 && b.end == 4 && b.full_begin == 0 && b.full_end == 3,
       "unmasked 300/500 bn 128: blocks [0, 4), the tail block 3 masked");
    /* a sliding window skips blocks on both sides */
    b = sm100_block_range(2048, 128, 4096, 4096, 256, 0, 128);
    ok(b.begin == 14 && b.end == 17 && b.full_begin == 15 && b.full_end == 16,
       "window (256, 0) at rows 2048..2175: blocks [14, 17), only block 15 without a mask");
    /* seqlen_q > seqlen_k: the first rows see nothing */
    b = sm100_block_range(0, 128, 1000, 200, -1, 0, 64);
    ok(b.begin == b.end, "causal 1000/200: rows 0..127 see no key (aligned bottom-right), "
       "no block visited");
    b = sm100_block_range(1024, 128, 1000, 1000, -1, -1, 128);
    ok(b.begin == b.end, "a tile past seqlen_q visits nothing");

    /* 2Q alone: a tile's MMAs only for the blocks it sees */
    {
        const sm100_blocks t0 = sm100_block_range(0, 128, 1000, 1000, -1, 0, 128);
        const sm100_blocks t1 = sm100_block_range(128, 128, 1000, 1000, -1, 0, 128);
        ok(sm100_block_seen(t0, 0) && !sm100_block_seen(t0, 1) && sm100_block_seen(t1, 1) &&
           sm100_first_seen(t0, 0, 2) == 0 && sm100_first_seen(t1, 0, 2) == 0,
           "causal 1000/1000 bn 128, rows 0..255: tile 0 issues block 0 only (1 of the 4 "
           "S / P V steps skipped), tile 1 both, each starting O at step 0");
    }
    {
        const sm100_blocks cta = sm100_block_range(2048, 256, 4096, 4096, 256, 0, 128);
        const sm100_blocks t1 = sm100_block_range(2176, 128, 4096, 4096, 256, 0, 128);
        ok(cta.begin == 14 && cta.end == 18 && !sm100_block_seen(t1, 14) &&
           sm100_first_seen(t1, cta.begin, cta.end - cta.begin) == 1,
           "window (256, 0), rows 2048..2303: the CTA loops over [14, 18), tile 1 skips block "
           "14 and starts its O at step 1 (its first P V overwrites)");
        b = sm100_block_range(1024, 128, 1000, 1000, -1, 0, 128);
        ok(sm100_first_seen(b, 0, 8) == 8, "a tile past seqlen_q sees no step: first = n "
           "(its O is stored as zeros)");
    }
    {
        int k, skipped = 0, cases = 0;
        for (k = 0; k < 600 && !bad[0]; k++) {
            const int sq = length(), sk = length(), bn = bns[rand() % 5];
            const int row0 = 256 * (rand() % ((sq + 255) / 256 + 1));
            int wl = -1, wr = rand() % 3 ? 0 : -1;
            if (rand() % 3 == 0) {
                wl = bound();
                wr = rand() % 2 ? bound() : wr;
            }
            check_tiles(bad, sizeof bad, row0, sq, sk, wl, wr, bn, &skipped);
            if (bad[0])
                diag("  rows %d+256, seqlen %d/%d, window (%d, %d), bn %d: %s", row0, sq, sk,
                     wl, wr, bn, bad);
            cases++;
        }
        ok(!bad[0] && skipped > 0, "%d random 2Q CTAs: each tile issues S and P V exactly for "
           "the steps whose block some row of it sees (%d steps skipped), all within the CTA's "
           "loop, its O starting at the first of them", cases, skipped);
    }

    /* the decode mode's packed rows (kernels/sm100/decode_rows.h) */
    ok(sm100_decode_heads(8) == 8 && sm100_decode_tokens(8) == 4 &&
       sm100_decode_m_tiles(4, 8) == 1 && sm100_decode_m_tiles(5, 8) == 2,
       "group 8: 8 heads x 4 tokens a tile; 4 tokens take one tile, 5 two");
    ok(sm100_decode_heads(3) == 3 && sm100_decode_tokens(3) == 10 &&
       sm100_decode_m_tiles(1, 1) == 1 && sm100_decode_tokens(1) == 32,
       "group 3: 10 tokens (30 rows); group 1: 32 tokens of one head");
    ok(sm100_decode_heads(48) == 32 && sm100_decode_chunks(48) == 2 &&
       sm100_decode_m_tiles(2, 48) == 4 && sm100_decode_head0(3, 48) == 32 &&
       sm100_decode_token0(3, 48) == 1,
       "group 48: two head chunks of 32, tile 3 = token 1, heads 32..");
    {
        int pg, sq;
        for (pg = 1; pg <= 64 && !bad[0]; pg++)
            for (sq = 1; sq <= 160 / (pg > 32 ? 2 : 1) && !bad[0]; sq++) {
                check_packing(bad, sizeof bad, sq, pg);
                if (bad[0])
                    diag("  group %d, %d tokens: %s", pg, sq, bad);
            }
        ok(!bad[0], "every group of 1..64 heads and 1..160 tokens (80 over 32 heads): each "
           "(token, head) in exactly one packed row, where the TMA box puts it");
    }
    {
        int b, e, sp;
        for (b = 0; b < 8 && !bad[0]; b++)
            for (e = b; e < 40 && !bad[0]; e++)
                for (sp = 1; sp <= 20 && !bad[0]; sp++) {
                    check_splits(bad, sizeof bad, b, e, sp);
                    if (bad[0])
                        diag("  blocks [%d, %d), %d splits: %s", b, e, sp, bad);
                }
        ok(!bad[0], "splits 1..20 of every block range [b, e) within 40 blocks: each block "
           "in exactly one split, none longer than ceil(n / splits)");
    }

    for (i = 0; i < 1500 && !bad[0]; i++) {
        const int sq = length(), sk = length();
        const int rows = rand() % 2 ? 128 : 256, bn = bns[rand() % 5];
        const int row0 = rows * (rand() % ((sq + rows - 1) / rows + 1));
        int wl = -1, wr = -1;
        switch (rand() % 4) {
        case 0: break;                                   /* none */
        case 1: wr = 0; break;                           /* causal */
        case 2: wl = bound(); wr = bound(); break;
        case 3: wl = bound(); break;
        }
        check_case(bad, sizeof bad, row0, rows, sq, sk, wl, wr, bn);
        if (bad[0])
            diag("  rows %d+%d, seqlen %d/%d, window (%d, %d), bn %d: %s", row0, rows, sq,
                 sk, wl, wr, bn, bad);
        done++;
    }
    ok(!bad[0], "%d random cases: every block is visited exactly when some row sees a key "
       "of it, and unmasked exactly when every row sees all of it", done);
    return done_testing() ? 1 : 0;
}
