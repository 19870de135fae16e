"""fa4 on a GPU against a float64 reference: dense (ragged lengths 1, 17, 1000,
causal and not, GQA/MQA, windows, strided views, fp16, head_dim_v < head_dim),
fp8 e4m3 with descales on compute capability 8.x and 9.0 (dense, varlen, KV
caches dense and paged, 8-row pages, varlen queries over pages, appends,
CUDA-graph capture, torch.compile; against the reference on the dequantised
inputs), softcapping and attention sinks (each forward, bf16, fp16 and fp8,
rows with no key, sinks changed between CUDA-graph replays),
varlen, KV caches dense and paged (shuffled pages), new keys appended to them
(and the caches' contents afterwards), remembered call classes that still check
what differs, plans reused across sizes, errors with the library's message,
torch.compile(fullgraph=True), CUDA-graph capture and two streams at once.
Outputs are poisoned with NaN beforehand, so a row the kernel leaves unwritten
fails.  Skips without PyTorch or a GPU."""
import math
import zlib

import _util

# Tolerances of the library's own GPU tests (lib/verify.c, fa4-tune(1)): relative
# Frobenius error of O, and LSE within 2^-10 (1 + |ref|).  The elementwise bound
# is a few units of 16-bit rounding of P and O at |v| <= 4.
REL = {"bfloat16": 2 ** -7, "float16": 2 ** -9}
ABS = {"bfloat16": 3e-2, "float16": 8e-3}


def _torch():
    torch = _util.need_gpu()
    import fa4
    return torch, fa4


