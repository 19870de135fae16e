/*
** sm100/mainloop.cuh -- the load warp (TMA into the K/V ring) and the MMA
** warp (S_i = Q_i K^T into TMEM, O_i += P_i V with P from TMEM).
** Included by sm100/kernel.cuh after the ring and barrier helpers.
** In a CTA pair (FA4_CTA_GROUP 2) both CTAs load their halves onto the
** leader's barriers and only the leader's MMA warp issues.
** UNVERIFIED ON HARDWARE (see kernel.cuh).
*/
#ifndef FA4_SM100_MAINLOOP_CUH
#define FA4_SM100_MAINLOOP_CUH

/* Arm BAR for this step's BYTES: every CTA of the pair brings as many,
 * and only the leader (whose barrier they all complete on) arms it. */
FA4_DEV void arm_full(const sm100_ctx &c, u32 bar, u32 bytes)
{
    if (c.rank == 0)
        mbarrier_arrive_expect_tx(bar, bytes * FA4_CTA_GROUP);
}

/* The leader's MMAs release ring slots in both CTAs of a pair (multicast
 * commits): wait for the last release of every slot, so that no such
 * arrive is still on its way when the CTA leaves.  Alone: nothing (the
 * CTA's own commits). */
FA4_DEV void drain_ring(const sm100_ctx &c)
{
#if FA4_CTA_GROUP == 2
    int t, j, ch;
#if FA4_FUSED_KV
    for (t = 2 * c.n - FA4_KV_SLOTS > 0 ? 2 * c.n - FA4_KV_SLOTS : 0; t < 2 * c.n; t++) {
        j = t >> 1;
        if (t & 1)
            mbarrier_wait(v_empty(c, j), v_phase(j));
        else
            mbarrier_wait(k_empty(c, j, 0), k_phase(j));
    }
    (void)ch;
#else
    for (j = c.n - FA4_KV_SLOTS > 0 ? c.n - FA4_KV_SLOTS : 0; j < c.n; j++) {
        for (ch = 0; ch < FA4_K_CHUNKS; ch++)
            mbarrier_wait(k_empty(c, j, ch), k_phase(j));
        mbarrier_wait(v_empty(c, j), v_phase(j));
    }
    (void)t;
#endif
#else
    (void)c;
#endif
}

/* Load warp: Q tile 1 per depth box (its own barriers), Q tile 0 on the
 * first K barrier, then K_j, V_j in order (in rope mode K_j's last depth
 * boxes to its ROPE buffer, on the same barrier).  Producers wait on "empty"
 * with the parity flipped, so the first pass through the ring falls
 * through.  A CTA of a pair loads its own Q rows, keys key0 + rank *
 * K_ROWS of K_j and V_j's depth boxes from rank * V_CHUNKS, each
 * completing on the leader's barrier (lead_bar). */
