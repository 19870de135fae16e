/*
** budget_sm100.c -- the sm100 (Blackwell, sm_100a) family: shared-memory
** layout, tensor-memory column map, config space and default.  The rules
** are the seeds' FA4Config (KERNEL_NOTES.md, "SM100 budgets"); the kernel
** they describe is kernels/sm100/kernel.cuh, which receives every number
** computed here as a compile-time constant.  The kernel has never run on
** an sm_100 GPU: these numbers are checked against the seeds, the kernel's
** static_asserts and its PTX (tests/test_sm100_ptx.c), not on hardware.
**
** Shape of a CTA (2Q layout): BM = 256 query rows as two tiles of
** MMA_M = 128, one per softmax warpgroup; 512 threads = softmax WG 0,
** softmax WG 1, correction WG, and a fourth WG whose warp 0 loads (TMA)
** and warp 1 issues the MMAs.  1Q: BM = 128, one tile.  Either alone
** (cluster 1) or as a CTA pair sharing each MMA (cluster 2, below).
**
** Tensor memory (512 columns x 128 lanes x 32 bit):
**     S0 at 0, S1 at BN, O0 at 2*BN, O1 at 2*BN + padded_dv;  P aliases S.
** so 2*BN + 2*padded_dv <= 512, and the automatic BN is
**     BN = align_down(min(256, 256 - padded_dv), MMA_K).
**
** Shared memory, low -> high, from the 1024-aligned base:
**     split:  Q | K stages | V stages | CORR | QSCALE | KSCALE | BAR | TMEMPTR
**     fused:  Q | KV ring (K, V alternate) | ROPE | CORR | ... same tail
** The epilogue stages O_i in Q_i's region for its TMA store (Q_i is free
** once the last S_i MMA is done, and padded_dv <= padded_dqk), so the
** store costs no shared memory of its own.
** The dynamic base is only known to be 16-aligned, so the kernel rounds
** it up to 1024 and a launch requests the regions plus SM100_SLACK
** (1024 B): smem_bytes = regions + 1024.  The seeds' byte totals below
** are the regions'; the slack is taken from the carveout before the ring
** is sized, which leaves the seeds' slot counts as they were.
**
** How the byte counts come out (worked backwards from the seeds' numbers,
** and checked by tests/test_budget_sm100.c):
**
**   fixed   = TMEMPTR 4 B + CORR 2*128*4 = 1024 B
**             + QSCALE BM * 4 + 8 B (0 without per-token scales)     (f)
**             + Q  BM * padded_dqk * esize
**             + 8 B * (8 + 2*PV_STAGES + QK_CHUNKS) barriers        (a)
**   per slot = BN * padded_dv * esize + 2 * 8 B                     (b)
**   per K    = BN * rope_depth * esize, rope_depth = padded_dqk
**              - padded_dv (0 unless head_dim_v < head_dim_qk)      (e)
**              + BN * 4 + 2 * 8 B (0 without per-token scales)      (f)
**   slots   = the most n with n * per slot + ceil(n/2) * per K
**             <= carveout - slack - fixed                            (c)
**             then within what a config names (stages <= 8,
**             sm100_cap_slots): an odd n above 8 gives the split ring of
**             n - 1, and at most 16 slots (8 split stages)
**   odd  -> fused ring of `slots` tiles (and ceil(slots/2) ROPE
**           buffers when rope_depth > 0);
**   even -> split: slots/2 K stages and slots/2 V stages, and the K
**           stages are staged by depth chunk: (QK_CHUNKS-1)*stages*2
**           more barriers when they still fit, else QK_CHUNKS := 1. (d)
**   The bytes are what the regions hold (sm100_shape's q/k/v/kv/rope/bar
**   fields, which sm100_fit places): a fused slot BN * padded_dv, a
**   split K stage BN * padded_dqk and a V stage BN * padded_dv, so an
**   even count's split rings take exactly what (c) counted.
**
**   (a) The barriers of the kernel (kernels/sm100/kernel.cuh, enum
**       sm100_bar) that do not scale with the ring: S_FULL[2], O_FULL[2],
**       C_FULL[2], C_EMPTY[2] (= 8), P_FULL[2][PV_STAGES = 2] (P is
**       written back in two column halves), Q1_FULL[QK_CHUNKS] (Q tile 1
**       arrives per 128-byte-swizzle depth chunk; Q tile 0 rides on the
**       first K barrier).  QK_CHUNKS = gcd(padded_dqk / swizzle_elems,
**       padded_dqk / MMA_K): 2 for d128, 1 for d64.
**   (b) Each ring slot carries a full and an empty barrier: 16 B.
**   (c) The slot count counts (b) per slot, so the barrier region grows
**       with the ring and the total stays exact, with no padding: every
**       tile is a multiple of 1024 B (BN multiple of 16, 64 elements of
**       128 B swizzle rows; fp8: 64 B rows), CORR starts 1024-aligned and
**       QSCALE/KSCALE are multiples of 8, so BAR is 8-aligned as is.
**   (d) In split mode each K stage has one full/empty pair per depth
**       chunk, so the MMA may start on chunk 0 while chunk 1 lands.
**   (e) Rope mode (DeepSeek MLA's 192/128: 128 "nope" + 64 rope
**       columns): a fused slot holds a V tile or K_j's first padded_dv
**       columns, and K_j's last rope_depth columns (its last depth boxes,
**       on the same barrier) go to ROPE buffer j % ceil(slots/2); S =
**       Q K^T takes its k-steps from the slot, then from the buffer.  At
**       most ceil(slots/2) K tiles are in the ring at once, and loading
**       K_{j+ceil(slots/2)} waits for the release of the slot item two
**       places after K_j (odd slots: V_j; even: K_j itself), which the
**       MMA commits after S_j: so buffer j % ceil(slots/2) is free.  It
**       is automatic, not a config field: it never takes more bytes than
**       slots of BN * padded_dqk (ceil(n/2) <= n), adds no barrier, TMA
**       load or MMA (the rope columns are the K boxes past padded_dv,
**       moved), so nothing is left for the tuner to weigh.  Without a
**       rope part (rope_depth 0) the region is empty and omitted.
**   (f) Per-token Q/K scales (problem token_scales, float32): QSCALE
**       holds the CTA's BM query scales, KSCALE one buffer of BN key
**       scales per K tile in flight (fused: ceil(slots/2), split: the
**       stages), the seeds' q_scale / k_scale regions and their share of
**       bytes_per_k.  Their consumer is the softmax, not the MMA, whose
**       commit releases a ring slot before the softmax has read S: so the
**       scales do not ride the ring's barriers but have their own, a
**       QS_FULL and per buffer a KS_FULL / KS_EMPTY pair (8 B each), which
**       the seeds do not count.  A plain-load warp fills them (any
**       seqlen, no TMA alignment rule on the caller's arrays).
**
**   bf16 d128: pad 128, BN 128, QK_CHUNKS 2 -> 14 fixed barriers.
**       fixed = 4 + 1024 + 65536 + 112 = 66676; per slot 32768 + 16;
**       (232448 - 1024 - 66676) / 32784 = 5 (odd: fused);
**       66676 + 5 * 32784 = 230,596 B  (24 barriers); request 231,620 B.
**   bf16 d64: pad 64, BN 192, QK_CHUNKS 1 -> 13 fixed barriers.
**       fixed = 4 + 1024 + 32768 + 104 = 33900; per slot 24576 + 16;
**       (232448 - 1024 - 33900) / 24592 = 8 (even: 4 K + 4 V stages);
**       33900 + 8 * 24592 = 230,636 B  (29 barriers); request 231,660 B.
**   fp8 d128 (64 B swizzle, MMA_K 32, no per-token scales): pad 128,
**       BN 128, QK_CHUNKS gcd(2, 4) = 2; fixed = 33908; per slot 16400;
**       12 slots (even: 6 K + 6 V stages) = 230,708 B, plus 12 K-chunk
**       barriers = 230,804 B (50 barriers); request 231,828 B.
**   d256: pad 256, BN = 0 < 64: unsupported in 2Q.
**   bf16 d192/128 (rope mode): pads 192/128, rope_depth 64, BN 128,
**       QK_CHUNKS gcd(3, 12) = 3 -> 15 fixed barriers.
**       fixed = 4 + 1024 + 98304 + 120 = 99452; per slot 32768 + 16 =
**       32784; per K 128 * 64 * 2 = 16384; room 232448 - 1024 - 99452 =
**       131972; 131972 / (32784 + 8192) = 3, and 3 * 32784 + 2 * 16384 =
**       131120 fits (odd: fused, 2 ROPE buffers of 16 KiB);
**       99452 + 131120 = 230,572 B (21 barriers); request 231,596 B.
**       (A slot of the whole K, 49,168 B, would hold 2: one split stage,
**       and the automatic BN would drop to 96.)
**   bf16 d128 with per-token scales: fixed = 66676 + 1024 + 8 = 67708;
**       per slot 32784, per K 512 + 16 = 528; room 232448 - 1024 - 67708
**       = 163716; 163716 / (32784 + 264) = 4 (even: 2 K + 2 V stages,
**       2 KSCALE buffers of 512 B); 67708 + 4 * 32784 + 2 * 528 =
**       199,900 B, plus 4 K-chunk barriers = 199,932 B (31 barriers).
**   bf16 d128/64: BN 192, per slot 24592, per K 24576: 4 slots (even:
**       2 K stages of 192 x 128, 2 V stages of 192 x 64), 147,520 B of
**       ring, plus 4 K-chunk barriers.
**
** fp8 (e4m3; kernels/sm100/kernel.cuh "element type"): 1-byte tiles, MMA_K
** 32 (kind::f8f6f4 k32 = 32 bytes of a row, as kind::f16's k16), so BN
** steps by 2 * 32 = 64 and the TMEM bound is the 16-bit one.  V stays
** MN-major: the PTX ISA's instruction descriptor (9.7.16.4.2) has the
** transpose-B bit for kind::f8f6f4 as for kind::f16 (valid for 8-bit
** formats, not 6- or 4-bit), so unlike sm90's 8-bit wgmma there is no V^T
** copy and no workspace.  The seeds' swizzle is 64 B (64 elements a box
** row); 128 B (128 elements: one box per 128-deep chunk, QK_CHUNKS =
** gcd(pad / 128, pad / 32)) is a tunable the enumerator offers where it
** pads neither depth more than 64 B does (d128, d256).  The regions are
** the 16-bit formulas with esize 1; O (16-bit) leaves through Q's region
** in rounds (kernels/sm100/correction.cuh), so it adds no region either.
**   fp8 d128, 128 B swizzle: pad 128, BN 128, QK_CHUNKS gcd(1, 4) = 1 ->
**       13 fixed barriers; fixed = 4 + 1024 + 32768 + 104 = 33900; per
**       slot 16384 + 16; (232448 - 1024 - 33900) / 16400 = 12 (even: 6 K
**       + 6 V stages, K in one chunk); 33900 + 12 * 16400 = 230,700 B (37
**       barriers); request 231,724 B.
**   fp8 d256 1Q, 64 B swizzle: pad 256, BN (512 - 256) / 2 = 128,
**       QK_CHUNKS gcd(4, 8) = 4, 9 fixed barriers; fixed = 4 + 512 +
**       32768 + 72 = 33356; per slot 32768 + 16; (232448 - 1024 - 33356)
**       / 32784 = 6 (even: 3 K + 3 V stages); 33356 + 6 * 32784 = 230,060
**       B, plus (4 - 1) * 3 * 2 = 18 K-chunk barriers = 230,204 B (39
**       barriers); request 231,228 B.
**   fp8 d256 1Q, 128 B swizzle: QK_CHUNKS gcd(2, 8) = 2; the same 6
**       slots, plus 6 K-chunk barriers: 230,108 B (27 barriers); request
**       231,132 B.
**   fp8 d64 (64 B): pad 64, BN 192, QK_CHUNKS 1; fixed = 4 + 1024 +
**       16384 + 104 = 17516; per slot 12288 + 16; (232448 - 1024 -
**       17516) / 12304 = 17, more than a config names (stages <= 8):
**       capped to 16 (sm100_cap_slots: 8 split stages); 17516 + 16 *
**       12304 = 214,380 B (45 barriers); request 215,404 B.  At 128 B it
**       would pad to 128 (not offered).
**   fp8 d128 with per-token scales (64 B): fixed = 33908 + 1024 + 8 =
**       34940; per slot 16400, per K 512 + 16 = 528; room 232448 - 1024
**       - 34940 = 196484; 196484 / (16400 + 264) = 11, and 11 * 16400 +
**       6 * 528 = 183,568 fits: odd but above 8, so capped to 10 (5 K + 5
**       V stages, 5 KSCALE buffers of 512 B), K by 2 depth chunks (10
**       more barriers): 34940 + 10 * 16400 + 5 * 528 + 80 = 201,660 B
**       (55 barriers); request 202,684 B.
**   fp8 d192/128 (64 B; rope_depth 64): BN 128, QK_CHUNKS gcd(3, 6) =
**       3 -> 15 fixed barriers; fixed = 4 + 1024 + 49152 + 120 = 50300;
**       per slot 16384 + 16, per K 128 * 64 = 8192; room 232448 - 1024 -
**       50300 = 181124; 181124 / (16400 + 4096) = 8, and 8 * 16400 + 4 *
**       8192 = 163,968 fits (9 would take 188,560): even, so split: 4 K
**       stages of 128 x 192 and 4 V stages of 128 x 128, K by 3 depth
**       chunks (16 more barriers): 50300 + 163840 + 32 * 8 = 214,396 B
**       (47 barriers); request 215,420 B.  (Slots of the whole K, 24,592
**       B, would hold 7: a fused ring of whole-K slots.)  An explicit
**       fused ring of 5 at bn 128 is rope mode: 5 slots of 128 x 128 and
**       3 ROPE buffers of 128 x 64: 50300 + 81920 + 24576 + 80 = 156,876
**       B (25 barriers).
**   fp8 d256/128, 128 B swizzle (rope_depth 128): 2Q: BN 128,
**       QK_CHUNKS gcd(2, 8) = 2, fixed = 4 + 1024 + 65536 + 112 = 66676;
**       per slot 16400, per K 128 * 128 = 16384; room 164748; 164748 /
**       (16400 + 8192) = 6, and 6 * 16400 + 3 * 16384 = 147,552 fits (7:
**       180,336 does not): split, 3 K stages of 128 x 256, 3 V stages of
**       128 x 128, K by 2 chunks: 66676 + 147456 + 18 * 8 = 214,276 B (32
**       barriers); request 215,300 B.  1Q (bm 128): BN (512 - 128) / 2 =
**       192, fixed = 4 + 512 + 32768 + 72 = 33356; per slot 24576 + 16,
**       per K 24576; room 198068; 198068 / (24592 + 12288) = 5, and 5 *
**       24592 + 3 * 24576 = 196,688 fits: fused, 5 slots of 192 x 128
**       and 3 ROPE buffers of 192 x 128: 33356 + 122880 + 73728 + 80 =
**       230,044 B (19 barriers); request 231,068 B.
**
** CTA pair (cluster 2; the seeds give no numbers for it, these are
** derived): two CTAs of a 2x1x1 cluster share every MMA (cta_group::2,
** M 256 over their query tiles i).  The MMA splits B's N between them, so
** a CTA holds bn / 2 keys of each K tile (S = Q K^T, N = keys) and
** padded_dv / 2 columns of each V tile (O = P V, N = dv), and D's lanes
** of its own rows at the same TMEM columns: per CTA, Q, CORR, the
** barriers and the TMEM map are those of one CTA alone, and only the
** ring's tiles halve:
**   per slot = max(bn/2 * padded_dv, bn * padded_dv/2) * esize + 16
**   per K    = bn/2 * rope_depth * esize
** with the same slot rule (odd: fused, with ROPE buffers of bn/2 keys;
** even: split, K by depth chunk when it fits).  padded_dv / 2 must be
** whole swizzle boxes (the MN-major V descriptor and the TMA box step by
** one swizzle row): d96..d256, not dv 64.
**   bf16 d128 2Q pair: bn 128 (TMEM bound as alone); per slot 16384 + 16;
**       (232448 - 1024 - 66676) / 16400 = 10 (even: 5 K + 5 V stages of
**       64 x 128 and 128 x 64); 66676 + 10 * 16400 = 230,676 B, plus 10
**       K-chunk barriers = 230,756 B (44 barriers); request 231,780 B.
**   bf16 d256 1Q pair: bn 128 (alone, 2 slots of 64 KiB: one stage, so
**       the automatic bn is 96); per slot 32768 + 16; fixed 4 + 512 +
**       65536 + 9 * 8 = 66124; (232448 - 1024 - 66124) / 32784 = 5 (odd:
**       fused); 66124 + 5 * 32784 = 230,044 B (19 barriers); request
**       231,068 B.
**   fp8 d128 2Q pair (64 B): bn 128; per slot max(64 x 128, 128 x 64) +
**       16 = 8208; (232448 - 1024 - 33908) / 8208 = 24, capped to 16 (8
**       split stages), K by 2 depth chunks (16 more barriers): 33908 + 16
**       * 8208 + 128 = 165,364 B (62 barriers); request 166,388 B.  At 128
**       B half of V (64 columns) is no whole box: pairs need d256.
**   fp8 d256 1Q pair (128 B): bn 128; per slot max(64 x 256, 128 x 128)
**       + 16 = 16400; (232448 - 1024 - 33356) / 16400 = 12 (even: 6 + 6),
**       K by 2 depth chunks (12 more barriers): 33356 + 12 * 16400 + 96 =
**       230,252 B (45 barriers); request 231,276 B.
**   An explicit bn must be a multiple of 2 * MMA_K: P goes back to TMEM in
**   two column halves of whole MMA k-steps (PV_STAGES = 2).
**   The automatic BN is the TMEM bound above, lowered in steps of
**   2 * MMA_K (not below 64) until the ring holds 2 stages; for every
**   seed shape the TMEM bound already does.
**
** Decode mode (config bm 32; kernels/sm100/decode.cuh; no seed numbers,
** derived here): 32 packed (token, head) rows per CTA, the products by
** tcgen05.mma.ws with M = 32, whose N is 64, 128 or 256 -- so bn is one
** of those, and O = P V runs in pieces of pv_n = padded dv where that is
** a .ws N, else 64 (d192).  192 threads: the softmax warpgroup, a TMA
** warp, an MMA warp.  16-bit inputs, dense batches, no per-token scales
** (fp8 and scales refused, FA4_ENOTSUP).
**   TMEM (Layout G: an M 32 accumulator of N columns is N / 4 columns x
**       128 lanes): S0 at 0, S1 at bn / 4, O at bn / 2; used = bn / 2 +
**       padded_dv / 4 (d128 bn 128: 96, allocated 128).
**   Shared memory, low -> high: Q 32 x padded_dqk x 2 | K stages bn x
**       padded_dqk x 2 | V stages bn x padded_dv x 2 | P 2 x 32 x bn x 2
**       | RED 2 x 4 x 32 x 4 = 1024 (the row-max exchange) | BAR 8 x (6 +
**       4 stages): Q_FULL, S_FULL[2], P_FULL[2], O_FULL, K and V full /
**       empty per stage | TMEMPTR 4; plus the 1024 B slack.  Every tile
**       is a multiple of 1024 B (boxes of 32 or bn rows x 128 B).
**   stages = (carveout - slack - Q - P - RED - TMEMPTR - 6 barriers) /
**       (bn (padded_dqk + padded_dv) 2 + 4 x 8), at most 8; bn 0 is 128,
**       or 64 where 128 leaves fewer than 2 stages.
**   bf16 d128: Q 8192, P 16384; room 232448 - 1024 - 8192 - 16384 - 1024
**       - 4 - 48 = 205772; per stage 65568: 3 stages; 8192 + 196608 +
**       16384 + 1024 + 18 x 8 + 4 = 222,356 B; request 223,380 B.
**   bf16 d64: per stage 32800, 6 stages: 218,356 B; request 219,380 B.
**   bf16 d256: bn 128 holds one stage of 131,104 B; bn 64: P 8192, per
**       stage 65568, 3 stages: 222,356 B; request 223,380 B.
**   bf16 d192/128: bn 128, per stage 81952, 2 stages (pieces of N 128):
**       193,652 B; request 194,676 B.
**   Splits (config splits: 0 = per call, as the sm80 family chooses them)
**   and pack_gqa (GQA packing) are the mode's; its workspace and combine
**   are the sm80 family's (lib/launch.c, split-KV).
**
** A config handed to budget_fit() must be resolved: bm, bn, stages and
** swizzle are compiled into the kernel as they stand, so 0 ("automatic")
** is refused with the automatic choice named (the heuristic and the
** enumerator resolve them).
*/
#include <stdio.h>
#include <string.h>

