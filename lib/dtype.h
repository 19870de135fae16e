/*
** dtype.h -- the element types, as one table: size, TMA type, name, and
** the conversions the reference, the tests and the tuner use.  What a
** kernel does with a type is the kernel's (FA4_DTYPE, FA4_OUT_DTYPE).
*/
#ifndef FA4_DTYPE_H
#define FA4_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include "fa4.h"

typedef struct dtype_info {
    fa4_dtype dtype;
    const char *name;       /* "bf16", "fp16", "fp8" (fa4-tune's spelling) */
    int bytes;
    int tma_type;           /* CUtensorMapDataType of its TMA maps */
} dtype_info;

/* The row of DTYPE, or NULL for a value that is no fa4_dtype. */
const dtype_info *dtype_of(fa4_dtype dtype);

/* O's element type for PROBLEM: out_dtype, or where it is 0 the default
** (fa4.h): bf16 for fp8 inputs, else the inputs' type. */
fa4_dtype dtype_out(const fa4_problem *problem);

/* Bytes per element of DTYPE (2 for an unknown value). */
int dtype_bytes(fa4_dtype dtype);

/* Element I of the array at BASE in DTYPE, as a float. */
float dtype_load(const void *base, size_t i, fa4_dtype dtype);

/* Store F, rounded to nearest even (fp8: saturating to +-448), as element
** I of the array at BASE in DTYPE. */
void dtype_store(void *base, size_t i, float f, fa4_dtype dtype);

/* e4m3 (OCP FP8, as PTX's .e4m3: no infinities, 0x7f/0xff NaN) <-> float. */
uint8_t dtype_float_to_e4m3(float f);
float dtype_e4m3_to_float(uint8_t x);

#endif
