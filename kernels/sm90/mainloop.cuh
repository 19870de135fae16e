/*
** mainloop.cuh -- the producer (TMA loads into the K/V ring) and the
** consumer main loop (S = Q K^T by wgmma from shared memory, online
** softmax, O += P V with P from registers).
**
** Ring protocol: stage s has k_full/v_full (count 1, TMA transaction bytes)
** and k_empty/v_empty (one arrival per consumer warp).  Key blocks run from
** the last to the first, so masked blocks (diagonal, ragged tail) come
** first; producer and consumers walk the same order and the same stage
** counter across tiles.  Q has q_full/q_empty (one arrival per consumer
** warp): released after the tile's last Q K^T, or, when O shares Q's
** bytes, after the O store has read them.  With FA4_Q_SLOTS 2 the tiles
** take Q's two slots in turn, each with its own pair (and, for the dynamic
** scheduler, its own tile slot), so the next tile's Q lands while this
** one runs: a short tile no longer waits for it.
**
** Fused ring (FA4_FUSED_KV): FA4_KV_SLOTS slots, each with one full and
** one empty barrier; key block n takes two consecutive slots, K(n) then
** V(n), so the ring runs K(top) V(top) K(top-1) V(top-1) ...  Consumers
** release K(n-1) before V(n), out of ring order, which is safe: each slot
** has its own barriers and phase, and a consumer holds at most K(n-1) and
** V(n), so two slots always let the producer progress; more slots let the
** loads run ahead.
*/
#ifndef FA4_SM90_MAINLOOP_CUH
#define FA4_SM90_MAINLOOP_CUH

/* Slot index and phase parity of a ring of FA4_RING slots (FA4_STAGES
 * stages, or FA4_KV_SLOTS slots of the fused ring). */
struct fa4_pipe {
    int stage;
    u32 phase;
};

FA4_DEV void pipe_advance(fa4_pipe &st)
{
    if (++st.stage == FA4_RING) {
        st.stage = 0;
        st.phase ^= 1u;
    }
}

/* From ST at key block n's K: VST at its V, ST at the next block's K. */
FA4_DEV void kv_next(fa4_pipe &st, fa4_pipe &vst)
{
    vst = st;
#if FA4_FUSED_KV
    pipe_advance(vst);
    st = vst;
#endif
    pipe_advance(st);
}

/* Shared-memory addresses of the barriers (BAR region, 8 B each).  Q
 * slot 1's barriers and the dynamic scheduler's tile slot for it come
 * after slot 0's tile slot (the budget adds 16 + 16 B): slot 0's layout
 * is the same with one Q slot or two. */
#if FA4_FUSED_KV
#define FA4_BAR_BYTES (16 + 16 * FA4_RING)
#else
#define FA4_BAR_BYTES (16 + 32 * FA4_STAGES)
#endif
#define FA4_Q1_BAR (FA4_BAR_BYTES + FA4_TILE_SLOT_BYTES)
#if FA4_FUSED_KV
/* Fused ring: full[slot], empty[slot]; K and V use the same slot barriers. */
struct fa4_bars {
    u32 base;
    __device__ __forceinline__ u32 q_full(int q = 0) const { return q ? base + FA4_Q1_BAR : base; }
    __device__ __forceinline__ u32 q_empty(int q = 0) const { return q_full(q) + 8; }
    __device__ __forceinline__ u32 k_full(int s) const { return base + 16 + 8 * s; }
    __device__ __forceinline__ u32 k_empty(int s) const { return base + 16 + 8 * (FA4_RING + s); }
    __device__ __forceinline__ u32 v_full(int s) const { return k_full(s); }
    __device__ __forceinline__ u32 v_empty(int s) const { return k_empty(s); }
};
#else
struct fa4_bars {
    u32 base;
    __device__ __forceinline__ u32 q_full(int q = 0) const { return q ? base + FA4_Q1_BAR : base; }
    __device__ __forceinline__ u32 q_empty(int q = 0) const { return q_full(q) + 8; }
    __device__ __forceinline__ u32 k_full(int s) const { return base + 16 + 8 * s; }
    __device__ __forceinline__ u32 k_empty(int s) const { return base + 16 + 8 * (FA4_STAGES + s); }
    __device__ __forceinline__ u32 v_full(int s) const { return base + 16 + 8 * (2 * FA4_STAGES + s); }
    __device__ __forceinline__ u32 v_empty(int s) const { return base + 16 + 8 * (3 * FA4_STAGES + s); }
};
#endif

/* Scheduler 3's tile index of Q slot Q, after the barriers (the budget
 * adds 16 B). */
FA4_DEV u32 tile_slot(const fa4_bars &bars, int q = 0)
{
    return bars.base + (q ? FA4_Q1_BAR + 16 : FA4_BAR_BYTES);
}

/* The next Q slot (tiles take FA4_Q_SLOTS slots in turn) and the phase of
 * its barriers: FA4_Q_SLOT_VAR declares the slot, FA4_Q_ADVANCE moves both
 * on.  With one slot the slot is a constant 0 and the advance the phase
 * flip written in place (as a function call it moves ptxas's schedule), so
 * those kernels compile to the machine code they had before two slots. */
#if FA4_Q_SLOTS == 1
#define FA4_Q_SLOT_VAR constexpr int
#define FA4_Q_ADVANCE(slot, phase) ((phase) ^= 1u)
#else
#define FA4_Q_SLOT_VAR int
#define FA4_Q_ADVANCE(slot, phase)                                          \
    do {                                                                    \
        if (++(slot) == FA4_Q_SLOTS) {                                      \
            (slot) = 0;                                                     \
            (phase) ^= 1u;                                                  \
        }                                                                   \
    } while (0)
