package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// llama's ROPE of Q joins the K and V store (rope_set_rows.go): ROPE Q, then ROPE K, its
// view, K's SET_ROWS, V's view and V's SET_ROWS, one dispatch. Q's result is written (flash
// attention reads it later); the invocations after K's and V's rotate Q's pairs with K's
// rotation parameters. llama's graph computes ROPE Q before the K and V matmuls; the row is
// marked Sink so that the scheduler moves it down next to ROPE K where that is safe.

// ropeRopeSetRowsRowsRow is the fusion row of ROPE Q and ropeSetRowsRowsRow.
var ropeRopeSetRowsRowsRow = Fusion{
	Name: "rope+rope+set_rows+set_rows",
	Ops: []OpSet{{tensor.OpRope}, {tensor.OpRope}, {tensor.OpView, tensor.OpReshape}, {tensor.OpSetRows},
		{tensor.OpView, tensor.OpReshape}, {tensor.OpSetRows}},
	Private:  []int{1, 2},
	Consumes: []int{1},
	Guard:    guardRopeRopeSetRowsRows,
	Lower: func(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
		return lowerKVStore(n[0], n[1:], l), nil
	},
	Example: func() []*tensor.Tensor { return ropeRopeSetRowsExample() },
	Sink:    true,
}

// ropeRopeSetRowsExample is ropeSetRowsExample(true) after the ROPE of Q: 3 heads of 8,
// the same positions and frequency factors.
func ropeRopeSetRowsExample() []*tensor.Tensor {
	n := ropeSetRowsExample(true)
	k := n[0]
	q := node(tensor.OpRope, f32(8, 3, 3), k.Params[:], f32(8, 3, 3), k.Src[1], k.Src[2])
	return append([]*tensor.Tensor{q}, n...)
}

// ropeQStorage is the storage bindings of the fused kernel: Q's source and result, K's
// source, positions, frequency factors (if any), K's indices, V's values and indices, the
// two caches.
func ropeQStorage(k *tensor.Tensor) int {
	if k.Src[2] != nil {
		return 10
	}
	return 9
}

// guardRopeRopeSetRowsRows admits ROPE Q followed by nodes guardRopeSetRowsRows admits when
// both ropes rotate alike (the same op parameters but n_past, the same positions and
// frequency factors, the same head size and tokens; Q's result contiguous), none of the K and V store's nodes reads Q's result,
// and Q's result overlaps nothing the kernel reads or writes but its own source, which it
// may replace exactly (ggml places ROPE in place).
func guardRopeRopeSetRowsRows(n []*tensor.Tensor, l *Limits) bool {
	q, k := n[0], n[1]
	if !Supports(q, l) || !guardRopeSetRowsRows(n[1:], l) {
		return false
	}
	if l.MaxStorageBuffers > 0 && ropeQStorage(k) > l.MaxStorageBuffers {
		return false
	}
	qp, kp := q.Params, k.Params
	qp[0], kp[0] = 0, 0 // n_past, unused
	if qp != kp || q.Src[1] != k.Src[1] || q.Src[2] != k.Src[2] {
		return false
	}
	if q.Ne[0] != k.Ne[0] || q.Ne[2] != k.Ne[2] || q.Ne[3] != k.Ne[3] || !q.Contiguous() {
		return false
	}
	kset, vview, vset := n[3], n[4], n[5]
	for _, m := range n[1:] {
		for _, s := range m.Src {
			if s != nil && s.IsViewOf(q) {
				return false
			}
		}
	}
	if overlaps(q, q.Src[0]) && !(q.Loc == q.Src[0].Loc && q.Type == q.Src[0].Type && q.Nb == q.Src[0].Nb) {
		return false
	}
	for _, r := range []*tensor.Tensor{k.Src[0], k.Src[1], k.Src[2], kset.Src[1], vview, vset.Src[1], kset, vset} {
		if r != nil && overlaps(q, r) {
			return false
		}
	}
	return !overlaps(kset, q.Src[0]) && !overlaps(vset, q.Src[0])
}