FA4_DEV void load_warp(const fa4_params &p, const sm100_ctx &c,
                       const fa4_tma_map *tq, const fa4_tma_map *tk,
                       const fa4_tma_map *tv)
{
    int j, ch;

    if (c.n == 0 || !elect_one_sync())
        return;
    for (ch = 0; FA4_Q_TILES == 2 && ch < SM100_DQK_CHUNKS; ch++) {
        u32 bar = bar_addr(c, BAR_Q1_FULL + ch);
        arm_full(c, bar, SM100_Q_CHUNK_BYTES);
        tma_load_4d(c.smem + FA4_SMEM_Q_OFF + SM100_Q_TILE_BYTES + ch * SM100_Q_CHUNK_BYTES,
                    tq, lead_bar(bar), ch * SM100_SW_ELEMS, c.m0 + 128, c.head, c.batch);
    }
    for (j = 0; j < c.n; j++) {
        int key0 = (c.n_begin + j) * FA4_BN;
        u32 vt = v_tile(c, j);

        /* K_j: one barrier per depth chunk in split mode, one in fused. */
        for (ch = 0; ch < SM100_DQK_CHUNKS; ch++) {
            int kc = FA4_K_CHUNKS == 1 ? 0 : ch;
            u32 full = k_full(c, j, kc);
            if (ch == 0 || FA4_K_CHUNKS > 1) {
                u32 bytes = FA4_K_CHUNKS > 1 ? SM100_K_CHUNK_BYTES : SM100_K_TILE_BYTES;
                if (j == 0 && ch == 0)
                    bytes += SM100_Q_TILE_BYTES;          /* Q tile 0 rides here */
                mbarrier_wait(k_empty(c, j, kc), k_phase(j) ^ 1u);
                arm_full(c, full, bytes);
            }
            tma_load_4d(k_chunk(c, j, ch), tk, lead_bar(full),
                        ch * SM100_SW_ELEMS, key0 + c.rank * SM100_K_ROWS, c.kv_head, c.batch);
            if (j == 0 && ch == 0) {
                int qc;
                for (qc = 0; qc < SM100_DQK_CHUNKS; qc++)
                    tma_load_4d(c.smem + FA4_SMEM_Q_OFF + qc * SM100_Q_CHUNK_BYTES,
                                tq, lead_bar(full), qc * SM100_SW_ELEMS, c.m0, c.head, c.batch);
            }
        }
        /* V_j */
        mbarrier_wait(v_empty(c, j), v_phase(j) ^ 1u);
        arm_full(c, v_full(c, j), SM100_V_TILE_BYTES);
        for (ch = 0; ch < SM100_V_CHUNKS; ch++)
            tma_load_4d(vt + ch * SM100_V_CHUNK_BYTES, tv, lead_bar(v_full(c, j)),
                        (c.rank * SM100_V_CHUNKS + ch) * SM100_SW_ELEMS, key0, c.kv_head,
                        c.batch);
    }
    drain_ring(c);
}

/* The swizzle of the tiles as a descriptor layout (2 = 128 B, 4 = 64 B) and
 * its stride byte offset: 8 rows of one swizzle span. */
#define SM100_DESC_LAYOUT (SM100_ROW_BYTES == 128 ? 2u : 4u)
#define SM100_SBO (8 * SM100_ROW_BYTES)

/* The instruction descriptor of this variant's MMAs (f32 D, A K-major, B
 * MN-major when B_MN): kind::f16 for bf16/fp16, kind::f8f6f4 for e4m3. */
FA4_DEV constexpr u32 mma_idesc(u32 m, u32 n, u32 b_mn)
{
#if SM100_FP8
    return umma_idesc(UMMA_E4M3, UMMA_E4M3, m, n, 0, b_mn);
#else
    return umma_idesc(FA4_DTYPE == 1, FA4_DTYPE == 1, m, n, 0, b_mn);
#endif
}

/* One MMA of this variant's kind: A and B from smem (ss), or A from TMEM
 * (ts). */
FA4_DEV void mma_ss(u32 d, u64 a, u64 b, u32 idesc, u32 accumulate)
{
#if SM100_FP8
    tcgen05_mma_f8f6f4_ss(d, a, b, idesc, accumulate);
#else
    tcgen05_mma_f16_ss(d, a, b, idesc, accumulate);
#endif
}
FA4_DEV void mma_ts(u32 d, u32 a, u64 b, u32 idesc, u32 accumulate)
{
#if SM100_FP8
    tcgen05_mma_f8f6f4_ts(d, a, b, idesc, accumulate);
#else
    tcgen05_mma_f16_ts(d, a, b, idesc, accumulate);
#endif
}

/* S = Q_i K_j^T into tile i's S buffer for block j (M 128, or 256 over a
 * pair; N BN, of which a pair's CTAs hold K_ROWS each; K padded depth),
 * both K-major in smem, one MMA_K step (32 bytes of each row) at a time;
 * in rope mode the last depth boxes' k-steps read K_j's ROPE buffer
 * (k_chunk), with the same descriptors and MMA kind as the slot's.  The
 * waits for Q1 and K_j come whether or not ISSUE (tile_sees()) lets the
 * MMAs run: the other tile and the slot's release depend on them. */
