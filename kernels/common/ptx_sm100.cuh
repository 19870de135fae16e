/*
** ptx_sm100.cuh -- PTX wrappers for the sm100 family (sm_100a): tensor
** memory (tcgen05.alloc/dealloc/ld/st/fence), the tcgen05.mma kind::f16
** and kind::f8f6f4 (e4m3) with their shared-memory and instruction
** descriptors, tcgen05.commit to an mbarrier, mbarriers, TMA loads, the
** TMA store of O and the f32 -> e4m3 conversion of P.  One small function
** per instruction.
**
** UNVERIFIED ON HARDWARE: nothing here has run on an sm_100 GPU (we have
** H100s).  It compiles with NVRTC 13.0 for sm_100a; the descriptor bit
** layouts follow the PTX ISA 8.7+ tables ("Instruction descriptor",
** "Shared memory descriptor" of tcgen05) and must be checked by a probe
** like probes/hopper-ptx/ before any result is trusted.
**
** CTA pairs: every tcgen05 instruction of a kernel names one cta_group
** (PTX ISA, tcgen05.alloc: "all tcgen05 instructions within a kernel must
** specify the same value"), so the wrappers take it from FA4_CTA_GROUP
** (budget_defines(): 1, or 2 for the pair mode); a file that defines none
** gets cta_group::1.  The cluster wrappers (rank, mapa, remote arrive,
** cluster barrier, the pair's TMA form) serve the pair mode.
**
** The conversions and MUFU wrappers shared with sm80 come from ptx.cuh.
*/
#ifndef FA4_KERNEL_PTX_SM100_CUH
#define FA4_KERNEL_PTX_SM100_CUH

#include "common/types.cuh"
#include "common/ptx.cuh"

#ifndef FA4_DEV
#define FA4_DEV static __device__ __forceinline__
#endif

#ifndef FA4_CTA_GROUP
#define FA4_CTA_GROUP 1
#endif
#if FA4_CTA_GROUP == 2
#define SM100_CG "cta_group::2"
#elif FA4_CTA_GROUP == 1
#define SM100_CG "cta_group::1"
#else
#error "FA4_CTA_GROUP: 1 (one CTA per MMA) or 2 (a CTA pair)"
#endif

/* CUtensorMap as the kernel sees it: 128 opaque bytes, 128-aligned, taken
 * as a const __grid_constant__ parameter (KERNEL_NOTES.md). */
#ifndef FA4_TMA_MAP_DEFINED
#define FA4_TMA_MAP_DEFINED
struct alignas(128) fa4_tma_map {
    unsigned long long opaque[16];
};
#endif

/* ------------------------------------------------------------ basics */

FA4_DEV u32 smem_u32(const void *ptr)
{
    return (u32)__cvta_generic_to_shared(ptr);
}

/* Warp index, made uniform for the compiler (role branches). */
FA4_DEV int warp_id_uniform(void)
{
    int w = (int)(threadIdx.x / 32);
    return __shfl_sync(0xffffffffu, w, 0);
}

/* 1 in exactly one lane of a fully active warp (elect.sync). */
FA4_DEV u32 elect_one_sync(void)
{
    u32 pred;
    asm volatile("{\n .reg .pred p;\n"
                 " elect.sync _|p, 0xffffffff;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(pred));
    return pred;
}

/* ----------------------------------------------------------- mbarrier */

FA4_DEV void mbarrier_init(u32 bar, u32 count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n"
                 :: "r"(bar), "r"(count) : "memory");
}

/* Make mbarrier.init visible to the async proxy (TMA, tcgen05.commit). */
FA4_DEV void fence_mbarrier_init(void)
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

FA4_DEV void mbarrier_arrive_expect_tx(u32 bar, u32 bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
                 :: "r"(bar), "r"(bytes) : "memory");
}

FA4_DEV void mbarrier_arrive(u32 bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n"
                 :: "r"(bar) : "memory");
}

/* Spin until phase PARITY of BAR has completed. */
FA4_DEV void mbarrier_wait(u32 bar, u32 parity)
{
    asm volatile("{\n .reg .pred done;\n"
                 "WAIT_%=:\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 " @!done bra WAIT_%=;\n}\n"
                 :: "r"(bar), "r"(parity) : "memory");
}

/* Spin until phase PARITY of BAR has completed, acquiring at cluster
** scope: for a barrier the peer CTA's threads arrive on (release.cluster). */
FA4_DEV void mbarrier_wait_cluster(u32 bar, u32 parity)
{
    asm volatile("{\n .reg .pred done;\n"
                 "WAIT_%=:\n"
                 " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
                 " @!done bra WAIT_%=;\n}\n"
                 :: "r"(bar), "r"(parity) : "memory");
}