#include "family.h"
#include "budget_sm100.h"
#include "problem.h"

#define SM100_TMEM_MAX     512
#define SM100_PV_STAGES    2
#define SM100_MBAR_BYTES   8
#define SM100_CORR_TILE    (128 * 4)      /* one f32 per row of a query tile */
#define SM100_TMEMPTR_BYTES 4
#define SM100_SCALE_BYTES  4        /* a per-token scale: float32 */
#define SM100_THREADS      512
#define SM100_SMEM_DEFAULT 232448   /* 228 KiB - 1 KiB reserved */
#define SM100_MAX_STAGES   8        /* the most a config names (config_validate) */
#define SM100_DECODE_THREADS 192    /* decode: softmax WG, load warp, MMA warp */
#define SM100_DECODE_FIXED_BARS 6   /* decode: Q_FULL, S_FULL[2], P_FULL[2], O_FULL */
#define SM100_DECODE_RED_BYTES (2 * 4 * 32 * 4)   /* decode: [2][4 warps][32 rows] f32 */
#define SM100_DECODE_REGS  80       /* decode: ptxas gives 59-76 (test_sm100_compile) */

/* Bytes of one element; 0 for an unknown dtype. */
static int sm100_esize(fa4_dtype dtype)
{
    switch (dtype) {
    case FA4_DTYPE_BF16:
    case FA4_DTYPE_FP16:
        return 2;
    case FA4_DTYPE_FP8_E4M3:
        return 1;
    }
    return 0;
}

