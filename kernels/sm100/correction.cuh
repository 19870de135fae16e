/*
** sm100/correction.cuh -- the correction warpgroup: per KV step and query
** tile, wait for alpha (softmax) and for P V of the previous step (MMA),
** rescale O_i in TMEM when any row of the warp needs it, release the
** softmax warpgroup; at the end, O_i * (1/l) to global memory through
** shared memory and TMA stores (the epilogue).  Thread t handles row t
** of each query tile (TMEM lane t).  In a CTA pair each CTA's warpgroup
** works on its own rows as alone (O_FULL arrives by the leader's
** multicast commit).
** UNVERIFIED ON HARDWARE (see kernel.cuh).
*/
#ifndef FA4_SM100_CORRECTION_CUH
#define FA4_SM100_CORRECTION_CUH

#if SM100_FP8
/* fp8 inputs write O in FA4_OUT_DTYPE (16-bit): a row of O takes twice the
 * bytes of Q's, so O_i does not fit Q_i's region at once.  Each correction
 * warp stages it through its own 32 rows of Q_i's swizzle chunks (32 rows
 * x one swizzle row each: DQK_CHUNKS slots), as TMA boxes of {O_BOX_COLS,
 * 32} in the inputs' swizzle, in rounds of DQK_CHUNKS boxes (two when
 * padded dv = padded dqk), waiting for a round's stores to have read the
 * slots before the next is written. */
#define SM100_O_BOX_COLS (SM100_ROW_BYTES / 2)        /* 16-bit columns a box row */
#define SM100_DV (FA4_DV > 0 ? FA4_DV : FA4_D)         /* head_dim_v */
/* the boxes that hold part of head_dim_v (at 64 B, d96's padded 128
   columns are three boxes of 32 and a fourth wholly past the map) */
#define SM100_O_BOXES ((SM100_DV + SM100_O_BOX_COLS - 1) / SM100_O_BOX_COLS)
static_assert(FA4_PAD_DV % SM100_O_BOX_COLS == 0 && SM100_O_BOX_COLS % 16 == 0 &&
              SM100_O_BOXES * SM100_O_BOX_COLS <= FA4_PAD_DV,
              "fp8: O in whole boxes of 16-column TMEM loads");

/* Two f32 as O's 16-bit pair, LO in the low half. */
FA4_DEV u32 pack_o(float lo, float hi)
{
#if FA4_OUT_DTYPE == 1
    return cvt_rn_bf16x2_f32(lo, hi);
#else
    return cvt_rn_f16x2_f32(lo, hi);
#endif
}

/* Epilogue of tile I for fp8 inputs, this thread's row R (lane R % 32 of
 * warp WQ): O row * INV_L (0 when no key was visible), box by box through
 * the warp's slots (above): 16 B unit u of box row r at u ^ (r % 8) (128 B
 * swizzle) or u ^ ((r / 2) % 4) (64 B; KERNEL_NOTES.md); lane 0 stores
 * each round's boxes at (O_BOX_COLS b, m0 + 128 i + 32 wq, head, batch).
 * The map clips rows past seqlen_q and columns past head_dim_v.  The last
 * bulk group is waited on by the caller. */
FA4_DEV void store_o(const sm100_ctx &c, const fa4_tma_map *tm_o, u32 o_col, int i,
                     int wq, int r, float inv_l, bool have_o)
{
    const u32 stage = c.smem + FA4_SMEM_Q_OFF + (u32)i * SM100_Q_TILE_BYTES
                      + (u32)(wq * 32) * SM100_ROW_BYTES;
    const u32 lane = (u32)(r & 31);
    const u32 sw = SM100_ROW_BYTES == 128 ? lane & 7u : (lane >> 1) & 3u;
    int b, ch, e, k;

#pragma unroll
    for (b = 0; b < SM100_O_BOXES; b++) {
        const int slot = b % SM100_DQK_CHUNKS;
        const u32 row_at = stage + (u32)slot * SM100_Q_CHUNK_BYTES + lane * SM100_ROW_BYTES;
        if (slot == 0 && b > 0) {     /* the last round's stores have read the slots */
            if (lane == 0)
                bulk_wait_group_read_0();
            __syncwarp();
        }
        for (ch = 0; ch < SM100_O_BOX_COLS / 16; ch++) {
            const u32 unit = (u32)ch * 2;            /* 16 columns = two 16 B units */
            u32 v[16], pk[8];
            if (have_o) {
                tcgen05_ld_32x32b_x16(v, o_col + (u32)(b * SM100_O_BOX_COLS + ch * 16));
                tcgen05_wait_ld();
            } else {
#pragma unroll
                for (e = 0; e < 16; e++)
                    v[e] = 0u;
            }
#pragma unroll
            for (e = 0; e < 8; e++)
                pk[e] = pack_o(__uint_as_float(v[2 * e]) * inv_l,
                               __uint_as_float(v[2 * e + 1]) * inv_l);
            st_shared_v4_u32(row_at + ((unit ^ sw) << 4), pk[0], pk[1], pk[2], pk[3]);
            st_shared_v4_u32(row_at + (((unit + 1) ^ sw) << 4), pk[4], pk[5], pk[6], pk[7]);
        }
        if (slot == SM100_DQK_CHUNKS - 1 || b == SM100_O_BOXES - 1) {
            fence_proxy_async_shared();
            __syncwarp();
            if (lane == 0) {
                for (k = b - slot; k <= b; k++)
                    tma_store_4d(tm_o, stage + (u32)(k % SM100_DQK_CHUNKS) * SM100_Q_CHUNK_BYTES,
                                 k * SM100_O_BOX_COLS, c.m0 + i * 128 + wq * 32, c.head,
                                 c.batch);
                bulk_commit_group();
            }
        }
    }
}
#else
/* Epilogue of tile I, this thread's row R (warp WQ has rows 32 WQ ..
 * 32 WQ + 31): O row * INV_L (0 when no key was visible) as the 16-bit
 * type into Q_i's shared memory -- free once the last S_i MMA completed,
 * which the O_FULL commit waited on covers -- laid out as the 128 B
 * swizzled boxes of {64 columns, 32 rows} a TMA store reads (16 B unit u
 * of row r at u ^ (r % 8)); then lane 0 stores the warp's 32 rows, one
 * box per 64 columns.  The map clips rows past seqlen_q and columns past
 * head_dim_v.  The bulk group is waited on by the caller. */
