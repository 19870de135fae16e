/*
** kernel.cuh -- sm90 (sm_90a) attention forward: entry point, shared-memory
** carve-up, producer/consumer split.
**
** CTA = 1 producer warpgroup (warp 0 lane 0 issues every TMA load; the
** warpgroup drops to FA4_PRODUCER_REGS registers) + FA4_CONSUMER_WGS
** consumer warpgroups of 64 query rows each (FA4_CONSUMER_REGS registers).
** Shared memory (offsets from the 1024-aligned base, from the budget model,
** lib/budget_sm90.c): Q (BM x DP), K and V rings (FA4_STAGES x BN x DP/DVP)
** or, with FA4_FUSED_KV, one KV ring of FA4_KV_SLOTS slots of BN x DP where
** K and V tiles alternate, O (BM x DVP; may be Q's bytes), BAR (mbarriers).
** Q, K and V tiles are stored as FA4_CW-column chunks of rows x FA4_SWIZZLE
** bytes (FA4_SWIZZLE 128: 64 columns, 128 B swizzle; 64: 32 columns; 32:
** 16 columns), as the TMA boxes {FA4_CW, 1, rows, 1} of the rank-4 maps
** {dim, heads, seq, batch} land; O is stored the same way (epilogue.cuh).
** Head dims pad to whole chunks, at least 64 (the narrowest wgmma N here):
** DP = FA4_CW * ceil(max(D, 64) / FA4_CW), so d96 pads to 128 with 128 B
** swizzle and not at all with 64 or 32 B.  The map's dim extent is D, so TMA
** zero-fills the pad columns, which add 0 to Q K^T and are clipped from the
** O store.  Parameters: (fa4_params, tm_q, tm_k, tm_v, tm_o), and with
** FA4_VARLEN or FA4_PAGED the serving block (common/serving.h;
** seqlen.cuh): varlen maps are {dim, heads, rows, 1} over the packed
** tensors, paged K/V maps {dim, heads, page_size, pages} over the pool.
** fp8 (FA4_DTYPE 3): Q and K as above with 1-byte elements (a chunk is
** FA4_SWIZZLE elements); tm_v is V^T's, a dense [batch, heads_kv, dv, skp]
** copy that fa4_v_transpose (vtranspose.cuh, same module) writes through
** the same address layer before each launch, for dense, varlen and paged
** batches alike.
*/
#ifndef FA4_SM90_KERNEL_CUH
#define FA4_SM90_KERNEL_CUH

#include "common/types.cuh"
#include "common/params.h"
#include "common/ptx_sm90.cuh"

#if FA4_DV == 0 /* head_dim_v 0 means head_dim_qk */
#undef FA4_DV
#define FA4_DV FA4_D
#endif

#if FA4_DTYPE == 1
#define FA4_AB FA4_AB_BF16
#define FA4_FP8 0
#elif FA4_DTYPE == 2
#define FA4_AB FA4_AB_F16
#define FA4_FP8 0
#elif FA4_DTYPE == 3
#define FA4_AB FA4_AB_E4M3
#define FA4_FP8 1
#else
#error "sm90 kernel: FA4_DTYPE must be 1 (bf16), 2 (fp16) or 3 (fp8 e4m3)"
#endif
#ifndef FA4_TAIL_SPLIT /* tail.cuh: defined (1) only for config splits = 0 */
#define FA4_TAIL_SPLIT 0
#endif
#ifndef FA4_LATE_K_RELEASE /* mainloop.cuh: defined (1) only for config late_k = 1 */
#define FA4_LATE_K_RELEASE 0
#endif
#ifndef FA4_SOFTCAP_FIXED_MAX /* softmax.cuh: defined (1) only for bf16 under a small cap */
#define FA4_SOFTCAP_FIXED_MAX 0
#endif
#ifndef FA4_WG_RANGES /* mask.cuh: defined (1) only where budget_sm90.c says it pays */
#define FA4_WG_RANGES 0
#endif
#ifndef FA4_DIAG_HALF /* mask.cuh: defined (1) only where budget_sm90.c says it pays */
#define FA4_DIAG_HALF 0
#endif
#ifndef FA4_MAX_FREE /* softmax.cuh: 0 only where the max-free loop spills (lib/jit.c) */
#define FA4_MAX_FREE 1
#endif
#ifndef FA4_PACK_GQA /* seqlen.cuh: defined (1) only for config pack_gqa = 1 */
#define FA4_PACK_GQA 0
#endif
#if !FA4_PACK_GQA     /* the packed group (heads_q / heads_kv), else 1 */
#undef FA4_GROUP
#define FA4_GROUP 1
#endif
#ifndef FA4_Q_SLOTS /* mainloop.cuh: 2 only where budget_sm90.c says it pays */
#define FA4_Q_SLOTS 1
#endif
#ifndef FA4_HEAD_GROUP /* scheduler.cuh: defined (>= 2) only where budget_sm90.c says */
#define FA4_HEAD_GROUP 0
#endif
#ifndef FA4_OUT_DTYPE /* O's type: the inputs' for 16-bit inputs */
#define FA4_OUT_DTYPE FA4_DTYPE
#endif

