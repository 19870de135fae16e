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
    """A _Device whose context is plan_only and whose fa4_forward records."""

    def __init__(self, torch, _ops, _lib, _abi):
        self.index = 0
        self.device = torch.device("cpu")
        self.context = _lib.Context(plan_only=True, arch="sm_90a", no_database=True)
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
def dry():
    torch = _util.need_torch()
    import fa4
    from fa4 import _abi, _lib, _ops
    dev = _DryDevice(torch, _ops, _lib, _abi)
    saved = (_ops._device_of, _ops._raw_stream, _ops._workspace)
    # Remembered calls hold their device: none from another test's.
    _ops._dense_calls.clear()
    _ops._kvcache_calls.clear()
    _ops._device_of = lambda q, *others: dev
    _ops._raw_stream = lambda index: 1234
    _ops._workspace = lambda e, stream, device: torch.zeros(e.ws_bytes, dtype=torch.uint8)
    try:
        yield torch, fa4, dev
    finally:
        _ops._device_of, _ops._raw_stream, _ops._workspace = saved
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