/* K extent of one tcgen05.mma: 16 for 16-bit inputs, 32 for fp8. */
static int sm100_mma_k(int esize) { return esize == 1 ? 32 : 16; }

/* The seeds' swizzle span in bytes: 128 B for 16-bit types, 64 B for fp8. */
static int sm100_swizzle(int esize) { return esize == 1 ? 64 : 128; }

static int align_up(int x, int a) { return (x + a - 1) / a * a; }
static int align_down(int x, int a) { return x / a * a; }
static int gcd(int a, int b) { while (b) { int t = a % b; a = b; b = t; } return a; }

/* Smallest power of two >= COLS and >= 32 (tcgen05.alloc granularity). */
static int tmem_alloc_cols(int cols)
{
    int n = 32;
    while (n < cols)
        n *= 2;
    return n;
}

/* Barriers that do not scale with the ring (kernel.cuh, enum sm100_bar):
** S_FULL[2] and P_FULL[2][PV_STAGES] per S buffer, O_FULL, C_FULL and
** C_EMPTY per query tile, and with two tiles Q1_FULL[QK_CHUNKS]. */
static int sm100_fixed_bars(int q_tiles, int qk_chunks)
{
    return 2 + 2 * SM100_PV_STAGES + 3 * q_tiles + (q_tiles == 2 ? qk_chunks : 0);
}

static void add_region(fa4_layout *l, const char *name, int *off, int size)
{
    budget_region *r = &l->region[l->nregions++];
    r->name = name;
    r->offset = *off;
    r->size = size;
    *off += size;
}

/* The TMEM bound on BN for a padded V depth: 2*BN + Q_TILES*pad_dv <=
** TMEM_MAX, capped at 256, aligned down to STEP; <= 0 when nothing fits. */
static int sm100_tmem_bn(int tmem_max, int q_tiles, int pad_dv, int step)
{
    int bn = (tmem_max - q_tiles * pad_dv) / 2;
    if (bn > 256)
        bn = 256;
    return bn > 0 ? align_down(bn, step) : 0;
}

/* The slot rule's count SLOTS within what a config can name (stages <= 8):
** an odd count above 8 slots gives the split ring of one slot fewer, and a
** split ring stops at 8 stages.  Only rings deeper than 8 stages change
** (before, their configs were refused as stages > 8), so every ring of the
** seeds stays as it was; it gives fp8 d64 (17 slots of 12,304 B) its ring.
** The split ring of fewer slots never takes more than the count (c) was
** sized by: a K stage is a slot plus one per K share (rope columns and key
** scales), and a split ring of n slots has n / 2 of them. */
static int sm100_cap_slots(int slots)
{
    if (slots > SM100_MAX_STAGES && slots % 2)
        slots--;
    return slots > 2 * SM100_MAX_STAGES ? 2 * SM100_MAX_STAGES : slots;
}

