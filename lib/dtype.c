/*
** dtype.c -- the element-type table and its conversions (dtype.h).
*/
#include <math.h>
#include <string.h>
#include "dtype.h"
#include "reference.h"
#include "device.h"

static const dtype_info table[] = {
    { FA4_DTYPE_BF16, "bf16", 2, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 },
    { FA4_DTYPE_FP16, "fp16", 2, CU_TENSOR_MAP_DATA_TYPE_FLOAT16 },
    { FA4_DTYPE_FP8_E4M3, "fp8", 1, CU_TENSOR_MAP_DATA_TYPE_UINT8 },
};

const dtype_info *dtype_of(fa4_dtype dtype)
{
    size_t i;
    for (i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].dtype == dtype)
            return &table[i];
    return NULL;
}

fa4_dtype dtype_out(const fa4_problem *p)
{
    if (p->out_dtype != 0)
        return p->out_dtype;
    return p->dtype == FA4_DTYPE_FP8_E4M3 ? FA4_DTYPE_BF16 : p->dtype;
}

int dtype_bytes(fa4_dtype dtype)
{
    const dtype_info *d = dtype_of(dtype);
    return d ? d->bytes : 2;
}

uint8_t dtype_float_to_e4m3(float f)
{
    const uint8_t sign = signbit(f) ? 0x80 : 0;
    float a = fabsf(f), q;
    int e;

    if (isnan(f))
        return 0x7f;
    if (a >= 448.0f)
        return (uint8_t)(sign | 0x7e);          /* satfinite: the largest finite */
    if (a < 0x1p-6f) {                          /* subnormal: multiples of 2^-9 */
        q = nearbyintf(a * 512.0f);             /* ties to even (default mode) */
        return (uint8_t)(sign | (uint8_t)q);    /* 8 = 2^-6 carries into normal */
    }
    (void)frexpf(a, &e);                        /* a = m 2^e, m in [0.5, 1) */
    q = nearbyintf(ldexpf(a, 4 - e));           /* 3 mantissa bits: q in [8, 16] */
    if (q >= 16.0f) {
        q = 8.0f;
        e++;
    }
    if (e + 6 > 15 || (e + 6 == 15 && q > 14.0f))
        return (uint8_t)(sign | 0x7e);          /* rounded past 448 */
    return (uint8_t)(sign | ((e + 6) << 3) | ((int)q - 8));
}

float dtype_e4m3_to_float(uint8_t x)
{
    const int exp = (x >> 3) & 0xf, man = x & 7;
    float v;

    if ((x & 0x7f) == 0x7f)
        return NAN;
    v = exp == 0 ? ldexpf((float)man, -9) : ldexpf((float)(8 + man), exp - 10);
    return (x & 0x80) ? -v : v;
}

float dtype_load(const void *base, size_t i, fa4_dtype dtype)
{
    if (dtype == FA4_DTYPE_FP8_E4M3)
        return dtype_e4m3_to_float(((const uint8_t *)base)[i]);
    return ref_half_to_float(((const uint16_t *)base)[i], dtype);
}

void dtype_store(void *base, size_t i, float f, fa4_dtype dtype)
{
    if (dtype == FA4_DTYPE_FP8_E4M3)
        ((uint8_t *)base)[i] = dtype_float_to_e4m3(f);
    else
        ((uint16_t *)base)[i] = ref_float_to_half(f, dtype);
}
