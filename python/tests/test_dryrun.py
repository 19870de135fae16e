"""The PyTorch layer's calls into libfa4 without a GPU: fa4.attention and its kin
on CPU tensors, with the device swapped for a plan_only sm_90a context (real
plans: the library checks and compiles each problem the layer builds) whose
launches are recorded instead of run.  Checks the problems, the plan cache
and the fa4_tensors each call passes.  Skips without PyTorch."""
import contextlib
import ctypes as C
import threading

import _util


class _DryDevice:
    """A _Device whose context is plan_only and whose fa4_forward records.
    ARCH: sm_90a (an H100, compute capability 9.0) or sm_80 (an A100, 8.0)."""

    def __init__(self, torch, _ops, _lib, _abi, arch="sm_90a"):
        self.index = 0
        self.device = torch.device("cpu")
        self.capability = {"sm_90a": (9, 0), "sm_80": (8, 0)}[arch]
        self.context = _lib.Context(plan_only=True, arch=arch, no_database=True)
        self.plans, self.offsets, self.lock = {}, {}, threading.Lock()
        self.launches = []
        self._abi, self._torch = _abi, torch
        self.entry = _ops._Device.entry.__get__(self)
        self.clear = _ops._Device.clear.__get__(self)

    def forward(self, handle, tensors, stream):
        t = self._abi.Tensors.from_buffer_copy(tensors)     # the layer passes fa4_tensors as bytes
        self.launches.append(dict((name, getattr(t, name)) for name, _ in t._fields_))
        self.launches[-1]["handle"] = handle
        for name, n in (("cu_seqlens_q", t.batch + 1), ("cu_seqlens_k", t.batch + 1), ("seqused_k", t.batch)):
            if getattr(t, name):    # read now: they may be temporaries
                a = C.cast(getattr(t, name), C.POINTER(C.c_int32))
                self.launches[-1][name + "_values"] = [a[i] for i in range(n)]
        return 0

    def seq_offsets(self, count, step, stream):
        return self._torch.arange(0, (count + 1) * step, step, dtype=self._torch.int32)


@contextlib.contextmanager
def dry(arch="sm_90a"):
    torch = _util.need_torch()
    import fa4
    from fa4 import _abi, _lib, _ops
    dev = _DryDevice(torch, _ops, _lib, _abi, arch)
    saved = (_ops._device_of, _ops._raw_stream, _ops._workspace, _ops._capturing)
    # Remembered calls hold their device: none from another test's.
    _ops._dense_calls.clear()
    _ops._kvcache_calls.clear()
    _ops._device_of = lambda q, *others: dev
    _ops._raw_stream = lambda index: 1234
    _ops._workspace = lambda e, stream, device: torch.zeros(e.ws_bytes, dtype=torch.uint8)
    _ops._capturing = lambda: False     # asks the CUDA runtime otherwise (when a plan fails)
    try:
        yield torch, fa4, dev
    finally:
        _ops._device_of, _ops._raw_stream, _ops._workspace, _ops._capturing = saved
        _ops._dense_calls.clear()
        _ops._kvcache_calls.clear()
        for e in dev.plans.values():
            e.plan.destroy()
        dev.context.close()


def _ptr(t):
    return None if t is None else t.data_ptr()


def test_dense_calls():
    with dry() as (torch, fa4, dev):
        q = torch.randn(2, 1000, 8, 128, dtype=torch.bfloat16)
        k = torch.randn(2, 1000, 2, 128, dtype=torch.bfloat16)
        o, lse = fa4.attention(q, k, k, causal=True, return_lse=True)
        assert o.shape == q.shape and lse.shape == (2, 8, 1000) and lse.dtype == torch.float32
        t = dev.launches[-1]
        assert (t["q"], t["k"], t["v"], t["o"], t["lse"]) == (q.data_ptr(), k.data_ptr(), k.data_ptr(),
                                                              o.data_ptr(), lse.data_ptr())
        assert (t["seqlen_q"], t["seqlen_k"], t["batch"]) == (1000, 1000, 2)
        assert t["cu_seqlens_q"] is None and t["seqused_k"] is None and t["block_table"] is None
        (e,) = dev.plans.values()
        p = e.plan.problem
        assert (p.batch, p.seqlen_q, p.seqlen_k, p.heads_q, p.heads_kv, p.causal, p.return_lse) == \
            (2, 1024, 1024, 8, 2, 1, 1)
        assert list(p.q_strides) == [0, 0, 0], "contiguous tensors leave the strides to the call"
        assert (t["workspace"] is not None) == (e.ws_bytes > 0)
        # A smaller call reuses the plan; a strided one gets its own.
        fa4.attention(q[:, :600].contiguous(), k[:, :513].contiguous(), k[:, :513].contiguous(), causal=True,
                      return_lse=True)
        assert len(dev.plans) == 1 and dev.launches[-1]["seqlen_k"] == 513
        qkv = torch.randn(2, 1000, 3, 8, 128, dtype=torch.bfloat16)
        out = torch.empty(2, 1000, 16, 128, dtype=torch.bfloat16)[:, :, 8:]
        fa4.attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], out=out)
        assert len(dev.plans) == 2
        p = list(dev.plans.values())[-1].plan.problem
        assert list(p.q_strides) == [1000 * 3 * 8 * 128, 3 * 8 * 128, 128] and list(p.o_strides) == [
            1000 * 16 * 128, 16 * 128, 128], (list(p.q_strides), list(p.o_strides))
        assert dev.launches[-1]["o"] == out.data_ptr()


def test_empty_and_keyless_calls_launch_nothing():
    with dry() as (torch, fa4, dev):
        q = torch.randn(2, 5, 4, 64, dtype=torch.bfloat16)
        none = torch.randn(2, 0, 4, 64, dtype=torch.bfloat16)
        o, lse = fa4.attention(q, none, none, return_lse=True)
        assert not dev.launches and (o == 0).all() and torch.isinf(lse).all() and (lse < 0).all()
        assert fa4.attention(none, q, q).shape == (2, 0, 4, 64) and not dev.launches


