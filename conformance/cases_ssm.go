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
// test_ssm_conv, test_ssm_scan and test_gated_delta_net.
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
	return cs
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
	mamba1                                         bool
}

func ssmScanCase(c ssmScanSpec) *Case {
	name := fmt.Sprintf("SSM_SCAN(d_state=%d,head_dim=%d,n_head=%d,n_group=%d,n_t=%d,n_s=%d,K=%d", c.state, c.dim, c.heads, c.groups, c.tokens, c.seqs, c.snaps)
	an := int64(1)
	if c.mamba1 {
		name += ",mamba1"
		an = c.state
	}
	name += ")"
	return &Case{Name: name, Op: "SSM_SCAN", Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			s := b.New("s", f32, c.state, c.dim, c.heads, c.seqs+1)
			x := b.New("x", f32, c.dim, c.heads, c.tokens, c.seqs)
			dt := b.New("dt", f32, c.heads, c.tokens, c.seqs)
			a := b.New("A", f32, an, c.heads)
			b.Init(a, Uniform(-1, 0)) // decaying, as -exp(A_log)
			bm := b.New("B", f32, c.state, c.groups, c.tokens, c.seqs)
			cm := b.New("C", f32, c.state, c.groups, c.tokens, c.seqs)
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
