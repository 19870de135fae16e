/*
** verify.c -- fa4-tune verify: re-time every stored winner of this GPU
** model against the heuristic default through the public API
** (fa4_plan_create with each config, fa4_forward, the two timed in
** alternation as the tune's confirmation does) and report those whose
** gain no longer holds: a driver update, another clock or thermal state,
** a kernel change.  --drop removes those that lost (a median gain below
** 1%; one faster in the median but not in every round is kept, as the
** tune keeps a config in use that is not beaten in every round), so
** lookups fall back to the next entry or the heuristic.  See fa4-tune(1).
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "context.h"
#include "config.h"
#include "db.h"
#include "db_verify.h"
#include "commands.h"
#include "problems.h"
#include "timing.h"

/* What verify found for one winner. */
typedef enum verdict {
    V_HOLDS,        /* the winner still beats the default, round by round */
    V_LOST,         /* it does not */
    V_FAILED,       /* its plan cannot be made or run any more */
    V_IS_DEFAULT,   /* the stored config is the heuristic's: nothing to gain */
    V_STALE,        /* tuned with other kernel sources: used last */
    V_SKIPPED,      /* the default does not build: nothing to time against */
    V_NOISY         /* faster in the median, not in every round: time again */
} verdict;

static const char *const verdict_word[] = {
    "holds", "lost", "failed", "default", "stale", "skipped", "noisy"
};

typedef struct vrow {
    verdict v;
    fa4_problem problem;
    double winner_ms, default_ms, gain, spread;
    char default_config[256];
    char note[512];
    int dropped;
} vrow;

/* The cap a softcap winner is timed with: the key records only that the
** scores are capped (the variant), not the cap, which does not change the
** kernel's work.  Gemma 2's attention cap. */
#define VERIFY_SOFTCAP 50.0f

/* The problem to time W at: its tuned shape when a trial recorded one,
** else the bucket lengths, 16 query heads (or the GQA group) and the
** batch of the work bucket (without one: 16,384 tokens); varlen, paged,
** softcap and sinks as its key (the timing lays them out, with the sink
** logits, tuner/layout.h). */
fa4_problem winner_problem(const db_verify_winner *w)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    int group = w->gqa_group > 0 ? w->gqa_group : 1;

    p.dtype = (fa4_dtype)w->dtype;
    p.head_dim_qk = w->head_dim_qk;
    p.head_dim_v = w->head_dim_v;
    p.causal = w->causal;
    p.varlen = w->varlen;
    p.page_size = w->paged ? w->page_size : 0;
    p.window_left = w->window_left;
    p.window_right = w->causal ? 0 : w->window_right;
    p.softcap = w->softcap ? VERIFY_SOFTCAP : 0.0f;
    p.attention_sinks = w->sinks != 0;
    if (w->batch > 0) {
        p.batch = w->batch;
        p.heads_q = w->heads_q;
        p.seqlen_q = w->seqlen_q;
        p.seqlen_k = w->seqlen_k;
    } else {
        p.seqlen_q = w->seqlen_q_bucket;
        p.seqlen_k = w->seqlen_k_bucket;
        p.heads_q = group >= 16 ? group : 16 / group * group;
        if (w->work_bucket > 0)         /* bucket(batch * heads_kv) */
            p.batch = w->work_bucket / (p.heads_q / group) > 0
                      ? w->work_bucket / (p.heads_q / group) : 1;
        else
            p.batch = p.seqlen_q >= 16384 ? 1 : 16384 / p.seqlen_q;
    }
    p.heads_kv = p.heads_q / group > 0 ? p.heads_q / group : 1;
    return p;
}

