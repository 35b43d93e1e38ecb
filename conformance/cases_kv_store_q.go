package conformance

import "github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"

// kvStoreQBuild builds llama's attention layer from the Q, K and V matmuls to the cache
// stores, in llama's graph order: Q's matmul, its reshape to heads and ROPE Q; V's matmul
// and reshape; K's matmul, reshape and ROPE K; K's view and store; V's view and store (with
// flash attention). Both ropes read the same positions (and frequency factors); one position
// per token (not the multi-section modes). The roped
// Q and both caches are compared. The library moves ROPE Q down past V's and K's matmuls
// to fuse it with the store (sched/sink.go).
func kvStoreQBuild(b *Builder, s kvStoreSpec) ggml.Tensor {
	l, ctx := b.L, b.Ctx
	const nq, nEmbd, kvSize = 4, 48, 10
	hd, nkv, nTok := s.hd, s.nkv, s.nTok
	x := b.New("attn_norm", f32, nEmbd, nTok)
	wq := b.New("wq", f32, nEmbd, hd*nq)
	wk := b.New("wk", f32, nEmbd, hd*nkv)
	wv := b.New("wv", f32, nEmbd, hd*nkv)
	args := ropeExtArgs(int(hd), s.mode, s.p)
	var freq ggml.Tensor
	if s.p.ff {
		freq = b.New("freq_factors", f32, hd/2)
		b.Init(freq, Uniform(0.9, 1.1))
	}
	pos := b.Index("pos", 1000, nTok)
	rope := func(t ggml.Tensor) ggml.Tensor { return l.RopeExt(ctx, t, pos, freq, args) }
	q := rope(l.Reshape4D(ctx, l.MulMat(ctx, wq, x), hd, nq, nTok, 1))
	b.Expand(q)
	b.Check(q)
	v := l.Reshape4D(ctx, l.MulMat(ctx, wv, x), hd, nkv, nTok, 1)
	b.Expand(v)
	k := rope(l.Reshape4D(ctx, l.MulMat(ctx, wk, x), hd, nkv, nTok, 1))
	kc, cells := kvCache(b, s, "cache_k", kvSize)
	kIdx := b.New("k_idxs", s.idx, nTok)
	b.Init(kIdx, DistinctRows(cells, int(nTok)))
	storeK := l.SetRows(ctx, kc, l.View2D(ctx, k, hd*nkv, nTok, k.Nb()[2], 0), kIdx)
	b.Expand(storeK)
	b.Check(storeK)
	vIdx := b.New("v_idxs", s.idx, nTok)
	b.Init(vIdx, DistinctRows(cells, int(nTok)))
	vc, _ := kvCache(b, s, "cache_v", kvSize)
	return l.SetRows(ctx, vc, l.View2D(ctx, v, hd*nkv, nTok, v.Nb()[2], 0), vIdx)
}
