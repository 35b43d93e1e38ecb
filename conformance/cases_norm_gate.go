package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// ---------------------------------------------------------------------------------------
// GRAPH(add+norm+gate): llama's residual sum, its norm and weight (ffn_inp, ffn_norm),
// then the feed-forward gate and up products of the result and their SWIGLU, as the
// fusion row add+norm+mul+gate computes them where the gate takes the integer mat-vec's
// gate form: the norm's dispatch quantizes its result for the gate (ops/norm_gate.go).
// The sum and the weighted norm are checked as well as the gate's result. (With the norm's
// weights around zero, the CPU's 8-bit activations of the K-quants, one scale a block of
// 256, left an NMSE of 6e-4 against exact ones.)

// normGateCase builds the graph for k-element rows, n columns (decode: 1) and m x k gate
// and up weights of type ta.
func normGateCase(ta tensor.Type, m, k, n int64) *Case {
	return &Case{Name: fmt.Sprintf("GRAPH(add+rms_norm*w+ffn_swiglu,type=%s,m=%d,n=%d,k=%d)", ta, m, n, k),
		Op: "GRAPH", Types: ta.String(), MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			attn, inp := b.New("attn_out", f32, k, n), b.New("inpSA", f32, k, n)
			w := b.New("norm_w", f32, k)
			b.Init(w, Uniform(0.5, 1.5)) // positive, as a model's norm weights
			gate, up := b.New("w_gate", ta, k, m), b.New("w_up", ta, k, m)
			sum := l.Add(ctx, attn, inp)
			x := l.Mul(ctx, l.RMSNorm(ctx, sum, 1e-5), w)
			l.SetOutput(x)
			b.Check(x)
			l.SetOutput(sum)
			b.Check(sum)
			return l.SwiGLUSplit(ctx, l.MulMat(ctx, gate, x), l.MulMat(ctx, up, x))
		}}
}

// normGateCases are the GRAPH(add+norm+gate) cases: every format of the integer
// mat-vec's gate form at a decode's row of 2048 (a 1B llama's), Q4_0 and Q4_K at 4096
// (8B), rows of one or two groups, a row that is no power of two, and several columns.
func normGateCases() []*Case {
	var cs []*Case
	for _, ta := range swarTypes {
		cs = append(cs, normGateCase(ta, 40, 2048, 1))
	}
	return append(cs, normGateCase(tensor.Q4_0, 24, 4096, 1), normGateCase(tensor.Q4_K, 24, 4096, 1),
		normGateCase(tensor.Q4_0, 9, 64, 1), normGateCase(tensor.Q4_K, 9, 256, 1), normGateCase(tensor.Q8_0, 9, 3072, 1),
		normGateCase(tensor.Q4_0, 20, 2048, 2), normGateCase(tensor.Q4_K, 20, 1024, 4), normGateCase(tensor.MXFP4, 12, 512, 2))
}
