/*
** types.cuh -- fixed-width integer types for the kernels.  NVRTC has no
** <cstdint> and the kernels include no toolkit header, so these are spelled
** out; the sizes are checked below.
*/
#ifndef FA4_KERNEL_TYPES_CUH
#define FA4_KERNEL_TYPES_CUH

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef int i32;
typedef long long i64;

static_assert(sizeof(u8) == 1 && sizeof(u16) == 2, "u8/u16 size");
static_assert(sizeof(u32) == 4 && sizeof(u64) == 8, "u32/u64 size");
static_assert(sizeof(i32) == 4 && sizeof(i64) == 8, "i32/i64 size");

#endif
