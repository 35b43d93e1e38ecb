package conformance

import (
	"fmt"
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// Chains: each repetition reads the previous one's result, as a model's decode graph
// does, so that no backend can overlap the repetitions (ggml-vulkan leaves the barrier
// out between nodes that do not depend on each other; every backend must keep it here).
// A chain's time per repetition is what one such node costs inside a graph: its kernel
// and the barrier and launch before it. The tiny ADD is the floor of a dispatch.

// perfChainCases: the floor (ADD and SCALE of 2048 floats; SCALE of 2^20 floats, many
// workgroups), a norm of a 1B's width, the square mat-vecs of the 1B (2048) and 8B
// (4096) attention with weights beyond the L2 cache, and a decoding token's attention
// over the short caches of a benchmark's tg128 and over longer ones (head 64 with 32/8
// and 32/4 heads, head 128 with 32/8), and a decoding token's router of a mixture of
// experts.
func perfChainCases() []*PerfCase {
	cs := []*PerfCase{perfChainAdd(2048), perfChainScale(2048), perfChainScale(1 << 20), perfChainRMSNorm(2048)}
	for _, kv := range []int64{256, 1024} {
		cs = append(cs, perfChainFlashAttn(64, 32, 8, kv), perfChainFlashAttn(64, 32, 4, kv), perfChainFlashAttn(128, 32, 8, kv))
	}
	cs = append(cs, perfChainFlashAttn(128, 32, 8, 4096))
	cs = append(cs, perfChainMoERouter(128, 8), perfChainMoERouter(32, 4))
	for _, ta := range []tensor.Type{tensor.F16, tensor.Q4_0, tensor.Q4_K} {
		for _, k := range []int64{2048, 4096} {
			cs = append(cs, perfChainMulMat(ta, k))
		}
	}
	return cs
}

// perfChainAdd: x = x + y over ne floats.
func perfChainAdd(ne int64) *PerfCase {
	return &PerfCase{
		Name: fmt.Sprintf("ADD(type=f32,ne=%s,chain)", fmtNe(shape(ne, 1))),
		Op:   "ADD",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			x := b.New("x", f32, ne)
			y := b.New("y", f32, ne)
			return func() ggml.Tensor {
				x = b.L.Add(b.Ctx, x, y)
				return x
			}
		},
	}
}

// perfChainScale: x = 0.5 x over ne floats (an op no backend fuses with the next).
func perfChainScale(ne int64) *PerfCase {
	return &PerfCase{
		Name: fmt.Sprintf("SCALE(type=f32,ne=%s,chain)", fmtNe(shape(ne, 1))),
		Op:   "SCALE",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			x := b.New("x", f32, ne)
			return func() ggml.Tensor {
				x = b.L.Scale(b.Ctx, x, 0.5)
				return x
			}
		},
	}
}

// perfChainRMSNorm: x = rms_norm(x) over ne floats.
func perfChainRMSNorm(ne int64) *PerfCase {
	return &PerfCase{
		Name: fmt.Sprintf("RMS_NORM(type=f32,ne=%s,chain)", fmtNe(shape(ne, 1))),
		Op:   "RMS_NORM",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			x := b.New("x", f32, ne)
			return func() ggml.Tensor {
				x = b.L.RMSNorm(b.Ctx, x, 1e-5)
				return x
			}
		},
	}
}

// perfChainMulMat: x = W_c x with k x k weights of type ta taken in turn from copies
// holding perfColdBytes (as perfMulMatCold's), one column.
func perfChainMulMat(ta tensor.Type, k int64) *PerfCase {
	return &PerfCase{
		Name: fmt.Sprintf("MUL_MAT(type_a=%s,type_b=f32,m=%d,n=1,k=%d,weights=cold,chain)", ta, k, k),
		Op:   "MUL_MAT",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			copies := coldCopies(ta, k, k, 1)
			w := b.copies("w", ta, k, k, copies)
			x := b.New("x", f32, k)
			i := uint64(0)
			return func() ggml.Tensor {
				x = b.L.MulMat(b.Ctx, w(i%copies), x)
				i++
				return x
			}
		},
	}
}

// perfChainFlashAttn: q = FLASH_ATTN_EXT(q, K, V, mask) for one query of nh heads of hs
// over kv positions of nhkv F16 KV heads; the result [hs, nh, 1] is the next query
// [hs, 1, nh], the same memory.
func perfChainFlashAttn(hs, nh, nhkv, kv int64) *PerfCase {
	return &PerfCase{
		Name: fmt.Sprintf("FLASH_ATTN_EXT(hsk=%d,hsv=%d,nh=%d,nh_kv=%d,kv=%d,nb=1,type_KV=f16,chain)", hs, hs, nh, nhkv, kv),
		Op:   "FLASH_ATTN_EXT",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			q := b.New("q", f32, hs, 1, nh)
			k := b.New("k", f16, hs, kv, nhkv)
			v := b.New("v", f16, hs, kv, nhkv)
			m := b.New("m", f16, kv, 8)
			scale := float32(1 / math.Sqrt(float64(hs)))
			return func() ggml.Tensor {
				out := b.L.FlashAttnExt(b.Ctx, q, k, v, m, scale, 0, 0)
				b.L.PrecSetAcc(out, ggml.PrecF32)
				q = b.L.Reshape4D(b.Ctx, out, hs, 1, nh, 1)
				return q
			}
		},
	}
}

// perfChainMoERouter: llama's router of a mixture of experts for one token (SOFT_MAX,
// ARGSORT, the first used experts, GET_ROWS of their probabilities, their normalisation,
// which backends fuse), then x = x + the first normalised weight (an ADD, the floor of a
// dispatch) so that the next repetition depends on it.
func perfChainMoERouter(experts, used int64) *PerfCase {
	return &PerfCase{
		Name:  fmt.Sprintf("GRAPH(moe_router,experts=%d,used=%d,tokens=1,norm=true,chain)", experts, used),
		Op:    "GRAPH",
		Chain: true,
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			l, ctx := b.L, b.Ctx
			x := b.New("x", f32, experts, 1)
			return func() ggml.Tensor {
				norm := moeRouterGraph(l, ctx, x, used, true).out
				x = l.Add(ctx, x, l.View2D(ctx, norm, 1, 1, norm.Nb()[1], 0))
				return x
			}
		},
	}
}
