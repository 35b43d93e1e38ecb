package conformance

import (
	"fmt"
	"strings"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// ---------------------------------------------------------------------------------------
// GRAPH(mul_mat_pair): llama's V and K projections, two MUL_MATs of the same activations,
// Vcur = wv x cur, then Kcur = wk x cur, both read afterwards (their sum is the output, and
// each is compared on its own, so that results stored into each other's place show), as
// the fusion rows mul_mat+view+mul_mat and mul_mat+mul_mat compute them in one mat-vec
// dispatch. The forms: V's RESHAPE between the two (llama's graph), the two adjacent,
// weights of different types (a Q4_K_M model's Q6_K V and Q4_K K), and a second MUL_MAT
// whose weights are the first's result, which the backend must not fuse.

// mmPairForms are the forms mmPairCase builds.
const (
	mmPairView       = "view"         // V's RESHAPE between the MUL_MATs
	mmPairAdjacent   = "adjacent"     // the MUL_MATs next to each other
	mmPairTypes      = "types_differ" // wv Q6_K, wk of the case's type
	mmPairReadsFirst = "reads_first"  // the second's weights are the first's result: not fused
)

// mmPairCase builds the pair with weights of type ty, m rows of k elements, and n columns
// of activations.
func mmPairCase(ty tensor.Type, m, n, k int64, form string) *Case {
	name := fmt.Sprintf("GRAPH(mul_mat_pair,type=%s,m=%d,n=%d,k=%d,%s)", ty, m, n, k, form)
	return &Case{Name: name, Op: "GRAPH", Types: ty.String(), MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			x := b.New("attn_norm", f32, k, n)
			if form == mmPairReadsFirst {
				// k = m = n: the first result is the second's weights.
				w := b.New("w", ty, k, m)
				v := l.MulMat(ctx, w, x)
				kc := l.MulMat(ctx, v, x)
				b.Check(v)
				return kc
			}
			tv := ty
			if form == mmPairTypes {
				tv = tensor.Q6_K
			}
			wv, wk := b.New("attn_v", tv, k, m), b.New("attn_k", ty, k, m)
			v := l.MulMat(ctx, wv, x)
			var out ggml.Tensor
			if form == mmPairAdjacent {
				kc := l.MulMat(ctx, wk, x)
				out = l.Add(ctx, v, kc)
				b.Check(kc)
			} else {
				vr := l.Reshape4D(ctx, v, m, 1, n, 1)
				kc := l.MulMat(ctx, wk, x)
				out = l.Add(ctx, vr, l.Reshape4D(ctx, kc, m, 1, n, 1))
				b.Check(kc)
			}
			b.Check(v)
			return out
		}}
}

// mmPairCases are the GRAPH(mul_mat_pair) cases.
func mmPairCases() []*Case {
	var cs []*Case
	for _, ty := range []tensor.Type{f16, tensor.Q4_K, tensor.Q8_0, tensor.IQ4_XS} {
		for _, n := range []int64{1, 4} {
			cs = append(cs, mmPairCase(ty, 48, n, 256, mmPairView))
		}
		cs = append(cs, mmPairCase(ty, 33, 2, 512, mmPairAdjacent))
	}
	return append(cs,
		mmPairCase(tensor.Q4_K, 32, 1, 256, mmPairTypes),
		mmPairCase(f32, 8, 8, 8, mmPairReadsFirst),
	)
}

// mmPairFused reports whether the backend is expected to fuse the MUL_MATs of an
// mmPairCase.
func mmPairFused(c *Case) bool {
	return !strings.HasSuffix(c.Name, ","+mmPairReadsFirst+")")
}
