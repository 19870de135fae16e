"""The PyTorch layer without a GPU: the registered ops and their fake
implementations (meta tensors), torch.compile(fullgraph=True) tracing them,
input checks, and the stride and plan-size rules.  Skips without PyTorch."""
import _util


def _fa4():
    torch = _util.need_torch()
    import fa4
    return torch, fa4


def _meta(torch, *shape, dtype=None):
    return torch.empty(*shape, device="meta", dtype=dtype or torch.bfloat16)


def test_ops_are_registered():
    torch, fa4 = _fa4()
    for name in ("attention", "attention_out", "attention_varlen", "attention_varlen_out",
                 "attention_with_kvcache", "attention_with_kvcache_out"):
        assert hasattr(torch.ops.fa4, name), name


def test_fake_shapes():
    torch, fa4 = _fa4()
    q, k = _meta(torch, 2, 17, 8, 128), _meta(torch, 2, 33, 2, 128)
    v = _meta(torch, 2, 33, 2, 64)
    o, lse = fa4.attention(q, k, v, causal=True, return_lse=True)
    assert o.shape == (2, 17, 8, 64) and lse.shape == (2, 8, 17) and lse.dtype == torch.float32
    assert fa4.attention(q, k, v).shape == (2, 17, 8, 64)
    out = _meta(torch, 2, 17, 8, 64)
    assert fa4.attention(q, k, v, out=out) is out
    cu = _meta(torch, 4, dtype=torch.int32)
    o, lse = fa4.attention_varlen(_meta(torch, 50, 8, 128), _meta(torch, 60, 2, 128), _meta(torch, 60, 2, 128),
                                  cu, cu, 30, 30, return_lse=True)
    assert o.shape == (50, 8, 128) and lse.shape == (8, 50)
    pages, table = _meta(torch, 10, 16, 2, 128), _meta(torch, 2, 5, dtype=torch.int32)
    lens = _meta(torch, 2, dtype=torch.int32)
    o, lse = fa4.attention_with_kvcache(q[:, :1], pages, pages, lens, table, return_lse=True)
    assert o.shape == (2, 1, 8, 128) and lse.shape == (2, 8, 1)
    assert fa4.attention_with_kvcache(q, k, k, 20).shape == (2, 17, 8, 128)
    f8 = getattr(torch, "float8_e4m3fn", None)
    if f8 is not None:   # fp8 inputs write bf16 unless fp16 is asked for
        q8, k8 = q.to(f8), k.to(f8)
        ds = _meta(torch, 2, 2, dtype=torch.float32)
        assert fa4.attention(q8, k8, k8, q_descale=ds).dtype == torch.bfloat16
        o, lse = fa4.attention(q8, k8, k8, out_dtype=torch.float16, return_lse=True)
        assert o.dtype == torch.float16 and o.shape == (2, 17, 8, 128) and lse.shape == (2, 8, 17)


def test_fp8_fake_shapes_and_compile():
    """fp8 inputs through the registered ops on meta tensors, in each forward:
    O is bfloat16 unless float16 is asked for, with and without out=, and
    torch.compile(fullgraph=True) traces the descales and out_dtype."""
    torch, fa4 = _fa4()
    f8 = getattr(torch, "float8_e4m3fn", None)
    if f8 is None:
        _util.skip("this PyTorch has no float8_e4m3fn")
    ds = _meta(torch, 2, 2, dtype=torch.float32)
    q, k = _meta(torch, 2, 17, 8, 128, dtype=f8), _meta(torch, 2, 33, 2, 128, dtype=f8)
    cu = _meta(torch, 3, dtype=torch.int32)
    pages, table = _meta(torch, 10, 16, 2, 128, dtype=f8), _meta(torch, 2, 5, dtype=torch.int32)
    lens = _meta(torch, 2, dtype=torch.int32)
    kw = dict(q_descale=ds, k_descale=ds, v_descale=ds)
    o, lse = fa4.attention_varlen(q[0], k[0], k[0], cu, cu, 17, 33, return_lse=True, **kw)
    assert o.dtype == torch.bfloat16 and o.shape == (17, 8, 128) and lse.shape == (8, 17)
    o = fa4.attention_varlen(q[0], k[0], k[0], cu, cu, 17, 33, out_dtype=torch.float16)
    assert o.dtype == torch.float16
    out = _meta(torch, 17, 8, 128, dtype=torch.float16)
    assert fa4.attention_varlen(q[0], k[0], k[0], cu, cu, 17, 33, out=out, out_dtype=torch.float16, **kw) is out
    o, lse = fa4.attention_with_kvcache(q[:, :1], pages, pages, lens, table, return_lse=True, **kw)
    assert o.dtype == torch.bfloat16 and o.shape == (2, 1, 8, 128) and lse.shape == (2, 8, 1)
    o = fa4.attention_with_kvcache(q, k, k, 20, out_dtype=torch.float16, k_descale=ds)
    assert o.dtype == torch.float16 and o.shape == (2, 17, 8, 128)
    out = _meta(torch, 2, 1, 8, 128)
    assert fa4.attention_with_kvcache(q[:, :1], k, k, lens, out=out, **kw) is out

    def f(q, k, pages, cu, lens, table, qd, kd, vd):
        o = fa4.attention_varlen(q[0], k[0], k[0], cu, cu, 17, 33, causal=True, q_descale=qd, k_descale=kd,
                                 v_descale=vd)
        o2 = fa4.attention_with_kvcache(q[:, :1], pages, pages, lens, table, q_descale=qd, k_descale=kd,
                                        v_descale=vd, out_dtype=torch.float16)
        return o * 2, o2
    cf = torch.compile(f, fullgraph=True, backend="aot_eager")
    o, o2 = cf(q, k, pages, cu, lens, table, ds, ds, ds)
    assert (o.dtype, o.shape, o2.dtype, o2.shape) == (torch.bfloat16, (17, 8, 128), torch.float16, (2, 1, 8, 128))


