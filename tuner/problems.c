/*
** problems.c -- problem lists for fa4-tune: presets of model shapes, JSON
** files, the command-line shape; and the shard split.
*/
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "problems.h"

/* ---------------------------------------------------------------- presets */

/*
** A preset is a model's attention shape over sequence lengths at powers of
** two (the database's buckets).  Batches follow the FlashAttention papers'
** convention of 16,384 tokens per batch (batch = 16384 / seqlen, at least 1).
*/
typedef struct preset {
    const char *name;
    const char *what;
    int hidden;            /* > 0: heads = hidden / head_dim (fa-grid) */
    int heads_q, heads_kv;
    int dims[3];           /* head_dim_qk values, 0-terminated */
    int head_dim_v;        /* 0: same as qk */
    int smin, smax;        /* sequence lengths, powers of two */
    int causal_mask;       /* bit 0: non-causal rows, bit 1: causal rows */
    int window_left;       /* -1: none */
} preset;

static const preset presets[] = {
    { "fa-grid", "FlashAttention benchmark grid: 16k tokens, hidden 2048",
      2048, 0, 0, { 64, 128, 256 }, 0, 512, 16384, 3, -1 },
    { "fa-grid-d128", "the fa-grid rows with head_dim 128",
      2048, 0, 0, { 128, 0, 0 }, 0, 512, 16384, 3, -1 },
    { "llama3-8b", "Llama 3 8B: 32 query / 8 KV heads, d128, causal",
      0, 32, 8, { 128, 0, 0 }, 0, 1024, 32768, 2, -1 },
    { "llama3-70b", "Llama 3 70B: 64 query / 8 KV heads, d128, causal",
      0, 64, 8, { 128, 0, 0 }, 0, 1024, 32768, 2, -1 },
    { "mistral-7b", "Mistral 7B: 32 query / 8 KV heads, d128, causal, "
      "sliding window 4096", 0, 32, 8, { 128, 0, 0 }, 0, 1024, 32768, 2, 4096 },
    { "gemma-d256", "Gemma 7B: 16 heads, d256, causal",
      0, 16, 16, { 256, 0, 0 }, 0, 1024, 8192, 2, -1 },
    { "deepseek-192-128", "DeepSeek MLA prefill: 128 heads, head_dim 192, "
      "head_dim_v 128, causal", 0, 128, 128, { 192, 0, 0 }, 128, 1024, 16384,
      2, -1 },
};

#define NPRESETS ((int)(sizeof presets / sizeof presets[0]))

/*
** Decode: one new query row per sequence against a KV cache of seqlen_k
** keys (powers of two, smin..smax), at batch 1, 2, 4, ... bmax; the cache
** contiguous, or paged as a serving engine keeps it.  Causal, as
** inference engines call FlashAttention for decode (with one query row
** the bottom-right mask hides nothing).
*/
typedef struct decode_preset {
    const char *name;
    const char *what;
    int heads_q, heads_kv, head_dim;
    int smin, smax;        /* seqlen_k */
    int bmax;              /* batch 1 .. bmax, powers of two */
    int page_size;         /* 0: contiguous K/V */
} decode_preset;

/* vLLM's default block size: what a tuned paged decode most often meets. */
#define SERVING_PAGE_SIZE 16

static const decode_preset decode_presets[] = {
    { "decode-llama3-8b", "Llama 3 8B decode: 32 query / 8 KV heads, d128, "
      "one query row, KV 1k..32k, batch 1..64", 32, 8, 128, 1024, 32768, 64,
      0 },
    { "decode-llama3-70b-tp8", "Llama 3 70B decode per GPU at tensor "
      "parallelism 8: 8 query / 1 KV head, d128, one query row, KV 1k..32k, "
      "batch 1..64", 8, 1, 128, 1024, 32768, 64, 0 },
    { "decode-llama3-8b-paged", "decode-llama3-8b with the KV cache in pages "
      "of 16 rows (vLLM's default)", 32, 8, 128, 1024, 32768, 64,
      SERVING_PAGE_SIZE },
    { "decode-llama3-70b-tp8-paged", "decode-llama3-70b-tp8 with the KV "
      "cache in pages of 16 rows", 8, 1, 128, 1024, 32768, 64,
      SERVING_PAGE_SIZE },
};

