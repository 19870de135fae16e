"""fa4: libfa4's attention forward for PyTorch, through ctypes.

    import torch, fa4
    q = torch.randn(2, 1024, 16, 128, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(2, 1024, 4, 128, device="cuda", dtype=torch.bfloat16)
    v = torch.randn_like(k)
    o = fa4.attention(q, k, v, causal=True)            # [2, 1024, 16, 128]

Tensors are [batch, seqlen, heads, head_dim] (packed [total, heads, head_dim] for
varlen), bf16 or fp16, on one CUDA device, the last dimension contiguous; other
strides are free where libfa4 accepts them (multiples of 16 bytes).  Semantics
are FlashAttention's: causal masks align to the bottom-right corner, the
default scale is 1/sqrt(head_dim), LSE is the natural log-sum-exp, float32.

q, k, v may also be fp8 e4m3 (torch.float8_e4m3fn), in each function alike:
q_descale, k_descale and v_descale are optional float32 [batch, heads_kv]
factors that turn the stored values into real ones (FlashAttention-3's
convention; None means 1), and O is out_dtype, torch.bfloat16 (default) or
torch.float16.  fp8 runs on Hopper (compute capability 9.0: the sm90 family
for prefill, the sm80 family for decode steps and the layouts only it reads)
and on compute capability 8.x GPUs (the sm80 family); the sm80 family takes
fp8 head dims that are multiples of 64.

Each function also takes softcap= (Gemma 2 and 3: the scaled scores s become
softcap * tanh(s / softcap) before masking and softmax; 0, the default, caps
nothing) and sinks= (gpt-oss: a float32 [heads_q] tensor on q's device, one
logit per query head that joins the softmax's denominator with no value row;
LSE includes it).  The sinks are read on the GPU at each call, so they may
change between calls and between replays of a captured CUDA graph.

The functions are also torch.library ops (torch.ops.fa4.attention, ...) with
fake implementations, so they work under torch.compile(fullgraph=True) and in
CUDA-graph capture (plan first: run a call of the same class before capturing).
They compute the forward only; a backward through them raises.

libfa4.so is found through $FA4_LIBRARY, pkg-config, the install prefix or the
source tree's build (fa4._lib); no compiled extension, so any PyTorch works.
Importing fa4 needs no PyTorch: library(), Fa4Error and fa4._lib's Context and
Plan work without it.
"""
import collections

from . import _abi
from ._lib import Fa4Error, LibraryNotFoundError, library

__version__ = _abi.HEADER_VERSION
__all__ = ["attention", "attention_varlen", "attention_with_kvcache", "plan_info", "clear_cache",
           "library", "Fa4Error", "LibraryNotFoundError", "PlanInfo", "__version__"]

try:
    import torch
except ImportError as _e:   # the torch-free parts stay usable
    torch = None
    _torch_error = _e

if torch is not None:
    from . import _ops
    from ._ops import clear_cache


def _window(window):
    wl, wr = window
    return int(wl), int(wr)


def _fp8(q_descale, k_descale, v_descale, out_dtype):
    """The forwards' FP8 argument: None, or the four fp8 keywords when any was given."""
    if q_descale is None and k_descale is None and v_descale is None and out_dtype is None:
        return None
    return (q_descale, k_descale, v_descale, out_dtype)


# The forwards' MODS argument is written out in each of them, not called:
#     mods = None if sinks is None and not softcap else _ops.mods_arg(softcap, sinks)
# so that a call with neither pays two tests and no function call.
#
# The sinks keyword is named as gpt-oss's reference code and Hugging Face's
# GptOss attention name the parameter (`sinks`, one logit per query head), as
# vLLM's Attention layer and FlashInfer take it; vLLM's FlashAttention-3 fork
# calls its kernel argument `s_aux`, which says less.  softcap is flash_attn's
# own name (2.6 and later).


