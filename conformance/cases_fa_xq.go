package conformance

import (
	"fmt"
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// ---------------------------------------------------------------------------------------
// GRAPH(flash_attn+wo): llama's decode attention (FLASH_ATTN_EXT of F16 K and V, a mask),
// the RESHAPE of its result into columns and the attention output's product, as the
// fusion row flash_attn+view+mul_mat computes them where the product takes the integer
// mat-vec on XQ: the split reduction quantizes its rows as the product's column
// (ops/flash_attn_xq.go). The product is checked; the attention's result is not a graph
// output, as in a model (the row stores it nowhere).

// faOutCase builds the graph for nh query heads of size hs over kv positions of nhkv KV
// heads, nb queries (columns), sinks or not, and m x (hs nh) weights of type ta.
func faOutCase(ta tensor.Type, hs, nh, nhkv, kv, nb, m int64, sinks bool) *Case {
	name := fmt.Sprintf("GRAPH(flash_attn+wo,type=%s,hs=%d,nh=%d,nh_kv=%d,kv=%d,nb=%d,m=%d", ta, hs, nh, nhkv, kv, nb, m)
	if sinks {
		name += ",sinks"
	}
	return &Case{Name: name + ")", Op: "GRAPH", Types: ta.String(), MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			q := b.New("q", f32, hs, nb, nh)
			k := b.New("k", f16, hs, kv, nhkv)
			v := b.New("v", f16, hs, kv, nhkv)
			mask := b.New("m", f16, kv, nb)
			b.Init(mask, faMask(kv, nb, false))
			wo := b.New("wo", ta, hs*nh, m)
			out := l.FlashAttnExt(ctx, q, k, v, mask, float32(1/math.Sqrt(float64(hs))), 0, 0)
			if sinks {
				sk := b.New("s", f32, nh)
				b.Init(sk, Uniform(-10, 10))
				l.FlashAttnAddSinks(out, sk)
			}
			l.PrecSetAcc(out, ggml.PrecF32)
			return l.MulMat(ctx, wo, l.Reshape4D(ctx, out, hs*nh, nb, 1, 1))
		}}
}

// faOutCases are the GRAPH(flash_attn+wo) cases: an 8B llama's (heads of 128, 32 over 8,
// 4096 x 4096 Q4_K), a 1B's heads (64, 32 over 8) with every format the row takes at few
// rows, two queries, sinks, and a long cache (splits of more than one lane).
func faOutCases() []*Case {
	cs := []*Case{faOutCase(tensor.Q4_K, 128, 32, 8, 256, 1, 4096, false)}
	for _, ta := range swarTypes {
		if ta != tensor.Q8_0 {
			cs = append(cs, faOutCase(ta, 64, 32, 8, 256, 1, 48, false))
		}
	}
	return append(cs, faOutCase(tensor.Q4_0, 128, 8, 2, 512, 2, 40, false), faOutCase(tensor.Q4_K, 128, 8, 8, 300, 1, 24, true),
		faOutCase(tensor.Q5_K, 64, 16, 4, 3000, 1, 32, false))
}
