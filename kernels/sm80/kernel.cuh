/*
** sm80/kernel.cuh -- the portable attention forward kernel (mma.sync +
** ldmatrix + cp.async), correct on sm_80 and every later arch.
**
** One CTA computes BM query rows of one (sequence, head, KV split); each
** of its FA4_WARPS warps owns WARP_ROWS = BM / WARPS consecutive rows, 16
** or 32: MT = WARP_ROWS / 16 m16 row tiles (with FA4_KV_SPLIT_WARPS, BM =
** 16 and the warps split every key block instead).  Each K and V
** fragment a warp reads with ldmatrix feeds the MMAs of all its MT tiles,
** so shared-memory traffic per MMA falls by MT: at 16 rows that traffic
** bounds the loop (bench/NOTES.md, sm80 v1); 32 rows is FlashAttention-2's
** split.  Q fragments, S/P, O and the softmax state are arrays over the
** MT tiles; at 32 rows and d128 O and S alone hold 192 registers, which is
** what shapes mainloop.cuh.
**
** S = Q K^T is accumulated in registers and its accumulator layout reused
** as the A operand of O += P V (P never touches shared memory); V is read
** with ldmatrix.trans.  Q stays in registers (FA4_Q_IN_REGS) where its MT
** x D/4 registers leave O and S room (budget_sm80.c), else each k-step
** reloads it with ldmatrix.  K and V tiles arrive through a
** FA4_STAGES-deep cp.async ring (mainloop.cuh).  Sequences, GQA packing
** and K/V addressing (strided, varlen, paged) are seqinfo.cuh's; split
** launches finish in common/combine.cuh.
**
** Shared memory (offsets from lib/budget_sm80.c, relative to the dynamic
** base aligned up to 1024 B here): Q [BM x D], K ring [STAGES][BN x D],
** V ring [STAGES][BN x DV].  Every tile is stored as boxes FA4_SWIZZLE bytes
** wide (rows x SWIZZLE B each, the TMA layout); inside a box the 16 B chunk
** c of row r sits at c ^ (r % 8) (128 B) or c ^ ((r >> 1) % 4) (64 B), so
** the 8 row addresses of one ldmatrix fall in 8 distinct bank groups.
** The epilogue reuses the Q region to stage O for 16-byte stores.
**
** fp8 e4m3 inputs (FA4_DTYPE 3, O in FA4_OUT_DTYPE): Q, K and V stay
** 8-bit in shared memory and each fragment is widened to fp16 in registers
** (sm80/fp8.cuh), so the ring holds twice the keys per byte and the GEMMs
** are fp16 ones; this is the family's decode and paged path for fp8 KV
** caches.
*/
#ifndef FA4_SM80_KERNEL_CUH
#define FA4_SM80_KERNEL_CUH

#include "common/ptx.cuh"
#include "common/params.h"
#include "common/serving.h"

#if FA4_DTYPE == 3
#define FA4_FP8 1
#else
#define FA4_FP8 0
#endif
#ifndef FA4_OUT_DTYPE   /* O's type: the inputs' for 16-bit inputs */
#define FA4_OUT_DTYPE FA4_DTYPE
#endif
#ifndef FA4_SOFTCAP_FIXED_MAX /* softmax.cuh: defined (1) only for bf16 under a small cap */
#define FA4_SOFTCAP_FIXED_MAX 0
#endif