/* The most ring slots ROOM bytes hold at PER_SLOT bytes a slot plus PER_K
** bytes for each of the ceil(slots / 2) K tiles a fused ring has in flight
** (the seeds' fused_stages): n * per_slot + ceil(n / 2) * per_k <= room. */
static int sm100_slots(int room, int per_slot, int per_k)
{
    int n = room / (per_slot + per_k / 2);
    if (n * per_slot + (n + 1) / 2 * per_k > room)
        n--;
    return n > 0 ? n : 0;
}

/* The ring of S->bn under CFG's stages (0: the slot rule) in CARVE bytes:
** fills slots, fused, stages, the rope buffers, the byte counts and
** barriers. */
static void sm100_ring(sm100_shape *s, int carve, const fa4_config *cfg)
{
    /* per-token scales: QSCALE and its barrier; per K tile in flight BN
       key scales and their full/empty barriers, (f) */
    const int fixed_bar = sm100_fixed_bars(s->q_tiles, s->qk_chunks) + (s->scales ? 1 : 0);
    const int fixed = SM100_TMEMPTR_BYTES + s->corr_bytes + s->q_bytes + s->qscale_bytes;
    const int ks_tile = s->scales ? s->bn * SM100_SCALE_BYTES + 2 * SM100_MBAR_BYTES : 0;
    const int k_tile = s->bn / s->pair * s->pad_qk * s->esize;   /* this CTA's part */
    const int v_tile = s->bn * s->v_cols * s->esize;
    /* K's columns past the padded V depth: a fused slot holds the rest */
    const int rope_tile = s->bn / s->pair * s->rope_depth * s->esize;
    const int k_slot = k_tile - rope_tile;
    const int slot_bytes = k_slot > v_tile ? k_slot : v_tile;
    const int per_slot = slot_bytes + 2 * SM100_MBAR_BYTES;

    s->k_rows = s->bn / s->pair;

    if (cfg->stages == 0) {
        int room = carve - SM100_SLACK - fixed - SM100_MBAR_BYTES * fixed_bar;
        s->slots = room > 0 ? sm100_cap_slots(sm100_slots(room, per_slot, rope_tile + ks_tile))
                            : 0;
        s->fused = s->slots % 2;
    } else {
        s->fused = cfg->fused_kv ? 1 : 0;
        s->slots = s->fused ? cfg->stages : 2 * cfg->stages;
    }
    s->stages = s->fused ? s->slots : s->slots / 2;
    s->kv_bytes = s->k_bytes = s->v_bytes = 0;
    s->rope_bufs = s->rope_bytes = 0;
    if (s->fused) {
        s->kv_bytes = s->slots * slot_bytes;
        s->rope_bufs = rope_tile > 0 ? (s->slots + 1) / 2 : 0;
        s->rope_bytes = s->rope_bufs * rope_tile;
    } else {
        s->k_bytes = s->stages * k_tile;
        s->v_bytes = s->stages * v_tile;
    }
    s->ks_bufs = s->scales ? (s->fused ? (s->slots + 1) / 2 : s->stages) : 0;
    s->kscale_bytes = s->ks_bufs * s->bn * SM100_SCALE_BYTES;
    s->k_chunks = 1;
    s->nbar = fixed_bar + (s->fused ? 2 * s->slots : 2 * s->stages * 2) + 2 * s->ks_bufs;
    s->regions = fixed + s->kv_bytes + s->rope_bytes + s->k_bytes + s->v_bytes
                 + s->kscale_bytes + SM100_MBAR_BYTES * s->nbar;
    if (!s->fused && s->qk_chunks > 1) {
        int extra = (s->qk_chunks - 1) * s->stages * 2;
        if (s->regions + SM100_MBAR_BYTES * extra + SM100_SLACK <= carve) {
            s->regions += SM100_MBAR_BYTES * extra;
            s->nbar += extra;
            s->k_chunks = s->qk_chunks;
        }
    }
    s->bar_bytes = SM100_MBAR_BYTES * s->nbar;
    s->smem = s->regions + SM100_SLACK;
}

/* FA4_OK when S's request (regions + slack) fits CARVE bytes, else
** FA4_ENOFIT with WHY. */
static fa4_status sm100_smem_fits(const sm100_shape *s, int carve, char *why, size_t wn)
{
    if (s->smem > carve) {
        snprintf(why, wn, "smem %d B (regions %d + %d B base-alignment slack) > opt-in "
                 "limit %d B", s->smem, s->regions, SM100_SLACK, carve);
        return FA4_ENOFIT;
    }
    return FA4_OK;
}

/* S's head dims from PB and their padding to S->swz_elems: FA4_OK, or
** FA4_ENOTSUP with WHY for depths the family does not run. */
static fa4_status sm100_depths(sm100_shape *s, const fa4_problem *pb, char *why, size_t wn)
{
    s->dqk = pb->head_dim_qk;
    s->dv = problem_head_dim_v(pb);
    if (s->dqk <= 0 || s->dqk > 256 || s->dv > s->dqk) {
        snprintf(why, wn, "head_dim_qk=%d head_dim_v=%d; sm100 needs "
                 "head_dim_v <= head_dim_qk <= 256", s->dqk, s->dv);
        return FA4_ENOTSUP;
    }
    s->pad_qk = align_up(s->dqk, s->swz_elems);
    s->pad_dv = align_up(s->dv, s->swz_elems);
    return FA4_OK;
}

/* The decode mode's refusals of PB and CFG that are not about room:
** FA4_OK, or FA4_ENOTSUP / FA4_EINVAL with WHY. */
static fa4_status sm100_decode_rules(const fa4_problem *pb, const fa4_config *cfg,
                                     char *why, size_t wn)
{
    if (pb->dtype == FA4_DTYPE_FP8_E4M3) {
        snprintf(why, wn, "sm100 decode mode (bm=32): fp8 e4m3 inputs not implemented (bf16 "
                 "and fp16 only); the sm80 family runs fp8 decode");
        return FA4_ENOTSUP;
    }
    if (pb->varlen || pb->page_size || pb->softcap > 0 || pb->attention_sinks ||
        pb->token_scales) {
        snprintf(why, wn, "sm100 decode mode (bm=32): varlen=%d page_size=%d softcap=%g "
                 "attention_sinks=%d token_scales=%d not implemented", pb->varlen,
                 pb->page_size, (double)pb->softcap, pb->attention_sinks, pb->token_scales);
        return FA4_ENOTSUP;
    }
    if (cfg->q_tiles != 1 || cfg->cluster > 1 || cfg->kv_split_warps ||
        cfg->scheduler != FA4_SCHED_PLAIN || cfg->fused_kv) {
        snprintf(why, wn, "sm100 decode mode (bm=32): q_tiles=%d cluster=%d kv_split_warps=%d "
                 "scheduler=%d fused_kv=%d; supported: 1 1 0 0 (plain) 0", cfg->q_tiles,
                 cfg->cluster, cfg->kv_split_warps, (int)cfg->scheduler, cfg->fused_kv);
        return FA4_EINVAL;
    }
    if (cfg->swizzle != 0 && cfg->swizzle != 128) {
        snprintf(why, wn, "swizzle=%d; the sm100 decode mode uses 128", cfg->swizzle);
        return FA4_EINVAL;
    }
    if (cfg->bn != 0 && cfg->bn != 64 && cfg->bn != 128 && cfg->bn != 256) {
        snprintf(why, wn, "bn=%d; the sm100 decode mode's S = Q K^T is one tcgen05.mma.ws "
                 "(M 32), whose N is 64, 128 or 256", cfg->bn);
        return FA4_EINVAL;
    }
    return FA4_OK;
}