/* Input element bytes; a wgmma k-step (32 B of each K-major row) in elements. */
#define FA4_ESIZE (FA4_FP8 ? 1 : 2)
#define FA4_KSTEP (32 / FA4_ESIZE)
#define FA4_CW (FA4_SWIZZLE / FA4_ESIZE) /* input columns per swizzled chunk */
#define FA4_OCW (FA4_SWIZZLE / 2)        /* O (16-bit) columns per chunk */
#define FA4_PAD(x, w) ((((x) < 64 ? 64 : (x)) + (w) - 1) / (w) * (w))
#define FA4_DP FA4_PAD(FA4_D, FA4_CW)
/* O's columns pad to whole O chunks; V's (or, fp8, V^T's rows) likewise. */
#define FA4_DVP FA4_PAD(FA4_DV, FA4_OCW)
#define FA4_Q_BYTES (FA4_BM * FA4_DP * FA4_ESIZE)
#define FA4_K_STAGE_BYTES (FA4_BN * FA4_DP * FA4_ESIZE)
#define FA4_V_STAGE_BYTES (FA4_BN * FA4_DVP * FA4_ESIZE)
/* P's packed registers per thread: BN/2 scores, 2 (16-bit) or 4 (fp8) a register. */
#define FA4_P_REGS (FA4_BN * FA4_ESIZE / 8)
/* fp8: P <= 2^FA4_RESCALE_THRESHOLD (the running max lags by at most that)
 * is computed as 2^(8 - threshold) times itself, so that it spans e4m3's
 * normal range up to 256 < 448 (small P keep 3 mantissa bits instead of
 * flushing).  The factor rides in the exponent (softmax.cuh: the max it
 * subtracts is lowered by FA4_P_LOG2), so it costs no multiply, and l
 * carries it too, which cancels in O / l. */
#if FA4_FP8
#define FA4_P_LOG2 (8 - FA4_RESCALE_THRESHOLD)
#else
#define FA4_P_LOG2 0
#endif

/* The K/V ring: FA4_RING slots; K and V of one key block sit in one stage
 * of the split rings, or in two consecutive slots of the fused ring.  Slot
 * s of K is at FA4_K_RING_OFF + s * FA4_K_SLOT_BYTES, V likewise (call sites
 * spell the sum out as before: the split-ring cubins stay byte-identical). */
#if FA4_FUSED_KV
#define FA4_RING FA4_KV_SLOTS
#define FA4_KV_SLOT_BYTES FA4_K_STAGE_BYTES /* max(K, V) tile: DVP <= DP */
#define FA4_K_RING_OFF FA4_SMEM_KV_OFF
#define FA4_V_RING_OFF FA4_SMEM_KV_OFF
#define FA4_K_SLOT_BYTES FA4_KV_SLOT_BYTES
#define FA4_V_SLOT_BYTES FA4_KV_SLOT_BYTES
#else
#define FA4_RING FA4_STAGES
#define FA4_K_RING_OFF FA4_SMEM_K_OFF
#define FA4_V_RING_OFF FA4_SMEM_V_OFF
#define FA4_K_SLOT_BYTES FA4_K_STAGE_BYTES
#define FA4_V_SLOT_BYTES FA4_V_STAGE_BYTES
#endif

/* The dynamic scheduler's slot after the barriers: the tile, and for
 * varlen the producer's cursor (mainloop.cuh). */
#define FA4_TILE_SLOT_BYTES (FA4_SCHEDULER != 3 ? 0 : FA4_VARLEN ? 32 : 16)
/* Q slot 1's two barriers and (dynamic scheduler) tile slot, after those. */
#define FA4_Q1_BAR_BYTES (FA4_Q_SLOTS == 1 ? 0 : FA4_SCHEDULER != 3 ? 16 : 32)

static_assert(FA4_SWIZZLE == 128 || FA4_SWIZZLE == 64 || FA4_SWIZZLE == 32,
              "sm90 kernel: swizzle 128, 64 or 32 B");