def test_varlen_calls():
    with dry() as (torch, fa4, dev):
        lens = [1, 17, 1000]
        cu = torch.tensor([0, 1, 18, 1018], dtype=torch.int32)
        q = torch.randn(1018, 8, 128, dtype=torch.bfloat16)
        k = torch.randn(1018, 2, 128, dtype=torch.bfloat16)
        used = torch.tensor(lens, dtype=torch.int32)
        o, lse = fa4.attention_varlen(q, k, k, cu, cu, 1000, 1000, causal=True, seqused_k=used, return_lse=True)
        assert o.shape == (1018, 8, 128) and lse.shape == (8, 1018)
        t = dev.launches[-1]
        assert (t["cu_seqlens_q"], t["cu_seqlens_k"], t["seqused_k"]) == (cu.data_ptr(), cu.data_ptr(),
                                                                         used.data_ptr())
        assert (t["seqlen_q"], t["seqlen_k"], t["batch"]) == (1000, 1000, 3)
        p = list(dev.plans.values())[-1].plan.problem
        assert (p.varlen, p.batch, p.seqlen_q, p.seqlen_k) == (1, 4, 1024, 1024), (p.batch, p.seqlen_q)
        # Paged K/V: the lengths come from cu_seqlens_k unless seqused_k gives them.
        pages = torch.randn(200, 16, 2, 128, dtype=torch.bfloat16)
        table = torch.randint(0, 200, (3, 64), dtype=torch.int32)
        fa4.attention_varlen(q, pages, pages, cu, cu, 1000, 1000, block_table=table)
        t = dev.launches[-1]
        assert t["block_table"] == table.data_ptr() and t["cu_seqlens_k"] is None and t["seqused_k"] is not None
        p = list(dev.plans.values())[-1].plan.problem
        assert (p.page_size, p.block_table_stride, p.num_pages, p.seqlen_k) == (16, 64, 200, 1024)


def test_kvcache_calls():
    with dry() as (torch, fa4, dev):
        b, L = 3, 1024
        kc = torch.randn(b, L, 2, 128, dtype=torch.bfloat16)
        lens = torch.tensor([1, 17, 1000], dtype=torch.int32)
        # Decode: the sm80 serving tiles read seqused_k of a dense cache.
        qd = torch.randn(b, 1, 8, 128, dtype=torch.bfloat16)
        fa4.attention_with_kvcache(qd, kc, kc, lens)
        e = list(dev.plans.values())[-1]
        t = dev.launches[-1]
        assert e.plan.family == 80 and not e.as_varlen and t["seqused_k"] == lens.data_ptr()
        assert list(e.plan.problem.k_strides) == [L * 2 * 128, 2 * 128, 128] and t["seqlen_k"] == L
        # A prefill chunk: sm90 reads seqused_k for varlen problems only, so the
        # call goes as varlen with one batch stride between sequences.
        qc = torch.randn(b, 200, 8, 128, dtype=torch.bfloat16)
        o, lse = fa4.attention_with_kvcache(qc, kc, kc, lens, causal=True, return_lse=True)
        e = list(dev.plans.values())[-1]
        t = dev.launches[-1]
        if e.plan.family == 90:
            assert e.as_varlen and e.plan.problem.varlen == 1
            assert t["cu_seqlens_q_values"] == [0, 200, 400, 600]
            assert t["cu_seqlens_k_values"] == [0, L, 2 * L, 3 * L]
            assert t["seqused_k"] == lens.data_ptr() and (t["seqlen_q"], t["seqlen_k"], t["batch"]) == (200, L, b)
            assert lse.shape == (b, 8, 200) and lse.is_contiguous()
        # An int length: this call's seqlen_k, the cache's own strides.
        fa4.attention_with_kvcache(qd, kc, kc, 700)
        assert dev.launches[-1]["seqlen_k"] == 700 and dev.launches[-1]["seqused_k"] is None
        # Paged.
        pages = torch.randn(300, 16, 2, 128, dtype=torch.bfloat16)
        table = torch.randint(0, 300, (b, 64), dtype=torch.int32)
        fa4.attention_with_kvcache(qd, pages, pages, lens, table)
        e = list(dev.plans.values())[-1]
        t = dev.launches[-1]
        assert (e.plan.problem.page_size, e.plan.problem.block_table_stride, e.plan.problem.seqlen_k) == (16, 64, L)
        assert t["block_table"] == table.data_ptr() and t["seqused_k"] == lens.data_ptr()


def test_plan_info():
    with dry() as (torch, fa4, dev):
        q = torch.randn(2, 100, 8, 128, dtype=torch.float16)
        info = fa4.plan_info(q, q[:, :, :2], q[:, :, :2].contiguous(), causal=True)
        assert info.source == "heuristic" and info.config.split()[0] in ("sm80", "sm90"), info
        assert (info.batch, info.seqlen_q, info.seqlen_k) == (2, 128, 128) and not dev.launches


def _same_launch(a, b, what):
    """A and B (launches) agree; dry()'s workspaces are new each call."""
    a, b = dict(a, workspace=bool(a["workspace"])), dict(b, workspace=bool(b["workspace"]))
    differ = sorted(name for name in a if a[name] != b.get(name))
    assert not differ, "%s: the remembered call passed other %s" % (what, differ)


def test_remembered_calls():
    """A second call of a class goes straight to fa4_forward with what the first
    passed; what differs (an out of another dtype, a non-contiguous last
    dimension, an int length past the cache or 0) takes the checks again."""
    with dry() as (torch, fa4, dev):
        from fa4 import _ops
        q = torch.randn(2, 100, 8, 128, dtype=torch.bfloat16)
        k = torch.randn(2, 300, 2, 128, dtype=torch.bfloat16)
        out = torch.empty_like(q)
        for lse in (False, True):
            fa4.attention(q, k, k, causal=True, out=out, return_lse=lse)
            first = dev.launches[-1]
            o = fa4.attention(q, k, k, causal=True, out=out, return_lse=lse)
            assert len(_ops._dense_calls) == 1 + lse, "the call was not remembered"
            second = dev.launches[-1]
            if lse:     # a new LSE each call
                assert second["lse"] == o[1].data_ptr()
                first = dict(first, lse=second["lse"])
            _same_launch(first, second, "attention return_lse=%s" % lse)
        plans = len(dev.plans)
        for args, kwargs, exc in [((q, k, k), dict(out=out.half()), ValueError),
                                  ((q, k.transpose(2, 3).contiguous().transpose(2, 3), k), {}, ValueError),
                                  ((q.half(), k, k), {}, TypeError)]:
            try:
                fa4.attention(*args, **kwargs)
            except exc:
                pass
            else:
                raise AssertionError("%s not raised after a remembered call" % exc.__name__)
        assert len(dev.plans) == plans

        kc = torch.randn(3, 1024, 2, 128, dtype=torch.bfloat16)
        qd = torch.randn(3, 1, 8, 128, dtype=torch.bfloat16)
        lens = torch.tensor([1, 17, 1000], dtype=torch.int32)
        pages = torch.randn(300, 16, 2, 128, dtype=torch.bfloat16)
        table = torch.randint(0, 300, (3, 64), dtype=torch.int32)
        for args in ((qd, kc, kc, lens), (qd, pages, pages, lens, table), (qd, kc, kc), (qd, kc, kc, 700)):
            fa4.attention_with_kvcache(*args, out=torch.empty_like(qd))
            first = dev.launches[-1]
            out = torch.empty_like(qd)
            fa4.attention_with_kvcache(*args, out=out)
            assert dev.launches[-1]["o"] == out.data_ptr()
            _same_launch(dict(first, o=out.data_ptr()), dev.launches[-1], "kvcache %d args" % len(args))
        n = len(dev.launches)
        assert fa4.attention_with_kvcache(qd, kc, kc, 701) is not None and dev.launches[-1]["seqlen_k"] == 701
        o = fa4.attention_with_kvcache(qd, kc, kc, 0)
        assert len(dev.launches) == n + 1 and (o == 0).all(), "cache_seqlens=0 launched"
        try:
            fa4.attention_with_kvcache(qd, kc, kc, 1025)
        except ValueError as e:
            assert "cache_seqlens=1025" in str(e), e
        else:
            raise AssertionError("cache_seqlens past the cache accepted")


