"""The PyTorch front end: attention on CUDA tensors through libfa4.

One fa4 context per device, opened on first use.  Plans are cached per device
and problem class: the key holds what a plan fixes (dtype, heads, head dims,
masking, scale, LSE, explicit strides, paging) and the sequence lengths and
batch rounded up to powers of two, which fa4_plan_create takes as maxima; each
call passes its own sizes in fa4_tensors, so a decode loop or changing varlen
batches reuse one plan (and the rounded lengths select the same database
bucket the exact ones would).

Launches go on PyTorch's current stream.  A plan that needs a workspace
(fa4_plan_workspace_size > 0: the dynamic scheduler's tile counter, split-KV
partial results, an sm90 fp8 plan's transposed V) gets one zero-filled torch
buffer per stream it runs on, passed with its size (fa4_tensors.workspace_size):
fa4_forward(3) says launches that may overlap (different streams) each need
their own, and the plan's built-in one may serve only one at a time.  During
CUDA-graph capture every launch gets a fresh buffer from the graph's pool, so
the graph owns it and its zero fill is part of the graph.

The host time of a call is most of what decode pays for it, so fa4.attention
and fa4.attention_with_kvcache remember each class of call they have checked
(_Call, in _dense_calls and _kvcache_calls): the key is what the checks and the
plan depend on (each tensor's shape, contiguity or strides, dtype and device,
and the scalar arguments), so a call whose key is known skips the checks and
the plan lookup and only reads its data pointers.  Anything new goes the long
way, which raises the same errors as before and remembers the class when it
launches.

FP8 e4m3 inputs (every forward: dense, varlen, KV cache) take the same
arguments everywhere: FP8 is None, or (q_descale, k_descale, v_descale,
out_dtype) as the public functions take them; fp8_setup() checks them once
for all three, and the ops carry them as four trailing arguments (op_fp8()).

Softcapping and attention sinks likewise: MODS is None (neither: the common
case, which costs the fast paths an `is None` test or two), or (softcap,
sinks) as mods_arg() made it: a finite softcap >= 0 and a sinks tensor or
None, checked against the call by mods_setup().  The softcap's value and
whether there are sinks are part of the plan and of every key; the sinks are
read by the kernel at each launch through their pointer (fa4_tensors.sinks),
so their values may change between calls and between CUDA-graph replays.  The
ops carry them as two trailing arguments after the fp8 ones (op_tail()).
"""
import ctypes as C
import threading
import warnings
from typing import Optional, Tuple

import torch

from . import _abi, _lib

_DTYPES = {torch.bfloat16: _abi.DTYPE_BF16, torch.float16: _abi.DTYPE_FP16}
_FP8 = getattr(torch, "float8_e4m3fn", None)
if _FP8 is not None:
    _DTYPES[_FP8] = _abi.DTYPE_FP8_E4M3
# fa4_problem.out_dtype codes of the output types fp8 inputs may ask for.
_OUT_CODES = {torch.bfloat16: _abi.DTYPE_BF16, torch.float16: _abi.DTYPE_FP16}
_OUT_TYPES = {c: t for t, c in _OUT_CODES.items()}
_TENSORS_SIZE = C.sizeof(_abi.Tensors)
_pack = _abi.TENSORS_PACK.pack
_float32 = torch.float32
_empty = torch.empty
# A warning, once per device, past this many cached plans (each distinct set of
# explicit strides is a plan of its own; contiguous inputs share one).
PLAN_WARNING = 1024

try:  # what Triton uses: the raw cudaStream_t of the current stream, without a Stream object
    _raw_stream = torch._C._cuda_getCurrentRawStream
except AttributeError:  # pragma: no cover
    def _raw_stream(index):
        return torch.cuda.current_stream(index).cuda_stream
_capturing = getattr(torch._C, "_cuda_isCurrentStreamCapturing", torch.cuda.is_current_stream_capturing)
_grad_enabled = torch.is_grad_enabled


def _pow2(n):
    return 1 << (n - 1).bit_length() if n > 1 else 1