/* ------------------------------------------------------------ cluster */

/* This CTA's rank in its cluster (%cluster_ctarank). */
FA4_DEV u32 cluster_ctarank(void)
{
    u32 r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

/* The shared::cluster address of the byte at shared::cta address ADDR in
** the CTA of rank RANK (mapa). */
FA4_DEV u32 mapa_shared_cluster(u32 addr, u32 rank)
{
    u32 r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}

/* Arrive once on the mbarrier at shared::cluster address BAR (this CTA's
** or a peer's), releasing this thread's prior writes at cluster scope. */
FA4_DEV void mbarrier_arrive_cluster(u32 bar)
{
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n"
                 :: "r"(bar) : "memory");
}

/* Every thread of every CTA of the cluster: arrive and wait (release /
** acquire at cluster scope).  All threads of each warp execute it. */
FA4_DEV void cluster_sync(void)
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

/* ---------------------------------------------------------------- TMA */

FA4_DEV void prefetch_tensormap(const fa4_tma_map *map)
{
    asm volatile("prefetch.tensormap [%0];\n" :: "l"(map) : "memory");
}

/* 4-D tiled load of one box into DST (this CTA's shared memory);
 * completes tx bytes on BAR.  Out of bounds elements are zero-filled.
 * cta_group::1: BAR is this CTA's (shared::cta address).  cta_group::2:
 * BAR is a shared::cluster address that may lie in either CTA of the
 * pair (the pair mode signals the leader's barrier from both CTAs). */
FA4_DEV void tma_load_4d(u32 dst, const fa4_tma_map *map, u32 bar,
                         int c0, int c1, int c2, int c3)
{
#if FA4_CTA_GROUP == 2
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile"
        ".mbarrier::complete_tx::bytes.cta_group::2 [%0], [%1, {%3, %4, %5, %6}], [%2];\n"
        :: "r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
        : "memory");
#else
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile"
        ".mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];\n"
        :: "r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
        : "memory");
#endif
}

/* ------------------------------------------------------ tensor memory */

/* Allocate NCOLS (power of two >= 32) TMEM columns for this CTA; the
 * address lands in shared memory at DST_SMEM.  Whole warp; cta_group::2:
 * one warp of each CTA of the pair, together, the peer still running. */
template <u32 NCOLS>
FA4_DEV void tcgen05_alloc(u32 dst_smem)
{
    asm volatile("tcgen05.alloc." SM100_CG ".sync.aligned.shared::cta.b32 [%0], %1;\n"
                 :: "r"(dst_smem), "n"(NCOLS) : "memory");
}

/* Let other CTAs on the SM allocate (we allocate once).  Whole warp. */
FA4_DEV void tcgen05_relinquish_alloc_permit(void)
{
    asm volatile("tcgen05.relinquish_alloc_permit." SM100_CG ".sync.aligned;\n"
                 ::: "memory");
}

template <u32 NCOLS>
FA4_DEV void tcgen05_dealloc(u32 taddr)
{
    asm volatile("tcgen05.dealloc." SM100_CG ".sync.aligned.b32 %0, %1;\n"
                 :: "r"(taddr), "n"(NCOLS) : "memory");
}

/* Order tcgen05 work across a thread synchronisation (mbarrier, bar.sync). */
FA4_DEV void tcgen05_fence_before_thread_sync(void)
{
    asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
}

FA4_DEV void tcgen05_fence_after_thread_sync(void)
{
    asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
}

/* Load 16 consecutive 32-bit columns of this thread's lane (warp w reaches
 * lanes 32*(w%4) .. +31; TADDR = lane << 16 | column). */
FA4_DEV void tcgen05_ld_32x32b_x16(u32 r[16], u32 taddr)
{
    asm volatile(
        "tcgen05.ld.sync.aligned.32x32b.x16.b32 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, [%16];\n"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]),
          "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
          "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]),
          "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15])
        : "r"(taddr));
}

/* Store 16 / 8 consecutive 32-bit columns of this thread's lane. */
FA4_DEV void tcgen05_st_32x32b_x16(u32 taddr, const u32 r[16])
{
    asm volatile(
        "tcgen05.st.sync.aligned.32x32b.x16.b32 [%0], "
        "{%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16};\n"
        :: "r"(taddr),
           "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]),
           "r"(r[4]), "r"(r[5]), "r"(r[6]), "r"(r[7]),
           "r"(r[8]), "r"(r[9]), "r"(r[10]), "r"(r[11]),
           "r"(r[12]), "r"(r[13]), "r"(r[14]), "r"(r[15])
        : "memory");
}

