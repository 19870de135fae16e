/*
** launch_sm90.h -- host side of the sm90 family: the TMA maps of Q, K, V
** and O that fa4_fwd (kernels/sm90/kernel.cuh) takes after fa4_params.
*/
#ifndef FA4_LAUNCH_SM90_H
#define FA4_LAUNCH_SM90_H

#include <stddef.h>
#include "fa4.h"
#include "device.h"
#include "problem.h"
#include "../kernels/common/params.h"

/*
** Encode MAPS[0..3] (Q, K, V, O) for PROBLEM under CONFIG from the device
** addresses and element strides in PARAMS (fp8 inputs: V's map is V^T's
** at device address VT, below).  Each map is rank 4,
** {dim, heads, seq, batch}, box {swizzle / 2, 1, rows, 1} (rows: bm for Q,
** bn for K and V, 64 for O; swizzle: the config's, 128, 64 or 32 B), so
** rows past a sequence's end are zero-filled on load and not written on
** store, and head-dim columns past head_dim are zero-filled (the kernel
** pads head dims to whole boxes).
** Returns FA4_OK; FA4_EINVAL with WHY when an address is not 16-byte
** aligned or a stride is not a multiple of 16 bytes (a TMA rule);
** FA4_ECUDA with the driver's error text when encoding fails.
** Thread-safe.
*/
/*
** Rows of one paged K/V TMA box for pages of PAGE_SIZE rows (a power of
** two) and key blocks of BN rows: the largest power of two dividing BN, at
** most PAGE_SIZE, so that no box crosses a page and a block is whole boxes
** (at least 16 rows: BN is a multiple of 16).  The kernel's FA4_PAGE_BOX.
*/
static inline int sm90_page_box(int page_size, int bn)
{
    const int p2 = bn & -bn;
    return page_size < p2 ? page_size : p2;
}

fa4_status launch_sm90_maps(CUtensorMap maps[4], const cuda_api *cu,
                            const fa4_problem *problem, const fa4_config *config,
                            const fa4_params *params, unsigned long long vt, char *why,
                            size_t why_size);

/* A head dim padded as the kernel pads it (FA4_PAD, kernels/sm90/kernel.cuh):
** at least 64, whole chunks of WIDTH columns (a swizzle span of elements). */
static inline int sm90_pad_dim(int dim, int width)
{
    dim = dim < 64 ? 64 : dim;
    return (dim + width - 1) / width * width;
}

/*
** The sm90 workspace (fa4_plan_workspace_size()): the dynamic scheduler's
** counter (SM90_DATA_OFFSET bytes), then the tail split's records, then
** V^T for fp8 inputs; launch_sm90_workspace() is its size for a problem's
** sizes (0 when neither records nor V^T are needed).
**
** fp8 inputs: V^T [batch, heads_kv, head_dim_v, skp] bytes, written by
** fa4_v_transpose (kernels/sm90/vtranspose.cuh) before each fa4_fwd, for
** dense, varlen and paged batches alike.  skp =
** sm90_vt_cols(): the keys rounded up to whole transpose blocks, and for
** varlen to whole key blocks of BN (a sequence's last block repeats keys
** before it, so it can end past seqlen_k rounded up to the transpose
** block).  launch_sm90_vt_bytes() is V^T's size (0 for 16-bit inputs).
*/
#define SM90_VT_KEYS 32     /* keys per block of the V^T copy: FA4_VT_KEYS in the kernel */
#define SM90_VT_BLOCKS 4    /* its blocks per CTA: FA4_VT_BLOCKS */
#define SM90_DATA_OFFSET 256
static inline int sm90_vt_keys(int seqlen_k)
{
    return (int)(((long long)seqlen_k + SM90_VT_KEYS - 1) / SM90_VT_KEYS * SM90_VT_KEYS);
}
/* V^T's keys per row for SEQLEN_K keys (the maximum) of PROBLEM under
** CONFIG (bn, a multiple of SM90_VT_KEYS for fp8). */
static inline long long sm90_vt_cols(const fa4_problem *problem, const fa4_config *config,
                                     int seqlen_k)
{
    if (problem->varlen && !problem->page_size && config->bn > 0)
        return ((long long)seqlen_k + config->bn - 1) / config->bn * config->bn;
    return sm90_vt_keys(seqlen_k);
}
/* Bytes of V^T for PROBLEM's sizes (the plan's maxima, or a call's)
** under CONFIG; 0 for 16-bit inputs. */
size_t launch_sm90_vt_bytes(const fa4_problem *problem, const fa4_config *config);

/* The tail split's limits: parts per tile, key blocks per part. */
#define SM90_TAIL_MAX_PARTS 16
#define SM90_TAIL_MIN_PART_BLOCKS 4

/*
** The tail split (config splits = 0; kernels/sm90/tail.cuh): of TILES
** tiles of N_BLOCKS key blocks each, equal in length, on SMS SMs (one CTA
** each), the last wave's r = TILES mod SMS tiles run from tile *FIRST on
** in *SPLITS parts each: as many as still run together in that wave
** (r * S <= SMS; more, in two rounds of parts, measured slower on the
** H100), at most SM90_TAIL_MAX_PARTS, each part at least
** SM90_TAIL_MIN_PART_BLOCKS key blocks.  *FIRST = TILES and
** *SPLITS = 1 when fewer than 2 parts fit.  The grid is *FIRST + r *
** *SPLITS CTAs.
*/
static inline void sm90_tail_split(int tiles, int sms, int n_blocks, int *first, int *splits)
{
    const int r = sms > 0 ? tiles % sms : 0;
    int s = r > 0 ? sms / r : 1;

    if (s > n_blocks / SM90_TAIL_MIN_PART_BLOCKS)
        s = n_blocks / SM90_TAIL_MIN_PART_BLOCKS;
    if (s > SM90_TAIL_MAX_PARTS)
        s = SM90_TAIL_MAX_PARTS;
    *first = s >= 2 ? tiles - r : tiles;
    *splits = s >= 2 ? s : 1;
}

/* Bytes of the tail split's records for PROBLEM's sizes (a plan's maxima
** bound every call's) under CONFIG on SMS SMs: r * splits records with
** r * splits <= SMS, splits <= SM90_TAIL_MAX_PARTS and r < min(tiles,
** SMS) -- none when a tile's keys cannot make two parts; 0 unless
** splits = 0. */
static inline size_t sm90_tail_bytes(const fa4_problem *problem, const fa4_config *config,
                                     int sms)
{
    long long tiles, records;

    if (config->family != FA4_FAMILY_SM90 || config->splits != 0 || sms < 2 ||
        ((long long)problem->seqlen_k + config->bn - 1) / config->bn <
            2 * SM90_TAIL_MIN_PART_BLOCKS)
        return 0;
    tiles = ((long long)problem->seqlen_q + config->bm - 1) / config->bm *
            problem->heads_q * problem->batch;
    records = tiles < sms - 1 ? tiles : sms - 1;
    records = SM90_TAIL_MAX_PARTS * records < sms ? SM90_TAIL_MAX_PARTS * records : sms;
    return (size_t)records * config->bm * (problem_head_dim_v(problem) + 1) * 4;
}

/* The workspace a call of PROBLEM's sizes needs under CONFIG on SMS SMs
** (layout above); 0 when it needs no records and no V^T. */
size_t launch_sm90_workspace(const fa4_problem *problem, const fa4_config *config, int sms);

#endif
