// MUFU throughput probe: per-SM results/clock of tanh/ex2 in f32 and packed 16-bit forms.
#include <cstdio>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define N_ITER 4096
#define CH 8
__device__ __forceinline__ float tanh_f32(float x){float r;asm volatile("tanh.approx.f32 %0,%1;":"=f"(r):"f"(x));return r;}
__device__ __forceinline__ float ex2_f32(float x){float r;asm volatile("ex2.approx.ftz.f32 %0,%1;":"=f"(r):"f"(x));return r;}
__device__ __forceinline__ unsigned tanh_h2(unsigned x){unsigned r;asm volatile("tanh.approx.f16x2 %0,%1;":"=r"(r):"r"(x));return r;}
__device__ __forceinline__ unsigned tanh_b2(unsigned x){unsigned r;asm volatile("tanh.approx.bf16x2 %0,%1;":"=r"(r):"r"(x));return r;}
__device__ __forceinline__ unsigned ex2_h2(unsigned x){unsigned r;asm volatile("ex2.approx.f16x2 %0,%1;":"=r"(r):"r"(x));return r;}
__device__ __forceinline__ unsigned ex2_b2(unsigned x){unsigned r;asm volatile("ex2.approx.ftz.bf16x2 %0,%1;":"=r"(r):"r"(x));return r;}

template<int K> __global__ void k32(float *out, long long *clk){
  float v[CH]; for(int i=0;i<CH;i++) v[i]=0.001f*(threadIdx.x+i);
  __syncthreads(); long long t0=clock64();
  for(int it=0;it<N_ITER;it++){
    #pragma unroll
    for(int i=0;i<CH;i++) v[i] = K==0? tanh_f32(v[i]) : ex2_f32(v[i])-1.0f;
  }
  __syncthreads(); long long t1=clock64();
  float s=0; for(int i=0;i<CH;i++) s+=v[i]; out[blockIdx.x*blockDim.x+threadIdx.x]=s;
  if(threadIdx.x==0) clk[blockIdx.x]=t1-t0;
}
template<int K> __global__ void k16(float *out, long long *clk){
  unsigned v[CH]; for(int i=0;i<CH;i++) v[i]=0x1c001c00u+threadIdx.x+i;
  __syncthreads(); long long t0=clock64();
  for(int it=0;it<N_ITER;it++){
    #pragma unroll
    for(int i=0;i<CH;i++) v[i] = K==0? tanh_h2(v[i]) : K==1? tanh_b2(v[i]) : K==2? ex2_h2(v[i])^0x3c003c00u : ex2_b2(v[i])^0x3f803f80u;
  }
  __syncthreads(); long long t1=clock64();
  unsigned s=0; for(int i=0;i<CH;i++) s^=v[i]; out[blockIdx.x*blockDim.x+threadIdx.x]=(float)s;
  if(threadIdx.x==0) clk[blockIdx.x]=t1-t0;
}
template<class F> void run(const char*name, F f, int per_op){
  float *o; long long *c; cudaMalloc(&o, 132*1024*4); cudaMalloc(&c, 132*8);
  f<<<132,1024>>>(o,c); cudaDeviceSynchronize();
  f<<<132,1024>>>(o,c); cudaDeviceSynchronize();
  long long h[132]; cudaMemcpy(h,c,sizeof h,cudaMemcpyDeviceToHost);
  double cy=0; for(int i=0;i<132;i++) cy+=h[i]; cy/=132;
  double res = 1024.0*N_ITER*CH*per_op;
  printf("%-12s %8.0f clk  %6.2f results/clk/SM  (%s)\n", name, cy, res/cy, cudaGetErrorString(cudaGetLastError()));
  cudaFree(o); cudaFree(c);
}
int main(){
  run("tanh.f32", k32<0>, 1); run("ex2.f32", k32<1>, 1);
  run("tanh.f16x2", k16<0>, 2); run("tanh.bf16x2", k16<1>, 2);
  run("ex2.f16x2", k16<2>, 2); run("ex2.bf16x2", k16<3>, 2);
  return 0;
}
