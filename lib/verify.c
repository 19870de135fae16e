/*
** verify.c -- compare a kernel's O and LSE with the float64 reference,
** one tolerance per input dtype.  See verify.h for the bounds and why.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dtype.h"
#include "verify.h"

verify_tolerance verify_tolerance_of(fa4_dtype dtype)
{
    verify_tolerance t;

    t.lse = 1.0 / 1024;
    t.lse_text = "2^-10";
    if (dtype == FA4_DTYPE_FP16) {
        t.o_rel = 1.0 / 512;
        t.o_text = "2^-9";
    } else if (dtype == FA4_DTYPE_FP8_E4M3) {
        t.o_rel = 4e-2;
        t.o_text = "4e-2";
        t.lse = 1.0 / 256;
        t.lse_text = "2^-8";
    } else {
        t.o_rel = 1.0 / 128;
        t.o_text = "2^-7";
    }
    return t;
}

void verify_init(verify_result *r, fa4_dtype dtype, fa4_dtype out)
{
    memset(r, 0, sizeof *r);
    r->dtype = dtype;
    r->out = out;
}

/* Append "; TEXT" (or TEXT) to R->msg unless a failure is already there. */
static void first_failure(verify_result *r, const char *text)
{
    if (!r->msg[0])
        snprintf(r->msg, sizeof r->msg, "%s", text);
}

void verify_row(verify_result *r, const void *o, const double *ref,
                int n, const float *lse, double lse_ref, int b, int i, int h)
{
    verify_tolerance tol = verify_tolerance_of(r->dtype);
    char text[200];
    int x;

    for (x = 0; x < n; x++) {
        double got = dtype_load(o, (size_t)x, r->out);
        if (isnan(got) || isinf(got)) {
            if (!r->o_bad++) {
                snprintf(text, sizeof text, "o[b=%d,i=%d,h=%d,x=%d] is %g "
                         "(unwritten or overflow)", b, i, h, x, got);
                first_failure(r, text);
            }
            continue;
        }
        r->num += (got - ref[x]) * (got - ref[x]);
        r->den += ref[x] * ref[x];
    }
    if (lse) {
        double g = *lse;
        int bad = isnan(g) || ((isinf(lse_ref) != 0) != (isinf(g) && g < 0));
        if (bad) {
            if (!r->lse_bad++) {
                snprintf(text, sizeof text, "lse[b=%d,h=%d,i=%d] = %g, "
                         "reference %g", b, h, i, g, lse_ref);
                first_failure(r, text);
            }
        } else if (!isinf(lse_ref)) {
            double e = fabs(g - lse_ref) / (1 + fabs(lse_ref));
            if (e > r->lse_err)
                r->lse_err = e;
            if (e > tol.lse && !r->lse_bad++) {
                snprintf(text, sizeof text, "lse[b=%d,h=%d,i=%d] = %.7g, "
                         "reference %.7g (off by %.2g > %s (1 + |ref|))",
                         b, h, i, g, lse_ref, fabs(g - lse_ref), tol.lse_text);
                first_failure(r, text);
            }
        }
    }
    r->rows++;
}

size_t verify_nonfinite(const void *o, size_t n, fa4_dtype out,
                        size_t *first)
{
    size_t i, count = 0;

    if (dtype_bytes(out) == 1) {
        const uint8_t *b = o;
        /* e4m3 has no Inf; 0x7f and 0xff are its NaNs (and the poison). */
        for (i = 0; i < n; i++)
            if ((b[i] & 0x7f) == 0x7f) {
                if (!count && first)
                    *first = i;
                count++;
            }
    } else {
        const uint16_t *h = o;
        /* All exponent bits set: Inf or NaN (the 0xFFFF poison is a NaN). */
        uint16_t mask = out == FA4_DTYPE_FP16 ? 0x7C00 : 0x7F80;
        for (i = 0; i < n; i++)
            if ((h[i] & mask) == mask) {
                if (!count && first)
                    *first = i;
                count++;
            }
    }
    return count;
}

void verify_add_nonfinite(verify_result *r, size_t count, size_t first,
                          const char *what)
{
    char text[200];

    if (!count)
        return;
    snprintf(text, sizeof text, "%zu outputs are NaN or Inf (unwritten "
             "tiles?), the first at %s[%zu]", count, what ? what : "o", first);
    first_failure(r, text);
    r->o_bad += (long)count;
}

int verify_finish(verify_result *r)
{
    verify_tolerance tol = verify_tolerance_of(r->dtype);
    char text[200];

    r->o_rel_err = r->o_bad ? INFINITY
                 : r->den > 0 ? sqrt(r->num / r->den) : sqrt(r->num);
    if (isnan(r->o_rel_err))
        r->o_rel_err = INFINITY;
    r->pass = r->o_bad == 0 && r->lse_bad == 0 && r->o_rel_err <= tol.o_rel;
    if (!r->pass && !r->msg[0]) {
        const dtype_info *d = dtype_of(r->dtype);
        snprintf(text, sizeof text, "relative error %.3g > %s (%.3g, %s) "
                 "over %ld rows", r->o_rel_err, tol.o_text, tol.o_rel,
                 d ? d->name : "bf16", r->rows);
        first_failure(r, text);
    } else if (r->pass) {
        snprintf(r->msg, sizeof r->msg, "relative error %.2e <= %s, lse "
                 "error %.1e, over %ld rows", r->o_rel_err, tol.o_text,
                 r->lse_err, r->rows);
    }
    return r->pass;
}