def _batch_max(b, heads_kv):
    """The plan's batch for a call of B sequences: the largest batch in the same
    database work bucket (batch x heads_kv rounded up to a power of two)."""
    return max(b, _pow2(b * heads_kv) // heads_kv)


# ------------------------------------------------------------------ devices


class _Entry:
    """A cached plan: its handle, workspace size and per-stream workspaces."""
    __slots__ = ("plan", "handle", "ws_bytes", "workspaces", "as_varlen")

    def __init__(self, plan, as_varlen=False):
        self.plan = plan
        self.handle = plan.handle
        self.ws_bytes = plan.workspace_size
        self.workspaces = {}
        self.as_varlen = as_varlen


class _Device:
    """One GPU: its fa4 context and plans."""

    def __init__(self, index):
        self.index = index
        self.device = torch.device("cuda", index)
        self.capability = torch.cuda.get_device_capability(index)
        self.context = _lib.Context(index)
        self.forward = self.context.lib.fa4_forward
        self.plans = {}
        self.lock = threading.Lock()
        self.offsets = {}

    def entry(self, key, problem, *, dense_seqused=None, as_varlen=False):
        """The cached plan of KEY, made from the fa4_problem PROBLEM() when missing.
        DENSE_SEQUSED: a varlen problem to plan instead when PROBLEM's plan cannot
        read seqused_k (families other than sm80 read it for varlen problems only).
        AS_VARLEN: PROBLEM already is that varlen view of a dense call."""
        with self.lock:
            e = self.plans.get(key)
            if e is not None:
                return e
            try:
                plan = self.context.plan(problem())
                if dense_seqused is not None and plan.family != _abi.FAMILY_SM80:
                    plan.destroy()
                    plan, as_varlen = self.context.plan(dense_seqused()), True
            except _lib.Fa4Error as err:
                if not _capturing():
                    raise
                # Making a plan loads a kernel and may allocate: not for a capture.
                raise _lib.Fa4Error(err.function, err.status, err.message + " (during CUDA-graph capture: run "
                                    "one call of the same class before capturing, so that its plan exists)")
            e = self.plans[key] = _Entry(plan, as_varlen)
            if len(self.plans) == PLAN_WARNING:
                warnings.warn("fa4: %d plans cached on cuda:%d; inputs with explicit strides that "
                              "change from call to call get a plan each (contiguous ones share "
                              "one): fa4.clear_cache() releases them" % (PLAN_WARNING, self.index))
            return e

    def seq_offsets(self, count, step, stream):
        """int32 [0, step, 2 step, ..., count step] on this device: the cu_seqlens of
        COUNT sequences of STEP rows each.  Kept per stream (another stream would not
        wait for the fill), except when made during CUDA-graph capture (its contents
        would exist only in the graph)."""
        t = self.offsets.get((count, step, stream))
        if t is None:
            t = torch.arange(0, (count + 1) * step, step, dtype=torch.int32,
                             device=torch.device("cuda", self.index))
            if not _capturing():
                self.offsets[(count, step, stream)] = t
        return t

    def clear(self):
        torch.cuda.synchronize(self.index)
        with self.lock:
            for e in self.plans.values():
                e.plan.destroy()
            self.plans.clear()
            self.offsets.clear()


_devices = {}
_devices_lock = threading.Lock()


def _open(index):
    with _devices_lock:
        dev = _devices.get(index)
        if dev is None:
            dev = _devices[index] = _Device(index)
        return dev


def clear_cache():
    """Destroy every cached plan and workspace (after synchronising each device).
    Not while other threads launch fa4 kernels, nor during CUDA-graph capture."""
    _dense_calls.clear()
    _kvcache_calls.clear()
    for dev in list(_devices.values()):
        dev.clear()


def _workspace(e, stream, device):
    """A zero-filled workspace of E for STREAM (see the module's docstring)."""
    if _capturing():
        return torch.zeros(e.ws_bytes, dtype=torch.uint8, device=device)
    ws = e.workspaces.get(stream)
    if ws is None:
        ws = e.workspaces[stream] = torch.zeros(e.ws_bytes, dtype=torch.uint8, device=device)
    return ws


def _launch(dev, e, q, k, v, o, lse, cu_q, cu_k, table, used, sq, sk, b, qd=0, kd=0, vd=0, sinks=0):
    """fa4_forward of plan entry E on the current stream.  The tensors are data
    pointers (ints; 0 for none); QD, KD, VD: fp8 descale factors; SINKS: the
    sink logits of a plan with attention sinks."""
    stream = _raw_stream(dev.index)
    # WS stays referenced until the launch is queued (in a capture it is nobody else's).
    ws = _workspace(e, stream, dev.device) if e.ws_bytes else None
    st = dev.forward(e.handle, _pack(_TENSORS_SIZE, q, k, v, o, lse, cu_q, cu_k, table, used,
                                     0 if ws is None else ws.data_ptr(), sq, sk, b, sinks, qd, kd, vd,
                                     0 if ws is None else e.ws_bytes, 0, 0),
                     stream)
    if st:
        raise dev.context.error("fa4_forward", st)


def _ptr(t):
    return 0 if t is None else t.data_ptr()


# ----------------------------------------------------------- remembered calls


class _Call:
    """A class of calls that passed the checks (see the module's docstring): the
    device, the plan entry, the sizes fa4_tensors gets (SK: the cache's capacity
    for a KV cache), and the shapes of what a call allocates."""
    __slots__ = ("dev", "e", "sq", "sk", "b", "o_shape", "lse_shape", "odt")

    def __init__(self, dev, e, sq, sk, b, o_shape, lse_shape, odt=None):
        self.dev, self.e, self.sq, self.sk, self.b = dev, e, sq, sk, b
        self.o_shape, self.lse_shape, self.odt = o_shape, lse_shape, odt


_dense_calls = {}
_kvcache_calls = {}
# Past this many classes a table starts again (a workload whose shapes never
# repeat would otherwise grow it without end; the long way refills it).
CALLS_MAX = 4096
_INT = object()     # a key's cache_seqlens when it is an int (the int itself is not part of the key)


def _remember(calls, key, c):
    if len(calls) >= CALLS_MAX:
        calls.clear()
    calls[key] = c


# ----------------------------------------------------------------- checking


def _device_of(q, *others):
    """The _Device of Q, after checking that every tensor of OTHERS is on it."""
    for t in (q,) + others:
        if t is not None and not isinstance(t, torch.Tensor):
            raise TypeError("fa4: expected tensors (got %s)" % type(t).__name__)
    index = q.get_device()
    if index < 0:
        raise ValueError("fa4: q must be a CUDA tensor (got device %s)" % q.device)
    for t in others:
        if t is not None and t.get_device() != index:
            raise ValueError("fa4: every tensor must be on %s (got one on %s)" % (q.device, t.device))
    return _devices.get(index) or _open(index)


def _dtype(q, k, v):
    dt = _DTYPES.get(q.dtype)
    if dt is None:
        raise TypeError("fa4: q is %s; supported: %s" % (q.dtype, ", ".join(str(t) for t in _DTYPES)))
    if k.dtype != q.dtype or v.dtype != q.dtype:
        raise TypeError("fa4: q, k and v must have one dtype (got %s, %s, %s)" % (q.dtype, k.dtype, v.dtype))
    return dt


def _index(t, name, shape=None):
    """Check an int32 index tensor (cu_seqlens, seqused_k, block_table)."""
    if t.dtype != torch.int32:
        raise TypeError("fa4: %s must be torch.int32 (got %s)" % (name, t.dtype))
    if shape is not None and tuple(t.shape) != shape:
        raise ValueError("fa4: %s has shape %s; expected %s" % (name, tuple(t.shape), shape))
    if t.stride(-1) != 1:
        raise ValueError("fa4: %s must be contiguous in its last dimension" % name)


def _strides(t, force=False):
    """T's strides in fa4's terms: None when T is contiguous (the plan then follows
    each call's sizes), else (batch, row, head) in elements.  T is [batch, rows,
    heads, dim] or, packed, [rows, heads, dim] (no batch stride: the row stride
    stands in, unused).  Strides of size-1 dimensions do not matter to PyTorch
    and may be anything; they become values valid for fa4.  FORCE: explicit
    strides even for a contiguous tensor (a cache longer than the call's keys)."""
    if not force and t.is_contiguous():
        return None
    shape, st = t.shape, t.stride()
    if st[-1] != 1 and shape[-1] > 1:
        raise ValueError("fa4: the last dimension must be contiguous (tensor of shape %s, strides %s)"
                         % (tuple(shape), st))
    if len(shape) == 3:
        shape, st = (1,) + tuple(shape), (0,) + tuple(st)
    b, s, h, d = shape
    sb, ss, sh = st[0], st[1], st[2]
    if h == 1:
        sh = d
    if s == 1:
        ss = sh * h
    if b == 1:
        sb = ss
    return (sb, ss, sh)


def _output(out, shape, q, name="out", odt=None):
    """O: OUT checked, or a new tensor; ODT its dtype (None: q's)."""
    odt = odt or q.dtype
    if out is None:
        return torch.empty(shape, dtype=odt, device=q.device)
    if tuple(out.shape) != shape or out.dtype != odt or out.device != q.device:
        raise ValueError("fa4: %s must be %s %s on %s (got %s %s on %s)" % (
            name, shape, odt, q.device, tuple(out.shape), out.dtype, out.device))
    return out


def _fp8_out(out_dtype):
    """O's dtype for fp8 inputs asking for OUT_DTYPE (None: bfloat16)."""
    if out_dtype is None:
        return torch.bfloat16
    if out_dtype not in _OUT_CODES:
        raise TypeError("fa4: out_dtype %s; fp8 inputs write torch.bfloat16 or torch.float16" % out_dtype)
    return out_dtype


def out_type(q, out_dtype):
    """The dtype of O for inputs like Q: fp8 inputs write OUT_DTYPE (None:
    bfloat16; float16 may be asked for), 16-bit ones their own type."""
    if q.dtype is _FP8 and _FP8 is not None:
        return _fp8_out(out_dtype)
    if out_dtype is not None and out_dtype != q.dtype:
        raise TypeError("fa4: out_dtype %s; %s inputs write %s" % (out_dtype, q.dtype, q.dtype))
    return q.dtype


_NO_DESCALES = (None, None, None)


def fp8_setup(q, batch, heads_kv, fp8):
    """(O's dtype, fa4_problem.out_dtype, the q, k, v descales) of a call
    with inputs like Q, BATCH sequences and HEADS_KV key heads, after
    checking FP8 (None, or (q_descale, k_descale, v_descale, out_dtype)):
    torch.float8_e4m3fn inputs write out_dtype (None: bfloat16); their
    descales are float32 [batch, heads_kv] on q's device (FlashAttention-3's
    convention; None means 1).  16-bit inputs take no descales and write
    their own type (out_dtype code 0).  Which GPUs run fp8 (and which head
    dims) is libfa4's to say, at plan time."""
    descales, out_dtype = (fp8[:3], fp8[3]) if fp8 is not None else (_NO_DESCALES, None)
    odt = out_type(q, out_dtype)
    if _FP8 is None or q.dtype is not _FP8:
        if any(t is not None for t in descales):
            raise ValueError("fa4: q_descale, k_descale and v_descale apply to torch.float8_e4m3fn inputs "
                             "(q is %s)" % q.dtype)
        return odt, 0, _NO_DESCALES
    shape = (batch, heads_kv)
    for name, t in zip(("q_descale", "k_descale", "v_descale"), descales):
        if t is None:
            continue
        if not isinstance(t, torch.Tensor) or t.dtype != torch.float32:
            raise TypeError("fa4: %s must be a torch.float32 tensor (got %s)"
                            % (name, t.dtype if isinstance(t, torch.Tensor) else type(t).__name__))
        if tuple(t.shape) != shape or not t.is_contiguous():
            raise ValueError("fa4: %s must be a contiguous tensor of shape %s [batch, heads_kv] (got %s%s)"
                             % (name, shape, tuple(t.shape), "" if t.is_contiguous() else ", not contiguous"))
        if t.device != q.device:
            raise ValueError("fa4: %s must be on %s (got %s)" % (name, q.device, t.device))
    return odt, _OUT_CODES[odt], descales


def _descale_ptrs(descales):
    """The q, k, v descale pointers fa4_tensors gets (0 for None)."""
    qd, kd, vd = descales[:3]
    return (0 if qd is None else qd.data_ptr(), 0 if kd is None else kd.data_ptr(),
            0 if vd is None else vd.data_ptr())


def _fp8_key(fp8):
    """FP8's part of a remembered call's key: () for none, None when a
    descale is not a plain tensor (the call then is not remembered).  A
    marker first: no other layout of a key compares equal.  Written out
    rather than looped: a generator costs microseconds here."""
    if fp8 is None:
        return ()
    qd, kd, vd, odt = fp8
    key = (_FP8, odt)
    for t in (qd, kd, vd):
        if t is None:
            key += (None,)
        elif type(t) is _Tensor:
            key += (t.shape, t.is_contiguous(), t.dtype, t.get_device())
        else:
            return None
    return key


# ----------------------------------------------------- softcap and sinks

# fa4_problem.softcap is a float32: a cap past the largest one would reach
# libfa4 as infinity.
_FLT_MAX = 3.4028234663852886e38
_MODS = object()    # the first item of a key's softcap/sinks part


def mods_arg(softcap, sinks):
    """The forwards' MODS argument: None when SOFTCAP is 0 (or None) and SINKS
    is None, else (softcap as a float, sinks) after checking softcap: 0 (none)
    or a finite positive cap.  SINKS is checked with the call's shapes
    (mods_setup)."""
    if not softcap and sinks is None:
        return None
    if isinstance(softcap, (str, bytes)):
        raise TypeError("fa4: softcap must be a float (got %s)" % type(softcap).__name__)
    try:
        cap = float(softcap or 0.0)
    except (TypeError, ValueError):
        raise TypeError("fa4: softcap must be a float (got %s)" % type(softcap).__name__) from None
    if not 0.0 <= cap <= _FLT_MAX:
        raise ValueError("fa4: softcap=%r; must be 0 (none) or a finite positive cap" % (softcap,))
    return cap, sinks


def check_sinks(sinks, q, hq):
    """Check SINKS of a call with inputs like Q and HQ query heads: a float32
    tensor [heads_q] (a logit per query head, in the units of the scaled
    scores), contiguous, on q's device."""
    if not isinstance(sinks, torch.Tensor) or sinks.dtype != torch.float32:
        raise TypeError("fa4: sinks must be a torch.float32 tensor (got %s)"
                        % (sinks.dtype if isinstance(sinks, torch.Tensor) else type(sinks).__name__))
    if tuple(sinks.shape) != (hq,) or not sinks.is_contiguous():
        raise ValueError("fa4: sinks must be a contiguous tensor of shape (%d,) [heads_q] (got %s%s)"
                         % (hq, tuple(sinks.shape), "" if sinks.is_contiguous() else ", not contiguous"))
    if sinks.device != q.device:
        raise ValueError("fa4: sinks must be on %s (got %s)" % (q.device, sinks.device))


def mods_setup(q, hq, mods):
    """(the fa4_problem fields, the fa4_tensors.sinks pointer) of a call with
    inputs like Q, HQ query heads and MODS, after checking the sinks
    (check_sinks).  No fields and a null pointer for None."""
    if mods is None:
        return {}, 0
    cap, sinks = mods
    if sinks is not None:
        check_sinks(sinks, q, hq)
    return dict(softcap=cap, attention_sinks=int(sinks is not None)), _ptr(sinks)


def _mods_key(mods):
    """MODS's part of a remembered call's key (MODS not None): the cap, and
    what check_sinks read of the sinks; None when the sinks are not a plain
    tensor (the call then is not remembered)."""
    cap, sinks = mods
    if sinks is None:
        return (_MODS, cap, None)
    if type(sinks) is not _Tensor:
        return None
    return (_MODS, cap, sinks.shape, sinks.is_contiguous(), sinks.dtype, sinks.get_device())


def _no_keys(out, lse, mods=None):
    """Rows that see no key: zeros, LSE -inf, or with attention sinks the
    head's sink (fa4.h's convention; LSE's heads are its next-to-last
    dimension in every layout)."""
    out.zero_()
    if lse is not None:
        if mods is not None and mods[1] is not None:
            lse.copy_(mods[1].view(-1, 1))
        else:
            lse.fill_(float("-inf"))
    return out, lse


def _start(out, o_shape, lse_shape, q, return_lse, no_rows, no_keys, odt=None, mods=None):
    """O (the caller's, checked, or new; ODT its dtype, None: q's) and LSE (new
    when asked), and the finished (out, lse) when there is nothing to launch:
    NO_ROWS (no query row) or NO_KEYS (no key); else None."""
    out = _output(out, o_shape, q, odt=odt)
    lse = torch.empty(lse_shape, dtype=torch.float32, device=q.device) if return_lse else None
    if no_rows:
        return out, lse, (out, lse)
    if no_keys:
        return out, lse, _no_keys(out, lse, mods)
    return out, lse, None


def _problem(dt, b, sq, sk, hq, hkv, d, dv, causal, wl, wr, scale, return_lse, strides, **extra):
    p = _abi.Problem.init(dtype=dt, batch=b, seqlen_q=sq, seqlen_k=sk, heads_q=hq, heads_kv=hkv,
                          head_dim_qk=d, head_dim_v=dv, causal=int(causal), window_left=wl,
                          window_right=wr, softmax_scale=scale, return_lse=int(return_lse), **extra)
    for name, s in zip(("q_strides", "k_strides", "v_strides", "o_strides"), strides):
        if s is not None:
            getattr(p, name)[:] = s
    return p


# ------------------------------------------------------------ the forwards


def dense_shapes(q, k, v):
    """(batch, seqlen_q, heads_q, head_dim, seqlen_k, heads_kv, head_dim_v) of
    fa4.attention's inputs, after checking that they fit together."""
    _dtype(q, k, v)
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError("fa4.attention: q, k, v must be [batch, seqlen, heads, head_dim] (got %d-D, %d-D, "
                         "%d-D)" % (q.dim(), k.dim(), v.dim()))
    b, sq, hq, d = q.shape
    _, sk, hkv, _ = k.shape
    if k.shape[0] != b or k.shape[3] != d or v.shape[:3] != k.shape[:3]:
        raise ValueError("fa4.attention: shapes do not agree: q %s, k %s, v %s" % (
            tuple(q.shape), tuple(k.shape), tuple(v.shape)))
    return b, sq, hq, d, sk, hkv, v.shape[3]


def dense_eager(q, k, v, out, causal, wl, wr, scale, return_lse, fp8=None, mods=None):
    """fa4.attention outside torch.compile: (out, lse or None), or None when the
    call must go through the op (use_op).  FP8: None, or (q_descale, k_descale,
    v_descale, out_dtype) when any was given.  MODS: None, or (softcap, sinks)
    (mods_arg)."""
    key = None
    if type(q) is _Tensor and type(k) is _Tensor and type(v) is _Tensor and (out is None or type(out) is _Tensor):
        # What the checks read (strides only of a tensor that is not contiguous:
        # _strides), flat: a tuple of tuples costs more to hash.
        key = (q.shape, q.is_contiguous() or q.stride(), q.dtype, q.get_device(),
               k.shape, k.is_contiguous() or k.stride(), k.dtype, k.get_device(),
               v.shape, v.is_contiguous() or v.stride(), v.dtype, v.get_device(),
               causal, wl, wr, scale, return_lse)
        if out is not None:
            key += (out.shape, out.is_contiguous() or out.stride(), out.dtype, out.get_device())
        if fp8 is not None:
            part = _fp8_key(fp8)
            key = None if part is None else key + part
        if mods is not None and key is not None:
            part = _mods_key(mods)
            key = None if part is None else key + part
    if key is not None:
        c = _dense_calls.get(key)
        # A known key means CUDA tensors: use_op() is left with modes and autograd.
        if c is not None and not _dispatch_modes() and not _function_modes() and not (_grad_enabled() and (
                q.requires_grad or k.requires_grad or v.requires_grad or out is not None and out.requires_grad
                or mods is not None and mods[1] is not None and mods[1].requires_grad)):
            dev = c.dev
            if out is None:
                out = _empty(c.o_shape, dtype=c.odt, device=dev.device)
            lse = _empty(c.lse_shape, dtype=_float32, device=dev.device) if return_lse else None
            qd = kd = vd = sinks = 0
            if fp8 is not None:
                qd, kd, vd = _descale_ptrs(fp8)
            if mods is not None and mods[1] is not None:
                sinks = mods[1].data_ptr()
            _launch(dev, c.e, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                    0 if lse is None else lse.data_ptr(), 0, 0, 0, 0, c.sq, c.sk, c.b, qd, kd, vd, sinks)
            return out, lse
    if use_op(q, k, v, out, *(fp8[:3] if fp8 is not None else ()), *(mods[1:] if mods is not None else ())):
        return None
    return dense(q, k, v, out, causal, wl, wr, scale, return_lse, key=key, fp8=fp8, mods=mods)


def dense(q, k, v, out, causal, wl, wr, scale, return_lse, plan_only=False, key=None, fp8=None, mods=None):
    """fa4.attention on real CUDA tensors.  Returns (out, lse or None); with
    PLAN_ONLY, the cached plan entry instead (fa4.plan_info).  KEY: dense_eager's
    key of this call, to remember it by.  FP8, MODS: as dense_eager's."""
    dev = _device_of(q, k, v, out)
    dt = _DTYPES.get(q.dtype)
    b, sq, hq, d, sk, hkv, dv = dense_shapes(q, k, v)
    odt, ocode, descales = fp8_setup(q, b, hkv, fp8)
    fields, sinks = mods_setup(q, hq, mods)
    if not plan_only:
        out, lse, done = _start(out, (b, sq, hq, dv), (b, hq, sq), q, return_lse,
                                b == 0 or sq == 0, sk == 0, odt, mods)
        if done is not None:
            return done
    strides = (_strides(q), _strides(k), _strides(v), None if out is None else _strides(out))
    bmax, sqmax, skmax = _batch_max(b, hkv), _pow2(sq), _pow2(sk)
    extra = dict(out_dtype=ocode, **fields)
    pkey = ("dense", dt, hq, hkv, d, dv, causal, wl, wr, scale, return_lse, strides, bmax, sqmax, skmax,
            tuple(extra.items()))
    e = dev.plans.get(pkey) or dev.entry(pkey, lambda: _problem(
        dt, bmax, sqmax, skmax, hq, hkv, d, dv, causal, wl, wr, scale, return_lse, strides, **extra))
    if plan_only:
        return e
    if key is not None:
        _remember(_dense_calls, key, _Call(dev, e, sq, sk, b, (b, sq, hq, dv), (b, hq, sq), odt))
    _launch(dev, e, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), _ptr(lse), 0, 0, 0, 0, sq, sk, b,
            *_descale_ptrs(descales), sinks)
    return out, lse


