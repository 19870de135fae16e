/*
** budget.c -- the budget model's front: which family may run on which
** device, dispatch to the family's layout rules, and the compile-time
** constants that carry a layout into the kernel.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "config.h"
#include "dtype.h"
#include "family.h"
#include "problem.h"

const family_ops *family_lookup(fa4_family family)
{
    switch (family) {
    case FA4_FAMILY_SM80:  return &family_sm80;
    case FA4_FAMILY_SM90:  return &family_sm90;
    case FA4_FAMILY_SM100: return &family_sm100;
    }
    return NULL;
}

fa4_status budget_fit(fa4_layout *out, const device_limits *dev,
                      const fa4_problem *problem, const fa4_config *config,
                      char *why, size_t why_size)
{
    const family_ops *ops = config ? family_lookup(config->family) : NULL;
    char dummy[8];

    /* The families always get a buffer to write their reason into. */
    if (!why || !why_size) {
        why = dummy;
        why_size = sizeof dummy;
    }
    why[0] = '\0';

    if (!ops) {
        snprintf(why, why_size, "family=%d; known: 80 90 100", config ? (int)config->family : -1);
        return FA4_EINVAL;
    }
    /* Ranges first, whatever the family: an explicit config through the
       API (cluster=-5, pingpong=7) must not reach a family's layout rules
       or the compiler. */
    if (config_validate(config, why, why_size) != FA4_OK)
        return FA4_EINVAL;
    if (ops->exact_cc ? dev->cc != ops->exact_cc : dev->cc < ops->min_cc) {
        snprintf(why, why_size, "%s kernels need compute capability %s%d.%d; %s is %d.%d",
                     ops->name, ops->exact_cc ? "" : ">= ",
                     (ops->exact_cc ? ops->exact_cc : ops->min_cc) / 10,
                     (ops->exact_cc ? ops->exact_cc : ops->min_cc) % 10,
                     dev->name, dev->cc / 10, dev->cc % 10);
        return FA4_ENOTSUP;
    }
    if (config->family == FA4_FAMILY_SM100 && !dev->sm100_opt_in) {
        snprintf(why, why_size, "sm100 kernels are built but unvalidated (they have never "
                 "run on real hardware); %s uses them only on request: %s", dev->name,
                 CONFIG_SM100_OPT_IN);
        return FA4_ENOTSUP;
    }
    memset(out, 0, sizeof *out);
    return ops->fit(out, dev, problem, config, why, why_size);
}

const budget_region *budget_region_find(const fa4_layout *layout, const char *name)
{
    int i;

    for (i = 0; i < layout->nregions; i++)
        if (strcmp(layout->region[i].name, name) == 0)
            return &layout->region[i];
    return NULL;
}

int budget_append(char *buf, size_t size, int *len, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (*len < 0)
        return -1;
    va_start(ap, fmt);
    n = vsnprintf(buf + *len, size - (size_t)*len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)(*len + n) >= size)
        return *len = -1;
    return *len += n;
}

int budget_defines(char *buf, size_t size, const fa4_problem *p,
                   const fa4_config *c, const fa4_layout *l)
{
    const family_ops *ops = family_lookup(c->family);
    int len = 0, i, n;

    budget_append(buf, size, &len,
                  "#define FA4_FAMILY %d\n#define FA4_DTYPE %d\n#define FA4_D %d\n#define FA4_DV %d\n"
                  "#define FA4_BM %d\n#define FA4_BN %d\n#define FA4_STAGES %d\n#define FA4_SWIZZLE %d\n"
                  "#define FA4_THREADS %d\n#define FA4_MASK %d\n#define FA4_CAUSAL %d\n"
                  "#define FA4_SMEM_BYTES %d\n#define FA4_SOFTCAP %d\n#define FA4_SINKS %d\n",
                  (int)c->family, (int)p->dtype, p->head_dim_qk, p->head_dim_v, c->bm, c->bn,
                  c->stages, c->swizzle, l->threads, problem_has_mask(p), p->causal, l->smem_bytes,
                  p->softcap > 0, p->attention_sinks != 0);
    /* O's type, where it is not the inputs' (the 16-bit variants' sources stay as they were). */
    if (p->dtype == FA4_DTYPE_FP8_E4M3)
        budget_append(buf, size, &len, "#define FA4_OUT_DTYPE %d\n", (int)dtype_out(p));
    for (i = 0; i < l->nregions; i++)
        budget_append(buf, size, &len, "#define FA4_SMEM_%s_OFF %d\n#define FA4_SMEM_%s_SIZE %d\n",
                      l->region[i].name, l->region[i].offset, l->region[i].name, l->region[i].size);
    if (len < 0 || !ops || !ops->defines)
        return len;
    n = ops->defines(buf + len, size - (size_t)len, p, c, l);
    return n < 0 ? -1 : len + n;
}