def reference(q, k, v, causal=False, window=(-1, -1), scale=None, lens_k=None, softcap=0.0, sinks=None):
    """float64 attention of q [b, sq, hq, d] over k, v [b, sk, hkv, d]: FlashAttention's
    semantics (bottom-right aligned masks; each batch's keys limited to
    lens_k[b]); with SOFTCAP > 0 the scaled scores s become softcap *
    tanh(s / softcap) before masking, and SINKS ([hq] logits) join each row's
    softmax denominator with no value row (LSE includes them; a row with no
    key gets O 0 and LSE its sink).  Returns (out [b, sq, hq, dv], lse [b, hq, sq])."""
    import torch
    b, sq, hq, d = q.shape
    sk, hkv = k.shape[1], k.shape[2]
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    qf = q.double().transpose(1, 2)
    kf = k.double().repeat_interleave(hq // hkv, dim=2).transpose(1, 2)
    vf = v.double().repeat_interleave(hq // hkv, dim=2).transpose(1, 2)
    s = qf @ kf.transpose(-1, -2) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    klen = torch.full((b,), sk, device=q.device) if lens_k is None else lens_k.to(q.device).long()
    klen = klen.view(b, 1, 1, 1)
    i = torch.arange(sq, device=q.device).view(1, 1, sq, 1)
    j = torch.arange(sk, device=q.device).view(1, 1, 1, sk)
    diag = i + klen - sq
    mask = j < klen
    wl, wr = window
    if causal:
        wr = 0
    if wr >= 0:
        mask = mask & (j <= diag + wr)
    if wl >= 0:
        mask = mask & (j >= diag - wl)
    s = s.masked_fill(~mask, float("-inf"))
    if sinks is None:
        lse = torch.logsumexp(s, dim=-1)
    else:
        sink = sinks.to(q.device).double().view(1, hq, 1, 1).expand(b, hq, sq, 1)
        lse = torch.logsumexp(torch.cat([s, sink], dim=-1), dim=-1)
    p = torch.exp(s - lse.unsqueeze(-1)).nan_to_num(0.0)
    return (p @ vf).transpose(1, 2), lse


def check(out, ref, what, lse=None, ref_lse=None):
    import torch
    name = str(out.dtype).split(".")[-1]
    assert not torch.isnan(out).any(), "%s: NaN in the output (a row left unwritten?)" % what
    diff = out.double() - ref
    norm = ref.norm().item()
    rel = diff.norm().item() / norm if norm else diff.norm().item()
    worst = diff.abs().max().item() if diff.numel() else 0.0
    assert rel <= REL[name] and worst <= ABS[name], "%s: relative error %.2e (tol %.1e), max |diff| %.2e " \
        "(tol %.1e)" % (what, rel, REL[name], worst, ABS[name])
    if lse is not None:
        inf = torch.isinf(ref_lse)
        assert torch.equal(torch.isinf(lse), inf), "%s: LSE -inf where the reference is not, or not where it is" % what
        err = ((lse.double() - ref_lse).abs() - 2 ** -10 * (1 + ref_lse.abs()))[~inf]
        assert err.numel() == 0 or err.max().item() <= 0, "%s: LSE off by up to %.2e" % (
            what, (lse.double() - ref_lse)[~inf].abs().max().item())



def _captured(torch, run):
    """(graph, outputs): RUN() once on a side stream (plans are made outside a capture),
    then captured into a CUDA graph."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        run()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = run()
    return graph, out

def _rand(torch, *shape, dtype=None, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, device="cuda", dtype=dtype or torch.bfloat16, generator=g)


def _poisoned(torch, shape, dtype):
    return torch.full(shape, float("nan"), device="cuda", dtype=dtype)


# ---------------------------------------------------------------- dense

def _dense_case(b, sq, sk, hq, hkv, d=128, dv=None, causal=False, window=(-1, -1), dtype="bfloat16",
                scale=None):
    def test():
        torch, fa4 = _torch()
        dt = getattr(torch, dtype)
        seed = zlib.crc32(repr((b, sq, sk, hq, hkv, d, dv, causal, window, dtype)).encode()) & 0xffff
        q = _rand(torch, b, sq, hq, d, dtype=dt, seed=seed)
        k = _rand(torch, b, sk, hkv, d, dtype=dt, seed=seed + 1)
        v = _rand(torch, b, sk, hkv, dv or d, dtype=dt, seed=seed + 2)
        out = _poisoned(torch, (b, sq, hq, dv or d), dt)
        o, lse = fa4.attention(q, k, v, causal=causal, window=window, softmax_scale=scale, return_lse=True,
                               out=out)
        assert o is out
        ref, ref_lse = reference(q, k, v, causal, window, scale)
        check(o, ref, "dense", lse, ref_lse)
        o2 = fa4.attention(q, k, v, causal=causal, window=window, softmax_scale=scale)
        check(o2, ref, "dense without LSE, out allocated")
    return test


for _b, _sq, _sk, _hq, _hkv in [(2, 1, 1, 4, 4), (2, 17, 17, 4, 4), (2, 1000, 1000, 4, 4),
                                (2, 17, 1000, 8, 2), (1, 1000, 17, 8, 2), (3, 1, 1000, 8, 1)]:
    for _causal in (False, True):
        globals()["test_dense_b%d_q%d_k%d_h%d_%d%s" % (_b, _sq, _sk, _hq, _hkv, "_causal" if _causal else "")] = \
            _dense_case(_b, _sq, _sk, _hq, _hkv, causal=_causal)
test_dense_fp16_d64 = _dense_case(2, 1000, 1000, 4, 2, d=64, dtype="float16")
test_dense_fp16_d64_causal = _dense_case(2, 1000, 1000, 4, 2, d=64, causal=True, dtype="float16")
test_dense_d192_v128 = _dense_case(2, 17, 1000, 4, 2, d=192, dv=128, causal=True)
test_dense_window = _dense_case(2, 1000, 1000, 4, 2, window=(100, 20))
test_dense_window_causal = _dense_case(2, 17, 1000, 4, 2, causal=True, window=(64, -1))
test_dense_scale = _dense_case(2, 17, 17, 4, 4, scale=0.3)


# ------------------------------------------------------------------ fp8

# The library's fp8 tolerances (lib/verify.h): relative Frobenius error of O
# 4e-2 against the float64 reference on the dequantised inputs (the sm90
# family rounds P to e4m3, the reference does not), LSE within 2^-8 (1 + |ref|).
FP8_REL, FP8_LSE = 4e-2, 2 ** -8


def _need_fp8(torch):
    if getattr(torch, "float8_e4m3fn", None) is None:
        _util.skip("this PyTorch has no float8_e4m3fn")
    if torch.cuda.get_device_capability() < (8, 0):
        _util.skip("fp8 runs on compute capability 8.0 and later (the sm80 and sm90 families)")


def _fp8_descales(torch, b, hkv, g):
    """float32 [b, hkv] descales in [0.5, 2)."""
    return torch.rand(b, hkv, device="cuda", generator=g) * 1.5 + 0.5


def _e4m3(torch, x, scale):
    """X (float32, [..., heads, dim]) over SCALE ([..., heads]: X's factor per
    row and head) as e4m3, and the float64 values the e4m3 ones stand for."""
    s = scale.unsqueeze(-1)
    x8 = (x / s).to(torch.float8_e4m3fn)
    return x8, x8.double() * s.double()


def _per_head(ds, heads):
    """[batch, heads_kv] descales spread over HEADS heads (a query head shares
    its KV head's factor)."""
    return ds.repeat_interleave(heads // ds.shape[1], dim=1)


def _fp8_inputs(torch, b, sq, sk, hq, hkv, d, seed, descale=True):
    """e4m3 q, k, v (N(0,1) values over the descale) and their float32
    [batch, heads_kv] descales (None when DESCALE is false), plus the
    dequantised float64 tensors the reference takes."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    tensors, scales, real = [], [], []
    for shape in ((b, sq, hq, d), (b, sk, hkv, d), (b, sk, hkv, d)):
        ds = _fp8_descales(torch, b, hkv, g) if descale else None
        x = torch.randn(*shape, device="cuda", generator=g)
        per_head = torch.ones(b, shape[2], device="cuda") if ds is None else _per_head(ds, shape[2])
        x8, xr = _e4m3(torch, x, per_head[:, None].expand(b, shape[1], shape[2]))
        tensors.append(x8)
        scales.append(ds)
        real.append(xr)
    return tensors, scales, real


def _check_fp8(out, ref, what, lse=None, ref_lse=None):
    """OUT within FP8_REL of REF (relative Frobenius error), LSE within FP8_LSE
    (1 + |ref|) and -inf exactly where the reference's is (rows with no key)."""
    import torch
    assert not torch.isnan(out).any(), "%s: NaN in the output (a row left unwritten?)" % what
    norm = ref.norm().item()
    rel = (out.double() - ref).norm().item() / (norm or 1.0)
    assert rel <= FP8_REL, "%s: relative error %.2e (tol %.1e)" % (what, rel, FP8_REL)
    if lse is not None:
        inf = torch.isinf(ref_lse)
        assert torch.equal(torch.isinf(lse), inf), "%s: LSE -inf where the reference is not, or not where it is" % what
        err = ((lse.double() - ref_lse).abs() - FP8_LSE * (1 + ref_lse.abs()))[~inf]
        assert err.numel() == 0 or err.max().item() <= 0, "%s: LSE off by up to %.2e" % (
            what, (lse.double() - ref_lse)[~inf].abs().max().item())


def _fp8_case(b, sq, sk, hq, hkv, d=128, causal=False, descale=True, out_dtype=None):
    def test():
        torch, fa4 = _torch()
        _need_fp8(torch)
        seed = zlib.crc32(repr(("fp8", b, sq, sk, hq, hkv, d, causal, descale, out_dtype)).encode()) & 0xffff
        (q, k, v), (qd, kd, vd), (qr, kr, vr) = _fp8_inputs(torch, b, sq, sk, hq, hkv, d, seed, descale)
        odt = out_dtype or torch.bfloat16
        out = _poisoned(torch, (b, sq, hq, d), odt)
        o, lse = fa4.attention(q, k, v, causal=causal, return_lse=True, out=out, q_descale=qd, k_descale=kd,
                               v_descale=vd, out_dtype=out_dtype)
        assert o is out and o.dtype == odt
        ref, ref_lse = reference(qr, kr, vr, causal)
        _check_fp8(o, ref, "fp8", lse, ref_lse)
        o2 = fa4.attention(q, k, v, causal=causal, q_descale=qd, k_descale=kd, v_descale=vd, out_dtype=out_dtype)
        assert o2.dtype == odt
        _check_fp8(o2, ref, "fp8, out allocated (remembered call)")
    return test


test_fp8_b2_q1000_k1000 = _fp8_case(2, 1000, 1000, 4, 2)
test_fp8_b2_q1000_k1000_causal = _fp8_case(2, 1000, 1000, 4, 2, causal=True)
test_fp8_d64_q17_causal = _fp8_case(1, 17, 17, 2, 1, d=64, causal=True)
test_fp8_q1_k300_no_descale = _fp8_case(1, 1, 300, 4, 4, descale=False)


def test_fp8_fp16_output():
    torch, fa4 = _torch()
    _need_fp8(torch)
    _fp8_case(1, 300, 700, 8, 2, causal=True, out_dtype=torch.float16)()


def test_fp8_descales_per_call():
    """A remembered fp8 call passes each call's descale pointers: doubling
    v_descale doubles O."""
    torch, fa4 = _torch()
    _need_fp8(torch)
    (q, k, v), (qd, kd, vd), _ = _fp8_inputs(torch, 2, 256, 256, 4, 2, 128, 77)
    o1 = fa4.attention(q, k, v, q_descale=qd, k_descale=kd, v_descale=vd)
    o2 = fa4.attention(q, k, v, q_descale=qd, k_descale=kd, v_descale=vd * 2)
    rel = (o2.double() - 2 * o1.double()).norm().item() / (2 * o1.double()).norm().item()
    assert rel <= 1e-2, "doubling v_descale: relative difference %.2e" % rel


def test_fp8_errors():
    torch, fa4 = _torch()
    _need_fp8(torch)
    (q, k, v), (qd, kd, vd), _ = _fp8_inputs(torch, 2, 64, 64, 4, 2, 128, 78)
    bf = q.to(torch.bfloat16)
    for call, exc, words in [
            (lambda: fa4.attention(bf, bf, bf, q_descale=qd), ValueError, "float8_e4m3fn"),
            (lambda: fa4.attention(bf, bf, bf, out_dtype=torch.float16), TypeError, "out_dtype"),
            (lambda: fa4.attention(q, k, v, out_dtype=torch.float32), TypeError, "bfloat16 or torch.float16"),
            (lambda: fa4.attention(q, k, v, q_descale=qd[:1]), ValueError, "[batch, heads_kv]"),
            (lambda: fa4.attention(q, k, v, k_descale=kd.double()), TypeError, "torch.float32"),
            (lambda: fa4.attention(q, k, v, v_descale=vd.cpu()), ValueError, "v_descale must be on cuda"),
            (lambda: fa4.attention(q, k, v, out=torch.empty(2, 64, 4, 128, device="cuda", dtype=q.dtype)),
             ValueError, "bfloat16")]:
        try:
            call()
        except exc as e:
            assert words in str(e), (words, str(e))
        else:
            raise AssertionError("no %s for %s" % (exc.__name__, words))


def test_fp8_torch_compile():
    torch, fa4 = _torch()
    _need_fp8(torch)
    (q, k, v), (qd, kd, vd), (qr, kr, vr) = _fp8_inputs(torch, 2, 300, 300, 4, 2, 128, 79)

    def f(q, k, v, qd, kd, vd):
        return fa4.attention(q, k, v, causal=True, q_descale=qd, k_descale=kd, v_descale=vd) * 2
    o = torch.compile(f, fullgraph=True)(q, k, v, qd, kd, vd)
    assert o.dtype == torch.bfloat16
    _check_fp8(o / 2, reference(qr, kr, vr, True)[0], "compiled fp8")


def test_dense_strided_views():
    """Q, K, V slices of one packed QKV tensor, and an out that is a slice too."""
    torch, fa4 = _torch()
    b, s, h, d = 2, 1000, 4, 128
    qkv = _rand(torch, b, s, 3, h, d, seed=5)
    q, k, v = qkv.unbind(2)
    big = _poisoned(torch, (b, s, 2 * h, d), torch.bfloat16)
    out = big[:, :, h:]
    fa4.attention(q, k, v, causal=True, out=out)
    check(out, reference(q, k, v, True)[0], "strided views")
    assert torch.isnan(big[:, :, :h]).all(), "wrote outside out"


def test_plans_cover_smaller_calls():
    """One plan serves every call whose sizes round up to its maxima."""
    torch, fa4 = _torch()
    from fa4 import _ops
    q = _rand(torch, 2, 1000, 4, 128, seed=7)
    k = _rand(torch, 2, 1000, 4, 128, seed=8)
    info = fa4.plan_info(q, k, k, causal=True)
    assert (info.batch, info.seqlen_q, info.seqlen_k) == (2, 1024, 1024), info
    fa4.attention(q, k, k, causal=True)
    plans = len(_ops._devices[q.get_device()].plans)
    for n in (700, 513, 1000):
        o = fa4.attention(q[:, :n].contiguous(), k[:, :n].contiguous(), k[:, :n].contiguous(), causal=True)
        check(o, reference(q[:, :n], k[:, :n], k[:, :n], True)[0], "seqlen %d on the 1024 plan" % n)
    assert len(_ops._devices[q.get_device()].plans) == plans, "a new plan for a smaller call"
    assert isinstance(info.config, str) and info.config and isinstance(info.source, str) and info.source, info
    assert info.family in (80, 90), info


def test_errors_carry_the_library_message():
    torch, fa4 = _torch()
    q = _rand(torch, 1, 16, 2, 72)
    try:
        fa4.attention(q, q, q)
    except fa4.Fa4Error as e:
        assert "head_dim_qk=72" in str(e), e
    else:
        raise AssertionError("head_dim 72 ran")
    buf = _rand(torch, 16 * 2 * 128 + 8)
    odd = buf[1:1 + 16 * 2 * 128].view(1, 16, 2, 128)    # 2 bytes past an aligned address
    try:
        fa4.attention(odd, odd, odd)
    except fa4.Fa4Error as e:
        assert e.function == "fa4_forward" and "16-byte aligned" in e.message, e
    else:
        raise AssertionError("a misaligned q ran")
    for bad, exc in [((q.float(), q.float(), q.float()), TypeError),
                     ((_rand(torch, 1, 16, 2, 64), _rand(torch, 2, 16, 2, 64), _rand(torch, 2, 16, 2, 64)), ValueError),
                     ((_rand(torch, 1, 16, 2, 64).transpose(1, 3).contiguous().transpose(1, 3),) * 3, ValueError),
                     ((q.cpu(), q.cpu(), q.cpu()), ValueError)]:
        try:
            fa4.attention(*bad)
        except exc:
            pass
        else:
            raise AssertionError("%s not raised for %s" % (exc.__name__, [tuple(t.shape) for t in bad]))


# ---------------------------------------------------------------- varlen

def _varlen_case(lens_q, lens_k, hq, hkv, causal, seqused=None):
    def test():
        torch, fa4 = _torch()
        d = 128
        cu_q = torch.tensor([0] + lens_q, device="cuda").cumsum(0).to(torch.int32)
        cu_k = torch.tensor([0] + lens_k, device="cuda").cumsum(0).to(torch.int32)
        q = _rand(torch, sum(lens_q), hq, d, seed=11)
        k = _rand(torch, sum(lens_k), hkv, d, seed=12)
        v = _rand(torch, sum(lens_k), hkv, d, seed=13)
        used = None if seqused is None else torch.tensor(seqused, device="cuda", dtype=torch.int32)
        out = _poisoned(torch, q.shape, q.dtype)
        o, lse = fa4.attention_varlen(q, k, v, cu_q, cu_k, max(lens_q), max(lens_k), causal=causal,
                                      seqused_k=used, return_lse=True, out=out)
        assert lse.shape == (hq, sum(lens_q)), lse.shape
        for i in range(len(lens_q)):
            a, z = cu_q[i].item(), cu_q[i + 1].item()
            ka, kz = cu_k[i].item(), cu_k[i + 1].item()
            if seqused is not None:
                kz = ka + seqused[i]
            ref, ref_lse = reference(q[None, a:z], k[None, ka:kz], v[None, ka:kz], causal)
            check(o[None, a:z], ref, "varlen sequence %d" % i, lse[None, :, a:z], ref_lse)
    return test


test_varlen_self = _varlen_case([1, 17, 1000], [1, 17, 1000], 4, 4, False)
test_varlen_self_causal = _varlen_case([1, 17, 1000], [1, 17, 1000], 8, 2, True)
test_varlen_cross = _varlen_case([1000, 17, 1], [17, 1, 1000], 8, 2, False)
test_varlen_cross_causal = _varlen_case([1000, 17, 1], [17, 1, 1000], 8, 2, True)   # rows with no key
test_varlen_seqused = _varlen_case([1, 17, 1000], [40, 40, 1200], 8, 2, True, seqused=[1, 17, 1000])


# ---------------------------------------------------------------- KV caches

def _cache(torch, lens, L, hkv, d, seed):
    b = len(lens)
    k = _rand(torch, b, L, hkv, d, seed=seed)
    v = _rand(torch, b, L, hkv, d, seed=seed + 1)
    return k, v


def _paged(torch, k, v, page, seed):
    """The same cache as a pool of pages in shuffled order and its block table."""
    b, L, h, d = k.shape
    n = b * L // page
    g = torch.Generator(device="cuda").manual_seed(seed)
    perm = torch.randperm(n, device="cuda", generator=g)
    kp = torch.empty(n, page, h, d, device="cuda", dtype=k.dtype)
    vp = torch.empty_like(kp)
    kp[perm] = k.reshape(n, page, h, d)
    vp[perm] = v.reshape(n, page, h, d)
    return kp, vp, perm.view(b, L // page).to(torch.int32)


def _kvcache_case(sq, causal, paged=0, lens=(1, 17, 1000), hq=8, hkv=2):
    def test():
        torch, fa4 = _torch()
        L, d = 1024, 128
        k, v = _cache(torch, lens, L, hkv, d, seed=21)
        q = _rand(torch, len(lens), sq, hq, d, seed=23)
        used = torch.tensor(lens, device="cuda", dtype=torch.int32)
        table = None
        kc, vc = k, v
        if paged:
            kc, vc, table = _paged(torch, k, v, paged, seed=24)
        out = _poisoned(torch, q.shape, q.dtype)
        o, lse = fa4.attention_with_kvcache(q, kc, vc, used, table, causal=causal, return_lse=True, out=out)
        ref, ref_lse = reference(q, k, v, causal, lens_k=used)
        check(o, ref, "kvcache sq=%d page=%d" % (sq, paged), lse, ref_lse)
    return test


test_kvcache_decode = _kvcache_case(1, False)
test_kvcache_decode_causal = _kvcache_case(1, True)
test_kvcache_spec4_causal = _kvcache_case(4, True)
test_kvcache_chunk_causal = _kvcache_case(200, True)
test_kvcache_mqa_decode = _kvcache_case(1, False, hq=8, hkv=1)
test_kvcache_paged16_decode = _kvcache_case(1, False, paged=16)
test_kvcache_paged16_spec4_causal = _kvcache_case(4, True, paged=16)
test_kvcache_paged64_decode_causal = _kvcache_case(1, True, paged=64)


def test_kvcache_int_and_full_lengths():
    torch, fa4 = _torch()
    k, v = _cache(torch, (0, 0), 1024, 2, 128, seed=31)
    q = _rand(torch, 2, 3, 8, 128, seed=32)
    o = fa4.attention_with_kvcache(q, k, v, 700, causal=True)
    check(o, reference(q, k[:, :700], v[:, :700], True)[0], "cache_seqlens=700")
    o = fa4.attention_with_kvcache(q, k, v, causal=True)
    check(o, reference(q, k, v, True)[0], "whole cache")


def _cache_rows(torch, kc, table, b):
    """A paged cache's pool read back as the dense [batch, rows, heads, dim] cache."""
    return kc if table is None else kc[table.long()].reshape(b, -1, *kc.shape[2:])


def _append_case(s_new, causal, paged=0, lens=(0, 1, 17, 1000), hq=8, hkv=2):
    """attention_with_kvcache(k=, v=): the new rows land at cache_seqlens[b] (the
    cache afterwards equals the expected append, rows elsewhere untouched) and
    the attention reads cache_seqlens[b] + seqlen_new keys."""
    def test():
        torch, fa4 = _torch()
        L, d, b = 1024, 128, len(lens)
        k0, v0 = _cache(torch, lens, L, hkv, d, seed=81)
        q = _rand(torch, b, s_new, hq, d, seed=82)
        kn = _rand(torch, b, s_new, hkv, d, seed=83)
        vn = _rand(torch, b, s_new, hkv, d, seed=84)
        want_k, want_v = k0.clone(), v0.clone()
        for i, n in enumerate(lens):
            want_k[i, n:n + s_new], want_v[i, n:n + s_new] = kn[i], vn[i]
        used = torch.tensor(lens, device="cuda", dtype=torch.int32)
        table = None
        kc, vc = k0.clone(), v0.clone()
        if paged:
            kc, vc, table = _paged(torch, k0, v0, paged, seed=85)
        out = _poisoned(torch, q.shape, q.dtype)
        o, lse = fa4.attention_with_kvcache(q, kc, vc, used, table, k=kn, v=vn, causal=causal, return_lse=True,
                                            out=out)
        what = "append seqlen_new=%d page=%d%s" % (s_new, paged, " causal" if causal else "")
        assert used.tolist() == list(lens), "%s: cache_seqlens changed" % what
        assert torch.equal(_cache_rows(torch, kc, table, b), want_k), "%s: k_cache after the append" % what
        assert torch.equal(_cache_rows(torch, vc, table, b), want_v), "%s: v_cache after the append" % what
        ref, ref_lse = reference(q, want_k, want_v, causal, lens_k=used + s_new)
        check(o, ref, what, lse, ref_lse)
    return test


test_kvcache_append1 = _append_case(1, False)
test_kvcache_append1_causal = _append_case(1, True)
test_kvcache_append3_causal = _append_case(3, True)
test_kvcache_append3_mqa = _append_case(3, False, hq=8, hkv=1)
test_kvcache_paged16_append1 = _append_case(1, False, paged=16)
test_kvcache_paged16_append3_causal = _append_case(3, True, paged=16)
test_kvcache_paged64_append3 = _append_case(3, False, paged=64)


def test_kvcache_append_int_length():
    """An int cache_seqlens: every sequence's new rows at the same place."""
    torch, fa4 = _torch()
    for paged in (0, 16):
        k0, v0 = _cache(torch, (0, 0), 1024, 2, 128, seed=91)
        q = _rand(torch, 2, 3, 8, 128, seed=92)
        kn, vn = _rand(torch, 2, 3, 2, 128, seed=93), _rand(torch, 2, 3, 2, 128, seed=94)
        kc, vc, table = (k0.clone(), v0.clone(), None) if not paged else _paged(torch, k0, v0, paged, seed=95)
        o = fa4.attention_with_kvcache(q, kc, vc, 700, table, k=kn, v=vn, causal=True)
        want_k, want_v = k0.clone(), v0.clone()
        want_k[:, 700:703], want_v[:, 700:703] = kn, vn
        assert torch.equal(_cache_rows(torch, kc, table, 2), want_k), "int cache_seqlens, page %d" % paged
        assert torch.equal(_cache_rows(torch, vc, table, 2), want_v), "int cache_seqlens, page %d" % paged
        check(o, reference(q, want_k[:, :703], want_v[:, :703], True)[0], "int cache_seqlens page %d" % paged)


def test_kvcache_append_in_cuda_graph():
    """Appending decode steps captured in a CUDA graph: no host read of the
    lengths, so each replay appends where the lengths tensor says then."""
    torch, fa4 = _torch()
    b, L = 3, 1024
    k0, v0 = _cache(torch, (0,) * b, L, 2, 128, seed=101)
    for paged in (0, 16):
        kc, vc, table = (k0.clone(), v0.clone(), None) if not paged else _paged(torch, k0, v0, paged, seed=102)
        q = _rand(torch, b, 1, 8, 128, seed=103)
        kn, vn = _rand(torch, b, 1, 2, 128, seed=104), _rand(torch, b, 1, 2, 128, seed=105)
        lens = torch.tensor([5, 0, 900], device="cuda", dtype=torch.int32)
        step = lambda: fa4.attention_with_kvcache(q, kc, vc, lens, table, k=kn, v=vn)
        graph, o = _captured(torch, step)
        for seed, new_lens in ((1, [6, 1, 901]), (2, [1000, 17, 3])):
            want_k = _cache_rows(torch, kc, table, b).clone()
            want_v = _cache_rows(torch, vc, table, b).clone()
            lens.copy_(torch.tensor(new_lens, device="cuda", dtype=torch.int32))
            kn.copy_(_rand(torch, *kn.shape, seed=110 + seed))
            vn.copy_(_rand(torch, *vn.shape, seed=120 + seed))
            q.copy_(_rand(torch, *q.shape, seed=130 + seed))
            for i, n in enumerate(new_lens):
                want_k[i, n], want_v[i, n] = kn[i, 0], vn[i, 0]
            o.fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            what = "graph append replay %d page %d" % (seed, paged)
            assert torch.equal(_cache_rows(torch, kc, table, b), want_k), what
            assert torch.equal(_cache_rows(torch, vc, table, b), want_v), what
            check(o, reference(q, want_k, want_v, lens_k=lens + 1)[0], what)


def test_remembered_calls_still_check():
    """A call whose class fa4 remembers (shapes, strides, dtypes, devices) skips
    the checks; anything that differs takes the long way and its errors."""
    torch, fa4 = _torch()
    from fa4 import _ops
    q = _rand(torch, 2, 17, 4, 128, seed=141)
    k = _rand(torch, 2, 40, 2, 128, seed=142)
    out = _poisoned(torch, q.shape, q.dtype)
    for _ in range(2):
        fa4.attention(q, k, k, out=out)
    assert any(key[0] == q.shape for key in _ops._dense_calls), "the call was not remembered"
    check(out, reference(q, k, k)[0], "remembered dense call")
    bad = [((q, k, k), dict(out=out.half()), ValueError),
           ((q, k.transpose(2, 3).contiguous().transpose(2, 3), k), {}, ValueError),
           ((q.half(), k, k), dict(out=out), TypeError),
           ((q, k[:1], k[:1]), dict(out=out), ValueError)]
    for args, kwargs, exc in bad:
        try:
            fa4.attention(*args, **kwargs)
        except exc:
            pass
        else:
            raise AssertionError("%s not raised after a remembered call" % exc.__name__)
    # Autograd still goes through the op (whose backward raises), not straight to the library.
    o = fa4.attention(q.detach().requires_grad_(), k, k, out=None)
    assert o.grad_fn is not None, "a call that autograd records went straight to the library"
    # An int cache_seqlens is checked on each call, not remembered.
    kc, vc = _cache(torch, (0, 0), 1024, 2, 128, seed=143)
    qd = _rand(torch, 2, 1, 4, 128, seed=144)
    for n in (700, 701):
        check(fa4.attention_with_kvcache(qd, kc, vc, n), reference(qd, kc[:, :n], vc[:, :n])[0], "length %d" % n)
    o, lse = fa4.attention_with_kvcache(qd, kc, vc, 0, return_lse=True)
    assert torch.equal(o, torch.zeros_like(o)) and torch.isinf(lse).all(), "cache_seqlens=0"
    try:
        fa4.attention_with_kvcache(qd, kc, vc, 1025)
    except ValueError as e:
        assert "cache_seqlens=1025" in str(e), e
    else:
        raise AssertionError("cache_seqlens past the cache accepted")


def test_varlen_paged():
    """Packed queries over a paged cache (flash_attn_varlen_func's block_table)."""
    torch, fa4 = _torch()
    lens_q, lens_k = [1, 4, 17], [1, 17, 1000]
    k, v = _cache(torch, lens_k, 1024, 2, 128, seed=41)
    kp, vp, table = _paged(torch, k, v, 16, seed=42)
    q = _rand(torch, sum(lens_q), 8, 128, seed=43)
    cu_q = torch.tensor([0] + lens_q, device="cuda").cumsum(0).to(torch.int32)
    cu_k = torch.tensor([0] + lens_k, device="cuda").cumsum(0).to(torch.int32)
    o = fa4.attention_varlen(q, kp, vp, cu_q, cu_k, max(lens_q), max(lens_k), causal=True, block_table=table,
                             out=_poisoned(torch, q.shape, q.dtype))
    for i in range(3):
        a, z = cu_q[i].item(), cu_q[i + 1].item()
        ref = reference(q[None, a:z], k[i:i + 1, :lens_k[i]], v[i:i + 1, :lens_k[i]], True)[0]
        check(o[None, a:z], ref, "varlen paged sequence %d" % i)


# ------------------------------------------------ fp8 varlen and KV caches

def _seq_rows(torch, lens):
    """The sequence of each packed row: [0] * lens[0] + [1] * lens[1] + ..."""
    return torch.repeat_interleave(torch.arange(len(lens), device="cuda"),
                                   torch.tensor(lens, device="cuda"))


def _fp8_varlen_case(lens_q, lens_k, hq, hkv, causal, seqused=None, out_dtype=None, d=128):
    """fp8 attention_varlen against the float64 reference of each sequence on
    the dequantised inputs: packed rows scaled by their sequence's descales."""
    def test():
        torch, fa4 = _torch()
        _need_fp8(torch)
        b = len(lens_q)
        seed = zlib.crc32(repr(("fp8 varlen", lens_q, lens_k, hq, hkv, causal, seqused, d)).encode()) & 0xffff
        g = torch.Generator(device="cuda").manual_seed(seed)
        qd, kd, vd = (_fp8_descales(torch, b, hkv, g) for _ in range(3))
        rq, rk = _seq_rows(torch, lens_q), _seq_rows(torch, lens_k)
        q, qr = _e4m3(torch, torch.randn(sum(lens_q), hq, d, device="cuda", generator=g), _per_head(qd, hq)[rq])
        k, kr = _e4m3(torch, torch.randn(sum(lens_k), hkv, d, device="cuda", generator=g), kd[rk])
        v, vr = _e4m3(torch, torch.randn(sum(lens_k), hkv, d, device="cuda", generator=g), vd[rk])
        cu_q = torch.tensor([0] + lens_q, device="cuda").cumsum(0).to(torch.int32)
        cu_k = torch.tensor([0] + lens_k, device="cuda").cumsum(0).to(torch.int32)
        used = None if seqused is None else torch.tensor(seqused, device="cuda", dtype=torch.int32)
        odt = out_dtype or torch.bfloat16
        out = _poisoned(torch, (sum(lens_q), hq, d), odt)
        o, lse = fa4.attention_varlen(q, k, v, cu_q, cu_k, max(lens_q), max(lens_k), causal=causal,
                                      seqused_k=used, return_lse=True, out=out, q_descale=qd, k_descale=kd,
                                      v_descale=vd, out_dtype=out_dtype)
        assert o is out and lse.shape == (hq, sum(lens_q))
        o2 = fa4.attention_varlen(q, k, v, cu_q, cu_k, max(lens_q), max(lens_k), causal=causal, seqused_k=used,
                                  q_descale=qd, k_descale=kd, v_descale=vd, out_dtype=out_dtype)
        assert o2.dtype == odt
        for i in range(b):
            a, z = cu_q[i].item(), cu_q[i + 1].item()
            ka = cu_k[i].item()
            kz = ka + (seqused[i] if seqused is not None else lens_k[i])
            ref, ref_lse = reference(qr[None, a:z], kr[None, ka:kz], vr[None, ka:kz], causal)
            _check_fp8(o[None, a:z], ref, "fp8 varlen sequence %d" % i, lse[None, :, a:z], ref_lse)
            _check_fp8(o2[None, a:z], ref, "fp8 varlen sequence %d, out allocated" % i)
    return test


test_fp8_varlen_self = _fp8_varlen_case([1, 17, 1000], [1, 17, 1000], 4, 4, False)
test_fp8_varlen_self_causal = _fp8_varlen_case([1, 17, 1000], [1, 17, 1000], 8, 2, True)
test_fp8_varlen_cross_causal = _fp8_varlen_case([1000, 17, 1], [17, 1, 300], 8, 2, True)    # rows with no key
test_fp8_varlen_seqused = _fp8_varlen_case([1, 17, 300], [40, 40, 1000], 8, 2, True, seqused=[1, 17, 300])
test_fp8_varlen_d64 = _fp8_varlen_case([17, 1, 300], [300, 17, 1], 4, 1, False, d=64)


def test_fp8_varlen_fp16_output():
    torch, fa4 = _torch()
    _need_fp8(torch)
    _fp8_varlen_case([1, 17, 300], [1, 17, 300], 8, 2, True, out_dtype=torch.float16)()


def _fp8_cache(torch, b, L, hkv, d, g, paged=0):
    """An fp8 KV cache [b, L, hkv, d] (each sequence's rows over its descales),
    its descales, its dequantised float64 rows, and with PAGED the same
    cache as shuffled pages of that many rows with a block table."""
    kd, vd = _fp8_descales(torch, b, hkv, g), _fp8_descales(torch, b, hkv, g)
    k, kr = _e4m3(torch, torch.randn(b, L, hkv, d, device="cuda", generator=g), kd[:, None].expand(b, L, hkv))
    v, vr = _e4m3(torch, torch.randn(b, L, hkv, d, device="cuda", generator=g), vd[:, None].expand(b, L, hkv))
    table = None
    if paged:   # as bytes: PyTorch's CUDA indexing takes no float8 types
        k, v, table = _paged(torch, k.view(torch.uint8), v.view(torch.uint8), paged, seed=paged)
        k, v = k.view(torch.float8_e4m3fn), v.view(torch.float8_e4m3fn)
    return k, v, table, kd, vd, kr, vr


def _fp8_kvcache_case(sq, causal, paged=0, lens=(1, 17, 1000), hq=8, hkv=2):
    """fp8 attention_with_kvcache: a dense cache read up to tensor lengths, or
    shuffled pages, against the float64 reference on the dequantised cache."""
    def test():
        torch, fa4 = _torch()
        _need_fp8(torch)
        b, L, d = len(lens), 1024, 128
        g = torch.Generator(device="cuda").manual_seed(zlib.crc32(repr(("fp8 kv", sq, causal, paged, lens, hq,
                                                                        hkv)).encode()) & 0xffff)
        kc, vc, table, kd, vd, kr, vr = _fp8_cache(torch, b, L, hkv, d, g, paged)
        qd = _fp8_descales(torch, b, hkv, g)
        q, qr = _e4m3(torch, torch.randn(b, sq, hq, d, device="cuda", generator=g),
                      _per_head(qd, hq)[:, None].expand(b, sq, hq))
        used = torch.tensor(lens, device="cuda", dtype=torch.int32)
        out = _poisoned(torch, (b, sq, hq, d), torch.bfloat16)
        o, lse = fa4.attention_with_kvcache(q, kc, vc, used, table, causal=causal, return_lse=True, out=out,
                                            q_descale=qd, k_descale=kd, v_descale=vd)
        assert o is out
        ref, ref_lse = reference(qr, kr, vr, causal, lens_k=used)
        what = "fp8 kvcache sq=%d page=%d%s" % (sq, paged, " causal" if causal else "")
        _check_fp8(o, ref, what, lse, ref_lse)
        o2 = fa4.attention_with_kvcache(q, kc, vc, used, table, causal=causal, q_descale=qd, k_descale=kd,
                                        v_descale=vd)
        assert o2.dtype == torch.bfloat16
        _check_fp8(o2, ref, what + ", out allocated (remembered call)")
    return test


test_fp8_kvcache_decode = _fp8_kvcache_case(1, False)
test_fp8_kvcache_chunk_causal = _fp8_kvcache_case(200, True)
test_fp8_kvcache_paged16_decode = _fp8_kvcache_case(1, False, paged=16)
test_fp8_kvcache_paged16_spec4_causal = _fp8_kvcache_case(4, True, paged=16)
test_fp8_kvcache_paged64_decode_causal = _fp8_kvcache_case(1, True, paged=64)
test_fp8_kvcache_paged64_chunk_causal = _fp8_kvcache_case(300, True, paged=64, lens=(300, 317, 1000))
test_fp8_kvcache_paged16_mqa_decode = _fp8_kvcache_case(1, False, paged=16, hq=8, hkv=1)
test_fp8_kvcache_paged8_decode = _fp8_kvcache_case(1, False, paged=8)
test_fp8_kvcache_paged8_chunk_causal = _fp8_kvcache_case(200, True, paged=8)


def _fp8_varlen_paged_case(page, lens_q, lens_k, causal, seqused=False, out_dtype=None, hq=8, hkv=2):
    """fp8 attention_varlen over a paged cache (block_table; the sm80 family
    runs it): packed queries over each sequence's descales against the float64
    reference on the dequantised cache.  The keys per sequence come from
    cu_seqlens_k, or with SEQUSED from seqused_k alone (cu_seqlens_k None);
    OUT_DTYPE: O's torch dtype by name (None: the default, bfloat16)."""
    def test():
        torch, fa4 = _torch()
        _need_fp8(torch)
        b, L, d = len(lens_q), 1024, 128
        g = torch.Generator(device="cuda").manual_seed(zlib.crc32(repr(("fp8 varlen paged", page, lens_q, lens_k,
                                                                        causal, seqused)).encode()) & 0xffff)
        kc, vc, table, kd, vd, kr, vr = _fp8_cache(torch, b, L, hkv, d, g, page)
        qd = _fp8_descales(torch, b, hkv, g)
        q, qr = _e4m3(torch, torch.randn(sum(lens_q), hq, d, device="cuda", generator=g),
                      _per_head(qd, hq)[_seq_rows(torch, lens_q)])
        cu_q = torch.tensor([0] + lens_q, device="cuda").cumsum(0).to(torch.int32)
        cu_k = torch.tensor([0] + lens_k, device="cuda").cumsum(0).to(torch.int32)
        used = torch.tensor(lens_k, device="cuda", dtype=torch.int32) if seqused else None
        odt = getattr(torch, out_dtype or "bfloat16")
        out = _poisoned(torch, (sum(lens_q), hq, d), odt)
        o, lse = fa4.attention_varlen(q, kc, vc, cu_q, None if seqused else cu_k, max(lens_q), max(lens_k),
                                      causal=causal, seqused_k=used, block_table=table, return_lse=True, out=out,
                                      q_descale=qd, k_descale=kd, v_descale=vd, out_dtype=out_dtype and odt)
        assert o is out and o.dtype == odt and lse.shape == (hq, sum(lens_q))
        for i in range(b):
            a, z = cu_q[i].item(), cu_q[i + 1].item()
            ref, ref_lse = reference(qr[None, a:z], kr[i:i + 1, :lens_k[i]], vr[i:i + 1, :lens_k[i]], causal)
            _check_fp8(o[None, a:z], ref, "fp8 varlen over %d-row pages, sequence %d" % (page, i),
                       lse[None, :, a:z], ref_lse)
    return test


test_fp8_varlen_paged16_causal = _fp8_varlen_paged_case(16, [1, 17, 300], [1000, 17, 40], True)  # rows with no key
test_fp8_varlen_paged16_mqa = _fp8_varlen_paged_case(16, [4, 1, 17], [300, 1000, 17], False, hq=8, hkv=1)
test_fp8_varlen_paged8_seqused_causal = _fp8_varlen_paged_case(8, [17, 1, 200], [17, 1000, 333], True, seqused=True)
test_fp8_varlen_paged8_fp16_output = _fp8_varlen_paged_case(8, [1, 1, 1], [1, 1000, 77], False,
                                                            out_dtype="float16")


def test_fp8_kvcache_int_length_and_fp16():
    """An int cache_seqlens over a dense fp8 cache, O in float16."""
    torch, fa4 = _torch()
    _need_fp8(torch)
    g = torch.Generator(device="cuda").manual_seed(161)
    kc, vc, _, kd, vd, kr, vr = _fp8_cache(torch, 2, 1024, 2, 128, g)
    qd = _fp8_descales(torch, 2, 2, g)
    q, qr = _e4m3(torch, torch.randn(2, 3, 8, 128, device="cuda", generator=g), _per_head(qd, 8)[:, None].expand(2, 3, 8))
    out = _poisoned(torch, (2, 3, 8, 128), torch.float16)
    o = fa4.attention_with_kvcache(q, kc, vc, 700, causal=True, out=out, out_dtype=torch.float16, q_descale=qd,
                                   k_descale=kd, v_descale=vd)
    assert o is out
    _check_fp8(o, reference(qr, kr[:, :700], vr[:, :700], True)[0], "fp8 cache_seqlens=700, fp16 out")


def test_fp8_kvcache_append():
    """k=, v= with fp8 caches: the new e4m3 rows (quantised with the cache's
    descales) land at cache_seqlens[b], and the attention reads them."""
    torch, fa4 = _torch()
    _need_fp8(torch)
    b, L, hkv, d, s = 4, 1024, 2, 128, 3
    lens = [0, 1, 17, 1000]
    for paged in (0, 16):
        g = torch.Generator(device="cuda").manual_seed(171 + paged)
        kc, vc, table, kd, vd, kr, vr = _fp8_cache(torch, b, L, hkv, d, g, paged)
        qd = _fp8_descales(torch, b, hkv, g)
        q, qr = _e4m3(torch, torch.randn(b, s, 8, d, device="cuda", generator=g),
                      _per_head(qd, 8)[:, None].expand(b, s, 8))
        kn, knr = _e4m3(torch, torch.randn(b, s, hkv, d, device="cuda", generator=g), kd[:, None].expand(b, s, hkv))
        vn, vnr = _e4m3(torch, torch.randn(b, s, hkv, d, device="cuda", generator=g), vd[:, None].expand(b, s, hkv))
        # Compared as bytes: PyTorch's CUDA indexing takes no float8 types.
        bytes_ = lambda t: t.view(torch.uint8)
        want_k = _cache_rows(torch, bytes_(kc), table, b).clone()
        want_v = _cache_rows(torch, bytes_(vc), table, b).clone()
        for i, n in enumerate(lens):
            want_k[i, n:n + s], want_v[i, n:n + s] = bytes_(kn[i]), bytes_(vn[i])
            kr[i, n:n + s], vr[i, n:n + s] = knr[i], vnr[i]
        used = torch.tensor(lens, device="cuda", dtype=torch.int32)
        out = _poisoned(torch, (b, s, 8, d), torch.bfloat16)
        o = fa4.attention_with_kvcache(q, kc, vc, used, table, k=kn, v=vn, causal=True, out=out, q_descale=qd,
                                       k_descale=kd, v_descale=vd)
        what = "fp8 append page=%d" % paged
        assert torch.equal(_cache_rows(torch, bytes_(kc), table, b), want_k), "%s: k_cache" % what
        assert torch.equal(_cache_rows(torch, bytes_(vc), table, b), want_v), "%s: v_cache" % what
        _check_fp8(o, reference(qr, kr, vr, True, lens_k=used + s)[0], what)


def test_fp8_kvcache_descales_per_call():
    """A remembered fp8 KV-cache call passes each call's descales: doubling
    v_descale doubles O (paged and dense caches)."""
    torch, fa4 = _torch()
    _need_fp8(torch)
    for paged in (0, 16):
        g = torch.Generator(device="cuda").manual_seed(181 + paged)
        kc, vc, table, kd, vd, _, _ = _fp8_cache(torch, 3, 1024, 2, 128, g, paged)
        q = torch.randn(3, 1, 8, 128, device="cuda", generator=g).to(torch.float8_e4m3fn)
        used = torch.tensor([1, 17, 1000], device="cuda", dtype=torch.int32)
        o1 = fa4.attention_with_kvcache(q, kc, vc, used, table, k_descale=kd, v_descale=vd)
        o2 = fa4.attention_with_kvcache(q, kc, vc, used, table, k_descale=kd, v_descale=vd * 2)
        rel = (o2.double() - 2 * o1.double()).norm().item() / (2 * o1.double()).norm().item()
        assert rel <= 1e-2, "page %d, doubling v_descale: relative difference %.2e" % (paged, rel)


def test_fp8_serving_in_cuda_graph():
    """fp8 varlen prefill and paged decode captured in a CUDA graph (each
    launch's workspace from the graph's pool), replayed on new queries,
    lengths and descales written into the captured tensors."""
    torch, fa4 = _torch()
    _need_fp8(torch)
    g = torch.Generator(device="cuda").manual_seed(191)
    b, hq, hkv, d = 3, 8, 2, 128
    kc, vc, table, kd, vd, kr, vr = _fp8_cache(torch, b, 1024, hkv, d, g, paged=16)
    qd = _fp8_descales(torch, b, hkv, g)
    q = torch.empty(b, 1, hq, d, device="cuda", dtype=torch.float8_e4m3fn)
    lens = torch.tensor([1, 17, 1000], device="cuda", dtype=torch.int32)
    lens_v = [1, 17, 300]
    cu = torch.tensor([0] + lens_v, device="cuda").cumsum(0).to(torch.int32)
    rows = _seq_rows(torch, lens_v)
    qv = torch.empty(sum(lens_v), hq, d, device="cuda", dtype=torch.float8_e4m3fn)
    kv = torch.empty(sum(lens_v), hkv, d, device="cuda", dtype=torch.float8_e4m3fn)
    vv = torch.empty_like(kv)
    dsv = [_fp8_descales(torch, b, hkv, g) for _ in range(3)]
    kw = dict(q_descale=qd, k_descale=kd, v_descale=vd)
    kwv = dict(q_descale=dsv[0], k_descale=dsv[1], v_descale=dsv[2])
    run = lambda: (fa4.attention_with_kvcache(q, kc, vc, lens, table, **kw),
                   fa4.attention_varlen(qv, kv, vv, cu, cu, 300, 300, causal=True, **kwv))
    graph, (od, ov) = _captured(torch, run)
    for replay in (1, 2):
        qd.copy_(_fp8_descales(torch, b, hkv, g))
        x, qr = _e4m3(torch, torch.randn(b, 1, hq, d, device="cuda", generator=g), _per_head(qd, hq)[:, None])
        q.copy_(x)
        lens.copy_(torch.tensor([1000, 1, 17 * replay], device="cuda", dtype=torch.int32))
        for t in dsv:
            t.copy_(_fp8_descales(torch, b, hkv, g))
        real = []
        for dst, heads, ds in ((qv, hq, _per_head(dsv[0], hq)), (kv, hkv, dsv[1]), (vv, hkv, dsv[2])):
            x, xr = _e4m3(torch, torch.randn(sum(lens_v), heads, d, device="cuda", generator=g), ds[rows])
            dst.copy_(x)
            real.append(xr)
        od.fill_(float("nan"))
        ov.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        _check_fp8(od, reference(qr, kr, vr, lens_k=lens)[0], "graph fp8 paged decode, replay %d" % replay)
        for i in range(b):
            a, z = cu[i].item(), cu[i + 1].item()
            ref = reference(*(t[None, a:z] for t in real), causal=True)[0]
            _check_fp8(ov[None, a:z], ref, "graph fp8 varlen sequence %d, replay %d" % (i, replay))


def test_fp8_serving_torch_compile():
    """fp8 varlen and KV-cache calls under torch.compile(fullgraph=True)."""
    torch, fa4 = _torch()
    _need_fp8(torch)
    g = torch.Generator(device="cuda").manual_seed(201)
    kc, vc, table, kd, vd, kr, vr = _fp8_cache(torch, 2, 1024, 2, 128, g, paged=16)
    qd = _fp8_descales(torch, 2, 2, g)
    q, qr = _e4m3(torch, torch.randn(2, 17, 8, 128, device="cuda", generator=g), _per_head(qd, 8)[:, None].expand(2, 17, 8))
    lens = torch.tensor([17, 1000], device="cuda", dtype=torch.int32)
    cu = torch.tensor([0, 17, 34], device="cuda", dtype=torch.int32)
    # Varlen without descales (1.0): the e4m3 values are the real ones.
    qv = torch.randn(34, 8, 128, device="cuda", generator=g).to(torch.float8_e4m3fn)
    kv = torch.randn(34, 2, 128, device="cuda", generator=g).to(torch.float8_e4m3fn)

    def f(q, kc, vc, table, lens, qv, kv, cu, qd, kd, vd):
        c = fa4.attention_with_kvcache(q, kc, vc, lens, table, causal=True, q_descale=qd, k_descale=kd,
                                       v_descale=vd)
        o = fa4.attention_varlen(qv, kv, kv, cu, cu, 17, 17, causal=True, out_dtype=torch.float16)
        return c * 2, o
    c, o = torch.compile(f, fullgraph=True)(q, kc, vc, table, lens, qv, kv, cu, qd, kd, vd)
    assert c.dtype == torch.bfloat16 and o.dtype == torch.float16
    _check_fp8(c / 2, reference(qr, kr, vr, True, lens_k=lens)[0], "compiled fp8 paged kvcache")
    q8, k8 = qv.double().view(2, 17, 8, 128), kv.double().view(2, 17, 2, 128)
    _check_fp8(o.view(2, 17, 8, 128), reference(q8, k8, k8, True)[0], "compiled fp8 varlen")


# ----------------------------------------------- compile, graphs, streams

def test_torch_compile_fullgraph():
    torch, fa4 = _torch()
    q = _rand(torch, 2, 17, 8, 128, seed=51)
    k = _rand(torch, 2, 1000, 2, 128, seed=52)
    lens = torch.tensor([17, 1000], device="cuda", dtype=torch.int32)

    def f(q, k, v, lens):
        o, lse = fa4.attention(q, k, v, causal=True, return_lse=True)
        c = fa4.attention_with_kvcache(q, k, v, lens, causal=True)
        return o * 2, lse, c
    cf = torch.compile(f, fullgraph=True)
    o, lse, c = cf(q, k, k, lens)
    ref, ref_lse = reference(q, k, k, True)
    check(o / 2, ref, "compiled attention", lse, ref_lse)
    check(c, reference(q, k, k, True, lens_k=lens)[0], "compiled kvcache")


def test_cuda_graph_capture():
    """Dense and decode calls captured in a CUDA graph, replayed on new inputs
    and new cache lengths."""
    torch, fa4 = _torch()
    q = _rand(torch, 2, 1000, 4, 128, seed=61)
    k = _rand(torch, 2, 1000, 4, 128, seed=62)
    qd = _rand(torch, 3, 1, 8, 128, seed=63)
    kc, vc = _cache(torch, (1, 1, 1), 1024, 2, 128, seed=64)
    lens = torch.tensor([1, 17, 1000], device="cuda", dtype=torch.int32)
    run = lambda: (fa4.attention(q, k, k, causal=True), fa4.attention_with_kvcache(qd, kc, vc, lens))
    graph, (o, od) = _captured(torch, run)
    for seed in (1, 2):
        q.copy_(_rand(torch, *q.shape, seed=100 + seed))
        qd.copy_(_rand(torch, *qd.shape, seed=200 + seed))
        lens.copy_(torch.tensor([1000, 1, 17 * seed], device="cuda", dtype=torch.int32))
        o.fill_(float("nan"))
        od.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check(o, reference(q, k, k, True)[0], "graph replay %d" % seed)
        check(od, reference(qd, kc, vc, lens_k=lens)[0], "graph decode replay %d" % seed)


def test_two_streams_at_once():
    """Decode plans keep split-KV partials in a workspace: one per stream."""
    torch, fa4 = _torch()
    kc, vc = _cache(torch, (1, 1), 1024, 2, 128, seed=71)
    lens = torch.tensor([1000, 600], device="cuda", dtype=torch.int32)
    qs = [_rand(torch, 2, 1, 8, 128, seed=72 + i) for i in range(2)]
    streams = [torch.cuda.Stream() for _ in range(2)]
    outs = [[], []]
    for s in streams:
        s.wait_stream(torch.cuda.current_stream())
    for _ in range(20):
        for i, s in enumerate(streams):
            with torch.cuda.stream(s):
                outs[i].append(fa4.attention_with_kvcache(qs[i], kc, vc, lens))
    torch.cuda.synchronize()
    for i in range(2):
        ref = reference(qs[i], kc, vc, lens_k=lens)[0]
        for o in outs[i]:
            check(o, ref, "stream %d" % i)


# ------------------------------------------------------ softcap and sinks

# Scores the cap bends: softcap 30 with softmax_scale 0.25 (scores of about
# N(0, 2.8^2) at d128) changes O by ~8%, softcap 5 at the default scale by
# ~18% (both far past REL).  The kernels' tanh (MUFU, relative error up to
# 2^-11) moves O by at most ~7e-4 relative there (a float64 simulation with
# every tanh off by 2^-11 one way): inside REL for bf16 and fp16.
_CAP_SCALE = {30.0: 0.25}


def _sink_logits(torch, hq, sk, seed, neg_inf=False):
    """float32 [hq] sink logits on the GPU, uniform from -2 to log(sk) + 3:
    from negligible next to a row's sum of exponentials to most of it.
    NEG_INF: head 0's is -inf (a sink that never counts)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    s = torch.rand(hq, device="cuda", generator=g) * (math.log(max(sk, 1)) + 5) - 2
    if neg_inf:
        s[0] = float("-inf")
    return s


def _differs(ref, plain, what, tol):
    """The reference with softcap or sinks is farther than 3 x TOL from the one
    without: the test would catch a kernel that ignored them (fp8's softcap 5
    over 300 keys moves it by 3.9 x its 4e-2 tolerance on the H100)."""
    rel = (ref - plain).norm().item() / (plain.norm().item() or 1.0)
    assert rel > 3 * tol, "%s: softcap/sinks change the reference by only %.2e; the test proves nothing" % (
        what, rel)


def _mods_name(softcap, sinks):
    return "%s%s" % ("_softcap%d" % softcap if softcap else "", "_sinks" if sinks else "")


def _mods_dense_case(b, sq, sk, hq, hkv, causal, softcap, sinks, d=128, dtype="bfloat16"):
    def test():
        torch, fa4 = _torch()
        dt = getattr(torch, dtype)
        seed = zlib.crc32(repr(("mods", b, sq, sk, hq, hkv, causal, softcap, sinks, d, dtype)).encode()) & 0xffff
        q = _rand(torch, b, sq, hq, d, dtype=dt, seed=seed)
        k = _rand(torch, b, sk, hkv, d, dtype=dt, seed=seed + 1)
        v = _rand(torch, b, sk, hkv, d, dtype=dt, seed=seed + 2)
        scale = _CAP_SCALE.get(softcap)
        s = _sink_logits(torch, hq, sk, seed + 3) if sinks else None
        what = "dense%s b%d sq%d sk%d %s%s" % (_mods_name(softcap, sinks), b, sq, sk, dtype,
                                               " causal" if causal else "")
        out = _poisoned(torch, (b, sq, hq, d), dt)
        o, lse = fa4.attention(q, k, v, causal=causal, softmax_scale=scale, softcap=softcap, sinks=s,
                               return_lse=True, out=out)
        assert o is out
        ref, ref_lse = reference(q, k, v, causal, scale=scale, softcap=softcap, sinks=s)
        check(o, ref, what, lse, ref_lse)
        o2 = fa4.attention(q, k, v, causal=causal, softmax_scale=scale, softcap=softcap, sinks=s)
        check(o2, ref, what + ", out allocated (remembered call)")
        if min(sq, sk) >= 17:
            _differs(ref, reference(q, k, v, causal, scale=scale)[0], what, REL[dtype])
    return test


for _softcap, _sinks in [(30.0, False), (5.0, False), (0.0, True), (5.0, True)]:
    _n = _mods_name(_softcap, _sinks)
    for _causal in (False, True):
        globals()["test%s_dense_b2_q300_k300_h8_2%s" % (_n, "_causal" if _causal else "")] = \
            _mods_dense_case(2, 300, 300, 8, 2, _causal, _softcap, _sinks)
    globals()["test%s_dense_b3_q1_k300_mqa" % _n] = _mods_dense_case(3, 1, 300, 8, 1, False, _softcap, _sinks)
# 283 of the 300 query rows see no key (bottom-right aligned): O 0, LSE the sink.
test_sinks_dense_q300_k17_causal_rows_without_keys = _mods_dense_case(1, 300, 17, 4, 2, True, 0.0, True)
test_softcap5_sinks_dense_q300_k17_causal_rows_without_keys = _mods_dense_case(1, 300, 17, 4, 2, True, 5.0, True)
test_softcap5_sinks_dense_b2_q17_k17 = _mods_dense_case(2, 17, 17, 4, 4, False, 5.0, True)
test_softcap5_sinks_dense_fp16_d64_causal = _mods_dense_case(2, 300, 300, 4, 2, True, 5.0, True, d=64,
                                                             dtype="float16")
test_softcap30_dense_fp16 = _mods_dense_case(2, 300, 300, 4, 2, False, 30.0, False, dtype="float16")
test_sinks_dense_fp16_decode = _mods_dense_case(3, 1, 300, 8, 2, False, 0.0, True, dtype="float16")


def _mods_varlen_case(lens_q, lens_k, hq, hkv, causal, softcap, sinks, dtype="bfloat16", neg_inf=False):
    """attention_varlen with softcap and sinks against the reference of each
    sequence (one sink per head, shared by the sequences)."""
    def test():
        torch, fa4 = _torch()
        dt, d = getattr(torch, dtype), 128
        seed = zlib.crc32(repr(("mods varlen", lens_q, lens_k, hq, hkv, causal, softcap, sinks, dtype,
                                neg_inf)).encode()) & 0xffff
        cu_q = torch.tensor([0] + lens_q, device="cuda").cumsum(0).to(torch.int32)
        cu_k = torch.tensor([0] + lens_k, device="cuda").cumsum(0).to(torch.int32)
        q = _rand(torch, sum(lens_q), hq, d, dtype=dt, seed=seed)
        k = _rand(torch, sum(lens_k), hkv, d, dtype=dt, seed=seed + 1)
        v = _rand(torch, sum(lens_k), hkv, d, dtype=dt, seed=seed + 2)
        scale = _CAP_SCALE.get(softcap)
        s = _sink_logits(torch, hq, max(lens_k), seed + 3, neg_inf) if sinks else None
        out = _poisoned(torch, q.shape, dt)
        o, lse = fa4.attention_varlen(q, k, v, cu_q, cu_k, max(lens_q), max(lens_k), causal=causal,
                                      softmax_scale=scale, softcap=softcap, sinks=s, return_lse=True, out=out)
        assert o is out and lse.shape == (hq, sum(lens_q))
        for i in range(len(lens_q)):
            a, z = cu_q[i].item(), cu_q[i + 1].item()
            ka, kz = cu_k[i].item(), cu_k[i + 1].item()
            ref, ref_lse = reference(q[None, a:z], k[None, ka:kz], v[None, ka:kz], causal, scale=scale,
                                     softcap=softcap, sinks=s)
            check(o[None, a:z], ref, "varlen%s sequence %d" % (_mods_name(softcap, sinks), i), lse[None, :, a:z],
                  ref_lse)
    return test


test_softcap5_sinks_varlen_self_causal = _mods_varlen_case([1, 17, 300], [1, 17, 300], 8, 2, True, 5.0, True)
test_softcap30_varlen_self = _mods_varlen_case([1, 17, 300], [1, 17, 300], 8, 2, False, 30.0, False)
test_sinks_varlen_self = _mods_varlen_case([17, 300, 1], [17, 300, 1], 4, 4, False, 0.0, True)
# Rows with no key (queries past their keys, bottom-right aligned), and one head whose sink is -inf.
test_sinks_varlen_cross_causal_neg_inf_head = _mods_varlen_case([300, 17, 1], [17, 1, 300], 8, 2, True, 0.0, True,
                                                                neg_inf=True)
test_softcap5_sinks_varlen_fp16_causal = _mods_varlen_case([1, 17, 300], [1, 17, 300], 8, 2, True, 5.0, True,
                                                           dtype="float16")


def test_softcap_sinks_varlen_paged():
    """Packed queries over a paged cache with softcap and sinks."""
    torch, fa4 = _torch()
    lens_q, lens_k = [1, 4, 17], [1, 17, 300]
    k, v = _cache(torch, lens_k, 512, 2, 128, seed=211)
    kp, vp, table = _paged(torch, k, v, 16, seed=212)
    q = _rand(torch, sum(lens_q), 8, 128, seed=213)
    s = _sink_logits(torch, 8, 300, 214)
    cu_q = torch.tensor([0] + lens_q, device="cuda").cumsum(0).to(torch.int32)
    cu_k = torch.tensor([0] + lens_k, device="cuda").cumsum(0).to(torch.int32)
    o, lse = fa4.attention_varlen(q, kp, vp, cu_q, cu_k, max(lens_q), max(lens_k), causal=True, block_table=table,
                                  softcap=5.0, sinks=s, return_lse=True, out=_poisoned(torch, q.shape, q.dtype))
    for i in range(3):
        a, z = cu_q[i].item(), cu_q[i + 1].item()
        ref, ref_lse = reference(q[None, a:z], k[i:i + 1, :lens_k[i]], v[i:i + 1, :lens_k[i]], True, softcap=5.0,
                                 sinks=s)
        check(o[None, a:z], ref, "varlen paged softcap sinks sequence %d" % i, lse[None, :, a:z], ref_lse)


def _mods_kvcache_case(sq, causal, softcap, sinks, paged=0, lens=(1, 17, 300), hq=8, hkv=2, dtype="bfloat16"):
    """attention_with_kvcache with softcap and sinks: decode (split-KV: the
    combine adds the sink), speculative and chunked steps, dense and paged
    caches; then the remembered call."""
    def test():
        torch, fa4 = _torch()
        dt, L, d = getattr(torch, dtype), 512, 128
        seed = zlib.crc32(repr(("mods kv", sq, causal, softcap, sinks, paged, lens, hq, hkv, dtype)).encode()) \
            & 0xffff
        k, v = _rand(torch, len(lens), L, hkv, d, dtype=dt, seed=seed), \
            _rand(torch, len(lens), L, hkv, d, dtype=dt, seed=seed + 1)
        q = _rand(torch, len(lens), sq, hq, d, dtype=dt, seed=seed + 2)
        s = _sink_logits(torch, hq, max(lens), seed + 3) if sinks else None
        scale = _CAP_SCALE.get(softcap)
        used = torch.tensor(lens, device="cuda", dtype=torch.int32)
        kc, vc, table = (k, v, None) if not paged else _paged(torch, k, v, paged, seed=seed + 4)
        out = _poisoned(torch, q.shape, dt)
        what = "kvcache%s sq=%d page=%d lens=%s %s" % (_mods_name(softcap, sinks), sq, paged, list(lens), dtype)
        o, lse = fa4.attention_with_kvcache(q, kc, vc, used, table, causal=causal, softmax_scale=scale,
                                            softcap=softcap, sinks=s, return_lse=True, out=out)
        assert o is out
        ref, ref_lse = reference(q, k, v, causal, scale=scale, lens_k=used, softcap=softcap, sinks=s)
        check(o, ref, what, lse, ref_lse)
        o2 = fa4.attention_with_kvcache(q, kc, vc, used, table, causal=causal, softmax_scale=scale,
                                        softcap=softcap, sinks=s)
        check(o2, ref, what + ", out allocated (remembered call)")
    return test


test_softcap5_sinks_kvcache_decode = _mods_kvcache_case(1, False, 5.0, True)
test_sinks_kvcache_decode_causal = _mods_kvcache_case(1, True, 0.0, True)
test_softcap30_kvcache_decode = _mods_kvcache_case(1, False, 30.0, False)
# A sequence with no key in use: O 0, LSE the sink.
test_sinks_kvcache_decode_empty_sequence = _mods_kvcache_case(1, False, 0.0, True, lens=(0, 17, 300))
test_softcap30_sinks_kvcache_chunk_causal = _mods_kvcache_case(200, True, 30.0, True)
test_softcap5_sinks_kvcache_paged16_spec4_causal = _mods_kvcache_case(4, True, 5.0, True, paged=16)
test_sinks_kvcache_paged64_mqa_decode = _mods_kvcache_case(1, False, 0.0, True, paged=64, hkv=1)
test_softcap5_sinks_kvcache_paged16_fp16_decode = _mods_kvcache_case(1, False, 5.0, True, paged=16,
                                                                      dtype="float16")


def test_softcap_sinks_kvcache_append_and_int_length():
    """k=, v= appended before the attention, and an int cache_seqlens, with
    softcap and sinks (dense and paged caches)."""
    torch, fa4 = _torch()
    b, L, hq, hkv, d = 3, 512, 8, 2, 128
    lens = [0, 17, 300]
    for paged in (0, 16):
        k0, v0 = _cache(torch, lens, L, hkv, d, seed=221)
        q = _rand(torch, b, 3, hq, d, seed=222)
        kn, vn = _rand(torch, b, 3, hkv, d, seed=223), _rand(torch, b, 3, hkv, d, seed=224)
        s = _sink_logits(torch, hq, 300, 225)
        kc, vc, table = (k0.clone(), v0.clone(), None) if not paged else _paged(torch, k0, v0, paged, seed=226)
        used = torch.tensor(lens, device="cuda", dtype=torch.int32)
        want_k, want_v = k0.clone(), v0.clone()
        for i, n in enumerate(lens):
            want_k[i, n:n + 3], want_v[i, n:n + 3] = kn[i], vn[i]
        o, lse = fa4.attention_with_kvcache(q, kc, vc, used, table, k=kn, v=vn, causal=True, softcap=5.0, sinks=s,
                                            return_lse=True, out=_poisoned(torch, q.shape, q.dtype))
        ref, ref_lse = reference(q, want_k, want_v, True, lens_k=used + 3, softcap=5.0, sinks=s)
        check(o, ref, "append softcap sinks page %d" % paged, lse, ref_lse)
        o = fa4.attention_with_kvcache(q, kc, vc, 200, table, causal=True, softcap=5.0, sinks=s)
        ref = reference(q, want_k[:, :200], want_v[:, :200], True, softcap=5.0, sinks=s)[0]
        check(o, ref, "cache_seqlens=200 softcap sinks page %d" % paged)


def test_softcap_sinks_per_call():
    """Remembered calls: another sinks tensor of the same class is read
    (not the first one's), and softcap 30, 5 and none on the same tensors
    are three problems, each matching its own reference."""
    torch, fa4 = _torch()
    q = _rand(torch, 2, 300, 8, 128, seed=231)
    k = _rand(torch, 2, 300, 2, 128, seed=232)
    kc, vc = _cache(torch, (1, 1), 512, 2, 128, seed=233)
    lens = torch.tensor([17, 300], device="cuda", dtype=torch.int32)
    qd = q[:, :1].contiguous()
    for seed in (1, 2, 3):
        s = _sink_logits(torch, 8, 300, 240 + seed)
        check(fa4.attention(q, k, k, causal=True, sinks=s), reference(q, k, k, True, sinks=s)[0],
              "dense sinks, call %d" % seed)
        check(fa4.attention_with_kvcache(qd, kc, vc, lens, sinks=s), reference(qd, kc, vc, lens_k=lens, sinks=s)[0],
              "decode sinks, call %d" % seed)
    for _ in range(2):
        for cap in (30.0, 5.0, 0.0):
            scale = _CAP_SCALE.get(cap)
            check(fa4.attention(q, k, k, softmax_scale=scale, softcap=cap),
                  reference(q, k, k, scale=scale, softcap=cap)[0], "softcap %g after other caps" % cap)


def test_softcap_sinks_errors():
    torch, fa4 = _torch()
    q = _rand(torch, 1, 16, 4, 128, seed=251)
    s = torch.zeros(4, device="cuda")
    for kw, exc, words in [(dict(sinks=s.cpu()), ValueError, "sinks must be on cuda"),
                           (dict(sinks=s.half()), TypeError, "sinks must be a torch.float32 tensor"),
                           (dict(sinks=s[:2]), ValueError, "of shape (4,) [heads_q]"),
                           (dict(softcap=-1.0), ValueError, "softcap=-1.0"),
                           (dict(softcap=float("inf")), ValueError, "finite positive cap")]:
        try:
            fa4.attention(q, q, q, **kw)
        except exc as e:
            assert words in str(e), (words, str(e))
        else:
            raise AssertionError("no %s for %s" % (exc.__name__, words))


def test_softcap_sinks_in_cuda_graph():
    """Dense, varlen and paged decode calls with sinks (and softcap) captured
    in a CUDA graph: each replay reads the sinks written into the captured
    tensor since, with new queries and lengths."""
    torch, fa4 = _torch()
    hq, hkv, d = 8, 2, 128
    q = _rand(torch, 2, 300, hq, d, seed=261)
    k = _rand(torch, 2, 300, hkv, d, seed=262)
    lens_v = [1, 17, 300]
    cu = torch.tensor([0] + lens_v, device="cuda").cumsum(0).to(torch.int32)
    qv = _rand(torch, sum(lens_v), hq, d, seed=263)
    kv = _rand(torch, sum(lens_v), hkv, d, seed=264)
    kc0, vc0 = _cache(torch, (1, 1, 1), 512, hkv, d, seed=265)
    kc, vc, table = _paged(torch, kc0, vc0, 16, seed=266)
    qd = _rand(torch, 3, 1, hq, d, seed=267)
    lens = torch.tensor([1, 17, 300], device="cuda", dtype=torch.int32)
    s = _sink_logits(torch, hq, 300, 268)
    run = lambda: (fa4.attention(q, k, k, causal=True, softcap=5.0, sinks=s, return_lse=True),
                   fa4.attention_varlen(qv, kv, kv, cu, cu, 300, 300, causal=True, sinks=s),
                   fa4.attention_with_kvcache(qd, kc, vc, lens, table, softcap=5.0, sinks=s))
    graph, ((o, lse), ov, od) = _captured(torch, run)
    for replay in (1, 2):
        s.copy_(_sink_logits(torch, hq, 300, 270 + replay, neg_inf=replay == 2))
        q.copy_(_rand(torch, *q.shape, seed=280 + replay))
        qd.copy_(_rand(torch, *qd.shape, seed=290 + replay))
        lens.copy_(torch.tensor([300, 1, 17 * replay], device="cuda", dtype=torch.int32))
        for t in (o, ov, od):
            t.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        ref, ref_lse = reference(q, k, k, True, softcap=5.0, sinks=s)
        check(o, ref, "graph dense softcap sinks, replay %d" % replay, lse, ref_lse)
        check(od, reference(qd, kc0, vc0, lens_k=lens, softcap=5.0, sinks=s)[0],
              "graph paged decode softcap sinks, replay %d" % replay)
        for i in range(3):
            a, z = cu[i].item(), cu[i + 1].item()
            check(ov[None, a:z], reference(qv[None, a:z], kv[None, a:z], kv[None, a:z], True, sinks=s)[0],
                  "graph varlen sinks sequence %d, replay %d" % (i, replay))


def test_softcap_sinks_torch_compile():
    torch, fa4 = _torch()
    q = _rand(torch, 2, 17, 8, 128, seed=301)
    k = _rand(torch, 2, 300, 2, 128, seed=302)
    lens = torch.tensor([17, 300], device="cuda", dtype=torch.int32)
    s = _sink_logits(torch, 8, 300, 303)

    def f(q, k, v, lens, s):
        o, lse = fa4.attention(q, k, v, causal=True, softcap=5.0, sinks=s, return_lse=True)
        c = fa4.attention_with_kvcache(q, k, v, lens, causal=True, sinks=s)
        return o * 2, lse, c
    o, lse, c = torch.compile(f, fullgraph=True)(q, k, k, lens, s)
    ref, ref_lse = reference(q, k, k, True, softcap=5.0, sinks=s)
    check(o / 2, ref, "compiled softcap sinks", lse, ref_lse)
    check(c, reference(q, k, k, True, lens_k=lens, sinks=s)[0], "compiled kvcache sinks")


# fp8 with softcap and sinks: the library's own fp8 GPU tests
# (tests/test_gpu_fp8*.c) do not cover them; fa4.h says every dtype takes them.

def _fp8_mods_case(b, sq, sk, hq, hkv, causal, softcap, sinks, d=128):
    def test():
        torch, fa4 = _torch()
        _need_fp8(torch)
        seed = zlib.crc32(repr(("fp8 mods", b, sq, sk, hq, hkv, causal, softcap, sinks, d)).encode()) & 0xffff
        (q, k, v), (qd, kd, vd), (qr, kr, vr) = _fp8_inputs(torch, b, sq, sk, hq, hkv, d, seed)
        s = _sink_logits(torch, hq, sk, seed + 7) if sinks else None
        scale = _CAP_SCALE.get(softcap)
        out = _poisoned(torch, (b, sq, hq, d), torch.bfloat16)
        o, lse = fa4.attention(q, k, v, causal=causal, softmax_scale=scale, softcap=softcap, sinks=s,
                               return_lse=True, out=out, q_descale=qd, k_descale=kd, v_descale=vd)
        ref, ref_lse = reference(qr, kr, vr, causal, scale=scale, softcap=softcap, sinks=s)
        what = "fp8%s sq%d sk%d%s" % (_mods_name(softcap, sinks), sq, sk, " causal" if causal else "")
        _check_fp8(o, ref, what, lse, ref_lse)
        if min(sq, sk) >= 17:
            _differs(ref, reference(qr, kr, vr, causal, scale=scale)[0], what, FP8_REL)
    return test


test_fp8_softcap5_sinks_causal = _fp8_mods_case(2, 300, 300, 8, 2, True, 5.0, True)
test_fp8_softcap5 = _fp8_mods_case(2, 300, 300, 8, 2, False, 5.0, False)
test_fp8_sinks_decode = _fp8_mods_case(3, 1, 300, 8, 1, False, 0.0, True)
# d64: the sm90 loop takes part of tanh as a polynomial where a block's scores
# lie inside the cap (N(0, 1) scores under a cap of 5: nearly every block).
test_fp8_softcap5_d64 = _fp8_mods_case(2, 300, 300, 8, 2, False, 5.0, False, d=64)
test_fp8_softcap5_sinks_d64_causal = _fp8_mods_case(2, 300, 300, 8, 2, True, 5.0, True, d=64)


def test_fp8_softcap_sinks_varlen_and_paged():
    """fp8 varlen and a paged fp8 cache with softcap and sinks."""
    torch, fa4 = _torch()
    _need_fp8(torch)
    g = torch.Generator(device="cuda").manual_seed(311)
    b, hq, hkv, d = 3, 8, 2, 128
    lens_v = [1, 17, 300]
    qd, kd, vd = (_fp8_descales(torch, b, hkv, g) for _ in range(3))
    rows = _seq_rows(torch, lens_v)
    q, qr = _e4m3(torch, torch.randn(sum(lens_v), hq, d, device="cuda", generator=g), _per_head(qd, hq)[rows])
    k, kr = _e4m3(torch, torch.randn(sum(lens_v), hkv, d, device="cuda", generator=g), kd[rows])
    v, vr = _e4m3(torch, torch.randn(sum(lens_v), hkv, d, device="cuda", generator=g), vd[rows])
    cu = torch.tensor([0] + lens_v, device="cuda").cumsum(0).to(torch.int32)
    s = _sink_logits(torch, hq, 300, 312)
    out = _poisoned(torch, (sum(lens_v), hq, d), torch.bfloat16)
    o, lse = fa4.attention_varlen(q, k, v, cu, cu, 300, 300, causal=True, softcap=5.0, sinks=s, return_lse=True,
                                  out=out, q_descale=qd, k_descale=kd, v_descale=vd)
    for i in range(b):
        a, z = cu[i].item(), cu[i + 1].item()
        ref, ref_lse = reference(qr[None, a:z], kr[None, a:z], vr[None, a:z], True, softcap=5.0, sinks=s)
        _check_fp8(o[None, a:z], ref, "fp8 varlen softcap sinks sequence %d" % i, lse[None, :, a:z], ref_lse)
    kc, vc, table, kd, vd, kr, vr = _fp8_cache(torch, b, 512, hkv, d, g, paged=16)
    qd = _fp8_descales(torch, b, hkv, g)
    q, qr = _e4m3(torch, torch.randn(b, 4, hq, d, device="cuda", generator=g), _per_head(qd, hq)[:, None].expand(b, 4, hq))
    lens = torch.tensor([1, 17, 300], device="cuda", dtype=torch.int32)
    out = _poisoned(torch, (b, 4, hq, d), torch.bfloat16)
    o, lse = fa4.attention_with_kvcache(q, kc, vc, lens, table, causal=True, softmax_scale=0.25, softcap=30.0,
                                        sinks=s, return_lse=True, out=out, q_descale=qd, k_descale=kd, v_descale=vd)
    ref, ref_lse = reference(qr, kr, vr, True, scale=0.25, lens_k=lens, softcap=30.0, sinks=s)
    _check_fp8(o, ref, "fp8 paged16 spec4 softcap sinks", lse, ref_lse)
