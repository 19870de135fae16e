/*
** scheduler.cuh -- which (query tile, head, batch) a CTA computes next.
** FA4_SCHEDULER 0 (plain): one tile per CTA from the grid (m_blocks, heads,
** batch), heads_q or with packed GQA heads_kv (seqlen.cuh); causal tiles
** in reverse so the longest start first.  With the tail split
** (FA4_TAIL_SPLIT, tail.cuh) the grid is 1-D in the same order, the last
** wave's tiles in parts after the whole ones.
** 1 (persistent): grid (min(SMs, tiles)); CTA b walks tiles b, b + grid, ...
** with the query tile fastest (neighbouring CTAs share a head's K/V in L2).
** 2 (longest-first): persistent, tile index ordered by query tile from the
** longest (the last, under a causal mask) across all heads and batches.
** 3 (dynamic): persistent, tiles in scheduler 1's order (a head's query
** tiles together, longest first under a mask), handed out one at a time
** from a global counter, so CTAs that drew short tiles take more: the
** balance of the plain grid with the overlap of the persistent ones.
** FA4_HEAD_GROUP G (causal dense batches, schedulers 0 and 3, where
** budget_sm90.c says): the tiles of G heads at a time, longest first with
** the group's heads fastest, so the last heads' longest tiles do not start
** last; the plain grid is then (G x m_blocks, heads / G, batch).
** Schedulers 0-2: producer and consumers walk the same static sequence
** independently.  Scheduler 3: the producer draws the next index while the
** consumers finish the current tile and passes it to them in shared memory
** (tile_slot, published before q_full's arrival; see mainloop.cuh).
**
** Varlen batches (FA4_VARLEN) run under scheduler 0 or 3.  Plain: the grid
** is sized for the longest sequence and CTAs past their sequence's tiles
** exit at once.  Dynamic: tile T is found by walking cu_seqlens_q
** (sequence b holds FA4_GRID_HEADS * ceil(len_b * FA4_GROUP / BM) tiles: its
** packed rows, seqlen.cuh; a head's query tiles together, longest first
** under a mask); the producer's draws only grow,
** so its walk resumes where the last one stopped (sched_cursor) and costs
** O(batch) per CTA and launch; p.total_tiles is only a bound there.
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

/* Where the producer's walk over the sequences stands (varlen). */
struct fa4_sched_cursor {
    int batch;      /* sequence of the last tile found */
    int first;      /* its first tile index */
};

/* Heads of the grid: query heads, or KV heads when GQA is packed (a tile
 * then holds a KV head's query heads, seqlen.cuh). */
#define FA4_GRID_HEADS(p) (FA4_PACK_GQA ? (p).heads_kv : (p).heads_q)

/* The tile of linear index T: query tile fastest, then head, then batch;
 * causal query tiles from the last (the longest first). */
FA4_DEV fa4_tile tile_of_index(const fa4_params &p, int t)
{
    fa4_tile tile;
#if FA4_HEAD_GROUP
    /* Groups of FA4_HEAD_GROUP heads (it divides the grid's heads) in turn;
       in a group its heads fastest, then the query tiles (from the longest). */
    const int g = t / (FA4_HEAD_GROUP * p.m_blocks), r = t - g * FA4_HEAD_GROUP * p.m_blocks;
    const int m = r / FA4_HEAD_GROUP, bh = g * FA4_HEAD_GROUP + r % FA4_HEAD_GROUP;
#else
    const int m = t % p.m_blocks, bh = t / p.m_blocks;
#endif
    tile.m_block = FA4_CAUSAL ? p.m_blocks - 1 - m : m;
    tile.head = bh % FA4_GRID_HEADS(p);
    tile.batch = bh / FA4_GRID_HEADS(p);
    return tile;
}

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

