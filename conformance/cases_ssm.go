package conformance

import (
	"fmt"
	"math"
	"strings"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The recurrent layers of hybrid models: SSM_CONV (Mamba's and the delta-net layers'
// causal convolution, LFM2's short convolution), SSM_SCAN (Mamba, Mamba-2: Falcon-H1,
// Granite 4 hybrids) and GATED_DELTA_NET (Qwen3.5, Qwen3-Next, Kimi Linear), as
// test_ssm_conv, test_ssm_scan and test_gated_delta_net; and RWKV_WKV6, GATED_LINEAR_ATTN
// and RWKV_WKV7 (RWKV-6, RWKV-7), as test_rwkv_wkv6, test_gla and test_rwkv_wkv7.
func ssmCases() []*Case {
	var cs []*Case
	for _, c := range []struct {
		width, channels, tokens, seqs int64
		view                          bool
	}{
		{4, 1536, 1, 1, false}, {4, 1536, 1, 4, false}, {4, 1536, 7, 2, false},
		{3, 640, 1, 3, false}, {3, 640, 32, 1, false}, {4, 96, 5, 2, true},
	} {
		cs = append(cs, ssmConvCase(c.width, c.channels, c.tokens, c.seqs, c.view))
	}
	for _, c := range []ssmScanSpec{
		{state: 16, dim: 1, heads: 1024, groups: 1, tokens: 1, seqs: 1, snaps: 1, mamba1: true},
		{state: 16, dim: 1, heads: 1024, groups: 1, tokens: 32, seqs: 4, snaps: 1, mamba1: true},
		{state: 128, dim: 64, heads: 16, groups: 2, tokens: 1, seqs: 2, snaps: 1},
		{state: 128, dim: 64, heads: 16, groups: 2, tokens: 32, seqs: 4, snaps: 1},
		{state: 64, dim: 16, heads: 8, groups: 1, tokens: 5, seqs: 2, snaps: 3},
		{state: 40, dim: 3, heads: 6, groups: 3, tokens: 4, seqs: 3, snaps: 1},
		// test_ssm_scan's: Falcon-H1's 256 states, x, B and C views of one tensor, long
		// prompts, snapshots of fewer tokens than the batch
		{state: 256, dim: 64, heads: 8, groups: 2, tokens: 32, seqs: 4, snaps: 1},
		{state: 128, dim: 128, heads: 4, groups: 4, tokens: 16, seqs: 2, snaps: 1, overlap: true},
		{state: 128, dim: 64, heads: 16, groups: 2, tokens: 65, seqs: 2, snaps: 1},
		{state: 128, dim: 64, heads: 16, groups: 2, tokens: 4, seqs: 2, snaps: 4},
		{state: 128, dim: 64, heads: 16, groups: 2, tokens: 8, seqs: 2, snaps: 3},
	} {
		cs = append(cs, ssmScanCase(c))
	}
	for _, g := range []gdnSpec{
		{size: 128, heads: 4, tokens: 1, seqs: 1, snaps: 1},
		{size: 128, heads: 4, tokens: 1, seqs: 3, snaps: 1},
		{size: 128, heads: 8, kHeads: 2, tokens: 1, seqs: 2, snaps: 1},
		{size: 128, heads: 4, tokens: 17, seqs: 2, snaps: 1},
		{size: 64, heads: 2, tokens: 64, seqs: 1, snaps: 1},
		{size: 128, heads: 2, tokens: 5, seqs: 2, snaps: 3},
		{size: 128, heads: 4, tokens: 9, seqs: 1, snaps: 1, kda: true},
		{size: 64, heads: 4, tokens: 1, seqs: 2, snaps: 1, kda: true},
		{size: 16, heads: 3, tokens: 6, seqs: 2, snaps: 2},
		{size: 40, heads: 2, tokens: 4, seqs: 2, snaps: 1, kda: true},
		{size: 256, heads: 2, tokens: 3, seqs: 1, snaps: 1},
		{size: 128, heads: 4, tokens: 4, seqs: 2, snaps: 1, views: true},
		{size: 64, heads: 4, kHeads: 2, tokens: 3, seqs: 4, qSeqs: 2, snaps: 1},
	} {
		cs = append(cs, gdnCase(g))
	}
	// test_gated_delta_net's own cases: q and k through L2_NORM, gates down to -20, v in
	// [-0.3, 5], permuted operands, V heads repeating K's, long prompts, snapshots of
	// fewer tokens than the batch.
	for _, g := range []gdnOpSpec{
		{32, 128, 1, 1, 1, false, false, 1}, {32, 16, 1, 1, 1, true, true, 1}, {32, 16, 1, 1, 1, false, true, 1},
		{16, 64, 1, 2, 1, false, false, 1}, {4, 64, 4, 2, 1, false, false, 1}, {8, 32, 4, 2, 2, false, false, 1},
		{4, 64, 4, 2, 1, true, false, 1}, {4, 64, 4, 1, 1, true, false, 1}, {4, 16, 4, 2, 1, true, true, 1},
		{8, 32, 4, 2, 2, false, true, 1}, {4, 64, 256, 1, 1, false, false, 1}, {4, 64, 127, 2, 1, false, false, 1},
		{4, 64, 33, 1, 1, false, true, 1}, {4, 16, 2, 1, 1, false, false, 2}, {8, 128, 4, 1, 1, false, false, 4},
		{8, 32, 4, 2, 2, false, true, 4}, {4, 32, 8, 1, 1, false, false, 3}, {4, 64, 16, 2, 1, false, false, 4},
	} {
		cs = append(cs, gdnOpCase(g))
	}
	// RWKV-6, gated linear attention and RWKV-7 as test_rwkv_wkv6, test_gla and
	// test_rwkv_wkv7 build them (heads of 64, 32 heads), and heads of 16 and 40 but for
	// RWKV-7, whose CPU kernel steps over a head in SIMD steps (GGML_F32_STEP, 64 floats
	// with AVX-512) with no tail, and writes past its result there.
	for _, op := range []string{"RWKV_WKV6", "GATED_LINEAR_ATTN", "RWKV_WKV7"} {
		for _, w := range [][4]int64{{32, 64, 1, 1}, {32, 64, 1, 4}, {32, 64, 32, 1}, {32, 64, 32, 4}, {32, 64, 128, 4}, {3, 16, 5, 2}, {2, 40, 3, 3}} {
			if op == "RWKV_WKV7" && w[1]%64 != 0 {
				continue
			}
			cs = append(cs, wkvCase(op, w[0], w[1], w[2], w[3]))
		}
	}
	cs = append(cs, wkvCase("RWKV_WKV7", 2, 128, 3, 2))
	return cs
}

// wkvCase builds op over heads of size elements, seqTokens tokens of each of seqs
// sequences, as test-backend-ops does (RWKV-7's a and b through L2_NORM).
func wkvCase(op string, heads, size, seqTokens, seqs int64) *Case {
	name := fmt.Sprintf("%s(heads=%d,size=%d,seq_tokens=%d,seqs=%d)", op, heads, size, seqTokens, seqs)
	return &Case{Name: name, Op: op, Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			n := seqTokens * seqs
			vec := func(name string) ggml.Tensor { return b.New(name, f32, size, heads, n) }
			state := func() ggml.Tensor { return b.New("state", f32, size*size*heads, seqs) }
			switch op {
			case "RWKV_WKV6":
				r, k, v := vec("r"), vec("k"), vec("v")
				tf, td := b.New("tf", f32, size, heads), vec("td")
				return b.L.RWKVWKV6(b.Ctx, k, v, r, tf, td, state())
			case "GATED_LINEAR_ATTN":
				q, k, v, g := vec("q"), vec("k"), vec("v"), vec("g")
				return b.L.GatedLinearAttn(b.Ctx, k, v, q, g, state(), float32(1/math.Sqrt(float64(size))))
			}
			r, w, k, v, a, bv := vec("r"), vec("w"), vec("k"), vec("v"), vec("a"), vec("b")
			a, bv = b.L.L2Norm(b.Ctx, a, 1e-7), b.L.L2Norm(b.Ctx, bv, 1e-7)
			return b.L.RWKVWKV7(b.Ctx, r, w, k, v, a, bv, state())
		}}
}

// gdnOpSpec shapes a case built as test-backend-ops' test_gated_delta_net builds it.
type gdnOpSpec struct {
	heads, size, tokens, seqs int64
	vRepeat                   int64
	permuted, kda             bool
	snaps                     int64
}

func gdnOpCase(g gdnOpSpec) *Case {
	name := fmt.Sprintf("GATED_DELTA_NET(heads=%d,size=%d,tokens=%d,seqs=%d,v_repeat=%d,permuted=%v,kda=%v,K=%d)",
		g.heads, g.size, g.tokens, g.seqs, g.vRepeat, g.permuted, g.kda, g.snaps)
	return &Case{Name: name, Op: "GATED_DELTA_NET", Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			hv := g.heads * g.vRepeat
			operand := func(name string, heads int64) ggml.Tensor {
				if g.permuted { // dims 1 and 2 swapped in memory
					return b.Permute(b.New(name, f32, g.size, g.tokens, heads, g.seqs), [4]int{0, 2, 1, 3})
				}
				return b.New(name, f32, g.size, heads, g.tokens, g.seqs)
			}
			q, k, v := operand("q", g.heads), operand("k", g.heads), operand("v", hv)
			b.Init(v, Uniform(-0.3, 5))
			gw := int64(1)
			if g.kda {
				gw = g.size
			}
			gate := b.New("g", f32, gw, hv, g.tokens, g.seqs)
			b.Init(gate, Uniform(-20, -1e-4))
			beta := b.New("beta", f32, 1, hv, g.tokens, g.seqs)
			b.Init(beta, Uniform(0, 1))
			state := b.New("state", f32, g.size, g.size, hv, g.seqs)
			q, k = b.L.L2Norm(b.Ctx, q, 1e-6), b.L.L2Norm(b.Ctx, k, 1e-6)
			return b.L.GatedDeltaNet(b.Ctx, q, k, v, gate, beta, state, g.snaps)
		}}
}

