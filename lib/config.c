/*
** config.c -- configs as values: the text form, the heuristic default,
** and the enumerator that walks a family's space through the budget model.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "family.h"
#include "budget_sm100.h"

const char *config_family_name(fa4_family family)
{
    const family_ops *ops = family_lookup(family);
    return ops ? ops->name : "unknown";
}

static const char *sched_names[] = { "plain", "persistent", "lpt", "dynamic" };
#define NSCHED ((int)(sizeof sched_names / sizeof sched_names[0]))

const char *config_scheduler_name(fa4_scheduler sched)
{
    return (unsigned)sched < (unsigned)NSCHED ? sched_names[sched] : "?";
}

char *fa4_config_format(const fa4_config *c, char *buf, size_t size)
{
    if (!buf || !size)
        return buf;
    if (!c) {
        snprintf(buf, size, "(null)");
        return buf;
    }
    snprintf(buf, size,
             "%s bm=%d bn=%d stages=%d swizzle=%d fused_kv=%d q_tiles=%d warps=%d "
             "wgs=%d regs=%d/%d cluster=%d exp2_emu=%d rescale=%d pingpong=%d sched=%s"
             " splits=%d pack_gqa=%d kv_split_warps=%d late_k=%d",
             config_family_name(c->family), c->bm, c->bn, c->stages, c->swizzle,
             c->fused_kv, c->q_tiles, c->warps, c->consumer_wgs, c->producer_regs,
             c->consumer_regs, c->cluster, c->exp2_emu_pct, c->rescale_threshold,
             c->pingpong, config_scheduler_name(c->scheduler),
             c->splits, c->pack_gqa, c->kv_split_warps, c->late_k_release);
    /* -1, the family's default share, is the text without the key (as
       stored before the field existed). */
    if (c->tanh_poly_pct >= 0) {
        size_t n = strlen(buf);
        snprintf(buf + n, size - n, " tanh_poly=%d", c->tanh_poly_pct);
    }
    return buf;
}

/* Parse a non-negative integer that must be all of TEXT. */
static int parse_int(const char *text, int *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < 0 || v > 1 << 20)
        return -1;
    *out = (int)v;
    return 0;
}