#define NDECODE ((int)(sizeof decode_presets / sizeof decode_presets[0]))

/*
** Variable-length prefill: a packed batch of causal sequences, each at
** the maximum length s (smin..smax, powers of two: the seqlen buckets),
** TOKENS tokens in all (batch = tokens / s), the middle of what serving
** engines schedule per prefill step (16k..64k tokens).  On sm_90a the
** sm90 family runs it (head_dim_v <= 192).
*/
typedef struct varlen_preset {
    const char *name;
    const char *what;
    int heads_q, heads_kv, head_dim;
    int smin, smax;
    int tokens;
} varlen_preset;

static const varlen_preset varlen_presets[] = {
    { "prefill-varlen-llama3-8b", "Llama 3 8B varlen prefill: 32 query / 8 "
      "KV heads, d128, causal, sequences of 1k..8k, 32k tokens per batch",
      32, 8, 128, 1024, 8192, 32768 },
};

#define NVARLEN ((int)(sizeof varlen_presets / sizeof varlen_presets[0]))

/* The varlen preset called NAME, or NULL. */
static const varlen_preset *find_varlen(const char *name)
{
    int i;

    for (i = 0; i < NVARLEN; i++)
        if (strcmp(varlen_presets[i].name, name) == 0)
            return &varlen_presets[i];
    return NULL;
}

/* The decode preset called NAME, or NULL. */
static const decode_preset *find_decode(const char *name)
{
    int i;

    for (i = 0; i < NDECODE; i++)
        if (strcmp(decode_presets[i].name, name) == 0)
            return &decode_presets[i];
    return NULL;
}

