package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// projections are MUL_MATs of one activation of cols columns of k elements, product i
// with weights of type types[i] and rows[i] rows, the tensors at their own places of one
// buffer (the activation at 0, weights i at (1 + i) MiB, result i at (8 + i) MiB); with
// views, a RESHAPE of each result but the last follows it (llama's Q, V and K).
func projections(types []tensor.Type, rows []int64, k, cols int64, views bool) []*tensor.Tensor {
	x := placed(f32(k, cols), 0)
	var n []*tensor.Tensor
	for i, ty := range types {
		w := placed(contiguous(ty, k, rows[i]), uint64(1+i)<<20)
		m := placed(node(tensor.OpMulMat, f32(rows[i], cols), nil, w, x), uint64(8+i)<<20)
		n = append(n, m)
		if views && i < len(types)-1 {
			r := node(tensor.OpReshape, f32(rows[i], 1, cols), nil, m)
			r.Loc = m.Loc
			n = append(n, r)
		}
	}
	return n
}

// qkv is llama's Q, V and K projections with Q rows of Q's type and rows/4 of kv's.
func qkv(q, kv tensor.Type, rows, k, cols int64) []*tensor.Tensor {
	return projections([]tensor.Type{q, kv, kv}, []int64{rows, rows / 4, rows / 4}, k, cols, true)
}

// multiRow returns the fusion row for the nodes of n: as many MUL_MATs, with views
// between them or not.
func multiRow(t *testing.T, n []*tensor.Tensor) *Fusion {
	for i, f := range Fusions() {
		if f.Guard != nil && len(f.Ops) == len(n) && f.Ops[0].Has(tensor.OpMulMat) && f.Ops[len(n)-1].Has(tensor.OpMulMat) &&
			f.Ops[1].Has(n[1].Op) && f.Name != "mul_mat+mul_mat+glu" {
			return &Fusions()[i]
		}
	}
	t.Fatalf("no fusion row for %d nodes", len(n))
	return nil
}