/* The decode ring of S->bn under CFG's stages (0: as many as CARVE
** holds, at most SM100_MAX_STAGES): fills stages, the byte counts and
** barriers ("Decode mode" above). */
static void sm100_decode_ring(sm100_shape *s, int carve, const fa4_config *cfg)
{
    const int k_tile = s->bn * s->pad_qk * s->esize, v_tile = s->bn * s->pad_dv * s->esize;
    const int per_stage = k_tile + v_tile + 4 * SM100_MBAR_BYTES;

    s->p_bytes = 2 * SM100_DECODE_BM * s->bn * s->esize;
    if (cfg->stages == 0) {
        int room = carve - SM100_SLACK - s->q_bytes - s->p_bytes - s->red_bytes
                   - SM100_TMEMPTR_BYTES - SM100_MBAR_BYTES * SM100_DECODE_FIXED_BARS;
        s->stages = room > 0 ? room / per_stage : 0;
        if (s->stages > SM100_MAX_STAGES)
            s->stages = SM100_MAX_STAGES;
    } else {
        s->stages = cfg->stages;
    }
    s->slots = 2 * s->stages;
    s->k_rows = s->bn;
    s->k_bytes = s->stages * k_tile;
    s->v_bytes = s->stages * v_tile;
    s->nbar = SM100_DECODE_FIXED_BARS + 4 * s->stages;
    s->bar_bytes = SM100_MBAR_BYTES * s->nbar;
    s->regions = s->q_bytes + s->k_bytes + s->v_bytes + s->p_bytes + s->red_bytes
                 + s->bar_bytes + SM100_TMEMPTR_BYTES;
    s->smem = s->regions + SM100_SLACK;
}

/* budget_sm100_shape() for the decode mode (config bm 32). */
static fa4_status sm100_decode_shape(sm100_shape *s, int carve, int tmem_max,
                                     const fa4_problem *pb, const fa4_config *cfg,
                                     char *why, size_t wn)
{
    fa4_status st;

    if ((st = sm100_decode_rules(pb, cfg, why, wn)) != FA4_OK)
        return st;
    s->decode = 1;
    s->q_tiles = 1;
    s->pair = 1;
    s->bm = SM100_DECODE_BM;
    s->mma_k = sm100_mma_k(s->esize);
    s->swizzle = 128;
    s->swz_elems = 128 / s->esize;
    if ((st = sm100_depths(s, pb, why, wn)) != FA4_OK)
        return st;
    s->v_cols = s->pad_dv;
    s->qk_chunks = s->k_chunks = 1;
    /* O = P V in pieces of one .ws N each: the padded depth, or 64 (d192) */
    s->pv_n = s->pad_dv == 64 || s->pad_dv == 128 || s->pad_dv == 256 ? s->pad_dv : 64;
    s->q_bytes = SM100_DECODE_BM * s->pad_qk * s->esize;
    s->red_bytes = SM100_DECODE_RED_BYTES;
    if (cfg->bn == 0) {
        /* 128 keys, or 64 where a stage of 128 leaves no two in the carveout (d256) */
        for (s->bn = 128; ; s->bn = 64) {
            sm100_decode_ring(s, carve, cfg);
            if (s->bn == 64 || (s->stages >= 2 && s->smem <= carve))
                break;
        }
    } else {
        s->bn = cfg->bn;
        sm100_decode_ring(s, carve, cfg);
    }
    s->tmem_s1 = s->bn / 4;
    s->tmem_o0 = s->bn / 2;
    s->tmem_o1 = -1;
    s->tmem_used = s->bn / 2 + s->pad_dv / 4;
    if (s->tmem_used > tmem_max) {
        snprintf(why, wn, "tmem %d columns > %d", s->tmem_used, tmem_max);
        return FA4_ENOFIT;
    }
    if (s->stages < 2) {
        snprintf(why, wn, "kv stages %d < 2 (decode mode, bn=%d: a stage of K and V is %d B)",
                 s->stages, s->bn, s->bn * (s->pad_qk + s->pad_dv) * s->esize
                 + 4 * SM100_MBAR_BYTES);
        return FA4_ENOFIT;
    }
    return sm100_smem_fits(s, carve, why, wn);
}

fa4_status budget_sm100_shape(sm100_shape *s, const device_limits *dev,
                              const fa4_problem *pb, const fa4_config *cfg,
                              char *why, size_t wn)
{
    int carve = dev && dev->smem_per_block_optin > 0
                    ? dev->smem_per_block_optin : SM100_SMEM_DEFAULT;
    int tmem_max = dev && dev->tmem_columns > 0 ? dev->tmem_columns
                                                : SM100_TMEM_MAX;
    int tmem_bn, step;
    fa4_status st;

    memset(s, 0, sizeof(*s));
    s->esize = sm100_esize(pb->dtype);
    if (s->esize == 0) {
        snprintf(why, wn, "dtype=%d unknown", (int)pb->dtype);
        return FA4_EINVAL;
    }
    /* bm 0: the seeds' 2Q layout; 32: the decode mode; else bm = 128 x q_tiles. */
    if (cfg->bm == SM100_DECODE_BM)
        return sm100_decode_shape(s, carve, tmem_max, pb, cfg, why, wn);
    if (cfg->bm == 0) {
        s->q_tiles = 2;
    } else if ((cfg->bm == 256 && cfg->q_tiles == 2) || (cfg->bm == 128 && cfg->q_tiles == 1)) {
        s->q_tiles = cfg->q_tiles;
    } else {
        snprintf(why, wn, "bm=%d q_tiles=%d; sm100 runs bm = 128 x q_tiles: bm=256 "
                 "q_tiles=2 (2Q) or bm=128 q_tiles=1 (1Q), or bm=32 q_tiles=1 (the decode "
                 "mode)", cfg->bm, cfg->q_tiles);
        return FA4_EINVAL;
    }
    s->bm = SM100_MMA_M * s->q_tiles;
    s->mma_k = sm100_mma_k(s->esize);
    if (cfg->splits != 1 || cfg->pack_gqa || cfg->kv_split_warps) {
        snprintf(why, wn, "sm100 bm=%d: splits=%d pack_gqa=%d kv_split_warps=%d; supported: "
                 "1 0 0 (splits and pack_gqa are the decode mode's, bm=32)", s->bm,
                 cfg->splits, cfg->pack_gqa, cfg->kv_split_warps);
        return FA4_EINVAL;
    }
    /* The launch (lib/launch_sm100.c) runs one CTA per bm query rows,
       head and batch, alone (cluster 1) or as a CTA pair sharing each MMA
       (cluster 2: clusters of 2 x 1 x 1); the kernel has no other
       schedule. */
    if (cfg->cluster > 2 || cfg->scheduler != FA4_SCHED_PLAIN) {
        snprintf(why, wn, "sm100: cluster=%d scheduler=%d; supported: cluster 1 (one CTA "
                 "per MMA) or 2 (a CTA pair, cta_group::2), the plain scheduler",
                 cfg->cluster, (int)cfg->scheduler);
        return FA4_EINVAL;
    }
    s->pair = cfg->cluster == 2 ? 2 : 1;
    if (pb->varlen || pb->page_size || pb->softcap > 0 || pb->attention_sinks) {
        snprintf(why, wn, "sm100 kernels: varlen=%d page_size=%d softcap=%g attention_sinks=%d "
                 "not implemented", pb->varlen, pb->page_size, (double)pb->softcap,
                 pb->attention_sinks);
        return FA4_ENOTSUP;
    }
    /* 16-bit types: 128 B.  fp8: the seeds' 64 B (64 elements a row), or
       128 B (128 elements: one box row per 128-deep chunk). */
    s->swizzle = cfg->swizzle ? cfg->swizzle : sm100_swizzle(s->esize);
    if (s->esize == 2 ? s->swizzle != 128 : s->swizzle != 64 && s->swizzle != 128) {
        snprintf(why, wn, "swizzle=%d; sm100 %s uses %s", cfg->swizzle,
                 s->esize == 1 ? "fp8" : "bf16/fp16", s->esize == 1 ? "64 or 128" : "128");
        return FA4_EINVAL;
    }
    s->swz_elems = s->swizzle / s->esize;
    if ((st = sm100_depths(s, pb, why, wn)) != FA4_OK)
        return st;
    s->rope_depth = s->pad_qk - s->pad_dv;
    s->v_cols = s->pad_dv / s->pair;
    /* A pair splits O = P V's N (the depth of V) between its CTAs: each
       half must be whole swizzle boxes, the unit the MN-major descriptor
       and the TMA box step by. */
    if (s->v_cols % s->swz_elems != 0) {
        snprintf(why, wn, "cluster=2 (CTA pair): each CTA holds half of V's padded depth "
                 "%d, %d columns, not whole %d-column swizzle boxes (head_dim_v %d)",
                 s->pad_dv, s->v_cols, s->swz_elems, s->dv);
        return FA4_ENOFIT;
    }
    s->qk_chunks = gcd(s->pad_qk / s->swz_elems, s->pad_qk / s->mma_k);
    s->q_bytes = s->bm * s->pad_qk * s->esize;
    s->corr_bytes = s->q_tiles * SM100_CORR_TILE;
    s->scales = pb->token_scales != 0;
    s->qscale_bytes = s->scales ? s->bm * SM100_SCALE_BYTES : 0;

    /* BN: automatic (the TMEM bound, then the ring), or the config's checked. */
    step = SM100_PV_STAGES * s->mma_k;
    tmem_bn = sm100_tmem_bn(tmem_max, s->q_tiles, s->pad_dv, step);
    if (cfg->bn == 0) {
        s->bn = tmem_bn;
        if (cfg->stages == 0)
            for (; s->bn > 64; s->bn -= step) {
                sm100_ring(s, carve, cfg);
                if (s->stages >= 2 && s->smem <= carve)
                    break;
            }
    } else {
        s->bn = cfg->bn;
        /* P goes back in PV_STAGES column halves of whole MMA k-steps. */
        if (s->bn % step != 0) {
            snprintf(why, wn, "bn=%d not a multiple of %d (%d P halves of "
                     "MMA_K %d)", s->bn, step, SM100_PV_STAGES, s->mma_k);
            return FA4_EINVAL;
        }
        if (s->bn > 256) {
            snprintf(why, wn, "bn=%d > 256 (tcgen05.mma N limit)", s->bn);
            return FA4_ENOFIT;
        }
    }
    if (s->bn < 64) {
        snprintf(why, wn, "bn=%d < 64 (%d query tile%s at head_dim_v %d, padded to %d, "
                 "leave TMEM for bn=%d: 2*bn + %d*%d <= %d)", s->bn, s->q_tiles,
                 s->q_tiles > 1 ? "s" : "", s->dv, s->pad_dv, tmem_bn, s->q_tiles,
                 s->pad_dv, tmem_max);
        return FA4_ENOFIT;
    }
    s->tmem_used = 2 * s->bn + s->q_tiles * s->pad_dv;
    s->tmem_s1 = s->bn;
    s->tmem_o0 = 2 * s->bn;
    s->tmem_o1 = s->q_tiles == 2 ? 2 * s->bn + s->pad_dv : -1;
    if (s->tmem_used > tmem_max) {
        snprintf(why, wn, "tmem %d columns > %d", s->tmem_used, tmem_max);
        return FA4_ENOFIT;
    }

    sm100_ring(s, carve, cfg);
    if (s->stages < 2) {
        snprintf(why, wn, "kv stages %d < 2 (bn=%d, %s)", s->stages, s->bn,
                 s->fused ? "fused ring" : "split rings");
        return FA4_ENOFIT;
    }
    return sm100_smem_fits(s, carve, why, wn);
}