def varlen_shapes(q, k, v, cu_q, cu_k, seqused_k, block_table):
    """(batch, total_q, heads_q, head_dim, heads_kv, head_dim_v) of
    fa4.attention_varlen's inputs, after checking that they fit together."""
    _dtype(q, k, v)
    paged = block_table is not None
    if q.dim() != 3 or k.dim() != (4 if paged else 3) or v.dim() != k.dim():
        raise ValueError("fa4.attention_varlen: q must be [total_q, heads, head_dim] and k, v [total_k, "
                         "heads_kv, head_dim] (paged: [num_pages, page_size, heads_kv, head_dim])")
    total_q, hq, d = q.shape
    hkv, dv = k.shape[-2], v.shape[-1]
    if k.shape[-1] != d or v.shape[:-1] != k.shape[:-1]:
        raise ValueError("fa4.attention_varlen: shapes do not agree: q %s, k %s, v %s" % (
            tuple(q.shape), tuple(k.shape), tuple(v.shape)))
    if cu_q.dim() != 1 or cu_q.shape[0] < 1:
        raise ValueError("fa4.attention_varlen: cu_seqlens_q must be [batch + 1]")
    b = cu_q.shape[0] - 1
    _index(cu_q, "cu_seqlens_q")
    if cu_k is not None:
        _index(cu_k, "cu_seqlens_k", (b + 1,))
    elif not paged:
        raise ValueError("fa4.attention_varlen: cu_seqlens_k is needed unless K/V are paged")
    if seqused_k is not None:
        _index(seqused_k, "seqused_k", (b,))
    if paged:
        _index(block_table, "block_table")
        if block_table.dim() != 2 or block_table.shape[0] != b:
            raise ValueError("fa4.attention_varlen: block_table must be [batch, pages per sequence]")
    return b, total_q, hq, d, hkv, dv