/* The preset called NAME, or NULL. */
static const preset *find_preset(const char *name)
{
    int i;

    for (i = 0; i < NPRESETS; i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

int problems_preset_exists(const char *name)
{
    return name && (find_preset(name) != NULL || find_decode(name) != NULL ||
                    find_varlen(name) != NULL);
}

const char *problems_preset_list(void)
{
    return "fa-grid fa-grid-d128 llama3-8b llama3-70b mistral-7b gemma-d256 "
           "deepseek-192-128 decode-llama3-8b decode-llama3-70b-tp8 "
           "decode-llama3-8b-paged decode-llama3-70b-tp8-paged "
           "prefill-varlen-llama3-8b";
}

/* Append decode preset DP's problems (dtype DTYPE) to *LIST; 0 or -1. */
static int add_decode(problem_list *list, const decode_preset *dp,
                      fa4_dtype dtype, char *err, size_t err_size)
{
    int b, s;

    for (s = dp->smin; s <= dp->smax; s *= 2)
        for (b = 1; b <= dp->bmax; b *= 2) {
            fa4_problem p = FA4_PROBLEM_INIT;
            char label[64];

            p.dtype = dtype;
            p.batch = b;
            p.seqlen_q = 1;
            p.seqlen_k = s;
            p.heads_q = dp->heads_q;
            p.heads_kv = dp->heads_kv;
            p.head_dim_qk = dp->head_dim;
            p.causal = 1;
            p.window_right = 0;
            p.page_size = dp->page_size;
            snprintf(label, sizeof label, "%s b%d k%d", dp->name, b, s);
            if (problems_append(list, &p, label) != 0)
                return tune_fail(err, err_size, "out of memory");
        }
    return 0;
}

/* Append varlen preset VP's problems (dtype DTYPE) to *LIST; 0 or -1. */
static int add_varlen(problem_list *list, const varlen_preset *vp,
                      fa4_dtype dtype, char *err, size_t err_size)
{
    int s;

    for (s = vp->smin; s <= vp->smax; s *= 2) {
        fa4_problem p = FA4_PROBLEM_INIT;
        char label[64];

        p.dtype = dtype;
        p.varlen = 1;
        p.batch = vp->tokens / s > 0 ? vp->tokens / s : 1;
        p.seqlen_q = p.seqlen_k = s;
        p.heads_q = vp->heads_q;
        p.heads_kv = vp->heads_kv;
        p.head_dim_qk = vp->head_dim;
        p.causal = 1;
        p.window_right = 0;
        snprintf(label, sizeof label, "%s b%d s%d", vp->name, p.batch, s);
        if (problems_append(list, &p, label) != 0)
            return tune_fail(err, err_size, "out of memory");
    }
    return 0;
}

int problems_append(problem_list *list, const fa4_problem *p, const char *name)
{
    if (list->count == list->cap) {
        int cap = list->cap ? 2 * list->cap : 16;
        tune_problem *items = realloc(list->items, (size_t)cap * sizeof *items);
        if (!items)
            return -1;
        list->items = items;
        list->cap = cap;
    }
    memset(&list->items[list->count], 0, sizeof list->items[0]);
    list->items[list->count].problem = *p;
    snprintf(list->items[list->count].name, sizeof list->items[0].name, "%s",
             name);
    list->items[list->count].index = list->count;
    list->count++;
    return 0;
}

int problems_add_preset(problem_list *list, const char *name, fa4_dtype dtype,
                        char *err, size_t err_size)
{
    const preset *ps = find_preset(name);
    int di, causal, s;

    if (!ps && find_decode(name))
        return add_decode(list, find_decode(name), dtype, err, err_size);
    if (!ps && find_varlen(name))
        return add_varlen(list, find_varlen(name), dtype, err, err_size);
    if (!ps)
        return tune_fail(err, err_size, "unknown preset '%s'; known: %s", name,
                         problems_preset_list());
    for (di = 0; di < 3 && ps->dims[di]; di++) {
        for (causal = 0; causal <= 1; causal++) {
            if (!(ps->causal_mask & (1 << causal)))
                continue;
            for (s = ps->smin; s <= ps->smax; s *= 2) {
                fa4_problem p = FA4_PROBLEM_INIT;
                char label[64];
                int d = ps->dims[di];

                p.dtype = dtype;
                p.batch = s >= 16384 ? 1 : 16384 / s;
                p.seqlen_q = p.seqlen_k = s;
                p.heads_q = ps->hidden ? ps->hidden / d : ps->heads_q;
                p.heads_kv = ps->hidden ? ps->hidden / d : ps->heads_kv;
                p.head_dim_qk = d;
                p.head_dim_v = ps->head_dim_v;
                p.causal = causal;
                if (causal)
                    p.window_right = 0;
                p.window_left = ps->window_left;
                snprintf(label, sizeof label, "%s d%d s%d%s", ps->name, d, s,
                         causal ? " causal" : "");
                if (problems_append(list, &p, label) != 0)
                    return tune_fail(err, err_size, "out of memory");
            }
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ JSON */

/* Read integer KEY of entry ENTRY into *OUT when present; 0 or -1. */
static int json_int(int *out, json_t *v, const char *where, const char *key,
                    int min, char *err, size_t size)
{
    json_int_t x;

    if (!json_is_integer(v))
        return tune_fail(err, size, "%s.%s: expected an integer", where, key);
    x = json_integer_value(v);
    if (x < min || x > 0x7fffffff)
        return tune_fail(err, size, "%s.%s: %lld is out of range (>= %d)", where,
                         key, (long long)x, min);
    *out = (int)x;
    return 0;
}

/* Convert one JSON object into *P; 0 or -1 with ERR naming WHERE.key. */
static int json_problem(fa4_problem *p, char *name, size_t name_size,
                        json_t *obj, const char *where, char *err, size_t size)
{
    const char *key;
    json_t *v;
    int have_batch = 0, have_sq = 0, have_hq = 0, have_d = 0;
    int have_sk = 0, have_hkv = 0, have_wr = 0;

    if (!json_is_object(obj))
        return tune_fail(err, size, "%s: expected an object", where);
    json_object_foreach(obj, key, v) {
        int r = 0;

        if (!strcmp(key, "name")) {
            if (!json_is_string(v))
                return tune_fail(err, size, "%s.name: expected a string", where);
            snprintf(name, name_size, "%s", json_string_value(v));
        } else if (!strcmp(key, "dtype")) {
            if (!json_is_string(v) ||
                tune_args_dtype(&p->dtype, json_string_value(v)) != 0)
                return tune_fail(err, size, "%s.dtype: expected \"bf16\", "
                                 "\"fp16\" or \"fp8\"", where);
        } else if (!strcmp(key, "batch")) {
            r = json_int(&p->batch, v, where, key, 1, err, size), have_batch = 1;
        } else if (!strcmp(key, "seqlen_q")) {
            r = json_int(&p->seqlen_q, v, where, key, 1, err, size), have_sq = 1;
        } else if (!strcmp(key, "seqlen_k")) {
            r = json_int(&p->seqlen_k, v, where, key, 1, err, size), have_sk = 1;
        } else if (!strcmp(key, "heads_q")) {
            r = json_int(&p->heads_q, v, where, key, 1, err, size), have_hq = 1;
        } else if (!strcmp(key, "heads_kv")) {
            r = json_int(&p->heads_kv, v, where, key, 1, err, size), have_hkv = 1;
        } else if (!strcmp(key, "head_dim") || !strcmp(key, "head_dim_qk")) {
            r = json_int(&p->head_dim_qk, v, where, key, 1, err, size), have_d = 1;
        } else if (!strcmp(key, "head_dim_v")) {
            r = json_int(&p->head_dim_v, v, where, key, 0, err, size);
        } else if (!strcmp(key, "causal") || !strcmp(key, "return_lse") ||
                   !strcmp(key, "varlen") || !strcmp(key, "attention_sinks") ||
                   !strcmp(key, "sinks")) {
            if (!json_is_boolean(v) && !json_is_integer(v))
                return tune_fail(err, size, "%s.%s: expected true or false", where,
                                 key);
            *(!strcmp(key, "causal") ? &p->causal
              : !strcmp(key, "varlen") ? &p->varlen
              : !strcmp(key, "return_lse") ? &p->return_lse
              : &p->attention_sinks) =
                json_is_boolean(v) ? json_is_true(v)
                                   : (int)json_integer_value(v);
        } else if (!strcmp(key, "page_size")) {
            /* 0: contiguous K/V; fa4_problem_check names a size that is
               not a power of two. */
            r = json_int(&p->page_size, v, where, key, 0, err, size);
        } else if (!strcmp(key, "window")) {
            if (!json_is_array(v) || json_array_size(v) != 2)
                return tune_fail(err, size, "%s.window: expected [left, right] "
                                 "(-1 = unbounded)", where);
            r = json_int(&p->window_left, json_array_get(v, 0), where,
                         "window[0]", -1, err, size);
            if (!r)
                r = json_int(&p->window_right, json_array_get(v, 1), where,
                             "window[1]", -1, err, size);
            have_wr = 1;
        } else if (!strcmp(key, "window_left")) {
            r = json_int(&p->window_left, v, where, key, -1, err, size);
        } else if (!strcmp(key, "window_right")) {
            r = json_int(&p->window_right, v, where, key, -1, err, size);
            have_wr = 1;
        } else if (!strcmp(key, "softmax_scale")) {
            if (!json_is_number(v))
                return tune_fail(err, size, "%s.softmax_scale: expected a number",
                                 where);
            p->softmax_scale = (float)json_number_value(v);
        } else if (!strcmp(key, "softcap")) {
            double x;

            if (!json_is_number(v))
                return tune_fail(err, size, "%s.softcap: expected a number (the "
                                 "cap, e.g. 50; 0: none)", where);
            /* 0: none, as fa4_problem.softcap; a cap must fit a float. */
            x = json_number_value(v);
            if (!(x >= 0) || !isfinite((float)x) || (x > 0 && (float)x <= 0))
                return tune_fail(err, size, "%s.softcap: %g is out of range (0: "
                                 "none, else a cap above 0 that fits a float)",
                                 where, x);
            p->softcap = (float)x;
        } else {
            return tune_fail(err, size, "%s: unknown key \"%s\" (known: name dtype "
                             "batch seqlen_q seqlen_k heads_q heads_kv head_dim "
                             "head_dim_v causal window window_left window_right "
                             "softmax_scale return_lse varlen page_size softcap "
                             "attention_sinks)", where, key);
        }
        if (r)
            return -1;
    }
    if (!have_batch || !have_sq || !have_hq || !have_d)
        return tune_fail(err, size, "%s: \"%s\" is required", where,
                         !have_batch ? "batch" : !have_sq ? "seqlen_q"
                         : !have_hq ? "heads_q" : "head_dim");
    if (!have_sk)
        p->seqlen_k = p->seqlen_q;
    if (!have_hkv)
        p->heads_kv = p->heads_q;
    if (p->causal && !have_wr)
        p->window_right = 0;
    return 0;
}

int problems_add_json(problem_list *list, const char *path, char *err,
                      size_t err_size)
{
    json_error_t jerr;
    json_t *root, *arr;
    size_t i;
    int rc = -1;

    if (!(root = json_load_file(path, 0, &jerr)))
        return tune_fail(err, err_size, "%s:%d:%d: %s", path, jerr.line,
                         jerr.column, jerr.text);
    arr = json_is_object(root) ? json_object_get(root, "problems") : root;
    if (!json_is_array(arr)) {
        tune_fail(err, err_size, "%s: expected an array of problems, or an object "
                  "with a \"problems\" array", path);
        goto done;
    }
    if (json_array_size(arr) == 0) {
        tune_fail(err, err_size, "%s: the list of problems is empty", path);
        goto done;
    }
    for (i = 0; i < json_array_size(arr); i++) {
        fa4_problem p = FA4_PROBLEM_INIT;
        char where[64], name[64], why[512];

        snprintf(where, sizeof where, "problems[%zu]", i);
        snprintf(name, sizeof name, "%s", where);
        if (json_problem(&p, name, sizeof name, json_array_get(arr, i), where,
                         why, sizeof why) != 0) {
            tune_fail(err, err_size, "%s: %s", path, why);
            goto done;
        }
        if (problems_append(list, &p, name) != 0) {
            tune_fail(err, err_size, "out of memory");
            goto done;
        }
    }
    rc = 0;
done:
    json_decref(root);
    return rc;
}

/* ------------------------------------------------------------ the list */

int problems_build(problem_list *list, const tune_args *args, char *err,
                   size_t err_size)
{
    int i;

    if (args->preset) {
        fa4_dtype dt = (args->shape_set & TUNE_SHAPE_DTYPE) ? args->shape.dtype
                                                            : FA4_DTYPE_BF16;
        if (problems_add_preset(list, args->preset, dt, err, err_size) != 0)
            return -1;
        for (i = 0; i < list->count; i++) {
            fa4_problem *p = &list->items[i].problem;
            p->return_lse = args->shape.return_lse;
            if (args->shape_set & TUNE_SHAPE_VARLEN)
                p->varlen = 1;
            if (args->shape_set & TUNE_SHAPE_PAGE_SIZE)
                p->page_size = args->shape.page_size;
            if (args->shape_set & TUNE_SHAPE_SOFTCAP)
                p->softcap = args->shape.softcap;
            if (args->shape_set & TUNE_SHAPE_SINKS)
                p->attention_sinks = 1;
        }
    } else if (args->problems_file) {
        if (problems_add_json(list, args->problems_file, err, err_size) != 0)
            return -1;
    } else if (problems_append(list, &args->shape, "cli") != 0) {
        return tune_fail(err, err_size, "out of memory");
    }
    for (i = 0; i < list->count; i++) {
        char why[512], desc[160];
        fa4_status st = fa4_problem_check(&list->items[i].problem, why,
                                          sizeof why);
        if (st != FA4_OK)
            return tune_fail(err, err_size, "%s%s%s (%s): %s%s",
                             args->problems_file ? args->problems_file : "",
                             args->problems_file ? ": " : "", list->items[i].name,
                             problems_describe(&list->items[i].problem, desc,
                                          sizeof desc), why,
                             st == FA4_ENOTSUP ? " (not supported)" : "");
    }
    problems_shard(list, args->shard_index, args->shard_count);
    return 0;
}

int problems_shard_of(int index, int count)
{
    return count > 0 ? index % count : 0;
}

void problems_shard(problem_list *list, int index, int count)
{
    int i, n = 0;

    if (count <= 1)
        return;
    for (i = 0; i < list->count; i++)
        if (problems_shard_of(list->items[i].index, count) == index)
            list->items[n++] = list->items[i];
    list->count = n;
}

void problem_list_free(problem_list *list)
{
    free(list->items);
    memset(list, 0, sizeof *list);
}

/* ----------------------------------------------------------- FLOPs, text */

/* Keys visible to query I: [lo, hi] clipped to [0, sk), as fa4.h defines. */
static double visible_keys(const fa4_problem *p, long i)
{
    long diag = (long)p->seqlen_k - p->seqlen_q;
    long hi = p->seqlen_k - 1, lo = 0;
    int wr = p->causal ? 0 : p->window_right;

    if (wr >= 0 && i + diag + wr < hi)
        hi = i + diag + wr;
    if (p->window_left >= 0 && i + diag - p->window_left > lo)
        lo = i + diag - p->window_left;
    return hi >= lo ? (double)(hi - lo + 1) : 0.0;
}

double problems_flops(const fa4_problem *p)
{
    int dv = p->head_dim_v ? p->head_dim_v : p->head_dim_qk;
    double per_pair = 2.0 * (p->head_dim_qk + dv);
    double pairs;
    long i;
    int windowed = p->window_left >= 0 ||
                   (!p->causal && p->window_right >= 0);

    if (!windowed && (!p->causal || p->seqlen_q == p->seqlen_k)) {
        pairs = (double)p->seqlen_q * p->seqlen_k;
        if (p->causal)
            pairs /= 2;
    } else {
        pairs = 0;
        for (i = 0; i < p->seqlen_q; i++)
            pairs += visible_keys(p, i);
    }
    return per_pair * pairs * p->batch * p->heads_q;
}

char *problems_describe(const fa4_problem *p, char *buf, size_t size)
{
    char dv[32] = "", win[48] = "", page[24] = "", cap[32] = "";

    if (p->head_dim_v && p->head_dim_v != p->head_dim_qk)
        snprintf(dv, sizeof dv, " dv=%d", p->head_dim_v);
    if (p->window_left >= 0 || (!p->causal && p->window_right >= 0))
        snprintf(win, sizeof win, " window=%d,%d", p->window_left,
                 p->window_right);
    if (p->page_size > 0)
        snprintf(page, sizeof page, " page=%d", p->page_size);
    if (p->softcap > 0)
        snprintf(cap, sizeof cap, " softcap=%g", (double)p->softcap);
    snprintf(buf, size, "%s b=%d sq=%d sk=%d hq=%d hkv=%d d=%d%s%s%s%s%s%s%s",
             tune_dtype_name(p->dtype), p->batch, p->seqlen_q, p->seqlen_k,
             p->heads_q, p->heads_kv, p->head_dim_qk, dv,
             p->causal ? " causal" : "", win, p->varlen ? " varlen" : "",
             page, cap, p->attention_sinks ? " sinks" : "");
    return buf;
}