fa4_status config_parse(fa4_config *out, const char *text, char *why, size_t why_size)
{
    fa4_config c = FA4_CONFIG_INIT;
    char copy[512], *tok, *save = NULL;
    int first = 1;

    if (!text || strlen(text) >= sizeof copy) {
        snprintf(why, why_size, "config text missing or longer than %zu bytes", sizeof copy - 1);
        return FA4_EINVAL;
    }
    strcpy(copy, text);
    for (tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
        char *eq = strchr(tok, '=');
        const char *key = tok, *val;
        int v, bad = 0;

        if (first) {
            first = 0;
            if (!strcmp(tok, "sm80")) c.family = FA4_FAMILY_SM80;
            else if (!strcmp(tok, "sm90")) c.family = FA4_FAMILY_SM90;
            else if (!strcmp(tok, "sm100")) c.family = FA4_FAMILY_SM100;
            else {
                snprintf(why, why_size, "config \"%s\": family \"%s\" unknown; known: sm80 sm90 sm100", text, tok);
                return FA4_EINVAL;
            }
            continue;
        }
        if (!eq) {
            snprintf(why, why_size, "config \"%s\": \"%s\" is not key=value", text, tok);
            return FA4_EINVAL;
        }
        *eq = '\0';
        val = eq + 1;
        if (!strcmp(key, "sched")) {
            int i, found = 0;
            for (i = 0; i < NSCHED; i++)
                if (!strcmp(val, sched_names[i])) { c.scheduler = (fa4_scheduler)i; found = 1; }
            if (!found) {
                snprintf(why, why_size, "config: sched=%s; known: plain persistent lpt dynamic", val);
                return FA4_EINVAL;
            }
            continue;
        }
        if (!strcmp(key, "regs")) {
            if (sscanf(val, "%d/%d", &c.producer_regs, &c.consumer_regs) != 2) {
                snprintf(why, why_size, "config: regs=%s; want PRODUCER/CONSUMER", val);
                return FA4_EINVAL;
            }
            continue;
        }
        if (parse_int(val, &v) != 0) {
            snprintf(why, why_size, "config: %s=%s is not a non-negative integer", key, val);
            return FA4_EINVAL;
        }
        if (!strcmp(key, "bm")) c.bm = v;
        else if (!strcmp(key, "bn")) c.bn = v;
        else if (!strcmp(key, "stages")) c.stages = v;
        else if (!strcmp(key, "swizzle")) c.swizzle = v;
        else if (!strcmp(key, "fused_kv")) c.fused_kv = v;
        else if (!strcmp(key, "q_tiles")) c.q_tiles = v;
        else if (!strcmp(key, "warps")) c.warps = v;
        else if (!strcmp(key, "wgs")) c.consumer_wgs = v;
        else if (!strcmp(key, "cluster")) c.cluster = v;
        else if (!strcmp(key, "exp2_emu")) c.exp2_emu_pct = v;
        else if (!strcmp(key, "rescale")) c.rescale_threshold = v;
        else if (!strcmp(key, "pingpong")) c.pingpong = v;
        else if (!strcmp(key, "splits")) c.splits = v;
        else if (!strcmp(key, "pack_gqa")) c.pack_gqa = v;
        else if (!strcmp(key, "kv_split_warps")) c.kv_split_warps = v;
        else if (!strcmp(key, "late_k")) c.late_k_release = v;
        else if (!strcmp(key, "tanh_poly")) c.tanh_poly_pct = v;
        else bad = 1;
        if (bad) {
            snprintf(why, why_size, "config: unknown key \"%s\"", key);
            return FA4_EINVAL;
        }
    }
    if (first) {
        snprintf(why, why_size, "config text is empty");
        return FA4_EINVAL;
    }
    *out = c;
    return FA4_OK;
}

/* 1 when V is one of the N values at SET. */
static int one_of(int v, const int *set, int n)
{
    int i;

    for (i = 0; i < n; i++)
        if (v == set[i])
            return 1;
    return 0;
}

