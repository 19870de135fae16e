/*
** fa4.h -- libfa4, FlashAttention-4-style attention forward for NVIDIA GPUs.
**
** Every function is documented where it is declared.  The man pages
** (fa4(3) and the pages it links) say the same with examples.
**
** Conventions:
**   - Every call returns an fa4_status; FA4_OK is 0.  Detail text for the
**     last failure on a context and calling thread: fa4_context_errmsg().
**   - Handles are opaque.  Each _create has a _destroy that accepts NULL.
**     A failed _create leaves *out set to NULL.
**   - Structs that may grow start with struct_size, set by their _INIT
**     macro; the library reads only what the caller's size covers.
**   - Tensors live in device memory in the layout [batch, seq, heads, dim]
**     (FlashAttention's "BSHD"), the last dimension contiguous.  Strides are
**     in elements; 0 means "contiguous in that layout".
**   - Semantics follow FlashAttention: causal masking is aligned to the
**     bottom-right corner (query i sees keys j <= i + seqlen_k - seqlen_q);
**     a query row that sees no key outputs zeros and LSE -inf (with
**     attention sinks: LSE the head's sink); the default
**     softmax scale is 1/sqrt(head_dim_qk); LSE is the natural log-sum-exp
**     of the scaled scores, float32, laid out [batch, heads_q, seqlen_q].
*/
#ifndef FA4_H
#define FA4_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FA4_VERSION_MAJOR 0
#define FA4_VERSION_MINOR 1
#define FA4_VERSION_PATCH 0
#define FA4_VERSION_STRING "0.1.0"

/*
** Return the library's version as "MAJOR.MINOR.PATCH".  The string is
** static.  Compare with FA4_VERSION_STRING to detect a header/library
** mismatch.  Thread-safe.
*/
const char *fa4_version(void);

/* ---------------------------------------------------------------- status */

/* Result codes.  New codes are only appended. */
typedef enum fa4_status {
    FA4_OK = 0,        /* success */
    FA4_EINVAL = 1,    /* an argument or problem field is invalid */
    FA4_ENOMEM = 2,    /* host or device memory allocation failed */
    FA4_ENODEV = 3,    /* no CUDA driver, or no such device */
    FA4_ENOTSUP = 4,   /* valid, but not supported by this library or GPU */
    FA4_ECOMPILE = 5,  /* NVRTC compilation failed or the variant spills */
    FA4_EDB = 6,       /* the config database could not be read or written */
    FA4_ECUDA = 7,     /* a CUDA driver call failed */
    FA4_ENOFIT = 8     /* the config does not fit the device's budgets */
} fa4_status;

/*
** Return fixed text describing STATUS ("invalid argument", ...).  Unknown
** values give "unknown status".  The string is static.  Thread-safe.
*/
const char *fa4_status_string(fa4_status status);

/* --------------------------------------------------------------- context */

/* The opaque per-device context: driver handles, databases, kernel cache. */
typedef struct fa4_context fa4_context;

/* Options for fa4_context_create().  Initialise with FA4_CONTEXT_OPTIONS_INIT. */
typedef struct fa4_context_options {
    size_t struct_size;
    const char *db_path;        /* user database; NULL: $FA4_DB, else
                                   $XDG_CACHE_HOME/fa4/fa4.db, else
                                   ~/.cache/fa4/fa4.db */
    const char *system_db_path; /* read-only system database; NULL:
                                   $FA4_SYSTEM_DB, else the installed one */
    int no_database;            /* 1: use no database at all (heuristics,
                                   in-memory kernel cache only) */
    int plan_only;              /* 1: no GPU needed; plans can be built and
                                   compiled for ARCH but not launched */
    const char *arch;           /* with plan_only: "sm_80", "sm_90a",
                                   "sm_100a"; NULL otherwise */
    int check_inputs;           /* 1 (or $FA4_CHECK_INPUTS=1): before each
                                   launch, copy cu_seqlens, seqused_k and
                                   block_table to the host and check them
                                   (FA4_EINVAL naming the first bad entry).
                                   Synchronises the stream: for debugging,
                                   not for CUDA-graph capture. */
    int reserved;               /* ignored.  Keeps enable_sm100 past the
                                   padding of this struct's earlier size
                                   (48 bytes), which old callers'
                                   struct_size covers unset */
    int enable_sm100;           /* 1 (or $FA4_ENABLE_SM100=1): on a compute
                                   capability 10.0 GPU (B200), plan with the
                                   sm100 (Blackwell) family.  Its kernels
                                   are built but unvalidated: they have
                                   never run on real hardware.  0: such a
                                   GPU runs the sm80 family, and
                                   fa4_context_warnings() says so. */
} fa4_context_options;