/*
** Time winner W against the heuristic on CTX (HCTX: the same device
** without a database, whose plans get the heuristic's config) and fill
** ROW.  Returns FA4_ECUDA when the device is unusable (stop), else FA4_OK.
*/
static fa4_status verify_winner(vrow *row, fa4_context *ctx,
                                fa4_context *hctx, const db_verify_winner *w,
                                const tune_args *a, uint64_t *seed)
{
    fa4_plan_options po = FA4_PLAN_OPTIONS_INIT;
    fa4_config cfg = FA4_CONFIG_INIT, def = FA4_CONFIG_INIT;
    fa4_plan *plans[2] = { NULL, NULL }, *hplan = NULL;
    timing_buffers tb;
    timing_pair tp;
    char why[512];
    fa4_status st = FA4_OK;

    memset(&tb, 0, sizeof tb);
    row->problem = winner_problem(w);
    if (w->stale) {
        row->v = V_STALE;
        snprintf(row->note, sizeof row->note, "tuned with other %s kernel "
                 "sources (fa4-tune check lists stale rows)",
                 config_family_name((fa4_family)w->family));
        return FA4_OK;
    }
    row->v = V_FAILED;
    if (config_parse(&cfg, w->config, why, sizeof why) != FA4_OK) {
        snprintf(row->note, sizeof row->note, "config does not parse: %.400s", why);
        return FA4_OK;
    }
    if (fa4_plan_create(&hplan, hctx, &row->problem, NULL) != FA4_OK) {
        snprintf(row->note, sizeof row->note, "no heuristic plan: %s",
                 fa4_context_errmsg(hctx));
        return FA4_OK;
    }
    fa4_plan_config(hplan, &def, NULL);
    fa4_plan_destroy(hplan);
    fa4_config_format(&def, row->default_config, sizeof row->default_config);
    if (config_equal(&cfg, &def)) {
        row->v = V_IS_DEFAULT;
        snprintf(row->note, sizeof row->note, "the stored config is the "
                 "heuristic default");
        return FA4_OK;
    }
    po.config = &cfg;
    if (fa4_plan_create(&plans[0], ctx, &row->problem, &po) != FA4_OK) {
        snprintf(row->note, sizeof row->note, "the stored config no longer "
                 "builds: %s", fa4_context_errmsg(ctx));
        return FA4_OK;
    }
    po.config = &def;
    if (fa4_plan_create(&plans[1], ctx, &row->problem, &po) != FA4_OK) {
        snprintf(row->note, sizeof row->note, "the default does not build: %s",
                 fa4_context_errmsg(ctx));
        row->v = V_SKIPPED;
        goto done;
    }
    if ((st = context_push(ctx)) != FA4_OK) {
        snprintf(row->note, sizeof row->note, "%s", fa4_context_errmsg(ctx));
        goto done;
    }
    st = timing_buffers_create(&tb, ctx, &row->problem,
                               a->l2_warm ? TIMING_L2_WARM : TIMING_L2_ROTATE,
                               seed, why, sizeof why);
    if (st == FA4_OK)
        st = timing_interleaved(&tp, ctx, (const fa4_plan *const *)plans, &tb,
                                5, a->reps, a->confirm_rounds > 0
                                ? a->confirm_rounds : 6, why, sizeof why);
    timing_buffers_free(&tb);
    context_pop(ctx);
    if (st != FA4_OK) {
        snprintf(row->note, sizeof row->note, "timing: %.400s", why);
        if (st != FA4_ECUDA)
            st = FA4_OK;
        goto done;
    }
    row->winner_ms = tp.ms[0];
    row->default_ms = tp.ms[1];
    row->gain = tp.gain;
    row->spread = tp.gain_hi - tp.gain_lo;
    switch (timing_pair_verdict(&tp)) {
    case TIMING_HOLDS: row->v = V_HOLDS; break;
    case TIMING_NOISY: row->v = V_NOISY; break;
    default:           row->v = V_LOST; break;
    }
done:
    fa4_plan_destroy(plans[0]);
    fa4_plan_destroy(plans[1]);
    return st;
}