FA4_DEV void store_o(const sm100_ctx &c, const fa4_tma_map *tm_o, u32 o_col, int i,
                     int wq, int r, float inv_l, bool have_o)
{
    const u32 stage = c.smem + FA4_SMEM_Q_OFF + (u32)i * SM100_Q_TILE_BYTES;
    const u32 sw = (u32)(r & 7);
    int ch, e;

    for (ch = 0; ch < FA4_PAD_DV / 16; ch++) {
        const u32 row_at = stage + (u32)(ch / 4) * SM100_Q_CHUNK_BYTES
                           + (u32)r * SM100_ROW_BYTES;
        const u32 unit = (u32)(ch % 4) * 2;      /* 16 columns = two 16 B units */
        u32 v[16], pk[8];
        if (have_o) {
            tcgen05_ld_32x32b_x16(v, o_col + (u32)ch * 16);
            tcgen05_wait_ld();
        } else {
#pragma unroll
            for (e = 0; e < 16; e++)
                v[e] = 0u;
        }
#pragma unroll
        for (e = 0; e < 8; e++) {
            float a = __uint_as_float(v[2 * e]) * inv_l;
            float b = __uint_as_float(v[2 * e + 1]) * inv_l;
#if FA4_DTYPE == 1
            pk[e] = cvt_rn_bf16x2_f32(a, b);
#else
            pk[e] = cvt_rn_f16x2_f32(a, b);
#endif
        }
        st_shared_v4_u32(row_at + ((unit ^ sw) << 4), pk[0], pk[1], pk[2], pk[3]);
        st_shared_v4_u32(row_at + (((unit + 1) ^ sw) << 4), pk[4], pk[5], pk[6], pk[7]);
    }
    fence_proxy_async_shared();
    __syncwarp();
    if ((threadIdx.x & 31) == 0) {
#pragma unroll
        for (ch = 0; ch < SM100_DV_CHUNKS; ch++)
            tma_store_4d(tm_o, stage + (u32)ch * SM100_Q_CHUNK_BYTES
                                   + (u32)(wq * 32) * SM100_ROW_BYTES,
                         ch * SM100_SW_ELEMS, c.m0 + i * 128 + wq * 32, c.head, c.batch);
        bulk_commit_group();
    }
}
#endif

FA4_DEV void correction_warpgroup(const fa4_params &p, const sm100_ctx &c,
                                  const fa4_tma_map *tm_o, int wq)
{
    const float *corr = (const float *)(c.base + FA4_SMEM_CORR_OFF);
    const int r = wq * 32 + (int)(threadIdx.x & 31);
    const u32 lane_base = (u32)(wq * 32) << 16;
    int j, i;

    for (j = 0; j < c.n; j++) {
        for (i = 0; i < FA4_Q_TILES; i++) {
            const u32 o_col = c.tmem + lane_base + (i ? FA4_TMEM_O1 : FA4_TMEM_O0);
            float alpha;
            mbarrier_wait(bar_addr(c, BAR_C_FULL + i), (u32)j & 1u);
            /* every wait is followed by this fence before TMEM is touched
               on any path (tests/test_sm100_ptx.c checks it) */
            tcgen05_fence_after_thread_sync();
            alpha = corr[i * 128 + r];
            if (j > 0) {
                /* O_i holds P V of step j-1: rescale it before step j adds. */
                mbarrier_wait(bar_addr(c, BAR_O_FULL + i), (u32)(j - 1) & 1u);
                tcgen05_fence_after_thread_sync();
                if (__any_sync(0xffffffffu, alpha != 1.0f))
                    tmem_scale<FA4_PAD_DV>(o_col, alpha);   /* O_i *= alpha */
                tcgen05_fence_before_thread_sync();
            }
            mbarrier_arrive(bar_addr(c, BAR_C_EMPTY + i));
        }
    }
    for (i = 0; i < FA4_Q_TILES; i++) {
        const u32 o_col = c.tmem + lane_base + (i ? FA4_TMEM_O1 : FA4_TMEM_O0);
        /* a tile that saw none of the CTA's blocks issued no P V: its O is
           never written, so it stores zeros (kernel.cuh, tile_sees) */
        const bool wrote_o = tile_first(tile_blocks(p, c.m0 + i * 128, 128), c) < c.n;
        float inv_l = 0.0f;
        if (c.n > 0) {
            mbarrier_wait(bar_addr(c, BAR_C_FULL + i), (u32)c.n & 1u);
            inv_l = corr[i * 128 + r];
            mbarrier_wait(bar_addr(c, BAR_O_FULL + i), (u32)(c.n - 1) & 1u);
            tcgen05_fence_after_thread_sync();
        }
        store_o(c, tm_o, o_col, i, wq, r, inv_l, c.n > 0 && wrote_o);
    }
    /* Q's shared memory must outlive the stores' reads of it (lane 0 has
       the groups; for the other lanes the wait returns at once). */
    bulk_wait_group_read_0();
}

#endif
