package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// placed puts t at byte addr of one test buffer and returns it.
func placed(t *tensor.Tensor, addr uint64) *tensor.Tensor {
	t.Loc = tensor.Loc{Buffer: 1, Addr: 1<<40 + addr}
	return t
}

// addNormMul is the triple add = a + b, norm = op(add), mul = norm * w, the tensors at
// their own places of one buffer (a at 0, b at 64 KiB, w at 128 KiB, add at 192 KiB, norm
// at 256 KiB, mul at 320 KiB); a and add are [ne0, rows], b is bs and w ws.
func addNormMul(op tensor.Op, ne0, rows int64, bs, ws []int64) (a, b, w, add, norm, mul *tensor.Tensor) {
	a, b, w = placed(f32(ne0, rows), 0), placed(f32(bs...), 64<<10), placed(f32(ws...), 128<<10)
	add = placed(node(tensor.OpAdd, f32(ne0, rows), nil, a, b), 192<<10)
	norm = placed(node(op, f32(ne0, rows), []int32{int32(f32bits(1e-5))}, add), 256<<10)
	mul = placed(node(tensor.OpMul, f32(ne0, rows), nil, norm, w), 320<<10)
	return
}

// TestAddNormMulGuard checks which triples the add+norm+mul row fuses: the shapes, types
// and layouts its kernel computes, and only the aliasings it is safe for.
func TestAddNormMulGuard(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	row := fusion(t, "add+norm+mul")
	applies := func(add, norm, mul *tensor.Tensor) bool { return row.Applies([]*tensor.Tensor{add, norm, mul}, l) }

	accepted := map[string]func() (add, norm, mul *tensor.Tensor){
		"decode row": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			_, _, _, add, norm, mul := addNormMul(tensor.OpRMSNorm, 300, 1, []int64{300}, []int64{300})
			return add, norm, mul
		},
		"norm, b and w repeated": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			_, _, _, add, norm, mul := addNormMul(tensor.OpNorm, 33, 6, []int64{33, 2}, []int64{33})
			return add, norm, mul
		},
		"sum in place of a": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			a, _, _, add, norm, mul := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33}, []int64{33})
			add.Loc = a.Loc
			return add, norm, mul
		},
		"sum in place of b": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			_, b, _, add, norm, mul := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33, 4}, []int64{33})
			add.Loc = b.Loc
			return add, norm, mul
		},
		"result in place of the sum": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			_, _, _, add, norm, mul := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33}, []int64{33})
			mul.Loc = add.Loc
			return add, norm, mul
		},
		"result in place of a": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			a, _, _, add, norm, mul := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33}, []int64{33})
			mul.Loc = a.Loc
			return add, norm, mul
		},
		"norm in place of the sum (the scheduler checks that nothing reads the sum later)": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			_, _, _, add, norm, mul := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33}, []int64{33})
			norm.Loc = add.Loc
			mul.Loc = add.Loc
			return add, norm, mul
		},
		"result in place of the norm": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			_, _, _, add, norm, mul := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33}, []int64{33})
			mul.Loc = norm.Loc
			return add, norm, mul
		},
	}
	for name, f := range accepted {
		add, norm, mul := f()
		require.True(t, applies(add, norm, mul), name)
		ds, err := row.Lower([]*tensor.Tensor{add, norm, mul}, l)
		require.NoError(t, err, name)
		require.Len(t, ds, 1, name)
		require.Equal(t, []*tensor.Tensor{add.Src[0], add.Src[1], add, mul.Src[1], mul}, ds[0].Tensors, name)
		require.Equal(t, "1", ds[0].Spec.Defines["ADD"], name)
	}

	rejected := map[string]func() (add, norm, mul *tensor.Tensor){
		"F16 b": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			_, b, _, add, norm, mul := addNormMul(tensor.OpRMSNorm, 32, 2, []int64{32}, []int64{32})
			add.Src[1] = placed(contiguous(tensor.F16, 32), b.Loc.Addr-1<<40)
			return add, norm, mul
		},
		"sum rows apart": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			a, b, w, _, _, _ := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33}, []int64{33})
			add := placed(node(tensor.OpAdd, padded(33, 4, 3), nil, a, b), 192<<10)
			norm := placed(node(tensor.OpRMSNorm, f32(33, 4), []int32{int32(f32bits(1e-5))}, add), 256<<10)
			return add, norm, placed(node(tensor.OpMul, f32(33, 4), nil, norm, w), 320<<10)
		},
		"sum over a repeated b": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			_, b, _, add, norm, mul := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33}, []int64{33})
			add.Loc = b.Loc
			return add, norm, mul
		},
		"sum a row into a": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			a, _, _, add, norm, mul := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33}, []int64{33})
			add.Loc = tensor.Loc{Buffer: a.Loc.Buffer, Addr: a.Loc.Addr + 4*33}
			return add, norm, mul
		},
		"sum over the weight, same layout": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			_, _, w, add, norm, mul := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33}, []int64{33, 4})
			add.Loc = w.Loc
			return add, norm, mul
		},
		"result over a repeated weight": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			_, _, w, add, norm, mul := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33}, []int64{33})
			mul.Loc = w.Loc
			return add, norm, mul
		},
		"result partly over the sum": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			_, _, _, add, norm, mul := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33}, []int64{33})
			mul.Loc = tensor.Loc{Buffer: add.Loc.Buffer, Addr: add.Loc.Addr + 8}
			return add, norm, mul
		},
		"norm of another tensor": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			a, _, _, add, norm, mul := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33}, []int64{33})
			norm.Src[0] = a
			return add, norm, mul
		},
		"weight times the norm": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			_, _, w, add, norm, mul := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33}, []int64{33, 4})
			mul.Src[0], mul.Src[1] = w, norm
			return add, norm, mul
		},
		"the sum as the weight": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			_, _, _, add, norm, mul := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33}, []int64{33})
			mul.Src[1] = add
			return add, norm, mul
		},
		"L2 norm": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			_, _, _, add, norm, mul := addNormMul(tensor.OpL2Norm, 33, 4, []int64{33}, []int64{33})
			return add, norm, mul
		},
		"SUB": func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
			_, _, _, add, norm, mul := addNormMul(tensor.OpRMSNorm, 33, 4, []int64{33}, []int64{33})
			add.Op = tensor.OpSub
			return add, norm, mul
		},
	}
	for name, f := range rejected {
		add, norm, mul := f()
		require.False(t, applies(add, norm, mul), name)
	}
}