#define FA4_CONTEXT_OPTIONS_INIT { sizeof(fa4_context_options), NULL, NULL, 0, 0, NULL, 0, 0, \
                                   0 }

/*
** Create a context on CUDA device DEVICE (an ordinal as in cuDeviceGet).
** The CUDA driver is loaded at run time, so this call works, and fails
** cleanly, on a machine without a driver.  OPTS may be NULL.
**
** On FA4_OK *out owns the context; release it with fa4_context_destroy().
** Returns FA4_ENODEV when there is no driver or no such device (the detail
** is in fa4_context_last_error()), FA4_EINVAL for bad options, FA4_ECUDA
** when the device's primary context cannot be retained, FA4_ENOMEM.
** A database that cannot be opened is not fatal: the context falls back to
** a read-only or in-memory store and records one warning, readable with
** fa4_context_warnings().
** Thread-safe.
*/
fa4_status fa4_context_create(fa4_context **out, int device,
                              const fa4_context_options *opts);

/* Release CTX and everything it owns.  Plans made on CTX must be destroyed
** first.  NULL does nothing. */
void fa4_context_destroy(fa4_context *ctx);

/*
** Return the detail text of the last failure on CTX in the calling thread
** ("head_dim_qk=72; supported: 64 96 128 192 256").  The text stays valid
** until the next failing call on CTX in the same thread.  With CTX NULL,
** returns the detail of the last failed fa4_context_create() in this thread.
** Never returns NULL.
*/
const char *fa4_context_errmsg(const fa4_context *ctx);

/* The detail of the last failed fa4_context_create() in this thread. */
const char *fa4_context_last_error(void);

/*
** Return the warnings recorded on CTX, one per line, or "" when there were
** none: database fallbacks when it was created, a compute capability 10.x
** GPU that runs the sm80 family because the sm100 family is not enabled
** (fa4_context_options.enable_sm100), and each tuned config a later
** fa4_plan_create() passed over (it did not fit or compile) for the
** built-in default.  Owned by CTX; the text only grows.
*/
const char *fa4_context_warnings(const fa4_context *ctx);

/* ---------------------------------------------------------------- problem */

typedef enum fa4_dtype {
    FA4_DTYPE_BF16 = 1,
    FA4_DTYPE_FP16 = 2,
    FA4_DTYPE_FP8_E4M3 = 3  /* inputs only (Q, K, V): sm90 family prefill
                               (dense, varlen, queries over pages of 16+
                               rows), sm80 family everything else (decode,
                               any page size, varlen d256; head dims
                               multiples of 64); sm100 (opt-in,
                               never run): dense batches; O in
                               fa4_problem.out_dtype, each tensor scaled by
                               fa4_tensors.*_descale */
} fa4_dtype;