/* The automatic value of each field of CFG left 0 ("bm=0 bn=0"), into
** NAMES; 0 when CFG is resolved. */
static int sm100_unresolved(char *names, size_t n, const fa4_config *cfg)
{
    size_t len = 0;
    int count = 0;

    names[0] = '\0';
#define SM100_UNRESOLVED(field)                                                   \
    if (cfg->field == 0 && len < n) {                                             \
        len += (size_t)snprintf(names + len, n - len, "%s" #field "=0",           \
                                count++ ? " " : "");                              \
    }
    SM100_UNRESOLVED(bm)
    SM100_UNRESOLVED(bn)
    SM100_UNRESOLVED(stages)
    SM100_UNRESOLVED(swizzle)
#undef SM100_UNRESOLVED
    return count;
}

/* FA4_OK unless CFG breaks a rule of the fp8 kernel for PB (e4m3 inputs):
** P is computed 2^(8 - rescale_threshold) times itself (kernels/sm100/
** kernel.cuh, SM100_P_LOG2), so the threshold is at most 8. */
static fa4_status sm100_fp8_rules(const fa4_problem *pb, const fa4_config *cfg,
                                  char *why, size_t wn)
{
    if (pb->dtype == FA4_DTYPE_FP8_E4M3 && cfg->rescale_threshold > 8) {
        snprintf(why, wn, "sm100 fp8: rescale_threshold=%d; P's e4m3 offset 2^(8 - "
                 "threshold) needs 0..8", cfg->rescale_threshold);
        return FA4_EINVAL;
    }
    return FA4_OK;
}

/* sm100_fit() of the decode mode's shape S: its regions, 192 threads,
** its TMEM map ("Decode mode" above). */
static fa4_status sm100_decode_fit(fa4_layout *out, const sm100_shape *s, char *why,
                                   size_t wn)
{
    int off = 0;

    add_region(out, "Q", &off, s->q_bytes);
    add_region(out, "K", &off, s->k_bytes);
    add_region(out, "V", &off, s->v_bytes);
    add_region(out, "P", &off, s->p_bytes);
    add_region(out, "RED", &off, s->red_bytes);
    add_region(out, "BAR", &off, s->bar_bytes);
    add_region(out, "TMEMPTR", &off, SM100_TMEMPTR_BYTES);
    if (off != s->regions) {
        snprintf(why, wn, "internal: decode layout %d B != budget %d B", off, s->regions);
        return FA4_EINVAL;
    }
    out->threads = SM100_DECODE_THREADS;
    out->smem_bytes = s->smem;
    out->regs_estimate = SM100_DECODE_REGS;
    out->kv_slots = s->stages;
    out->tmem_columns = tmem_alloc_cols(s->tmem_used);
    out->tmem_s0 = 0;
    out->tmem_s1 = s->tmem_s1;
    out->tmem_o0 = s->tmem_o0;
    out->tmem_o1 = -1;
    return FA4_OK;
}

/* family_ops.fit: see budget_fit() in budget.h. */
static fa4_status sm100_fit(fa4_layout *out, const device_limits *dev,
                            const fa4_problem *pb, const fa4_config *cfg,
                            char *why, size_t wn)
{
    sm100_shape s;
    fa4_status st;
    char names[64];
    int off = 0;

    if ((st = sm100_fp8_rules(pb, cfg, why, wn)) != FA4_OK)
        return st;
    /* Every number below is compiled into the kernel as it stands: an
       unresolved field would give it FA4_BN 0 (and the like). */
    if (sm100_unresolved(names, sizeof names, cfg)) {
        if ((st = budget_sm100_shape(&s, dev, pb, cfg, why, wn)) != FA4_OK)
            return st;
        snprintf(why, wn, "sm100 config leaves %s unresolved: the kernel is compiled with "
                 "them (here the automatic choice is bm=%d q_tiles=%d bn=%d stages=%d "
                 "fused_kv=%d swizzle=%d)", names, s.bm, s.q_tiles, s.bn, s.stages,
                 s.fused, s.swizzle);
        return FA4_EINVAL;
    }
    if ((st = budget_sm100_shape(&s, dev, pb, cfg, why, wn)) != FA4_OK)
        return st;
    if (s.decode)
        return sm100_decode_fit(out, &s, why, wn);

    add_region(out, "Q", &off, s.q_bytes);
    if (s.fused) {
        add_region(out, "KV", &off, s.kv_bytes);
        if (s.rope_bytes > 0)
            add_region(out, "ROPE", &off, s.rope_bytes);
    } else {
        add_region(out, "K", &off, s.k_bytes);
        add_region(out, "V", &off, s.v_bytes);
    }
    add_region(out, "CORR", &off, s.corr_bytes);
    add_region(out, "QSCALE", &off, s.qscale_bytes);
    add_region(out, "KSCALE", &off, s.kscale_bytes);
    add_region(out, "BAR", &off, s.bar_bytes);
    add_region(out, "TMEMPTR", &off, SM100_TMEMPTR_BYTES);
    if (off != s.regions) {       /* the two accountings must agree */
        snprintf(why, wn, "internal: layout %d B != budget %d B", off, s.regions);
        return FA4_EINVAL;
    }

    out->threads = SM100_THREADS;
    out->smem_bytes = s.smem;
    /* 512 threads at one CTA per SM: 65536 / 512 registers each. */
    out->regs_estimate = 128;
    out->kv_slots = s.fused ? s.slots : s.stages;
    out->tmem_columns = tmem_alloc_cols(s.tmem_used);
    out->tmem_s0 = 0;
    out->tmem_s1 = s.tmem_s1;
    out->tmem_o0 = s.tmem_o0;
    out->tmem_o1 = s.tmem_o1;
    return FA4_OK;
}

