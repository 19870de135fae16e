/*
** ptx.cuh -- PTX wrappers for the sm80 family (mma.sync, ldmatrix,
** cp.async): one small function per instruction, named after it.  The only
** place besides ptx_sm90.cuh with inline asm.  Every instruction here runs
** on sm_80 and later, except cvt_rn_f16x2_e4m3x2 (sm_89 and later, compiled
** only there).
*/
#ifndef FA4_KERNEL_PTX_CUH
#define FA4_KERNEL_PTX_CUH

#include "common/types.cuh"

#define FA4_DEV static __device__ __forceinline__

/* Shared-memory address of PTR as the 32-bit value ldmatrix/cp.async take. */
FA4_DEV u32 cvta_to_shared_u32(const void *ptr)
{
    u32 a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\n"
        : "=r"(a) : "l"(ptr));
    return a;
}

/* D = A*B + C, m16n8k16, bf16 inputs, f32 accumulate (D may alias C).
 * A: 4 regs (row g / g+8, k pairs 2q and 2q+8), B: 2 regs, C/D: 4 f32. */
FA4_DEV void mma_m16n8k16_bf16(float d[4], const u32 a[4], u32 b0, u32 b1)
{
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* D = A*B + C, m16n8k16, fp16 inputs, f32 accumulate. */
FA4_DEV void mma_m16n8k16_f16(float d[4], const u32 a[4], u32 b0, u32 b1)
{
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Four 8x8 b16 matrices; lane l gives the row address of matrix l/8. */
FA4_DEV void ldmatrix_x4(u32 r[4], u32 smem_addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr));
}

/* As ldmatrix_x4, each matrix transposed (V as the col-major B operand). */
FA4_DEV void ldmatrix_x4_trans(u32 r[4], u32 smem_addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr));
}

/* Copy 16 B global -> shared, bypassing L1 (cg).  VALID 0: src-size 0, so
 * nothing is read and the 16 B are zero-filled (out-of-bounds rows). */
FA4_DEV void cp_async_cg_16(u32 smem_addr, const void *gmem, bool valid)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(smem_addr), "l"(gmem), "r"(valid ? 16 : 0)
                 : "memory");
}

/* Close the current group of cp.async (an empty group is fine). */
FA4_DEV void cp_async_commit_group(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Wait until at most N of the committed groups are still in flight. */
template <int N>
FA4_DEV void cp_async_wait_group(void)
{
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}

/* Pack two f32 into bf16x2: LO in bits 0-15, HI in 16-31.  The instruction
 * puts its first source in the upper half (KERNEL_NOTES.md). */
FA4_DEV u32 cvt_rn_bf16x2_f32(float lo, float hi)
{
    u32 d;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
    return d;
}

/* Pack two f32 into f16x2: LO in bits 0-15, HI in 16-31. */
FA4_DEV u32 cvt_rn_f16x2_f32(float lo, float hi)
{
    u32 d;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
    return d;
}

/* Bytes of {B, A} (A bytes 0-3, B 4-7) picked by the 4 nibbles of SEL:
 * result byte i is source byte (SEL >> 4i) & 7. */
FA4_DEV u32 prmt_b32(u32 a, u32 b, u32 sel)
{
    u32 d;
    asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
    return d;
}

#if __CUDA_ARCH__ >= 890
/* Two e4m3 (bits 0-7 and 8-15 of X) to f16x2 (bits 0-15 and 16-31),
 * exactly: every e4m3 value is an fp16 value.  sm_89 and later. */
FA4_DEV u32 cvt_rn_f16x2_e4m3x2(u32 x)
{
    u32 d;
    asm("{ .reg .b16 lo, hi;\n"
        "mov.b32 {lo, hi}, %1;\n"
        "cvt.rn.f16x2.e4m3x2 %0, lo; }\n" : "=r"(d) : "r"(x));
    return d;
}
#endif

/* The f16 in bits 0-15 of X as f32 (exact). */
FA4_DEV float cvt_f32_f16_lo(u32 x)
{
    float f;
    asm("{ .reg .b16 lo, hi;\n"
        "mov.b32 {lo, hi}, %1;\n"
        "cvt.f32.f16 %0, lo; }\n" : "=f"(f) : "r"(x));
    return f;
}

/* 2^x on the MUFU unit (ftz: subnormal results flush to 0; 2^-inf = 0). */
FA4_DEV float ex2_approx_ftz_f32(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* tanh(x) on the MUFU unit (softcapping; max relative error ~2^-11). */
FA4_DEV float tanh_approx_f32(float x)
{
    float r;
    asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

/* log2(x) on the MUFU unit (log2(0) = -inf). */
FA4_DEV float lg2_approx_ftz_f32(float x)
{
    float y;
    asm("lg2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* threadIdx.x, read afresh: two reads are never merged nor hoisted, so an
 * index derived from one is recomputed where it is used instead of held
 * in a register through a loop that needs every register it can get. */
FA4_DEV int tid_x_fresh(void)
{
    int t;
    asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(t));
    return t;
}

/* Butterfly shuffle of a f32 across the full warp. */
FA4_DEV float shfl_xor_sync_f32(float v, int lane_mask)
{
    float r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;\n"
                 : "=f"(r) : "f"(v), "r"(lane_mask));
    return r;
}

/* 16-byte shared-memory load / global store (vectorised epilogue). */
FA4_DEV void ld_shared_v4_u32(u32 r[4], u32 smem_addr)
{
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr));
}

FA4_DEV void st_shared_u32(u32 smem_addr, u32 v)
{
    asm volatile("st.shared.u32 [%0], %1;\n" :: "r"(smem_addr), "r"(v) : "memory");
}

FA4_DEV void st_global_v4_u32(void *gmem, const u32 r[4])
{
    asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};\n"
                 :: "l"(gmem), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
}

#endif