def test_compile_fullgraph_traces_the_ops():
    torch, fa4 = _fa4()

    def f(q, k, v, cu, lens, table, pages):
        o = fa4.attention(q, k, v, causal=True, window=(16, -1))
        o2, lse = fa4.attention_varlen(q[0], k[0], v[0], cu, cu, 17, 33, causal=True, return_lse=True)
        o3 = fa4.attention_with_kvcache(q[:, :1], pages, pages, lens, table, softmax_scale=0.1)
        return o * 2, o2, lse, o3
    q, k = _meta(torch, 2, 17, 8, 128), _meta(torch, 2, 33, 2, 128)
    cu, lens = _meta(torch, 3, dtype=torch.int32), _meta(torch, 2, dtype=torch.int32)
    table, pages = _meta(torch, 2, 5, dtype=torch.int32), _meta(torch, 10, 16, 2, 128)
    cf = torch.compile(f, fullgraph=True, backend="aot_eager")
    o, o2, lse, o3 = cf(q, k, k, cu, lens, table, pages)
    assert o.shape == q.shape and o2.shape == (17, 8, 128) and lse.shape == (8, 17) and o3.shape == (2, 1, 8, 128)


def test_input_checks():
    torch, fa4 = _fa4()
    cpu = torch.zeros(1, 4, 2, 64, dtype=torch.bfloat16)
    try:
        fa4.attention(cpu, cpu, cpu)
    except ValueError as e:
        assert "must be a CUDA tensor" in str(e), e
    else:
        raise AssertionError("CPU tensors accepted")
    q = _meta(torch, 1, 4, 2, 64)
    bad = [((q.float(), q.float(), q.float()), TypeError, "supported: torch.bfloat16"),
           ((q, _meta(torch, 2, 4, 2, 64), _meta(torch, 2, 4, 2, 64)), ValueError, "do not agree"),
           ((q[0], q[0], q[0]), ValueError, "[batch, seqlen, heads, head_dim]")]
    for args, exc, text in bad:
        try:
            fa4.attention(*args)
        except exc as e:
            assert text in str(e), e
        else:
            raise AssertionError("%s not raised" % exc.__name__)
    cu64 = _meta(torch, 3, dtype=torch.int64)
    try:
        fa4.attention_varlen(q[0], q[0], q[0], cu64, cu64, 4, 4)
    except TypeError as e:
        assert "cu_seqlens_q must be torch.int32" in str(e), e
    else:
        raise AssertionError("int64 cu_seqlens accepted")


def test_strides_in_fa4_terms():
    torch, fa4 = _fa4()
    from fa4 import _ops
    x = torch.zeros(2, 10, 4, 64)
    assert _ops._strides(x) is None
    assert _ops._strides(x, force=True) == (2560, 256, 64)
    qkv = torch.zeros(2, 10, 3, 4, 64)
    assert _ops._strides(qkv[:, :, 1]) == (7680, 768, 64)
    # Size-1 dimensions: PyTorch's strides there are arbitrary; fa4 gets valid ones.
    one = torch.zeros(5, 1, 4, 64).as_strided((1, 1, 4, 64), (1, 3, 64, 1))
    assert _ops._strides(one, force=True) == (256, 256, 64)
    assert _ops._strides(torch.zeros(7, 4, 64)[:, :2]) == (256, 256, 64)    # packed: the row stride stands in
    try:
        _ops._strides(torch.zeros(2, 10, 64, 4).transpose(2, 3))
    except ValueError as e:
        assert "last dimension must be contiguous" in str(e)
    else:
        raise AssertionError("a non-contiguous last dimension passed")