/* Region NAME of L, or NULL (local, so this file stands alone). */
static const budget_region *find_region(const fa4_layout *l, const char *name)
{
    int i;
    for (i = 0; i < l->nregions; i++)
        if (strcmp(l->region[i].name, name) == 0)
            return &l->region[i];
    return NULL;
}

/* The rope mode's constant: FA4_ROPE_CHUNKS, how many of K's swizzle-wide
** depth boxes (SWZ elements each) go to the ROPE region instead of the
** ring slot -- (padded dqk - padded dv) / SWZ with a ROPE region, else 0. */
static void sm100_rope_defines(char *buf, size_t size, int *len, const fa4_layout *l,
                               int pad_qk, int pad_dv, int swz)
{
    const int rope = find_region(l, "ROPE") != NULL;
    budget_append(buf, size, len, "#define FA4_ROPE_CHUNKS %d\n",
                  rope ? (pad_qk - pad_dv) / swz : 0);
}

/* The per-token scale buffers of L: KSCALE holds one of BN floats per K
** tile in flight (0 without scales). */
static int sm100_ks_bufs(const fa4_layout *l, const fa4_config *cfg)
{
    const budget_region *ks = find_region(l, "KSCALE");
    return ks && cfg->bn > 0 ? ks->size / (cfg->bn * SM100_SCALE_BYTES) : 0;
}

/* The barriers the per-token scales add (kernel.cuh, enum sm100_bar):
** QS_FULL, and KS_FULL / KS_EMPTY per K scale buffer; 0 without. */
static int sm100_scale_bars(const fa4_layout *l, const fa4_config *cfg)
{
    const budget_region *qs = find_region(l, "QSCALE");
    return qs && qs->size > 0 ? 1 + 2 * sm100_ks_bufs(l, cfg) : 0;
}

/* The per-token scales' constants: FA4_TOKEN_SCALES (1 with a QSCALE
** region) and FA4_KSCALE_BUFS. */
static void sm100_scale_defines(char *buf, size_t size, int *len, const fa4_layout *l,
                                const fa4_config *cfg)
{
    const budget_region *qs = find_region(l, "QSCALE");
    budget_append(buf, size, len, "#define FA4_TOKEN_SCALES %d\n#define FA4_KSCALE_BUFS %d\n",
                  qs && qs->size > 0, sm100_ks_bufs(l, cfg));
}

/* The decode mode's constants (kernels/sm100/decode.cuh): FA4_DECODE,
** FA4_PACK_GQA, the padded depths, O's piece width FA4_PV_N, the TMEM
** map (S0, S1, O), the barrier count and the softmax tunables. */
static int sm100_decode_defines(char *buf, size_t size, const fa4_problem *pb,
                                const fa4_config *cfg, const fa4_layout *l)
{
    const budget_region *bar = find_region(l, "BAR");
    const int dv = problem_head_dim_v(pb);
    const int pad_qk = align_up(pb->head_dim_qk, 64), pad_dv = align_up(dv, 64);
    const int pv_n = pad_dv == 64 || pad_dv == 128 || pad_dv == 256 ? pad_dv : 64;
    int n = 0;

    return budget_append(buf, size, &n,
                     "#define FA4_DECODE 1\n"
                     "#define FA4_PACK_GQA %d\n"
                     "#define FA4_PAD_DQK %d\n"
                     "#define FA4_PAD_DV %d\n"
                     "#define FA4_PV_N %d\n"
                     "#define FA4_TMEM_COLS %d\n"
                     "#define FA4_TMEM_S0 %d\n"
                     "#define FA4_TMEM_S1 %d\n"
                     "#define FA4_TMEM_O %d\n"
                     "#define FA4_NUM_BARRIERS %d\n"
                     "#define FA4_SMEM_SLACK %d\n"
                     "#define FA4_EXP2_EMU_PCT %d\n"
                     "#define FA4_RESCALE_THRESHOLD %d\n"
                     "#define FA4_CTA_GROUP 1\n",
                     cfg->pack_gqa ? 1 : 0, pad_qk, pad_dv, pv_n, l->tmem_columns, l->tmem_s0,
                     l->tmem_s1, l->tmem_o0, bar ? bar->size / SM100_MBAR_BYTES : 0,
                     SM100_SLACK, cfg->exp2_emu_pct, cfg->rescale_threshold);
}

/* family_ops.defines: the sm100 constants of kernels/README.md, plus the
** pipeline counts the kernel's barrier enum is built from (the kernel
** static_asserts that its enum has FA4_NUM_BARRIERS entries) and
** FA4_CTA_GROUP (2: the CTA pair of cluster 2). */
static int sm100_defines(char *buf, size_t size, const fa4_problem *pb,
                         const fa4_config *cfg, const fa4_layout *l)
{
    const budget_region *bar = find_region(l, "BAR");
    int esize = sm100_esize(pb->dtype);
    int dv = problem_head_dim_v(pb);
    int fused = find_region(l, "KV") != NULL;
    int q_tiles = cfg->bm / SM100_MMA_M;
    int swz, mma_k, pad_qk, pad_dv, qk_chunks, k_chunks = 1, nbar, n = 0;

    if (esize == 0 || bar == NULL || l->kv_slots <= 0 || cfg->swizzle <= 0)
        return -1;
    if (cfg->bm == SM100_DECODE_BM)
        return sm100_decode_defines(buf, size, pb, cfg, l);
    swz = cfg->swizzle / esize;
    mma_k = sm100_mma_k(esize);
    pad_qk = align_up(pb->head_dim_qk, swz);
    pad_dv = align_up(dv, swz);
    qk_chunks = gcd(pad_qk / swz, pad_qk / mma_k);
    nbar = bar->size / SM100_MBAR_BYTES;
    /* split: nbar = fixed + 2 * stages * (k_chunks + 1), see (d) above;
       k_chunks fell back to 1 when the extra barriers did not fit. */
    if (!fused)
        k_chunks = (nbar - sm100_fixed_bars(q_tiles, qk_chunks) - sm100_scale_bars(l, cfg))
                   / (2 * l->kv_slots) - 1;
    budget_append(buf, size, &n,
                 "#define FA4_Q_TILES %d\n"
                 "#define FA4_KV_SLOTS %d\n"
                 "#define FA4_FUSED_KV %d\n"
                 "#define FA4_TMEM_COLS %d\n"
                 "#define FA4_TMEM_S0 %d\n"
                 "#define FA4_TMEM_S1 %d\n"
                 "#define FA4_TMEM_O0 %d\n"
                 "#define FA4_TMEM_O1 %d\n"
                 "#define FA4_PAD_DQK %d\n"
                 "#define FA4_PAD_DV %d\n"
                 "#define FA4_QK_CHUNKS %d\n"
                 "#define FA4_K_CHUNKS %d\n"
                 "#define FA4_PV_STAGES %d\n"
                 "#define FA4_NUM_BARRIERS %d\n"
                 "#define FA4_SMEM_SLACK %d\n"
                 "#define FA4_EXP2_EMU_PCT %d\n"
                 "#define FA4_RESCALE_THRESHOLD %d\n"
                 "#define FA4_CTA_GROUP %d\n",
                 q_tiles, l->kv_slots, fused, l->tmem_columns,
                 l->tmem_s0, l->tmem_s1, l->tmem_o0, l->tmem_o1,
                 pad_qk, pad_dv, qk_chunks, k_chunks, SM100_PV_STAGES, nbar,
                 SM100_SLACK, cfg->exp2_emu_pct, cfg->rescale_threshold,
                 cfg->cluster == 2 ? 2 : 1);
    sm100_rope_defines(buf, size, &n, l, pad_qk, pad_dv, swz);
    sm100_scale_defines(buf, size, &n, l, cfg);
    return n;
}

/* Fill the fields every sm100 config of Q_TILES query tiles per CTA and
** PAIR CTAs per MMA (1, or 2: cluster 2) shares. */
static void sm100_base(fa4_config *c, int esize, int q_tiles, int pair)
{
    fa4_config init = FA4_CONFIG_INIT;
    *c = init;
    c->family = FA4_FAMILY_SM100;
    c->bm = SM100_MMA_M * q_tiles;
    c->q_tiles = q_tiles;
    c->swizzle = sm100_swizzle(esize);
    c->cluster = pair;
    c->scheduler = FA4_SCHED_PLAIN;
}

