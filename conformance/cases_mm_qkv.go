package conformance

import (
	"fmt"
	"strings"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// ---------------------------------------------------------------------------------------
// GRAPH(mul_mat_qkv): llama's Q, V and K projections, three MUL_MATs of the same
// activations with Q's rows (mq) unlike K's and V's (mkv) and weights of any types (a
// Q4_K_M model's Q4_K Q and K beside a Q6_K V), each result read afterwards and compared
// on its own (so that results stored into each other's place show), as the fusion row
// mul_mat+view+mul_mat+view+mul_mat (and mul_mat+mul_mat+mul_mat) computes them in one
// mat-vec dispatch. The forms: the RESHAPEs of Q and V after each (llama's graph), the
// three adjacent, and the third's weights being the first's result, which the backend
// must not fuse as three (it fuses the first two).

// qkvForms are the forms qkvCase builds.
const (
	qkvView       = "view"        // llama's RESHAPEs of Q and V between the MUL_MATs
	qkvAdjacent   = "adjacent"    // the MUL_MATs next to each other
	qkvReadsFirst = "reads_first" // K's weights are Q's result: Q and V fused, K apart
)

// qkvCase builds the projections of n columns of k elements with weights of types
// (Q, V, K), mq rows for Q and mkv for V and K.
func qkvCase(types [3]tensor.Type, mq, mkv, n, k int64, form string) *Case {
	names := fmt.Sprintf("%s/%s/%s", types[0], types[1], types[2])
	name := fmt.Sprintf("GRAPH(mul_mat_qkv,types=%s,mq=%d,mkv=%d,n=%d,k=%d,%s)", names, mq, mkv, n, k, form)
	return &Case{Name: name, Op: "GRAPH", Types: names, MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			x := b.New("attn_norm", f32, k, n)
			wq, wv := b.New("attn_q", types[0], k, mq), b.New("attn_v", types[1], k, mkv)
			// Each result is expanded into the graph after the previous one (ggml puts a
			// node that combined two of them between the MUL_MATs).
			q := l.MulMat(ctx, wq, x)
			rq := l.Reshape4D(ctx, q, mq, 1, n, 1)
			v := l.MulMat(ctx, wv, x)
			rv := l.Reshape4D(ctx, v, mkv, 1, n, 1)
			var kc ggml.Tensor
			switch form {
			case qkvReadsFirst:
				// k = mq = n: Q's result is K's weights.
				kc = l.MulMat(ctx, q, x)
			default:
				kc = l.MulMat(ctx, b.New("attn_k", types[2], k, mkv), x)
			}
			if form == qkvAdjacent {
				b.Expand(q)
				b.Expand(v)
			} else {
				b.Expand(rq)
				b.Expand(rv)
			}
			b.Check(q)
			b.Check(v)
			return kc
		}}
}

// qkvCases are the GRAPH(mul_mat_qkv) cases.
func qkvCases() []*Case {
	var cs []*Case
	sets := [][3]tensor.Type{
		{tensor.Q4_K, tensor.Q6_K, tensor.Q4_K},
		{f16, f16, f16},
		{tensor.Q8_0, tensor.Q8_0, tensor.Q8_0},
		{tensor.IQ4_XS, tensor.IQ2_XXS, tensor.IQ4_XS},
	}
	for _, types := range sets {
		for _, n := range []int64{1, 4} {
			cs = append(cs, qkvCase(types, 64, 16, n, 256, qkvView))
		}
	}
	return append(cs,
		qkvCase([3]tensor.Type{tensor.Q4_K, f16, tensor.Q8_0}, 40, 24, 2, 512, qkvAdjacent),
		qkvCase([3]tensor.Type{f32, f32, f32}, 8, 8, 8, 8, qkvReadsFirst),
	)
}

// qkvFusedProducts is how many MUL_MATs of a qkvCase the backend is expected to compute
// in its one fused mat-vec dispatch.
func qkvFusedProducts(c *Case) int {
	if strings.HasSuffix(c.Name, ","+qkvReadsFirst+")") {
		return 2
	}
	return 3
}