def varlen(q, k, v, cu_q, cu_k, max_sq, max_sk, seqused_k, block_table, out, causal, wl, wr, scale,
           return_lse, plan_only=False, fp8=None, mods=None):
    """fa4.attention_varlen on real CUDA tensors; see dense().  The descales
    are [sequences, heads_kv]."""
    dev = _device_of(q, k, v, cu_q, cu_k, seqused_k, block_table, out)
    dt = _DTYPES.get(q.dtype)
    b, total_q, hq, d, hkv, dv = varlen_shapes(q, k, v, cu_q, cu_k, seqused_k, block_table)
    odt, ocode, descales = fp8_setup(q, b, hkv, fp8)
    fields, sinks = mods_setup(q, hq, mods)
    paged = block_table is not None
    max_sq, max_sk = int(max_sq), int(max_sk)
    if not plan_only:
        out, lse, done = _start(out, (total_q, hq, dv), (hq, total_q), q, return_lse,
                                b == 0 or total_q == 0 or max_sq == 0, max_sk == 0, odt, mods)
        if done is not None:
            return done
    extra = dict(varlen=1, out_dtype=ocode, **fields)
    skmax = _pow2(max_sk)
    if paged:
        page, stride = k.shape[1], block_table.stride(0)
        skmax = max(max_sk, min(skmax, stride * page))
        extra.update(page_size=page, block_table_stride=stride, num_pages=k.shape[0])
        if seqused_k is None and not plan_only:
            # FlashAttention's convention: with a block table, cu_seqlens_k gives the lengths.
            if cu_k is None:
                raise ValueError("attention_varlen with block_table needs seqused_k or "
                                 "cu_seqlens_k for the keys each sequence uses")
            seqused_k = cu_k[1:] - cu_k[:-1]
    strides = (_strides(q), _strides(k), _strides(v), None if out is None else _strides(out))
    bmax, sqmax = _batch_max(b, hkv), _pow2(max_sq)
    key = ("varlen", dt, hq, hkv, d, dv, causal, wl, wr, scale, return_lse, strides, bmax, sqmax, skmax,
           tuple(extra.items()))
    e = dev.plans.get(key) or dev.entry(key, lambda: _problem(
        dt, bmax, sqmax, skmax, hq, hkv, d, dv, causal, wl, wr, scale, return_lse, strides, **extra))
    if plan_only:
        return e
    _launch(dev, e, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), _ptr(lse), cu_q.data_ptr(),
            0 if paged else cu_k.data_ptr(), _ptr(block_table), _ptr(seqused_k), max_sq, max_sk, b,
            *_descale_ptrs(descales), sinks)
    return out, lse


