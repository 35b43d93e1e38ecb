package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// ---------------------------------------------------------------------------------------
// ROPE (ggml_rope_ext): src0 [head_dim, n_head, n_tokens, ne3] F32 or F16 (dst of the same
// type), positions I32 [n_tokens] drawn from [0, 1000), optional F32 frequency factors
// [n_dims/2] from [0.9, 1.1]. YaRN cases use n_ctx_orig 512, beta_fast 32, beta_slow 1.

// ropeParams are the scalar parameters of a ROPE case.
type ropeParams struct {
	fb, fs, ef, af float32 // freq_base, freq_scale, ext_factor, attn_factor
	ff             bool    // with frequency factors (src2)
}

// Two parameter sets for the shape and layout variants: plain RoPE, and everything at once
// (freq_base 1e6, linear scaling 0.5, YaRN with attn_factor 1.2, frequency factors).
var (
	ropePlain = ropeParams{fb: 10000, fs: 1, ef: 0, af: 1}
	ropeAll   = ropeParams{fb: 1e6, fs: 0.5, ef: 1, af: 1.2, ff: true}
)

type ropeSpec struct {
	t     tensor.Type
	ne    [4]int64
	nDims int
	mode  int
	p     ropeParams
	// variant: "" plain; "view": src0 a view of a tensor 2x, 4x, 3x larger in dims 0..2
	// (test_rope's v); "qkv_q" / "qkv_k": src0 the Q (offset 0) or K (offset past Q) heads
	// of a fused QKV tensor through ggml_view_3d (rows strided, as llama's Q/K views);
	// "inplace": ggml_rope_ext_inplace; "ctx_shift": ggml_rope_ext_inplace on a view of the
	// second layer of a K-cache like tensor with position deltas in [-1000, 1000) (llama's
	// context shift); "rope_inplace": ggml_rope_inplace with ggml's default parameters;
	// "half": src0 the second half of rows twice as long (test_rope's v=2);
	// "inplace_view": in place on a view of a tensor 2x, 4x, 3x larger in dims 0..2.
	variant string
	// nOffs is the first rotated dim (ggml_rope_set_offset), 0 by default.
	nOffs int
}

// ropeMulti reports whether mode takes four positions per token (ggml_rope_multi).
func ropeMulti(mode int) bool { return mode&tensor.RopeMrope != 0 }

// ropeMultiArgs returns the n_dims and sections ggml_rope_multi gets in test_rope for its
// n_dims: VISION rotates the whole row of 2*(n_dims/2) in two sections of n_dims/4, the
// others n_dims in three sections of n_dims/3.
func ropeMultiArgs(nDims, mode int) (int, [4]int32) {
	if mode == tensor.RopeVision {
		return nDims / 2, [4]int32{int32(nDims / 4), int32(nDims / 4), 0, 0}
	}
	return nDims, [4]int32{int32(nDims / 3), int32(nDims / 3), int32(nDims / 3), 0}
}

func ropeModeName(mode int) string {
	switch mode {
	case tensor.RopeNormal:
		return "normal"
	case tensor.RopeNeox:
		return "neox"
	case tensor.RopeMrope:
		return "mrope"
	case tensor.RopeVision:
		return "vision"
	case tensor.RopeImrope:
		return "imrope"
	}
	return fmt.Sprintf("mode%d", mode)
}