def test_kvcache_append():
    """k=, v=: the caches get the new rows and fa4_forward reads
    cache_seqlens + seqlen_new keys of each sequence."""
    with dry() as (torch, fa4, dev):
        b, L = 3, 1024
        kc = torch.zeros(b, L, 2, 128, dtype=torch.bfloat16)
        vc = torch.zeros(b, L, 2, 128, dtype=torch.bfloat16)
        q = torch.randn(b, 3, 8, 128, dtype=torch.bfloat16)
        k, v = torch.randn(b, 3, 2, 128, dtype=torch.bfloat16), torch.randn(b, 3, 2, 128, dtype=torch.bfloat16)
        lens = torch.tensor([0, 17, 1000], dtype=torch.int32)
        fa4.attention_with_kvcache(q, kc, vc, lens, k=k, v=v, causal=True)
        t = dev.launches[-1]
        assert t["seqused_k_values"] == [3, 20, 1003] and lens.tolist() == [0, 17, 1000], t
        for i, n in enumerate(lens.tolist()):
            assert torch.equal(kc[i, n:n + 3], k[i]) and torch.equal(vc[i, n:n + 3], v[i])
        assert int((kc != 0).any(-1).any(-1).sum()) == 9, "rows written outside the append"
        fa4.attention_with_kvcache(q, kc, vc, 500, k=k, v=v)
        assert dev.launches[-1]["seqlen_k"] == 503 and torch.equal(kc[:, 500:503], k)


# ------------------------------------------------------------------ fp8

def _need_fp8(torch):
    if getattr(torch, "float8_e4m3fn", None) is None:
        _util.skip("this PyTorch has no float8_e4m3fn")
    return torch.float8_e4m3fn


def _e4m3(torch, *shape):
    return torch.randn(*shape).to(_need_fp8(torch))


def _descales(torch, b, hkv):
    return [torch.rand(b, hkv) + 0.5 for _ in range(3)]


def _fp8_plan_checks(e, launch, descales, out_code, what):
    """E's plan is an fp8 problem writing OUT_CODE, and LAUNCH passed the
    descale pointers and the plan's workspace with its size."""
    from fa4 import _abi
    p = e.plan.problem
    assert (p.dtype, p.out_dtype) == (_abi.DTYPE_FP8_E4M3, out_code), "%s: problem dtype %d out_dtype %d" % (
        what, p.dtype, p.out_dtype)
    want = tuple(None if t is None else t.data_ptr() for t in descales)
    got = (launch["q_descale"], launch["k_descale"], launch["v_descale"])
    assert got == want, "%s: descale pointers %s, expected %s" % (what, got, want)
    assert e.ws_bytes > 0 and e.ws_bytes == e.plan.workspace_size, "%s: workspace %d" % (what, e.ws_bytes)
    assert launch["workspace"] and launch["workspace_size"] == e.ws_bytes, "%s: workspace %s, %d bytes" % (
        what, launch["workspace"], launch["workspace_size"])


def test_fp8_varlen_calls():
    """fp8 attention_varlen: a bf16 (or fp16) O, an fp8 plan with its V^T
    workspace, the descales of the sequences (len(cu_seqlens_q) - 1, not
    total_q) passed to fa4_forward."""
    with dry() as (torch, fa4, dev):
        from fa4 import _abi
        lens = [1, 17, 1000]
        cu = torch.tensor([0, 1, 18, 1018], dtype=torch.int32)
        q, k, v = _e4m3(torch, 1018, 8, 128), _e4m3(torch, 1018, 2, 128), _e4m3(torch, 1018, 2, 128)
        ds = _descales(torch, 3, 2)
        o, lse = fa4.attention_varlen(q, k, v, cu, cu, 1000, 1000, causal=True, return_lse=True,
                                      q_descale=ds[0], k_descale=ds[1], v_descale=ds[2])
        assert o.dtype == torch.bfloat16 and o.shape == (1018, 8, 128) and lse.shape == (8, 1018)
        e, t = list(dev.plans.values())[-1], dev.launches[-1]
        _fp8_plan_checks(e, t, ds, _abi.DTYPE_BF16, "fp8 varlen")
        assert e.plan.problem.varlen == 1 and e.plan.family == 90
        assert (t["cu_seqlens_q"], t["o"], t["batch"], t["seqlen_k"]) == (cu.data_ptr(), o.data_ptr(), 3, 1000)
        assert e.ws_bytes >= 3 * 2 * 128 * 1000, "the workspace cannot hold V^T (%d B)" % e.ws_bytes
        # fp16 O is a plan of its own; descales may be left out (1.0).
        out = torch.empty(1018, 8, 128, dtype=torch.float16)
        assert fa4.attention_varlen(q, k, v, cu, cu, 1000, 1000, out=out, out_dtype=torch.float16,
                                    k_descale=ds[1]) is out
        _fp8_plan_checks(list(dev.plans.values())[-1], dev.launches[-1], (None, ds[1], None), _abi.DTYPE_FP16,
                         "fp8 varlen, fp16 out")
        assert len(dev.plans) == 2
        # Seqused_k: fewer keys than cu_seqlens_k gives.
        used = torch.tensor(lens, dtype=torch.int32)
        fa4.attention_varlen(q, k, v, cu, cu, 1000, 1000, seqused_k=used, q_descale=ds[0])
        assert dev.launches[-1]["seqused_k"] == used.data_ptr()


