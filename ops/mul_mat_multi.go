package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// Two or three MUL_MATs of one activation in one mat-vec dispatch (mul_mat_multi.wgsl):
// llama's Q, V and K projections, Qcur = wq x cur, Vcur = wv x cur, Kcur = wk x cur, each
// followed by a RESHAPE (the rows "mul_mat+view+mul_mat+view+mul_mat" and
// "mul_mat+mul_mat+mul_mat"), and two of them (the rows "mul_mat+view+mul_mat" and
// "mul_mat+mul_mat"). Each product keeps its own weights (format, rows, strides) and
// result; the grid is the products' workgroups one after the other, so a workgroup
// computes rows of one product and the weights of different formats (a Q4_K_M model's
// Q6_K V beside Q4_K Q and K) each take their own code path. Every result is written, so
// anything later may read it.

// matMultiMax is the most products one dispatch computes: src1, their weights and results
// make 2 x 3 + 1 = 7 storage bindings, within WebGPU's default of 8.
const matMultiMax = 3

// mulMatMultiParams are the parameters of mul_mat_multi.wgsl. Product P has M[P] rows,
// weights with row stride A[P] (elements) and result strides DP; it computes workgroups
// Start[P] .. Start[P+1]-1 (Start[products] is the total). Src1's strides B and its
// dimension 2 Ne2 are shared, and so is the row length K.
type mulMatMultiParams struct {
	B          [4]uint32
	A          [4]uint32
	D0, D1, D2 [4]uint32
	M          [4]uint32
	Start      [4]uint32
	K, Ne2     uint32
}

// viewOps are the ops of nodes that only view another tensor's memory (no work).
var viewOps = OpSet{tensor.OpReshape, tensor.OpView, tensor.OpPermute, tensor.OpTranspose}

// matMultiRow is a fusion row of MUL_MATs of one activation, with a view after each but
// the last when views.
func matMultiRow(products int, views bool) Fusion {
	name, sep := "mul_mat", "+"
	if views {
		sep = "+view+"
	}
	ops := []OpSet{{tensor.OpMulMat}}
	for i := 1; i < products; i++ {
		if views {
			ops = append(ops, viewOps)
		}
		ops = append(ops, OpSet{tensor.OpMulMat})
		name += sep + "mul_mat"
	}
	return Fusion{
		Name:    name,
		Ops:     ops,
		Guard:   guardMatVecMulti,
		Lower:   lowerMatVecMulti,
		Example: func() []*tensor.Tensor { return matMultiExample(products, views) },
	}
}

var (
	// mulMatViewMulMatViewMulMatRow fuses llama's Q, V and K projections with the
	// RESHAPEs of Q and V between them.
	mulMatViewMulMatViewMulMatRow = matMultiRow(3, true)
	// mulMatMulMatMulMatRow fuses three adjacent MUL_MATs.
	mulMatMulMatMulMatRow = matMultiRow(3, false)
	// mulMatViewMulMatRow fuses two MUL_MATs with a view (llama's RESHAPE of the first)
	// between.
	mulMatViewMulMatRow = matMultiRow(2, true)
	// mulMatMulMatRow fuses two adjacent MUL_MATs.
	mulMatMulMatRow = matMultiRow(2, false)
)

// matMultiExample is llama's projections of two columns of 64 elements (Q's weights F16
// of 16 rows, K's and V's 8 rows of Q8_0 and Q4_0), with each RESHAPE but the last's
// between them when views.
func matMultiExample(products int, views bool) []*tensor.Tensor {
	x := f32(64, 2)
	weights := []*tensor.Tensor{contiguous(tensor.F16, 64, 16), contiguous(tensor.Q8_0, 64, 8), contiguous(tensor.Q4_0, 64, 8)}
	var n []*tensor.Tensor
	for i := 0; i < products; i++ {
		m := weights[i].Ne[1]
		mm := node(tensor.OpMulMat, f32(m, 2), nil, weights[i], x)
		n = append(n, mm)
		if views && i < products-1 {
			n = append(n, node(tensor.OpReshape, f32(m, 1, 2), nil, mm))
		}
	}
	return n
}

// multiProducts returns the MUL_MATs of a match: its nodes that are not views.
func multiProducts(n []*tensor.Tensor) []*tensor.Tensor {
	var mms []*tensor.Tensor
	for _, t := range n {
		if !t.Op.IsView() {
			mms = append(mms, t)
		}
	}
	return mms
}

