/*
** report.c -- fa4-tune's output: progress line, tables, JSON.
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "problems.h"
#include "report.h"

/* ------------------------------------------------------------- progress */

void progress_init(progress *p, int enabled)
{
    memset(p, 0, sizeof *p);
    p->enabled = enabled;
    p->start = search_now();
    pthread_mutex_init(&p->lock, NULL);
}

void progress_destroy(progress *p)
{
    progress_lock(p);
    progress_unlock(p);
    pthread_mutex_destroy(&p->lock);
}

void progress_add(progress *p, long n)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->total += n;
    pthread_mutex_unlock(&p->lock);
}

/* Write a duration as "1h02m", "3m05s" or "42s". */
static void format_eta(char *buf, size_t size, double s)
{
    long t = (long)(s + 0.5);

    if (t >= 3600)
        snprintf(buf, size, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        snprintf(buf, size, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, size, "%lds", t);
}

void progress_step(progress *p, const char *label)
{
    char bar[31], eta[32] = "?";
    double elapsed;
    int fill, i;

    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->done++;
    if (p->enabled) {
        long total = p->total > p->done ? p->total : p->done;
        elapsed = search_now() - p->start;
        fill = (int)(30.0 * p->done / (total ? total : 1));
        for (i = 0; i < 30; i++)
            bar[i] = i < fill ? '#' : ' ';
        bar[30] = '\0';
        if (p->done > 0)
            format_eta(eta, sizeof eta, elapsed / p->done * (total - p->done));
        fprintf(stderr, "\r\033[K[%s] %ld/%ld ETA %s %.40s", bar, p->done,
                total, eta, label ? label : "");
        fflush(stderr);
        p->shown = 1;
    }
    pthread_mutex_unlock(&p->lock);
}

void progress_lock(progress *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    if (p->shown) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
        p->shown = 0;
    }
}

void progress_unlock(progress *p)
{
    if (p)
        pthread_mutex_unlock(&p->lock);
}

/* ---------------------------------------------------------------- tables */

char *report_gain(char *buf, size_t size, double ms, double default_ms)
{
    if (ms > 0 && default_ms > 0)
        snprintf(buf, size, "%+.1f%%", (default_ms / ms - 1.0) * 100.0);
    else
        snprintf(buf, size, "n/a");
    return buf;
}

/* The default's median, 0 when it was not measured. */
static double default_ms(const search_result *r)
{
    if (r->default_index < 0 || r->trials[r->default_index].state != TRIAL_TIMED)
        return 0;
    return search_trial_ms(&r->trials[r->default_index]);
}

/* Indices of timed trials, fastest first, into OUT; returns count. */
static int ranked(const search_result *r, int *out)
{
    int i, j, n = 0;

    for (i = 0; i < r->ntrials; i++)
        if (r->trials[i].state == TRIAL_TIMED)
            out[n++] = i;
    for (i = 1; i < n; i++)
        for (j = i; j > 0 && search_trial_ms(&r->trials[out[j - 1]]) >
                             search_trial_ms(&r->trials[out[j]]); j--) {
            int x = out[j];
            out[j] = out[j - 1];
            out[j - 1] = x;
        }
    /* the winner chosen on re-timed medians leads */
    if (r->winner >= 0 && n && out[0] != r->winner)
        for (i = 1; i < n; i++)
            if (out[i] == r->winner) {
                memmove(&out[1], &out[0], (size_t)i * sizeof *out);
                out[0] = r->winner;
                break;
            }
    return n;
}

/* Print the header line and the space summary of R. */
static void print_header(FILE *out, const search_result *r)
{
    char desc[192];
    int i;

    fprintf(out, "== %s: %s\n", r->name,
            problems_describe(&r->problem, desc, sizeof desc));
    fprintf(out, "   space: %d configs, %d fit the budgets", r->considered,
            r->fit);
    if (r->ndrops)
        fprintf(out, "; dropped %d:", r->considered - r->fit);
    fprintf(out, "\n");
    for (i = 0; i < r->ndrops; i++)
        fprintf(out, "     %5d  %s\n", r->drops[i].count, r->drops[i].reason);
    if (r->family_notes[0])
        fprintf(out, "   not run: %s\n", r->family_notes);
}

/* What a trial is besides a candidate, after SEP: the default, the
   config in use; "" when neither. */
static const char *trial_marks(char *buf, size_t size, const char *sep, const search_trial *t)
{
    if (!t->is_default && !t->is_incumbent)
        return "";
    snprintf(buf, size, "%s(%s%s%s)", sep, t->is_default ? "default" : "",
             t->is_default && t->is_incumbent ? ", " : "", t->is_incumbent ? "in use" : "");
    return buf;
}