/* Resolve BN (0: automatic) and the slot rule into C's bn, stages and
** fused_kv.  When the shape does not fit, bn keeps BN (or the TMEM
** bound's value) and stages stays 0: budget_fit() then gives the reason. */
static void sm100_resolve(fa4_config *c, const device_limits *dev,
                          const fa4_problem *pb, int bn)
{
    sm100_shape s;
    char why[256];
    fa4_config probe = *c;

    probe.bn = bn;
    probe.stages = 0;
    if (budget_sm100_shape(&s, dev, pb, &probe, why, sizeof(why)) != FA4_OK) {
        c->bn = bn ? bn : s.bn;
        c->stages = 0;
        c->fused_kv = 0;
        return;
    }
    c->bn = s.bn;
    c->stages = s.stages;
    c->fused_kv = s.fused;
}

/* The query tiles per CTA for PB: 2 (the seeds' layout) when its
** automatic config fits, else 1 -- the head dims whose two O tiles leave
** TMEM no key block of 64 (d256), or whose 2Q ring holds no 2 stages. */
static int sm100_q_tiles(const device_limits *dev, const fa4_problem *pb, int esize)
{
    fa4_config c;

    sm100_base(&c, esize, 2, 1);
    sm100_resolve(&c, dev, pb, 0);
    return c.bn >= 64 && c.stages >= 2 ? 2 : 1;
}

/* Append the candidates of Q_TILES query tiles and PAIR CTAs per MMA to
** OUT from index N (at most MAX in all): BN automatic and every multiple
** of 2*MMA_K (32 for 16-bit types, 64 for fp8) below it down to 64, each
** with the slot rule's ring; exp2 emulation {0, 25, 50} %; rescale
** threshold {0, 8}.  Returns the new count. */
static int sm100_add(fa4_config *out, int n, int max, const device_limits *dev,
                     const fa4_problem *pb, int esize, int q_tiles, int pair, int swz)
{
    static const int emu[] = { 0, 25, 50 };
    static const int thr[] = { 0, 8 };
    int bns[8], nbn = 0, bn, step, i, e, t;
    fa4_config c;

    sm100_base(&c, esize, q_tiles, pair);
    c.swizzle = swz;
    sm100_resolve(&c, dev, pb, 0);
    bns[nbn++] = c.bn;                    /* may be < 64: fit says why */
    step = 2 * sm100_mma_k(esize);
    for (bn = align_down(c.bn - 1, step); bn >= 64 && nbn < 8; bn -= step)
        bns[nbn++] = bn;

    for (i = 0; i < nbn; i++)
        for (e = 0; e < 3; e++)
            for (t = 0; t < 2; t++, n++) {
                if (n >= max)
                    continue;
                sm100_base(&out[n], esize, q_tiles, pair);
                out[n].swizzle = swz;
                sm100_resolve(&out[n], dev, pb, bns[i]);
                out[n].exp2_emu_pct = emu[e];
                out[n].rescale_threshold = thr[t];
            }
    return n;
}

/* 1 when PB's V depth splits into whole swizzle boxes of SWIZZLE bytes
** between the two CTAs of a pair (padded dv a multiple of 2 x 64
** elements: d96..256; fp8 at 128 B, 2 x 128: d256). */
static int sm100_pair_splits(const fa4_problem *pb, int esize, int swizzle)
{
    int swz = swizzle / esize;
    int dv = problem_head_dim_v(pb);
    return align_up(dv, swz) % (2 * swz) == 0;
}

/* fp8's tunable swizzle beside the seeds' 64 B: 128 B (rows of 128
** elements, one box per 128-deep chunk) where it pads neither depth more
** than 64 B does (d128, d256); else 0.  16-bit types have 128 B only. */
static int sm100_alt_swizzle(const fa4_problem *pb, int esize)
{
    int dv = problem_head_dim_v(pb);

    if (esize != 1 || align_up(pb->head_dim_qk, 128) != align_up(pb->head_dim_qk, 64) ||
        align_up(dv, 128) != align_up(dv, 64))
        return 0;
    return 128;
}

int budget_sm100_decode_suits(const fa4_problem *pb)
{
    const int group = problem_group(pb);

    return (long long)pb->seqlen_q * group <= SM100_DECODE_MAX_ROWS &&
           (pb->dtype == FA4_DTYPE_BF16 || pb->dtype == FA4_DTYPE_FP16) &&
           !pb->varlen && !pb->page_size && !pb->softcap && !pb->attention_sinks &&
           !pb->token_scales;
}

/* A decode-mode config for PB with key block BN (0: automatic) and
** SPLITS, its stages resolved (0 when it does not fit: budget_fit() then
** says why); heads packed where the group has more than one. */
static void sm100_decode_config(fa4_config *c, const device_limits *dev,
                                const fa4_problem *pb, int bn, int splits)
{
    sm100_shape sh;
    char why[256];

    sm100_base(c, 2, 1, 1);
    c->bm = SM100_DECODE_BM;
    c->bn = bn;
    c->splits = splits;
    c->pack_gqa = problem_group(pb) > 1;
    c->exp2_emu_pct = 0;          /* 32 rows: MUFU is far from the bound */
    c->rescale_threshold = 8;
    if (budget_sm100_shape(&sh, dev, pb, c, why, sizeof why) == FA4_OK) {
        c->bn = sh.bn;
        c->stages = sh.stages;
    } else if (bn == 0) {
        c->bn = 128;
    }
}

/* family_ops.candidates: for decode shapes (budget_sm100_decode_suits())
** the decode mode's space first: bn 128, 64, 256 x splits 0 (per call),
** 1, 2, 4, 8, 16.  Then per swizzle (the seeds', then fp8's 128 B where
** sm100_alt_swizzle offers it): the 2Q space (sm100_add); where 2Q has no
** automatic config, the 1Q space after it (the 2Q one stays, so the
** enumerator says why 2Q was dropped).  Then the same query tiles as CTA
** pairs (cluster 2) where V's depth splits between the pair. */
static int sm100_candidates(fa4_config *out, int max, const device_limits *dev,
                            const fa4_problem *pb)
{
    int esize = sm100_esize(pb->dtype), n = 0, q1, s, swz;

    if (esize == 0 || pb->head_dim_qk <= 0)
        return 0;
    /* decode shapes: the decode mode first (bn x splits, 0 = per call) */
    if (budget_sm100_decode_suits(pb)) {
        static const int bns[] = { 128, 64, 256 }, splits[] = { 0, 1, 2, 4, 8, 16 };
        int b, k;
        for (b = 0; b < 3; b++)
            for (k = 0; k < 6; k++, n++)
                if (n < max)
                    sm100_decode_config(&out[n], dev, pb, bns[b], splits[k]);
    }
    q1 = sm100_q_tiles(dev, pb, esize) == 1;
    for (s = 0; s < 2; s++) {
        swz = s == 0 ? sm100_swizzle(esize) : sm100_alt_swizzle(pb, esize);
        if (swz == 0)
            continue;
        n = sm100_add(out, n, max, dev, pb, esize, 2, 1, swz);
        if (q1)
            n = sm100_add(out, n, max, dev, pb, esize, 1, 1, swz);
        if (sm100_pair_splits(pb, esize, swz))
            n = sm100_add(out, n, max, dev, pb, esize, q1 ? 1 : 2, 2, swz);
    }
    return n;
}

/* family_ops.heuristic: decode shapes (budget_sm100_decode_suits()) take
** the decode mode, bn automatic, splits chosen per call, heads packed.
** Otherwise 2Q where it fits, else 1Q; BN automatic, the slot
** rule's ring, 25 % of exp2 on the FMA units, lazy rescale at 2^8 (the
** FA4 defaults). */
static void sm100_heuristic(fa4_config *out, const device_limits *dev,
                            const fa4_problem *pb)
{
    int esize = sm100_esize(pb->dtype);

    if (budget_sm100_decode_suits(pb)) {
        sm100_decode_config(out, dev, pb, 0, 0);
        return;
    }

    if (esize == 0)
        esize = 2;
    sm100_base(out, esize, sm100_q_tiles(dev, pb, esize), 1);
    sm100_resolve(out, dev, pb, 0);
    out->exp2_emu_pct = 25;
    out->rescale_threshold = 8;
}

const family_ops family_sm100 = {
    FA4_FAMILY_SM100, "sm100", 100, 100,
    sm100_fit, sm100_defines, sm100_candidates, sm100_heuristic
};
