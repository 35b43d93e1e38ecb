package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// TestBF16AndFormatSupports checks supports_op at the edges of BF16 and of the ternary,
// FP4 and 1- and 2-bit formats: what the kernels compute is accepted, anything else (ops
// without a BF16 path, ggml CPU paths that do not exist, partial blocks) refused.
func TestBF16AndFormatSupports(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	bf := func(ne ...int64) *tensor.Tensor { return contiguous(tensor.BF16, ne...) }
	oddRows := bf(6, 4)
	oddRows.Nb[1] = 13 // rows not at whole elements
	transposed := bf(4, 6)
	transposed.Ne, transposed.Nb = [4]int64{6, 4, 1, 1}, [4]uint64{8, 2, 48, 48}
	accepts := map[string]*tensor.Tensor{
		"bf16 matmul transposed": node(tensor.OpMulMat, f32(4, 3), nil, transposed, f32(6, 3)),
		"bf16 to bf16 copy":      node(tensor.OpCpy, bf(6), nil, bf(6), bf(6)),
		"f16 to bf16 copy":       node(tensor.OpCpy, bf(6), nil, contiguous(tensor.F16, 6), bf(6)),
		"f16 rows into bf16":     node(tensor.OpSetRows, bf(4, 6), nil, contiguous(tensor.F16, 4, 3), contiguous(tensor.I32, 3)),
		// the F16 twins of rejected BF16 nodes below
		"f16 rope":         ropeExample(tensor.RopeNormal, tensor.F16, false),
		"f16 softmax mask": node(tensor.OpSoftMax, f32(7, 2), nil, f32(7, 2), contiguous(tensor.F16, 7, 2)),
	}
	for name, n := range accepts {
		require.True(t, Supports(n, l), name)
	}
	rejects := map[string]*tensor.Tensor{
		"bf16 rows stored":     node(tensor.OpSetRows, f32(4, 6), nil, bf(4, 3), contiguous(tensor.I32, 3)),
		"bf16 get_rows result": node(tensor.OpGetRows, bf(4, 3), nil, bf(4, 5), contiguous(tensor.I32, 3)),
		"bf16 matmul src1":     node(tensor.OpMulMat, f32(4, 2), nil, bf(16, 4), bf(16, 2)),
		"bf16 matmul result":   node(tensor.OpMulMat, bf(4, 2), nil, bf(16, 4), f32(16, 2)),
		"bf16 rope":            node(tensor.OpRope, bf(8, 2, 3), []int32{0, 8, 0}, bf(8, 2, 3), contiguous(tensor.I32, 3)),
		"bf16 add":             node(tensor.OpAdd, bf(4), nil, bf(4), bf(4)),
		"bf16 softmax mask":    node(tensor.OpSoftMax, f32(7, 2), nil, f32(7, 2), bf(7, 2)),
		"bf16 rows apart":      node(tensor.OpCont, f32(6, 4), nil, oddRows),
		"mxfp4 part block":     node(tensor.OpMulMat, f32(4, 2), nil, quantPart(tensor.MXFP4, 48), f32(48, 2)),
		"nvfp4 half block":     node(tensor.OpGetRows, f32(32, 2), nil, quantPart(tensor.NVFP4, 32), contiguous(tensor.I32, 2)),
		"q1_0 part block":      node(tensor.OpMulMat, f32(4, 2), nil, quantPart(tensor.Q1_0, 64), f32(64, 2)),
		"tq1_0 rows apart":     node(tensor.OpMulMat, f32(4, 2), nil, quantApart(tensor.TQ1_0), f32(256, 2)),
		"q2_0 rows apart":      node(tensor.OpGetRows, f32(64, 2), nil, quantApart(tensor.Q2_0), contiguous(tensor.I32, 2)),
		"tq2_0 result":         node(tensor.OpGetRows, contiguous(tensor.TQ2_0, 256, 2), nil, contiguous(tensor.TQ2_0, 256, 4), contiguous(tensor.I32, 2)),
		"mxfp4 copy to f32":    node(tensor.OpCpy, f32(32, 4), nil, contiguous(tensor.MXFP4, 32, 4), f32(32, 4)),
		"f32 copy into q1_0":   node(tensor.OpCpy, contiguous(tensor.Q1_0, 128, 2), nil, f32(128, 2), contiguous(tensor.Q1_0, 128, 2)),
		"f32 rows into nvfp4":  node(tensor.OpSetRows, contiguous(tensor.NVFP4, 64, 6), nil, f32(64, 3), contiguous(tensor.I32, 3)),
	}
	for name, n := range rejects {
		require.False(t, Supports(n, l), name)
		_, err := Lower(n, l)
		require.Error(t, err, name)
	}
}

// quantPart returns four rows of type ty whose length ne0 is not a whole number of blocks.
func quantPart(ty tensor.Type, ne0 int64) *tensor.Tensor {
	x := contiguous(ty, int64(ty.BlockElems())*2, 4)
	x.Ne[0] = ne0
	return x
}

// quantApart returns four rows of one block of type ty that lie half a block apart.
func quantApart(ty tensor.Type) *tensor.Tensor {
	x := contiguous(ty, int64(ty.BlockElems()), 4)
	x.Nb[1] = uint64(ty.Size()) * 3 / 2
	x.Nb[2], x.Nb[3] = x.Nb[1]*4, x.Nb[1]*4
	return x
}