FA4_DEV void mma_s(const sm100_ctx &c, int i, int j, bool issue)
{
    constexpr u32 idesc = mma_idesc(SM100_MMA_M, FA4_BN, 0);
    const u32 q = c.smem + FA4_SMEM_Q_OFF + (u32)i * SM100_Q_TILE_BYTES;
    const u32 d = c.tmem + s_col(s_buf(i, j));
    int kk;

#pragma unroll
    for (kk = 0; kk < FA4_PAD_DQK / SM100_MMA_K; kk++) {
        const int ch = kk / SM100_KSTEPS_ROW;      /* swizzle box of the depth */
        const u32 in = (u32)(kk % SM100_KSTEPS_ROW) * 32; /* k-step inside a row */
        if (kk % SM100_KSTEPS_ROW == 0) {
            if (i == 1 && j == 0)
                mbarrier_wait(bar_addr(c, BAR_Q1_FULL + ch), 0);
            if (i == 0 && (FA4_K_CHUNKS > 1 || ch == 0))
                mbarrier_wait(k_full(c, j, FA4_K_CHUNKS > 1 ? ch : 0), k_phase(j));
        }
        if (issue)
            mma_ss(d,
                umma_smem_desc(q + ch * SM100_Q_CHUNK_BYTES + in, 16, SM100_SBO,
                               SM100_DESC_LAYOUT),
                umma_smem_desc(k_chunk(c, j, ch) + in, 16, SM100_SBO, SM100_DESC_LAYOUT),
                idesc, kk > 0);
    }
}

/* O_i (+)= P_i V_j for key half H (the tile's FIRST seen step overwrites
 * O_i): P from TMEM (16-bit pairs or four e4m3
 * per column, aliasing S in its buffer: an MMA k-step is 8 columns either
 * way), V MN-major in smem (LBO = distance between swizzle boxes of dv,
 * SBO = 8 keys x one swizzle row, k-step = MMA_K keys x one row).  M 128,
 * or 256 over a pair whose CTAs hold V_COLS of the N = padded dv columns
 * each. */
FA4_DEV void mma_pv(const sm100_ctx &c, int i, int j, int h, int first)
{
    constexpr u32 idesc = mma_idesc(SM100_MMA_M, FA4_PAD_DV, 1);
    const u32 v = v_tile(c, j);
    const u32 s = c.tmem + s_col(s_buf(i, j));
    const u32 d = c.tmem + (i ? FA4_TMEM_O1 : FA4_TMEM_O0);
    const int steps = FA4_BN / SM100_MMA_K / FA4_PV_STAGES;
    int kk;

#pragma unroll
    for (kk = h * steps; kk < (h + 1) * steps; kk++)
        mma_ts(d, s + (u32)kk * 8,
               umma_smem_desc(v + (u32)kk * SM100_MMA_K * SM100_ROW_BYTES,
                              SM100_V_CHUNK_BYTES, SM100_SBO, SM100_DESC_LAYOUT),
               idesc, j > first || kk > 0);
}

/* Both halves of P_i V_j, each after softmax i released it (in a pair:
 * both CTAs' softmax i, arriving from across the cluster), when ISSUE
 * (the tile sees block j; FIRST: its first seen step); then tell the
 * correction warpgroup O_i is complete for step j -- a commit either way,
 * so O_FULL's phases stay one per step. */
