package conformance

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// FLASH_ATTN_EXT, modelled on test-backend-ops' test_flash_attn_ext: Q F32 [hsk, nb,
// nh*nr2, nr3], K and V views of twice-as-long caches (as llama's KV cache), an F16 mask
// [kv, nb, 1, nr3] broadcast over heads, sinks in [-10, 10], the scale 1/sqrt(hsk). The
// CPU backend multiplies Q rounded to F16 (F16 K) or quantized to 8 bits (quantized K)
// and may accumulate V in F16; the device computes in f32: threshold MulMatMaxNMSE (5e-4,
// test-backend-ops' for FLASH_ATTN_EXT). n_q 1 and 3 take the split (decoding) path, 32
// the prompt path.

// faSpec is one flash attention case.
type faSpec struct {
	hsk, hsv   int64
	nh         int64
	nr2, nr3   int64 // query heads per KV head; sequences
	kv, nb     int64 // KV positions; queries
	mask       bool
	maskBcast  bool // mask [kv, nb, 1, 1] broadcast over sequences too
	fullMasked bool // the mask hides every position from query 0
	sinks      bool
	maxBias    float32
	softcap    float32
	prec       int32
	typeK      tensor.Type
	typeV      tensor.Type
	causal     bool  // query i sees positions <= kv - nb + i (llama's causal mask)
	window     int64 // > 0: and only the window positions before that (sliding window)
	deadFrom   int64 // > 0: queries from this one on see no position
	permute    bool  // Q, K and V created permuted (0, 2, 1, 3)
	vOfK       bool  // V a view of K (DeepSeek's MLA)
}

func faCases() []*Case {
	var cs []*Case
	base := faSpec{nh: 4, nr2: 1, nr3: 1, kv: 113, mask: true, prec: ggml.PrecF32, typeK: f16, typeV: f16}
	with := func(f func(s *faSpec)) faSpec {
		s := base
		f(&s)
		return s
	}
	// Head sizes, decoding and prompt.
	for _, hs := range []int64{40, 64, 72, 80, 96, 112, 128, 192, 256} {
		for _, nb := range []int64{1, 32} {
			cs = append(cs, faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nb = hs, hs, nb })))
		}
	}
	cs = append(cs, faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nb = 192, 128, 3 })))
	// DeepSeek's MLA: D 576, Dv 512, V a view of K; one KV head for many query heads.
	for _, nb := range []int64{1, 3} {
		cs = append(cs, faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nh, s.nr2, s.nb, s.vOfK = 576, 512, 1, 4, nb, true })))
	}
	// GQA, long KV, the decoding and prompt paths.
	for _, hs := range []int64{64, 128} {
		for _, nb := range []int64{1, 3, 32} {
			cs = append(cs, faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nr2, s.kv, s.nb = hs, hs, 4, 512, nb })))
		}
	}
	// Sequences (nr3), no mask, mask broadcast over sequences, a fully masked row.
	for _, nb := range []int64{1, 32} {
		cs = append(cs,
			faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nr3, s.nb = 64, 64, 3, nb })),
			faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nr2, s.nb, s.mask = 64, 64, 4, nb, false })),
			faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nr3, s.nb, s.maskBcast = 64, 64, 2, nb, true })),
			faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.kv, s.nb, s.fullMasked = 64, 64, 512, nb, true })),
			faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.kv, s.nb, s.fullMasked, s.sinks = 64, 64, 512, nb, true, true })),
		)
	}
	// Sinks, ALiBi, softcap, the default precision, permuted operands.
	for _, nb := range []int64{1, 3, 32} {
		cs = append(cs,
			faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nr2, s.kv, s.nb, s.sinks = 64, 64, 4, 512, nb, true })),
			faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nh, s.nb, s.maxBias = 64, 64, 5, nb, 8 })),
			faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nb, s.softcap = 128, 128, nb, 10 })),
			faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nb, s.prec = 128, 128, nb, ggml.PrecDefault })),
			faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nr2, s.kv, s.nb, s.permute = 64, 64, 4, 512, nb, true })),
		)
	}
	// K and V types.
	for _, ty := range []tensor.Type{f32, tensor.Q8_0, tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1} {
		for _, nb := range []int64{1, 32} {
			cs = append(cs, faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nr2, s.kv, s.nb, s.typeK, s.typeV = 64, 64, 4, 512, nb, ty, ty })))
		}
		cs = append(cs, faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nb, s.typeK, s.typeV = 72, 72, 3, ty, ty })))
	}
	cs = append(cs, faTileCases(with)...)
	// Decoding over a long KV sequence: more splits than the reduction's workgroup.
	cs = append(cs, faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nh, s.kv, s.nb, s.sinks, s.causal = 64, 64, 1, 4096, 2, true, true })))
	cs = append(cs,
		faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nb, s.typeK, s.typeV = 128, 128, 1, tensor.Q8_0, f16 })),
		faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nb, s.typeK, s.typeV = 128, 128, 32, f16, tensor.Q4_0 })),
	)
	return cs
}