/*
** What to compute: O = softmax(scale * Q K^T + mask) V per batch and head.
** Initialise with FA4_PROBLEM_INIT, then set the sizes.
*/
typedef struct fa4_problem {
    size_t struct_size;
    fa4_dtype dtype;
    int batch;
    int seqlen_q;
    int seqlen_k;
    int heads_q;
    int heads_kv;          /* heads_q must be a multiple (GQA/MQA) */
    int head_dim_qk;       /* 64, 96, 128, 192, 256 */
    int head_dim_v;        /* 0: same as head_dim_qk; else <= head_dim_qk */
    int causal;            /* 1: bottom-right aligned causal mask */
    int window_left;       /* sliding window, -1 = unbounded */
    int window_right;      /* -1 = unbounded (0 with causal) */
    float softmax_scale;   /* 0: 1/sqrt(head_dim_qk) */
    int return_lse;        /* 1: fa4_forward writes LSE */
    /* Strides in elements, [batch, seq, head]; 0: contiguous BSHD. */
    int64_t q_strides[3];
    int64_t k_strides[3];
    int64_t v_strides[3];
    int64_t o_strides[3];
    /*
    ** Variable-length batches (FlashAttention's varlen convention).  With
    ** varlen = 1, Q and O are packed [total_q, heads, dim] and the
    ** sequences are delimited by fa4_tensors.cu_seqlens_q (batch + 1
    ** int32 offsets, cu_seqlens_q[0] = 0); K and V likewise by
    ** cu_seqlens_k unless the cache is paged.  seqlen_q and seqlen_k are
    ** then the maximum lengths, batch the maximum number of sequences.
    ** The batch strides (q_strides[0], ...) are not used; LSE is laid out
    ** [heads_q, total_q].  Masks are per sequence, bottom-right aligned.
    ** On sm_90a the sm90 family runs varlen prefill (head_dim_v <= 192),
    ** the sm80 family everything else, fp8 included.
    */
    int varlen;
    /*
    ** Paged KV cache (vLLM / FlashInfer / FlashAttention layout).  With
    ** page_size > 0 (a power of two), K and V are [num_pages, page_size,
    ** heads_kv, dim] (k_strides[0] is the page stride) and
    ** fa4_tensors.block_table [batch, block_table_stride] int32 maps a
    ** sequence's page i to a page of the pool.  Each sequence's KV length
    ** comes from fa4_tensors.seqused_k (or seqlen_k).  Q may be dense or
    ** varlen.  On sm_90a the sm90 family runs dense and varlen queries over
    ** pages of 16 rows or more (varlen on its plain grid); the sm80 family
    ** decode steps and everything else.
    ** Paged fp8 inputs follow the same split between the families.
    */
    int page_size;         /* 0: not paged */
    /*
    ** Attention sinks (gpt-oss): with attention_sinks = 1, each query head
    ** h has a logit fa4_tensors.sinks[h] (float32, in the units of the
    ** scaled scores) that joins the softmax denominator without a value
    ** row: O = sum_j e^(s_j) v_j / (sum_j e^(s_j) + e^(sink)).  LSE
    ** includes it.
    */
    int attention_sinks;
    int block_table_stride; /* paged: entries per block_table row;
                               0: ceil(seqlen_k / page_size) */
    int num_pages;         /* paged: pages in the pool (for the opt-in
                              input check; 0: unknown) */
    int reserved;          /* ignored.  Keeps softcap past the padding of
                              this struct's earlier size (184 bytes), which
                              old callers' struct_size covers unset */
    /*
    ** Softcapping (Gemma 2): with softcap > 0 the scaled scores s become
    ** softcap * tanh(s / softcap) before masking and softmax.  0: none.
    */
    float softcap;
    /*
    ** O's element type: 0 means dtype for 16-bit inputs and FA4_DTYPE_BF16
    ** for FA4_DTYPE_FP8_E4M3 inputs, which may also ask for FA4_DTYPE_FP16.
    ** 16-bit inputs write O in their own type.
    */
    fa4_dtype out_dtype;
    /*
    ** Per-token Q/K scales (the dequantisation scales of fp8/int8-style
    ** activations): with token_scales = 1 each query row i and key j
    ** carries a float32 factor (fa4_tensors.q_token_scale, k_token_scale,
    ** laid out [batch, heads, seq] like LSE) and the score becomes
    ** softmax_scale * q_token_scale[i] * k_token_scale[j] * (q_i . k_j),
    ** before softcap, masking and the softmax; LSE is of those scores.
    ** With fp8 inputs q_i and k_j are the dequantised values (times
    ** q_descale and k_descale), so both kinds of factor multiply the
    ** score.  Dense batches only; the sm100 family alone applies them
    ** (sm80 and sm90: FA4_ENOTSUP).  0: none.
    */
    int token_scales;
    int reserved2;         /* ignored; keeps the next field appended past
                              the tail padding this size covers */
} fa4_problem;