FA4_DEV void mma_pv_tile(const sm100_ctx &c, int i, int j, bool issue, int first)
{
    int h;
    for (h = 0; h < FA4_PV_STAGES; h++) {
        const u32 bar = bar_addr(c, BAR_P_FULL + s_buf(i, j) * FA4_PV_STAGES + h);
#if FA4_CTA_GROUP == 2
        mbarrier_wait_cluster(bar, s_phase(j));
#else
        mbarrier_wait(bar, s_phase(j));
#endif
        tcgen05_fence_after_thread_sync();
        if (issue)
            mma_pv(c, i, j, h, first);
    }
    tcgen05_commit(bar_addr(c, BAR_O_FULL + i));
}

/* Release every barrier of K_j's slot (stage) to the load warp. */
FA4_DEV void release_k(const sm100_ctx &c, int j)
{
    int ch;
    for (ch = 0; ch < FA4_K_CHUNKS; ch++)
        tcgen05_commit(k_empty(c, j, ch));
}

/* MMA warp, one elected thread issues everything (in a pair, the
 * leader's; the peer's warp has nothing to issue); in 2Q mode alone a
 * tile's MMAs only for the blocks its rows see (tile_sees, kernel.cuh),
 * with every wait and commit kept.  Order per step j:
 *   2Q:  P0 V_{j-1} | S0 = Q0 K_j | P1 V_{j-1} | S1 = Q1 K_j
 *   1Q:  S_j = Q K_j (buffer j % 2) | P_{j-1} V_{j-1} (the other buffer)
 * P aliases S in its buffer, so the P V that reads a buffer is issued
 * before the next S overwrites it (tcgen05.mma from one thread run in
 * issue order -- PTX ISA; unverified here). */
FA4_DEV void mma_warp(const fa4_params &p, const sm100_ctx &c)
{
    /* the blocks each query tile's rows see: its MMAs (tile_sees) */
    const sm100_blocks tb0 = tile_blocks(p, c.m0, 128);
    const sm100_blocks tb1 = tile_blocks(p, c.m0 + 128, 128);
    const int first0 = tile_first(tb0, c), first1 = tile_first(tb1, c);
    int j;

    if (c.n == 0 || c.rank != 0 || !elect_one_sync())
        return;
    for (j = 0; FA4_Q_TILES == 1 && j < c.n; j++) {
        mma_s(c, 0, j, true);
        tcgen05_commit(bar_addr(c, BAR_S_FULL + s_buf(0, j)));
        if (j > 0) {
            mbarrier_wait(v_full(c, j - 1), v_phase(j - 1));
            tcgen05_fence_after_thread_sync();
            mma_pv_tile(c, 0, j - 1, true, 0);
            tcgen05_commit(v_empty(c, j - 1));
        }
        release_k(c, j);
    }
    for (j = 0; FA4_Q_TILES == 2 && j < c.n; j++) {
        if (j > 0) {
            mbarrier_wait(v_full(c, j - 1), v_phase(j - 1));
            tcgen05_fence_after_thread_sync();
            mma_pv_tile(c, 0, j - 1, tile_sees(tb0, c, j - 1), first0);
        }
        mma_s(c, 0, j, tile_sees(tb0, c, j));
        tcgen05_commit(bar_addr(c, BAR_S_FULL + 0));
        if (j > 0) {
            mma_pv_tile(c, 1, j - 1, tile_sees(tb1, c, j - 1), first1);
            tcgen05_commit(v_empty(c, j - 1));
        }
        mma_s(c, 1, j, tile_sees(tb1, c, j));
        tcgen05_commit(bar_addr(c, BAR_S_FULL + 1));
        release_k(c, j);
    }
    mbarrier_wait(v_full(c, c.n - 1), v_phase(c.n - 1));
    tcgen05_fence_after_thread_sync();
    mma_pv_tile(c, 0, c.n - 1, tile_sees(tb0, c, c.n - 1), FA4_Q_TILES == 2 ? first0 : 0);
    if (FA4_Q_TILES == 2)
        mma_pv_tile(c, 1, c.n - 1, tile_sees(tb1, c, c.n - 1), first1);
    tcgen05_commit(v_empty(c, c.n - 1));
}

#endif
