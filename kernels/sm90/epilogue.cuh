/*
** epilogue.cuh -- O and LSE of one consumer warpgroup (64 query rows).
** O (scaled by 1/l, converted to the 16-bit type) goes through shared
** memory in the swizzled layout of the O TMA map's box (FA4_OCW columns x
** 64 rows per box, 1024-aligned; for 16-bit inputs the layout of Q, so that when O takes
** Q's bytes each warpgroup overwrites only its own 64 Q rows, which it has
** finished with), then one TMA store per FA4_OCW-column chunk:
** rows >= seqlen_q and columns >= head_dim_v fall outside the map and are
** not written.  Varlen tiles whose 64 rows are not all their own (the
** sequence ends inside them, or they were loaded from earlier rows:
** seqlen.cuh) copy their own rows from shared to global memory instead,
** 16 B per thread and step.  LSE goes straight to global memory from the
** quad leaders.  With packed GQA (seqlen.cuh) the O map is rank 5, {dim,
** head in group, query, KV head, batch}: the box of 64 packed rows is
** 64 / FA4_GROUP queries x FA4_GROUP heads.
*/
#ifndef FA4_SM90_EPILOGUE_CUH
#define FA4_SM90_EPILOGUE_CUH

/* Pack two f32 into O's 16-bit type, LO in the low half. */
FA4_DEV u32 pack_out(float lo, float hi)
{
#if FA4_OUT_DTYPE == 2
    return cvt_rn_f16x2_f32(lo, hi);
#else
    return cvt_rn_bf16x2_f32(lo, hi);
#endif
}

/* Pack two f32 into the inputs' 16-bit type (P for P V), LO low. */
FA4_DEV u32 pack_p(float lo, float hi)
{
#if FA4_DTYPE == 2
    return cvt_rn_f16x2_f32(lo, hi);
#else
    return cvt_rn_bf16x2_f32(lo, hi);
#endif
}

/* Copy rows [r_lo, r_hi) of warpgroup WG's O (64 rows at WG_BASE in shared
 * memory) to global memory: row r is packed row WG_ROW0 + r of the tile of
 * grid head HEAD (seqlen.cuh), in the sequence whose first query row is
 * Q_ROW0. */
FA4_DEV void store_rows_direct(const fa4_params &p, u32 wg_base, long long q_row0, int wg_row0,
                               int head, int r_lo, int r_hi, int tid)
{
    constexpr int units = FA4_SWIZZLE / 16, chunk_units = (FA4_DVP / FA4_OCW) * units;
    for (int i = tid; i < 64 * chunk_units; i += 128) {
        const int r = i / chunk_units, c = (i % chunk_units) / units, u = i % units;
        const int col = c * FA4_OCW + 8 * u;
        if (r < r_lo || r >= r_hi || col >= FA4_DV)
            continue;
        const int phase = (r * FA4_SWIZZLE / 128) % units;
        u32 v[4];
        ld_shared_v4(wg_base + (u32)(c * FA4_BM * FA4_SWIZZLE + r * FA4_SWIZZLE +
                                     16 * (u ^ phase)), v);
        const int row = wg_row0 + r;
        st_global_v4(p.o + 2ull * (u64)((q_row0 + row_query(row)) * p.o_row_stride +
                                        (long long)row_head(head, row) * p.o_head_stride + col),
                     v);
    }
}

/* Write O (NO f32 registers of an m64n(2*NO) accumulator) and LSE of
 * warpgroup WG for TILE; O_TILE is the O region (BM rows x DVP columns,
 * chunks of FA4_OCW columns, each BM x FA4_SWIZZLE B).  TID is the thread's index in its
 * warpgroup.  On return thread 0 has issued (not waited for) the TMA store;
 * the next call, or the caller, waits for it to read shared memory. */
