package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// ---------------------------------------------------------------------------------------
// KV_STORE: llama's store of a token batch into the KV cache, as llama-kv-cache.cpp builds
// it (cpy_k, cpy_v): K and V are views of the heads of a fused QKV tensor [hd*(nq+2nkv),
// n_tok]; K [hd, nkv, n_tok] is roped, viewed as rows [hd*nkv, n_tok] and stored with
// SET_ROWS into the K cache [hd*nkv, kv_size] at distinct cells; with flash attention V's
// rows are viewed the same way and stored into the V cache right after (V's view of the
// QKV tensor is computed before K's rope, as llama expands it first); without, V is made
// contiguous and stored transposed, one element per cache row. Both caches are compared
// whole. The library fuses the rope and the stores (ops/rope_set_rows.go): kvStoreSpec's
// fused names the fusion row the plan must apply (TestKVStoreFuses).

// kvStoreSpec describes a KV_STORE case.
type kvStoreSpec struct {
	hd, nkv, nTok int64
	cache, idx    tensor.Type // both caches' type; both index tensors' type
	mode          int         // RoPE mode
	p             ropeParams
	// v: "" K only; "fa": V's rows stored after K's (flash attention); "trans": V stored
	// transposed (no flash attention).
	v string
	// q builds llama's whole pattern (kvStoreQBuild): ROPE Q before the V and K matmuls.
	q bool
	// streams > 1 gives the caches that many streams, [hd*nkv, kv_size, streams], stored
	// through a RESHAPE of each to [hd*nkv, kv_size*streams] (llama's caches of several
	// sequences: kvCache), a view node before each SET_ROWS.
	streams int64
	// fused is the fusion row the library's plan applies to the K store.
	fused string
}

func (s kvStoreSpec) name() string {
	ff := 0
	if s.p.ff {
		ff = 1
	}
	n := fmt.Sprintf("KV_STORE(hd=%d,n_head_kv=%d,n_tok=%d,cache=%s,idx=%s,mode=%d,fb=%g,fs=%g,ef=%g,af=%g,ff=%d",
		s.hd, s.nkv, s.nTok, s.cache, s.idx, s.mode, s.p.fb, s.p.fs, s.p.ef, s.p.af, ff)
	if s.v != "" {
		n += ",v=" + s.v
	}
	if s.q {
		n += ",rope_q"
	}
	if s.streams > 1 {
		n += fmt.Sprintf(",streams=%d", s.streams)
	}
	return n + ")"
}

// kvCache returns the cache named name of a KV_STORE case (rows of hd*nkv elements,
// kvSize cells a stream), the tensor its SET_ROWS stores into (the cache, or its RESHAPE
// over every stream's cells) and the cells there.
func kvCache(b *Builder, s kvStoreSpec, name string, kvSize int64) (dest ggml.Tensor, cells int) {
	if s.streams <= 1 {
		return b.New(name, s.cache, s.hd*s.nkv, kvSize), int(kvSize)
	}
	c := b.New(name, s.cache, s.hd*s.nkv, kvSize, s.streams)
	return b.L.Reshape4D(b.Ctx, c, s.hd*s.nkv, kvSize*s.streams, 1, 1), int(kvSize * s.streams)
}

func kvStoreSpecs() []kvStoreSpec {
	const kv, kvv, qkvv = "rope+set_rows", "rope+set_rows+set_rows", "rope+rope+set_rows+set_rows"
	return []kvStoreSpec{
		// decode (one token) and prompt (several), F16 and F32 caches, NORMAL and NEOX, I64
		// and I32 indices, with and without frequency factors and YaRN
		{hd: 32, nkv: 2, nTok: 1, cache: f16, idx: tensor.I64, mode: tensor.RopeNeox, p: ropePlain, fused: kv},
		{hd: 32, nkv: 2, nTok: 5, cache: f32, idx: tensor.I32, mode: tensor.RopeNormal, p: ropeAll, fused: kv},
		{hd: 32, nkv: 2, nTok: 1, cache: f16, idx: tensor.I64, mode: tensor.RopeNeox, p: ropePlain, v: "fa", fused: kvv},
		{hd: 32, nkv: 2, nTok: 1, cache: f32, idx: tensor.I64, mode: tensor.RopeNormal, p: ropeAll, v: "fa", fused: kvv},
		{hd: 64, nkv: 2, nTok: 6, cache: f16, idx: tensor.I64, mode: tensor.RopeNormal, p: ropeAll, v: "fa", fused: kvv},
		{hd: 16, nkv: 4, nTok: 7, cache: f32, idx: tensor.I32, mode: tensor.RopeNeox, p: ropePlain, v: "fa", fused: kvv},
		{hd: 32, nkv: 2, nTok: 5, cache: f16, idx: tensor.I64, mode: tensor.RopeMrope, p: ropePlain, v: "fa", fused: kvv},
		// llama's layer from Q's matmul on: ROPE Q moves down to join the K and V store
		{hd: 32, nkv: 2, nTok: 1, cache: f16, idx: tensor.I64, mode: tensor.RopeNeox, p: ropePlain, v: "fa", q: true, fused: qkvv},
		{hd: 32, nkv: 2, nTok: 1, cache: f32, idx: tensor.I64, mode: tensor.RopeNormal, p: ropeAll, v: "fa", q: true, fused: qkvv},
		{hd: 16, nkv: 2, nTok: 6, cache: f16, idx: tensor.I64, mode: tensor.RopeNormal, p: ropePlain, v: "fa", q: true, fused: qkvv},
		{hd: 32, nkv: 1, nTok: 5, cache: f32, idx: tensor.I32, mode: tensor.RopeNeox, p: ropeAll, v: "fa", q: true, fused: qkvv},
		// caches of several streams (several sequences): the rows' forms for a reshape
		// before each store
		{hd: 32, nkv: 2, nTok: 3, cache: f16, idx: tensor.I64, mode: tensor.RopeNormal, p: ropePlain, v: "fa", q: true, streams: 3, fused: qkvv},
		{hd: 16, nkv: 2, nTok: 4, cache: f32, idx: tensor.I64, mode: tensor.RopeNeox, p: ropeAll, v: "fa", streams: 2, fused: kvv},
		{hd: 32, nkv: 2, nTok: 2, cache: f16, idx: tensor.I32, mode: tensor.RopeNeox, p: ropePlain, streams: 2, fused: kv},
		// V transposed: only K's store fuses
		{hd: 32, nkv: 2, nTok: 3, cache: f16, idx: tensor.I64, mode: tensor.RopeNeox, p: ropePlain, v: "trans", fused: kv},
	}
}