def test_fp8_kvcache_calls():
    """fp8 attention_with_kvcache, each call with the descales and the
    workspace: decode steps over pages of 8, 16 and 64 rows and over a dense
    cache read up to tensor lengths (the sm80 family's decode tiles, which
    read seqused_k as is), a prefill chunk over 16-row pages (sm90) and over
    that dense cache (sm90's varlen view), a decode step up to an int length;
    a remembered call passes each call's descales."""
    with dry() as (torch, fa4, dev):
        from fa4 import _abi, _ops
        b, L = 3, 1024
        kc, vc = _e4m3(torch, b, L, 2, 128), _e4m3(torch, b, L, 2, 128)
        lens = torch.tensor([1, 17, 1000], dtype=torch.int32)
        q = _e4m3(torch, b, 1, 8, 128)
        qc = _e4m3(torch, b, 200, 8, 128)
        ds = _descales(torch, b, 2)
        kw = dict(q_descale=ds[0], k_descale=ds[1], v_descale=ds[2])
        for page in (8, 16, 64):
            pages, vpages = _e4m3(torch, b * L // page, page, 2, 128), _e4m3(torch, b * L // page, page, 2, 128)
            table = torch.randperm(b * L // page).to(torch.int32).view(b, L // page)
            o = fa4.attention_with_kvcache(q, pages, vpages, lens, table, **kw)
            e, t = list(dev.plans.values())[-1], dev.launches[-1]
            _fp8_plan_checks(e, t, ds, _abi.DTYPE_BF16, "fp8 paged %d" % page)
            assert (e.plan.problem.page_size, e.plan.problem.varlen, e.plan.family) == (page, 0, 80), \
                "fp8 decode over %d-row pages: family %d" % (page, e.plan.family)
            assert (t["block_table"], t["seqused_k"], t["o"]) == (table.data_ptr(), lens.data_ptr(), o.data_ptr())
            assert o.dtype == torch.bfloat16 and o.shape == (b, 1, 8, 128)
            if page == 16:      # a prefill chunk over the same pages: sm90, its V^T in the workspace
                fa4.attention_with_kvcache(qc, pages, vpages, lens, table, causal=True, **kw)
                e, t = list(dev.plans.values())[-1], dev.launches[-1]
                _fp8_plan_checks(e, t, ds, _abi.DTYPE_BF16, "fp8 paged 16 chunk")
                assert (e.plan.problem.page_size, e.plan.family) == (16, 90) and not e.as_varlen
                assert e.ws_bytes >= b * 2 * 128 * L, "the workspace cannot hold V^T (%d B)" % e.ws_bytes
        o = fa4.attention_with_kvcache(q, kc, vc, lens, **kw)
        e, t = list(dev.plans.values())[-1], dev.launches[-1]
        _fp8_plan_checks(e, t, ds, _abi.DTYPE_BF16, "fp8 dense cache decode, tensor lengths")
        assert e.plan.family == 80 and not e.as_varlen and e.plan.problem.varlen == 0
        assert (t["seqused_k"], t["cu_seqlens_q"], t["seqlen_k"]) == (lens.data_ptr(), None, L)
        o, lse = fa4.attention_with_kvcache(qc, kc, vc, lens, causal=True, return_lse=True, **kw)
        e, t = list(dev.plans.values())[-1], dev.launches[-1]
        assert e.plan.family == 90 and e.as_varlen and e.plan.problem.varlen == 1
        _fp8_plan_checks(e, t, ds, _abi.DTYPE_BF16, "fp8 dense cache chunk, tensor lengths")
        assert t["cu_seqlens_k_values"] == [0, L, 2 * L, 3 * L] and t["seqused_k"] == lens.data_ptr()
        assert o.dtype == torch.bfloat16 and lse.shape == (b, 8, 200)
        o = fa4.attention_with_kvcache(q, kc, vc, 700, out_dtype=torch.float16, **kw)
        e, t = list(dev.plans.values())[-1], dev.launches[-1]
        _fp8_plan_checks(e, t, ds, _abi.DTYPE_FP16, "fp8 dense cache, int length")
        assert o.dtype == torch.float16 and t["seqlen_k"] == 700 and not e.as_varlen and e.plan.family == 80
        # Remembered: the second call of a class passes its own descales.
        _ops._kvcache_calls.clear()
        for args in ((q, kc, vc, lens), (qc, kc, vc, lens)):
            fa4.attention_with_kvcache(*args, **kw)
            other = _descales(torch, b, 2)
            o = fa4.attention_with_kvcache(*args, q_descale=other[0], k_descale=other[1], v_descale=other[2])
            t = dev.launches[-1]
            assert (t["q_descale"], t["k_descale"], t["v_descale"]) == tuple(x.data_ptr() for x in other)
            assert o.dtype == torch.bfloat16 and t["o"] == o.data_ptr()
        assert len(_ops._kvcache_calls) == 2, "the fp8 calls were not remembered"
        # The append: fp8 rows into fp8 caches, as bytes.
        kn, vn = _e4m3(torch, b, 1, 2, 128), _e4m3(torch, b, 1, 2, 128)
        fa4.attention_with_kvcache(q, kc, vc, lens, k=kn, v=vn, **kw)
        assert dev.launches[-1]["seqused_k_values"] == [2, 18, 1001]
        for i, n in enumerate(lens.tolist()):
            assert torch.equal(kc[i, n].view(torch.uint8), kn[i, 0].view(torch.uint8))
            assert torch.equal(vc[i, n].view(torch.uint8), vn[i, 0].view(torch.uint8))


def test_fp8_dense_remembered_descales():
    """The dense path's remembered fp8 call (shared key and pointer helpers):
    each call's descales reach fa4_forward; a None descale is a class of its own."""
    with dry() as (torch, fa4, dev):
        from fa4 import _abi, _ops
        q, k = _e4m3(torch, 2, 100, 8, 128), _e4m3(torch, 2, 300, 2, 128)
        for i in range(3):
            ds = _descales(torch, 2, 2)
            o = fa4.attention(q, k, k, q_descale=ds[0], k_descale=ds[1], v_descale=ds[2])
            _fp8_plan_checks(list(dev.plans.values())[-1], dev.launches[-1], ds, _abi.DTYPE_BF16, "dense %d" % i)
            assert o.dtype == torch.bfloat16
        fa4.attention(q, k, k, q_descale=ds[0])
        assert dev.launches[-1]["k_descale"] is None
        assert len(_ops._dense_calls) == 2 and len(dev.plans) == 1


def _raises(exc, words, call):
    try:
        call()
    except exc as e:
        assert words in str(e), "%r not in %r" % (words, str(e))
    else:
        raise AssertionError("no %s (%s)" % (exc.__name__, words))


def test_fp8_argument_errors():
    """Bad fp8 arguments, the same in the three forwards: descales of another
    shape (varlen: [sequences, heads_kv]), dtype, device or contiguity, or
    given with 16-bit inputs; an out_dtype fp8 cannot write; an out of the
    input type.  Nothing is launched."""
    with dry() as (torch, fa4, dev):
        from fa4 import _ops
        f8 = _need_fp8(torch)
        b, hkv = 3, 2
        cu = torch.tensor([0, 1, 18, 1018], dtype=torch.int32)
        qv, kv = _e4m3(torch, 1018, 8, 128), _e4m3(torch, 1018, hkv, 128)
        qd, kc = _e4m3(torch, b, 1, 8, 128), _e4m3(torch, b, 64, hkv, 128)
        lens = torch.tensor([1, 17, 60], dtype=torch.int32)
        ds = torch.ones(b, hkv)
        calls = {
            "dense": lambda **kw: fa4.attention(qd, kc, kc, **kw),
            "varlen": lambda **kw: fa4.attention_varlen(qv, kv, kv, cu, cu, 1000, 1000, **kw),
            "kvcache": lambda **kw: fa4.attention_with_kvcache(qd, kc, kc, lens, **kw),
        }
        for name, call in calls.items():
            _raises(ValueError, "q_descale must be a contiguous tensor of shape (3, 2) [batch, heads_kv] (got "
                    "(1018, 2))" if name == "varlen" else "got (1018, 2)",
                    lambda: call(q_descale=torch.ones(1018, hkv)))
            _raises(ValueError, "k_descale must be a contiguous tensor of shape (3, 2)",
                    lambda: call(k_descale=torch.ones(hkv, b).t()))
            _raises(TypeError, "v_descale must be a torch.float32 tensor (got torch.float64)",
                    lambda: call(v_descale=ds.double()))
            _raises(TypeError, "q_descale must be a torch.float32 tensor (got float)", lambda: call(q_descale=1.0))
            _raises(TypeError, "fp8 inputs write torch.bfloat16 or torch.float16",
                    lambda: call(out_dtype=torch.float32))
            _raises(ValueError, "must be (", lambda: call(out=torch.empty(0, dtype=f8)))
        shape = {"dense": qd.shape, "varlen": qv.shape, "kvcache": qd.shape}
        _raises(ValueError, "fa4: out must be %s torch.bfloat16" % (tuple(shape["varlen"]),),
                lambda: calls["varlen"](out=torch.empty(shape["varlen"], dtype=f8)))
        # The device check, by itself (dry() has every tensor on the CPU).
        _raises(ValueError, "k_descale must be on cpu (got meta)", lambda: _ops.fp8_setup(
            qd, b, hkv, (None, torch.empty(b, hkv, device="meta"), None, None)))
        # 16-bit inputs take no descales and write their own type.
        q16, k16 = qv.to(torch.bfloat16), kv.to(torch.bfloat16)
        _raises(ValueError, "apply to torch.float8_e4m3fn inputs (q is torch.bfloat16)",
                lambda: fa4.attention_varlen(q16, k16, k16, cu, cu, 1000, 1000, k_descale=ds))
        _raises(TypeError, "out_dtype torch.float16; torch.bfloat16 inputs write torch.bfloat16",
                lambda: fa4.attention_with_kvcache(qd.to(torch.bfloat16), kc.to(torch.bfloat16),
                                                   kc.to(torch.bfloat16), lens, out_dtype=torch.float16))
        assert not dev.launches


def test_fp8_sm80_layouts():
    """fp8 serving layouts on Hopper: varlen queries over 16-row pages (the
    sm90 family's plain grid) and 8-row pages, pages under 16 rows and varlen
    head_dim_v 256 (the sm80 family's); each launches with its descales and
    block table.  d96 over 16-row pages is sm90's; over 8-row pages no family
    takes it (Fa4Error with both families' reasons)."""
    with dry() as (torch, fa4, dev):
        from fa4 import _abi
        cu = torch.tensor([0, 1, 18], dtype=torch.int32)
        lens = torch.tensor([3, 60], dtype=torch.int32)
        ds = _descales(torch, 2, 2)
        kw = dict(q_descale=ds[0], k_descale=ds[1], v_descale=ds[2])
        q = _e4m3(torch, 18, 8, 128)
        for page in (16, 8):
            pages = _e4m3(torch, 128 // page, page, 2, 128)
            table = torch.arange(128 // page, dtype=torch.int32).flip(0).view(2, 64 // page)
            o = fa4.attention_varlen(q, pages, pages, cu, None, 17, 64, seqused_k=lens, block_table=table,
                                     causal=True, **kw)
            e, t = list(dev.plans.values())[-1], dev.launches[-1]
            what = "fp8 varlen over %d-row pages" % page
            _fp8_plan_checks(e, t, ds, _abi.DTYPE_BF16, what)
            p = e.plan.problem
            fam = 90 if page >= 16 else 80
            assert (e.plan.family, p.varlen, p.page_size) == (fam, 1, page), "%s: family %d" % (what, e.plan.family)
            assert (t["block_table"], t["cu_seqlens_q"], t["seqused_k"], t["batch"]) == (
                table.data_ptr(), cu.data_ptr(), lens.data_ptr(), 2), what
            assert o.dtype == torch.bfloat16 and o.shape == (18, 8, 128)
        pages = _e4m3(torch, 16, 8, 2, 128)
        table = torch.arange(16, dtype=torch.int32).view(2, 8)
        o = fa4.attention_with_kvcache(_e4m3(torch, 2, 17, 8, 128), pages, pages, lens, table, causal=True,
                                       out_dtype=torch.float16, **kw)
        e, t = list(dev.plans.values())[-1], dev.launches[-1]
        _fp8_plan_checks(e, t, ds, _abi.DTYPE_FP16, "fp8 chunk over 8-row pages")
        assert (e.plan.family, e.plan.problem.page_size) == (80, 8) and o.dtype == torch.float16
        kv = _e4m3(torch, 18, 2, 256)
        fa4.attention_varlen(_e4m3(torch, 18, 8, 256), kv, kv, cu, cu, 17, 17, **kw)
        e, t = list(dev.plans.values())[-1], dev.launches[-1]
        _fp8_plan_checks(e, t, ds, _abi.DTYPE_BF16, "fp8 varlen d256")
        assert (e.plan.family, e.plan.problem.varlen, e.plan.problem.head_dim_v) == (80, 1, 256)
        pages = _e4m3(torch, 8, 16, 2, 96)
        fa4.attention_varlen(_e4m3(torch, 18, 8, 96), pages, pages, cu, cu, 17, 64,
                             block_table=torch.arange(8, dtype=torch.int32).view(2, 4))
        assert list(dev.plans.values())[-1].plan.family == 90, "fp8 d96 varlen over 16-row pages"
        launched = len(dev.launches)
        pages = _e4m3(torch, 16, 8, 2, 96)
        try:
            fa4.attention_varlen(_e4m3(torch, 18, 8, 96), pages, pages, cu, cu, 17, 64,
                                 block_table=torch.arange(16, dtype=torch.int32).view(2, 8))
        except fa4.Fa4Error as err:
            for words in ("head dims must be multiples of 64", "page_size=8"):
                assert words in str(err), "%r not in %r" % (words, str(err))
        else:
            raise AssertionError("fp8 d96 varlen over pages planned")
        assert len(dev.launches) == launched


def test_fp8_on_the_sm80_family():
    """An sm80-family GPU (compute capability 8.x) runs fp8 on the sm80
    family in each forward: dense, varlen, a dense cache read up to tensor
    lengths (seqused_k as is, no varlen view) and 8-row pages, each with its
    descales.  Head dims that are no multiple of 64 are libfa4's Fa4Error."""
    with dry("sm_80") as (torch, fa4, dev):
        from fa4 import _abi
        q, k = _e4m3(torch, 2, 16, 4, 64), _e4m3(torch, 2, 16, 2, 64)
        cu = torch.tensor([0, 16, 32], dtype=torch.int32)
        lens = torch.tensor([3, 16], dtype=torch.int32)
        ds = _descales(torch, 2, 2)
        kw = dict(q_descale=ds[0], k_descale=ds[1], v_descale=ds[2])
        pages = _e4m3(torch, 4, 8, 2, 64)
        table = torch.tensor([[3, 1], [0, 2]], dtype=torch.int32)
        calls = [("dense", lambda: fa4.attention(q, k, k, causal=True, **kw)),
                 ("varlen", lambda: fa4.attention_varlen(q.view(32, 4, 64), k.view(32, 2, 64), k.view(32, 2, 64),
                                                         cu, cu, 16, 16, **kw)),
                 ("dense cache", lambda: fa4.attention_with_kvcache(q, k, k, lens, causal=True, **kw)),
                 ("8-row pages", lambda: fa4.attention_with_kvcache(q[:, :1], pages, pages, lens, table, **kw))]
        for what, call in calls:
            o = call()
            e, t = list(dev.plans.values())[-1], dev.launches[-1]
            _fp8_plan_checks(e, t, ds, _abi.DTYPE_BF16, "sm_80 fp8 " + what)
            assert e.plan.family == 80 and not e.as_varlen, "sm_80 fp8 %s: family %d" % (what, e.plan.family)
            assert o.dtype == torch.bfloat16 and t["o"] == o.data_ptr()
        assert len(dev.launches) == len(calls) and t["block_table"] == table.data_ptr()
        assert dev.launches[2]["seqused_k"] == lens.data_ptr() and dev.launches[2]["cu_seqlens_q"] is None
        q96, k96 = _e4m3(torch, 2, 16, 4, 96), _e4m3(torch, 2, 16, 2, 96)
        _raises(fa4.Fa4Error, "sm80 fp8: head dims must be multiples of 64", lambda: fa4.attention(q96, k96, k96))
        assert len(dev.launches) == len(calls)


def test_fp8_plan_info():
    """plan_info of fp8 calls: out_dtype picks the plan; a decode step's
    plan is the sm80 family's, its workspace the split-KV partials (float32
    O and LSE of two splits or more); a prefill chunk over the same pages
    and a varlen prefill plan with sm90, the workspace covering V^T."""
    with dry() as (torch, fa4, dev):
        q, k = _e4m3(torch, 3, 1, 8, 128), _e4m3(torch, 3 * 64, 16, 2, 128)
        table = torch.arange(3 * 64, dtype=torch.int32).view(3, 64)
        lens = torch.tensor([1, 17, 1000], dtype=torch.int32)
        bf = fa4.plan_info(q, k, k, cache_seqlens=lens, block_table=table)
        fp16 = fa4.plan_info(q, k, k, cache_seqlens=lens, block_table=table, out_dtype=torch.float16)
        assert bf.family == fp16.family == 80 and len(dev.plans) == 2 and not dev.launches
        assert bf.config.split()[0] == "sm80", bf
        partials = bf.batch * 8 * bf.seqlen_q * (128 + 1) * 4     # per split: O [dv] and LSE, float32
        assert bf.workspace_bytes >= 2 * partials, bf
        chunk = fa4.plan_info(_e4m3(torch, 3, 200, 8, 128), k, k, cache_seqlens=lens, block_table=table,
                              causal=True)
        assert chunk.family == 90 and chunk.workspace_bytes >= chunk.batch * 2 * 128 * chunk.seqlen_k, chunk
        cu = torch.tensor([0, 1, 18, 1018], dtype=torch.int32)
        kv = _e4m3(torch, 1018, 2, 128)
        info = fa4.plan_info(_e4m3(torch, 1018, 8, 128), kv, kv, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=1000,
                             max_seqlen_k=1000)
        assert info.family == 90 and info.workspace_bytes >= info.batch * 2 * 128 * info.seqlen_k, info
        assert not dev.launches


# ---------------------------------------------------- softcap and sinks

def _sinks(torch, hq):
    return torch.linspace(-2.0, 6.0, hq)


def _mods_checks(e, launch, softcap, sinks, what):
    """E's plan has SOFTCAP and attention_sinks = (SINKS given), and LAUNCH
    passed the sinks' pointer (None without)."""
    p = e.plan.problem
    assert (p.softcap, p.attention_sinks) == (softcap, int(sinks is not None)), \
        "%s: problem softcap %g attention_sinks %d" % (what, p.softcap, p.attention_sinks)
    want = None if sinks is None else sinks.data_ptr()
    assert launch["sinks"] == want, "%s: sinks pointer %s, expected %s" % (what, launch["sinks"], want)


def test_softcap_sinks_dense_calls():
    """fa4.attention(softcap=, sinks=): each (cap, sinks or not) is a plan of
    its own with the cap and the flag in fa4_problem; the sinks' pointer
    reaches fa4_tensors.sinks, a remembered call's too (each call's own);
    a call with neither still plans and launches as before."""
    with dry() as (torch, fa4, dev):
        from fa4 import _ops
        q = torch.randn(2, 300, 8, 128, dtype=torch.bfloat16)
        k = torch.randn(2, 300, 2, 128, dtype=torch.bfloat16)
        s1, s2 = _sinks(torch, 8), _sinks(torch, 8) + 1
        cases = [(0.0, None), (30.0, None), (5.0, None), (0.0, s1), (30.0, s1)]
        for cap, sinks in cases:
            fa4.attention(q, k, k, causal=True, softcap=cap, sinks=sinks)
            _mods_checks(list(dev.plans.values())[-1], dev.launches[-1], cap, sinks, "softcap %g" % cap)
        assert len(dev.plans) == len(cases), "a softcap or sinks call reused another's plan"
        assert len(_ops._dense_calls) == len(cases), "keys do not tell the calls apart"
        # Remembered: the same class with another sinks tensor passes that one.
        handles = {}
        for cap, sinks in [(30.0, s1), (30.0, s2), (5.0, None), (30.0, None), (0.0, s2)]:
            fa4.attention(q, k, k, causal=True, softcap=cap, sinks=sinks)
            t = dev.launches[-1]
            assert t["sinks"] == (None if sinks is None else sinks.data_ptr()), (cap, t["sinks"])
            handles.setdefault((cap, sinks is None), set()).add(t["handle"])
        assert len(dev.plans) == len(cases) and len(_ops._dense_calls) == len(cases)
        assert len(set.union(*handles.values())) == len(handles), "two softcap/sinks classes share a plan"
        # softcap=0 with no sinks is the plain call: its key and plan.
        fa4.attention(q, k, k, causal=True, softcap=0)
        assert len(_ops._dense_calls) == len(cases) and dev.launches[-1]["sinks"] is None
        plain = [key for key in _ops._dense_calls if _ops._MODS not in key]
        assert len(plain) == 1, "a call without softcap or sinks has a key with their part"


def test_softcap_sinks_keys():
    """The remembered calls' key part: the cap's value and the sinks'
    shape, layout, dtype and device (not their values or address); None
    (not remembered) for a sinks object that is not a plain tensor."""
    torch = _util.need_torch()
    from fa4 import _ops
    s = torch.zeros(8)
    assert _ops._mods_key((30.0, None)) != _ops._mods_key((5.0, None))
    assert _ops._mods_key((30.0, s)) == _ops._mods_key((30.0, torch.ones(8)))
    assert _ops._mods_key((30.0, s)) != _ops._mods_key((30.0, None))
    assert _ops._mods_key((30.0, s)) != _ops._mods_key((30.0, torch.zeros(4)))
    assert _ops._mods_key((0.0, s)) != _ops._mods_key((0.0, torch.zeros(16)[::2]))

    class Sub(torch.Tensor):
        pass
    assert _ops._mods_key((0.0, s.as_subclass(Sub))) is None
    assert _ops.mods_arg(0.0, None) is None and _ops.mods_arg(None, None) is None
    assert _ops.mods_arg(30, None) == (30.0, None) and _ops.mods_arg(0, s) == (0.0, s)


def test_softcap_sinks_varlen_calls():
    """attention_varlen with softcap and sinks: the varlen problem carries
    both, the launch the pointer; paged too."""
    with dry() as (torch, fa4, dev):
        cu = torch.tensor([0, 1, 18, 318], dtype=torch.int32)
        q = torch.randn(318, 8, 128, dtype=torch.bfloat16)
        k = torch.randn(318, 2, 128, dtype=torch.bfloat16)
        s = _sinks(torch, 8)
        o, lse = fa4.attention_varlen(q, k, k, cu, cu, 300, 300, causal=True, softcap=5.0, sinks=s,
                                      return_lse=True)
        e, t = list(dev.plans.values())[-1], dev.launches[-1]
        _mods_checks(e, t, 5.0, s, "varlen")
        assert e.plan.problem.varlen == 1 and lse.shape == (8, 318) and o.shape == q.shape
        fa4.attention_varlen(q, k, k, cu, cu, 300, 300, causal=True)
        _mods_checks(list(dev.plans.values())[-1], dev.launches[-1], 0.0, None, "varlen plain")
        assert len(dev.plans) == 2
        pages = torch.randn(64, 16, 2, 128, dtype=torch.bfloat16)
        table = torch.arange(63, dtype=torch.int32).view(3, 21)
        fa4.attention_varlen(q, pages, pages, cu, cu, 300, 300, block_table=table, sinks=s)
        e, t = list(dev.plans.values())[-1], dev.launches[-1]
        _mods_checks(e, t, 0.0, s, "varlen paged")
        assert e.plan.problem.page_size == 16


def test_softcap_sinks_kvcache_calls():
    """attention_with_kvcache with softcap and sinks: decode (sm80), a
    prefill chunk over a dense cache (sm90's varlen view: that plan gets
    both too), paged, an int length; remembered calls pass each call's
    sinks, the varlen view's included."""
    with dry() as (torch, fa4, dev):
        from fa4 import _ops
        b, L = 3, 1024
        kc = torch.randn(b, L, 2, 128, dtype=torch.bfloat16)
        lens = torch.tensor([1, 17, 300], dtype=torch.int32)
        s1, s2 = _sinks(torch, 8), _sinks(torch, 8) - 1
        qd = torch.randn(b, 1, 8, 128, dtype=torch.bfloat16)
        qc = torch.randn(b, 200, 8, 128, dtype=torch.bfloat16)
        pages = torch.randn(3 * 64, 16, 2, 128, dtype=torch.bfloat16)
        table = torch.arange(3 * 64, dtype=torch.int32).view(3, 64)
        calls = [("decode", (qd, kc, kc, lens), {}), ("chunk", (qc, kc, kc, lens), dict(causal=True)),
                 ("paged", (qd, pages, pages, lens, table), {}), ("int length", (qd, kc, kc, 700), {})]
        for what, args, kw in calls:
            for cap, sinks in [(30.0, s1), (0.0, s1), (5.0, None)]:
                fa4.attention_with_kvcache(*args, softcap=cap, sinks=sinks, **kw)
                e, t = list(dev.plans.values())[-1], dev.launches[-1]
                _mods_checks(e, t, cap, sinks, "kvcache %s softcap %g" % (what, cap))
                if what == "chunk" and e.plan.family == 90:
                    assert e.as_varlen and e.plan.problem.varlen == 1
                # Remembered: another sinks tensor, its pointer.
                other = None if sinks is None else s2
                fa4.attention_with_kvcache(*args, softcap=cap, sinks=other, **kw)
                _mods_checks(e, dev.launches[-1], cap, other, "kvcache %s remembered" % what)
        assert len(_ops._kvcache_calls) == 12, len(_ops._kvcache_calls)


def test_softcap_sinks_argument_errors():
    """Bad softcap or sinks, the same in the three forwards and plan_info:
    ValueError/TypeError naming the argument; nothing planned or launched."""
    with dry() as (torch, fa4, dev):
        from fa4 import _ops
        cu = torch.tensor([0, 1, 18, 318], dtype=torch.int32)
        qv, kv = torch.randn(318, 8, 128, dtype=torch.bfloat16), torch.randn(318, 2, 128, dtype=torch.bfloat16)
        q, kc = torch.randn(3, 1, 8, 128, dtype=torch.bfloat16), torch.randn(3, 64, 2, 128, dtype=torch.bfloat16)
        lens = torch.tensor([1, 17, 60], dtype=torch.int32)
        calls = {
            "dense": lambda **kw: fa4.attention(q, kc, kc, **kw),
            "varlen": lambda **kw: fa4.attention_varlen(qv, kv, kv, cu, cu, 300, 300, **kw),
            "kvcache": lambda **kw: fa4.attention_with_kvcache(q, kc, kc, lens, **kw),
            "plan_info": lambda **kw: fa4.plan_info(q, kc, kc, **kw),
        }
        for name, call in calls.items():
            for bad in (-1.0, float("nan"), float("inf"), -float("inf"), 1e39):
                _raises(ValueError, "softcap=%r; must be 0 (none) or a finite positive cap" % bad,
                        lambda: call(softcap=bad))
            _raises(TypeError, "softcap must be a float (got str)", lambda: call(softcap="30"))
            _raises(TypeError, "softcap must be a float (got list)", lambda: call(softcap=[30.0]))
            _raises(TypeError, "sinks must be a torch.float32 tensor (got torch.float16)",
                    lambda: call(sinks=torch.zeros(8, dtype=torch.float16)))
            _raises(TypeError, "sinks must be a torch.float32 tensor (got list)", lambda: call(sinks=[0.0] * 8))
            _raises(ValueError, "sinks must be a contiguous tensor of shape (8,) [heads_q] (got (2,))",
                    lambda: call(sinks=torch.zeros(2)))
            _raises(ValueError, "sinks must be a contiguous tensor of shape (8,) [heads_q] (got (1, 8))",
                    lambda: call(sinks=torch.zeros(1, 8)))
            _raises(ValueError, "(got (8,), not contiguous)", lambda: call(sinks=torch.zeros(16)[::2]))
        # The device check, by itself (dry() has every tensor on the CPU).
        _raises(ValueError, "sinks must be on cpu (got meta)",
                lambda: _ops.mods_setup(q, 8, (0.0, torch.empty(8, device="meta"))))
        assert not dev.plans and not dev.launches


def test_softcap_sinks_rows_without_keys():
    """No key at all (nothing to launch): O zeros, LSE the head's sink in
    each layout (fa4.h's convention), -inf without sinks."""
    with dry() as (torch, fa4, dev):
        s = _sinks(torch, 4)
        q = torch.randn(2, 5, 4, 64, dtype=torch.bfloat16)
        none = torch.randn(2, 0, 2, 64, dtype=torch.bfloat16)
        o, lse = fa4.attention(q, none, none, sinks=s, return_lse=True)
        assert (o == 0).all() and torch.equal(lse, s.view(1, 4, 1).expand(2, 4, 5)), lse
        o, lse = fa4.attention(q, none, none, softcap=30.0, return_lse=True)
        assert (o == 0).all() and torch.isinf(lse).all() and (lse < 0).all()
        kc = torch.randn(2, 64, 2, 64, dtype=torch.bfloat16)
        o, lse = fa4.attention_with_kvcache(q, kc, kc, 0, sinks=s, return_lse=True)
        assert (o == 0).all() and torch.equal(lse, s.view(1, 4, 1).expand(2, 4, 5))
        cu = torch.tensor([0, 3, 5], dtype=torch.int32)
        o, lse = fa4.attention_varlen(q[0], kc[0], kc[0], cu, cu, 3, 0, sinks=s, return_lse=True)
        assert (o == 0).all() and torch.equal(lse, s.view(4, 1).expand(4, 5))
        assert not dev.launches


def test_softcap_sinks_plan_info():
    """plan_info(softcap=, sinks=): the plan the call would use, one per
    cap and sinks flag."""
    with dry() as (torch, fa4, dev):
        q, k = torch.randn(2, 100, 8, 128, dtype=torch.float16), torch.randn(2, 100, 2, 128, dtype=torch.float16)
        s = _sinks(torch, 8)
        infos = [fa4.plan_info(q, k, k, causal=True, **kw)
                 for kw in ({}, dict(softcap=30.0), dict(sinks=s), dict(softcap=30.0, sinks=s))]
        assert len(dev.plans) == 4 and not dev.launches
        got = sorted((e.plan.problem.softcap, e.plan.problem.attention_sinks) for e in dev.plans.values())
        assert got == [(0.0, 0), (0.0, 1), (30.0, 0), (30.0, 1)], got
        assert all(i.source == "heuristic" for i in infos), infos
        lens = torch.tensor([1, 17], dtype=torch.int32)
        info = fa4.plan_info(q[:, :1], k, k, cache_seqlens=lens, sinks=s)
        assert list(dev.plans.values())[-1].plan.problem.attention_sinks == 1 and info.family in (80, 90)


def test_fp8_softcap_sinks():
    """fp8 inputs with softcap and sinks: the fp8 plan carries both next to
    out_dtype, the launch the descales and the sinks; a decode step (sm80)
    and a prefill chunk's varlen view of the KV cache (sm90) get them too."""
    with dry() as (torch, fa4, dev):
        from fa4 import _abi
        q, k = _e4m3(torch, 2, 100, 8, 128), _e4m3(torch, 2, 300, 2, 128)
        ds = _descales(torch, 2, 2)
        s = _sinks(torch, 8)
        kw = dict(q_descale=ds[0], k_descale=ds[1], v_descale=ds[2])
        for sinks in (s, s + 1):        # the second call is remembered
            fa4.attention(q, k, k, causal=True, softcap=30.0, sinks=sinks, **kw)
            e, t = list(dev.plans.values())[-1], dev.launches[-1]
            _fp8_plan_checks(e, t, ds, _abi.DTYPE_BF16, "fp8 softcap sinks")
            _mods_checks(e, t, 30.0, sinks, "fp8 softcap sinks")
        assert len(dev.plans) == 1
        lens = torch.tensor([1, 17], dtype=torch.int32)
        fa4.attention_with_kvcache(_e4m3(torch, 2, 50, 8, 128), k, k, lens, causal=True, sinks=s, **kw)
        e, t = list(dev.plans.values())[-1], dev.launches[-1]
        assert e.as_varlen and e.plan.problem.varlen == 1
        _mods_checks(e, t, 0.0, s, "fp8 kvcache as varlen")
        fa4.attention_with_kvcache(_e4m3(torch, 2, 1, 8, 128), k, k, lens, softcap=30.0, sinks=s, **kw)
        e, t = list(dev.plans.values())[-1], dev.launches[-1]
        assert e.plan.family == 80 and not e.as_varlen
        _fp8_plan_checks(e, t, ds, _abi.DTYPE_BF16, "fp8 decode softcap sinks")
        _mods_checks(e, t, 30.0, s, "fp8 decode softcap sinks")
