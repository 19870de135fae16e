/*
** scheduler.cuh -- which (query tile, head, batch) a CTA computes next.
** FA4_SCHEDULER 0 (plain): one tile per CTA from the grid (m_blocks, heads_q,
** batch); causal tiles in reverse so the longest start first.
** 1 (persistent): grid (min(SMs, tiles)); CTA b walks tiles b, b + grid, ...
** with the query tile fastest (neighbouring CTAs share a head's K/V in L2).
** 2 (longest-first): persistent, tile index ordered by query tile from the
** longest (the last, under a causal mask) across all heads and batches.
** Producer and consumers walk the same static sequence independently.
*/
#ifndef FA4_SM90_SCHEDULER_CUH
#define FA4_SM90_SCHEDULER_CUH

struct fa4_tile {
    int m_block;
    int head;
    int batch;
};

/* First linear tile index of this CTA. */
FA4_DEV int sched_first(void)
{
#if FA4_SCHEDULER == 0
    return 0;
#else
    return (int)blockIdx.x;
#endif
}

/* The index after T. */
FA4_DEV int sched_next(const fa4_params &p, int t)
{
#if FA4_SCHEDULER == 0
    return 1;
#else
    return t + (int)gridDim.x;
#endif
}

/* 1 while T names a tile. */
FA4_DEV bool sched_valid(const fa4_params &p, int t)
{
#if FA4_SCHEDULER == 0
    return t == 0;
#else
    return t < p.total_tiles;
#endif
}

/* The tile with index T. */
FA4_DEV fa4_tile sched_tile(const fa4_params &p, int t)
{
    fa4_tile tile;
#if FA4_SCHEDULER == 0
    tile.m_block = FA4_CAUSAL ? p.m_blocks - 1 - (int)blockIdx.x : (int)blockIdx.x;
    tile.head = (int)blockIdx.y;
    tile.batch = (int)blockIdx.z;
#elif FA4_SCHEDULER == 1
    const int m = t % p.m_blocks, bh = t / p.m_blocks;
    tile.m_block = FA4_CAUSAL ? p.m_blocks - 1 - m : m;
    tile.head = bh % p.heads_q;
    tile.batch = bh / p.heads_q;
#else
    const int nbh = p.heads_q * p.batch;
    const int m = t / nbh, bh = t % nbh;
    tile.m_block = p.m_blocks - 1 - m;
    tile.head = bh % p.heads_q;
    tile.batch = bh / p.heads_q;
#endif
    return tile;
}

#endif
