/*
** sm100/scales.cuh -- per-token Q/K scales (FA4_TOKEN_SCALES): the warp
** that stages them in shared memory and the softmax's side of their
** barriers.  The score of query row i and key j is S_ij * q_scale[i] *
** k_scale[j] (times the softmax scale): q_scale folds into the row's
** scale, k_scale multiplies each column of S as the softmax reads it.
**
** Warp 14 (idle otherwise) loads them with plain loads, lane l taking
** rows / keys l, l + 32, ..: QSCALE (the CTA's BM query rows) once, on
** QS_FULL, then per key block j the BN key scales into KSCALE buffer
** j % FA4_KSCALE_BUFS (one buffer per K tile the ring holds at once: the
** seeds' k_scale bufs) on KS_FULL, after KS_EMPTY says the softmax is
** done with the block that used it before.  Their own barriers, not the
** ring's: the ring's slots are released by the MMA once S is computed,
** before the softmax has read it.  Each lane arrives after its stores
** (count 32; arrive releases, the softmax's wait acquires); every
** softmax thread of the CTA arrives on KS_EMPTY after its last read
** (count 128 x FA4_Q_TILES).  Rows and keys past the tensor's end get 0
** (masked, or never stored).  A CTA of a pair stages its own: its
** softmax rows see every key of the block.
** Without FA4_TOKEN_SCALES every helper is a no-op and the scale is 1.
** UNVERIFIED ON HARDWARE (see kernel.cuh).
*/
#ifndef FA4_SM100_SCALES_CUH
#define FA4_SM100_SCALES_CUH

#if FA4_TOKEN_SCALES
static_assert(FA4_SMEM_QSCALE_SIZE == FA4_BM * 4
              && FA4_SMEM_KSCALE_SIZE == FA4_KSCALE_BUFS * FA4_BN * 4
              && FA4_SMEM_KSCALE_OFF == FA4_SMEM_QSCALE_OFF + FA4_SMEM_QSCALE_SIZE
              && FA4_SMEM_QSCALE_OFF % 16 == 0,
              "QSCALE: a float per query row; KSCALE: FA4_KSCALE_BUFS buffers of BN floats");
static_assert(FA4_KSCALE_BUFS == (FA4_FUSED_KV ? (FA4_KV_SLOTS + 1) / 2 : FA4_KV_SLOTS),
              "one key-scale buffer per K tile in flight");
#else
static_assert(FA4_SMEM_QSCALE_SIZE == 0 && FA4_SMEM_KSCALE_SIZE == 0 && FA4_KSCALE_BUFS == 0,
              "no per-token scales: empty QSCALE / KSCALE");
#endif

/* The KSCALE buffer, barriers and phase of key block J. */
FA4_DEV float *ks_buf(const sm100_ctx &c, int j)
{
    return (float *)(c.base + FA4_SMEM_KSCALE_OFF) + (j % (FA4_KSCALE_BUFS ? FA4_KSCALE_BUFS : 1))
           * FA4_BN;
}
FA4_DEV u32 ks_full(const sm100_ctx &c, int j)
{ return bar_addr(c, BAR_KS_FULL + j % (FA4_KSCALE_BUFS ? FA4_KSCALE_BUFS : 1)); }
FA4_DEV u32 ks_empty(const sm100_ctx &c, int j)
{ return bar_addr(c, BAR_KS_EMPTY + j % (FA4_KSCALE_BUFS ? FA4_KSCALE_BUFS : 1)); }
FA4_DEV u32 ks_phase(int j) { return (u32)(j / (FA4_KSCALE_BUFS ? FA4_KSCALE_BUFS : 1)) & 1u; }

/* Warp 14: the CTA's query scales, then each key block's key scales. */
FA4_DEV void scale_warp(const fa4_params &p, const sm100_ctx &c, int lane)
{
#if FA4_TOKEN_SCALES
    const float *qs = (const float *)p.q_token_scale
                      + ((long long)c.batch * p.heads_q + c.head) * p.seqlen_q;
    const float *ks = (const float *)p.k_token_scale
                      + ((long long)c.batch * p.heads_kv + c.kv_head) * p.seqlen_k;
    float *q_dst = (float *)(c.base + FA4_SMEM_QSCALE_OFF);
    int r, j;

    if (c.n == 0)
        return;
    for (r = lane; r < FA4_BM; r += 32)
        q_dst[r] = c.m0 + r < p.seqlen_q ? qs[c.m0 + r] : 0.0f;
    mbarrier_arrive(bar_addr(c, BAR_QS_FULL));
    for (j = 0; j < c.n; j++) {
        const int key0 = (c.n_begin + j) * FA4_BN;
        float *k_dst = ks_buf(c, j);
        mbarrier_wait(ks_empty(c, j), ks_phase(j) ^ 1u);
        for (r = lane; r < FA4_BN; r += 32)
            k_dst[r] = key0 + r < p.seqlen_k ? ks[key0 + r] : 0.0f;
        mbarrier_arrive(ks_full(c, j));
    }
#else
    (void)p; (void)c; (void)lane;
#endif
}

/* The query scale of row R of tile I (waits for QSCALE); 1 without
** scales or when the CTA sees no key (nothing is staged then). */
FA4_DEV float q_token_scale(const sm100_ctx &c, int i, int r)
{
#if FA4_TOKEN_SCALES
    if (c.n == 0)
        return 1.0f;
    mbarrier_wait(bar_addr(c, BAR_QS_FULL), 0);
    return ((const float *)(c.base + FA4_SMEM_QSCALE_OFF))[i * 128 + r];
#else
    (void)c; (void)i; (void)r;
    return 1.0f;
#endif
}

/* Key block J's key scales, once staged (NULL without scales).  Every
** softmax thread waits for every block, seen or not, so that its
** KS_EMPTY arrival always counts toward this block's phase. */
FA4_DEV const float *k_token_scales(const sm100_ctx &c, int j)
{
#if FA4_TOKEN_SCALES
    mbarrier_wait(ks_full(c, j), ks_phase(j));
    return ks_buf(c, j);
#else
    (void)c; (void)j;
    return 0;
#endif
}

/* This thread is done with key block J's key scales. */
FA4_DEV void release_k_token_scales(const sm100_ctx &c, int j)
{
#if FA4_TOKEN_SCALES
    mbarrier_arrive(ks_empty(c, j));
#else
    (void)c; (void)j;
#endif
}

/* Columns COL0 .. COL0 + 15 of a row of S (as read from TMEM) times
** their key scales KS[COL0 ..]: the broadcast reads every thread of the
** warpgroup makes alike. */
FA4_DEV void scale_keys(u32 v[16], const float *ks, int col0)
{
#if FA4_TOKEN_SCALES
    int e;
#pragma unroll
    for (e = 0; e < 16; e++)
        v[e] = __float_as_uint(__uint_as_float(v[e]) * ks[col0 + e]);
#else
    (void)v; (void)ks; (void)col0;
#endif
}

#endif