FA4_DEV void tcgen05_st_32x32b_x8(u32 taddr, const u32 r[8])
{
    asm volatile(
        "tcgen05.st.sync.aligned.32x32b.x8.b32 [%0], "
        "{%1,%2,%3,%4,%5,%6,%7,%8};\n"
        :: "r"(taddr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]),
           "r"(r[4]), "r"(r[5]), "r"(r[6]), "r"(r[7])
        : "memory");
}

/* Store 4 consecutive 32-bit columns of this thread's lane (fp8 P: 16
 * e4m3 values). */
FA4_DEV void tcgen05_st_32x32b_x4(u32 taddr, const u32 r[4])
{
    asm volatile(
        "tcgen05.st.sync.aligned.32x32b.x4.b32 [%0], {%1,%2,%3,%4};\n"
        :: "r"(taddr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
        : "memory");
}

/* Wait for this thread's outstanding tcgen05.ld / tcgen05.st. */
FA4_DEV void tcgen05_wait_ld(void)
{
    asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
}

FA4_DEV void tcgen05_wait_st(void)
{
    asm volatile("tcgen05.wait::st.sync.aligned;\n" ::: "memory");
}

/* ------------------------------------------------------------ the MMA */

/* Shared-memory descriptor (tcgen05): bits 0-13 start >> 4, 16-29 LBO >> 4,
 * 32-45 SBO >> 4, 46-48 fixed 0b001 (sm100 descriptor version), 49-51 base
 * offset (0: tiles 1024-aligned), 52 LBO mode 0, 61-63 layout: 2 = 128 B
 * swizzle, 4 = 64 B, 6 = 32 B, 0 = none. */
FA4_DEV u64 umma_smem_desc(u32 addr, u32 lbo, u32 sbo, u32 layout)
{
    return (u64)((addr & 0x3FFFFu) >> 4)
         | ((u64)((lbo >> 4) & 0x3FFFu) << 16)
         | ((u64)((sbo >> 4) & 0x3FFFu) << 32)
         | ((u64)1 << 46)
         | ((u64)(layout & 7u) << 61);
}

/* Instruction descriptor of kind::f16 and kind::f8f6f4 (PTX ISA 9.7.16.4.2,
 * "Instruction descriptor", one table for both): bits 4-5 D format (1 =
 * f32), 7-9 A format, 10-12 B format (kind::f16: 0 = f16, 1 = bf16;
 * kind::f8f6f4: UMMA_E4M3, 1 = E5M2), 15 A MN-major, 16 B MN-major (for
 * 8-bit formats too, not the 6- and 4-bit ones), 17-22 N >> 3, 24-28 M >> 4. */
#define UMMA_E4M3 0u
FA4_DEV constexpr u32 umma_idesc(u32 a_fmt, u32 b_fmt, u32 m, u32 n, u32 a_mn, u32 b_mn)
{
    return (1u << 4) | (a_fmt << 7) | (b_fmt << 10) | (a_mn << 15)
         | (b_mn << 16) | ((n >> 3) << 17) | ((m >> 4) << 24);
}

/*
** D[tmem] (+)= A * B[smem] with one thread's tcgen05.mma of KIND; ACCUMULATE
** 0 overwrites D.  A from smem (a descriptor: A_TYPE u64, constraint "l",
** operand %1) or from TMEM (an address: u32, "r", [%1]; 128 lanes x K,
** 16-bit pairs or four e4m3 values per 32-bit column, the lowest k in the
** lowest bits -- for e4m3 read from the ISA's packing of 16-bit pairs,
** unverified).  kind::f8f6f4 takes e4m3 A and B, k32 per instruction (32
** bytes of each K-major row, as kind::f16's k16).  cta_group::2 (one
** thread of the pair): A's rows and D's lanes split between the CTAs (M/2
** each), B's N columns too (N/2 each); every address names the same offset
** in both CTAs.
*/
#define SM100_DEFINE_MMA(NAME, KIND, A_TYPE, A_CON, A_OPERAND)                         \
    FA4_DEV void NAME(u32 d_tmem, A_TYPE a, u64 b_desc, u32 idesc, u32 accumulate)   \
    {                                                                                \
        asm volatile("{\n .reg .pred p;\n setp.ne.u32 p, %4, 0;\n"                   \
                     " tcgen05.mma." SM100_CG ".kind::" KIND " [%0], " A_OPERAND      \
                     ", %2, %3, p;\n}\n"                                               \
                     :: "r"(d_tmem), A_CON(a), "l"(b_desc), "r"(idesc),              \
                        "r"(accumulate)                                              \
                     : "memory");                                                    \
    }
SM100_DEFINE_MMA(tcgen05_mma_f16_ss, "f16", u64, "l", "%1")
SM100_DEFINE_MMA(tcgen05_mma_f16_ts, "f16", u32, "r", "[%1]")
SM100_DEFINE_MMA(tcgen05_mma_f8f6f4_ss, "f8f6f4", u64, "l", "%1")
SM100_DEFINE_MMA(tcgen05_mma_f8f6f4_ts, "f8f6f4", u32, "r", "[%1]")
#undef SM100_DEFINE_MMA

/*
** D[tmem] (+)= A[smem] * B[smem] with one thread's weight-stationary
** tcgen05.mma.ws (PTX ISA, tcgen05.mma: .ws takes cta_group::1 only):
** M 32, 64 or 128 and N 64, 128 or 256, k16 for kind::f16; the M 32
** accumulator is Layout G of "Data Path Layout Organization" (9.7.16.10.5;
** row r, column n at lane 32 (n / (N / 4)) + r, column n % (N / 4): N / 4
** columns of all 128 lanes).  No collector usage (B is read from smem
** each time).  The decode mode (sm100/decode.cuh) uses it; unverified on
** hardware.
*/
#if FA4_CTA_GROUP == 1
FA4_DEV void tcgen05_mma_ws_f16_ss(u32 d_tmem, u64 a_desc, u64 b_desc, u32 idesc,
                                   u32 accumulate)
{
    asm volatile("{\n .reg .pred p;\n setp.ne.u32 p, %4, 0;\n"
                 " tcgen05.mma.ws.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
                 :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
                 : "memory");
}
#endif

/* Named barrier ID (1..15) over THREADS (a multiple of 32) threads: each
** waits for all (bar.sync, both immediates). */
template <u32 ID, u32 THREADS>
FA4_DEV void named_barrier_sync(void)
{
    asm volatile("bar.sync %0, %1;\n" :: "n"(ID), "n"(THREADS) : "memory");
}

/* Arrive once on BAR when every tcgen05.mma this thread issued so far has
 * completed (reads of smem and TMEM included).  cta_group::2: on the
 * barrier at BAR's offset in both CTAs of the pair (multicast, mask 0b11),
 * since the MMAs read and write both. */
FA4_DEV void tcgen05_commit(u32 bar)
{
#if FA4_CTA_GROUP == 2
    asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one"
                 ".shared::cluster.multicast::cluster.b64 [%0], %1;\n"
                 :: "r"(bar), "h"((unsigned short)3) : "memory");
#else
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one"
                 ".shared::cluster.b64 [%0];\n"
                 :: "r"(bar) : "memory");