#define FA4_PROBLEM_INIT { sizeof(fa4_problem), FA4_DTYPE_BF16, 0, 0, 0, 0, 0, \
                           0, 0, 0, -1, -1, 0.0f, 0, {0, 0, 0}, {0, 0, 0},    \
                           {0, 0, 0}, {0, 0, 0}, 0, 0, 0, 0, 0, 0, 0.0f,      \
                           (fa4_dtype)0, 0, 0 }

/*
** Check PROBLEM without a context.  Returns FA4_OK, FA4_EINVAL (a bad
** field) or FA4_ENOTSUP (a field this version does not implement).  When
** WHY is not NULL, writes a message naming the field, its value and the
** limit into WHY (at most WHY_SIZE bytes, NUL-terminated).  Thread-safe.
*/
fa4_status fa4_problem_check(const fa4_problem *problem, char *why,
                             size_t why_size);

/* ----------------------------------------------------------------- config */

/* Kernel families. */
typedef enum fa4_family {
    FA4_FAMILY_SM80 = 80,    /* mma.sync + cp.async: portable, sm_80 and up */
    FA4_FAMILY_SM90 = 90,    /* TMA + wgmma + warp specialization: sm_90a */
    FA4_FAMILY_SM100 = 100   /* tcgen05 + TMEM: sm_100a, dense 16-bit
                                problems; never run on real hardware, so
                                used only on request (enable_sm100) */
} fa4_family;

/* Tile schedulers. */
typedef enum fa4_scheduler {
    FA4_SCHED_PLAIN = 0,      /* one CTA per (query tile, head, batch) */
    FA4_SCHED_PERSISTENT = 1, /* one CTA per SM walking the tiles */
    FA4_SCHED_LPT = 2,        /* persistent, longest tiles first (causal) */
    FA4_SCHED_DYNAMIC = 3     /* persistent, each CTA draws its next tile from a
                                 device counter (fa4_plan_workspace_size()) */
} fa4_scheduler;

/*
** How to compute: one kernel variant.  Fields a family does not use are 0.
** Initialise with FA4_CONFIG_INIT.
*/
typedef struct fa4_config {
    size_t struct_size;
    fa4_family family;
    int bm;                 /* query rows per CTA; sm100: 256 (2Q), 128 (1Q),
                               or 32: the decode mode (tcgen05.mma.ws M 32,
                               packed GQA rows, split-KV; never run) */
    int bn;                 /* keys per main-loop step */
    int stages;             /* K/V pipeline stages */
    int swizzle;            /* shared-memory swizzle span in bytes: 32/64/128 */
    int fused_kv;           /* 1: K and V alternate in one ring (sm90/sm100);
                               sm80: one barrier per key block */
    int q_tiles;            /* query tiles per CTA: 1 or 2 */
    int warps;              /* sm80: warps per CTA: bm/16 (16 query rows
                               each; 0 means this) or bm/32 (32 rows each,
                               every K/V fragment serving twice the rows) */
    int consumer_wgs;       /* sm90: consumer warpgroups (2 or 3) */
    int producer_regs;      /* sm90: setmaxnreg for the producer */
    int consumer_regs;      /* sm90: setmaxnreg for the consumers */
    int cluster;            /* CTAs per cluster (1 = none); sm100: 2 = a CTA
                               pair sharing each tcgen05.mma (cta_group::2),
                               never run on hardware */
    int exp2_emu_pct;       /* share of exp2 done by an FMA polynomial, % */
    int rescale_threshold;  /* lazy rescale threshold, log2 units (0: always) */
    int pingpong;           /* sm90: ping-pong consumer warpgroups */
    fa4_scheduler scheduler;
    int splits;             /* KV splits per query tile (flash-decoding):
                               1 none; 0 chosen per call from the number
                               of tiles and SMs (sm80, sm100 decode mode);
                               sm90: 1, or 0 for the tail split (the tiles
                               of a dense unmasked plain grid's last,
                               partly empty wave in parts along the keys,
                               as many as fill it) */
    int pack_gqa;           /* 1: the heads_q / heads_kv query heads of one
                               KV head share a tile's rows (sm80, sm100
                               decode mode; sm90 for dense, varlen and
                               paged batches whose group divides 64, with
                               splits 1) */
    int kv_split_warps;     /* sm80: 1: the warps of a CTA split each key
                               block instead of the query rows (bm = 16;
                               for decode) */
    int late_k_release;     /* sm90: 1: a consumer frees its K stage after
                               the row maximum, not as soon as the scores
                               are in registers, which keeps the wait for
                               the previous P.V behind the maximum, and
                               converts P before the lazy rescale, so the
                               conversions overlap the exponentials */
    int tanh_poly_pct;      /* sm90, softcap > 0: percent of softcap's tanh
                               computed as a polynomial on the FMA pipe
                               instead of MUFU (a block whose scores leave
                               the cap takes MUFU), 0..100; -1 (as
                               FA4_CONFIG_INIT leaves it): the family's
                               default share for the problem and tile */
} fa4_config;