fa4_status config_validate(const fa4_config *c, char *why, size_t why_size)
{
    static const int families[] = { FA4_FAMILY_SM80, FA4_FAMILY_SM90, FA4_FAMILY_SM100 };
    static const int swizzles[] = { 0, 32, 64, 128 };
    /* name, value, lo, hi, multiple of; bm, bn, stages and swizzle 0 ask
       the family to choose (FA4_CONFIG_INIT), as sm100 does for bn. */
    const struct { const char *name; int v, lo, hi, mult; } r[] = {
        { "bm", c->bm, 0, 256, 16 },
        { "bn", c->bn, 0, 256, 16 },
        { "stages", c->stages, 0, 8, 1 },
        { "fused_kv", c->fused_kv, 0, 1, 1 },
        { "q_tiles", c->q_tiles, 1, 2, 1 },
        { "warps", c->warps, 0, 32, 1 },
        { "consumer_wgs", c->consumer_wgs, 0, 4, 1 },
        { "cluster", c->cluster, 1, 16, 1 },
        { "exp2_emu_pct", c->exp2_emu_pct, 0, 100, 1 },
        { "rescale_threshold", c->rescale_threshold, 0, 127, 1 },
        { "pingpong", c->pingpong, 0, 1, 1 },
        { "scheduler", (int)c->scheduler, 0, NSCHED - 1, 1 },
        { "splits", c->splits, 0, CONFIG_MAX_SPLITS, 1 },
        { "pack_gqa", c->pack_gqa, 0, 1, 1 },
        { "kv_split_warps", c->kv_split_warps, 0, 1, 1 },
        { "late_k_release", c->late_k_release, 0, 1, 1 },
        { "tanh_poly_pct", c->tanh_poly_pct, -1, 100, 1 },
    };
    size_t i;

    if (!c) {
        snprintf(why, why_size, "config is NULL");
        return FA4_EINVAL;
    }
    if (!one_of((int)c->family, families, 3)) {
        snprintf(why, why_size, "family=%d; must be 80, 90 or 100", (int)c->family);
        return FA4_EINVAL;
    }
    for (i = 0; i < sizeof r / sizeof r[0]; i++)
        if (r[i].v < r[i].lo || r[i].v > r[i].hi || r[i].v % r[i].mult) {
            if (r[i].mult > 1)
                snprintf(why, why_size, "%s=%d; must be a multiple of %d up to %d "
                         "(0: the family's)", r[i].name, r[i].v, r[i].mult, r[i].hi);
            else
                snprintf(why, why_size, "%s=%d; must be in %d..%d", r[i].name, r[i].v,
                         r[i].lo, r[i].hi);
            return FA4_EINVAL;
        }
    if (c->late_k_release && c->family != FA4_FAMILY_SM90) {
        snprintf(why, why_size, "late_k_release=1 is an sm90 option (%s frees each K stage "
                 "as soon as its scores are read)", config_family_name(c->family));
        return FA4_EINVAL;
    }
    if (c->tanh_poly_pct > 0 && c->family != FA4_FAMILY_SM90) {
        snprintf(why, why_size, "tanh_poly_pct=%d is an sm90 option (%s computes softcap's "
                 "tanh on MUFU)", c->tanh_poly_pct, config_family_name(c->family));
        return FA4_EINVAL;
    }
    if (!one_of(c->swizzle, swizzles, 4)) {
        snprintf(why, why_size, "swizzle=%d; supported: 128 64 32 (0: the family's)",
                 c->swizzle);
        return FA4_EINVAL;
    }
    /* setmaxnreg takes multiples of 8 in 24..256; 0 leaves the split to the family. */
    if ((c->producer_regs && (c->producer_regs < 24 || c->producer_regs > 256 ||
                              c->producer_regs % 8)) ||
        (c->consumer_regs && (c->consumer_regs < 24 || c->consumer_regs > 256 ||
                              c->consumer_regs % 8))) {
        snprintf(why, why_size, "regs=%d/%d; each must be 0 or a multiple of 8 in 24..256",
                 c->producer_regs, c->consumer_regs);
        return FA4_EINVAL;
    }
    return FA4_OK;
}

int config_equal(const fa4_config *a, const fa4_config *b)
{
    return a->family == b->family && a->bm == b->bm && a->bn == b->bn &&
           a->stages == b->stages && a->swizzle == b->swizzle &&
           a->fused_kv == b->fused_kv && a->q_tiles == b->q_tiles &&
           a->warps == b->warps && a->consumer_wgs == b->consumer_wgs &&
           a->producer_regs == b->producer_regs && a->consumer_regs == b->consumer_regs &&
           a->cluster == b->cluster && a->exp2_emu_pct == b->exp2_emu_pct &&
           a->rescale_threshold == b->rescale_threshold && a->pingpong == b->pingpong &&
           a->scheduler == b->scheduler && a->splits == b->splits &&
           a->pack_gqa == b->pack_gqa && a->kv_split_warps == b->kv_split_warps &&
           a->late_k_release == b->late_k_release && a->tanh_poly_pct == b->tanh_poly_pct;
}

int config_families(fa4_family out[3], const device_limits *dev)
{
    static const fa4_family order[3] = { FA4_FAMILY_SM100, FA4_FAMILY_SM90, FA4_FAMILY_SM80 };
    const char *allowed = getenv("FA4_FAMILIES");   /* e.g. "sm80": restrict the choice */
    int i, n = 0;

    for (i = 0; i < 3; i++) {
        const family_ops *ops = family_lookup(order[i]);
        if (allowed && *allowed && !strstr(allowed, ops->name))
            continue;
        if (ops->exact_cc ? dev->cc == ops->exact_cc : dev->cc >= ops->min_cc)
            out[n++] = order[i];
    }
    return n;
}

