/*
** problems.h -- the list of problems fa4-tune works on: from the command
** line, from a JSON file, or from a named preset; and the deterministic
** split of that list into shards (problem i goes to shard i % N).
*/
#ifndef FA4_TUNE_PROBLEMS_H
#define FA4_TUNE_PROBLEMS_H

#include <stddef.h>
#include "fa4.h"
#include "args.h"

typedef struct tune_problem {
    fa4_problem problem;
    char name[64];        /* "llama3-8b s4096 causal", "cli", "problems[3]" */
    int index;            /* position in the full (unsharded) list */
} tune_problem;

typedef struct problem_list {
    tune_problem *items;
    int count;
    int cap;
} problem_list;

/* 1 when NAME is a preset. */
int problems_preset_exists(const char *name);

/* The preset names, space-separated (static). */
const char *problems_preset_list(void);

/*
** Append preset NAME's problems (dtype DTYPE) to *LIST.  0, or -1 with ERR
** ("unknown preset 'x'; known: ...", out of memory).
*/
int problems_add_preset(problem_list *list, const char *name, fa4_dtype dtype,
                        char *err, size_t err_size);

/*
** Append the problems of the JSON file PATH to *LIST.  The file holds an
** array of objects, or {"problems": [...]}; keys: name, dtype, batch,
** seqlen_q, seqlen_k, heads_q, heads_kv, head_dim (or head_dim_qk),
** head_dim_v, causal, window ([L, R]), window_left, window_right,
** softmax_scale, return_lse, varlen, page_size, softcap (0: none),
** attention_sinks (or sinks).  0, or -1 with ERR naming the file, the line
** or the entry and key.
*/
int problems_add_json(problem_list *list, const char *path, char *err,
                      size_t err_size);

/*
** Build the list ARGS asks for (preset, file or shape; --dtype,
** --return-lse, --varlen, --page-size, --softcap and --sinks apply to
** every row of a preset), check every
** problem with fa4_problem_check(), then keep shard ARGS->shard_index of
** ARGS->shard_count.  0, or -1 with ERR naming the problem and field.
** Release *LIST with problem_list_free() in either case.
*/
int problems_build(problem_list *list, const tune_args *args, char *err,
                   size_t err_size);

/* Keep in *LIST only the problems with index % COUNT == INDEX. */
void problems_shard(problem_list *list, int index, int count);

/* The shard that owns problem INDEX of COUNT shards. */
int problems_shard_of(int index, int count);

/* Append P named NAME; 0 or -1 (out of memory). */
int problems_append(problem_list *list, const fa4_problem *p,
                    const char *name);

void problem_list_free(problem_list *list);

/*
** FLOPs of the forward pass: 2*b*hq*sq*sk*(dqk+dv) (4*b*h*s^2*d when
** dqk == dv), halved for causal with sq == sk (the FlashAttention papers'
** convention); with a window, or causal with sq != sk, only the visible
** (query, key) pairs are counted.
*/
double problems_flops(const fa4_problem *p);

/* One-line description: "bf16 b=4 sq=4096 sk=4096 hq=32 hkv=8 d=128
** causal", then " varlen" and " page=16" for serving layouts, " softcap=50"
** and " sinks" for the score options.  Returns BUF. */
char *problems_describe(const fa4_problem *p, char *buf, size_t size);

#endif