#define FA4_CONFIG_INIT { sizeof(fa4_config), FA4_FAMILY_SM80, 0, 0, 0, 0, 0, 1, \
                          0, 0, 0, 0, 1, 0, 0, 0, FA4_SCHED_PLAIN, 1, 0, 0, 0, -1 }

/*
** Write a one-line description of CONFIG into BUF, at most SIZE bytes,
** NUL-terminated ("sm80 bm=128 bn=64 stages=2 swizzle=128 warps=8 ...").
** Returns BUF.  Thread-safe.
*/
char *fa4_config_format(const fa4_config *config, char *buf, size_t size);

/*
** Where a plan's config came from.  The lookup order is user exact, system
** exact, nearest, same arch, heuristic; an entry tuned with earlier kernel
** sources (reported as stale) ranks below a current one of the same step
** and bucket distance only (fa4-db(5), "Lookup order").
*/
typedef enum fa4_config_source {
    FA4_SOURCE_USER_EXACT = 1,   /* user database, same device and bucket */
    FA4_SOURCE_SYSTEM_EXACT = 2, /* system database, same device and bucket */
    FA4_SOURCE_NEAREST = 3,      /* same device, nearest sequence bucket */
    FA4_SOURCE_SAME_ARCH = 4,    /* same architecture, other SM count */
    FA4_SOURCE_HEURISTIC = 5,    /* the built-in default for the shape */
    FA4_SOURCE_EXPLICIT = 6,     /* given in fa4_plan_options.config */
    FA4_SOURCE_STALE = 7         /* a database entry tuned with an earlier
                                    version of the kernel sources; used until
                                    re-tuned: run fa4-tune verify, or tune
                                    again */
} fa4_config_source;

/* Return the name of SOURCE ("exact", "nearest", ...).  Static text. */
const char *fa4_config_source_string(fa4_config_source source);

/* ------------------------------------------------------------------- plan */

/* A compiled, loaded kernel for a problem class: the problem's sizes are
** maxima that each fa4_forward() may lower (fa4_tensors.seqlen_q, ...).
** Immutable once made. */
typedef struct fa4_plan fa4_plan;

/* Options for fa4_plan_create().  Initialise with FA4_PLAN_OPTIONS_INIT. */
typedef struct fa4_plan_options {
    size_t struct_size;
    const fa4_config *config;  /* non-NULL: use exactly this config */
    int allow_heuristic;       /* 1 (default): use the built-in default
                                  when the database has no entry */
    int no_binary_cache;       /* 1: always compile, never read cubins from
                                  the database */
} fa4_plan_options;