#endif
}

/* ---------------------------------------------------- the TMA store of O */

/* 16 bytes to shared memory at SMEM_ADDR (16-aligned). */
FA4_DEV void st_shared_v4_u32(u32 smem_addr, u32 a, u32 b, u32 c, u32 d)
{
    asm volatile("st.shared.v4.u32 [%0], {%1,%2,%3,%4};\n"
                 :: "r"(smem_addr), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}

/* Make this thread's ordinary shared-memory stores visible to the async
 * proxy (a TMA store that reads them). */
FA4_DEV void fence_proxy_async_shared(void)
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* 4-D tiled store of one box from SRC to the tensor MAP describes, at
 * element coordinates (c0..c3); out-of-bounds parts are not written. */
FA4_DEV void tma_store_4d(const fa4_tma_map *map, u32 src, int c0, int c1, int c2, int c3)
{
    asm volatile(
        "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group"
        " [%0, {%2, %3, %4, %5}], [%1];\n"
        :: "l"(map), "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3) : "memory");
}

/* Close this thread's bulk stores into a group; wait until every group
 * has finished reading shared memory. */
FA4_DEV void bulk_commit_group(void)
{
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

FA4_DEV void bulk_wait_group_read_0(void)
{
    asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}

/* ------------------------------------------------------- fp8 P (e4m3) */

/* Four f32 to packed e4m3x4, saturating to +-448: A in the lowest byte.
 * cvt...e4m3x2 puts its first source in the upper byte, as the bf16x2
 * form does (KERNEL_NOTES.md), so each pair is given (hi, lo). */
FA4_DEV u32 cvt_rn_satfinite_e4m3x4_f32(float a, float b, float c, float d)
{
    u32 r;
    asm("{ .reg .b16 lo, hi;\n"
        "cvt.rn.satfinite.e4m3x2.f32 lo, %2, %1;\n"
        "cvt.rn.satfinite.e4m3x2.f32 hi, %4, %3;\n"
        "mov.b32 %0, {lo, hi}; }\n"
        : "=r"(r) : "f"(a), "f"(b), "f"(c), "f"(d));
    return r;
}

#endif