/* One row of the timing table. */
static void print_row(FILE *out, const char *rank, const search_result *r,
                      const search_trial *t, double def)
{
    const timing_result *tr = search_trial_timing(t);
    char cfg[256], gain[32], marks[32];
    double ms = search_trial_ms(t);

    fprintf(out, " %5s %10.4f %9.4f %9.4f %8.1f %10s  %s%s\n", rank, ms,
            tr->min_ms, tr->max_ms, r->flops / (ms * 1e-3) / 1e12,
            report_gain(gain, sizeof gain, ms, def),
            fa4_config_format(&t->config, cfg, sizeof cfg),
            trial_marks(marks, sizeof marks, "  ", t));
}

/* One line on the winner stored before this run, when there was one. */
static void report_previous(FILE *out, const search_result *r)
{
    switch (r->previous) {
    case PREVIOUS_NONE:
        break;
    case PREVIOUS_SAME:
        fprintf(out, "   repeat run: the same winner as the one stored before\n");
        break;
    case PREVIOUS_WITHIN_SPREAD:
        fprintf(out, "   repeat run: a different winner; the stored one [%s] measured %.4f ms now, "
                "within the new winner's min..max spread\n", r->previous_config, r->previous_ms);
        break;
    case PREVIOUS_OUTSIDE_SPREAD:
        fprintf(out, "   repeat run: a different winner; the stored one [%s] measured %.4f ms now, "
                "outside the new winner's spread: the new one is faster\n", r->previous_config,
                r->previous_ms);
        break;
    case PREVIOUS_NOT_MEASURED:
        fprintf(out, "   repeat run: a different winner; the stored one [%s] was not measured "
                "in this run (cut, failed or outside the space)\n", r->previous_config);
        break;
    }
}

/* The confirmation's outcome as a word (JSON) and a sentence (table). */
static const char *confirm_word(const search_result *r)
{
    switch (r->confirm) {
    case CONFIRM_HELD: return "held";
    case CONFIRM_REJECTED: return "rejected";
    case CONFIRM_DEFAULT_WON: return "default_won";
    case CONFIRM_NO_DEFAULT: return "no_default";
    case CONFIRM_IN_USE_WON: return "in_use_won";
    case CONFIRM_NOT_RUN: break;
    }
    return "not_run";
}

/* What the winner was confirmed against, as the table and JSON name it. */
static const char *rival_name(const search_result *r, int json)
{
    if (r->rival_index >= 0 && r->trials[r->rival_index].is_incumbent &&
        !r->trials[r->rival_index].is_default)
        return json ? "in_use" : "in use";
    return "default";
}

/* The search's and the confirmation's figures, and what was stored. */
static void report_confirm(FILE *out, const search_result *r, double def)
{
    char gain[32], cfg[256], marks[32];

    switch (r->confirm) {
    case CONFIRM_HELD:
    case CONFIRM_REJECTED:
        fprintf(out, "   search:    winner %.4f ms, default %.4f ms (%s)\n",
                r->winner_ms, def, report_gain(gain, sizeof gain, r->winner_ms,
                                               def));
        fprintf(out, "   confirmed: winner %.4f ms, %s %.4f ms over %d interleaved "
                "rounds on fresh buffers; faster in %d of them, per-round gain %+.1f%% "
                "(%+.1f%% .. %+.1f%%): %s\n",
                r->confirm_ms, rival_name(r, 0), r->confirm_rival_ms, r->confirm_rounds,
                r->confirm_wins, 100 * r->confirm_gain, 100 * r->confirm_gain_lo,
                100 * r->confirm_gain_hi,
                r->confirm == CONFIRM_HELD ? "the gain holds"
                : "the gain does not hold in every round");
        break;
    case CONFIRM_DEFAULT_WON:
        fprintf(out, "   the heuristic default is the fastest\n");
        break;
    case CONFIRM_NO_DEFAULT:
        fprintf(out, "   not confirmed: the heuristic default was not measured\n");
        break;
    case CONFIRM_IN_USE_WON:
        fprintf(out, "   the config in use is the fastest: kept\n");
        break;
    case CONFIRM_NOT_RUN:
        if (r->winner >= 0 && !r->interrupted)
            fprintf(out, "   not confirmed (--confirm 0)\n");
        break;
    }
    if (r->winner_stored && r->stored_index >= 0)
        fprintf(out, "   stored: %s%s at %.4f ms\n",
                fa4_config_format(&r->trials[r->stored_index].config, cfg,
                                  sizeof cfg),
                trial_marks(marks, sizeof marks, " ", &r->trials[r->stored_index]),
                r->stored_ms);
}

