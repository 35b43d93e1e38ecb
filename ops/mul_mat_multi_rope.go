package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// llama's Q, V and K projections on the vectorised mat-vec (mul_mat_multi.wgsl: F16, Q8_0,
// Q6_K and the other weights the integer row add+norm+mul+qkv+rope+set_rows does not take)
// with the ROPEs of Q and K and the K and V stores
// after them, in one dispatch: the ROPE_KV form of the products rotates each pair of Q
// and K rows a workgroup computes (two rows a workgroup) and stores Q's into ROPE Q's
// result and K's and V's rows straight into their caches (rope_kv_store.wgsl, shared with
// the integer mat-vec's form of the row add+norm+mul+qkv+rope+set_rows), in place of the
// store's own dispatch.

// mulMatMultiRopeRow is the fusion row, in llama's order: Q's MUL_MAT, its RESHAPE and
// ROPE Q, the other two MUL_MATs and their RESHAPEs, then ROPE K, K's view and SET_ROWS,
// V's view and SET_ROWS. The graph keeps that order: the sinking of ROPE Q down to ROPE K
// (for the integer row, sched/sink.go) leaves alone a node that a longer row starting
// before it takes, and so ROPE Q is placed while the column is still live (placed after
// the last product, ggml-alloc puts it over the column, which the products read while it
// is stored).
var mulMatMultiRopeRow = Fusion{
	Name: "mul_mat+view+rope+mul_mat+view+mul_mat+view+rope+set_rows",
	Ops: append([]OpSet{{tensor.OpMulMat}, viewOps, {tensor.OpRope}, {tensor.OpMulMat}, viewOps, {tensor.OpMulMat}, viewOps},
		ropeRopeSetRowsRowsRow.Ops[1:]...),
	Private: []int{0, 3, 5, 7},
	Guard:   guardMatMultiRope,
	Lower:   lowerMatMultiRope,
	Example: func() []*tensor.Tensor {
		n := normQKVRopeNodes(tensor.F16, 64, 32, 8, 2048, 16)[3:] // sunk: Q, view, V, view, K, view, ROPE Q, ...
		return append(append([]*tensor.Tensor{n[0], n[1], n[6]}, n[2:6]...), n[7:]...)
	},
}

// multiRopeProducts returns the nodes of the three products and their views as the
// vectorised multi form reads them, and the ROPE/store nodes as
// rope+rope+set_rows+set_rows does.
func multiRopeProducts(n []*tensor.Tensor) (products, store []*tensor.Tensor) {
	return []*tensor.Tensor{n[0], n[1], n[3], n[4], n[5]}, []*tensor.Tensor{n[2], n[7], n[8], n[9], n[10], n[11]}
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
// admits the products and their views (multiProductsFit: the products' results are not
// stored, so they may lie anywhere), rope+rope+set_rows+set_rows the ROPEs and stores,
// no product is of a format the integer row add+norm+mul+qkv+rope+set_rows takes
// (ropeKVFormat: that row needs ROPE Q sunk), the ropes rotate the Q and K products and
// V's store stores the V product, the ropes are NORMAL over whole heads of the products'
// rows without frequency factors (ropeKVGuard), one column, the results it stores overlap
// neither the column nor the weights, and the ten bindings fit the device.
func guardMatMultiRope(n []*tensor.Tensor, l *Limits) bool {
	products, store := multiRopeProducts(n)
	if l.RopeKVOff || !multiProductsFit(products, l) || !guardRopeRopeSetRowsRows(store, l) {
		return false
	}
	mms := multiProducts(products)
	if len(mms) != 3 || !ropeKVGuard(store[1], mms) {
		return false
	}
	for _, mm := range mms {
		if ropeKVFormat(mm.Src[0].Type) {
			return false
		}
	}
	if _, ok := productRoles(mms, store[0], store[1], store[5]); !ok {
		return false
	}
	// Every workgroup reads all of the column while others store ROPE Q's result and the
	// caches: none may overlap it or any weights.
	for _, o := range []*tensor.Tensor{store[0], store[3], store[5]} {
		if overlapsMultiInputs(o, mms) {
			return false
		}
	}
	return l.MaxStorageBuffers == 0 || ropeKVBindings <= l.MaxStorageBuffers
}

// lowerMatMultiRope lowers the twelve nodes as one dispatch of mul_mat_multi.wgsl in the
// ROPE_KV form, two rows a workgroup.
func lowerMatMultiRope(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	products, store := multiRopeProducts(n)
	pairs := *l
	pairs.MatVecRows = 2
	ds, err := lowerMatVecMulti(products, &pairs)
	if err != nil {
		return nil, err
	}
	roles, ok := productRoles(multiProducts(products), store[0], store[1], store[5])
	if len(ds) != 1 || ds[0].Spec.Defines["ROWS"] != "2" || !ok {
		return nil, fmt.Errorf("vectorised ROPE_KV: %d dispatches, rows %s, roles %v", len(ds), ds[0].Spec.Defines["ROWS"], ok)
	}
	multi := ds[0]
	return []Dispatch{ropeKVForm(multi, store[0], store[1], store[3], store[5], roles, func(rot ropeKVRotation, kc, vc [4]uint32) any {
		return multiRopeKVParams{mulMatMultiParams: multi.Params.(mulMatMultiParams), Db: kc, Dc: vc, ropeKVRotation: rot}
	})}, nil
}