func ropeCases() []*Case {
	var cs []*Case
	types := []tensor.Type{f32, f16}
	modes := []int{tensor.RopeNormal, tensor.RopeNeox}

	// The parameter grid on llama-7B (NORMAL) and falcon-40B (NEOX) like shapes.
	for _, t := range types {
		for _, mode := range modes {
			ne, nd := shape(128, 32, 2, 1), 128
			if mode == tensor.RopeNeox {
				ne, nd = shape(64, 8, 3, 1), 64
			}
			for _, fb := range []float32{10000, 1e6} {
				for _, fs := range []float32{1, 0.5} {
					for _, ef := range []float32{0, 1} {
						for _, af := range []float32{1, 1.2} {
							for _, ff := range []bool{false, true} {
								p := ropeParams{fb: fb, fs: fs, ef: ef, af: af, ff: ff}
								cs = append(cs, ropeCase(ropeSpec{t: t, ne: ne, nDims: nd, mode: mode, p: p}))
							}
						}
					}
				}
			}
		}
	}

	// Shapes: odd head counts, partial rotation (n_dims < ne0, incl. ne0/2), small rows,
	// many tokens, ne3 > 1.
	type shp struct {
		ne    [4]int64
		nDims int
	}
	shapes := []shp{
		{shape(64, 71, 2, 1), 64},
		{shape(128, 5, 3, 1), 128},
		{shape(80, 32, 2, 1), 20},
		{shape(80, 32, 4, 1), 32},
		{shape(64, 8, 3, 1), 32},
		{shape(128, 3, 2, 1), 64},
		{shape(10, 5, 3, 1), 10},
		{shape(16, 3, 33, 1), 16},
		{shape(32, 3, 5, 2), 32},
	}
	for _, t := range types {
		for _, mode := range modes {
			for _, s := range shapes {
				for _, p := range []ropeParams{ropePlain, ropeAll} {
					cs = append(cs, ropeCase(ropeSpec{t: t, ne: s.ne, nDims: s.nDims, mode: mode, p: p}))
				}
			}
		}
	}

	// Layouts: non-contiguous views, in place, llama's Q/K views and context shift.
	for _, t := range types {
		for _, mode := range modes {
			for _, p := range []ropeParams{ropePlain, ropeAll} {
				cs = append(cs,
					ropeCase(ropeSpec{t: t, ne: shape(64, 8, 3, 1), nDims: 64, mode: mode, p: p, variant: "view"}),
					ropeCase(ropeSpec{t: t, ne: shape(64, 8, 3, 1), nDims: 32, mode: mode, p: p, variant: "view"}),
					ropeCase(ropeSpec{t: t, ne: shape(64, 4, 5, 1), nDims: 64, mode: mode, p: p, variant: "qkv_q"}),
					ropeCase(ropeSpec{t: t, ne: shape(64, 2, 5, 1), nDims: 64, mode: mode, p: p, variant: "qkv_k"}),
					ropeCase(ropeSpec{t: t, ne: shape(64, 8, 3, 1), nDims: 64, mode: mode, p: p, variant: "inplace"}),
					ropeCase(ropeSpec{t: t, ne: shape(32, 2, 16, 1), nDims: 32, mode: mode, p: p, variant: "ctx_shift"}),
				)
			}
			cs = append(cs, ropeCase(ropeSpec{t: t, ne: shape(64, 5, 3, 1), nDims: 64, mode: mode, p: ropePlain, variant: "rope_inplace"}))
		}
	}

	// Multi-section modes (qwen2-vl, qwen3-vl: MROPE, IMROPE; their ViT: VISION), test_rope's
	// shapes with fewer heads: all rotated, a part rotated, in sections of n_dims/3 (VISION:
	// n_dims/4, n_dims/4 over the whole row).
	multi := []struct {
		ne    [4]int64
		nDims int
		mode  int
	}{
		{shape(128, 4, 2, 1), 128, tensor.RopeMrope},
		{shape(128, 3, 2, 1), 20, tensor.RopeMrope},
		{shape(128, 4, 2, 1), 128, tensor.RopeImrope},
		{shape(128, 3, 2, 1), 32, tensor.RopeImrope},
		{shape(16, 2, 33, 1), 16, tensor.RopeImrope},
		{shape(80, 4, 2, 1), 80, tensor.RopeVision},
	}
	for _, t := range types {
		for _, m := range multi {
			for _, p := range []ropeParams{ropePlain, ropeAll} {
				cs = append(cs, ropeCase(ropeSpec{t: t, ne: m.ne, nDims: m.nDims, mode: m.mode, p: p}))
			}
		}
	}

	// Every mode: test_rope's views (v=1: a part of a larger tensor; v=2, "half": the second
	// half of rows twice as long, as clip's 2-D RoPE), in place (also on a view), ne3 > 1.
	allModes := []int{tensor.RopeNormal, tensor.RopeNeox, tensor.RopeMrope, tensor.RopeImrope, tensor.RopeVision}
	for _, t := range types {
		for _, mode := range allModes {
			for _, p := range []ropeParams{ropePlain, ropeAll} {
				cs = append(cs, ropeCase(ropeSpec{t: t, ne: shape(36, 4, 17, 1), nDims: 36, mode: mode, p: p, variant: "half"}))
			}
			if mode == tensor.RopeNormal || mode == tensor.RopeNeox {
				continue // their views and in-place forms are above
			}
			cs = append(cs,
				ropeCase(ropeSpec{t: t, ne: shape(64, 4, 2, 1), nDims: 64, mode: mode, p: ropeAll, variant: "view"}),
				ropeCase(ropeSpec{t: t, ne: shape(64, 4, 2, 1), nDims: 64, mode: mode, p: ropeAll, variant: "inplace"}),
				ropeCase(ropeSpec{t: t, ne: shape(64, 4, 2, 3), nDims: 64, mode: mode, p: ropeAll, variant: "inplace_view"}),
			)
		}
	}

	// The rotated dims at an offset (ggml_rope_set_offset), all modes but VISION.
	for _, t := range types {
		for _, mode := range allModes[:4] {
			nd := 32
			if ropeMulti(mode) {
				nd = 24
			}
			for _, ff := range []bool{false, true} {
				p := ropeParams{fb: 10000, fs: 1.4245, ef: 0.7465, af: 1.4245, ff: ff}
				cs = append(cs, ropeCase(ropeSpec{t: t, ne: shape(128, 3, 2, 1), nDims: nd, mode: mode, p: p, nOffs: 32}))
			}
		}
		cs = append(cs, ropeCase(ropeSpec{t: t, ne: shape(128, 3, 2, 1), nDims: 32, mode: tensor.RopeNeox, p: ropeAll, nOffs: 32, variant: "inplace"}))
	}
	return cs
}