#endif

/* A tile's Q: its slot's tile in shared memory and its empty barrier.
 * The consumer's functions take it only with two slots (FA4_QSLOT_PARAM,
 * as FA4_SERVING_PARAM): with one, Q is at FA4_SMEM_Q_OFF as ever. */
#if FA4_Q_SLOTS == 2
struct fa4_qslot {
    u32 q;
    u32 empty;
};

FA4_DEV fa4_qslot qslot_of(u32 smem, const fa4_bars &bars, int slot)
{
    return { smem + FA4_SMEM_Q_OFF + (u32)(slot * FA4_Q_BYTES), bars.q_empty(slot) };
}
#define FA4_QSLOT_PARAM , const fa4_qslot &qs
#define FA4_QSLOT_ARG , qs
#define FA4_Q_TILE(smem) (qs.q)
#define FA4_Q_EMPTY(bars) (qs.empty)
#else
#define FA4_QSLOT_PARAM
#define FA4_QSLOT_ARG
#define FA4_Q_TILE(smem) ((smem) + FA4_SMEM_Q_OFF)
#define FA4_Q_EMPTY(bars) ((bars).q_empty())
#endif

/* Shared-memory descriptors of the Q, K (K-major) and V (MN-major) tiles. */
#if FA4_SWIZZLE == 128
#define smem_desc_kmajor smem_desc_kmajor_sw128
#define smem_desc_mnmajor smem_desc_mnmajor_sw128
#elif FA4_SWIZZLE == 64
#define smem_desc_kmajor smem_desc_kmajor_sw64
#define smem_desc_mnmajor smem_desc_mnmajor_sw64
#else
#define smem_desc_kmajor smem_desc_kmajor_sw32
#define smem_desc_mnmajor smem_desc_mnmajor_sw32
#endif

/* ------------------------------------------------------------ producer */

#if FA4_PAGED
/* Key block N of a K or V tile (CHUNKS swizzled chunks at DST) through the
 * block table, box by box (not unrolled: the producer has 24 registers). */
template <int CHUNKS>
FA4_DEV void load_paged_block(u32 dst, const fa4_tma_map *map, u32 bar, const fa4_seq &sq,
                              const int *pages, int page_shift, int n, int kv_head)
{
#if FA4_PAGE_GATHER > 1
    /* The page numbers of FA4_PAGE_GATHER boxes first, as independent loads
       (one latency per group, not one per box), then their boxes. */
    constexpr int NB = FA4_BN / FA4_PAGE_BOX, G = FA4_PAGE_GATHER;
#pragma unroll 1
    for (int i0 = 0; i0 < NB; i0 += G) {
        int page[G];
#pragma unroll
        for (int i = 0; i < G; ++i) {
            int row;
            if (NB % G == 0 || i0 + i < NB)
                page_box(sq, pages, page_shift, n * FA4_BN + (i0 + i) * FA4_PAGE_BOX, &page[i],
                         &row);
        }
#pragma unroll
        for (int i = 0; i < G; ++i) {
            if (NB % G != 0 && i0 + i >= NB)
                break;
            const int row = (n * FA4_BN + (i0 + i) * FA4_PAGE_BOX) & ((1 << page_shift) - 1);
#pragma unroll
            for (int c = 0; c < CHUNKS; ++c)
                tma_load_4d(dst + (c * FA4_BN + (i0 + i) * FA4_PAGE_BOX) * FA4_SWIZZLE, map,
                            bar, c * FA4_CW, kv_head, row, page[i]);
        }
    }
#else
#pragma unroll 1
    for (int i = 0; i < FA4_BN / FA4_PAGE_BOX; ++i) {
        int page, row;
        page_box(sq, pages, page_shift, n * FA4_BN + i * FA4_PAGE_BOX, &page, &row);
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c)
            tma_load_4d(dst + (c * FA4_BN + i * FA4_PAGE_BOX) * FA4_SWIZZLE, map, bar,
                        c * FA4_CW, kv_head, row, page);
    }
#endif
}
#endif