// ssmConvCase convolves seqs sequences of tokens new inputs of channels channels (after
// width - 1 earlier ones) by kernels of width; with view the sequences' windows are a
// view with a gap between sequences (the CPU backend takes only contiguous rows).
func ssmConvCase(width, channels, tokens, seqs int64, view bool) *Case {
	name := fmt.Sprintf("SSM_CONV(d_conv=%d,d_inner=%d,n_t=%d,n_s=%d", width, channels, tokens, seqs)
	if view {
		name += ",view"
	}
	name += ")"
	return &Case{Name: name, Op: "SSM_CONV", Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			var sx ggml.Tensor
			if view {
				x := b.New("sx", f32, width-1+tokens, channels+3, seqs)
				sx = b.View4D(x, shape(width-1+tokens, channels, seqs), uint64(width-1+tokens)*4)
			} else {
				sx = b.New("sx", f32, width-1+tokens, channels, seqs)
			}
			c := b.New("c", f32, width, channels)
			return b.L.SSMConv(b.Ctx, sx, c)
		}}
}

// ssmScanSpec shapes an SSM_SCAN case: states of state elements, dim x heads rows in
// groups of B and C, tokens, seqs sequences (their states rows of a tensor of seqs + 1,
// picked in random order), snaps snapshots, mamba1 a decay per state element.
type ssmScanSpec struct {
	state, dim, heads, groups, tokens, seqs, snaps int64
	mamba1, overlap                                bool // overlap: x, B and C views of one tensor
}

