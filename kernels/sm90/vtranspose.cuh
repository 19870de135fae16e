/*
** vtranspose.cuh -- the V^T copy of the fp8 path, launched before fa4_fwd
** in the same stream (lib/launch_sm90.c).
**
** 8-bit wgmma has no transposing B operand: B must be K-major, so P V
** needs V with keys contiguous.  fa4_v_transpose writes V (any strides,
** read through the same address layer as fa4_fwd's K: dense, varlen or
** paged, seqlen.cuh) to the plan's workspace as a dense V^T [batch,
** heads_kv, dv, skp], each 32-key group in the order P's registers give
** their k positions (mainloop.cuh, convert_p): position 4q + i of each 16
** holds key 2q + i (i < 2) or 2q + 6 + i (i >= 2).
**
** Column c of a sequence belongs to key block n = c / BN and holds the
** key that P's column c - n BN stands for: key kv_load_row(n) + c - n BN.
** That is key c, except in a varlen sequence's last block, which
** fa4_fwd loads from earlier keys so that it ends at the sequence's last
** (seqlen.cuh): there V^T repeats those keys, so fa4_fwd reads every
** block of V^T at column n BN whatever its K rows were.  Columns of no
** key (past the sequence, or before its first key in a sequence shorter
** than a block) are written as zeros: their P is 0, and a zero keeps a
** NaN in the caller's padding or spare cache rows out of P V.  Columns
** from the sequence's last block on are not written (fa4_fwd never reads
** them; a dense batch writes all skp).  skp (lib/launch_sm90.h,
** sm90_vt_cols) covers every block of the longest sequence.
** Memory bound: one read and one write of V, about 2 x V's bytes / 3 TB/s
** (H100, 32 MB of V: 19 us, 70% of DRAM bandwidth; bench/NOTES.md, sm90 v23).
*/
#ifndef FA4_SM90_VTRANSPOSE_CUH
#define FA4_SM90_VTRANSPOSE_CUH

/* FA4_VT_KEYS (from the host, lib/launch_sm90.h): keys per copy block, and
 * skp's multiple; FA4_VT_BLOCKS: copy blocks per CTA. */
#if FA4_VT_KEYS % 16 != 0 || FA4_VT_KEYS < 16 || FA4_VT_BLOCKS < 1
#error "FA4_VT_KEYS: a multiple of 16 keys, FA4_VT_BLOCKS at least 1, from the host"
#endif
static_assert(FA4_BN % FA4_VT_KEYS == 0,
              "sm90 fp8: a V^T copy block lies inside one key block (its keys are consecutive)");

struct __align__(16) fa4_u32x4 { /* one 16-byte load or store */
    u32 w[4];
};

/* Element offset in V of key J's row (head 0) of sequence SQ, batch entry
 * B: the layout fa4_fwd's K and V maps read (seqlen.cuh). */
FA4_DEV long long vt_src_row(const fa4_params &p FA4_SERVING_PARAM, const fa4_seq &sq, int b,
                             int j)
{
#if FA4_PAGED
    int page, row;
    page_box(sq, (const int *)sv.block_table + (long long)b * sv.block_table_stride,
             sv.page_shift, j, &page, &row);
    return (long long)page * p.v_batch_stride + (long long)row * p.v_row_stride;
#else
    return (long long)sq.batch * p.v_batch_stride + (long long)(sq.k_row0 + j) * p.v_row_stride;
#endif
}

/* Grid (ceil(skp / (FA4_VT_KEYS FA4_VT_BLOCKS)), heads_kv, batch), 256
 * threads; V^T at VT.  A CTA copies FA4_VT_BLOCKS consecutive blocks of
 * FA4_VT_KEYS keys, every load of them issued before the first store, and
 * writes them with all its threads: with one 4 KB block per CTA the copy
 * waited on memory latency (H100: 40% of DRAM bandwidth, 37 us for 32 MB),
 * and with the writes on a quarter of the threads the CTAs stayed resident
 * half-idle (39% occupancy, 69 us). */