/* One thread issues every TMA load of the CTA's tiles. */
FA4_DEV void producer_run(const fa4_params &p FA4_SERVING_PARAM, const fa4_tma_map *tm_q,
                          const fa4_tma_map *tm_k, const fa4_tma_map *tm_v, u32 smem,
                          fa4_bars bars)
{
    fa4_pipe st = {0, 0u};
    u32 q_phase = 0;
    FA4_Q_SLOT_VAR q_slot = 0;
#if FA4_VARLEN && FA4_SCHED_DYNAMIC
    st_shared_u32(tile_slot(bars) + 16, 0u);
    st_shared_u32(tile_slot(bars) + 20, 0u);
#else
    fa4_sched_cursor cur = {0, 0};
#endif
    for (int t = sched_first();; t = sched_next(p, t)) {
        fa4_tile tile;
#if FA4_VARLEN && FA4_SCHED_DYNAMIC
        /* The walk's cursor waits in shared memory: the producer's 24 or 32
           registers hold the K/V loop's state. */
        fa4_sched_cursor cur = { (int)ld_shared_u32(tile_slot(bars) + 16),
                                 (int)ld_shared_u32(tile_slot(bars) + 20) };
        const bool valid = sched_tile(p FA4_SERVING_ARG, cur, t, &tile);
        st_shared_u32(tile_slot(bars) + 16, (u32)cur.batch);
        st_shared_u32(tile_slot(bars) + 20, (u32)cur.first);
#else
        const bool valid = sched_tile(p FA4_SERVING_ARG, cur, t, &tile);
#endif
#if FA4_SCHED_DYNAMIC
        /* The consumers learn the tile from the tile slot, the end included. */
        mbarrier_wait(bars.q_empty(q_slot), q_phase ^ 1u);
        sched_publish(tile_slot(bars, q_slot), valid, tile);
        if (!valid) {
            mbarrier_arrive(bars.q_full(q_slot));
            sched_finish(p);
            return;
        }
#else
        if (!valid)
            return;
        mbarrier_wait(bars.q_empty(q_slot), q_phase ^ 1u);
#endif
        const fa4_seq sq = seq_of(p FA4_SERVING_ARG, tile.batch);
        const int m0 = tile.m_block * FA4_BM;
        int n_lo, n_hi;
        kv_block_range(p, sq, tile.m_block * FA4_BM_POS, &n_lo, &n_hi);
        tail_part_blocks(p, &n_lo, &n_hi);
        const int kv_head = tile_kv_head(p, tile.head);
#if FA4_PAGED
        const int *pages = (const int *)sv.block_table + (long long)tile.batch * sv.block_table_stride;
#endif

        mbarrier_arrive_expect_tx(bars.q_full(q_slot), FA4_Q_BYTES);
#pragma unroll
        for (int c = 0; c < FA4_DP / FA4_CW; ++c)
#if FA4_PACK_GQA
            /* {dim, head in group, query, KV head, batch}: FA4_BM_POS
               queries x FA4_GROUP heads, rows in the packed order. */
            tma_load_5d(smem + FA4_SMEM_Q_OFF + q_slot * FA4_Q_BYTES + c * FA4_BM * FA4_SWIZZLE,
                        tm_q, bars.q_full(q_slot),
                        c * FA4_CW, 0, sq.q_row0 + row_query(q_load_row(sq, m0)), kv_head,
                        sq.batch);
#else
            tma_load_4d(smem + FA4_SMEM_Q_OFF + q_slot * FA4_Q_BYTES + c * FA4_BM * FA4_SWIZZLE,
                        tm_q, bars.q_full(q_slot),
                        c * FA4_CW, tile.head, sq.q_row0 + q_load_row(sq, m0), sq.batch);
#endif
        FA4_Q_ADVANCE(q_slot, q_phase);

        for (int n = n_hi - 1; n >= n_lo; --n) {
#if FA4_FUSED_KV
            fa4_pipe vst = st; /* V(n) takes the slot after K(n) */
            pipe_advance(vst);
#else
            const fa4_pipe &vst = st;
#endif
            const u32 k_dst = smem + FA4_K_RING_OFF + st.stage * FA4_K_SLOT_BYTES;
            const u32 v_dst = smem + FA4_V_RING_OFF + vst.stage * FA4_V_SLOT_BYTES;
#if FA4_PAGED
            mbarrier_wait(bars.k_empty(st.stage), st.phase ^ 1u);
            mbarrier_arrive_expect_tx(bars.k_full(st.stage), FA4_K_STAGE_BYTES);
            load_paged_block<FA4_DP / FA4_CW>(k_dst, tm_k, bars.k_full(st.stage), sq, pages,
                                              sv.page_shift, n, kv_head);
#else
            const int kv_row = sq.k_row0 + kv_load_row(sq, n);
            mbarrier_wait(bars.k_empty(st.stage), st.phase ^ 1u);
            mbarrier_arrive_expect_tx(bars.k_full(st.stage), FA4_K_STAGE_BYTES);
#pragma unroll
            for (int c = 0; c < FA4_DP / FA4_CW; ++c)
                tma_load_4d(k_dst + c * FA4_BN * FA4_SWIZZLE, tm_k, bars.k_full(st.stage),
                            c * FA4_CW, kv_head, kv_row, sq.batch);
#endif
            mbarrier_wait(bars.v_empty(vst.stage), vst.phase ^ 1u);
            mbarrier_arrive_expect_tx(bars.v_full(vst.stage), FA4_V_STAGE_BYTES);
#if FA4_FP8
            /* V^T {keys, dim, heads, batch}, dense whatever K's layout: block n
               at column n * BN (vtranspose.cuh), chunks of FA4_CW keys x DVP rows. */
#pragma unroll
            for (int c = 0; c < FA4_BN / FA4_CW; ++c)
                tma_load_4d(v_dst + c * FA4_DVP * FA4_SWIZZLE, tm_v, bars.v_full(vst.stage),
                            n * FA4_BN + c * FA4_CW, 0, kv_head, tile.batch);
#elif FA4_PAGED
            load_paged_block<FA4_DVP / FA4_CW>(v_dst, tm_v, bars.v_full(vst.stage), sq, pages,
                                               sv.page_shift, n, kv_head);
#else
#pragma unroll
            for (int c = 0; c < FA4_DVP / FA4_CW; ++c)
                tma_load_4d(v_dst + c * FA4_BN * FA4_SWIZZLE, tm_v, bars.v_full(vst.stage),
                            c * FA4_CW, kv_head, kv_row, sq.batch);
#endif
#if FA4_FUSED_KV
            st = vst;
#endif
            pipe_advance(st);
        }
    }
}

/* ------------------------------------------------------------ consumer */