def kvcache_shapes(q, k_cache, v_cache, used, block_table):
    """(batch, seqlen_q, heads_q, head_dim, heads_kv, head_dim_v, paged, keys the
    cache holds per sequence) of fa4.attention_with_kvcache's inputs, after
    checking that they fit together."""
    _dtype(q, k_cache, v_cache)
    if q.dim() != 4 or k_cache.dim() != 4 or v_cache.dim() != 4:
        raise ValueError("fa4.attention_with_kvcache: q must be [batch, seqlen_q, heads, head_dim] and the "
                         "caches [batch, seqlen_k, heads_kv, head_dim] or [num_pages, page_size, heads_kv, "
                         "head_dim]")
    b, sq, hq, d = q.shape
    hkv, dv = k_cache.shape[2], v_cache.shape[3]
    if k_cache.shape[3] != d or v_cache.shape[:3] != k_cache.shape[:3]:
        raise ValueError("fa4.attention_with_kvcache: shapes do not agree: q %s, k_cache %s, v_cache %s" % (
            tuple(q.shape), tuple(k_cache.shape), tuple(v_cache.shape)))
    paged = block_table is not None
    if paged:
        _index(block_table, "block_table")
        if block_table.dim() != 2 or block_table.shape[0] != b:
            raise ValueError("fa4.attention_with_kvcache: block_table must be [batch, pages per sequence]")
        capacity = block_table.shape[1] * k_cache.shape[1]
    else:
        if k_cache.shape[0] != b:
            raise ValueError("fa4.attention_with_kvcache: k_cache holds %d sequences, q %d"
                             % (k_cache.shape[0], b))
        capacity = k_cache.shape[1]
    if used is not None:
        _index(used, "cache_seqlens", (b,))
    return b, sq, hq, d, hkv, dv, paged, capacity


