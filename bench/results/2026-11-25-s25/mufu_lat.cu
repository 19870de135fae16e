// Softmax-shaped MUFU loop: per warp, 96 scores a block, each FFMA + ex2 + a
// row-sum FADD (4 chains), as the fp8 main loop.  Cycles per ex2 per warp,
// for 1..4 warps per SM sub-partition (blockDim = 128 * W, one CTA per SM).
#include <cstdio>
__device__ __forceinline__ float ex2(float x) { float y; asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
template <int SUMS>
__global__ void k(float *out, long long *cyc, int iters, float a, float b)
{
    float s[96];
    for (int i = 0; i < 96; ++i) s[i] = (threadIdx.x + i) * 1e-3f;
    float acc[4] = {0, 0, 0, 0};
    __syncthreads();
    long long t0 = clock64();
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int i = 0; i < 96; ++i) {
            s[i] = ex2(fmaf(s[i], a, -b));
            if (SUMS) acc[i & 3] += s[i];
        }
        if (!SUMS) acc[0] += s[0];
    }
    long long t1 = clock64();
    float r = acc[0] + acc[1] + acc[2] + acc[3];
    for (int i = 0; i < 96; ++i) r += s[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = r;
    if (threadIdx.x % 32 == 0) cyc[blockIdx.x * 32 + threadIdx.x / 32] = t1 - t0;
}
int main()
{
    float *out; long long *cyc, h[32 * 132];
    cudaMalloc(&out, 132 * 512 * 4); cudaMalloc(&cyc, 132 * 32 * 8);
    const int iters = 2000;
    for (int sums = 0; sums < 2; ++sums)
        for (int w = 1; w <= 4; ++w) {
            if (sums) k<1><<<132, 128 * w>>>(out, cyc, iters, 0.5f, 0.1f);
            else k<0><<<132, 128 * w>>>(out, cyc, iters, 0.5f, 0.1f);
            cudaDeviceSynchronize();
            cudaMemcpy(h, cyc, sizeof h, cudaMemcpyDeviceToHost);
            double m = 0; for (int i = 0; i < 4 * w; ++i) m += h[i]; m /= 4 * w;
            printf("sums=%d warps/SMSP=%d: %.1f cycles per ex2 per warp, %.2f ex2/clk/SM\n", sums, w,
                   m / (iters * 96.0), 4.0 * w * 32 * iters * 96 / m);
        }
    return 0;
}