void report_tune(FILE *out, const search_result *r, int runners_up)
{
    int *order = malloc((size_t)(r->ntrials ? r->ntrials : 1) * sizeof *order);
    int n, i, shown_default = 0;
    double def = default_ms(r);

    print_header(out, r);
    fprintf(out, "   built %d (%d spill, %d failed to compile); %d wrong, "
            "%d failed to launch; %d timed\n", r->compiled, r->spilled,
            r->compile_failed, r->wrong, r->launch_failed, r->timed);
    if (!order)
        return;
    n = ranked(r, order);
    if (n > 0) {
        fprintf(out, " %5s %10s %9s %9s %8s %10s  %s\n", "rank", "median ms",
                "min ms", "max ms", "TFLOP/s", "vs default", "config");
        for (i = 0; i < n && i <= runners_up; i++) {
            char rank[16];
            snprintf(rank, sizeof rank, "%d", i + 1);
            print_row(out, rank, r, &r->trials[order[i]], def);
            shown_default |= r->trials[order[i]].is_default;
        }
        if (!shown_default && def > 0)
            for (i = 0; i < n; i++)
                if (r->trials[order[i]].is_default) {
                    char rank[16];
                    snprintf(rank, sizeof rank, "%d", i + 1);
                    print_row(out, rank, r, &r->trials[order[i]], def);
                }
    }
    if (r->default_index >= 0 && r->trials[r->default_index].state == TRIAL_FAILED)
        fprintf(out, "   the heuristic default failed: %s\n",
                r->trials[r->default_index].failure);
    if (r->cut)
        fprintf(out, "   search cut by %s: the best so far is kept\n",
                r->cut_reason);
    if (r->interrupted)
        fprintf(out, "   interrupted: trials measured so far are stored; no "
                "winner stored for this problem\n");
    if (r->winner >= 0)
        report_confirm(out, r, def);
    if (r->status != FA4_OK || (r->winner < 0 && r->error[0]))
        fprintf(out, "   error: %s\n", r->error);
    else if (r->winner >= 0 && !r->winner_stored)
        fprintf(out, "   winner not stored\n");
    if (r->winner >= 0)
        report_previous(out, r);
    free(order);
}

void report_space(FILE *out, const search_result *r, const device_limits *dev)
{
    int i;

    fprintf(out, "device: %s (%s, %d KiB smem per block, %d regs per SM)\n",
            dev->name, dev->arch, dev->smem_per_block_optin / 1024,
            dev->regs_per_sm);
    print_header(out, r);
    fprintf(out, " %4s %9s %6s %7s  %s\n", "#", "smem B", "regs~", "threads",
            "config");
    for (i = 0; i < r->ntrials; i++) {
        const search_trial *t = &r->trials[i];
        char cfg[256];
        fprintf(out, " %4d %9d %6d %7d  %s%s\n", i + 1, t->layout.smem_bytes,
                t->layout.regs_estimate, t->layout.threads,
                fa4_config_format(&t->config, cfg, sizeof cfg),
                t->is_default ? "  (default)" : "");
    }
}

void report_dryrun(FILE *out, const search_result *r, const device_limits *dev)
{
    int i, ok = 0;

    fprintf(out, "target: %s (%s)\n", dev->name, dev->arch);
    print_header(out, r);
    fprintf(out, " %4s %9s %6s %5s %6s %10s  %s\n", "#", "smem B", "regs",
            "spill", "regs~", "compile ms", "config / result");
    for (i = 0; i < r->ntrials; i++) {
        const search_trial *t = &r->trials[i];
        char cfg[256], regs[16] = "-", spill[16] = "-";
        if (t->state == TRIAL_SKIPPED)
            continue;
        if (t->regs >= 0)
            snprintf(regs, sizeof regs, "%d", t->regs);
        if (t->spill_bytes >= 0)
            snprintf(spill, sizeof spill, "%d", t->spill_bytes);
        fprintf(out, " %4d %9d %6s %5s %6d %10.0f  %s%s\n", i + 1,
                t->layout.smem_bytes, regs, spill, t->layout.regs_estimate,
                t->compile_ms, fa4_config_format(&t->config, cfg, sizeof cfg),
                t->is_default ? "  (default)" : "");
        if (t->state == TRIAL_FAILED)
            fprintf(out, " %4s %9s  -> %s\n", "", "", t->failure);
        else
            ok++;
    }
    fprintf(out, "   compiled %d of %d (%d spill, %d failed)%s%s\n", ok,
            r->compiled + r->spilled + r->compile_failed, r->spilled,
            r->compile_failed, r->cut ? "; cut by " : "",
            r->cut ? r->cut_reason : "");
}