func ssmScanCase(c ssmScanSpec) *Case {
	name := fmt.Sprintf("SSM_SCAN(d_state=%d,head_dim=%d,n_head=%d,n_group=%d,n_t=%d,n_s=%d,K=%d", c.state, c.dim, c.heads, c.groups, c.tokens, c.seqs, c.snaps)
	an := int64(1)
	if c.mamba1 {
		name += ",mamba1"
		an = c.state
	}
	if c.overlap {
		name += ",overlap"
	}
	name += ")"
	return &Case{Name: name, Op: "SSM_SCAN", Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			s := b.New("s", f32, c.state, c.dim, c.heads, c.seqs+1)
			var x, bm, cm ggml.Tensor
			if c.overlap { // as test_ssm_scan's xbc_overlap (dim == state)
				xbc := b.New("xbc", f32, c.state, c.heads, c.tokens, 2*c.seqs)
				nb := xbc.Nb()
				x = b.L.View4D(b.Ctx, xbc, c.dim, c.heads, c.tokens, c.seqs, nb[1], nb[2], nb[3], nb[3])
				bm = b.L.View4D(b.Ctx, xbc, c.state, c.groups, c.tokens, c.seqs, nb[1], nb[2], nb[3], 0)
				cm = b.L.View4D(b.Ctx, xbc, c.state, c.groups, c.tokens, c.seqs, nb[1], nb[2], nb[3], 2*nb[3])
			} else {
				x = b.New("x", f32, c.dim, c.heads, c.tokens, c.seqs)
				bm = b.New("B", f32, c.state, c.groups, c.tokens, c.seqs)
				cm = b.New("C", f32, c.state, c.groups, c.tokens, c.seqs)
			}
			dt := b.New("dt", f32, c.heads, c.tokens, c.seqs)
			a := b.New("A", f32, an, c.heads)
			b.Init(a, Uniform(-1, -0.5)) // decaying, as -exp(A_log)
			ids := b.New("ids", tensor.I32, c.seqs)
			b.Init(ids, DistinctRows(int(c.seqs+1), int(c.seqs)))
			return b.L.SSMScan(b.Ctx, s, x, dt, a, bm, cm, ids, c.snaps)
		}}
}

