/*
** plan.h -- the inside of fa4_plan, one call's launch arguments, and the
** context's in-memory cache of loaded kernels.
*/
#ifndef FA4_PLAN_H
#define FA4_PLAN_H

#include "context.h"
#include "budget.h"
#include "../kernels/common/params.h"
#include "../kernels/common/serving.h"

/*
** A plan covers a problem class: its problem gives the maxima (lengths,
** batch) and everything fixed at compile time (dtype, heads, head dims,
** masking, varlen, paging); each fa4_forward() brings its own sizes.
*/
struct fa4_plan {
    fa4_context *ctx;
    fa4_problem problem;      /* resolved: defaults filled, strides set */
    int default_strides[4];   /* q k v o: 1 when the caller left them 0
                                 (contiguous at each call's sizes) */
    fa4_config config;
    fa4_config_source source;
    fa4_layout layout;
    CUfunction fn;            /* NULL for a plan_only context */
    CUfunction fn_combine;    /* split-KV merge (sm80, sm100 decode), else NULL */
    CUfunction fn_prepare;    /* runs before fn each call: the V^T copy of
                                 fp8 inputs (sm90), else NULL */
    size_t workspace_bytes;   /* fa4_plan_workspace_size() */
    unsigned long long workspace;  /* the plan's own, for callers that pass
                                      none: a tile counter from the context
                                      pool, or a buffer this plan owns */
    int owns_workspace;       /* 1: workspace is cuMemAlloc'd by the plan */
};

/* One fa4_forward(): the plan's problem with this call's sizes, the
** kernel's argument block filled from it, and the workspace to use. */
typedef struct launch_call {
    fa4_problem problem;
    fa4_params params;
    const fa4_tensors *tensors;
    unsigned long long workspace;
} launch_call;

/* The fa4_tensors field F of T, or 0 when the caller's struct predates it. */
#define TENSORS_FIELD(t, f) \
    ((t)->struct_size >= offsetof(fa4_tensors, f) + sizeof((t)->f) ? (t)->f : 0)

/*
** fa4_plan_create() for a caller that compiled the variant itself (fa4-tune
** compiles in its own threads and loads the modules on the thread that
** times them): CUBIN (SIZE bytes), the kernel of jit_key() KEY, stands in
** for the database and NVRTC when the context's cache does not hold the
** variant yet and KEY is the plan's.  It is neither stored nor freed.
*/
fa4_status plan_create_cubin(fa4_plan **out, fa4_context *ctx, const fa4_problem *problem,
                             const fa4_plan_options *opts, const char *key,
                             const void *cubin, size_t size);

/* Release every cached module of CTX (context destruction). */
void plan_cache_free(fa4_context *ctx);

/* Host-side launch of each family (launch_sm80.c, launch_sm90.c,
** launch_sm100.c): queue CALL's kernels on STREAM, the plan's context
** current (fa4_forward pushes it); error text through error_set(). */
fa4_status launch_sm80(const fa4_plan *plan, const launch_call *call, fa4_stream stream);
fa4_status launch_sm90(const fa4_plan *plan, const launch_call *call, fa4_stream stream);
fa4_status launch_sm100(const fa4_plan *plan, const launch_call *call, fa4_stream stream);

/*
** Split-KV (flash-decoding), shared by the sm80 family and the sm100
** decode mode (launch.c).  A split launch writes float32 partial O
** [splits][heads_q][rows_cap][head_dim_v] and LSE [splits][heads_q]
** [rows_cap] (rows_cap = batch x seqlen_q of the call) into the
** workspace, then fa4_combine (kernels/common/combine.cuh, in the same
** module) merges them into O and LSE.
*/

/* Query tiles of CFG's height along M for one head of problem P, or with
** packed GQA for one KV head's group (its rows are (query, head) pairs);
** fa4_params.m_blocks, and the sm80 grid's x. */
long long launch_m_blocks(const fa4_problem *p, const fa4_config *cfg);

/* Workspace bytes PLAN's split launches need at its maxima: 0 for
** splits 1; for splits 0 (chosen per call) the most one wave of CTAs
** (by shared and tensor memory) can write. */
size_t launch_split_workspace(const fa4_plan *plan);

/* This call's splits into S (num_splits, rows_cap, the partial buffers in
** WORKSPACE): PLAN's config splits, or (0) as many as fill one wave of the
** GPU when TILES CTAs fill less than half of it; at most the key blocks,
** CONFIG_MAX_SPLITS, and what WS_BYTES of workspace hold. */
void launch_split_setup(fa4_serving *s, const fa4_plan *plan, const fa4_problem *p,
                        long long tiles, size_t ws_bytes, unsigned long long workspace);

/* Queue fa4_combine (kernels/common/combine.cuh) with arguments ARGS on
** STREAM: a warp per row of ROWS rows, grid (ceil(ROWS / 4), GY, GZ) of 128
** threads. */
fa4_status launch_combine_rows(const fa4_plan *plan, long long rows, unsigned gy, unsigned gz,
                               void **args, fa4_stream stream);

/* launch_combine_rows() for problem P's split-KV call with the fa4_fwd
** arguments ARGS (fa4_params, then fa4_serving): rows seqlen_q, grid y
** heads_q, z batch. */
fa4_status launch_combine(const fa4_plan *plan, const fa4_problem *p, void **args,
                          fa4_stream stream);

/* The serving block (kernels/common/serving.h) of problem P's call with
** tensors T: index arrays, page shift, one split (the sm80 launch sets its
** own splits and workspace addresses). */
void launch_serving_block(fa4_serving *s, const fa4_problem *p, const fa4_tensors *t);

/* Launch FN with ARGS in clusters of CLUSTER x 1 x 1 CTAs (cuLaunchKernelEx;
** 1: a plain cuLaunchKernel), the plan's context current; error text on
** failure, FA4_ENOTSUP when clusters are asked of a driver without
** cuLaunchKernelEx. */
fa4_status launch_kernel_cluster(const fa4_plan *plan, CUfunction fn, const unsigned grid[3],
                                 unsigned cluster, int threads, int smem, fa4_stream stream,
                                 void **args, const char *what);

/* launch_kernel_cluster() without clusters. */
fa4_status launch_kernel(const fa4_plan *plan, CUfunction fn, const unsigned grid[3],
                         int threads, int smem, fa4_stream stream, void **args,
                         const char *what);

#endif