// faPad rounds a head size up to whole blocks of t (as test-backend-ops pads).
func faPad(hs int64, t tensor.Type) int64 {
	b := int64(max(t.BlockElems(), 1))
	return (hs + b - 1) / b * b
}

func faCase(s faSpec) *Case {
	hsk, hsv := faPad(s.hsk, s.typeK), faPad(s.hsv, s.typeV)
	name := fmt.Sprintf("FLASH_ATTN_EXT(hsk=%d,hsv=%d,nh=%d,nr23=[%d,%d],kv=%d,nb=%d,mask=%v,sinks=%v,max_bias=%g,logit_softcap=%g,prec=%d,type_K=%s,type_V=%s",
		hsk, hsv, s.nh, s.nr2, s.nr3, s.kv, s.nb, s.mask, s.sinks, s.maxBias, s.softcap, s.prec, s.typeK, s.typeV)
	if s.permute {
		name += ",permute=[0,2,1,3]"
	}
	if s.maskBcast {
		name += ",mask_bcast"
	}
	if s.fullMasked {
		name += ",row0_masked"
	}
	if s.vOfK {
		name += ",v_view_of_k"
	}
	if s.causal {
		name += ",causal"
	}
	if s.window > 0 {
		name += fmt.Sprintf(",window=%d", s.window)
	}
	if s.deadFrom > 0 {
		name += fmt.Sprintf(",masked_from=%d", s.deadFrom)
	}
	name += ")"
	types := fmt.Sprintf("f32, K %s, V %s", s.typeK, s.typeV)
	return &Case{Name: name, Op: "FLASH_ATTN_EXT", Types: types, MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			perm := [4]int{0, 1, 2, 3}
			if s.permute {
				perm = [4]int{0, 2, 1, 3}
			}
			// create makes [ne0, ne1, ne2, ne3] (permuted by perm); as a view of rows twice
			// as many when view.
			create := func(name string, t tensor.Type, ne [4]int64, view bool) ggml.Tensor {
				var np [4]int64
				for i := range ne {
					np[perm[i]] = ne[i]
				}
				var x ggml.Tensor
				if view {
					x = b.New(name+"_cache", t, np[0], 2*np[1], np[2], np[3])
					x = b.View4D(x, np, 0)
				} else {
					x = b.New(name, t, np[:]...)
				}
				if s.permute {
					x = b.Permute(x, perm)
				}
				return x
			}
			q := create("q", f32, [4]int64{hsk, s.nb, s.nh * s.nr2, s.nr3}, false)
			k := create("k", s.typeK, [4]int64{hsk, s.kv, s.nh, s.nr3}, true)
			var v ggml.Tensor
			if s.vOfK {
				nb := k.Nb()
				v = l.View4D(ctx, k, hsv, s.kv, s.nh, s.nr3, nb[1], nb[2], nb[3], 0)
			} else {
				v = create("v", s.typeV, [4]int64{hsv, s.kv, s.nh, s.nr3}, true)
			}
			var m ggml.Tensor
			if s.mask {
				n3 := s.nr3
				if s.maskBcast {
					n3 = 1
				}
				m = b.New("m", f16, s.kv, s.nb, 1, n3)
				b.Init(m, faMaskShaped(s))
			}
			out := l.FlashAttnExt(ctx, q, k, v, m, float32(1/math.Sqrt(float64(hsk))), s.maxBias, s.softcap)
			if s.sinks {
				sk := b.New("s", f32, s.nh*s.nr2)
				b.Init(sk, Uniform(-10, 10))
				l.FlashAttnAddSinks(out, sk)
			}
			l.PrecSetAcc(out, s.prec)
			return out
		}}
}

// faMask fills [kv, nb, ...] masks: uniform in [-1, 1) with about one position in eight
// -inf; with row0, every position of query 0 is -inf (its result is 0, or only the sink).
func faMask(kv, nb int64, row0 bool) InitFunc {
	return func(r *rand.Rand, n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = -1 + 2*r.Float32()
			if r.Intn(8) == 0 || row0 && (int64(i)/kv)%nb == 0 {
				v[i] = float32(math.Inf(-1))
			}
		}
		return v
	}
}

// faMaskShaped is faMask with the spec's causal mask, sliding window and fully masked
// queries on top.
func faMaskShaped(s faSpec) InitFunc {
	base := faMask(s.kv, s.nb, s.fullMasked)
	return func(r *rand.Rand, n int) []float32 {
		v := base(r, n)
		for i := range v {
			pos, q := int64(i)%s.kv, (int64(i)/s.kv)%s.nb
			last := s.kv - s.nb + q // the query's position
			if s.causal && pos > last || s.window > 0 && pos <= last-s.window || s.deadFrom > 0 && q >= s.deadFrom {
				v[i] = float32(math.Inf(-1))
			}
		}
		return v
	}
}

