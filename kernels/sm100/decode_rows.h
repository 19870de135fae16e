/*
** sm100/decode_rows.h -- the decode mode's index math (sm100/decode.cuh):
** which (query token, query head) each of a CTA's 32 packed rows holds,
** and which key blocks a KV split visits.  Shared by the kernel (NVRTC)
** and the host (lib/launch_sm100.c sizes the grid from it;
** tests/test_sm100_mask.c checks it against every (token, head) pair), so
** plain C integer arithmetic only.
**
** PG is the number of query heads packed into a tile's rows: the GQA
** group (heads_q / heads_kv) with pack_gqa, else 1.  A tile holds H =
** min(PG, 32) heads of T = 32 / H tokens: packed row r is token t = r / H
** and head h = r % H of the tile (row-major, as the sm80 family packs),
** so the 4-D TMA box {64, H, T, 1} over Q's {dim, heads, seq, batch}
** lands each row where the MMA reads it.  Rows T H .. 31 hold nothing
** (PG 3: 10 tokens x 3 heads = 30 rows).  A group of more than 32 heads
** is cut into ceil(PG / H) head chunks, each a tile; the last chunk's
** heads past PG (the next KV head's, or past heads_q) are loaded but
** never stored.  Tile m is token block m / chunks, head chunk m % chunks.
*/
#ifndef FA4_SM100_DECODE_ROWS_H
#define FA4_SM100_DECODE_ROWS_H

#include "sm100/blocks.h"          /* SM100_HD */

#define SM100_DECODE_ROWS 32       /* M of tcgen05.mma.ws: packed rows of a CTA */

/* Heads of the group a tile holds: min(PG, 32). */
SM100_HD int sm100_decode_heads(int pg)
{
    return pg < SM100_DECODE_ROWS ? pg : SM100_DECODE_ROWS;
}

/* Tokens a tile holds: 32 / heads (1 for a group of 32 or more). */
SM100_HD int sm100_decode_tokens(int pg)
{
    return SM100_DECODE_ROWS / sm100_decode_heads(pg);
}

/* Head chunks a group of PG heads is cut into (1 up to 32 heads). */
SM100_HD int sm100_decode_chunks(int pg)
{
    const int h = sm100_decode_heads(pg);
    return (pg + h - 1) / h;
}

/* Tiles over SEQLEN_Q tokens: token blocks times head chunks (the grid's x). */
SM100_HD int sm100_decode_m_tiles(int seqlen_q, int pg)
{
    const int t = sm100_decode_tokens(pg);
    return (seqlen_q + t - 1) / t * sm100_decode_chunks(pg);
}

/* The first token of tile M and the first head of the group it holds. */
SM100_HD int sm100_decode_token0(int m, int pg)
{
    return m / sm100_decode_chunks(pg) * sm100_decode_tokens(pg);
}
SM100_HD int sm100_decode_head0(int m, int pg)
{
    return m % sm100_decode_chunks(pg) * sm100_decode_heads(pg);
}

/* Packed row R (0..31) of tile M: its token (*TOKEN) and head in the
** group (*HEAD, 0..PG-1 when it holds one); 1 when the row holds a
** (token, head) of the problem, 0 when it holds nothing. */
SM100_HD int sm100_decode_row(int m, int r, int seqlen_q, int pg, int *token, int *head)
{
    const int h = sm100_decode_heads(pg), t = r / h;

    *token = sm100_decode_token0(m, pg) + t;
    *head = sm100_decode_head0(m, pg) + r % h;
    return t < sm100_decode_tokens(pg) && *token < seqlen_q && *head < pg;
}

/* The key blocks split SPLIT of SPLITS visits of the tile's visited blocks
** [BEGIN, END): ceil((END - BEGIN) / SPLITS) consecutive ones (the sm80
** family's rule), [*LO, *HI); empty (*LO == *HI) for a split past the
** end.  SPLITS 1: all of them. */
SM100_HD void sm100_split_range(int begin, int end, int split, int splits, int *lo, int *hi)
{
    int per, first;

    *lo = begin;
    *hi = end;
    if (splits <= 1 || end <= begin)
        return;
    per = (end - begin + splits - 1) / splits;
    first = begin + split * per;
    *lo = first < end ? first : end;
    *hi = first + per < end ? first + per : end;
}

#endif