// gdnSpec shapes a GATED_DELTA_NET case: state rows of size, heads value heads (kHeads
// of q and k, 0: as many), tokens, seqs sequences (qSeqs of q and k, 0: as many), snaps
// snapshots, kda a gate per element, views q, k and v as views into one wider tensor
// (as a model's projections are).
type gdnSpec struct {
	size, heads, kHeads, tokens, seqs, qSeqs, snaps int64
	kda, views                                      bool
}

func gdnCase(g gdnSpec) *Case {
	kh, qs := g.kHeads, g.qSeqs
	if kh == 0 {
		kh = g.heads
	}
	if qs == 0 {
		qs = g.seqs
	}
	name := fmt.Sprintf("GATED_DELTA_NET(S=%d,H=%d,Hk=%d,T=%d,n=%d,nq=%d,K=%d", g.size, g.heads, kh, g.tokens, g.seqs, qs, g.snaps)
	if g.kda {
		name += ",kda"
	}
	if g.views {
		name += ",views"
	}
	name += ")"
	// Unit-length q and k on average and a decaying gate keep the state bounded over the
	// tokens, as in the models (which normalise q and k and take g = -softplus(...) A).
	unit := float32(math.Sqrt(3 / float64(g.size)))
	return &Case{Name: name, Op: "GATED_DELTA_NET", Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			var q, k, v ggml.Tensor
			if g.views {
				// q, k and v heads side by side in one row of each token, as llama's split
				// of the convolution's output leaves them.
				w := b.New("qkv", f32, g.size*(2*kh+g.heads), g.tokens, g.seqs)
				b.Init(w, Uniform(-unit, unit))
				nb := w.Nb()
				hs := uint64(g.size) * 4
				q = b.L.View4D(b.Ctx, w, g.size, kh, g.tokens, g.seqs, hs, nb[1], nb[2], 0)
				k = b.L.View4D(b.Ctx, w, g.size, kh, g.tokens, g.seqs, hs, nb[1], nb[2], uint64(kh)*hs)
				v = b.L.View4D(b.Ctx, w, g.size, g.heads, g.tokens, g.seqs, hs, nb[1], nb[2], uint64(2*kh)*hs)
			} else {
				q = b.New("q", f32, g.size, kh, g.tokens, qs)
				k = b.New("k", f32, g.size, kh, g.tokens, qs)
				v = b.New("v", f32, g.size, g.heads, g.tokens, g.seqs)
				b.Init(q, Uniform(-unit, unit))
				b.Init(k, Uniform(-unit, unit))
			}
			gw := int64(1)
			if g.kda {
				gw = g.size
			}
			gate := b.New("g", f32, gw, g.heads, g.tokens, g.seqs)
			b.Init(gate, Uniform(-1, 0))
			beta := b.New("beta", f32, 1, g.heads, g.tokens, g.seqs)
			b.Init(beta, Uniform(0, 1))
			state := b.New("state", f32, g.size, g.size, g.heads, g.seqs)
			b.Init(state, Uniform(-0.5, 0.5))
			return b.L.GatedDeltaNet(b.Ctx, q, k, v, gate, beta, state, g.snaps)
		}}
}