#if FA4_FP8
/* The descale factor of TILE's (batch, KV head) in the float32 [batch,
 * heads_kv] array at ADDR; 1 without one. */
FA4_DEV float fp8_descale(unsigned long long addr, const fa4_params &p, const fa4_tile &tile)
{
    return addr ? ((const float *)addr)[tile.batch * p.heads_kv + tile_kv_head(p, tile.head)]
                : 1.0f;
}
#endif


/* Ping-pong: wait for this warpgroup's turn to issue GEMMs / pass the turn on. */
FA4_DEV void pingpong_wait(int wg)
{
#if FA4_PINGPONG
    named_barrier_sync(FA4_BAR_PINGPONG_WG0 + wg, 256);
#endif
}
FA4_DEV void pingpong_pass(int wg)
{
#if FA4_PINGPONG
    named_barrier_arrive(FA4_BAR_PINGPONG_WG0 + (wg + 1) % FA4_CONSUMER_WGS, 256);
#endif
}

/* 1 when O's bytes overlap Q's (the budget puts O in Q when both do not
 * fit): Q is then released only after the O store has read them. */
#define FA4_O_ALIASES_Q                                                    \
    (FA4_SMEM_O_OFF < FA4_SMEM_Q_OFF + FA4_SMEM_Q_SIZE &&                  \
     FA4_SMEM_Q_OFF < FA4_SMEM_O_OFF + FA4_SMEM_O_SIZE)

/* One arrival per warp on an "empty" barrier, after the warp's wgmma wait. */
FA4_DEV void release_stage(u32 bar, int lane)
{
    if (lane == 0)
        mbarrier_arrive(bar);
}

/* release_stage() once DEP is computed.  ptxas keeps mbarrier arrives and
 * wgmma waits in program order but hoists an operand-free wait to the top
 * of its block; an arrive that depends on DEP holds the next wait behind
 * the computation of DEP.  (z is 0 or NaN, never 1: the arrive always
 * happens.) */
FA4_DEV void release_stage_after(u32 bar, int lane, float dep)
{
    float z;
    asm volatile("mul.rn.f32 %0, %1, 0f00000000;" : "=f"(z) : "f"(dep));
    if (lane == 0 && z != 1.0f)
        mbarrier_arrive(bar);
}

/* The descriptor of k-step KK (32 bytes of K) of a K-major tile whose
 * step-0 descriptor is BASE, stored as chunks of ROWS rows x FA4_SWIZZLE
 * bytes: chunk kk / kpc, the step's 32 bytes inside each swizzled row. */
FA4_DEV u64 kmajor_step_desc(u64 base, int rows, int kk)
{
    constexpr int kpc = FA4_SWIZZLE / 32; /* k-steps per swizzled row */
    return smem_desc_advance(base, (kk / kpc) * rows * FA4_SWIZZLE + (kk % kpc) * 32);
}

/* S = Q K^T for warpgroup WG's 64 rows against K stage K_SMEM: the
 * block's first 2 * NS keys (NS scores a thread; all BN, or half of them
 * for consumer_half_block). */
template <int NS>
FA4_DEV void gemm_qk(float (&s)[NS], u32 q_wg, u32 k_smem)
{
    /* Q's descriptor is the same for every block: made here each time (the
     * asm cannot leave the loop), or ptxas keeps one per k-step live
     * across the loop (d192: 12 registers, spills). */
    u64 qd;
    asm volatile("mov.b64 %0, %1;" : "=l"(qd) : "l"(smem_desc_kmajor(q_wg)));
    const u64 kd = smem_desc_kmajor(k_smem);
#pragma unroll
    for (int kk = 0; kk < FA4_DP / FA4_KSTEP; ++kk)
        wgmma_ss<2 * NS, FA4_AB>(s, kmajor_step_desc(qd, FA4_BM, kk), kmajor_step_desc(kd, FA4_BN, kk),
                                 kk > 0 ? 1 : 0);
}

/* O += P V with P (NP packed registers: the block's first
 * NP * BN / FA4_P_REGS keys, all or half) and V stage V_SMEM: V MN-major for 16-bit inputs; for fp8
 * (no transposing wgmma) V^T, DVP rows of keys, K-major in chunks of
 * FA4_CW keys, each 32-key group in the order of P's registers
 * (convert_p).  One wgmma k-step takes 4 registers either way. */
template <int NP>
FA4_DEV void gemm_pv(float (&o)[FA4_DVP / 2], const u32 (&pr)[NP], u32 v_smem)
{
#if FA4_FP8
    const u64 vd = smem_desc_kmajor(v_smem);
#pragma unroll
    for (int kk = 0; kk < NP / 4; ++kk)
        wgmma_rs<FA4_DVP, FA4_AB>(o, pr[4 * kk], pr[4 * kk + 1], pr[4 * kk + 2], pr[4 * kk + 3],
                                  kmajor_step_desc(vd, FA4_DVP, kk), 1);
#else
    /* k16 step: 16 keys x FA4_SWIZZLE B; LBO: keys x FA4_SWIZZLE B per chunk. */
    const u64 vd = smem_desc_mnmajor(v_smem, FA4_BN * FA4_SWIZZLE);
#pragma unroll
    for (int kk = 0; kk < NP / 4; ++kk)
        wgmma_rs_tb<FA4_DVP, FA4_AB>(o, pr[4 * kk], pr[4 * kk + 1], pr[4 * kk + 2],
                                     pr[4 * kk + 3], smem_desc_advance(vd, kk * 16 * FA4_SWIZZLE), 1);
#endif
}