namespace sm80 {

constexpr int BM = FA4_BM;
constexpr int BN = FA4_BN;
constexpr int D = FA4_D;
constexpr int DV = FA4_DV;
constexpr int WARPS = FA4_WARPS;
constexpr int WARP_ROWS = FA4_WARP_ROWS;   /* query rows per warp */
constexpr int MT = WARP_ROWS / 16;         /* its m16 tiles */
constexpr int THREADS = FA4_THREADS;
constexpr int STAGES = FA4_STAGES;
constexpr int SWZ = FA4_SWIZZLE;
constexpr bool Q_IN_REGS = FA4_Q_IN_REGS;
constexpr bool MASK = FA4_MASK;
constexpr int ELT = FA4_FP8 ? 1 : 2;    /* bytes per Q, K, V element */
constexpr int OUT_ELT = 2;              /* bytes per O element (bf16, fp16) */
constexpr bool KV_SPLIT_WARPS = FA4_KV_SPLIT_WARPS;
constexpr int KN = KV_SPLIT_WARPS ? BN / WARPS : BN;   /* keys per warp per block */

constexpr int Q_TILE_BYTES = BM * D * ELT;
constexpr int K_TILE_BYTES = BN * D * ELT;
constexpr int V_TILE_BYTES = BN * DV * ELT;

static_assert(FA4_DTYPE == 1 || FA4_DTYPE == 2 || FA4_DTYPE == 3,
              "sm80: bf16, fp16 or fp8 e4m3 inputs");
static_assert(FA4_OUT_DTYPE == 1 || FA4_OUT_DTYPE == 2, "sm80: O in bf16 or fp16");
static_assert(FA4_FAMILY == 80, "sm80/kernel.cuh compiled for another family");
static_assert(WARP_ROWS == 16 || WARP_ROWS == 32, "sm80: 16 or 32 query rows per warp");
static_assert(KV_SPLIT_WARPS ? BM == 16 && WARP_ROWS == 16 : BM == WARP_ROWS * WARPS,
              "sm80: each warp owns WARP_ROWS query rows, or all warps the same 16");
static_assert(KN % 16 == 0, "sm80: each warp takes a multiple of 16 keys");
static_assert(THREADS == 32 * WARPS, "sm80: FA4_THREADS = 32 * FA4_WARPS");
static_assert(BN % 16 == 0 && BN >= 16, "sm80: BN a multiple of 16");
static_assert(DV <= D, "sm80: head_dim_v <= head_dim_qk");
static_assert(SWZ == 64 || SWZ == 128, "sm80: swizzle 64 or 128 B");
static_assert((D * ELT) % SWZ == 0 && (DV * ELT) % SWZ == 0,
              "sm80: head dims must fill whole swizzle boxes");
static_assert(STAGES >= 1 && STAGES <= 4, "sm80: 1..4 stages");
static_assert(FA4_SMEM_Q_OFF % 128 == 0 && FA4_SMEM_K_OFF % 128 == 0 &&
              FA4_SMEM_V_OFF % 128 == 0,
              "sm80: regions 128 B aligned (bank-conflict-free swizzle)");
static_assert(FA4_SMEM_Q_SIZE >= Q_TILE_BYTES, "sm80: Q region too small");
static_assert(FA4_SMEM_K_SIZE >= STAGES * K_TILE_BYTES, "sm80: K region too small");
static_assert(FA4_SMEM_V_SIZE >= STAGES * V_TILE_BYTES, "sm80: V region too small");
static_assert(FA4_SMEM_Q_SIZE >= BM * DV * OUT_ELT, "sm80: O staging reuses Q");
static_assert(!FA4_FP8 || (D % 32 == 0 && DV % 32 == 0),
              "sm80 fp8: head dims in whole 32-column ldmatrix pairs");
static_assert(!KV_SPLIT_WARPS || FA4_SMEM_K_SIZE >= WARPS * 16 * (DV + 2) * 4,
              "sm80: the warp merge reuses the K region");
__host__ __device__ constexpr int cmax(int a, int b) { return a > b ? a : b; }
constexpr int SMEM_END = cmax(FA4_SMEM_Q_OFF + FA4_SMEM_Q_SIZE,
                              cmax(FA4_SMEM_K_OFF + FA4_SMEM_K_SIZE,
                                   FA4_SMEM_V_OFF + FA4_SMEM_V_SIZE));
static_assert(SMEM_END + 1024 <= FA4_SMEM_BYTES,
              "sm80: smem_bytes must include 1024 B of alignment slack");

} /* namespace sm80 */

#include "sm80/softmax.cuh"
#include "sm80/seqinfo.cuh"
#include "sm80/mask.cuh"
#include "sm80/mainloop.cuh"
#include "sm80/epilogue.cuh"
#include "common/combine.cuh"

extern "C" __global__ void __launch_bounds__(FA4_THREADS, 1)
fa4_fwd(const fa4_params p, const fa4_serving s)
{
    using namespace sm80;
    extern __shared__ __align__(16) unsigned char fa4_smem_raw[];

    /* The budget's offsets are from a 1024-aligned base. */
    const u32 raw = cvta_to_shared_u32(fa4_smem_raw);
    const u32 smem_base = (raw + 1023u) & ~1023u;
    const u32 sq = smem_base + FA4_SMEM_Q_OFF;
    const u32 sk = smem_base + FA4_SMEM_K_OFF;
    const u32 sv = smem_base + FA4_SMEM_V_OFF;

    tile_info t = tile_make(p, s);
#if FA4_CAUSAL
    /* Longest first: the last query tiles see the most keys. */
    t.m_start = (int)(gridDim.x - 1 - blockIdx.x) * BM;
#endif
    if (t.m_start >= t.rows)
        return;   /* a varlen sequence shorter than the longest */

    const q_rows gq = q_rows_make<ELT>(t, p.q, p.q_batch_stride, p.q_row_stride, p.q_head_stride);
    const kv_rows gk = kv_rows_make(t, s, p.k, p.k_batch_stride, p.k_row_stride, p.k_head_stride);
    const kv_rows gv = kv_rows_make(t, s, p.v, p.v_batch_stride, p.v_row_stride, p.v_head_stride);

    float o[MT][DV / 8][4];
    online_softmax sm;
    mainloop_run(p, s, t, gq, gk, gv, sq, sk, sv, o, sm);
    sm.finish();
    if (KV_SPLIT_WARPS)
        merge_warps((float *)(fa4_smem_raw + (smem_base - raw) + FA4_SMEM_K_OFF), o, sm);

    if (s.num_splits > 1) {
        epilogue_partial(p, s, t, o, sm);
        return;
    }
    const o_rows go = q_rows_make<OUT_ELT>(t, p.o, p.o_batch_stride, p.o_row_stride,
                                           p.o_head_stride);
    epilogue_store(p, s, t, go, sq, o, sm);
}

#endif
