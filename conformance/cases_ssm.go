package conformance

import (
	"fmt"
	"math"

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

// ---------------------------------------------------------------------------------------
// GRAPH(gdn+cpy): a delta-net layer's GATED_DELTA_NET of one snapshot, the VIEW of its
// final state and its CPY into a view of the layer's states cache at row head (llama's
// build_recurrent_attn), which the fusion row gated_delta_net+cpy computes in one dispatch
// (ops/gated_delta_net.go). The attention's output view, and the whole cache (the rows
// the copy leaves as they were included), are checked.

// gdnStoreCase builds the graph for state rows of size, heads heads, tokens, seqs
// sequences and a cache of cells rows, pad elements longer than a state, whose rows
// head.. take the final states.
func gdnStoreCase(size, heads, tokens, seqs, cells, head, pad int64) *Case {
	name := fmt.Sprintf("GRAPH(gdn+cpy,S=%d,H=%d,T=%d,n=%d,cells=%d,head=%d,pad=%d)", size, heads, tokens, seqs, cells, head, pad)
	unit := float32(math.Sqrt(3 / float64(size)))
	return &Case{Name: name, Op: "GRAPH", Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			q, k := b.New("q", f32, size, heads, tokens, seqs), b.New("k", f32, size, heads, tokens, seqs)
			b.Init(q, Uniform(-unit, unit))
			b.Init(k, Uniform(-unit, unit))
			v := b.New("v", f32, size, heads, tokens, seqs)
			gate := b.New("g", f32, 1, heads, tokens, seqs)
			b.Init(gate, Uniform(-1, 0))
			beta := b.New("beta", f32, 1, heads, tokens, seqs)
			b.Init(beta, Uniform(0, 1))
			state := b.New("state", f32, size, size, heads, seqs)
			b.Init(state, Uniform(-0.5, 0.5))
			out := l.GatedDeltaNet(ctx, q, k, v, gate, beta, state, 1)
			row := uint64(size) * 4
			attn := l.View4D(ctx, out, size, heads, tokens, seqs, row, row*uint64(heads), row*uint64(heads*tokens), 0)
			final := l.View4D(ctx, out, size, size, heads, seqs, row, row*uint64(size), row*uint64(size*heads), uint64(size*heads*tokens*seqs)*4)
			cache := b.New("cache_s", f32, size*size*heads+pad, cells)
			cnb := cache.Nb()
			store := l.Cpy(ctx, final, l.View2D(ctx, cache, size*size*heads, seqs, cnb[1], uint64(head)*cnb[1]))
			b.Expand(store)
			b.Check(cache)
			return attn
		}}
}

// gdnStoreCases are the GRAPH(gdn+cpy) cases: Qwen3.5's decode (heads of 128, one and two
// sequences), a prompt, rows of 40 at the cache's end, and cache rows longer than a state.
func gdnStoreCases() []*Case {
	return []*Case{
		gdnStoreCase(128, 4, 1, 1, 4, 0, 0),
		gdnStoreCase(128, 4, 1, 2, 5, 2, 0),
		gdnStoreCase(128, 2, 6, 1, 3, 1, 0),
		gdnStoreCase(40, 3, 1, 3, 3, 0, 0),
		gdnStoreCase(40, 3, 1, 2, 4, 1, 24),
	}
}