def append_kv(q, k_cache, v_cache, k, v, cache_seqlens, block_table):
    """flash_attn_with_kvcache's append: K, V [batch, seqlen_new, heads_kv, dim]
    written into the caches at rows cache_seqlens[b] .. cache_seqlens[b] +
    seqlen_new - 1 of each sequence (through BLOCK_TABLE when paged).  Returns
    the key counts to attend over, cache_seqlens + seqlen_new (a new tensor
    when cache_seqlens is one).  PyTorch indexing on the current stream: the
    lengths are never read on the host (no synchronisation, CUDA-graph
    capturable), so a row past the cache is caught by the indexing kernels'
    bounds assertion, not here."""
    if k is None or v is None:
        raise ValueError("fa4.attention_with_kvcache: k and v go together (got only %s)"
                         % ("v" if k is None else "k"))
    used = cache_seqlens if isinstance(cache_seqlens, torch.Tensor) else None
    b, _, _, _, _, _, paged, capacity = kvcache_shapes(q, k_cache, v_cache, used, block_table)
    if k.dim() != 4 or v.dim() != 4 or tuple(k.shape[2:]) != tuple(k_cache.shape[2:]) or \
            tuple(v.shape[2:]) != tuple(v_cache.shape[2:]) or k.shape[0] != b or v.shape[:2] != k.shape[:2]:
        raise ValueError("fa4.attention_with_kvcache: k and v must be [batch, seqlen_new, heads_kv, head_dim] "
                         "like the caches' rows (got k %s, v %s; q %s, k_cache %s, v_cache %s)" % (
                             tuple(k.shape), tuple(v.shape), tuple(q.shape), tuple(k_cache.shape),
                             tuple(v_cache.shape)))
    if k.dtype != k_cache.dtype or v.dtype != v_cache.dtype:
        raise TypeError("fa4.attention_with_kvcache: k and v must have the caches' dtype %s (got %s, %s)"
                        % (k_cache.dtype, k.dtype, v.dtype))
    for t in (k, v, block_table, used):
        if t is not None and t.device != k_cache.device:
            raise ValueError("fa4.attention_with_kvcache: k, v, cache_seqlens and block_table must be on the "
                             "caches' device %s (got one on %s)" % (k_cache.device, t.device))
    s = k.shape[1]
    if cache_seqlens is None:
        raise ValueError("fa4.attention_with_kvcache: appending k and v needs cache_seqlens (where each "
                         "sequence's new rows go)")
    if used is None:
        n = int(cache_seqlens)
        if not 0 <= n <= capacity - s:
            raise ValueError("fa4.attention_with_kvcache: cache_seqlens=%d and %d new rows; the cache holds %d"
                             % (n, s, capacity))
        pos = torch.arange(n, n + s, device=k_cache.device).expand(b, s)
        lens = n + s
    else:
        if s > capacity:
            raise ValueError("fa4.attention_with_kvcache: %d new rows; the cache holds %d" % (s, capacity))
        pos = used.long().unsqueeze(1) + torch.arange(s, device=k_cache.device)
        lens = used + s
    if _FP8 is not None and k_cache.dtype is _FP8:
        # Moved as bytes: not every PyTorch's CUDA indexing takes float8 types.
        k_cache, v_cache, k, v = (t.view(torch.uint8) for t in (k_cache, v_cache, k, v))
    # [batch, seqlen_new] index pairs select [batch, seqlen_new, heads_kv, dim] rows, k's shape.
    if paged:
        page = k_cache.shape[1]
        first, row = block_table.gather(1, pos // page).long(), pos % page
    else:
        first, row = torch.arange(b, device=k_cache.device).unsqueeze(1), pos
    k_cache[first, row] = k
    v_cache[first, row] = v
    return lens


def kvcache_eager(q, k_cache, v_cache, cache_seqlens, block_table, out, causal, wl, wr, scale, return_lse,
                  fp8=None, mods=None):
    """fa4.attention_with_kvcache outside torch.compile; see dense_eager()."""
    key = None
    lens = isinstance(cache_seqlens, _Tensor)
    if (type(q) is _Tensor and type(k_cache) is _Tensor and type(v_cache) is _Tensor
            and (out is None or type(out) is _Tensor) and (not lens or type(cache_seqlens) is _Tensor)
            and (block_table is None or type(block_table) is _Tensor)):
        key = (q.shape, q.is_contiguous() or q.stride(), q.dtype, q.get_device(),
               k_cache.shape, k_cache.is_contiguous() or k_cache.stride(), k_cache.dtype, k_cache.get_device(),
               v_cache.shape, v_cache.is_contiguous() or v_cache.stride(), v_cache.dtype, v_cache.get_device(),
               causal, wl, wr, scale, return_lse)
        # cache_seqlens: an int's value is checked against the plan's capacity
        # below instead, so that a loop over lengths stays one class.  Each
        # optional part starts with a torch.Size or a marker: no two layouts
        # of the key compare equal.
        if lens:
            key += (cache_seqlens.shape, cache_seqlens.is_contiguous() or cache_seqlens.stride(),
                    cache_seqlens.dtype, cache_seqlens.get_device())
        else:
            key += (None if cache_seqlens is None else _INT,)
        if block_table is not None:
            key += (block_table.shape, block_table.is_contiguous() or block_table.stride(), block_table.dtype,
                    block_table.get_device())
        if out is not None:
            key += (None, out.shape, out.is_contiguous() or out.stride(), out.dtype, out.get_device())
        if fp8 is not None:
            part = _fp8_key(fp8)
            key = None if part is None else key + part
        if mods is not None and key is not None:
            part = _mods_key(mods)
            key = None if part is None else key + part
    if key is not None:
        c = _kvcache_calls.get(key)
        if c is not None and not _dispatch_modes() and not _function_modes() and not (_grad_enabled() and (
                q.requires_grad or k_cache.requires_grad or v_cache.requires_grad
                or out is not None and out.requires_grad
                or mods is not None and mods[1] is not None and mods[1].requires_grad)):
            sk = c.sk
            if not lens and cache_seqlens is not None:
                sk = int(cache_seqlens)
            if 0 < sk <= c.sk:      # else the long way says what is wrong, or returns zeros
                dev = c.dev
                if out is None:
                    out = _empty(c.o_shape, dtype=c.odt, device=dev.device)
                lse = _empty(c.lse_shape, dtype=_float32, device=dev.device) if return_lse else None
                descales = _NO_DESCALES if fp8 is None else fp8[:3]
                sinks = 0
                if mods is not None and mods[1] is not None:
                    sinks = mods[1].data_ptr()
                if c.e.as_varlen:
                    return _kvcache_as_varlen(dev, c.e, q, k_cache, v_cache, cache_seqlens, out, lse, descales,
                                              sinks)
                qd = kd = vd = 0
                if fp8 is not None:
                    qd, kd, vd = _descale_ptrs(descales)
                _launch(dev, c.e, q.data_ptr(), k_cache.data_ptr(), v_cache.data_ptr(), out.data_ptr(),
                        0 if lse is None else lse.data_ptr(), 0, 0,
                        0 if block_table is None else block_table.data_ptr(),
                        cache_seqlens.data_ptr() if lens else 0, c.sq, sk, c.b, qd, kd, vd, sinks)
                return out, lse
    if use_op(q, k_cache, v_cache, out, *(fp8[:3] if fp8 is not None else ()),
              *(mods[1:] if mods is not None else ())):
        return None
    return kvcache(q, k_cache, v_cache, cache_seqlens, block_table, out, causal, wl, wr, scale, return_lse,
                   key=key, fp8=fp8, mods=mods)


def kvcache(q, k_cache, v_cache, cache_seqlens, block_table, out, causal, wl, wr, scale, return_lse,
            plan_only=False, key=None, fp8=None, mods=None):
    """fa4.attention_with_kvcache on real CUDA tensors; see dense()."""
    used = cache_seqlens if isinstance(cache_seqlens, torch.Tensor) else None
    dev = _device_of(q, k_cache, v_cache, used, block_table, out)
    dt = _DTYPES.get(q.dtype)
    b, sq, hq, d, hkv, dv, paged, capacity = kvcache_shapes(q, k_cache, v_cache, used, block_table)
    odt, ocode, descales = fp8_setup(q, b, hkv, fp8)
    fields, sinks = mods_setup(q, hq, mods)
    if used is not None:
        sk = capacity
    else:
        sk = capacity if cache_seqlens is None else int(cache_seqlens)
        if not 0 <= sk <= capacity:
            raise ValueError("fa4.attention_with_kvcache: cache_seqlens=%d; the cache holds %d keys"
                             % (sk, capacity))
    if not plan_only:
        out, lse, done = _start(out, (b, sq, hq, dv), (b, hq, sq), q, return_lse,
                                b == 0 or sq == 0, sk == 0, odt, mods)
        if done is not None:
            return done
    bmax, sqmax = _batch_max(b, hkv), _pow2(sq)
    o_strides = None if out is None else _strides(out)
    if paged:
        extra = dict(page_size=k_cache.shape[1], block_table_stride=block_table.stride(0),
                     num_pages=k_cache.shape[0], out_dtype=ocode, **fields)
        strides = (_strides(q), _strides(k_cache), _strides(v_cache), o_strides)
    else:
        # The cache is longer than this call's keys: its strides are its own.
        extra = dict(out_dtype=ocode, **fields)
        strides = (_strides(q), _strides(k_cache, True), _strides(v_cache, True), o_strides)
    pkey = ("kvcache", dt, hq, hkv, d, dv, causal, wl, wr, scale, return_lse, strides, bmax, sqmax, capacity,
            used is not None, tuple(extra.items()))
    problem = lambda: _problem(dt, bmax, sqmax, capacity, hq, hkv, d, dv, causal, wl, wr, scale, return_lse,
                               strides, **extra)
    fallback = None
    if used is not None and not paged:
        fallback = lambda: _problem(dt, bmax, sqmax, capacity, hq, hkv, d, dv, causal, wl, wr, scale,
                                    return_lse, _packed_strides(q, k_cache, v_cache, out), varlen=1,
                                    out_dtype=ocode, **fields)
    e = dev.plans.get(pkey) or dev.entry(pkey, problem, dense_seqused=fallback)
    if plan_only:
        return e
    if key is not None:
        _remember(_kvcache_calls, key, _Call(dev, e, sq, capacity, b, (b, sq, hq, dv), (b, hq, sq), odt))
    if e.as_varlen:
        return _kvcache_as_varlen(dev, e, q, k_cache, v_cache, used, out, lse, descales, sinks)
    _launch(dev, e, q.data_ptr(), k_cache.data_ptr(), v_cache.data_ptr(), out.data_ptr(), _ptr(lse), 0, 0,
            _ptr(block_table), _ptr(used), sq, sk, b, *_descale_ptrs(descales), sinks)
    return out, lse


def _packed_strides(q, k, v, out):
    """The strides of the varlen view of a dense call (_kvcache_as_varlen): Q is
    made contiguous there, the others keep their rows' strides."""
    return (None,) + tuple(None if t is None else _strides(t[0]) for t in (k, v, out))


def _kvcache_as_varlen(dev, e, q, k, v, used, out, lse, descales, sinks=0):
    """A dense cache read up to cache_seqlens by a family that reads seqused_k for
    varlen problems only (sm90, which takes prefill chunks): the same call as a
    varlen one whose sequences sit one batch stride apart (sequence b keeps
    batch b's descales; the sinks are per head either way).  Needs each
    tensor's rows evenly spaced across the batch (true of contiguous tensors)."""
    b, sq, hq, _ = q.shape
    L = k.shape[1]

    def rows_even(t):
        return t.shape[0] == 1 or t.stride(0) == t.shape[1] * t.stride(1)
    q = q.contiguous()
    if not rows_even(out):
        raise ValueError("fa4.attention_with_kvcache: out must be contiguous across the batch here")
    if not (rows_even(k) and rows_even(v)):
        raise ValueError("fa4.attention_with_kvcache: with cache_seqlens, this plan (%s) reads a dense "
                         "cache whose rows are contiguous across the batch (k_cache.stride(0) == seqlen_k "
                         "* k_cache.stride(1)) only" % e.plan.describe()[0])
    lse_v = None if lse is None else torch.empty((hq, b * sq), dtype=torch.float32, device=q.device)
    stream = _raw_stream(dev.index)
    cu_q, cu_k = dev.seq_offsets(b, sq, stream), dev.seq_offsets(b, L, stream)    # referenced until launched
    _launch(dev, e, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), _ptr(lse_v), cu_q.data_ptr(),
            cu_k.data_ptr(), 0, used.data_ptr(), sq, L, b, *_descale_ptrs(descales), sinks)
    if lse is not None:
        lse.copy_(lse_v.view(hq, b, sq).transpose(0, 1))
    return out, lse