// im2colCases are test_im2col's shapes (the convolutions of audio and vision encoders),
// some scaled down: 1-D and 2-D, F32 and F16 inputs and results, strides, padding and
// dilation, and an input that is a view with padded rows.
func im2colCases() []*Case {
	type ic struct {
		in, dst tensor.Type
		input   [4]int64
		kernel  [4]int64
		s, p, d [2]int32
		is2D    bool
	}
	one, zero := [2]int32{1, 0}, [2]int32{0, 0}
	var cs []*Case
	for _, c := range []ic{
		{f32, f32, shape(3000, 128), shape(3, 128, 1280), one, zero, one, false},
		{f32, f16, shape(3000, 128), shape(3, 128, 1280), one, zero, one, false},
		{f32, f32, shape(37, 5, 3), shape(4, 5), [2]int32{2, 0}, [2]int32{3, 0}, [2]int32{2, 0}, false},
		{f32, f32, shape(10, 10, 3, 1), shape(3, 3, 3, 1), [2]int32{1, 1}, [2]int32{0, 0}, [2]int32{1, 1}, true},
		{f32, f16, shape(10, 10, 3, 1), shape(3, 3, 3, 1), [2]int32{1, 1}, [2]int32{0, 0}, [2]int32{1, 1}, true},
		{f16, f16, shape(10, 10, 3, 1), shape(3, 3, 3, 1), [2]int32{1, 1}, [2]int32{0, 0}, [2]int32{1, 1}, true},
		{f32, f16, shape(12, 12, 2, 32), shape(3, 3, 2, 32), [2]int32{1, 1}, [2]int32{1, 1}, [2]int32{1, 1}, true},
		{f32, f16, shape(5, 5, 1, 32), shape(3, 4, 1, 32), [2]int32{1, 1}, [2]int32{0, 0}, [2]int32{1, 1}, true},
		{f32, f32, shape(2, 2, 1536, 729), shape(2, 2, 1536, 64), [2]int32{1, 1}, [2]int32{0, 0}, [2]int32{1, 1}, true},
		{f32, f16, shape(128, 128, 2, 1), shape(33, 34, 2, 1), [2]int32{1, 1}, [2]int32{1, 1}, [2]int32{1, 1}, true},
		{f32, f32, shape(224, 224, 3, 1), shape(14, 14, 3, 8), [2]int32{14, 14}, [2]int32{0, 0}, [2]int32{1, 1}, true},
		{f32, f32, shape(23, 19, 3, 2), shape(3, 5, 3, 1), [2]int32{2, 3}, [2]int32{2, 1}, [2]int32{2, 1}, true},
	} {
		cs = append(cs, im2colCase(c.in, c.dst, c.input, c.kernel, c.s, c.p, c.d, c.is2D, false))
	}
	cs = append(cs, im2colCase(f32, f32, shape(23, 19, 3, 2), shape(3, 5, 3, 1), [2]int32{2, 3}, [2]int32{2, 1}, [2]int32{2, 1}, true, true))
	// Whole convolutions as ggml builds them (IM2COL into F16, MUL_MAT of F16 by the F16
	// kernel, and for 2-D a permuted copy): a patch embedding, a padded 3 x 3, an audio
	// encoder's 1-D.
	for _, c := range []struct {
		input, kernel [4]int64
		s, p          int32
		is2D          bool
	}{
		{shape(56, 42, 3, 1), shape(14, 14, 3, 32), 14, 0, true},
		{shape(12, 12, 4, 2), shape(3, 3, 4, 8), 1, 1, true},
		{shape(300, 80), shape(3, 80, 64), 1, 1, false},
	} {
		c := c
		name := fmt.Sprintf("CONV(ne_input=%s,ne_kernel=%s,s=%d,p=%d,is_2D=%v)", fmtNe(c.input), fmtNe(c.kernel), c.s, c.p, c.is2D)
		cs = append(cs, &Case{Name: name, Op: "GRAPH", Types: "f32, f16 kernel", MaxNMSE: MulMatMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				x := b.New("input", f32, c.input[:]...)
				k := b.New("kernel", f16, c.kernel[:]...)
				if c.is2D {
					return b.L.Conv2D(b.Ctx, k, x, c.s, c.s, c.p, c.p, 1, 1)
				}
				return b.L.Conv1D(b.Ctx, k, x, c.s, c.p, 1)
			}})
	}
	return cs
}