def attention(q, k, v, *, causal=False, window=(-1, -1), softmax_scale=None, return_lse=False, out=None,
              q_descale=None, k_descale=None, v_descale=None, out_dtype=None, softcap=0.0, sinks=None):
    """Attention forward: softmax(softmax_scale * q k^T + mask) v per batch and head.

    q: [batch, seqlen_q, heads_q, head_dim]; k: [batch, seqlen_k, heads_kv, head_dim];
    v: [batch, seqlen_k, heads_kv, head_dim_v]; heads_q a multiple of heads_kv
    (GQA/MQA).  causal: bottom-right aligned causal mask.  window: (left, right)
    sliding window, -1 unbounded.  softmax_scale: None for 1/sqrt(head_dim).
    out: an optional [batch, seqlen_q, heads_q, head_dim_v] tensor to write.

    FP8 (torch.float8_e4m3fn q, k, v; compute capability 8.x or 9.0):
    q_descale, k_descale, v_descale are optional float32 [batch, heads_kv]
    tensors that turn the stored values into real ones (FlashAttention-3's
    convention; None means 1); O is out_dtype, torch.bfloat16 (default) or
    torch.float16.  16-bit inputs take neither and write O in their own type.
    On compute capability 8.x fp8 head dims are multiples of 64.

    Softcapping (Gemma 2 and 3; flash_attn's softcap): softcap > 0 turns each
    scaled score s into softcap * tanh(s / softcap) before masking and
    softmax; 0 (default) caps nothing; a negative or non-finite value is a
    ValueError.  Attention sinks (gpt-oss): sinks is a float32 [heads_q]
    tensor on q's device, contiguous, one logit per query head in the units of
    the scaled scores, that joins the softmax's denominator with no value row:
    O = sum_j e^(s_j) v_j / (sum_j e^(s_j) + e^(sinks[h])), and LSE includes
    it (a row that sees no key: O 0, LSE the sink).  It is read on the GPU at
    each call, not copied: its values may change between calls and between
    CUDA-graph replays.  Another dtype is a TypeError, another shape, layout
    or device a ValueError.  Both work with every dtype above, fp8 included.

    Returns out, or (out, lse) with return_lse (lse: float32 [batch, heads_q,
    seqlen_q]).  Raises Fa4Error with libfa4's message when the library refuses
    the problem, ValueError/TypeError for tensors that do not fit together.
    """
    wl, wr = _window(window)
    scale = 0.0 if softmax_scale is None else float(softmax_scale)
    fp8 = _fp8(q_descale, k_descale, v_descale, out_dtype)
    mods = None if sinks is None and not softcap else _ops.mods_arg(softcap, sinks)
    done = None
    if not torch.compiler.is_compiling():
        done = _ops.dense_eager(q, k, v, out, causal, wl, wr, scale, return_lse, fp8, mods)
    if done is not None:
        out, lse = done
    elif out is None:
        out, lse = torch.ops.fa4.attention(q, k, v, causal, wl, wr, scale, return_lse, *_ops.op_tail(fp8, mods))
    else:
        lse = torch.ops.fa4.attention_out(q, k, v, out, causal, wl, wr, scale, return_lse,
                                          *_ops.op_tail(fp8, mods))
    return (out, lse) if return_lse else out


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, *, causal=False,
                     window=(-1, -1), softmax_scale=None, seqused_k=None, block_table=None,
                     return_lse=False, out=None, q_descale=None, k_descale=None, v_descale=None,
                     out_dtype=None, softcap=0.0, sinks=None):
    """Attention over variable-length sequences packed end to end
    (flash_attn_varlen_func's conventions).

    q: [total_q, heads_q, head_dim]; k, v: [total_k, heads_kv, head_dim(_v)], or
    with block_table paged [num_pages, page_size, heads_kv, head_dim(_v)].
    cu_seqlens_q, cu_seqlens_k: int32 [batch + 1] offsets starting at 0 (with a
    block table, cu_seqlens_k gives the sequences' key counts unless seqused_k
    does; it may then be None).  max_seqlen_q, max_seqlen_k: the longest
    sequences (ints).  seqused_k: int32 [batch], the keys each sequence uses.
    block_table: int32 [batch, pages per sequence].  Masks are per sequence.

    FP8 (torch.float8_e4m3fn q, k, v): q_descale, k_descale, v_descale and
    out_dtype as in attention(), the descales [batch, heads_kv] with batch
    the number of sequences (len(cu_seqlens_q) - 1).  fp8 varlen queries
    over pages under 16 rows, and fp8 varlen with head_dim_v 256, run on
    the sm80 family (on Hopper too): head dims multiples of 64 there.

    softcap and sinks as in attention(): one sink per query head, shared by
    every sequence.

    Returns out [total_q, heads_q, head_dim_v], or (out, lse) with lse float32
    [heads_q, total_q].
    """
    wl, wr = _window(window)
    scale = 0.0 if softmax_scale is None else float(softmax_scale)
    fp8 = _fp8(q_descale, k_descale, v_descale, out_dtype)
    mods = None if sinks is None and not softcap else _ops.mods_arg(softcap, sinks)
    if torch.compiler.is_compiling() or _ops.use_op(q, k, v, out, q_descale, k_descale, v_descale, sinks):
        if out is None:
            out, lse = torch.ops.fa4.attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                                      max_seqlen_k, seqused_k, block_table, causal, wl, wr,
                                                      scale, return_lse, *_ops.op_tail(fp8, mods))
        else:
            lse = torch.ops.fa4.attention_varlen_out(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                                     max_seqlen_k, seqused_k, block_table, out, causal, wl,
                                                     wr, scale, return_lse, *_ops.op_tail(fp8, mods))
    else:
        out, lse = _ops.varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, seqused_k,
                               block_table, out, causal, wl, wr, scale, return_lse, fp8=fp8, mods=mods)
    return (out, lse) if return_lse else out