/* The tile with index T into *TILE; false when T is past the last tile. */
FA4_DEV bool sched_tile(const fa4_params &p FA4_SERVING_PARAM, fa4_sched_cursor &cur, int t,
                        fa4_tile *tile_out)
{
    fa4_tile tile;
#if FA4_VARLEN && FA4_SCHEDULER == 0
    const int *cu_q = (const int *)sv.cu_seqlens_q;
    const int b = (int)blockIdx.z, m = (int)blockIdx.x;
    const int m_blocks = ((cu_q[b + 1] - cu_q[b]) * FA4_GROUP + FA4_BM - 1) / FA4_BM;
    (void)cur;
    tile.m_block = FA4_CAUSAL ? m_blocks - 1 - m : m;
    tile.head = (int)blockIdx.y;
    tile.batch = b;
    *tile_out = tile;
    return t == 0 && m < m_blocks;
#elif FA4_VARLEN
    const int *cu_q = (const int *)sv.cu_seqlens_q;
    for (; cur.batch < p.batch; cur.batch++) {
        const int m_blocks =
            ((cu_q[cur.batch + 1] - cu_q[cur.batch]) * FA4_GROUP + FA4_BM - 1) / FA4_BM;
        const int n = m_blocks * FA4_GRID_HEADS(p);
        if (t < cur.first + n) {
            const int r = t - cur.first, m = r % m_blocks;
            tile.m_block = FA4_CAUSAL ? m_blocks - 1 - m : m;
            tile.head = r / m_blocks;
            tile.batch = cur.batch;
            *tile_out = tile;
            return true;
        }
        cur.first += n;
    }
    return false;
#elif FA4_SCHEDULER == 0 && FA4_TAIL_SPLIT
    /* A 1-D grid: whole tiles, then p.tail_splits CTAs per tile of the
       last wave (tail.cuh). */
    int u;
    /* volatile: the consumers derive the tile again after the main loop
       (kernel.cuh) instead of holding the quotients across it. */
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(u));
    if (u >= p.tail_first)
        u = p.tail_first + (u - p.tail_first) / p.tail_splits;
    tile = tile_of_index(p, u);
#elif FA4_SCHEDULER == 0 && FA4_HEAD_GROUP
    /* Grid (FA4_HEAD_GROUP x m_blocks, heads / FA4_HEAD_GROUP, batch): a
       group's heads fastest, then its query tiles from the longest. */
    int x;
    /* volatile, as for the tail split: the consumers derive the tile again
       after the main loop (kernel.cuh) instead of holding it across it. */
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(x));
    tile.m_block = p.m_blocks - 1 - x / FA4_HEAD_GROUP;
    tile.head = (int)blockIdx.y * FA4_HEAD_GROUP + x % FA4_HEAD_GROUP;
    tile.batch = (int)blockIdx.z;
#elif FA4_SCHEDULER == 0
    tile.m_block = FA4_CAUSAL ? p.m_blocks - 1 - (int)blockIdx.x : (int)blockIdx.x;
    tile.head = (int)blockIdx.y;
    tile.batch = (int)blockIdx.z;
#elif FA4_SCHEDULER == 1 || FA4_SCHEDULER == 3
    tile = tile_of_index(p, t);
#else
    const int nbh = FA4_GRID_HEADS(p) * p.batch;
    const int m = t / nbh, bh = t % nbh;
    tile.m_block = p.m_blocks - 1 - m;
    tile.head = bh % FA4_GRID_HEADS(p);
    tile.batch = bh / FA4_GRID_HEADS(p);
#endif
#if !FA4_VARLEN
    (void)cur;
    *tile_out = tile;
    return sched_valid(p, t);
#endif
}

/* Scheduler 3: the producer publishes its next tile in the tile slot (16 B
 * after the barriers), m_block -1 for the end; the consumers read it after
 * q_full completes. */
FA4_DEV void sched_publish(u32 slot, bool valid, const fa4_tile &tile)
{
    st_shared_u32(slot, valid ? (u32)tile.m_block : 0xffffffffu);
    st_shared_u32(slot + 4, (u32)tile.head);
    st_shared_u32(slot + 8, (u32)tile.batch);
}
FA4_DEV bool sched_read(u32 slot, fa4_tile *tile)
{
    tile->m_block = (int)ld_shared_u32(slot);
    tile->head = (int)ld_shared_u32(slot + 4);
    tile->batch = (int)ld_shared_u32(slot + 8);
    return tile->m_block >= 0;
}

#endif