int config_sm100_note(char *buf, size_t size, const device_limits *dev)
{
    const int exact = family_sm100.exact_cc;

    if (size)
        buf[0] = '\0';
    if (dev->cc / 10 != exact / 10 || (dev->cc == exact && dev->sm100_opt_in))
        return 0;
    if (dev->cc != exact)
        snprintf(buf, size, "%s (compute capability %d.%d): the sm100 kernel family is "
                 "built for sm_100a (compute capability %d.%d) only, so plans use the "
                 "portable sm80 family", dev->name, dev->cc / 10, dev->cc % 10,
                 exact / 10, exact % 10);
    else
        snprintf(buf, size, "%s (compute capability %d.%d): the sm100 kernel family is "
                 "built but unvalidated (it has never run on real hardware), so plans use "
                 "the portable sm80 family; to use sm100, %s", dev->name, dev->cc / 10,
                 dev->cc % 10, CONFIG_SM100_OPT_IN);
    return 1;
}

/*
** 1 when P is a serving shape the sm80 family runs best: few query rows per
** KV head (decode, speculative decoding: its decode tiles pack the heads
** and split the keys) or a layout only it reads (pages under 16 rows).
*/
static int serving_shape(const fa4_problem *p)
{
    return (p->page_size > 0 && p->page_size < 16) ||
           (long long)p->seqlen_q * (p->heads_q / p->heads_kv) <= 64;
}

int config_families_for(fa4_family out[3], const device_limits *dev, const fa4_problem *p)
{
    int i, n = config_families(out, dev);
    /* An opted-in B200 keeps sm100 first for the decode shapes its decode
       mode runs (without the opt-in budget_fit refuses sm100 anyway). */
    const int sm100_decode = n > 0 && out[0] == FA4_FAMILY_SM100 && dev->sm100_opt_in &&
                             budget_sm100_decode_suits(p);

    for (i = 1; i < n && serving_shape(p) && !sm100_decode; i++)
        if (out[i] == FA4_FAMILY_SM80) {
            for (; i > 0; i--)
                out[i] = out[i - 1];
            out[0] = FA4_FAMILY_SM80;
            break;
        }
    return n;
}

fa4_status config_default(fa4_config *out, const device_limits *dev,
                          const fa4_problem *problem, fa4_family family,
                          char *why, size_t why_size)
{
    const family_ops *ops = family_lookup(family);
    fa4_config c = FA4_CONFIG_INIT;
    fa4_layout layout;
    config_space space;
    fa4_status st;

    if (!ops) {
        snprintf(why, why_size, "family=%d unknown", (int)family);
        return FA4_EINVAL;
    }
    ops->heuristic(&c, dev, problem);
    c.family = family;
    if ((st = budget_fit(&layout, dev, problem, &c, why, why_size)) == FA4_OK) {
        *out = c;
        return FA4_OK;
    }
    if (st == FA4_ENOTSUP)
        return st;
    /* The default does not fit this device: take the first candidate that does. */
    if ((st = config_enumerate(&space, dev, problem, family, why, why_size)) != FA4_OK)
        return st;
    if (space.count == 0) {
        config_space_free(&space);
        snprintf(why, why_size, "no %s config fits %s for head_dim %d", ops->name, dev->name,
                 problem->head_dim_qk);
        return FA4_ENOFIT;
    }
    *out = space.configs[0];
    config_space_free(&space);
    return FA4_OK;
}

/*
** Split a budget message into its class (each number replaced by '#', so
** equal causes group together: "smem 241664 B > opt-in limit 232448 B" ->
** "smem # B > opt-in limit # B") and its first CONFIG_DROP_NUMS numbers;
** returns how many numbers it has (at most CONFIG_DROP_NUMS).
*/
static int reason_class(char *dst, size_t size, long long *nums, const char *why)
{
    size_t n = 0;
    const char *s;
    int k = 0;

    for (s = why; *s && n + 2 < size; s++) {
        if (*s >= '0' && *s <= '9') {
            long long v = 0;

            for (; *s >= '0' && *s <= '9'; s++)
                if (v < 1000000000000LL)
                    v = v * 10 + (*s - '0');
            s--;
            if (k < CONFIG_DROP_NUMS)
                nums[k++] = v;
            dst[n++] = '#';
        } else {
            dst[n++] = *s;
        }
    }
    dst[n] = '\0';
    return k;
}