/* A row of the table. */
static void print_row(FILE *out, const db_verify_winner *w, const vrow *r)
{
    char desc[192], gain[32] = "-", wms[32] = "-", dms[32] = "-";

    if (r->v == V_HOLDS || r->v == V_LOST || r->v == V_NOISY) {
        snprintf(wms, sizeof wms, "%.4f", r->winner_ms);
        snprintf(dms, sizeof dms, "%.4f", r->default_ms);
        snprintf(gain, sizeof gain, "%+.1f%%/%.1f%%", 100 * r->gain,
                 100 * r->spread);
    }
    fprintf(out, "%-8s %10s %10s %14s  %s%s\n", verdict_word[r->v], wms, dms,
            gain, problems_describe(&r->problem, desc, sizeof desc),
            w->same_fingerprint ? "" : "  [another driver/NVRTC]");
    fprintf(out, "         stored:  %s%s\n", w->config,
            r->dropped ? "  (dropped)" : "");
    if (r->default_config[0] && r->v != V_IS_DEFAULT)
        fprintf(out, "         default: %s\n", r->default_config);
    if (r->note[0] && r->v != V_HOLDS && r->v != V_LOST)
        fprintf(out, "         %s\n", r->note);
}

/* A row as JSON (new reference). */
static json_t *row_json(const db_verify_winner *w, const vrow *r)
{
    char desc[192];
    json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:b, s:s, s:b}",
                          "verdict", verdict_word[r->v],
                          "problem", problems_describe(&r->problem, desc,
                                                       sizeof desc),
                          "config", w->config, "family", w->family,
                          "same_fingerprint", w->same_fingerprint,
                          "device", w->fingerprint, "dropped", r->dropped);

    if (!o)
        return NULL;
    if (w->median_ms > 0)
        json_object_set_new(o, "stored_ms", json_real(w->median_ms));
    if (r->default_config[0])
        json_object_set_new(o, "default_config", json_string(r->default_config));
    if (r->v == V_HOLDS || r->v == V_LOST || r->v == V_NOISY) {
        json_object_set_new(o, "winner_ms", json_real(r->winner_ms));
        json_object_set_new(o, "default_ms", json_real(r->default_ms));
        json_object_set_new(o, "gain", json_real(r->gain));
        json_object_set_new(o, "spread", json_real(r->spread));
    }
    if (r->note[0])
        json_object_set_new(o, "note", json_string(r->note));
    return o;
}