func ropeExtArgs(nDims, mode int, p ropeParams) ggml.RopeExt {
	return ggml.RopeExt{NDims: nDims, Mode: mode, NCtxOrig: 512, FreqBase: p.fb, FreqScale: p.fs,
		ExtFactor: p.ef, AttnFactor: p.af, BetaFast: 32, BetaSlow: 1}
}

func ropeCase(s ropeSpec) *Case {
	ff := 0
	if s.p.ff {
		ff = 1
	}
	name := fmt.Sprintf("ROPE(type=%s,ne=%s,n_dims=%d,mode=%d", s.t, fmtNe(s.ne), s.nDims, s.mode)
	if s.variant != "rope_inplace" {
		name += fmt.Sprintf(",fb=%g,fs=%g,ef=%g,af=%g,ff=%d", s.p.fb, s.p.fs, s.p.ef, s.p.af, ff)
	}
	if s.nOffs != 0 {
		name += fmt.Sprintf(",n_offs=%d", s.nOffs)
	}
	if s.variant != "" {
		name += "," + s.variant
	}
	name += ")"
	return &Case{Name: name, Op: "ROPE", Types: s.t.String() + " " + ropeModeName(s.mode),
		MaxNMSE: DefaultThreshold(s.t == f16),
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			ne, es := s.ne, uint64(s.t.Size())
			var a ggml.Tensor
			switch s.variant {
			case "view", "inplace_view":
				x := b.New("a_base", s.t, 2*ne[0], 4*ne[1], 3*ne[2], ne[3])
				a = b.View4D(x, ne, 0)
				if s.variant == "inplace_view" {
					b.Check(x)
				}
			case "half":
				x := b.New("a_base", s.t, 2*ne[0], ne[1], ne[2], ne[3])
				a = b.View4D(x, ne, uint64(ne[0])*es)
			case "qkv_q", "qkv_k":
				// Fused QKV rows of n_tokens: Q heads, then K heads, then V heads (V as many as
				// K). qkv_q ropes 4 Q heads next to 2+2 K/V heads; qkv_k ropes ne1 K heads that
				// follow 4 Q heads.
				hd, nq, nkv, off := ne[0], ne[1], int64(2), uint64(0)
				if s.variant == "qkv_k" {
					nq, nkv, off = 4, ne[1], uint64(4*ne[0])*es
				}
				qkv := b.New("qkv", s.t, hd*(nq+2*nkv), ne[2])
				a = l.View3D(ctx, qkv, hd, ne[1], ne[2], uint64(hd)*es, qkv.Nb()[1], off)
				b.Check(qkv)
			case "ctx_shift":
				// K cache of two layers, [head_dim*n_head_kv, kv_size, n_layer]; the view is
				// layer 1 as [head_dim, n_head_kv, kv_size].
				cache := b.New("k_cache", s.t, ne[0]*ne[1], ne[2], 2)
				nb := cache.Nb()
				a = l.View3D(ctx, cache, ne[0], ne[1], ne[2], uint64(ne[0])*es, nb[1], nb[2])
				b.Check(cache)
			default:
				a = b.New("a", s.t, ne[:]...)
			}
			npos := ne[2]
			if ropeMulti(s.mode) {
				npos *= 4
			}
			var pos ggml.Tensor
			if s.variant == "ctx_shift" {
				pos = b.New("shift", tensor.I32, npos)
				b.Init(pos, IntRange(-1000, 1000))
			} else {
				pos = b.Index("pos", 1000, npos)
			}
			var freq ggml.Tensor
			if s.p.ff {
				freq = b.New("freq", f32, int64(s.nDims/2))
				b.Init(freq, Uniform(0.9, 1.1))
			}
			args := ropeExtArgs(s.nDims, s.mode, s.p)
			inplace := s.variant == "inplace" || s.variant == "inplace_view" || s.variant == "ctx_shift"
			var r ggml.Tensor
			switch {
			case s.variant == "rope_inplace":
				r = l.RopeInplace(ctx, a, pos, s.nDims, s.mode)
			case ropeMulti(s.mode):
				nd, sec := ropeMultiArgs(s.nDims, s.mode)
				args.NDims = nd
				if inplace {
					r = l.RopeMultiInplace(ctx, a, pos, freq, sec, args)
				} else {
					r = l.RopeMulti(ctx, a, pos, freq, sec, args)
				}
			case inplace:
				r = l.RopeExtInplace(ctx, a, pos, freq, args)
			default:
				r = l.RopeExt(ctx, a, pos, freq, args)
			}
			if s.nOffs != 0 {
				r = l.RopeSetOffset(r, s.nOffs)
			}
			return r
		}}
}