/* ------------------------------------------------------------------ JSON */

/* The problem fields of P as a JSON object. */
static json_t *problem_json(const fa4_problem *p)
{
    return json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:b, s:i, s:i,"
                     " s:f, s:b, s:i, s:f, s:b}",
                     "dtype", tune_dtype_name(p->dtype), "batch", p->batch,
                     "seqlen_q", p->seqlen_q, "seqlen_k", p->seqlen_k,
                     "heads_q", p->heads_q, "heads_kv", p->heads_kv,
                     "head_dim_qk", p->head_dim_qk,
                     "head_dim_v", p->head_dim_v ? p->head_dim_v : p->head_dim_qk,
                     "causal", p->causal, "window_left", p->window_left,
                     "window_right", p->window_right,
                     "softmax_scale", (double)p->softmax_scale,
                     "varlen", p->varlen, "page_size", p->page_size,
                     "softcap", (double)p->softcap,
                     "attention_sinks", p->attention_sinks);
}

/* One trial of R as JSON: config text, layout, and what WHAT asks for. */
static json_t *trial_json(const search_result *r, const search_trial *t,
                          const char *what, double def)
{
    char cfg[256];
    json_t *o = json_pack("{s:s, s:i, s:i, s:i, s:b, s:b}",
                          "config", fa4_config_format(&t->config, cfg, sizeof cfg),
                          "smem_bytes", t->layout.smem_bytes,
                          "regs_estimate", t->layout.regs_estimate,
                          "threads", t->layout.threads,
                          "default", t->is_default,
                          "in_use", t->is_incumbent);

    if (!o)
        return NULL;
    if (!strcmp(what, "dry-run")) {
        json_object_set_new(o, "regs", json_integer(t->regs));
        json_object_set_new(o, "spill_bytes", json_integer(t->spill_bytes));
        json_object_set_new(o, "compile_ms", json_real(t->compile_ms));
    }
    if (!strcmp(what, "tune") && t->state == TRIAL_TIMED) {
        const timing_result *tr = search_trial_timing(t);
        double ms = search_trial_ms(t);
        json_object_set_new(o, "median_ms", json_real(ms));
        json_object_set_new(o, "min_ms", json_real(tr->min_ms));
        json_object_set_new(o, "max_ms", json_real(tr->max_ms));
        json_object_set_new(o, "reps", json_integer(tr->reps));
        json_object_set_new(o, "groups", json_integer(tr->groups));
        json_object_set_new(o, "tflops", json_real(r->flops / (ms * 1e-3) / 1e12));
        json_object_set_new(o, "rel_err", json_real(t->rel_err));
        json_object_set_new(o, "gain_over_default",
                            def > 0 ? json_real(def / ms - 1.0) : json_null());
    }
    if (t->state == TRIAL_FAILED)
        json_object_set_new(o, "failure", json_string(t->failure));
    return o;
}

json_t *report_phases_json(const search_phases *ph)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:f}", "prepare", ph->prepare,
                     "waiting", ph->waiting, "loading", ph->loading,
                     "timing", ph->timing, "database", ph->database);
}

json_t *report_builds_json(const search_phases *ph)
{
    return json_pack("{s:i, s:i, s:f, s:f, s:f, s:f}", "compiles", ph->compiles,
                     "reused", ph->reused, "compile", ph->compile,
                     "slot_wait", ph->slot_wait, "shared_wait", ph->shared_wait,
                     "cache_io", ph->cache_io);
}

