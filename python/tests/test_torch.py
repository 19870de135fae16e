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