// faTileCases exercise the edges of the prompt kernel's tiling (rows per workgroup 16 or
// 32, tiles of 32 or 64 positions): query counts and KV lengths not multiples of the tiles,
// query rows of several heads in one workgroup (GQA 1, 4, 8), head sizes with several K
// chunks or V column groups of unequal use, and masks that hide whole tiles (causal, sliding
// window) or whole workgroups of rows; KV sequences long enough to be split.
func faTileCases(with func(f func(s *faSpec)) faSpec) []*Case {
	return []*Case{
		faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nh, s.kv, s.nb, s.causal = 64, 64, 2, 200, 33, true })),
		faCase(with(func(s *faSpec) {
			s.hsk, s.hsv, s.nh, s.nr2, s.kv, s.nb, s.causal, s.window = 128, 128, 1, 4, 300, 45, true, 64
		})),
		faCase(with(func(s *faSpec) {
			s.hsk, s.hsv, s.nh, s.nr2, s.kv, s.nb, s.deadFrom, s.sinks = 80, 80, 2, 2, 150, 64, 24, true
		})),
		faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nh, s.nr2, s.kv, s.nb, s.deadFrom = 64, 64, 1, 1, 70, 40, 8 })),
		faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nh, s.nr2, s.kv, s.nb, s.causal = 256, 256, 1, 8, 130, 12, true })),
		faCase(with(func(s *faSpec) {
			s.hsk, s.hsv, s.nh, s.nr2, s.kv, s.nb, s.maxBias, s.causal = 128, 128, 1, 8, 77, 17, 8, true
		})),
		faCase(with(func(s *faSpec) { s.hsk, s.hsv, s.nh, s.nr2, s.kv, s.nb, s.mask = 40, 40, 3, 1, 65, 9, false })),
		faCase(with(func(s *faSpec) {
			s.hsk, s.hsv, s.nh, s.nr2, s.kv, s.nb, s.softcap, s.sinks = 192, 128, 1, 4, 96, 20, 10, true
		})),
		faCase(with(func(s *faSpec) {
			s.hsk, s.hsv, s.nh, s.nr2, s.kv, s.nb, s.typeK, s.typeV, s.causal = 112, 112, 1, 2, 90, 24, tensor.Q4_0, tensor.Q8_0, true
		})),
		// Few queries over a long KV sequence: the prompt kernel splits it over workgroups.
		faCase(with(func(s *faSpec) {
			s.hsk, s.hsv, s.nh, s.nr2, s.kv, s.nb, s.sinks, s.causal = 64, 64, 1, 2, 2048, 16, true, true
		})),
		faCase(with(func(s *faSpec) {
			s.hsk, s.hsv, s.nh, s.nr2, s.kv, s.nb, s.deadFrom, s.window = 128, 128, 2, 1, 1500, 12, 6, 300
		})),
	}
}

// faChainCases check FLASH_ATTN_EXT against the attention chain it replaces, computed by
// the CPU backend without flash attention (as llama builds it with flash attention off):
// KQ = MUL_MAT(K, Q), SOFT_MAX_EXT(KQ, mask, scale), KQV = MUL_MAT(V transposed, KQ),
// then PERMUTE + CONT to FLASH_ATTN_EXT's [hsv, heads, queries] layout. Grouped-query
// heads (4 query heads per KV head), F16 K and V, decoding and prompt lengths.
func faChainCases() []*Case {
	var cs []*Case
	for _, nb := range []int64{1, 7, 32} {
		cs = append(cs, faChainCase(64, 8, 2, 256, nb))
	}
	return cs
}

func faChainCase(hs, nh, nhKV, kv, nb int64) *Case {
	name := fmt.Sprintf("FLASH_ATTN_EXT(hs=%d,nh=%d,nh_kv=%d,kv=%d,nb=%d,vs_chain)", hs, nh, nhKV, kv, nb)
	scale := float32(1 / math.Sqrt(float64(hs)))
	leaves := func(b *Builder) (q, k, v, m ggml.Tensor) {
		q = b.New("q", f32, hs, nb, nh)
		k = b.New("k", f16, hs, kv, nhKV)
		v = b.New("v", f16, hs, kv, nhKV)
		m = b.New("m", f16, kv, nb)
		b.Init(m, faMask(kv, nb, false))
		return q, k, v, m
	}
	return &Case{Name: name, Op: "FLASH_ATTN_EXT", Types: "f32, K f16, V f16 (vs chain)", MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			q, k, v, m := leaves(b)
			out := b.L.FlashAttnExt(b.Ctx, q, k, v, m, scale, 0, 0)
			b.L.PrecSetAcc(out, ggml.PrecF32)
			return out
		},
		RefBuild: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			q, k, v, m := leaves(b)
			kq := l.SoftMaxExt(ctx, l.MulMat(ctx, k, q), m, scale, 0) // [kv, nb, nh]
			vt := l.Cont(ctx, l.Transpose(ctx, v))                    // [kv, hs, nh_kv]
			kqv := l.MulMat(ctx, vt, kq)                              // [hs, nb, nh]
			return l.Cont(ctx, l.Permute(ctx, kqv, 0, 2, 1, 3))       // [hs, nh, nb]
		}}
}