// TestMatVecMultiGuard checks which MUL_MATs of one activation the rows
// mul_mat(+view)+mul_mat(...) fuse, and that the lowering binds every result as a written
// operand in the nodes' order, the last node's last, with each product's workgroups
// after the previous one's.
func TestMatVecMultiGuard(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	accepted := map[string][]*tensor.Tensor{
		"q4_k q, q6_k k and v":   projections([]tensor.Type{tensor.Q4_K, tensor.Q4_K, tensor.Q6_K}, []int64{64, 16, 16}, 256, 1, true),
		"f16 qkv, four columns":  qkv(tensor.F16, tensor.F16, 64, 128, 4),
		"q8_0 qkv adjacent":      projections([]tensor.Type{tensor.Q8_0, tensor.Q8_0, tensor.Q8_0}, []int64{32, 8, 8}, 64, 1, false),
		"iq4_xs q, q8_0 kv":      qkv(tensor.IQ4_XS, tensor.Q8_0, 32, 256, 8),
		"f32 and bf16":           projections([]tensor.Type{tensor.F32, tensor.BF16}, []int64{24, 40}, 64, 2, false),
		"pair of types":          projections([]tensor.Type{tensor.Q6_K, tensor.Q4_K}, []int64{32, 32}, 256, 1, true),
		"pair of different rows": projections([]tensor.Type{tensor.F16, tensor.F16}, []int64{64, 32}, 128, 3, false),
	}
	for name, n := range accepted {
		row := multiRow(t, n)
		require.True(t, row.Applies(n, l), name)
		off := *l
		off.MatMultiOff = true
		require.False(t, row.Applies(n, &off), "%s, Limits.MatMultiOff", name)
		ds, err := row.Lower(n, l)
		require.NoError(t, err, name)
		require.Len(t, ds, 1, name)
		d := ds[0]
		require.Equal(t, "mul_mat_multi", d.Spec.Kernel, name)
		var written, products []*tensor.Tensor
		for i, o := range d.Spec.Operands {
			if o.Written {
				written = append(written, d.Tensors[i])
			}
		}
		for _, m := range n {
			if m.Op == tensor.OpMulMat {
				products = append(products, m)
			}
		}
		require.Equal(t, products, written, name)
		require.Equal(t, row.Written(n), written, name)
		require.Same(t, n[len(n)-1], d.Tensors[len(d.Tensors)-1], name)
		p := d.Params.(mulMatMultiParams)
		rows := uint32(1)
		if d.Spec.Defines["ROWS"] == "2" {
			rows = 2
		}
		for i, m := range products {
			require.Equal(t, uint32(m.Ne[0]), p.M[i], name)
			require.Equal(t, p.Start[i]+(p.M[i]+rows-1)/rows, p.Start[i+1], name)
		}
		require.Equal(t, p.Start[len(products)], d.Grid[0]*d.Grid[1]*d.Grid[2], name)
	}

	rejected := map[string]func() []*tensor.Tensor{
		"the same weights twice": func() []*tensor.Tensor {
			n := qkv(tensor.Q4_K, tensor.Q4_K, 64, 256, 1)
			n[4].Src[0] = n[2].Src[0]
			return n
		},
		"different src1": func() []*tensor.Tensor {
			n := qkv(tensor.F16, tensor.F16, 64, 128, 1)
			n[4].Src[1] = placed(f32(128, 1), 5<<20)
			return n
		},
		"too many columns": func() []*tensor.Tensor { return qkv(tensor.F16, tensor.F16, 64, 128, 9) },
		"3-d weights": func() []*tensor.Tensor {
			n := projections([]tensor.Type{tensor.F16, tensor.F16}, []int64{16, 16}, 64, 2, false)
			n[1].Src[0] = placed(contiguous(tensor.F16, 64, 8, 2), 2<<20)
			return n
		},
		"the third reads the first": func() []*tensor.Tensor {
			// K = M = N = 8: the first result, reshaped, is the third's weights.
			n := projections([]tensor.Type{tensor.F32, tensor.F32, tensor.F32}, []int64{8, 8, 8}, 8, 8, true)
			r := node(tensor.OpReshape, f32(8, 8), nil, n[0])
			r.Loc = n[0].Loc
			n[4].Src[0] = r
			return n
		},
		"a result over src1": func() []*tensor.Tensor {
			n := qkv(tensor.F16, tensor.F16, 64, 128, 1)
			n[2].Loc = n[2].Src[1].Loc
			return n
		},
		"the last result over the first weights": func() []*tensor.Tensor {
			n := qkv(tensor.Q8_0, tensor.Q8_0, 64, 64, 1)
			n[4].Loc = n[0].Src[0].Loc
			return n
		},
		"the first result over the last weights": func() []*tensor.Tensor {
			n := projections([]tensor.Type{tensor.Q8_0, tensor.Q8_0}, []int64{32, 32}, 64, 1, false)
			n[0].Loc = n[1].Src[0].Loc
			return n
		},
		"results overlap": func() []*tensor.Tensor {
			n := qkv(tensor.F16, tensor.F16, 64, 128, 1)
			n[4].Loc.Addr = n[0].Loc.Addr + 128
			return n
		},
	}
	for name, f := range rejected {
		n := f()
		require.False(t, multiRow(t, n).Applies(n, l), name)
	}
	n := qkv(tensor.F16, tensor.F16, 64, 128, 1)
	few := *l
	few.MaxStorageBuffers = 6
	require.False(t, multiRow(t, n).Applies(n, &few), "7 storage bindings over a limit of 6")
}

// TestMatVecMultiCompiles builds the fused kernel for mixed formats of each kind (read a
// unit at a time, in pairs of eighths, as any eight elements), at one, four and eight
// columns, src1 read eight elements at a time and element by element.
func TestMatVecMultiCompiles(t *testing.T) {
	cache := newCompiler(t)
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	sets := [][]tensor.Type{
		{tensor.Q4_K, tensor.Q4_K, tensor.Q6_K},
		{tensor.F16, tensor.Q8_0, tensor.IQ4_XS},
		{tensor.BF16, tensor.F32},
	}
	for _, types := range sets {
		for _, cols := range []int64{1, 4, 8} {
			rows := []int64{32, 16, 16}[:len(types)]
			n := projections(types, rows, 256, cols, true)
			ds, err := multiRow(t, n).Lower(n, l)
			require.NoError(t, err)
			_, err = cache.Pipeline(ds[0].Spec)
			require.NoError(t, err, ds[0].Spec.Key())
		}
	}
	// src1 read element by element (quantized weights only)
	n := projections([]tensor.Type{tensor.Q4_0, tensor.Q5_K}, []int64{16, 8}, 256, 2, false)
	x := placed(padded(256, 2, 1), 0)
	n[0].Src[1], n[1].Src[1] = x, x
	row := multiRow(t, n)
	require.True(t, row.Applies(n, l))
	ds, err := row.Lower(n, l)
	require.NoError(t, err)
	require.Equal(t, "0", ds[0].Spec.Defines["VEC1"])
	_, err = cache.Pipeline(ds[0].Spec)
	require.NoError(t, err, ds[0].Spec.Key())
}