func im2colCase(in, dst tensor.Type, input, kernel [4]int64, s, p, d [2]int32, is2D, view bool) *Case {
	name := fmt.Sprintf("IM2COL(type_input=%s,dst_type=%s,ne_input=%s,ne_kernel=%s,s=%v,p=%v,d=%v,is_2D=%v",
		in, dst, fmtNe(input), fmtNe(kernel), s, p, d, is2D)
	if view {
		name += ",view"
	}
	name += ")"
	max := DefaultMaxNMSE
	if dst == f16 || in == f16 {
		max = F16MaxNMSE
	}
	return &Case{Name: name, Op: "IM2COL", Types: fmt.Sprintf("%s->%s", in, dst), MaxNMSE: max,
		Build: func(b *Builder) ggml.Tensor {
			var x ggml.Tensor
			if view { // the input's channels in planes of padded rows: only the plane stride grows
				base := b.New("input_base", in, input[0], input[1]+2, input[2], input[3])
				x = b.View4D(base, input, 0)
			} else {
				x = b.New("input", in, input[:]...)
			}
			k := b.New("kernel", f16, kernel[:]...)
			return b.L.Im2col(b.Ctx, k, x, s[0], s[1], p[0], p[1], d[0], d[1], is2D, dst)
		}}
}

// poolCases are test_pool2d's and test_pool1d's: MAX and AVG, every kernel, stride and
// padding of their lists (windows wholly in the padding among them), and F16 inputs.
func poolCases() []*Case {
	var cs []*Case
	pool := func(name string, ty tensor.Type, ne [4]int64, build func(b *Builder, x ggml.Tensor) ggml.Tensor) {
		cs = append(cs, &Case{Name: name, Op: strings.SplitN(name, "(", 2)[0], Types: ty.String() + "->f32", MaxNMSE: DefaultMaxNMSE,
			Build: func(b *Builder) ggml.Tensor { return build(b, b.New("input", ty, ne[:]...)) }})
	}
	for _, op := range []int32{1, 0} {
		for _, k := range [][2]int32{{1, 1}, {1, 3}, {3, 1}, {3, 3}} {
			for _, st := range [][2]int32{{1, 1}, {1, 2}, {2, 1}, {2, 2}} {
				for _, pd := range [][2]int32{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
					k, st, pd := k, st, pd
					name := fmt.Sprintf("POOL_2D(pool_type=%d,type_input=f32,ne_input=[10,10,3,1],k=%v,s=%v,p=%v)", op, k, st, pd)
					op := op
					pool(name, f32, shape(10, 10, 3, 1), func(b *Builder, x ggml.Tensor) ggml.Tensor {
						return b.L.Pool2D(b.Ctx, x, op, k[0], k[1], st[0], st[1], float32(pd[0]), float32(pd[1]))
					})
				}
			}
		}
		for k := int32(1); k <= 3; k++ {
			for st := int32(1); st <= 3; st++ {
				for pd := int32(0); pd <= 3; pd++ {
					for _, ne := range [][4]int64{shape(10, 3, 2, 1), shape(11, 1, 3, 2), shape(128, 2, 1, 3)} {
						k, st, pd, op := k, st, pd, op
						name := fmt.Sprintf("POOL_1D(pool_type=%d,type_input=f32,ne_input=%s,k0=%d,s0=%d,p0=%d)", op, fmtNe(ne), k, st, pd)
						pool(name, f32, ne, func(b *Builder, x ggml.Tensor) ggml.Tensor { return b.L.Pool1D(b.Ctx, x, op, k, st, pd) })
					}
				}
			}
		}
		op := op
		pool(fmt.Sprintf("POOL_2D(pool_type=%d,type_input=f16,ne_input=[64,64,8,2],k=[4,4],s=[4,4],p=[0,0])", op), f16, shape(64, 64, 8, 2),
			func(b *Builder, x ggml.Tensor) ggml.Tensor { return b.L.Pool2D(b.Ctx, x, op, 4, 4, 4, 4, 0, 0) })
		pool(fmt.Sprintf("POOL_1D(pool_type=%d,type_input=f16,ne_input=[50,4,3,1],k0=3,s0=2,p0=1)", op), f16, shape(50, 4, 3, 1),
			func(b *Builder, x ggml.Tensor) ggml.Tensor { return b.L.Pool1D(b.Ctx, x, op, 3, 2, 1) })
	}
	cs = append(cs, conv2dCases()...)
	// UPSCALE as test_upscale and test_interpolate build it, where the device takes it
	// (NEAREST by whole factors; BILINEAR over dims 0 and 1): up and down, ALIGN_CORNERS,
	// rows and columns of one element, a transposed source.
	for _, u := range []struct {
		in, out [4]int64
		mode    uint32
		perm    bool
	}{
		{shape(64, 48, 3, 2), shape(128, 96, 3, 2), 0, false},
		{shape(3, 2, 2, 1), shape(9, 4, 4, 2), 0, false},
		{shape(64, 48, 3, 2), shape(128, 96, 3, 2), 1, false},
		{shape(2, 5, 7, 11), shape(5, 7, 7, 11), 1, false},
		{shape(5, 7, 11, 13), shape(2, 5, 11, 13), 1, false},
		{shape(2, 5, 7, 11), shape(5, 7, 7, 11), 1 | 1<<8, false},
		{shape(1, 4, 3, 2), shape(2, 8, 3, 2), 1 | 1<<8, false},
		{shape(4, 1, 3, 2), shape(1, 1, 3, 2), 1 | 1<<8, false},
		{shape(27, 27, 16, 1), shape(32, 32, 16, 1), 1, true},
	} {
		u := u
		name := fmt.Sprintf("UPSCALE(ne=%s,ne_out=%s,mode=%#x,perm=%v)", fmtNe(u.in), fmtNe(u.out), u.mode, u.perm)
		cs = append(cs, &Case{Name: name, Op: "UPSCALE", Types: "f32", MaxNMSE: DefaultMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				a := b.New("a", f32, u.in[:]...)
				if u.perm {
					a = b.Permute(b.New("a", f32, u.in[1], u.in[0], u.in[2], u.in[3]), [4]int{1, 0, 2, 3})
				}
				return b.L.Interpolate(b.Ctx, a, u.out[0], u.out[1], u.out[2], u.out[3], u.mode)
			}})
	}
	// ROLL as test_roll: shifts both ways in every dimension, on a permuted source too.
	for _, r := range []struct {
		s    [4]int32
		perm bool
	}{{[4]int32{3, -2, 1, -1}, false}, {[4]int32{3, -2, 1, -1}, true}, {[4]int32{-9, 4, -3, 2}, false}, {[4]int32{0, 0, 0, 0}, false}} {
		r := r
		name := fmt.Sprintf("ROLL(shift=%v,permute=%v)", r.s, r.perm)
		cs = append(cs, &Case{Name: name, Op: "ROLL", Types: "f32", MaxNMSE: DefaultMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				a := b.New("a", f32, 10, 5, 4, 3)
				if r.perm { // dims 1 and 2 swapped: rows not contiguous
					a = b.Permute(b.New("a", f32, 10, 4, 5, 3), [4]int{0, 2, 1, 3})
				}
				return b.L.Roll(b.Ctx, a, r.s[0], r.s[1], r.s[2], r.s[3])
			}})
	}
	return cs
}