json_t *report_json(const search_result *r, const char *what, int runners_up)
{
    json_t *o, *drops, *arr;
    double def = default_ms(r);
    int i;

    o = json_pack("{s:s, s:i, s:o, s:f}", "name", r->name, "index", r->index,
                  "problem", problem_json(&r->problem), "flops", r->flops);
    if (!o)
        return NULL;
    drops = json_object();
    for (i = 0; i < r->ndrops; i++)
        json_object_set_new(drops, r->drops[i].reason,
                            json_integer(r->drops[i].count));
    json_object_set_new(o, "space", json_pack("{s:i, s:i, s:o, s:s?}",
                        "considered", r->considered, "fit", r->fit,
                        "dropped", drops, "not_run",
                        r->family_notes[0] ? r->family_notes : NULL));
    json_object_set_new(o, "counts", json_pack(
        "{s:i, s:i, s:i, s:i, s:i, s:i}", "compiled", r->compiled,
        "spilled", r->spilled, "compile_failed", r->compile_failed,
        "wrong", r->wrong, "launch_failed", r->launch_failed,
        "timed", r->timed));
    arr = json_array();
    if (!strcmp(what, "tune")) {
        int *order = malloc((size_t)(r->ntrials ? r->ntrials : 1) * sizeof *order);
        int n = order ? ranked(r, order) : 0;
        json_object_set_new(o, "winner", n ? trial_json(r, &r->trials[order[0]],
                                                        what, def)
                                           : json_null());
        for (i = 1; i < n && i <= runners_up; i++)
            json_array_append_new(arr, trial_json(r, &r->trials[order[i]],
                                                  what, def));
        json_object_set_new(o, "runners_up", arr);
        json_object_set_new(o, "default", r->default_index >= 0
                            ? trial_json(r, &r->trials[r->default_index], what, def)
                            : json_null());
        json_object_set_new(o, "stored", json_boolean(r->winner_stored));
        if (r->winner >= 0) {
            char cfg[256];
            json_t *c = json_pack("{s:s, s:f, s:o}", "state", confirm_word(r),
                                  "search_ms", r->winner_ms,
                                  "search_default_ms",
                                  def > 0 ? json_real(def) : json_null());
            if (r->confirm == CONFIRM_HELD || r->confirm == CONFIRM_REJECTED) {
                json_object_set_new(c, "winner_ms", json_real(r->confirm_ms));
                json_object_set_new(c, "against", json_string(rival_name(r, 1)));
                json_object_set_new(c, "rival_ms", json_real(r->confirm_rival_ms));
                if (!strcmp(rival_name(r, 1), "default"))
                    json_object_set_new(c, "default_ms", json_real(r->confirm_rival_ms));
                json_object_set_new(c, "gain", json_real(r->confirm_gain));
                json_object_set_new(c, "spread", json_real(r->confirm_spread));
                json_object_set_new(c, "gain_lo", json_real(r->confirm_gain_lo));
                json_object_set_new(c, "gain_hi", json_real(r->confirm_gain_hi));
                json_object_set_new(c, "wins", json_integer(r->confirm_wins));
                json_object_set_new(c, "rounds", json_integer(r->confirm_rounds));
            }
            json_object_set_new(o, "confirmation", c);
            if (r->winner_stored && r->stored_index >= 0) {
                json_object_set_new(o, "stored_config", json_string(
                    fa4_config_format(&r->trials[r->stored_index].config, cfg,
                                      sizeof cfg)));
                json_object_set_new(o, "stored_ms", json_real(r->stored_ms));
            }
        }
        if (r->previous != PREVIOUS_NONE) {
            static const char *const kinds[] = { "none", "same", "within_spread",
                                                 "outside_spread", "not_measured" };
            json_t *prev = json_pack("{s:s, s:s}", "relation", kinds[r->previous],
                                     "config", r->previous_config);
            if (r->previous == PREVIOUS_WITHIN_SPREAD || r->previous == PREVIOUS_OUTSIDE_SPREAD)
                json_object_set_new(prev, "median_ms", json_real(r->previous_ms));
            json_object_set_new(o, "previous_winner", prev);
        }
        json_object_set_new(o, "seconds", json_real(r->seconds));
        json_object_set_new(o, "phases", report_phases_json(&r->phases));
        json_object_set_new(o, "builds", report_builds_json(&r->phases));
        free(order);
    } else {
        for (i = 0; i < r->ntrials; i++)
            if (strcmp(what, "dry-run") || r->trials[i].state != TRIAL_SKIPPED)
                json_array_append_new(arr, trial_json(r, &r->trials[i], what, def));
        json_object_set_new(o, "configs", arr);
    }
    json_object_set_new(o, "cut", r->cut ? json_string(r->cut_reason) : json_null());
    json_object_set_new(o, "interrupted", json_boolean(r->interrupted));
    json_object_set_new(o, "error", r->error[0] ? json_string(r->error) : json_null());
    return o;
}

json_t *report_device_json(const device_limits *dev)
{
    return json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:i}",
                     "name", dev->name, "arch", dev->arch, "cc", dev->cc,
                     "sm_count", dev->sm_count,
                     "smem_per_block_optin", dev->smem_per_block_optin,
                     "l2_bytes", dev->l2_bytes,
                     "driver_version", dev->driver_version,
                     "nvrtc_version", dev->nvrtc_version);
}