#define FA4_PLAN_OPTIONS_INIT { sizeof(fa4_plan_options), NULL, 1, 0 }

/*
** Build a plan for PROBLEM on CTX: validate the problem, look the best
** config up (user DB, system DB, nearest bucket, same architecture,
** heuristic), check it against the device's budgets, compile it with NVRTC
** or take the cubin from the database, and load it.  This is the only slow
** step; fa4_forward() is a launch.  OPTS may be NULL.
**
** On FA4_OK *out owns the plan; release it with fa4_plan_destroy().  On
** failure *out is NULL and fa4_context_errmsg(ctx) names the field or
** limit at fault.  Returns FA4_EINVAL, FA4_ENOTSUP (also: no database
** entry and allow_heuristic=0), FA4_ENOFIT (an explicit config, or every
** family's default, does not fit), FA4_ECOMPILE, FA4_ECUDA, FA4_ENOMEM.
** $FA4_FAMILIES ("sm80", "sm90 sm80") limits the families the heuristic
** may choose.
** Several threads may call this on one context at once.
*/
fa4_status fa4_plan_create(fa4_plan **out, fa4_context *ctx,
                           const fa4_problem *problem,
                           const fa4_plan_options *opts);

/* Release PLAN.  Its kernel stays loaded in the context's cache (another
** plan for the same variant reuses it) until fa4_context_destroy(), so
** launches still queued are unaffected; a split-KV workspace the plan
** allocated is freed once the device is done with it.  NULL does nothing. */
void fa4_plan_destroy(fa4_plan *plan);

/*
** Report the config PLAN uses into *CONFIG (may be NULL; initialise it
** with FA4_CONFIG_INIT: only the fields its struct_size covers are
** written) and where it came from into *SOURCE (may be NULL).
** Returns FA4_EINVAL when PLAN is NULL.  Thread-safe.
*/
fa4_status fa4_plan_config(const fa4_plan *plan, fa4_config *config,
                           fa4_config_source *source);

/* ---------------------------------------------------------------- forward */

/* Opaque stream type, compatible with CUstream and cudaStream_t. */
typedef struct CUstream_st *fa4_stream;

/* Device pointers for one fa4_forward() call. */
typedef struct fa4_tensors {
    size_t struct_size;
    const void *q;               /* [batch, seqlen_q, heads_q, head_dim_qk] */
    const void *k;               /* [batch, seqlen_k, heads_kv, head_dim_qk] */
    const void *v;               /* [batch, seqlen_k, heads_kv, head_dim_v] */
    void *o;                     /* [batch, seqlen_q, heads_q, head_dim_v] */
    float *lse;                  /* [batch, heads_q, seqlen_q], or NULL */
    const int32_t *cu_seqlens_q; /* varlen: batch+1 offsets into Q and O */
    const int32_t *cu_seqlens_k; /* varlen, not paged: batch+1 offsets into
                                    K and V */
    const int32_t *block_table;  /* paged: [batch, block_table_stride] */
    const int32_t *seqused_k;    /* NULL, or [batch]: keys each sequence
                                    uses (a cache with spare room) */
    void *workspace;             /* NULL, or fa4_plan_workspace_size() bytes
                                    of device memory, 16-byte aligned */
    /* This call's sizes, each at most the plan's (0: the plan's).  Dense:
       the lengths of every sequence; varlen: the maxima and the number
       of sequences.  Zero strides in the problem mean contiguous at
       these sizes. */
    int seqlen_q;
    int seqlen_k;
    int batch;
    const float *sinks;          /* attention_sinks: [heads_q] float32
                                    logits (device memory), else NULL */
    /* FA4_DTYPE_FP8_E4M3: float32 [batch, heads_kv] factors (device
       memory) that turn the stored values of Q, K and V into real ones
       (FlashAttention-3's descale_q/k/v); NULL means 1.0.  Ignored for
       16-bit inputs. */
    const float *q_descale;
    const float *k_descale;
    const float *v_descale;
    /* The bytes at workspace; 0: not given (trusted to be at least
       fa4_plan_workspace_size()).  A smaller size than the call needs is
       FA4_EINVAL, not a write past the buffer. */
    size_t workspace_size;
    /* fa4_problem.token_scales: float32 per-token factors (device memory,
       4-byte aligned) multiplied into the scores: q_token_scale
       [batch, heads_q, seqlen_q], k_token_scale [batch, heads_kv,
       seqlen_k], contiguous at this call's sizes.  NULL otherwise. */
    const float *q_token_scale;
    const float *k_token_scale;
} fa4_tensors;

