package ops

import (
	"fmt"
	"maps"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// A residual sum and norm that feed the integer mat-vec (mul_mat_vec_q4.wgsl) on its XQ
// form: llama's ADD -> RMS_NORM -> MUL followed by the products of the MUL's result. The
// norm's dispatch (add+norm+mul, norm.wgsl with XQ) also quantizes each result row as the
// products read their column (mul_mat_vec_xq_store.wgsl), in place of a dispatch of its
// own; the result itself is still stored. Two rows:
//   - add+norm+mul+gate (ffn_inp, ffn_norm, the feed-forward gate and up products and
//     their SWIGLU on the integer gate form): one dependent dispatch less a layer;
//   - add+norm+mul+qkv (l_out, attn_norm, the Q, V and K projections): the three products
//     on the integer kernel's MULTI form, in place of the vectorised mul_mat_multi.wgsl.

// xqOut is the quantized columns a kernel stores besides its result (a norm) or instead of
// it (flash attention's reduction): the scratch operand cols of the integer mat-vec after
// it, whose weights give the layout.
type xqOut struct {
	cols, weights *tensor.Tensor
}

// rowDefines adds to defs the defines of a kernel that quantizes its result rows of n
// elements through xq_store_row (mul_mat_vec_xq_store.wgsl with XQ_ROW): the layout of
// x's weights, the row's length; the kernel binds x.cols as its written operand `xq`.
func (x *xqOut) rowDefines(defs map[string]string, n int64) {
	maps.Copy(defs, swarLayout(x.weights))
	defs["YS"], defs["XQ_ROW"] = fmt.Sprint(n), "1"
}

// addNormGateRow is the fusion row; it comes before add+norm+mul and mul_mat+mul_mat+glu.
var addNormGateRow = Fusion{
	Name: "add+norm+mul+gate",
	Ops: []OpSet{{tensor.OpAdd}, {tensor.OpRMSNorm, tensor.OpNorm}, {tensor.OpMul},
		{tensor.OpMulMat}, {tensor.OpMulMat}, {tensor.OpGLU}},
	Private: []int{1, 3, 4},
	Guard:   guardAddNormGate,
	Lower:   lowerAddNormGate,
	Example: func() []*tensor.Tensor { return normGateNodes(tensor.Q4_0, 8192, 2048) },
}

// addNormMulNodes returns llama's residual ADD of one column of k elements, its RMS_NORM
// and the MUL by the norm's weight: the start of the norm-fed rows' patterns.
func addNormMulNodes(k int64) []*tensor.Tensor {
	return addNormMulCols(k, 1)
}

// addNormMulCols is addNormMulNodes of n columns (tokens).
func addNormMulCols(k, n int64) []*tensor.Tensor {
	add := node(tensor.OpAdd, f32(k, n), nil, f32(k, n), f32(k, n))
	norm := node(tensor.OpRMSNorm, f32(k, n), []int32{int32(f32bits(1e-5))}, add)
	return []*tensor.Tensor{add, norm, node(tensor.OpMul, f32(k, n), nil, norm, f32(k))}
}

// normGateNodes returns addNormMulNodes(k) followed by the up and gate products of m x k
// weights of type ty and their SWIGLU: llama's feed-forward (add+norm+mul+gate).
func normGateNodes(ty tensor.Type, m, k int64) []*tensor.Tensor {
	n := addNormMulNodes(k)
	up := node(tensor.OpMulMat, f32(m, 1), nil, contiguous(ty, k, m), n[2])
	gate := node(tensor.OpMulMat, f32(m, 1), nil, contiguous(ty, k, m), n[2])
	return append(n, up, gate, node(tensor.OpGLU, f32(m, 1), []int32{int32(tensor.GLUSwiGLU)}, gate, up))
}

// guardAddNormGate admits the six nodes where add+norm+mul admits the first three,
// mul_mat+mul_mat+glu the last three, the products read the MUL's result as their column
// (each of its rows one column: no batches), the gate takes the integer mat-vec's gate
// form (swarGLUApplies; not the Q6_K mat-vec's) and the norm its register form with the
// row in workgroup memory (normXQFits).
func guardAddNormGate(n []*tensor.Tensor, l *Limits) bool {
	if !guardAddNormMul(n[:3], l) || !guardMatVecGLU(n[3:], l) {
		return false
	}
	mul, glu := n[2], n[5]
	gate, up := glu.Src[0], glu.Src[1]
	if gate.Src[1] != mul || up.Src[1] != mul || mul.Ne[2] != 1 || mul.Ne[3] != 1 {
		return false
	}
	wg, wu := gate.Src[0], up.Src[0]
	p := mulMatParamsOf(gate)
	if wg.Type == tensor.Q6_K || q6kApplies(wg, mul, p, l) || !swarGLUApplies(wg, wu, mul, p, l) {
		return false
	}
	return normXQFits(mul.Ne[0], wg, l)
}

// normXQFits reports whether the norm's register form takes rows of n elements and
// quantizes them for weights w: rows of whole groups of w's layout, held in workgroup
// memory beside the exchange of the quantization and the reduction's; not where
// Limits.NormXQOff.
func normXQFits(n int64, w *tensor.Tensor, l *Limits) bool {
	if l.NormXQOff {
		return false
	}
	wpg := int64(swarWPG(w))
	wg, e := normGroup(n, l)
	if wpg == 0 || e == 0 || n%(8*wpg) != 0 || int64(wg)%wpg != 0 {
		return false
	}
	// the row, each invocation's exchange (two 8-byte vectors) and its reduction slot
	return 4*n+20*int64(wg)+4*int64(normPartials(wg)) <= int64(l.workgroupStorage())
}

// lowerAddNormGate lowers the six nodes as the norm's dispatch, which stores the sum, the
// MUL's result and the quantized columns, and the gate form's dispatch that reads them.
func lowerAddNormGate(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	gate, err := lowerMatVecGLU(n[3:], l)
	if err != nil {
		return nil, err
	}
	if len(gate) != 2 || gate[0].Spec.Kernel != "mul_mat_vec_q4_act" {
		return nil, fmt.Errorf("add+norm+mul+gate: the gate took %d dispatches, not the integer gate form", len(gate))
	}
	// the columns' dispatch's operands: src1, then the quantized columns
	xq := &xqOut{cols: gate[0].Tensors[1], weights: n[5].Src[0].Src[0]}
	norm := normDispatch(n[0], n[1], n[2].Src[1], n[2], xq, l)
	return append(norm, gate[1]), nil
}

// addNormQKVRow fuses llama's attention input the same way: ADD -> RMS_NORM -> MUL (the
// previous layer's l_out, attn_norm) followed by the Q, V and K projections of its result
// (the RESHAPEs of Q and V between them, as mul_mat+view+mul_mat+view+mul_mat takes them).
// The norm's dispatch quantizes its result, and one dispatch of the integer mat-vec's
// MULTI form computes the three products on it, where mul_mat_multi.wgsl's vectorised
// products would dequantize the weights into floats.
var addNormQKVRow = Fusion{
	Name: "add+norm+mul+qkv",
	Ops: []OpSet{{tensor.OpAdd}, {tensor.OpRMSNorm, tensor.OpNorm}, {tensor.OpMul},
		{tensor.OpMulMat}, viewOps, {tensor.OpMulMat}, viewOps, {tensor.OpMulMat}},
	Private: []int{1},
	Guard:   guardAddNormQKV,
	Lower:   lowerAddNormQKV,
	Example: func() []*tensor.Tensor {
		return normQKVNodes([3]tensor.Type{tensor.Q4_K, tensor.Q4_K, tensor.Q4_K}, 2048, 512, 2048)
	},
}

// normQKVNodes returns addNormMulNodes(k) followed by the Q, V and K projections of its
// result with the RESHAPEs of Q and V between them, weights of types ts (Q, V, K), Q's mq
// rows, V's and K's mkv: llama's attention input (add+norm+mul+qkv).
func normQKVNodes(ts [3]tensor.Type, mq, mkv, k int64) []*tensor.Tensor {
	return normQKVColNodes(ts, mq, mkv, k, 1)
}

// normQKVColNodes is normQKVNodes of cols columns (tokens).
func normQKVColNodes(ts [3]tensor.Type, mq, mkv, k, cols int64) []*tensor.Tensor {
	n := addNormMulCols(k, cols)
	mul := n[2]
	for i, m := range []int64{mq, mkv, mkv} {
		mm := node(tensor.OpMulMat, f32(m, cols), nil, contiguous(ts[i], k, m), mul)
		n = append(n, mm)
		if i < 2 {
			n = append(n, node(tensor.OpReshape, f32(m, cols, 1), nil, mm))
		}
	}
	return n
}

// guardAddNormQKV admits the eight nodes where add+norm+mul admits the first three,
// mul_mat+view+mul_mat+view+mul_mat the rest, the three products read the MUL's result
// (one to normQKVCols columns, whose quantized form fits the scratch memory), at least
// two of them (normQKVSplit) have weights of one format that the
// integer mat-vec reads (swarFormat; not Q6_K, whose mat-vec is its own, nor Q8_0, which it
// takes for output heads only) and one row length, the third, if its format differs (a
// Q4_K_M's Q6_K V), takes a kernel of one dispatch on its own, and the norm quantizes the
// row (normXQFits).
func guardAddNormQKV(n []*tensor.Tensor, l *Limits) bool {
	if l.SwarOff || !guardAddNormMul(n[:3], l) || !guardMatVecMulti(n[3:], l) {
		return false
	}
	mul := n[2]
	mms := multiProducts(n[3:])
	if len(mms) != 3 || mul.Ne[1] < 1 || mul.Ne[2] != 1 || mul.Ne[3] != 1 {
		return false
	}
	for _, mm := range mms {
		if mm.Src[1] != mul {
			return false
		}
	}
	ints, other := normQKVSplit(mms)
	if len(ints) < 2 {
		return false
	}
	w0 := ints[0].Src[0]
	for _, mm := range ints {
		if w := mm.Src[0]; w.Ne[0] != w0.Ne[0] || swarFormat(w) == 0 {
			return false
		}
	}
	if w0.Type == tensor.Q6_K || w0.Type == tensor.Q8_0 || mul.Ne[1] > int64(normQKVCols(w0.Type, l)) || !swarXQFits(w0, mulMatParamsOf(ints[0])) {
		return false
	}
	if other != nil {
		var weights uint64
		for _, mm := range ints {
			weights += uint64(mm.Ne[0]) * uint64(mm.Src[0].Ne[0])
		}
		least := uint64(normQKVSplitMin)
		if l.SwarMin > 0 {
			least = uint64(l.SwarMin)
		}
		if weights < least {
			return false
		}
		if ds, err := lowerMulMat(other, oneDispatch(l)); err != nil || len(ds) != 1 {
			return false
		}
	}
	return normXQFits(mul.Ne[0], w0, l)
}

// normQKVCols returns the most columns (tokens decoded together) the row add+norm+mul+qkv
// takes with weights of type t: one, or up to Limits.QKVCols where set, at most the
// integer mat-vec's (swarTypeCols). By several columns the products would take the MULTI
// form's several-column form, the columns quantized by the norm as by one; by default
// they take the vectorised kernels (mul_mat_multi.wgsl, Q's product on its own where the
// integer mat-vec takes it), which measured faster: on an H100 (GPU time per step,
// medians of GGML_WGPU_PROFILE=1, bench -p 0 -n 128 -r 2 -s 4, two alternating runs
// each), one column -> up to eight, a 1B Q4_0 1,482.6, 1,479.5 -> 1,916.8, 1,913.0 µs
// (its Q, K and V 237.6 µs a step on mul_mat_multi.wgsl against 366.2 on MULTI); an
// 8-layer model of an 8B's widths in Q4_K_M 2,258.6, 2,258.7 -> 2,407.3, 2,409.8; the
// 32-layer one 8,412.2 and 8,418.9 by up to eight against 7,726.0 and 7,734.8 before the
// row took several sequences' graphs at all (S = 8 13,356.2 against 12,070.6).
func normQKVCols(t tensor.Type, l *Limits) int {
	if l.QKVCols <= 1 {
		return 1
	}
	return min(swarTypeCols(t, l), l.QKVCols)
}

// oneDispatch returns l for the product of another format in the row add+norm+mul+qkv,
// which must take one dispatch and no scratch memory (the norm's quantized column is
// there): a Q6_K V by several columns stays on the Q6_K mat-vec (q6kSwarCols: none).
func oneDispatch(l *Limits) *Limits {
	own := *l
	own.Q6KSwarCols = 1
	return &own
}

// normQKVSplitMin is the fewest weights of the products of one format for which the row
// takes a product of another format on its own kernel (Limits.SwarMin where set, as for
// the integer mat-vec's own threshold): its dispatch costs what the
// integer MULTI form saves on small products. On an H100 (GPU time per decode graph,
// GGML_WGPU_PROFILE=1, two alternating runs each, Q4_K_M models whose V is Q6_K:
// mul_mat_multi.wgsl's three products -> the norm's column for Q and K on MULTI and V on
// the Q6_K mat-vec): an 8B-class model's (Q and K 5,120 x 4,096 weights) 3,689.0, 3,686.5
// -> 3,632.9, 3,635.3 µs, but a 1B-class one's (2,560 x 2,048) 1,027.4, 1,023.6 ->
// 1,075.6, 1,074.1.
const normQKVSplitMin = 1 << 24

// normQKVSplit parts the products mms (Q, V and K) into those that share the format of
// the first or the last (the one the products of that format include: Q and K where V
// alone differs), in their order, and the product of the other format, if one differs;
// ints is short of two where two formats lack a majority.
func normQKVSplit(mms []*tensor.Tensor) (ints []*tensor.Tensor, other *tensor.Tensor) {
	ty := mms[0].Src[0].Type
	if mms[1].Src[0].Type != ty && mms[2].Src[0].Type != ty {
		ty = mms[1].Src[0].Type
	}
	for _, mm := range mms {
		if mm.Src[0].Type == ty {
			ints = append(ints, mm)
		} else if other == nil {
			other = mm
		} else {
			return nil, nil
		}
	}
	return ints, other
}

// lowerAddNormQKV lowers the eight nodes as the norm's dispatch, which stores the sum,
// the MUL's result and the quantized column, and the MULTI dispatch of the products of
// one format; a product of another format takes its own kernel on the MUL's result, its
// dispatch before or after MULTI's so that the last node's is last.
func lowerAddNormQKV(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	ints, other := normQKVSplit(multiProducts(n[3:]))
	w0 := ints[0].Src[0]
	xq := &xqOut{cols: swarColumns(w0, mulMatParamsOf(ints[0])), weights: w0}
	ds := append(normDispatch(n[0], n[1], n[2].Src[1], n[2], xq, l), swarMulti(ints, xq.cols, l))
	if other == nil {
		return ds, nil
	}
	own, err := lowerMulMat(other, oneDispatch(l))
	if err != nil {
		return nil, err
	}
	if other == n[len(n)-1] {
		return append(ds, own...), nil
	}
	return append(ds[:1], append(own, ds[1])...), nil
}