// guardMatVecMulti admits the MUL_MATs of n (its nodes but views) when they multiply the
// same src1 by 2-D weights that are not the same memory twice (the same product twice
// shares nothing, and a benchmark that repeats one MUL_MAT must time each repetition on its
// own), each would use the vectorised mat-vec kernel on its own (lowerMulMat), and none
// reads an earlier one's result.
//
// Aliasing: every workgroup reads all of src1 and rows of one product's weights, then
// stores its rows of that product's result, in any order with the other workgroups; so no
// result may overlap src1, any weights or another result.
func guardMatVecMulti(n []*tensor.Tensor, l *Limits) bool {
	if !multiProductsFit(n, l) {
		return false
	}
	mms := multiProducts(n)
	for i, m := range mms {
		if overlapsMultiInputs(m, mms) {
			return false
		}
		for _, o := range mms[i+1:] {
			if overlaps(m, o) {
				return false
			}
		}
	}
	return true
}

// overlapsMultiInputs reports whether t overlaps what the products mms read: their
// shared src1 or any of their weights.
func overlapsMultiInputs(t *tensor.Tensor, mms []*tensor.Tensor) bool {
	if overlaps(t, mms[0].Src[1]) {
		return true
	}
	for _, mm := range mms {
		if overlaps(t, mm.Src[0]) {
			return true
		}
	}
	return false
}

// multiProductsFit is guardMatVecMulti without its aliasing rules: the products of n
// multiply one src1 by distinct 2-D weights the vectorised kernel reads, and none reads
// an earlier one's result (for a form that stores other results than the products').
func multiProductsFit(n []*tensor.Tensor, l *Limits) bool {
	mms := multiProducts(n)
	if l.MatMultiOff || len(mms) < 2 || len(mms) > matMultiMax || mms[0].Src[1] == nil {
		return false
	}
	if l.MaxStorageBuffers > 0 && 2*len(mms)+1 > l.MaxStorageBuffers {
		return false
	}
	x := mms[0].Src[1]
	for i, m := range mms {
		w := m.Src[0]
		if w == nil || m.Src[1] != x || !Supports(m, l) {
			return false
		}
		if m.Ne[1] > matVecMaxCols || w.Ne[2] != 1 || w.Ne[3] != 1 || !vec8(w) || !(quantized(w.Type) || vectorRows(x)) {
			return false
		}
		for _, prev := range mms[:i] {
			if w.IsViewOf(prev) || x.IsViewOf(prev) || w == prev.Src[0] || overlaps(w, prev.Src[0]) {
				return false
			}
		}
	}
	return true
}

// lowerMatVecMulti lowers the MUL_MATs of n as one dispatch of mul_mat_multi.wgsl:
// operands src1, the weights w0.., the results d0.. in the nodes' order (the last node's
// result last: a fused step computes its last node).
func lowerMatVecMulti(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	mms := multiProducts(n)
	if len(mms) < 2 || len(mms) > matMultiMax {
		return nil, fmt.Errorf("ops: %d products in one mat-vec dispatch", len(mms))
	}
	x := mms[0].Src[1]
	vec1 := vectorRows(x)
	cols := uint32(x.Ne[1])
	batches := uint32(x.Ne[2] * x.Ne[3])
	p := mulMatMultiParams{B: strides(x), K: uint32(x.Ne[0]), Ne2: uint32(x.Ne[2])}
	var rows uint32
	for _, m := range mms {
		rows += uint32(m.Ne[0])
	}
	perGroup, wg := matVecShape(rows*batches, p.K, int(cols), l)
	acc := perGroup * int(cols)
	defs := map[string]string{"ROWS": fmt.Sprint(perGroup), "NCOLS": fmt.Sprint(cols), "VEC1": flag(vec1),
		"PRODUCTS": fmt.Sprint(len(mms)), "ACC": fmt.Sprint(acc), "RED": fmt.Sprint(acc * wg)}
	operands := []wgslOperand{in("src1", x)}
	operands[0].Vec = vec1
	tensors := []*tensor.Tensor{x}
	dsts := []*[4]uint32{&p.D0, &p.D1, &p.D2}
	var groups uint32
	for i, m := range mms {
		w := m.Src[0]
		o := in(fmt.Sprintf("w%d", i), w)
		o.Vec = true
		operands, tensors = append(operands, o), append(tensors, w)
		p.A[i], p.M[i], *dsts[i] = strides(w)[1], uint32(m.Ne[0]), strides(m)
		p.Start[i] = groups
		groups += (p.M[i] + uint32(perGroup) - 1) / uint32(perGroup) * batches
		units := unitRows(w, l) && wg >= o.Type.BlockElems()/8
		defs[fmt.Sprintf("UNITS%d", i)] = flag(units)
		defs[fmt.Sprintf("PAIR%d", i)] = flag(units && cols <= matVecPairMaxCols && o.Type.PairDistance() > 0)
	}
	p.Start[len(mms)] = groups
	for i, m := range mms {
		operands, tensors = append(operands, out(fmt.Sprintf("d%d", i), m)), append(tensors, m)
	}
	s := spec("mul_mat_multi", wg, p, defs, operands...)
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: grid1D(uint64(groups), l)}}, nil
}