// conv2dCases are a sample of test_conv_2d's and test_conv_2d_dw's: F32 and F16 kernels,
// the channel-first (CWHN) layouts ggml permutes into (depthwise: the CPU backend takes
// no others), strides, padding and dilation, kernels and inputs of one element.
func conv2dCases() []*Case {
	type cv struct {
		input, kernel          [4]int64
		s0, s1, p0, p1, d0, d1 int32
		dw                     bool
	}
	var list []cv
	for _, c := range [][4]int64{{19, 4, 4, 3}, {23, 5, 8, 3}, {16, 3, 16, 8}} { // input size, kernel size, channels in, out
		list = append(list, cv{input: shape(c[0], c[0], c[2], 2), kernel: shape(c[1], c[1], c[2], c[3]), s0: 1, s1: 1, d0: 1, d1: 1})
	}
	list = append(list,
		cv{input: shape(141, 133, 25, 2), kernel: shape(3, 11, 25, 12), s0: 3, s1: 5, p0: 5, p1: 2, d0: 2, d1: 4},
		cv{input: shape(1, 133, 1, 2), kernel: shape(1, 2, 1, 12), s0: 1, s1: 5, p0: 5, p1: 5, d0: 2, d1: 4},
		cv{input: shape(141, 1, 25, 2), kernel: shape(11, 1, 25, 1), s0: 3, s1: 5, p0: 5, p1: 5, d0: 2, d1: 4},
		cv{input: shape(19, 17, 8, 2), kernel: shape(3, 3, 8, 65), s0: 1, s1: 1, p0: 1, p1: 1, d0: 1, d1: 1},
		cv{input: shape(19, 17, 16, 3), kernel: shape(3, 3, 16, 33), s0: 2, s1: 3, p0: 4, p1: 2, d0: 2, d1: 1},
		cv{input: shape(13, 11, 16, 3), kernel: shape(1, 1, 16, 33), s0: 1, s1: 1, d0: 1, d1: 1},
		cv{input: shape(17, 34, 9, 1), kernel: shape(3, 3, 1, 9), s0: 1, s1: 1, d0: 1, d1: 1, dw: true},
		cv{input: shape(32, 8, 64, 1), kernel: shape(3, 3, 1, 64), s0: 2, s1: 2, p0: 1, p1: 1, d0: 1, d1: 1, dw: true},
		cv{input: shape(20, 21, 6, 2), kernel: shape(5, 3, 1, 6), s0: 1, s1: 2, p0: 2, p1: 1, d0: 2, d1: 2, dw: true},
	)
	var cs []*Case
	for _, c := range list {
		for _, kt := range []tensor.Type{f32, f16} {
			for _, cwhn := range []bool{false, true} {
				if (c.dw && kt == f16) || (!c.dw && cwhn) {
					continue // test_conv_2d_dw's kernels are F32; the CPU takes CWHN depthwise only
				}
				c, kt, cwhn := c, kt, cwhn
				op := "CONV_2D"
				if c.dw {
					op = "CONV_2D_DW"
				}
				name := fmt.Sprintf("%s(ne_input=%s,ne_kernel=%s,type_kernel=%s,s=[%d,%d],p=[%d,%d],d=[%d,%d],cwhn=%v)",
					op, fmtNe(c.input), fmtNe(c.kernel), kt, c.s0, c.s1, c.p0, c.p1, c.d0, c.d1, cwhn)
				cs = append(cs, &Case{Name: name, Op: op, Types: "f32, " + kt.String() + " kernel", MaxNMSE: MulMatMaxNMSE,
					Build: func(b *Builder) ggml.Tensor {
						x := b.New("input", f32, c.input[:]...)
						k := b.New("kernel", kt, c.kernel[:]...)
						if cwhn { // channels innermost in memory, permuted back to the same shapes
							x = b.Permute(b.L.Cont(b.Ctx, b.Permute(x, [4]int{1, 2, 0, 3})), [4]int{2, 0, 1, 3})
							k = b.Permute(b.L.Cont(b.Ctx, b.Permute(k, [4]int{2, 3, 1, 0})), [4]int{3, 2, 0, 1})
						}
						if c.dw {
							return b.L.Conv2DDW(b.Ctx, k, x, c.s0, c.s1, c.p0, c.p1, c.d0, c.d1)
						}
						return b.L.Conv2DDirect(b.Ctx, k, x, c.s0, c.s1, c.p0, c.p1, c.d0, c.d1)
					}})
			}
		}
	}
	return cs
}
