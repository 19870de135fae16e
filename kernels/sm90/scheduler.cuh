/*
** scheduler.cuh -- which (query tile, head, batch) a CTA computes next.
** FA4_SCHEDULER 0 (plain): one tile per CTA from the grid (m_blocks, heads_q,
** batch); causal tiles in reverse so the longest start first.
** 1 (persistent): grid (min(SMs, tiles)); CTA b walks tiles b, b + grid, ...
** with the query tile fastest (neighbouring CTAs share a head's K/V in L2).
** 2 (longest-first): persistent, tile index ordered by query tile from the
** longest (the last, under a causal mask) across all heads and batches.
** 3 (dynamic): persistent, tiles in scheduler 1's order (a head's query
** tiles together, longest first under a mask), handed out one at a time
** from a global counter, so CTAs that drew short tiles take more: the
** balance of the plain grid with the overlap of the persistent ones.
** Schedulers 0-2: producer and consumers walk the same static sequence
** independently.  Scheduler 3: the producer draws the next index while the
** consumers finish the current tile and passes it to them in shared memory
** (tile_slot, published before q_full's arrival; see mainloop.cuh).
**
** Scheduler 3's counter (p.tile_counter: two u32, zero before a launch):
** [0] counts draws past the first grid's tiles, [1] counts CTAs that drew
** past the end; the last of those sets both back to 0 for the next launch.
*/
#ifndef FA4_SM90_SCHEDULER_CUH
#define FA4_SM90_SCHEDULER_CUH

#define FA4_SCHED_DYNAMIC (FA4_SCHEDULER == 3)

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

/* The index after T (the producer's draw under scheduler 3). */
FA4_DEV int sched_next(const fa4_params &p, int t)
{
#if FA4_SCHEDULER == 0
    return 1;
#elif FA4_SCHEDULER == 3
    return (int)gridDim.x + (int)atom_add_global_u32(p.tile_counter, 1u);
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

/* Scheduler 3, once per CTA after its draw past the end: the last CTA to
 * get there zeroes the counter (no CTA draws again by then). */
FA4_DEV void sched_finish(const fa4_params &p)
{
#if FA4_SCHEDULER == 3
    if (atom_add_acq_rel_global_u32(p.tile_counter + 4, 1u) == gridDim.x - 1) {
        st_global_u32(p.tile_counter, 0u);
        st_global_u32(p.tile_counter + 4, 0u);
    }
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
#elif FA4_SCHEDULER == 1 || FA4_SCHEDULER == 3
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