/* P from the exponentiated scores.  16-bit: pairs; the A-register layout
 * of a 16-column slab equals the accumulator's.  fp8: a k32 step's A
 * registers hold 4 consecutive k of row g (registers 0, 2) or g + 8 (1, 3),
 * k 4q..4q+3 and 16+4q..16+4q+3, where the accumulator holds key pairs 8
 * apart (2q, 2q+1, 2q+8, 2q+9 of each 16).  Packing a thread's own values
 * makes k 4q..4q+3 stand for keys 2q, 2q+1, 2q+8, 2q+9: the V^T copy stores
 * each 32-key group in that order (vtranspose.cuh), so no shuffle is needed. */
template <int NP, int NS>
FA4_DEV void convert_p(u32 (&pr)[NP], const float (&s)[NS])
{
    static_assert(NS * FA4_ESIZE == 4 * NP, "convert_p: 4 bytes of P a register");
#if FA4_FP8
#pragma unroll
    for (int kk = 0; kk < NP / 4; ++kk) {
        const int b = 16 * kk;
        pr[4 * kk + 0] = cvt_rn_e4m3x4_f32(s[b + 0], s[b + 1], s[b + 4], s[b + 5]);
        pr[4 * kk + 1] = cvt_rn_e4m3x4_f32(s[b + 2], s[b + 3], s[b + 6], s[b + 7]);
        pr[4 * kk + 2] = cvt_rn_e4m3x4_f32(s[b + 8], s[b + 9], s[b + 12], s[b + 13]);
        pr[4 * kk + 3] = cvt_rn_e4m3x4_f32(s[b + 10], s[b + 11], s[b + 14], s[b + 15]);
    }
#else
#pragma unroll
    for (int i = 0; i < NP; ++i)
        pr[i] = pack_p(s[2 * i], s[2 * i + 1]);
#endif
}

/* Scale row h of O by FACTOR[h]. */
FA4_DEV void rescale_o(float (&o)[FA4_DVP / 2], const float (&factor)[2])
{
#pragma unroll
    for (int i = 0; i < FA4_DVP / 2; ++i)
        o[i] *= factor[(i >> 1) & 1];
}

template <int N> FA4_DEV void fence_array(float (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i)
        reg_fence(r[i]);
}
template <int N> FA4_DEV void fence_array(u32 (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i)
        reg_fence(r[i]);
}

/* The 4 bytes at byte B of row ROW of a Q or K tile at TILE (ROWS rows a
 * chunk): chunk B / FA4_SWIZZLE, then the TMA swizzle (address bits
 * [7, 7 + b) XORed into [4, 4 + b), 2^b 16-byte units a row), which holds
 * on the absolute shared address since tiles sit on 1024 B boundaries. */
FA4_DEV u32 smem_input_word(u32 tile, int rows, int row, int b)
{
    const u32 lin = tile + (u32)((b / FA4_SWIZZLE) * rows * FA4_SWIZZLE + row * FA4_SWIZZLE +
                                 b % FA4_SWIZZLE);
    return ld_shared_u32(lin ^ (((lin >> 7) & (FA4_SWIZZLE / 16 - 1)) << 4));
}

/* Q . K over the elements packed in words A and B. */
FA4_DEV float dot_word(u32 a, u32 b, float acc)
{
#if FA4_FP8
#pragma unroll
    for (int e = 0; e < 4; ++e)
        acc = fmaf(cvt_f32_f16_lo(cvt_rn_f16x2_e4m3x2((a >> (8 * e)) & 0xffu)),
                   cvt_f32_f16_lo(cvt_rn_f16x2_e4m3x2((b >> (8 * e)) & 0xffu)), acc);
#elif FA4_DTYPE == 1
    acc = fmaf(__uint_as_float(a << 16), __uint_as_float(b << 16), acc);
    acc = fmaf(__uint_as_float(a & 0xffff0000u), __uint_as_float(b & 0xffff0000u), acc);
#else
    acc = fmaf(cvt_f32_f16_lo(a), cvt_f32_f16_lo(b), acc);
    acc = fmaf(cvt_f32_f16_lo(a >> 16), cvt_f32_f16_lo(b >> 16), acc);
#endif
    return acc;
}

/* This thread's raw scores of the block in K stage K_SMEM (as gemm_qk
 * leaves them in S), recomputed on the CUDA cores from shared memory: the
 * rare block whose exponentials against the running max overflowed
 * (softmax_sum_check).  Slow, exact to fp32 rounding; one rolled dot
 * product per score, a word of each input at a time, so it needs a
 * handful of registers beside S, O and P (the loop's own). */
FA4_DEV void recompute_scores(float (&s)[FA4_BN / 2], u32 smem, u32 k_smem, int wg,
                              int tid FA4_QSLOT_PARAM)
{
    const int lane = tid % 32;
    const int row = wg * 64 + 16 * (tid / 32) + lane / 4;
#pragma unroll
    for (int i = 0; i < FA4_BN / 2; ++i) {
        const int r = row + 8 * ((i >> 1) & 1);
        const int key = 8 * (i / 4) + 2 * (lane % 4) + (i & 1);
        float acc = 0.0f;
#pragma unroll 1
        for (int b = 0; b < FA4_DP * FA4_ESIZE; b += 4)
            acc = dot_word(smem_input_word(FA4_Q_TILE(smem), FA4_BM, r, b),
                           smem_input_word(k_smem, FA4_BN, key, b), acc);
        s[i] = acc;
    }
}

