/*
** launch_sm100.h -- host side of the sm100 family: the TMA maps of Q, K
** and V that fa4_fwd (kernels/sm100/kernel.cuh) takes after fa4_params,
** and its grid.  The maps are first described by a pure function, so
** that tests check them against the kernel's transaction byte counts
** without a GPU; launch_sm100() (plan.h) encodes and launches.
**
** What the kernel reads (kernel.cuh, mainloop.cuh):
**   - Q tile i of the CTA's bm rows (256: two tiles; 128: one, the 1Q
**     mode of shapes 2Q does not fit, d256) arrives as padded_dqk / 64 boxes of
**     {64 columns, 128 rows}: 16384 B each, expect_tx 128 x 128 B per
**     box for tile 1, the whole tile (128 x padded_dqk x 2 B) on K_0's
**     barrier for tile 0.  Coordinates (64 ch, m0 [+128], head, batch).
**   - K_j and V_j arrive as boxes of {64, bn} (bn x 128 B), at
**     (64 ch, key0, kv_head, batch); expect_tx bn x padded_d x 2 B per
**     tile, or bn x 128 B per depth chunk when K is staged by chunk.
**   - A CTA pair (config cluster 2, the kernel's FA4_CTA_GROUP 2): each
**     CTA loads K boxes of {64, bn / 2} at (64 ch, key0 + rank bn / 2,
**     ..) and padded_dv / 128 of V's {64, bn} boxes from depth box
**     rank padded_dv / 128; Q as alone.  All complete on the leader's
**     barriers, whose expect_tx is twice one CTA's bytes.
**   - 128 B swizzle: a box row is one 128 B swizzle span, the layout the
**     tcgen05 smem descriptors (layout 2) read; out-of-bounds rows and
**     head-dim columns are zero-filled (and count toward expect_tx).
**   - fp8 (e4m3) inputs: the same maps over bytes (UINT8) in the config's
**     swizzle, 64 B (the seeds') or 128 B: boxes of {64 or 128, rows},
**     every count above with 1-byte elements and 64 / 128 in place of the
**     box width (padded depths are whole boxes).  V is read as stored
**     (MN-major; kind::f8f6f4 takes a transposed B, kernel.cuh), so there
**     is no V^T copy and no workspace.  O (bf16 or fp16, out_dtype) is
**     stored as boxes of one swizzle span of 16-bit values, {32 or 64,
**     32}, in the same swizzle, in rounds through Q's region.
**   - O leaves through tm_o: each correction warp stages its 32 rows of a
**     query tile in that tile's Q region (128 B swizzled) and stores
**     them as boxes of {64, 32} at (64 ch, m0 + 128 i + 32 w, head,
**     batch) (fp8: above); the map clips rows past seqlen_q and columns
**     past head_dim_v.  O's strides follow the TMA rules, as Q's.
**   - Per-token Q/K scales (problem token_scales) take no map: the
**     kernel's scale warp reads fa4_params.q_token_scale / k_token_scale
**     ([batch, heads, seq] float32 at the call's sizes) with plain loads.
**   - One CTA of 512 threads per (bm query rows, head, batch), no
**     cluster; a pair: the same CTAs, grid rounded up to an even number
**     of query blocks, in clusters of 2 x 1 x 1 (cuLaunchKernelEx).
**     FA4_SMEM_BYTES of dynamic shared memory (the plan raises the
**     function's limit when it loads it), no workspace.
**   - The decode mode (config bm 32; kernels/sm100/decode.cuh) takes
**     fa4_fwd(p, tm_q, tm_k, tm_v, fa4_serving): tm_q is {dim, heads_q,
**     seqlen_q, batch} with the box {64, H, T, 1} of kernels/sm100/
**     decode_rows.h (H = min(group or 1, 32) heads of T = 32 / H
**     tokens: 128 H T B, expect_tx of all padded_dqk / 64 boxes on
**     Q_FULL, at (64 ch, first head of the tile, first token, batch));
**     K and V as above with boxes {64, bn} (bn 64, 128 or 256: the
**     tcgen05.mma.ws N), expect_tx bn x padded depth x 2 B per stage; no
**     O map (st.global).  192 threads per (tile, head x split, batch);
**     with splits, the partial O / LSE of plan.h's split-KV workspace and
**     a second launch of fa4_combine.
*/
#ifndef FA4_LAUNCH_SM100_H
#define FA4_LAUNCH_SM100_H