extern "C" __global__ void __launch_bounds__(256)
fa4_v_transpose(const __grid_constant__ fa4_params p, unsigned long long vt, int skp
#if FA4_VARLEN || FA4_PAGED
                , const __grid_constant__ fa4_serving sv
#endif
                )
{
    /* The tile: 16-key groups (kg) of 16 rows of FA4_DV bytes.  Rows are
       FA4_DV + 16 bytes apart and groups a further 16: a warp of the output
       phase reads 4 words of one row from each of 8 groups, which the two
       pads put in 32 different banks. */
    constexpr int row_bytes = FA4_DV + 16, group_bytes = 16 * row_bytes + 16;
    constexpr int groups = FA4_VT_BLOCKS * FA4_VT_KEYS / 16; /* per CTA */
    __shared__ __align__(16) u8 tile[groups * group_bytes];
    const int h = blockIdx.y, b = blockIdx.z;
    const fa4_seq sq = seq_of(p FA4_SERVING_ARG, b);
    constexpr int units = FA4_DV / 16;                 /* 16-B units per row (FA4_DV % 16 == 0) */
    constexpr int per_block = FA4_VT_KEYS * units;     /* 16-B units per block */
    constexpr int loads = (per_block + 255) / 256;     /* per thread per block */
#if FA4_VARLEN || FA4_PAGED
    const int cols = min((sq.len_k + FA4_BN - 1) / FA4_BN * FA4_BN, skp); /* past it: never read */
#else
    const int cols = skp;
#endif
    const int key0 = blockIdx.x * FA4_VT_BLOCKS * FA4_VT_KEYS; /* this CTA's first column */
    const u8 *src = (const u8 *)p.v + (long long)h * p.v_head_stride;
    fa4_u32x4 x[FA4_VT_BLOCKS][loads];

#pragma unroll
    for (int blk = 0; blk < FA4_VT_BLOCKS; ++blk) {
        const int k0 = key0 + blk * FA4_VT_KEYS;
        /* This block's columns are keys j0, j0 + 1, ... (file comment). */
        const int n = k0 / FA4_BN;
        const int j0 = kv_load_row(sq, n) + k0 - n * FA4_BN;
#pragma unroll
        for (int l = 0; l < loads; ++l) {
            const int i = threadIdx.x + 256 * l, r = i / units, u = i % units, j = j0 + r;
            x[blk][l] = fa4_u32x4{{0u, 0u, 0u, 0u}};
            if (k0 < cols && i < per_block && j >= 0 && j < sq.len_k)
                x[blk][l] = *(const fa4_u32x4 *)(src + vt_src_row(p FA4_SERVING_ARG, sq, b, j) +
                                                 16 * u);
        }
    }
#pragma unroll
    for (int blk = 0; blk < FA4_VT_BLOCKS; ++blk)
#pragma unroll
        for (int l = 0; l < loads; ++l) {
            const int i = threadIdx.x + 256 * l, r = blk * FA4_VT_KEYS + i / units;
            if (i < per_block)
                *(fa4_u32x4 *)&tile[(r / 16) * group_bytes + (r % 16) * row_bytes +
                                    16 * (i % units)] = x[blk][l];
        }
    __syncthreads();
    /* Output: a thread takes one 16-key group KG of 4 dims (X4 .. X4 + 3),
       and neighbouring threads neighbouring groups, so a warp writes 128
       contiguous bytes of each of 4 rows of V^T.  Positions 4q .. 4q + 3
       of a group hold its keys 2q, 2q + 1, 2q + 8 and 2q + 9 (file
       comment): one 32-bit read of each of those rows gives a 4 x 4 byte
       block, which four __byte_perm pairs turn into one word per dim. */
    constexpr int quads = FA4_DV / 4;
    u8 *dst = (u8 *)vt + (((long long)b * gridDim.y + h) * FA4_DV) * skp + key0;
    for (int i = threadIdx.x; i < groups * quads; i += blockDim.x) {
        const int kg = i % groups, x4 = 4 * (i / groups);
        if (key0 + 16 * kg >= cols)
            continue; /* past skp (the grid's last CTA), or never read */
        const u8 *g = tile + kg * group_bytes + x4;
        fa4_u32x4 out[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const u32 r0 = *(const u32 *)(g + (2 * q) * row_bytes);
            const u32 r1 = *(const u32 *)(g + (2 * q + 1) * row_bytes);
            const u32 r2 = *(const u32 *)(g + (2 * q + 8) * row_bytes);
            const u32 r3 = *(const u32 *)(g + (2 * q + 9) * row_bytes);
            const u32 lo01 = __byte_perm(r0, r1, 0x5140), hi01 = __byte_perm(r0, r1, 0x7362);
            const u32 lo23 = __byte_perm(r2, r3, 0x5140), hi23 = __byte_perm(r2, r3, 0x7362);
            out[0].w[q] = __byte_perm(lo01, lo23, 0x5410); /* dim x4: keys 2q, 2q+1, 2q+8, 2q+9 */
            out[1].w[q] = __byte_perm(lo01, lo23, 0x7632);
            out[2].w[q] = __byte_perm(hi01, hi23, 0x5410);
            out[3].w[q] = __byte_perm(hi01, hi23, 0x7632);
        }
#pragma unroll
        for (int d = 0; d < 4; ++d)
            *(fa4_u32x4 *)(dst + (long long)(x4 + d) * skp + 16 * kg) = out[d];
    }
}

#endif
