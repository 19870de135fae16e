// Throughput of MUFU and conversion ops, scalar vs packed, per SM clock.
#include <cstdio>
#include <cstdint>
#define ITER 1024
#define CH 8
#define K(name, T, INIT, BODY) \
__global__ void name(float *out, long long *cyc) { \
  T v[CH]; \
  for (int c = 0; c < CH; c++) { INIT; } \
  __syncthreads(); long long t0 = clock64(); \
  for (int i = 0; i < ITER; i++) { \
    _Pragma("unroll") for (int c = 0; c < CH; c++) { BODY; } } \
  __syncthreads(); long long t1 = clock64(); \
  float s = 0; for (int c = 0; c < CH; c++) s += (float)(*(uint32_t*)&v[c] & 1); \
  out[blockIdx.x * blockDim.x + threadIdx.x] = s; \
  if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0; }

K(k_ex2_f32, float, v[c] = -0.001f * (threadIdx.x + c),
  asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(v[c])))
K(k_tanh_f32, float, v[c] = 0.001f * (threadIdx.x + c),
  asm volatile("tanh.approx.f32 %0, %0;" : "+f"(v[c])))
K(k_ex2_f16x2, uint32_t, v[c] = 0x3c003c00u + c,
  asm volatile("ex2.approx.f16x2 %0, %0;" : "+r"(v[c])))
K(k_tanh_f16x2, uint32_t, v[c] = 0x3c003c00u + c,
  asm volatile("tanh.approx.f16x2 %0, %0;" : "+r"(v[c])))
K(k_tanh_f16, uint16_t, v[c] = 0x3c00u + c,
  asm volatile("tanh.approx.f16 %0, %0;" : "+h"(v[c])))
K(k_tanh_bf16x2, uint32_t, v[c] = 0x3f803f80u + c,
  asm volatile("tanh.approx.bf16x2 %0, %0;" : "+r"(v[c])))
K(k_ex2_bf16x2, uint32_t, v[c] = 0x3f803f80u + c,
  asm volatile("ex2.approx.ftz.bf16x2 %0, %0;" : "+r"(v[c])))
K(k_cvt_f16x2_f32, uint32_t, v[c] = 0x3f800000u + c,
  asm volatile("{ .reg .f32 a; mov.b32 a, %0; cvt.rn.f16x2.f32 %0, a, a; }" : "+r"(v[c])))
K(k_cvt_f32_f16, uint32_t, v[c] = 0x3c00u + c,
  asm volatile("{ .reg .f32 a; .reg .b16 h; mov.b32 {h, _}, %0; cvt.f32.f16 a, h; mov.b32 %0, a; }" : "+r"(v[c])))
K(k_hfma2, uint32_t, v[c] = 0x3c003c00u + c,
  asm volatile("fma.rn.f16x2 %0, %0, %0, %0;" : "+r"(v[c])))
K(k_ffma, float, v[c] = 0.5f + c,
  asm volatile("fma.rn.f32 %0, %0, %0, %0;" : "+f"(v[c])))
K(k_e4m3_f16x2, uint32_t, v[c] = 0x3c003c00u + c,
  asm volatile("{ .reg .b16 q; cvt.rn.satfinite.e4m3x2.f16x2 q, %0; cvt.rn.f16x2.e4m3x2 %0, q; }" : "+r"(v[c])))
K(k_e4m3_f32, uint32_t, v[c] = 0x3f800000u + c,
  asm volatile("{ .reg .b16 q; .reg .f32 a; mov.b32 a, %0; cvt.rn.satfinite.e4m3x2.f32 q, a, a; cvt.u32.u16 %0, q; }" : "+r"(v[c])))

typedef void (*kfn)(float *, long long *);
int main() {
  struct { const char *n; kfn f; int per; } ks[] = {
    {"ex2.f32", k_ex2_f32, 1}, {"tanh.f32", k_tanh_f32, 1},
    {"ex2.f16x2", k_ex2_f16x2, 2}, {"tanh.f16x2", k_tanh_f16x2, 2},
    {"tanh.f16", k_tanh_f16, 1},
    {"tanh.bf16x2", k_tanh_bf16x2, 2}, {"ex2.bf16x2", k_ex2_bf16x2, 2},
    {"cvt.f16x2.f32", k_cvt_f16x2_f32, 2}, {"cvt.f32.f16", k_cvt_f32_f16, 1},
    {"hfma2", k_hfma2, 2}, {"ffma", k_ffma, 1},
    {"e4m3<->f16x2 pair", k_e4m3_f16x2, 2}, {"e4m3x2.f32+u16", k_e4m3_f32, 2},
  };
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float *out; long long *cyc; cudaMalloc(&out, sms * 1024 * 4); cudaMallocManaged(&cyc, sms * 8);
  for (auto &k : ks) {
    for (int rep = 0; rep < 3; rep++) {
      k.f<<<sms, 1024>>>(out, cyc);
      cudaError_t e = cudaDeviceSynchronize();
      if (e) { printf("%s: %s\n", k.n, cudaGetErrorString(e)); return 1; }
    }
    long long mx = 0; for (int b = 0; b < sms; b++) if (cyc[b] > mx) mx = cyc[b];
    double instr = 1024.0 * CH * ITER / mx;
    printf("%-20s %6.2f instr/clk/SM  %6.2f results/clk/SM\n", k.n, instr, instr * k.per);
  }
  return 0;
}