def attention_with_kvcache(q, k_cache, v_cache, cache_seqlens=None, block_table=None, *, k=None, v=None,
                           causal=False, window=(-1, -1), softmax_scale=None, return_lse=False, out=None,
                           q_descale=None, k_descale=None, v_descale=None, out_dtype=None, softcap=0.0,
                           sinks=None):
    """Attention of new queries against a KV cache, optionally appending new keys
    and values first (flash_attn_with_kvcache's conventions).

    q: [batch, seqlen_q, heads_q, head_dim].  k_cache, v_cache: dense [batch,
    seqlen_cache, heads_kv, head_dim(_v)], or paged [num_pages, page_size,
    heads_kv, head_dim(_v)] with block_table int32 [batch, pages per sequence].
    cache_seqlens: the keys in use, an int (every sequence) or int32 [batch];
    None: the whole cache.  The causal mask aligns each sequence's queries with
    the end of its used keys (decode: the new token sees every key).

    k, v: new keys and values [batch, seqlen_new, heads_kv, head_dim(_v)],
    written into the caches at rows cache_seqlens[b] .. cache_seqlens[b] +
    seqlen_new - 1 of each sequence (through block_table when paged) before the
    attention, which then reads cache_seqlens[b] + seqlen_new keys.  Keyword
    arguments here (flash_attn's 4th and 5th), so that cache_seqlens and
    block_table keep their places.  cache_seqlens is needed with them and is not
    changed: the caller advances it.  The cache must have room:
    cache_seqlens[b] + seqlen_new <= seqlen_cache (paged: pages per sequence x
    page_size).  A tensor cache_seqlens is not read on the host, so that is not
    checked here: a row past the cache stops the GPU with PyTorch's index
    assertion.  The append is PyTorch indexing on the current stream: no host
    synchronisation, and it can be captured in a CUDA graph.

    FP8 (torch.float8_e4m3fn q and caches): q_descale, k_descale, v_descale
    and out_dtype as in attention(), the descales [batch, heads_kv] (a
    cache's factors per sequence and head, so new k and v rows are quantised
    with the same ones).  Paged fp8 caches take any page size (a power of
    two); decode steps and pages under 16 rows run on the sm80 family (on
    Hopper too), prefill chunks over pages of 16 rows or more on sm90 there.

    softcap and sinks as in attention() (a decode step of gpt-oss passes its
    layer's sinks here; a row with no key in use gets O 0 and LSE the sink).

    Returns out [batch, seqlen_q, heads_q, head_dim_v], or (out, lse).
    """
    wl, wr = _window(window)
    scale = 0.0 if softmax_scale is None else float(softmax_scale)
    fp8 = _fp8(q_descale, k_descale, v_descale, out_dtype)
    mods = None if sinks is None and not softcap else _ops.mods_arg(softcap, sinks)
    if k is not None or v is not None:
        cache_seqlens = _ops.append_kv(q, k_cache, v_cache, k, v, cache_seqlens, block_table)
    done = None
    if not torch.compiler.is_compiling():
        done = _ops.kvcache_eager(q, k_cache, v_cache, cache_seqlens, block_table, out, causal, wl, wr, scale,
                                  return_lse, fp8, mods)
    if done is not None:
        out, lse = done
    else:
        tensor_lens = cache_seqlens if isinstance(cache_seqlens, torch.Tensor) else None
        int_lens = -1 if cache_seqlens is None or tensor_lens is not None else int(cache_seqlens)
        if out is None:
            out, lse = torch.ops.fa4.attention_with_kvcache(q, k_cache, v_cache, tensor_lens, int_lens,
                                                            block_table, causal, wl, wr, scale, return_lse,
                                                            *_ops.op_tail(fp8, mods))
        else:
            lse = torch.ops.fa4.attention_with_kvcache_out(q, k_cache, v_cache, tensor_lens, int_lens,
                                                           block_table, out, causal, wl, wr, scale, return_lse,
                                                           *_ops.op_tail(fp8, mods))
    return (out, lse) if return_lse else out


