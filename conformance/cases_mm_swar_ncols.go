package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// mulMatSwarColsCases cover the integer mat-vec by several columns (2 to 8: each
// quantized on its own, the weights' decoding shared): Q4_0, Q4_1 and Q4_K at n = 2, 3, 4
// and 8 with K of 256 and 2048, rows not a multiple of the workgroup's, src0 broadcast
// over dims 2 and 3, columns further apart than their length (a view of padded rows),
// weights and activations at their extremes in every column, Q6_K, and the fused
// feed-forward gate by several columns.
func mulMatSwarColsCases() []*Case {
	one := [2]int64{1, 1}
	var cs []*Case
	for _, ta := range []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q4_K} {
		cs = append(cs,
			mulMatCase(mmSpec{ta: ta, m: 33, n: 2, k: 256, bs: one, nr: one}),
			mulMatCase(mmSpec{ta: ta, m: 40, n: 3, k: 2048, bs: one, nr: one}),
			mulMatCase(mmSpec{ta: ta, m: 64, n: 4, k: 256, bs: one, nr: one}),
			mulMatCase(mmSpec{ta: ta, m: 33, n: 8, k: 2048, bs: one, nr: one}),
			mulMatCase(mmSpec{ta: ta, m: 20, n: 4, k: 256, bs: [2]int64{2, 3}, nr: [2]int64{2, 1}}),
			swarColsViewCase(ta, 35, 256, 3),
			swarColsCase(ta, 33, 256, 8, "extremes", signs, signs))
	}
	return append(cs,
		mulMatCase(mmSpec{ta: tensor.Q6_K, m: 13, n: 4, k: 2048, bs: one, nr: one}),
		mulMatCase(mmSpec{ta: tensor.Q6_K, m: 9, n: 8, k: 256, bs: one, nr: one}),
		mulMatCase(mmSpec{ta: tensor.Q6_K, m: 9, n: 2, k: 256, bs: [2]int64{2, 3}, nr: [2]int64{2, 1}}),
		swarColsCase(tensor.Q6_K, 11, 256, 3, "extremes", signs, signs),
		swarGLUColsCase(tensor.Q4_K, 24, 256, 4),
		swarGLUColsCase(tensor.Q4_0, 20, 2048, 8),
		swarGLUColsCase(tensor.Q6_K, 12, 256, 2))
}

// swarColsCase is a MUL_MAT of an m x k matrix of type ta by n columns with its own
// initializers of the weights (before ggml quantizes them) and of the columns.
func swarColsCase(ta tensor.Type, m, k, n int64, label string, weights, columns InitFunc) *Case {
	return &Case{Name: fmt.Sprintf("MUL_MAT(type_a=%s,type_b=f32,m=%d,n=%d,k=%d,%s)", ta, m, n, k, label),
		Op: "MUL_MAT", Types: ta.String() + " x f32", MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			a := b.New("a", ta, k, m)
			y := b.New("b", f32, k, n)
			b.Init(a, weights)
			b.Init(y, columns)
			return b.L.MulMat(b.Ctx, a, y)
		}}
}

// swarColsViewCase is a MUL_MAT of an m x k matrix of type ta by n columns of a view of
// rows padded by 8 elements (the columns 16-byte aligned, k + 8 elements apart), from the
// second row.
func swarColsViewCase(ta tensor.Type, m, k, n int64) *Case {
	return &Case{Name: fmt.Sprintf("MUL_MAT(type_a=%s,type_b=f32,m=%d,n=%d,k=%d,view_b_aligned)", ta, m, n, k),
		Op: "MUL_MAT", Types: ta.String() + " x f32", MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			a := b.New("a", ta, k, m)
			x := b.New("b_base", f32, k+8, n+1)
			y := b.View4D(x, [4]int64{k, n, 1, 1}, x.Nb()[1])
			return b.L.MulMat(b.Ctx, a, y)
		}}
}

// swarGLUColsCase is SWIGLU(gate x, up x) with m x k gate and up weights of type ta and n
// columns x.
func swarGLUColsCase(ta tensor.Type, m, k, n int64) *Case {
	return &Case{Name: fmt.Sprintf("GRAPH(ffn_swiglu_swar,type=%s,m=%d,n=%d,k=%d)", ta, m, n, k),
		Op: "GRAPH", Types: ta.String(), MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			x := b.New("x", f32, k, n)
			gate, up := b.New("w_gate", ta, k, m), b.New("w_up", ta, k, m)
			return l.SwiGLUSplit(ctx, l.MulMat(ctx, gate, x), l.MulMat(ctx, up, x))
		}}
}
