package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// vkPair is llama's V and K projections of cols columns of k elements into m rows, with
// weights of type ty, the tensors at their own places of one buffer; with view, V's
// RESHAPE lies between the two MUL_MATs.
func vkPair(ty tensor.Type, m, k, cols int64, view bool) []*tensor.Tensor {
	x := placed(f32(k, cols), 0)
	v := placed(node(tensor.OpMulMat, f32(m, cols), nil, placed(contiguous(ty, k, m), 1<<20), x), 3<<20)
	kk := placed(node(tensor.OpMulMat, f32(m, cols), nil, placed(contiguous(ty, k, m), 2<<20), x), 4<<20)
	if !view {
		return []*tensor.Tensor{v, kk}
	}
	r := node(tensor.OpReshape, f32(m, 1, cols), nil, v)
	r.Loc = v.Loc
	return []*tensor.Tensor{v, r, kk}
}

// rowOf returns the fusion row for n: with a view between the MUL_MATs or without.
func rowOf(t *testing.T, n []*tensor.Tensor) *Fusion {
	if len(n) == 3 {
		return fusion(t, "mul_mat+view+mul_mat")
	}
	return fusion(t, "mul_mat+mul_mat")
}

// TestMatVecApartGuard checks which MUL_MAT pairs the mul_mat+mul_mat rows fuse, and that
// the lowering binds both results as written operands, the last node's last.
func TestMatVecApartGuard(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	accepted := map[string][]*tensor.Tensor{
		"f16 decode":          vkPair(tensor.F16, 64, 128, 1, true),
		"q4_k four columns":   vkPair(tensor.Q4_K, 32, 256, 4, true),
		"q8_0 adjacent":       vkPair(tensor.Q8_0, 32, 64, 1, false),
		"iq4_xs eight":        vkPair(tensor.IQ4_XS, 16, 256, 8, true),
		"f32 weights, n = 2":  vkPair(tensor.F32, 24, 64, 2, false),
		"bf16 weights, n = 3": vkPair(tensor.BF16, 24, 64, 3, true),
	}
	for name, n := range accepted {
		row := rowOf(t, n)
		require.True(t, row.Applies(n, l), name)
		ds, err := row.Lower(n, l)
		require.NoError(t, err, name)
		require.Len(t, ds, 1, name)
		d := ds[0]
		var written []*tensor.Tensor
		for i, o := range d.Spec.Operands {
			if o.Written {
				written = append(written, d.Tensors[i])
			}
		}
		last := n[len(n)-1]
		require.Equal(t, []*tensor.Tensor{n[0], last}, written, name)
		require.Same(t, last, d.Tensors[len(d.Tensors)-1], name)
		require.Equal(t, "1", d.Spec.Defines["DSTB"], name)
		require.Equal(t, "0", d.Spec.Defines["GLU"], name)
	}

	rejected := map[string]func() []*tensor.Tensor{
		"the same weights twice": func() []*tensor.Tensor {
			n := vkPair(tensor.Q4_K, 32, 256, 1, false)
			n[1].Src[0] = n[0].Src[0]
			return n
		},
		"different types": func() []*tensor.Tensor {
			n := vkPair(tensor.Q4_K, 32, 256, 1, true)
			n[2].Src[0] = placed(contiguous(tensor.Q6_K, 256, 32), 2<<20)
			return n
		},
		"different rows": func() []*tensor.Tensor {
			n := vkPair(tensor.F16, 64, 128, 1, false)
			n[1].Src[0] = placed(contiguous(tensor.F16, 128, 32), 2<<20)
			n[1].Ne[0], n[1].Nb = 32, f32(32, 1).Nb
			return n
		},
		"different src1": func() []*tensor.Tensor {
			n := vkPair(tensor.F16, 64, 128, 1, false)
			n[1].Src[1] = placed(f32(128, 1), 5<<20)
			return n
		},
		"too many columns": func() []*tensor.Tensor { return vkPair(tensor.F16, 64, 128, 9, true) },
		"the second reads the first": func() []*tensor.Tensor {
			// K = M = N = 8: the first result, reshaped, is the second's weights.
			x := placed(f32(8, 8), 0)
			m1 := placed(node(tensor.OpMulMat, f32(8, 8), nil, placed(f32(8, 8), 1<<20), x), 3<<20)
			r := node(tensor.OpReshape, f32(8, 8), nil, m1)
			r.Loc = m1.Loc
			return []*tensor.Tensor{m1, r, placed(node(tensor.OpMulMat, f32(8, 8), nil, r, x), 4<<20)}
		},
		"second result over src1": func() []*tensor.Tensor {
			n := vkPair(tensor.F16, 64, 128, 1, true)
			n[2].Loc = n[2].Src[1].Loc
			return n
		},
		"first result over the second weights": func() []*tensor.Tensor {
			n := vkPair(tensor.Q8_0, 32, 64, 1, false)
			n[0].Loc = n[1].Src[0].Loc
			return n
		},
		"results overlap": func() []*tensor.Tensor {
			n := vkPair(tensor.F16, 64, 128, 1, false)
			n[1].Loc.Addr = n[0].Loc.Addr + 128
			return n
		},
	}
	for name, f := range rejected {
		n := f()
		require.False(t, rowOf(t, n).Applies(n, l), name)
	}
}

// TestMatVecApartCompiles builds the fused kernel for F16 and for a quantized format of
// each kind (read a unit at a time, in pairs of eighths, and at eight columns).
func TestMatVecApartCompiles(t *testing.T) {
	cache := newCompiler(t)
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	for _, ty := range []tensor.Type{tensor.F16, tensor.Q4_K, tensor.Q8_0, tensor.IQ4_XS, tensor.Q6_K} {
		for _, cols := range []int64{1, 4, 8} {
			n := vkPair(ty, 16, 256, cols, true)
			ds, err := rowOf(t, n).Lower(n, l)
			require.NoError(t, err)
			_, err = cache.Pipeline(ds[0].Spec)
			require.NoError(t, err, ds[0].Spec.Key())
		}
	}
}
