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
** Memory bound: one read and one write of V, about 2 x V's bytes / 3 TB/s.
*/
#ifndef FA4_SM90_VTRANSPOSE_CUH
#define FA4_SM90_VTRANSPOSE_CUH

/* FA4_VT_KEYS (from the host, lib/launch_sm90.h): keys per CTA, and skp's
 * multiple. */
#if FA4_VT_KEYS % 16 != 0 || FA4_VT_KEYS < 16
#error "FA4_VT_KEYS: a multiple of 16 keys, from the host"
#endif
static_assert(FA4_BN % FA4_VT_KEYS == 0,
              "sm90 fp8: a V^T copy block lies inside one key block (its keys are consecutive)");

struct __align__(16) fa4_u32x4 { /* one 16-byte load or store */
    u32 w[4];
};

/* The key (0..31) that position P (0..31) of a 32-key group holds. */
FA4_DEV int vt_key_of(int p)
{
    const int r = p % 16, q = r / 4, i = r % 4;
    return (p / 16) * 16 + 2 * q + (i < 2 ? i : 6 + i);
}

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

/* Grid (skp / FA4_VT_KEYS, heads_kv, batch), 256 threads; V^T at VT. */
extern "C" __global__ void __launch_bounds__(256)
fa4_v_transpose(const __grid_constant__ fa4_params p, unsigned long long vt, int skp
#if FA4_VARLEN || FA4_PAGED
                , const __grid_constant__ fa4_serving sv
#endif
                )
{
    /* +16 B per row: the column reads below walk rows; the pad spreads them over banks. */
    __shared__ __align__(16) u8 tile[FA4_VT_KEYS][FA4_DV + 16];
    const int k0 = blockIdx.x * FA4_VT_KEYS, h = blockIdx.y, b = blockIdx.z;
    const fa4_seq sq = seq_of(p FA4_SERVING_ARG, b);
    constexpr int units = FA4_DV / 16; /* 16-B units per row (FA4_DV % 16 == 0) */

#if FA4_VARLEN || FA4_PAGED
    if (k0 >= (sq.len_k + FA4_BN - 1) / FA4_BN * FA4_BN)
        return; /* past the sequence's last key block: never read */
#endif
    /* This block's columns are keys j0, j0 + 1, ... (file comment). */
    const int n = k0 / FA4_BN;
    const int j0 = kv_load_row(sq, n) + k0 - n * FA4_BN;
    const u8 *src = (const u8 *)p.v + (long long)h * p.v_head_stride;

    for (int i = threadIdx.x; i < FA4_VT_KEYS * units; i += blockDim.x) {
        const int r = i / units, u = i % units, j = j0 + r;
        fa4_u32x4 x = {{0u, 0u, 0u, 0u}};
        if (j >= 0 && j < sq.len_k)
            x = *(const fa4_u32x4 *)(src + vt_src_row(p FA4_SERVING_ARG, sq, b, j) + 16 * u);
        *(fa4_u32x4 *)&tile[r][16 * u] = x;
    }
    __syncthreads();
    /* Output row x (one dim) of this block: FA4_VT_KEYS bytes, 16 per thread. */
    u8 *dst = (u8 *)vt + (((long long)b * gridDim.y + h) * FA4_DV) * skp + k0;
    for (int i = threadIdx.x; i < FA4_DV * (FA4_VT_KEYS / 16); i += blockDim.x) {
        const int x = i / (FA4_VT_KEYS / 16), p0 = 16 * (i % (FA4_VT_KEYS / 16));
        fa4_u32x4 out;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            u32 word = 0;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int q = p0 + 4 * j + e;
                word |= (u32)tile[(q / 32) * 32 + vt_key_of(q % 32)][x] << (8 * e);
            }
            out.w[j] = word;
        }
        *(fa4_u32x4 *)(dst + (long long)x * skp + p0) = out;
    }
}

#endif