func kvStoreCases() []*Case {
	var cs []*Case
	for _, s := range kvStoreSpecs() {
		cs = append(cs, kvStoreCase(s))
	}
	return cs
}

func kvStoreCase(s kvStoreSpec) *Case {
	return &Case{Name: s.name(), Op: "KV_STORE", Types: fmt.Sprintf("f32->%s[%s]", s.cache, s.idx),
		MaxNMSE: DefaultThreshold(s.cache == f16),
		Build: func(b *Builder) ggml.Tensor {
			if s.q {
				return kvStoreQBuild(b, s)
			}
			l, ctx := b.L, b.Ctx
			const nq, kvSize = 4, 10
			hd, nkv, nTok := s.hd, s.nkv, s.nTok
			es := uint64(4)
			qkv := b.New("qkv", f32, hd*(nq+2*nkv), nTok)
			row := qkv.Nb()[1]
			var v ggml.Tensor
			if s.v != "" {
				v = l.View3D(ctx, qkv, hd, nkv, nTok, uint64(hd)*es, row, uint64(hd*(nq+nkv))*es)
				b.Expand(v)
			}
			k := l.View3D(ctx, qkv, hd, nkv, nTok, uint64(hd)*es, row, uint64(hd*nq)*es)
			args := ropeExtArgs(int(hd), s.mode, s.p)
			var freq ggml.Tensor
			if s.p.ff {
				freq = b.New("freq_factors", f32, hd/2)
				b.Init(freq, Uniform(0.9, 1.1))
			}
			if s.mode&tensor.RopeMrope != 0 {
				pos := b.Index("pos", 1000, 4*nTok)
				sec := [4]int32{int32(hd / 6), int32(hd / 6), int32(hd/2 - 2*(hd/6)), 0}
				k = l.RopeMulti(ctx, k, pos, freq, sec, args)
			} else {
				k = l.RopeExt(ctx, k, b.Index("pos", 1000, nTok), freq, args)
			}
			kc, cells := kvCache(b, s, "cache_k", kvSize)
			kIdx := b.New("k_idxs", s.idx, nTok)
			b.Init(kIdx, DistinctRows(cells, int(nTok)))
			storeK := l.SetRows(ctx, kc, l.View2D(ctx, k, hd*nkv, nTok, k.Nb()[2], 0), kIdx)
			if s.v == "" {
				return storeK
			}
			b.Expand(storeK)
			b.Check(storeK)
			if s.v == "fa" {
				vIdx := b.New("v_idxs", s.idx, nTok)
				b.Init(vIdx, DistinctRows(cells, int(nTok)))
				vc, _ := kvCache(b, s, "cache_v", kvSize)
				return l.SetRows(ctx, vc, l.View2D(ctx, v, hd*nkv, nTok, v.Nb()[2], 0), vIdx)
			}
			// transposed: element d of token t goes to cache row d*kv_size + cell(t)
			n := hd * nkv * nTok
			vIdx := b.New("v_idxs", s.idx, n)
			b.Init(vIdx, DistinctRows(int(hd*nkv*kvSize), int(n)))
			vc := b.New("cache_v", s.cache, kvSize, hd*nkv)
			vCur := l.Reshape4D(ctx, l.Cont(ctx, v), 1, n, 1, 1)
			return l.SetRows(ctx, l.Reshape4D(ctx, vc, 1, kvSize*hd*nkv, 1, 1), vCur, vIdx)
		}}
}