static_assert(FA4_CLUSTER == 1, "sm90 kernel: clusters are not implemented");
static_assert(FA4_BM == 64 * FA4_CONSUMER_WGS, "sm90: BM = 64 rows per consumer warpgroup");
static_assert(FA4_THREADS == 128 * (1 + FA4_CONSUMER_WGS), "sm90: one producer warpgroup");
static_assert(FA4_BN % 16 == 0 && FA4_BN >= 64 && FA4_BN <= 256, "sm90: BN in 64..256, step 16");
static_assert(FA4_DVP <= 256 && FA4_DP <= 256, "sm90: head dims up to 256");
static_assert(FA4_DV <= FA4_D, "sm90: head_dim_v <= head_dim_qk");
static_assert(FA4_STAGES >= 2, "sm90: at least 2 K/V stages");
static_assert(!FA4_FP8 || (FA4_BN % FA4_CW == 0 && FA4_RESCALE_THRESHOLD <= 8 &&
                           (FA4_OUT_DTYPE == 1 || FA4_OUT_DTYPE == 2)),
              "sm90 fp8: BN whole V^T chunks, rescale threshold <= 8, O in bf16 or fp16");
static_assert(!FA4_PAGED || (FA4_PAGE_BOX >= 16 && FA4_BN % FA4_PAGE_BOX == 0 &&
                              (FA4_PAGE_BOX & (FA4_PAGE_BOX - 1)) == 0),
              "sm90: paged key blocks are whole power-of-two boxes of at least 16 rows "
              "(a box never crosses a page)");
static_assert(!FA4_TAIL_SPLIT || (FA4_SCHEDULER == 0 && !FA4_VARLEN && !FA4_PAGED),
              "sm90: the tail split is the plain grid's, over dense batches");
static_assert(!FA4_PACK_GQA || (FA4_GROUP >= 2 && 64 % FA4_GROUP == 0 && !FA4_TAIL_SPLIT),
              "sm90: GQA packing with a group dividing 64, no tail split");
static_assert(!FA4_VARLEN || FA4_SCHEDULER == 0 || FA4_SCHEDULER == 3,
              "sm90: varlen tiles come from the plain or the dynamic scheduler");
#if FA4_FUSED_KV
static_assert(FA4_KV_SLOTS >= 2, "sm90: the fused ring holds K(n-1) and V(n) at once");
static_assert(FA4_SMEM_Q_OFF % 1024 == 0 && FA4_SMEM_KV_OFF % 1024 == 0 &&
              FA4_SMEM_O_OFF % 1024 == 0 && FA4_KV_SLOT_BYTES % (8 * FA4_SWIZZLE) == 0,
              "sm90: regions 1024-aligned, slots on the swizzle repeat (8 rows)");
static_assert(FA4_SMEM_KV_SIZE >= FA4_KV_SLOTS * FA4_KV_SLOT_BYTES, "sm90: KV region");
static_assert(FA4_SMEM_BAR_SIZE >= 16 + 16 * FA4_KV_SLOTS + FA4_TILE_SLOT_BYTES + FA4_Q1_BAR_BYTES,
              "sm90: BAR region (+ the dynamic scheduler's tile slot)");
#else
static_assert(FA4_SMEM_Q_OFF % 1024 == 0 && FA4_SMEM_K_OFF % 1024 == 0 &&
              FA4_SMEM_V_OFF % 1024 == 0 && FA4_SMEM_O_OFF % 1024 == 0,
              "sm90: swizzled tiles are 1024-aligned");
static_assert(FA4_SMEM_K_SIZE >= FA4_STAGES * FA4_K_STAGE_BYTES, "sm90: K region");
static_assert(FA4_SMEM_V_SIZE >= FA4_STAGES * FA4_V_STAGE_BYTES, "sm90: V region");
static_assert(FA4_SMEM_BAR_SIZE >= 16 + 32 * FA4_STAGES + FA4_TILE_SLOT_BYTES + FA4_Q1_BAR_BYTES,
              "sm90: BAR region (+ the dynamic scheduler's tile slot)");
#endif
static_assert(FA4_SMEM_Q_SIZE >= FA4_Q_SLOTS * FA4_Q_BYTES && FA4_Q_BYTES % 1024 == 0,
              "sm90: Q region (FA4_Q_SLOTS tiles, each 1024-aligned)");
static_assert(FA4_Q_SLOTS == 1 || (FA4_Q_SLOTS == 2 && FA4_SCHEDULER != 0 && !FA4_PAGED &&
                                   !FA4_TAIL_SPLIT),
              "sm90: two Q slots under the persistent schedulers, over contiguous K/V");