# ------------------------------------------------------- torch.library ops

# Each op has a functional form (returns out and lse; lse is empty when not
# asked for) and an _out form that writes a given out.  fa4.attention and its
# kin call the implementation directly in eager mode (a custom op's dispatch
# costs more host time than the launch) and these ops under torch.compile,
# fake tensors, dispatch modes and autograd, where an op is what is needed.

def _lse_or_empty(lse, q):
    return lse if lse is not None else q.new_empty((0,), dtype=torch.float32)


def fp8_args(q_descale, k_descale, v_descale, out_dtype):
    """The forwards' FP8 argument from the ops' (OUT_DTYPE: a fa4_problem.out_dtype
    code, 0 for none)."""
    if q_descale is None and k_descale is None and v_descale is None and not out_dtype:
        return None
    return (q_descale, k_descale, v_descale, _OUT_TYPES.get(out_dtype) if out_dtype else None)


def op_fp8(fp8):
    """The ops' trailing fp8 arguments (q_descale, k_descale, v_descale,
    out_dtype code) for the forwards' FP8 argument; () for None (the ops'
    defaults)."""
    if fp8 is None:
        return ()
    qd, kd, vd, out_dtype = fp8
    return (qd, kd, vd, 0 if out_dtype is None else _OUT_CODES[_fp8_out(out_dtype)])


_OP_NO_FP8 = (None, None, None, 0)


def op_tail(fp8, mods):
    """The ops' trailing arguments for the forwards' FP8 and MODS: op_fp8(FP8),
    then softcap and sinks when MODS is given (after the fp8 ones, which are
    then their defaults if FP8 is None); () for neither."""
    if mods is None:
        return op_fp8(fp8)
    return (op_fp8(fp8) or _OP_NO_FP8) + tuple(mods)


def _fake_out_type(q, out_dtype):
    """O's dtype in a fake implementation (OUT_DTYPE: the ops' code)."""
    return out_type(q, _OUT_TYPES.get(out_dtype) if out_dtype else None)


def _fake_mods(q, hq, softcap, sinks):
    """The checks of softcap and sinks a fake implementation can make (the
    same errors at trace time as in eager mode)."""
    mods_arg(softcap, sinks)
    if sinks is not None:
        check_sinks(sinks, q, hq)


@torch.library.custom_op("fa4::attention", mutates_args=(), device_types="cuda")
def _attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, window_left: int,
                  window_right: int, softmax_scale: float, return_lse: bool,
                  q_descale: Optional[torch.Tensor] = None, k_descale: Optional[torch.Tensor] = None,
                  v_descale: Optional[torch.Tensor] = None, out_dtype: int = 0, softcap: float = 0.0,
                  sinks: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    out, lse = dense(q, k, v, None, causal, window_left, window_right, softmax_scale, return_lse,
                     fp8=fp8_args(q_descale, k_descale, v_descale, out_dtype), mods=mods_arg(softcap, sinks))
    return out, _lse_or_empty(lse, q)


@_attention_op.register_fake
def _(q, k, v, causal, window_left, window_right, softmax_scale, return_lse, q_descale=None, k_descale=None,
      v_descale=None, out_dtype=0, softcap=0.0, sinks=None):
    b, sq, hq, _, _, _, dv = dense_shapes(q, k, v)
    _fake_mods(q, hq, softcap, sinks)
    return (q.new_empty((b, sq, hq, dv), dtype=_fake_out_type(q, out_dtype)),
            q.new_empty((b, hq, sq) if return_lse else (0,), dtype=torch.float32))


@torch.library.custom_op("fa4::attention_out", mutates_args=("out",), device_types="cuda")
def _attention_out_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor, causal: bool,
                      window_left: int, window_right: int, softmax_scale: float, return_lse: bool,
                      q_descale: Optional[torch.Tensor] = None, k_descale: Optional[torch.Tensor] = None,
                      v_descale: Optional[torch.Tensor] = None, out_dtype: int = 0, softcap: float = 0.0,
                      sinks: Optional[torch.Tensor] = None) -> torch.Tensor:
    _, lse = dense(q, k, v, out, causal, window_left, window_right, softmax_scale, return_lse,
                   fp8=fp8_args(q_descale, k_descale, v_descale, out_dtype), mods=mods_arg(softcap, sinks))
    return _lse_or_empty(lse, q)


@_attention_out_op.register_fake
def _(q, k, v, out, causal, window_left, window_right, softmax_scale, return_lse, q_descale=None,
      k_descale=None, v_descale=None, out_dtype=0, softcap=0.0, sinks=None):
    b, sq, hq, _, _, _, _ = dense_shapes(q, k, v)
    _fake_mods(q, hq, softcap, sinks)
    return q.new_empty((b, hq, sq) if return_lse else (0,), dtype=torch.float32)


