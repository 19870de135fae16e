/*
** vtranspose.cuh -- the V^T copy of the fp8 path, launched before fa4_fwd
** in the same stream (lib/launch_sm90.c).
**
** 8-bit wgmma has no transposing B operand: B must be K-major, so P V
** needs V with keys contiguous.  fa4_v_transpose writes V [batch, seqlen_k,
** heads_kv, dv] (any strides) to the plan's workspace as V^T [batch,
** heads_kv, dv, skp], skp = seqlen_k rounded up to FA4_VT_KEYS, each
** 32-key group in the order P's registers give their k positions
** (mainloop.cuh, convert_p): position 4q + i of each 16 holds key
** 2q + i (i < 2) or 2q + 6 + i (i >= 2).  Keys past seqlen_k are written
** as zeros (their P is 0; a zero keeps a NaN in the caller's padding out).
** Memory bound: one read and one write of V, about 2 x V's bytes / 3 TB/s.
*/
#ifndef FA4_SM90_VTRANSPOSE_CUH
#define FA4_SM90_VTRANSPOSE_CUH

/* FA4_VT_KEYS (from the host, lib/launch_sm90.h): keys per CTA, and skp's
 * multiple. */
#if FA4_VT_KEYS % 16 != 0 || FA4_VT_KEYS < 16
#error "FA4_VT_KEYS: a multiple of 16 keys, from the host"
#endif

struct __align__(16) fa4_u32x4 { /* one 16-byte load or store */
    u32 w[4];
};

/* The key (0..31) that position P (0..31) of a 32-key group holds. */
FA4_DEV int vt_key_of(int p)
{
    const int r = p % 16, q = r / 4, i = r % 4;
    return (p / 16) * 16 + 2 * q + (i < 2 ? i : 6 + i);
}

/* Grid (skp / FA4_VT_KEYS, heads_kv, batch), 256 threads. */
extern "C" __global__ void __launch_bounds__(256)
fa4_v_transpose(const u8 *__restrict__ v, long long batch_stride, long long row_stride,
                long long head_stride, u8 *__restrict__ vt, int seqlen_k, int skp)
{
    /* +16 B per row: the column reads below walk rows; the pad spreads them over banks. */
    __shared__ __align__(16) u8 tile[FA4_VT_KEYS][FA4_DV + 16];
    const int k0 = blockIdx.x * FA4_VT_KEYS, h = blockIdx.y, b = blockIdx.z;
    const u8 *src = v + b * batch_stride + h * head_stride;
    constexpr int units = FA4_DV / 16; /* 16-B units per row (FA4_DV % 16 == 0) */

    for (int i = threadIdx.x; i < FA4_VT_KEYS * units; i += blockDim.x) {
        const int r = i / units, u = i % units;
        fa4_u32x4 x = {{0u, 0u, 0u, 0u}};
        if (k0 + r < seqlen_k)
            x = *(const fa4_u32x4 *)(src + (long long)(k0 + r) * row_stride + 16 * u);
        *(fa4_u32x4 *)&tile[r][16 * u] = x;
    }
    __syncthreads();
    /* Output row x (one dim) of this block: FA4_VT_KEYS bytes, 16 per thread. */
    u8 *dst = vt + (((long long)b * gridDim.y + h) * FA4_DV) * skp + k0;
    for (int i = threadIdx.x; i < FA4_DV * (FA4_VT_KEYS / 16); i += blockDim.x) {
        const int x = i / (FA4_VT_KEYS / 16), p0 = 16 * (i % (FA4_VT_KEYS / 16));
        fa4_u32x4 out;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            u32 word = 0;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int p = p0 + 4 * j + e;
                word |= (u32)tile[(p / 32) * 32 + vt_key_of(p % 32)][x] << (8 * e);
            }
            out.w[j] = word;
        }
        *(fa4_u32x4 *)(dst + (long long)x * skp + p0) = out;
    }
}

#endif