#define FA4_TENSORS_INIT { sizeof(fa4_tensors), NULL, NULL, NULL, NULL, NULL, \
                           NULL, NULL, NULL, NULL, NULL, 0, 0, 0, NULL, NULL, \
                           NULL, NULL, 0, NULL, NULL }

/*
** The device workspace PLAN's launches use, in *BYTES: 0 for most configs,
** 16 for the dynamic scheduler (FA4_SCHED_DYNAMIC: a tile counter), and
** room for the partial outputs of split-KV plans (sm80 decode and serving
** tiles, the sm100 decode mode: splits x heads_q x rows x (head_dim_v + 1)
** floats, bounded by
** what one wave of CTAs can produce), for the sm90 tail split (splits
** = 0) 256 + records x bm x (head_dim_v + 1) floats with records =
** min(sm_count, 16 x tiles) for the plan's maxima (none when seqlen_k
** is under 8 key blocks: such calls never split), and for fp8 inputs
** on the sm90 family 256 (+ the tail split's floats) + a transposed copy of V (batch x heads_kv x head_dim_v x
** seqlen_k rounded up to 64 bytes, for varlen up to the config's bn; the
** plan's maxima: dense, varlen and paged batches alike), rewritten by
** every launch (sm100 fp8 plans read V as it is: 0).
** A workspace passed in
** fa4_tensors.workspace must be zero-filled before its first launch (the
** kernel leaves a counter zero again) and serve one launch at a time,
** like a per-stream workspace.  Without one (NULL), the plan uses its own,
** allocated by fa4_plan_create(): launches of that plan must then not
** overlap in time (one stream, or streams ordered by events).
** Returns FA4_OK, or FA4_EINVAL when PLAN or BYTES is NULL.  Thread-safe.
*/
fa4_status fa4_plan_workspace_size(const fa4_plan *plan, size_t *bytes);

/*
** Launch PLAN on STREAM (NULL: the legacy default stream) with the device
** pointers in TENSORS.  Asynchronous: returns once the kernel is queued.
** Pointers must be 16-byte aligned (int32 index arrays: 4-byte).  LSE must
** be non-NULL when the problem asked for it.  This call's sizes
** (fa4_tensors.seqlen_q, seqlen_k, batch) may be below the plan's; the
** contents of cu_seqlens, seqused_k and block_table are trusted unless the
** context checks them (fa4_context_options.check_inputs).  Allocates
** nothing and never synchronises: a call can be captured in a CUDA graph.  Takes no lock: any number of threads may launch plans,
** the same plan too, at once; for a plan whose fa4_plan_workspace_size()
** is not 0, launches that may run at the same time (different streams)
** each need their own workspace.  The current CUDA context of the calling
** thread is not changed.
** Returns FA4_OK, FA4_EINVAL (null or misaligned pointer, a stride the
** kernel's loads and stores cannot take, or a workspace_size below what
** the call needs), FA4_ENOTSUP (a plan compiled
** without a GPU), FA4_ECUDA (launch failure, detail in
** fa4_context_errmsg() of the plan's context).
*/
fa4_status fa4_forward(const fa4_plan *plan, const fa4_tensors *tensors,
                       fa4_stream stream);

#ifdef __cplusplus
}
#endif

#endif /* FA4_H */