template <int NO>
FA4_DEV void epilogue_store(const fa4_params &p FA4_SERVING_PARAM, const fa4_seq &sq,
                            const fa4_tma_map *tm_o, u32 o_tile, float (&o)[NO],
                            const float (&inv)[2], const float (&lse)[2],
                            const fa4_tile &tile, int wg, int tid)
{
    const int warp = tid / 32, lane = tid % 32, g = lane / 4, q = lane % 4;
    const u32 wg_base = o_tile + (u32)(wg * 64 * FA4_SWIZZLE);
    const int m0 = tile.m_block * FA4_BM;
    /* This warpgroup's rows of the sequence: loaded from WG_ROW0, its own
       from max(m0, WG_ROW0) up to the sequence's end. */
    const int wg_row0 = q_load_row(sq, m0) + wg * 64;
    const int own_lo = max(m0 - wg_row0, 0), own_hi = min(sq.len_q * FA4_GROUP - wg_row0, 64);
    /* The previous tile's O store must have read these bytes. */
    if (tid == 0)
        cp_async_bulk_wait_group_read0();
    named_barrier_sync(FA4_BAR_EPILOGUE_WG0 + wg, 128);
    /* Swizzle of SW B (KERNEL_NOTES.md): 16 B unit u of row r sits at
     * u ^ ((r * SW / 128) % (SW / 16)); with r = 16 warp + g + 8 h that is
     * u ^ (g / (128 / SW)): g for 128 B, g >> 1 for 64 B, g >> 2 for 32 B. */
    const int phase = g / (128 / FA4_SWIZZLE);
#pragma unroll
    for (int i = 0; i < NO; i += 2) {
        const int h = (i >> 1) & 1;
        const int row = 16 * warp + g + 8 * h;
#if FA4_FP8
        /* Columns 8 (i / 4) + 2q and + 1 lie in one 16 B unit (2q < 8), so
           unit and chunk are constants.  Derived from the thread's column
           they cost a register per i, which ptxas hoists out of the tile
           loop: fp8's three-warpgroup tile in groups of heads spilled 48 B
           (184 B max-free) for them.  The 16-bit kernels keep the column
           form: the constant one reschedules their main loops too (within
           the noise, leaning slower on causal d128; bench/NOTES.md, sm90
           v21), and the seed's rows were tuned on this one. */
        const int unit = (i / 4) % (FA4_OCW / 8), chunk = (i / 4) / (FA4_OCW / 8);
#else
        const int col = 8 * (i / 4) + 2 * q;
        const int chunk = col / FA4_OCW, unit = (col % FA4_OCW) / 8;
#endif
        const u32 addr = wg_base + (u32)(chunk * FA4_BM * FA4_SWIZZLE + row * FA4_SWIZZLE +
                                         ((unit ^ phase) * 16) + 4 * q);
        st_shared_u32(addr, pack_out(o[i] * inv[h], o[i + 1] * inv[h]));
    }
    if (p.lse != 0 && q == 0) {
        const long long head_stride = seq_lse_head_stride(p FA4_SERVING_ARG);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = 16 * warp + g + 8 * h, row = wg_row0 + r;   /* packed row */
            if (r >= own_lo && r < own_hi)
                ((float *)p.lse)[sq.lse_row0 + row_head(tile.head, row) * head_stride +
                                 row_query(row)] = lse[h];
        }
    }
    fence_proxy_async_shared_cta();
    named_barrier_sync(FA4_BAR_EPILOGUE_WG0 + wg, 128);
#if FA4_VARLEN
    if (own_lo > 0 || own_hi < 64) {
        /* Not all 64 rows are this tile's: plain stores of its own. */
        store_rows_direct(p, wg_base, sq.q_row0, wg_row0, tile.head, own_lo, own_hi, tid);
        fence_proxy_async_shared_cta();
        named_barrier_sync(FA4_BAR_EPILOGUE_WG0 + wg, 128);
        return;
    }
#endif
    if (tid == 0 && own_hi > 0) {
#pragma unroll
        for (int c = 0; c < 2 * NO / FA4_OCW; ++c)
#if FA4_PACK_GQA
            /* {dim, head in group, query, KV head, batch}, as Q's loads. */
            tma_store_5d(tm_o, wg_base + (u32)(c * FA4_BM * FA4_SWIZZLE), c * FA4_OCW, 0,
                         sq.q_row0 + row_query(wg_row0), tile.head, sq.batch);
#else
            tma_store_4d(tm_o, wg_base + (u32)(c * FA4_BM * FA4_SWIZZLE), c * FA4_OCW,
                         tile.head, sq.q_row0 + wg_row0, sq.batch);
#endif
        cp_async_bulk_commit_group();
    }
}

#endif