/* Zero rows [LO, HI) of the V tile at V_SMEM (rows that hold no key of
 * the sequence, seqlen.cuh) for this warpgroup's P V: whole FA4_SWIZZLE-byte
 * rows of each chunk, so the swizzle does not matter.  Every warpgroup
 * writes the same zeros; each waits for its own before its GEMM. */
FA4_DEV void zero_v_rows(u32 v_smem, int lo, int hi, int wg, int tid)
{
    constexpr int units = FA4_SWIZZLE / 16; /* 16 B units per row */
    const int rows = hi - lo;
    for (int i = tid; i < rows * units * (FA4_DVP / FA4_CW); i += 128) {
        const int c = i / (rows * units), r = lo + (i / units) % rows, u = i % units;
        st_shared_v4(v_smem + (u32)(c * FA4_BN * FA4_SWIZZLE + r * FA4_SWIZZLE + 16 * u),
                     0u, 0u, 0u, 0u);
    }
    fence_proxy_async_shared_cta();
    named_barrier_sync(FA4_BAR_EPILOGUE_WG0 + wg, 128);
}

/* Before the P V of the main loop's first block N (the tile's last), the
 * V rows of it that hold no key of the sequence (v_zero_rows: only the
 * sequence's last block has them) zeroed; V stage VST.  fp8: the V^T copy
 * wrote zeros there (vtranspose.cuh). */
FA4_DEV void zero_first_block_v(const fa4_seq &sq, u32 smem, fa4_bars bars, const fa4_pipe &vst,
                                int n, int wg, int tid)
{
#if (FA4_VARLEN || FA4_PAGED) && !FA4_FP8
    int lo, hi;
    v_zero_rows(sq, n, &lo, &hi);
    if (lo < hi) {
        mbarrier_wait(bars.v_full(vst.stage), vst.phase);
        zero_v_rows(smem + FA4_V_RING_OFF + vst.stage * FA4_V_SLOT_BYTES, lo, hi, wg, tid);
    }
#else
    (void)sq, (void)smem, (void)bars, (void)vst, (void)n, (void)wg, (void)tid;
#endif
}

/* Block N's scores as the softmax takes them: softcapped (SC:
 * softcap_make), then masked where the block needs it.  The first
 * block, the loop and the recompute all go through here. */
template <int NS>
FA4_DEV void prepare_scores(float (&s)[NS], const fa4_params &p, const fa4_seq &sq, int pos0,
                            int n, int row0, int col0, const fa4_softcap &sc)
{
#if FA4_SOFTCAP
    softcap_scores(s, sc);
#else
    (void)sc;
#endif
    if (kv_block_needs_mask(p, sq, pos0, n))
        mask_scores(s, p, sq, row0, kv_load_row(sq, n) + col0, n * FA4_BN);
}

/* A consumer's first key block N (stage ST) up to its scores: S = Q K^T
 * over the block's first 2 * NS keys, waited for, K freed (and Q after
 * the tile's last block N_LO, unless O will take its bytes), softcapped
 * and masked.  Nothing else of the warpgroup's is in flight. */
template <int NS>
FA4_DEV void first_block_scores(float (&s)[NS], const fa4_params &p, const fa4_seq &sq,
                                u32 smem, fa4_bars bars FA4_QSLOT_PARAM,
                                const fa4_pipe &st, int n, int n_lo,
                                int wg, int lane, int pos0, int row0, int col0,
                                const fa4_softcap &sc)
{
    mbarrier_wait(bars.k_full(st.stage), st.phase);
    pingpong_wait(wg);
    wgmma_fence();
    gemm_qk(s, FA4_Q_TILE(smem) + wg * 64 * FA4_SWIZZLE,
            smem + FA4_K_RING_OFF + st.stage * FA4_K_SLOT_BYTES);
    wgmma_commit_group();
    pingpong_pass(wg);
    wgmma_wait_group<0>();
    fence_array(s);
    release_stage(bars.k_empty(st.stage), lane);
    if (!FA4_O_ALIASES_Q && n == n_lo)
        release_stage(FA4_Q_EMPTY(bars), lane);
    prepare_scores(s, p, sq, pos0, n, row0, col0, sc);
}

/* O += P V of V stage VST with nothing to overlap it (a half block, the
 * tile's last block): waited for, V freed. */
template <int NP>
FA4_DEV void pv_waited(float (&o)[FA4_DVP / 2], u32 (&pr)[NP], u32 smem, fa4_bars bars,
                       const fa4_pipe &vst, int lane)
{
    mbarrier_wait(bars.v_full(vst.stage), vst.phase);
    fence_array(pr);
    fence_array(o);
    wgmma_fence();
    gemm_pv(o, pr, smem + FA4_V_RING_OFF + vst.stage * FA4_V_SLOT_BYTES);
    wgmma_commit_group();
    wgmma_wait_group<0>();
    fence_array(o);
    release_stage(bars.v_empty(vst.stage), lane);
}

#if FA4_DIAG_HALF
/* Key block N when warpgroup WG's rows see none of its second half
 * (wg_sees_half_block: the diagonal block of a causal tile as tall as a
 * block, for its first warpgroup): Q K^T at N = BN/2, the softmax over
 * those scores and P V over those keys, at half the cost of a block.  O
 * and SM start empty.  The P V is waited for here: left in flight into
 * the main loop, O's registers would be copied under it where the two
 * paths meet, and ptxas serialises every wgmma for that (C7515). */