#include <stddef.h>
#include "fa4.h"
#include "device.h"
#include "../kernels/common/params.h"

#define SM100_Q_BOX_ROWS 128   /* one MMA_M query tile */
#define SM100_O_BOX_ROWS 32    /* one correction warp's rows of a tile */
#define SM100_CTA_THREADS 512

/* One rank-4 tiled TMA map, as cuTensorMapEncodeTiled() takes it. */
typedef struct sm100_map {
    const char *name;          /* "q", "k", "v" (static) */
    int tma_type;              /* CUtensorMapDataType of the elements */
    int esize;                 /* bytes per element */
    unsigned long long addr;   /* device address of element 0 */
    long long dims[4];         /* {head dim, seq, heads, batch}, innermost first */
    long long strides[3];      /* bytes per step of dims 1..3 */
    int box[4];                /* {swizzle / esize, 128 (q), bn (k, v) or 32 (o), 1, 1} */
    int swizzle;               /* bytes: 128, or 64 for fp8 configs */
} sm100_map;

/* Bytes one box of MAP fills in shared memory: what each TMA load of it
** adds to its mbarrier's transaction count. */
long long launch_sm100_box_bytes(const sm100_map *map);

/*
** FA4_OK when the sm100 kernel runs PROBLEM: bf16, fp16 or fp8 e4m3
** inputs, a dense batch.  Else FA4_ENOTSUP with WHY (varlen and paged K/V
** have no sm100 address path).  The heuristic skips the family for such
** problems.  Pure; thread-safe.
*/
fa4_status launch_sm100_runs(const fa4_problem *problem, char *why, size_t why_size);

/*
** Describe the Q, K, V and O maps (MAPS[0..3]) of one fa4_fwd launch of
** PROBLEM under CONFIG, from the device addresses, this call's sizes and
** the element strides in PARAMS (launch.c's argument block).  Dims are
** {head_dim, seqlen, heads, batch} with strides {row, head, batch} in
** bytes; boxes {W, 128, 1, 1} for Q, {W, config->bn, 1, 1} for K and V
** ({W, bn / 2, 1, 1} for K with cluster 2), {config->swizzle / 2, 32, 1,
** 1} for O, with W = config->swizzle / element bytes (64 for 16-bit
** inputs, 64 or 128 for fp8), in config->swizzle's swizzle.  A stride
** over a dimension of extent 1 is never used and is set to 16 when the
** caller's is not a legal one.
** Returns FA4_OK; FA4_ENOTSUP with WHY for what the kernel does not run
** (launch_sm100_runs()); FA4_EINVAL with WHY for a config without a
** resolved bn or swizzle or with cluster > 2, an address not 16-byte
** aligned, or a stride that is not a positive multiple of 16 bytes below
** 2^40 (TMA).
** Pure; thread-safe.
*/
fa4_status launch_sm100_describe(sm100_map maps[4], const fa4_problem *problem,
                                 const fa4_config *config, const fa4_params *params,
                                 char *why, size_t why_size);

/*
** Encode the first N of MAPS (from launch_sm100_describe(): 4, or 3 for
** the decode mode) through CU's cuTensorMapEncodeTiled into OUT[0..N-1]
** (tm_q, tm_k, tm_v, tm_o).  The calling thread must have a CUDA context
** current.
** FA4_ENOTSUP when the driver lacks the call; FA4_ECUDA with the driver's
** text and the map's description in WHY.
*/
fa4_status launch_sm100_encode(CUtensorMap out[4], const cuda_api *cu,
                               const sm100_map maps[4], int n, char *why, size_t why_size);

/* The decode mode's grid for PARAMS' call under CONFIG (bm 32) with
** SPLITS KV splits: (m_tiles of kernels/sm100/decode_rows.h, heads x
** splits with heads = heads_kv when packed else heads_q, batch).  Returns
** 0 when y or z is over 65535. */
int launch_sm100_decode_grid(unsigned grid[3], const fa4_params *params,
                             const fa4_config *config, int splits);

/* CTAs per MMA of CONFIG: 2 for a CTA pair (cluster 2), else 1. */
int launch_sm100_pair(const fa4_config *config);

/* The grid of PARAMS' call: (m_blocks = ceil(seqlen_q / bm), rounded up
** to a multiple of PAIR, heads_q, batch).  PAIR 2 launches it in
** clusters of 2 x 1 x 1. */
void launch_sm100_grid(unsigned grid[3], const fa4_params *params, int pair);

#endif
