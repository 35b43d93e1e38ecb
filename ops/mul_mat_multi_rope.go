package ops

import (
	"fmt"
	"maps"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// llama's Q, V and K projections on the vectorised mat-vec (mul_mat_multi.wgsl: F16, Q8_0
// and the other weights the integer mat-vec's MULTI form does not take, or a model's first
// layer, whose norm has no ADD before it) with the ROPEs of Q and K and the K and V stores
// after them, in one dispatch: the ROPE_KV form of the products rotates each pair of Q
// and K rows a workgroup computes (two rows a workgroup) and stores Q's into ROPE Q's
// result and K's and V's rows straight into their caches (rope_kv_store.wgsl, shared with
// the integer mat-vec's form of the row add+norm+mul+qkv+rope+set_rows), in place of the
// store's own dispatch.

// mulMatMultiRopeRow is the fusion row: mul_mat+view+mul_mat+view+mul_mat, K's RESHAPE,
// then rope+rope+set_rows+set_rows.
var mulMatMultiRopeRow = Fusion{
	Name:    "mul_mat+view+mul_mat+view+mul_mat+rope+set_rows",
	Ops:     append(append(append([]OpSet(nil), mulMatViewMulMatViewMulMatRow.Ops...), viewOps), ropeRopeSetRowsRowsRow.Ops...),
	Private: []int{0, 2, 4, 7},
	Guard:   guardMatMultiRope,
	Lower:   lowerMatMultiRope,
	Example: func() []*tensor.Tensor { return normQKVRopeNodes(tensor.F16, 64, 32, 8, 2048, 16)[3:] },
}

// multiRopeKVParams are the parameters of mul_mat_multi.wgsl's ROPE_KV form: the
// products' own, the K and V caches (Db, Dc: strides along and across rows, rows) and
// ROPE's rotation.
type multiRopeKVParams struct {
	mulMatMultiParams
	Db, Dc [4]uint32
	ropeKVRotation
}

// guardMatMultiRope admits the twelve nodes where mul_mat+view+mul_mat+view+mul_mat
// admits the first five (three products), the sixth is a view, rope+rope+set_rows+set_rows
// admits the last six, the ropes rotate the Q and K products and V's store stores the V
// product, the ropes are NORMAL over whole heads of the products' rows without frequency
// factors (ropeKVGuard), one column, the results it stores overlap neither the column nor
// the weights, and the ten bindings fit the device.
func guardMatMultiRope(n []*tensor.Tensor, l *Limits) bool {
	if l.RopeKVOff || !guardMatVecMulti(n[:5], l) || !guardRopeRopeSetRowsRows(n[6:], l) {
		return false
	}
	mms := multiProducts(n[:5])
	if len(mms) != 3 || !ropeKVGuard(n[7], mms) {
		return false
	}
	if _, ok := productRoles(mms, n[6], n[7], n[11]); !ok {
		return false
	}
	// Every workgroup reads all of the column while others store ROPE Q's result and the
	// caches: none may overlap it or any weights (ggml-alloc places ROPE Q's result over
	// the column where the column is dead before it, as after the sinking of ROPE Q).
	x := mms[0].Src[1]
	for _, o := range []*tensor.Tensor{n[6], n[9], n[11]} {
		if overlaps(o, x) {
			return false
		}
		for _, mm := range mms {
			if overlaps(o, mm.Src[0]) {
				return false
			}
		}
	}
	return l.MaxStorageBuffers == 0 || ropeKVBindings <= l.MaxStorageBuffers
}

// lowerMatMultiRope lowers the twelve nodes as one dispatch of mul_mat_multi.wgsl in the
// ROPE_KV form, two rows a workgroup.
func lowerMatMultiRope(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	pairs := *l
	pairs.MatVecRows = 2
	ds, err := lowerMatVecMulti(n[:5], &pairs)
	if err != nil {
		return nil, err
	}
	roles, ok := productRoles(multiProducts(n[:5]), n[6], n[7], n[11])
	if len(ds) != 1 || ds[0].Spec.Defines["ROWS"] != "2" || !ok {
		return nil, fmt.Errorf("mul_mat+view+mul_mat+view+mul_mat+rope+set_rows: %d dispatches, rows %s, roles %v",
			len(ds), ds[0].Spec.Defines["ROWS"], ok)
	}
	multi := ds[0]
	rot, rdefs := ropeKVSetup(n[7])
	p := multiRopeKVParams{mulMatMultiParams: multi.Params.(mulMatMultiParams), ropeKVRotation: rot}
	p.Db, p.Dc = cacheStrides(n[9]), cacheStrides(n[11])
	defs := maps.Clone(multi.Spec.Defines)
	ropeKVDefines(defs, rdefs, roles)
	operands, tensors := ropeKVOperands(multi, n[6], n[7], n[9], n[11])
	s := spec("mul_mat_multi", multi.Spec.Workgroup, p, defs, operands...)
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: multi.Grid}}, nil
}