/* D's reason: its class with each '#' shown as the number, or the range
** "lo..hi" of that number over the group. */
static void drop_text(config_drop *d)
{
    size_t n = 0, size = sizeof d->reason;
    const char *s;
    int k = 0;

    for (s = d->cls; *s && n + 1 < size; s++) {
        int w;

        if (*s != '#' || k >= d->nnums) {
            d->reason[n++] = *s;
            continue;
        }
        w = d->lo[k] == d->hi[k]
                ? snprintf(d->reason + n, size - n, "%lld", d->lo[k])
                : snprintf(d->reason + n, size - n, "%lld..%lld", d->lo[k], d->hi[k]);
        k++;
        if (w < 0 || (size_t)w >= size - n) {
            n = size - 1;
            break;
        }
        n += (size_t)w;
    }
    d->reason[n] = '\0';
}

static void count_drop(config_space *sp, const char *why)
{
    char cls[sizeof sp->drops[0].cls];
    long long nums[CONFIG_DROP_NUMS];
    int i, k, nn = reason_class(cls, sizeof cls, nums, why);
    config_drop *d = NULL;

    for (i = 0; i < sp->ndrops && !d; i++)
        if (!strcmp(sp->drops[i].cls, cls))
            d = &sp->drops[i];
    if (!d && sp->ndrops < (int)(sizeof sp->drops / sizeof sp->drops[0])) {
        d = &sp->drops[sp->ndrops++];
        memset(d, 0, sizeof *d);
        snprintf(d->cls, sizeof d->cls, "%s", cls);
        d->nnums = nn;
        for (k = 0; k < nn; k++)
            d->lo[k] = d->hi[k] = nums[k];
    }
    if (!d) {
        sp->drops[sp->ndrops - 1].count++;   /* the last row collects the rest */
        return;
    }
    d->count++;
    for (k = 0; k < nn && k < d->nnums; k++) {
        if (nums[k] < d->lo[k])
            d->lo[k] = nums[k];
        if (nums[k] > d->hi[k])
            d->hi[k] = nums[k];
    }
    drop_text(d);
}

fa4_status config_enumerate(config_space *out, const device_limits *dev,
                            const fa4_problem *problem, fa4_family family,
                            char *why, size_t why_size)
{
    const family_ops *ops = family_lookup(family);
    fa4_config *all = NULL;
    fa4_layout layout;
    char reason[512];
    int n, i;
    fa4_status st;

    memset(out, 0, sizeof *out);
    if (!ops) {
        snprintf(why, why_size, "family=%d unknown", (int)family);
        return FA4_EINVAL;
    }
    n = ops->candidates(NULL, 0, dev, problem);
    if (n <= 0)
        return FA4_OK;
    all = calloc((size_t)n, sizeof *all);
    out->configs = calloc((size_t)n, sizeof *out->configs);
    out->layouts = calloc((size_t)n, sizeof *out->layouts);
    if (!all || !out->configs || !out->layouts) {
        free(all);
        config_space_free(out);
        snprintf(why, why_size, "out of memory enumerating %d configs", n);
        return FA4_ENOMEM;
    }
    n = ops->candidates(all, n, dev, problem);
    out->considered = n;
    for (i = 0; i < n; i++) {
        all[i].family = family;
        st = budget_fit(&layout, dev, problem, &all[i], reason, sizeof reason);
        if (st == FA4_ENOTSUP) {
            snprintf(why, why_size, "%s", reason);
            free(all);
            config_space_free(out);
            return st;
        }
        if (st != FA4_OK) {
            count_drop(out, reason);
            continue;
        }
        out->configs[out->count] = all[i];
        out->layouts[out->count++] = layout;
    }
    free(all);
    return FA4_OK;
}

void config_space_free(config_space *space)
{
    if (!space)
        return;
    free(space->configs);
    free(space->layouts);
    space->configs = NULL;
    space->layouts = NULL;
    space->count = 0;
}