FA4_DEV void consumer_half_block(const fa4_params &p, const fa4_seq &sq, u32 smem,
                                 fa4_bars bars FA4_QSLOT_PARAM,
                                 fa4_pipe &st, int n, int n_lo, int wg, int tid, int pos0,
                                 int row0, float scale_log2, const fa4_softcap &sc,
                                 float (&o)[FA4_DVP / 2], fa4_softmax &sm)
{
    const int lane = tid % 32;
    float s[FA4_BN / 4];
    u32 pr[FA4_P_REGS / 2];
    float factor[2];
    fa4_pipe vst;

    first_block_scores(s, p, sq, smem, bars FA4_QSLOT_ARG, st, n, n_lo, wg, lane, pos0, row0, 2 * (lane % 4),
                       sc);
    softmax_update_max(sm, s, scale_log2, factor);
    softmax_exp(sm, s, scale_log2, factor);
    convert_p(pr, s);
    kv_next(st, vst);
    zero_first_block_v(sq, smem, bars, vst, n, wg, tid);
    pv_waited(o, pr, smem, bars, vst, lane);
}
#endif

/* The loop drops the row max after a consumer's first block (softmax.cuh)
 * unless the variant took the max-first loop (FA4_MAX_FREE 0: lib/jit.c)
 * or softcap's constant max needs none anyway. */
#define FA4_LOOP_MAX_FREE (FA4_MAX_FREE && !FA4_SOFTCAP_FIXED_MAX)

/* The main loop of consumer warpgroup WG over key blocks [n_lo, n_hi) of
 * TILE (at least one): O and the softmax state on return (O unnormalised).  Overlap inside
 * the warpgroup: S(n-1) = Q K^T is issued together with O += P(n) V(n), and
 * the softmax of S(n-1) runs while P(n) V(n) is in flight. */
FA4_DEV void consumer_mainloop(const fa4_params &p, const fa4_seq &sq, u32 smem,
                               fa4_bars bars FA4_QSLOT_PARAM, fa4_pipe &st, const fa4_tile &tile, int n_lo, int n_hi, int wg,
                               int tid, float (&o)[FA4_DVP / 2], fa4_softmax &sm)
{
    const int lane = tid % 32;
    const u32 q_wg = FA4_Q_TILE(smem) + wg * 64 * FA4_SWIZZLE;
    const int m0 = tile.m_block * FA4_BM, pos0 = tile.m_block * FA4_BM_POS;
    const int row0 = thread_row(sq, m0, wg, tid);
    const int col0 = 2 * (lane % 4);
    float scale_log2 = p.scale_log2;
    float softcap_pre = FA4_SOFTCAP ? p.softcap_pre : 0.0f;
#if FA4_FP8
    {
        /* S was computed from the stored values: scale by their factors. */
        const float qk = fp8_descale(p.q_descale, p, tile) * fp8_descale(p.k_descale, p, tile);
#if FA4_SOFTCAP
        softcap_pre *= qk;
#else
        scale_log2 *= qk;
#endif
    }
#endif
    const fa4_softcap sc = softcap_make(softcap_pre, scale_log2);
    float s[FA4_BN / 2];
    u32 pr[FA4_P_REGS];
    float factor[2];

    int n = n_hi - 1;
#if FA4_DIAG_HALF
    /* A first block whose second half these rows do not see runs at half
       width; the block after it then starts the loop with O under way. */
    const bool half = wg_sees_half_block(p, sq, m0, wg, n);
    if (half) {
        consumer_half_block(p, sq, smem, bars FA4_QSLOT_ARG, st, n, n_lo, wg, tid, pos0, row0, scale_log2,
                            sc, o, sm);
        if (n == n_lo)
            return;
        --n;
    }
#endif
    first_block_scores(s, p, sq, smem, bars FA4_QSLOT_ARG, st, n, n_lo, wg, lane, pos0, row0, col0,
                       sc);
#if FA4_DIAG_HALF
    if (half) {   /* O holds the half block's P V */
        if (__any_sync(0xffffffffu, softmax_update_max(sm, s, scale_log2, factor)))
            rescale_o(o, factor);
    } else
#endif
    softmax_update_max(sm, s, scale_log2, factor);
    softmax_exp(sm, s, scale_log2, factor);
    convert_p(pr, s);
    fa4_pipe vst;
    kv_next(st, vst);
#if FA4_DIAG_HALF
    if (!half)   /* else the half block was the sequence's last */
#endif
    zero_first_block_v(sq, smem, bars, vst, n_hi - 1, wg, tid);

    for (; n > n_lo; ) {
        --n;
        mbarrier_wait(bars.k_full(st.stage), st.phase);
        mbarrier_wait(bars.v_full(vst.stage), vst.phase);
        pingpong_wait(wg);
        fence_array(pr);
        fence_array(o);
        wgmma_fence();
        gemm_qk(s, q_wg, smem + FA4_K_RING_OFF + st.stage * FA4_K_SLOT_BYTES);
        wgmma_commit_group();
        gemm_pv(o, pr, smem + FA4_V_RING_OFF + vst.stage * FA4_V_SLOT_BYTES);
        wgmma_commit_group();
        pingpong_pass(wg);
        wgmma_wait_group<1>();
        fence_array(s);
#if !FA4_LOOP_MAX_FREE && !FA4_LATE_K_RELEASE
        release_stage(bars.k_empty(st.stage), lane);   /* no recompute: free K at once */
#endif
#if !FA4_LOOP_MAX_FREE
        if (!FA4_O_ALIASES_Q && n == n_lo)
            release_stage(FA4_Q_EMPTY(bars), lane);
#endif
        prepare_scores(s, p, sq, pos0, n, row0, col0, sc);
        /* Once every row of the warp has a max, the exponentials need no
         * new one (softmax.cuh); K and Q stay until the check for the
         * rare block that goes back to its scores. */
        bool rescale = false, max_first = true;
        if (FA4_LOOP_MAX_FREE && !softmax_warp_has_empty_row(sm)) {
            float sum[2];
            softmax_exp_free(sm, s, scale_log2, sum);
            const int v = softmax_sum_check(sum);
            if (__any_sync(0xffffffffu, v == 2)) {
                /* P V done first: P's registers are free for the recompute. */
                wgmma_wait_group<0>();
                fence_array(o);
                recompute_scores(s, smem, smem + FA4_K_RING_OFF + st.stage * FA4_K_SLOT_BYTES,
                                 wg, tid FA4_QSLOT_ARG);
                prepare_scores(s, p, sq, pos0, n, row0, col0, sc);
            } else {
                max_first = false;
                if (__any_sync(0xffffffffu, v != 0)) {
                    rescale = softmax_renorm(sm, s, sum, factor);
                } else {
                    sm.l[0] += sum[0];
                    sm.l[1] += sum[1];
                }
            }
        }
        if (max_first) {
            rescale = softmax_update_max(sm, s, scale_log2, factor);
#if !FA4_LOOP_MAX_FREE && FA4_LATE_K_RELEASE
            release_stage_after(bars.k_empty(st.stage), lane, sm.m[0] + sm.m[1]);
#endif
            softmax_exp(sm, s, scale_log2, factor);
        }
#if FA4_LOOP_MAX_FREE && FA4_LATE_K_RELEASE
        /* The P V wait below would otherwise run before the exponentials
         * (ptxas hoists it to the top of its block): freeing K after the
         * row sums keeps it there, so they overlap the previous block's
         * P V (bench/NOTES.md). */
        release_stage_after(bars.k_empty(st.stage), lane, sm.l[0] + sm.l[1]);
#elif FA4_LOOP_MAX_FREE
        release_stage(bars.k_empty(st.stage), lane);
#endif
#if FA4_LOOP_MAX_FREE
        if (!FA4_O_ALIASES_Q && n == n_lo)
            release_stage(FA4_Q_EMPTY(bars), lane);
#endif
        wgmma_wait_group<0>();
        fence_array(o);
        fence_array(s);
        release_stage(bars.v_empty(vst.stage), lane);
#if FA4_LATE_K_RELEASE
        /* P before the rescale's branch: in one basic block with the
         * exponentials after the wait, ptxas packs them as they come
         * rather than all after the branch, on the way to the next GEMMs
         * (bench/NOTES.md: 3-4% at d64; fp8 and some persistent tiles
         * lose, so it comes with late_k, which the tuner picks per shape). */
        convert_p(pr, s);
#endif
        if (__any_sync(0xffffffffu, rescale))
            rescale_o(o, factor);
#if !FA4_LATE_K_RELEASE
        convert_p(pr, s);
#endif
        kv_next(st, vst);
    }

    pv_waited(o, pr, smem, bars, vst, lane);
}