def test_plan_maxima():
    torch, fa4 = _fa4()
    from fa4 import _ops
    assert [_ops._pow2(n) for n in (1, 2, 3, 17, 1000, 1024, 1025)] == [1, 2, 4, 32, 1024, 1024, 2048]
    # The batch rounds up within the database's work bucket (batch x heads_kv).
    assert _ops._batch_max(3, 8) == 4 and _ops._batch_max(5, 12) == 5 and _ops._batch_max(1, 1) == 1
    assert _ops._batch_max(3, 12) == 5


def test_eager_or_op():
    torch, fa4 = _fa4()
    from fa4 import _ops
    assert _ops.use_op(_meta(torch, 1))
    cpu = torch.zeros(1)
    assert not _ops.use_op(cpu, None)
    assert _ops.use_op(torch.zeros(1, requires_grad=True).cuda() if torch.cuda.is_available() else _meta(torch, 1))


def _appended(torch, cache, new, lens):
    """CACHE [batch, seqlen, ...] with NEW [batch, seqlen_new, ...] written at LENS[b]."""
    want = cache.clone()
    for b, n in enumerate(lens):
        want[b, n:n + new.shape[1]] = new[b]
    return want


def test_append_kv_dense_and_paged():
    """flash_attn_with_kvcache's append (fa4._ops.append_kv, plain PyTorch
    indexing) on CPU tensors: ragged lengths with 0, one and three new rows,
    a dense cache and the same cache as shuffled pages."""
    torch, fa4 = _fa4()
    from fa4 import _ops
    g = torch.Generator().manual_seed(1)
    b, L, hkv, d, dv, page = 4, 64, 2, 16, 8, 16
    lens = [0, 1, 17, 60]
    for s in (1, 3):
        k = torch.randn(b, s, hkv, d, generator=g).to(torch.bfloat16)
        v = torch.randn(b, s, hkv, dv, generator=g).to(torch.bfloat16)
        q = torch.zeros(b, s, 4, d, dtype=torch.bfloat16)
        kc = torch.randn(b, L, hkv, d, generator=g).to(torch.bfloat16)
        vc = torch.randn(b, L, hkv, dv, generator=g).to(torch.bfloat16)
        want_k, want_v = _appended(torch, kc, k, lens), _appended(torch, vc, v, lens)
        used = torch.tensor(lens, dtype=torch.int32)
        # Paged: the same rows in a pool of pages in shuffled order.
        perm = torch.randperm(b * L // page, generator=g)
        kp = torch.empty(b * L // page, page, hkv, d, dtype=torch.bfloat16)
        vp = torch.empty(b * L // page, page, hkv, dv, dtype=torch.bfloat16)
        kp[perm], vp[perm] = kc.reshape(-1, page, hkv, d), vc.reshape(-1, page, hkv, dv)
        table = perm.view(b, L // page).to(torch.int32)

        got = _ops.append_kv(q, kc, vc, k, v, used, None)
        assert got.dtype == torch.int32 and got.tolist() == [n + s for n in lens], got
        assert used.tolist() == lens, "cache_seqlens changed"
        assert torch.equal(kc, want_k) and torch.equal(vc, want_v), "dense append, seqlen_new %d" % s
        got = _ops.append_kv(q, kp, vp, k, v, used, table)
        assert got.tolist() == [n + s for n in lens], got
        rows = table.long()
        assert torch.equal(kp[rows].reshape(b, L, hkv, d), want_k), "paged append (k), seqlen_new %d" % s
        assert torch.equal(vp[rows].reshape(b, L, hkv, dv), want_v), "paged append (v), seqlen_new %d" % s

    # An int cache_seqlens: every sequence at the same row, checked on the host.
    kc, vc = torch.zeros(b, L, hkv, d, dtype=torch.bfloat16), torch.zeros(b, L, hkv, dv, dtype=torch.bfloat16)
    assert _ops.append_kv(q, kc, vc, k, v, 61, None) == 64
    assert torch.equal(kc, _appended(torch, torch.zeros_like(kc), k, [61] * b))
    for args, exc, text in [((k, None, 5), ValueError, "k and v go together"),
                            ((k, v, None), ValueError, "needs cache_seqlens"),
                            ((k, v, 62), ValueError, "cache_seqlens=62 and 3 new rows"),
                            ((k.half(), v, 5), TypeError, "the caches' dtype"),
                            ((k[:, :, :1], v, 5), ValueError, "[batch, seqlen_new, heads_kv, head_dim]"),
                            ((k[:2], v[:2], 5), ValueError, "[batch, seqlen_new, heads_kv, head_dim]"),
                            ((k, v, torch.tensor(lens)), TypeError, "cache_seqlens must be torch.int32")]:
        try:
            _ops.append_kv(q, kc, vc, args[0], args[1], args[2], None)
        except exc as e:
            assert text in str(e), e
        else:
            raise AssertionError("%s not raised (%s)" % (exc.__name__, text))


def test_append_kv_through_the_ops():
    """attention_with_kvcache(k=, v=) on meta tensors (the registered op's path)
    and traced by torch.compile(fullgraph=True)."""
    torch, fa4 = _fa4()
    q = _meta(torch, 2, 3, 8, 128)
    kc, pages = _meta(torch, 2, 64, 2, 128), _meta(torch, 10, 16, 2, 128)
    k = _meta(torch, 2, 3, 2, 128)
    lens, table = _meta(torch, 2, dtype=torch.int32), _meta(torch, 2, 5, dtype=torch.int32)
    o, lse = fa4.attention_with_kvcache(q, kc, kc, lens, k=k, v=k, causal=True, return_lse=True)
    assert o.shape == (2, 3, 8, 128) and lse.shape == (2, 8, 3)
    assert fa4.attention_with_kvcache(q, pages, pages, lens, table, k=k, v=k).shape == (2, 3, 8, 128)
    assert fa4.attention_with_kvcache(q, kc, kc, 7, k=k, v=k).shape == (2, 3, 8, 128)

    def f(q, kc, vc, k, v, lens, table):
        return fa4.attention_with_kvcache(q, kc, vc, lens, table, k=k, v=v, causal=True)
    cf = torch.compile(f, fullgraph=True, backend="aot_eager")
    assert cf(q, pages, pages.clone(), k, k, lens, table).shape == (2, 3, 8, 128)
    f8 = getattr(torch, "float8_e4m3fn", None)
    if f8 is not None:      # fp8 rows are moved as bytes
        o = cf(q.to(f8), pages.to(f8), pages.to(f8), k.to(f8), k.to(f8), lens, table)
        assert o.shape == (2, 3, 8, 128) and o.dtype == torch.bfloat16


_OPS = ("attention", "attention_out", "attention_varlen", "attention_varlen_out", "attention_with_kvcache",
        "attention_with_kvcache_out")


def test_op_schemas_take_softcap_and_sinks():
    """Each op ends with `float softcap=0.` and `Tensor? sinks=None`, after
    the fp8 arguments (so calls that stop earlier are what they were), and
    no op mutates the sinks."""
    torch, fa4 = _fa4()
    for name in _OPS:
        schema = getattr(torch.ops.fa4, name).default._schema
        args = schema.arguments
        tail = [(a.name, str(a.type), a.default_value) for a in args[-3:]]
        assert tail == [("out_dtype", "int", 0), ("softcap", "float", 0.0), ("sinks", "Optional[Tensor]", None)], \
            (name, tail)
        assert args[-1].alias_info is None or not args[-1].alias_info.is_write, "%s writes sinks" % name


def test_op_tail():
    torch, fa4 = _fa4()
    from fa4 import _ops
    s = torch.zeros(4)
    ds = torch.ones(2, 2)
    assert _ops.op_tail(None, None) == ()
    assert _ops.op_tail((ds, None, None, torch.float16), None) == (ds, None, None, 2)
    assert _ops.op_tail(None, (30.0, None)) == (None, None, None, 0, 30.0, None)
    assert _ops.op_tail((None, ds, None, None), (0.0, s)) == (None, ds, None, 0, 0.0, s)


def test_softcap_sinks_fake_shapes_and_checks():
    """softcap and sinks through the registered ops on meta tensors, in each
    forward and its out= form: the shapes are those without them, and the
    fake implementations raise what eager calls raise."""
    torch, fa4 = _fa4()
    q, k = _meta(torch, 2, 17, 8, 128), _meta(torch, 2, 33, 2, 128)
    s = _meta(torch, 8, dtype=torch.float32)
    cu = _meta(torch, 3, dtype=torch.int32)
    pages, table = _meta(torch, 10, 16, 2, 128), _meta(torch, 2, 5, dtype=torch.int32)
    lens = _meta(torch, 2, dtype=torch.int32)
    kw = dict(softcap=30.0, sinks=s)
    o, lse = fa4.attention(q, k, k, causal=True, return_lse=True, **kw)
    assert o.shape == (2, 17, 8, 128) and lse.shape == (2, 8, 17)
    out = _meta(torch, 2, 17, 8, 128)
    assert fa4.attention(q, k, k, out=out, sinks=s) is out
    o, lse = fa4.attention_varlen(q[0], k[0], k[0], cu, cu, 17, 33, return_lse=True, **kw)
    assert o.shape == (17, 8, 128) and lse.shape == (8, 17)
    out = _meta(torch, 17, 8, 128)
    assert fa4.attention_varlen(q[0], k[0], k[0], cu, cu, 17, 33, out=out, softcap=5.0) is out
    o, lse = fa4.attention_with_kvcache(q[:, :1], pages, pages, lens, table, return_lse=True, **kw)
    assert o.shape == (2, 1, 8, 128) and lse.shape == (2, 8, 1)
    out = _meta(torch, 2, 17, 8, 128)
    assert fa4.attention_with_kvcache(q, k, k, 20, out=out, **kw) is out
    f8 = getattr(torch, "float8_e4m3fn", None)
    if f8 is not None:
        o = fa4.attention(q.to(f8), k.to(f8), k.to(f8), out_dtype=torch.float16, **kw)
        assert o.dtype == torch.float16 and o.shape == (2, 17, 8, 128)
    for call in (lambda **a: fa4.attention(q, k, k, **a),
                 lambda **a: fa4.attention_varlen(q[0], k[0], k[0], cu, cu, 17, 33, **a),
                 lambda **a: fa4.attention_with_kvcache(q[:, :1], pages, pages, lens, table, **a),
                 lambda **a: torch.ops.fa4.attention(q, k, k, False, -1, -1, 0.0, False, **a)):
        for args, exc, text in [(dict(softcap=-3.0), ValueError, "softcap=-3.0"),
                                (dict(softcap=float("nan")), ValueError, "softcap=nan"),
                                (dict(sinks=_meta(torch, 4, dtype=torch.float32)), ValueError,
                                 "sinks must be a contiguous tensor of shape (8,) [heads_q] (got (4,))"),
                                (dict(sinks=_meta(torch, 8)), TypeError,
                                 "sinks must be a torch.float32 tensor (got torch.bfloat16)")]:
            try:
                call(**args)
            except exc as e:
                assert text in str(e), (text, str(e))
            else:
                raise AssertionError("%s not raised (%s)" % (exc.__name__, text))


def test_softcap_sinks_compile_fullgraph():
    """torch.compile(fullgraph=True) traces softcap and sinks into each op:
    the graph's fa4 calls end with the cap and the sinks (an input of the
    graph, read at run time); a call with neither ends as before."""
    torch, fa4 = _fa4()
    tails = []

    def backend(gm, inputs):
        for node in gm.graph.nodes:
            if node.op == "call_function" and str(node.target).startswith("fa4."):
                tails.append((str(node.target), node.args[-2],
                              None if node.args[-1] is None else getattr(node.args[-1], "op", node.args[-1])))
        return gm.forward

    def f(q, k, pages, cu, lens, table, s):
        o = fa4.attention(q, k, k, causal=True, softcap=30.0, sinks=s)
        o2 = fa4.attention_varlen(q[0], k[0], k[0], cu, cu, 17, 33, causal=True, sinks=s)
        o3 = fa4.attention_with_kvcache(q[:, :1], pages, pages, lens, table, softcap=5.0)
        o4 = fa4.attention(q, k, k)
        return o * 2, o2, o3, o4
    q, k = _meta(torch, 2, 17, 8, 128), _meta(torch, 2, 33, 2, 128)
    cu, lens = _meta(torch, 3, dtype=torch.int32), _meta(torch, 2, dtype=torch.int32)
    table, pages = _meta(torch, 2, 5, dtype=torch.int32), _meta(torch, 10, 16, 2, 128)
    s = _meta(torch, 8, dtype=torch.float32)
    torch.compile(f, fullgraph=True, backend=backend)(q, k, pages, cu, lens, table, s)
    assert tails == [("fa4.attention", 30.0, "placeholder"), ("fa4.attention_varlen", 0.0, "placeholder"),
                     ("fa4.attention_with_kvcache", 5.0, None), ("fa4.attention", 0.0, False)], tails
    o, o2, o3, _ = torch.compile(f, fullgraph=True, backend="aot_eager")(q, k, pages, cu, lens, table, s)
    assert o.shape == q.shape and o2.shape == (17, 8, 128) and o3.shape == (2, 1, 8, 128)