PlanInfo = collections.namedtuple(
    "PlanInfo", "config source family workspace_bytes batch seqlen_q seqlen_k")
PlanInfo.__doc__ = """What plan_info() reports: config (fa4_config_format's text), source
(fa4_config_source_string: "exact", "nearest", "heuristic", ...), family (80, 90,
100), workspace_bytes, and the plan's maxima (batch, seqlen_q, seqlen_k): the
call's sizes rounded up, so that one plan serves a class of calls."""


def plan_info(q, k, v, *, causal=False, window=(-1, -1), softmax_scale=None, return_lse=False,
              cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None, seqused_k=None,
              block_table=None, cache_seqlens=None, kvcache=False, out_dtype=None, softcap=0.0, sinks=None):
    """The plan the matching call would use (made and cached now if missing):
    a PlanInfo with the chosen config's text and where it came from.

    Same arguments as attention(); with cu_seqlens_q those of attention_varlen();
    with kvcache=True, cache_seqlens or block_table those of
    attention_with_kvcache().  The tensors must be CUDA tensors; their contents
    are not read.  fp8 inputs: out_dtype as in the call (descales do not
    change the plan); workspace_bytes covers an sm90 plan's transposed V (an
    sm80 plan's, fp8 or not, holds the split-KV partial results).  softcap
    and sinks as in the call: the cap's value and whether there are sinks
    select the kernel (the sinks' values do not)."""
    wl, wr = _window(window)
    scale = 0.0 if softmax_scale is None else float(softmax_scale)
    fp8 = _fp8(None, None, None, out_dtype)
    mods = None if sinks is None and not softcap else _ops.mods_arg(softcap, sinks)
    if cu_seqlens_q is not None:
        e = _ops.varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, seqused_k,
                        block_table, None, causal, wl, wr, scale, return_lse, plan_only=True, fp8=fp8, mods=mods)
    elif kvcache or cache_seqlens is not None or block_table is not None:
        e = _ops.kvcache(q, k, v, cache_seqlens, block_table, None, causal, wl, wr, scale, return_lse,
                         plan_only=True, fp8=fp8, mods=mods)
    else:
        e = _ops.dense(q, k, v, None, causal, wl, wr, scale, return_lse, plan_only=True, fp8=fp8, mods=mods)
    config, source = e.plan.describe()
    p = e.plan.problem
    return PlanInfo(config, source, e.plan.family, e.ws_bytes, p.batch, p.seqlen_q, p.seqlen_k)


if torch is None:
    def _needs_torch(name):
        def missing(*args, **kwargs):
            raise ImportError("fa4.%s needs PyTorch (import torch: %s)" % (name, _torch_error))
        missing.__name__ = name
        return missing

    attention = _needs_torch("attention")
    attention_varlen = _needs_torch("attention_varlen")
    attention_with_kvcache = _needs_torch("attention_with_kvcache")
    plan_info = _needs_torch("plan_info")
    clear_cache = _needs_torch("clear_cache")