static_assert(FA4_SMEM_O_SIZE >= FA4_BM * FA4_DVP * 2, "sm90: O region");
static_assert(!FA4_FP8 || !(FA4_SMEM_O_OFF < FA4_SMEM_Q_OFF + FA4_SMEM_Q_SIZE &&
                            FA4_SMEM_Q_OFF < FA4_SMEM_O_OFF + FA4_SMEM_O_SIZE),
              "sm90 fp8: O (16-bit, wider chunks than Q's) never takes Q's bytes");
static_assert(FA4_SMEM_BAR_OFF + FA4_SMEM_BAR_SIZE + 1024 <= FA4_SMEM_BYTES,
              "sm90: layout + 1024 B base-alignment slack within FA4_SMEM_BYTES");

#include "sm90/barriers.cuh"
#include "sm90/seqlen.cuh"
#include "sm90/scheduler.cuh"
#include "sm90/mask.cuh"
#include "sm90/softmax.cuh"
#include "sm90/epilogue.cuh"
#include "sm90/tail.cuh"
#include "sm90/mainloop.cuh"
#if FA4_FP8
#include "sm90/vtranspose.cuh"
#endif
#if FA4_TAIL_SPLIT
#include "common/combine.cuh"
#endif

/* A consumer warpgroup: every tile of the CTA, main loop then epilogue. */
FA4_DEV void consumer_run(const fa4_params &p FA4_SERVING_PARAM, const fa4_tma_map *tm_o,
                          u32 smem, fa4_bars bars, int wg, int tid)
{
    fa4_pipe st = {0, 0u};
    u32 q_phase = 0;   /* the next tile's Q slot and its barriers' phase */
    FA4_Q_SLOT_VAR q_next = 0;
    int q_slot;        /* this tile's */
    fa4_tile tile;
#if FA4_PINGPONG
    /* The last warpgroup hands the first turn to warpgroup 0. */
    if (wg == FA4_CONSUMER_WGS - 1)
        named_barrier_arrive(FA4_BAR_PINGPONG_WG0, 256);
#endif
#if FA4_SCHED_DYNAMIC
    /* The producer publishes each tile (or the end) in the tile slot before
       q_full completes.  (Waiting at the loop's end rather than its top
       keeps ptxas from spilling at the register limits.) */
    mbarrier_wait(bars.q_full(q_next), q_phase);
    q_slot = q_next;
    FA4_Q_ADVANCE(q_next, q_phase);
    for (bool more = sched_read(tile_slot(bars, q_slot), &tile); more; ) {
#else
    fa4_sched_cursor cur = {0, 0};
    for (int t = sched_first(); sched_tile(p FA4_SERVING_ARG, cur, t, &tile);
         t = sched_next(p, t)) {
#endif
        float o[FA4_DVP / 2];
#pragma unroll
        for (int i = 0; i < FA4_DVP / 2; ++i)
            o[i] = 0.0f;
        fa4_softmax sm;
        softmax_init(sm);

#if !FA4_SCHED_DYNAMIC
        mbarrier_wait(bars.q_full(q_next), q_phase);
        q_slot = q_next;
        FA4_Q_ADVANCE(q_next, q_phase);
#endif
#if FA4_Q_SLOTS == 2
        const fa4_qslot qs = qslot_of(smem, bars, q_slot);
#endif
        int n_lo, n_hi;
        {
            const fa4_seq sq = seq_of(p FA4_SERVING_ARG, tile.batch);
            kv_block_range(p, sq, tile.m_block * FA4_BM_POS, &n_lo, &n_hi);
            tail_part_blocks(p, &n_lo, &n_hi);
            if (n_hi > n_lo)
#if FA4_WG_RANGES
                consumer_blocks(p, sq, smem, bars FA4_QSLOT_ARG, st, tile, n_lo, n_hi, wg, tid, o, sm);
#else
                consumer_mainloop(p, sq, smem, bars FA4_QSLOT_ARG, st, tile, n_lo, n_hi, wg, tid, o, sm);
#endif
        }

        float inv[2], lse[2];
#if FA4_TAIL_SPLIT || (FA4_SCHEDULER == 0 && FA4_HEAD_GROUP)
        /* The tile again (divisions, or the grouped grid's shift and mask,
           not plain grid indices: held through the main loop they take
           registers the 3-warpgroup tiles lack). */
        sched_tile(p FA4_SERVING_ARG, cur, t, &tile);
#endif
        /* Read again rather than kept in registers through the main loop. */
        const fa4_seq sq = seq_of(p FA4_SERVING_ARG, tile.batch);
#if FA4_SINKS
        {
            /* A tail part's LSE leaves the sink to the merge (combine.cuh).
               The thread's two rows (r, r + 8) may be two heads (packed GQA). */
            const int r = thread_row(sq, tile.m_block * FA4_BM, wg, tid);
            float sink[2];
#pragma unroll
            for (int h = 0; h < 2; ++h)
                sink[h] = tail_part(p) >= 0 ? FA4_NEG_INF
                          : ((const float *)p.sinks)[row_head(tile.head, r + 8 * h)] *
                                1.4426950408889634f;
            softmax_finish(sm, p.scale_log2, inv, lse, sink);
        }
#else
        {
            const float none[2] = { 0.0f, 0.0f };
            softmax_finish(sm, p.scale_log2, inv, lse, none);
        }
#endif
#if FA4_FP8
        {
            /* P V used V's stored values (P's scale cancels in 1 / l). */
            const float f = fp8_descale(p.v_descale, p, tile);
            inv[0] *= f;
            inv[1] *= f;
        }
#endif
#if FA4_TAIL_SPLIT
        if (tail_part(p) >= 0)
            tail_store_partial(p, o, inv, lse, wg, tid);
        else
#endif
        epilogue_store(p FA4_SERVING_ARG, sq, tm_o, smem + FA4_SMEM_O_OFF, o, inv, lse, tile,
                       wg, tid);
        /* Q not yet released (the main loop does when O has its own bytes):
         * after the O store has read Q's bytes, for the 4 warps at once. */
        if ((FA4_O_ALIASES_Q || n_hi <= n_lo) && tid == 0) {
            cp_async_bulk_wait_group_read0();
            mbarrier_arrive_count(bars.q_empty(q_slot), 4);
        }
#if FA4_SCHED_DYNAMIC
        mbarrier_wait(bars.q_full(q_next), q_phase);
        q_slot = q_next;
        FA4_Q_ADVANCE(q_next, q_phase);
        more = sched_read(tile_slot(bars, q_slot), &tile);
#endif
    }
    if (tid == 0)
        cp_async_bulk_wait_group0();
}

extern "C" __global__ void __launch_bounds__(FA4_THREADS, 1)
fa4_fwd(const __grid_constant__ fa4_params p, const __grid_constant__ fa4_tma_map tm_q,
        const __grid_constant__ fa4_tma_map tm_k, const __grid_constant__ fa4_tma_map tm_v,
        const __grid_constant__ fa4_tma_map tm_o
#if FA4_VARLEN || FA4_PAGED
        , const __grid_constant__ fa4_serving sv
#endif
        )
{
    extern __shared__ __align__(1024) u8 fa4_smem[];
    /* The budget adds 1024 B of slack: align the base here. */
    const u32 smem = (smem_u32(fa4_smem) + 1023u) & ~1023u;
    fa4_bars bars;
    bars.base = smem + FA4_SMEM_BAR_OFF;
    const int warp = warp_id_uniform();
    const int lane = (int)(threadIdx.x % 32);

    if (threadIdx.x == 0) {
        prefetch_tensormap(&tm_q);
        prefetch_tensormap(&tm_k);
        prefetch_tensormap(&tm_v);
        prefetch_tensormap(&tm_o);
        for (int q = 0; q < FA4_Q_SLOTS; ++q) {
            mbarrier_init(bars.q_full(q), 1);
            mbarrier_init(bars.q_empty(q), 4 * FA4_CONSUMER_WGS);
        }
        for (int s = 0; s < FA4_RING; ++s) {
#if FA4_FUSED_KV
            mbarrier_init(bars.k_full(s), 1); /* = v_full(s): one pair per slot */
            mbarrier_init(bars.k_empty(s), 4 * FA4_CONSUMER_WGS);
#else
            mbarrier_init(bars.k_full(s), 1);
            mbarrier_init(bars.v_full(s), 1);
            mbarrier_init(bars.k_empty(s), 4 * FA4_CONSUMER_WGS);
            mbarrier_init(bars.v_empty(s), 4 * FA4_CONSUMER_WGS);
#endif
        }
        fence_mbarrier_init();
    }
    __syncthreads();

    if (warp < 4) {
        setmaxnreg_dec<FA4_PRODUCER_REGS>();
        if (warp == 0 && lane == 0)
            producer_run(p FA4_SERVING_ARG, &tm_q, &tm_k, &tm_v, smem, bars);
    } else {
        setmaxnreg_inc<FA4_CONSUMER_REGS>();
        const int wg = warp / 4 - 1;
        consumer_run(p FA4_SERVING_ARG, &tm_o, smem, bars, wg, (int)threadIdx.x % 128);
    }
}

#endif
