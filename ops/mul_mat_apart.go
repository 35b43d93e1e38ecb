package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// Two consecutive MUL_MATs of one activation (the fusion rows "mul_mat+view+mul_mat" and
// "mul_mat+mul_mat"): llama's V and K projections, Vcur = wv x cur, a RESHAPE of it, then
// Kcur = wk x cur. One dispatch of the vectorised mat-vec kernel with a second matrix
// (secondApart) reads cur once for both and stores both products; both are written, so
// either may be read by anything later.

// viewOps are the ops of nodes that only view another tensor's memory (no work).
var viewOps = OpSet{tensor.OpReshape, tensor.OpView, tensor.OpPermute, tensor.OpTranspose}

// mulMatViewMulMatRow fuses two MUL_MATs with a view (llama's RESHAPE of the first) between.
var mulMatViewMulMatRow = Fusion{
	Name:    "mul_mat+view+mul_mat",
	Ops:     []OpSet{{tensor.OpMulMat}, viewOps, {tensor.OpMulMat}},
	Guard:   guardMatVecApart,
	Lower:   lowerMatVecApart,
	Example: func() []*tensor.Tensor { return matVecApartExample(true) },
}

// mulMatMulMatRow fuses two adjacent MUL_MATs.
var mulMatMulMatRow = Fusion{
	Name:    "mul_mat+mul_mat",
	Ops:     []OpSet{{tensor.OpMulMat}, {tensor.OpMulMat}},
	Guard:   guardMatVecApart,
	Lower:   lowerMatVecApart,
	Example: func() []*tensor.Tensor { return matVecApartExample(false) },
}

// matVecApartExample is llama's V and K projections of two columns with F16 weights of 64
// x 9, with V's RESHAPE between them when view.
func matVecApartExample(view bool) []*tensor.Tensor {
	x := f32(64, 2)
	v := node(tensor.OpMulMat, f32(9, 2), nil, contiguous(tensor.F16, 64, 9), x)
	k := node(tensor.OpMulMat, f32(9, 2), nil, contiguous(tensor.F16, 64, 9), x)
	if !view {
		return []*tensor.Tensor{v, k}
	}
	return []*tensor.Tensor{v, node(tensor.OpReshape, f32(9, 1, 2), nil, v), k}
}

// guardMatVecApart admits the first and last nodes of n, two MUL_MATs, when they multiply
// the same src1 by two different weights of one type, shape and strides into results of one shape and
// strides, each would use the vectorised mat-vec kernel on its own (lowerMulMat), and the
// second does not read the first's result.
//
// Aliasing: every workgroup reads all of src1 and its rows of both weights, then stores
// its rows of both results; so neither result may overlap src1, either weight or the
// other result.
func guardMatVecApart(n []*tensor.Tensor, l *Limits) bool {
	m1, m2 := n[0], n[len(n)-1]
	w1, w2, x := m1.Src[0], m2.Src[0], m1.Src[1]
	if w1 == nil || w2 == nil || x == nil || m2.Src[1] != x || w2.IsViewOf(m1) || x.IsViewOf(m1) {
		return false
	}
	// The same weights twice give the same product: nothing to share, and a benchmark that
	// repeats one MUL_MAT must time each repetition on its own.
	if w1 == w2 || overlaps(w1, w2) {
		return false
	}
	if w1.Type != w2.Type || w1.Ne != w2.Ne || w1.Nb != w2.Nb || m1.Ne != m2.Ne || m1.Nb != m2.Nb {
		return false
	}
	if !Supports(m1, l) || !Supports(m2, l) {
		return false
	}
	for _, r := range []*tensor.Tensor{w1, w2, x} {
		if overlaps(m1, r) || overlaps(m2, r) {
			return false
		}
	}
	if overlaps(m1, m2) {
		return false
	}
	return m1.Ne[1] <= matVecMaxCols && vec8(w1) && vec8(w2) && (quantized(w1.Type) || vectorRows(x))
}

// lowerMatVecApart lowers the two MUL_MATs as one mat-vec dispatch: the last node's
// weights and result are src0 and dst (a fused step computes its last node), the first's
// src0b and dstb.
func lowerMatVecApart(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	m1, m2 := n[0], n[len(n)-1]
	w1, w2, x := m1.Src[0], m2.Src[0], m2.Src[1]
	p := mulMatParamsOf(m2)
	operands := []wgslOperand{in("src0", w2), in("src0b", w1), in("src1", x), out("dstb", m1), out("dst", m2)}
	tensors := []*tensor.Tensor{w2, w1, x, m1, m2}
	return []Dispatch{matVec8(p, operands, tensors, secondApart, vectorRows(x), l)}, nil
}