int cmd_verify(const tune_args *a, FILE *out, FILE *err)
{
    fa4_context_options co = FA4_CONTEXT_OPTIONS_INIT;
    fa4_context *ctx = NULL, *hctx = NULL;
    db_verify_winner *ws = NULL;
    vrow *rows = NULL;
    char pathbuf[4096], why[1024];
    const char *path = tune_db_path(a, pathbuf, sizeof pathbuf, err);
    int n = 0, i, mine = 0, lost = 0, dropped = 0, rc = TUNE_EXIT_OK;
    uint64_t seed = a->seed_set ? a->seed
                    : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
    fa4_status st;

    if (!path)
        return TUNE_EXIT_FAIL;
    if (access(path, F_OK) != 0) {
        fprintf(err, "fa4-tune: verify: no database at %s (tune first, or "
                "give --db PATH)\n", path);
        return TUNE_EXIT_FAIL;
    }
    /* Any winners at all?  (Answers an empty database without a GPU.) */
    {
        if ((st = db_verify_list(&ws, &n, path, NULL, why, sizeof why)) != FA4_OK) {
            fprintf(err, "fa4-tune: verify: %s\n", why);
            return TUNE_EXIT_FAIL;
        }
        free(ws);
        ws = NULL;
        if (n == 0) {
            if (a->json)
                fprintf(out, "{\"database\": \"%s\", \"winners\": []}\n", path);
            else if (!a->quiet)
                fprintf(out, "no stored winners in %s: nothing to verify\n",
                        path);
            return TUNE_EXIT_OK;
        }
    }
    co.db_path = path;
    if ((st = fa4_context_create(&ctx, a->device, &co)) != FA4_OK) {
        fprintf(err, "fa4-tune: verify: %s device %d: %s\n",
                st == FA4_ENODEV ? "no CUDA" : "cannot use", a->device,
                fa4_context_last_error());
        return TUNE_EXIT_FAIL;
    }
    co.db_path = NULL;
    co.no_database = 1;
    if ((st = fa4_context_create(&hctx, a->device, &co)) != FA4_OK) {
        fprintf(err, "fa4-tune: verify: device %d: %s\n", a->device,
                fa4_context_last_error());
        rc = TUNE_EXIT_FAIL;
        goto done;
    }
    if ((st = db_verify_list(&ws, &n, path, &ctx->limits, why, sizeof why)) != FA4_OK) {
        fprintf(err, "fa4-tune: verify: %s\n", why);
        rc = TUNE_EXIT_FAIL;
        goto done;
    }
    if (!(rows = calloc((size_t)(n ? n : 1), sizeof *rows))) {
        fprintf(err, "fa4-tune: verify: out of memory\n");
        rc = TUNE_EXIT_FAIL;
        goto done;
    }
    if (!a->json && !a->quiet)
        fprintf(out, "fa4-tune %s: verifying %d winner%s for %s in %s; each "
                "against the heuristic default, %d interleaved rounds\n"
                "%-8s %10s %10s %14s  %s\n", fa4_version(), n, n == 1 ? "" : "s",
                ctx->limits.name, path, a->confirm_rounds > 0
                ? a->confirm_rounds : 6, "verdict", "winner ms", "default ms",
                "gain/range", "problem");
    for (i = 0; i < n; i++) {
        mine += ws[i].same_fingerprint;
        st = verify_winner(&rows[i], ctx, hctx, &ws[i], a, &seed);
        if (rows[i].v == V_LOST || rows[i].v == V_FAILED) {
            lost++;
            if (a->drop && st == FA4_OK &&
                db_verify_drop(path, &ws[i], why, sizeof why) == FA4_OK) {
                rows[i].dropped = 1;
                dropped++;
            } else if (a->drop && st == FA4_OK) {
                fprintf(err, "fa4-tune: verify: dropping a winner: %s\n", why);
                rc = TUNE_EXIT_FAIL;
            }
        }
        if (!a->json && !a->quiet) {
            print_row(out, &ws[i], &rows[i]);
            fflush(out);
        }
        if (st == FA4_ECUDA) {
            fprintf(err, "fa4-tune: verify: device %d stopped: %s\n", a->device,
                    rows[i].note);
            n = i + 1;
            rc = TUNE_EXIT_FAIL;
            break;
        }
    }
    if (a->json) {
        json_t *arr = json_array(), *doc;
        for (i = 0; i < n; i++)
            json_array_append_new(arr, row_json(&ws[i], &rows[i]));
        doc = json_pack("{s:s, s:s, s:o, s:o, s:i, s:i}", "tool", "fa4-tune",
                        "database", path, "device",
                        json_string(ctx->limits.name), "winners", arr,
                        "lost", lost, "dropped", dropped);
        json_dumpf(doc, out, JSON_INDENT(2));
        fputc('\n', out);
        json_decref(doc);
    } else if (!a->quiet) {
        fprintf(out, "%d winner%s verified (%d measured on this driver); %d no "
                "longer hold%s%s\n", n, n == 1 ? "" : "s", mine, lost,
                lost == 1 ? "s" : "", a->drop ? "" : lost ? " (--drop removes "
                "them)" : "");
        if (a->drop)
            fprintf(out, "dropped %d from %s\n", dropped, path);
    }
    if (lost > dropped && rc == TUNE_EXIT_OK)
        rc = TUNE_EXIT_FAIL;
done:
    free(ws);
    free(rows);
    fa4_context_destroy(hctx);
    fa4_context_destroy(ctx);
    return rc;
}