#if FA4_WG_RANGES
/* Key block ST passed over by warpgroup WG: its K and V released once they
 * landed (an arrival before that could count toward the slot's previous
 * use), and its ping-pong turn taken and passed on, so that the ring and
 * the turns stay in step with the warpgroups that compute the block. */
FA4_DEV void skip_block(fa4_bars bars, fa4_pipe &st, int wg, int lane)
{
    fa4_pipe vst;
    mbarrier_wait(bars.k_full(st.stage), st.phase);
    release_stage(bars.k_empty(st.stage), lane);
    kv_next(st, vst);
    mbarrier_wait(bars.v_full(vst.stage), vst.phase);
    release_stage(bars.v_empty(vst.stage), lane);
    pingpong_wait(wg);
    pingpong_pass(wg);
}

/* Warpgroup WG's share of the tile's key blocks [n_lo, n_hi): the blocks
 * its rows see (wg_block_range) through the main loop, the others skipped.
 * (Without FA4_WG_RANGES kernel.cuh runs the main loop over them all: even
 * a wrapper that only forwards moves ptxas's schedule.) */
FA4_DEV void consumer_blocks(const fa4_params &p, const fa4_seq &sq, u32 smem,
                             fa4_bars bars FA4_QSLOT_PARAM, fa4_pipe &st, const fa4_tile &tile, int n_lo, int n_hi, int wg,
                             int tid, float (&o)[FA4_DVP / 2], fa4_softmax &sm)
{
    const int lane = tid % 32;
    int lo, hi;
    wg_block_range(p, sq, tile.m_block * FA4_BM, wg, n_lo, n_hi, &lo, &hi);
    for (int n = n_hi - 1; n >= hi; --n)
        skip_block(bars, st, wg, lane);
    if (hi > lo)
        consumer_mainloop(p, sq, smem, bars FA4_QSLOT_ARG, st, tile, lo, hi, wg, tid, o, sm);
    else if (!FA4_O_ALIASES_Q)
        release_stage(FA4_Q_EMPTY(bars), lane);   /* the main loop's last block would */
    for (int n = lo - 1; n >= n_lo; --n)
        skip_block(bars, st, wg, lane);
}
#endif

#endif
