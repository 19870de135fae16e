/*
** config.h -- kernel configs: the heuristic default per shape, the
** enumerator of a family's config space (budget-filtered, with counts of
** what was dropped and why), and the text form used by the CLI and DB.
*/
#ifndef FA4_CONFIG_H
#define FA4_CONFIG_H

#include "fa4.h"
#include "device.h"
#include "budget.h"

/* The most KV splits a config may ask for (config_validate) and a launch
** may choose (launch_sm80.c). */
#define CONFIG_MAX_SPLITS 128

/* The families DEV can run, best first, limited to those named in
** $FA4_FAMILIES when set; returns how many were written.  sm100 is listed
** on a 10.0 device without device_limits.sm100_opt_in too: budget_fit()
** refuses its configs there (FA4_ENOTSUP, saying how to opt in), so the
** heuristic passes it over and fa4-tune names it among those not run. */
int config_families(fa4_family out[3], const device_limits *dev);

/* How a user opts in to the sm100 family: the text budget_fit() and
** config_sm100_note() give. */
#define CONFIG_SM100_OPT_IN "set fa4_context_options.enable_sm100 = 1 or FA4_ENABLE_SM100=1"

/*
** The context warning DEV calls for, into BUF (at most SIZE bytes): on a
** compute capability 10.x GPU where the sm100 family will not be used (no
** opt-in, or not 10.0, the one sm_100a cubins run on), that it is built
** but unvalidated, that plans use the sm80 family, and how to opt in.
** Returns 1 when a warning was written, 0 (BUF "") when none is due.
*/
int config_sm100_note(char *buf, size_t size, const device_limits *dev);

/* config_families() in the order whose first default PROBLEM gets: the
** sm80 family first for its serving shapes (decode and speculative steps,
** pages under 16 rows, varlen queries over pages), except that on a
** device opted in to sm100 the decode shapes of the sm100 decode mode
** (budget_sm100_decode_suits()) keep sm100 first.  The library's
** heuristic and the tuner's default both come from here. */
int config_families_for(fa4_family out[3], const device_limits *dev, const fa4_problem *p);

/*
** The built-in default config of FAMILY for PROBLEM on DEV (chosen from
** measurements; see bench/NOTES.md).  It always fits when FA4_OK.
** FA4_ENOTSUP/FA4_ENOFIT with WHY when the family cannot run the problem.
*/
fa4_status config_default(fa4_config *out, const device_limits *dev,
                          const fa4_problem *problem, fa4_family family,
                          char *why, size_t why_size);

/* One reason configs were dropped, and how many. */
#define CONFIG_DROP_NUMS 12
typedef struct config_drop {
    char reason[256];  /* budget_fit's message with each number shown as
                          its range over the group: "smem 233472..301056 B
                          > opt-in limit 232448 B" */
    int count;
    char cls[192];     /* the message with numbers as '#': the group */
    int nnums;         /* numbers in the message (up to CONFIG_DROP_NUMS) */
    long long lo[CONFIG_DROP_NUMS], hi[CONFIG_DROP_NUMS];
} config_drop;

typedef struct config_space {
    fa4_config *configs;    /* those that fit, in a deterministic order */
    fa4_layout *layouts;    /* layouts[i] belongs to configs[i] */
    int count;
    int considered;         /* before the budget filter */
    config_drop drops[32];
    int ndrops;
} config_space;

/*
** Enumerate FAMILY's config space for PROBLEM on DEV into *OUT (release
** with config_space_free()).  Every emitted config passed budget_fit().
** FA4_ENOMEM, or FA4_ENOTSUP with WHY when the family cannot run PROBLEM.
*/
fa4_status config_enumerate(config_space *out, const device_limits *dev,
                            const fa4_problem *problem, fa4_family family,
                            char *why, size_t why_size);
void config_space_free(config_space *space);

/*
** Parse the text form written by fa4_config_format() ("sm90 bm=128 bn=128
** stages=2 ...") into *OUT.  Unknown keys or bad values: FA4_EINVAL with
** WHY.
*/
fa4_status config_parse(fa4_config *out, const char *text, char *why,
                        size_t why_size);

/*
** FA4_OK when every field of C is in its range, whatever the family:
** family 80/90/100, bm and bn multiples of 16 up to 256, stages 0..8,
** swizzle 32/64/128 (bm, bn, stages, swizzle 0: the family chooses, as
** FA4_CONFIG_INIT leaves them), fused_kv 0/1, q_tiles 1/2, warps 0..32 (0: derived),
** consumer_wgs 0..4, producer/consumer regs 0 or multiples of 8 in
** 24..256, cluster 1..16, exp2_emu_pct 0..100, rescale_threshold 0..127,
** pingpong 0/1, scheduler a known one, splits 0..128, pack_gqa 0/1,
** kv_split_warps 0/1, late_k_release 0/1 (1 for sm90 only), tanh_poly_pct
** -1..100 (above 0 for sm90 only).  Otherwise
** FA4_EINVAL with WHY naming the field, its value and the range.  Whether
** a config fits a device and a problem is budget_fit()'s question, which
** asks this one first; import, lookup and
** fa4-tune check use it too, so a stored row is valid by the same rule.
*/
fa4_status config_validate(const fa4_config *c, char *why, size_t why_size);

/* 1 when A and B describe the same variant. */
int config_equal(const fa4_config *a, const fa4_config *b);

/* The family's short name: "sm80", "sm90", "sm100". */
const char *config_family_name(fa4_family family);

/* The scheduler's name as config text writes it ("plain", "persistent",
 * "lpt", "dynamic"); "?" out of range. */
const char *config_scheduler_name(fa4_scheduler sched);

#endif