@torch.library.custom_op("fa4::attention_varlen", mutates_args=(), device_types="cuda")
def _varlen_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens_q: torch.Tensor,
               cu_seqlens_k: Optional[torch.Tensor], max_seqlen_q: int, max_seqlen_k: int,
               seqused_k: Optional[torch.Tensor], block_table: Optional[torch.Tensor], causal: bool,
               window_left: int, window_right: int, softmax_scale: float, return_lse: bool,
               q_descale: Optional[torch.Tensor] = None, k_descale: Optional[torch.Tensor] = None,
               v_descale: Optional[torch.Tensor] = None, out_dtype: int = 0, softcap: float = 0.0,
               sinks: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    out, lse = varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, seqused_k, block_table,
                      None, causal, window_left, window_right, softmax_scale, return_lse,
                      fp8=fp8_args(q_descale, k_descale, v_descale, out_dtype), mods=mods_arg(softcap, sinks))
    return out, _lse_or_empty(lse, q)


@_varlen_op.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, seqused_k, block_table, causal,
      window_left, window_right, softmax_scale, return_lse, q_descale=None, k_descale=None, v_descale=None,
      out_dtype=0, softcap=0.0, sinks=None):
    _, total, hq, _, _, dv = varlen_shapes(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k, block_table)
    _fake_mods(q, hq, softcap, sinks)
    return (q.new_empty((total, hq, dv), dtype=_fake_out_type(q, out_dtype)),
            q.new_empty((hq, total) if return_lse else (0,), dtype=torch.float32))


@torch.library.custom_op("fa4::attention_varlen_out", mutates_args=("out",), device_types="cuda")
def _varlen_out_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens_q: torch.Tensor,
                   cu_seqlens_k: Optional[torch.Tensor], max_seqlen_q: int, max_seqlen_k: int,
                   seqused_k: Optional[torch.Tensor], block_table: Optional[torch.Tensor], out: torch.Tensor,
                   causal: bool, window_left: int, window_right: int, softmax_scale: float,
                   return_lse: bool, q_descale: Optional[torch.Tensor] = None,
                   k_descale: Optional[torch.Tensor] = None, v_descale: Optional[torch.Tensor] = None,
                   out_dtype: int = 0, softcap: float = 0.0,
                   sinks: Optional[torch.Tensor] = None) -> torch.Tensor:
    _, lse = varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, seqused_k, block_table,
                    out, causal, window_left, window_right, softmax_scale, return_lse,
                    fp8=fp8_args(q_descale, k_descale, v_descale, out_dtype), mods=mods_arg(softcap, sinks))
    return _lse_or_empty(lse, q)


@_varlen_out_op.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, seqused_k, block_table, out, causal,
      window_left, window_right, softmax_scale, return_lse, q_descale=None, k_descale=None, v_descale=None,
      out_dtype=0, softcap=0.0, sinks=None):
    _, total, hq, _, _, _ = varlen_shapes(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k, block_table)
    _fake_mods(q, hq, softcap, sinks)
    return q.new_empty((hq, total) if return_lse else (0,), dtype=torch.float32)


# cache_seqlens is split in two for the schema: an int (every sequence) or a tensor.
@torch.library.custom_op("fa4::attention_with_kvcache", mutates_args=(), device_types="cuda")
def _kvcache_op(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                cache_seqlens: Optional[torch.Tensor], cache_seqlen: int, block_table: Optional[torch.Tensor],
                causal: bool, window_left: int, window_right: int, softmax_scale: float, return_lse: bool,
                q_descale: Optional[torch.Tensor] = None, k_descale: Optional[torch.Tensor] = None,
                v_descale: Optional[torch.Tensor] = None, out_dtype: int = 0, softcap: float = 0.0,
                sinks: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    lens = cache_seqlens if cache_seqlens is not None else (None if cache_seqlen < 0 else cache_seqlen)
    out, lse = kvcache(q, k_cache, v_cache, lens, block_table, None, causal, window_left, window_right,
                       softmax_scale, return_lse, fp8=fp8_args(q_descale, k_descale, v_descale, out_dtype),
                       mods=mods_arg(softcap, sinks))
    return out, _lse_or_empty(lse, q)


@_kvcache_op.register_fake
def _(q, k_cache, v_cache, cache_seqlens, cache_seqlen, block_table, causal, window_left, window_right,
      softmax_scale, return_lse, q_descale=None, k_descale=None, v_descale=None, out_dtype=0, softcap=0.0,
      sinks=None):
    b, sq, hq, _, _, dv, _, _ = kvcache_shapes(q, k_cache, v_cache, cache_seqlens, block_table)
    _fake_mods(q, hq, softcap, sinks)
    return (q.new_empty((b, sq, hq, dv), dtype=_fake_out_type(q, out_dtype)),
            q.new_empty((b, hq, sq) if return_lse else (0,), dtype=torch.float32))


@torch.library.custom_op("fa4::attention_with_kvcache_out", mutates_args=("out",), device_types="cuda")
def _kvcache_out_op(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                    cache_seqlens: Optional[torch.Tensor], cache_seqlen: int, block_table: Optional[torch.Tensor],
                    out: torch.Tensor, causal: bool, window_left: int, window_right: int,
                    softmax_scale: float, return_lse: bool, q_descale: Optional[torch.Tensor] = None,
                    k_descale: Optional[torch.Tensor] = None, v_descale: Optional[torch.Tensor] = None,
                    out_dtype: int = 0, softcap: float = 0.0,
                    sinks: Optional[torch.Tensor] = None) -> torch.Tensor:
    lens = cache_seqlens if cache_seqlens is not None else (None if cache_seqlen < 0 else cache_seqlen)
    _, lse = kvcache(q, k_cache, v_cache, lens, block_table, out, causal, window_left, window_right,
                     softmax_scale, return_lse, fp8=fp8_args(q_descale, k_descale, v_descale, out_dtype),
                     mods=mods_arg(softcap, sinks))
    return _lse_or_empty(lse, q)


@_kvcache_out_op.register_fake
def _(q, k_cache, v_cache, cache_seqlens, cache_seqlen, block_table, out, causal, window_left, window_right,
      softmax_scale, return_lse, q_descale=None, k_descale=None, v_descale=None, out_dtype=0, softcap=0.0,
      sinks=None):
    b, sq, hq, _, _, _, _, _ = kvcache_shapes(q, k_cache, v_cache, cache_seqlens, block_table)
    _fake_mods(q, hq, softcap, sinks)
    return q.new_empty((b, hq, sq) if return_lse else (0,), dtype=torch.float32)


# ------------------------------------------------------ eager or dispatched

_dispatch_modes = getattr(torch._C, "_len_torch_dispatch_stack", lambda: 0)
_function_modes = getattr(torch._C, "_len_torch_function_stack", lambda: 0)
_Tensor = torch.Tensor


def use_op(*tensors):
    """True when a call must go through the registered op rather than straight to
    the library (the caller has checked torch.compiler.is_compiling() already): for
    tensor subclasses (fake, functional) and meta tensors, under dispatch or
    function modes, and when autograd records (the op's backward then raises: fa4
    has no backward).  CPU tensors, and what is no tensor at all (a float
    descale), go straight on, to be refused with a message that says what is
    wrong."""
    if _dispatch_modes() or _function_modes():
        return True
    grad = torch.is_grad_enabled()
    for t in tensors:
        if isinstance(t, _Tensor) and (type(t) is not _Tensor or t.is_meta or (grad and t.requires_grad and t.is_cuda)):
            return True
    return False
