package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

func TestCost(t *testing.T) {
	cases := []struct {
		name        string
		n           *tensor.Tensor
		bytes, flop uint64
	}{
		{"mat-vec Q4_0", node(tensor.OpMulMat, f32(64, 1), nil, contiguous(tensor.Q4_0, 256, 64), f32(256, 1)),
			64*256/32*18 + 256*4 + 64*4, 2 * 64 * 256},
		{"batched MUL_MAT", node(tensor.OpMulMat, f32(8, 4, 3), nil, f32(16, 8, 3), f32(16, 4, 3)),
			4 * (16*8*3 + 16*4*3 + 8*4*3), 2 * 16 * 8 * 4 * 3},
		{"MUL_MAT_ID two of eight experts", node(tensor.OpMulMatID, f32(32, 2, 1), nil,
			f32(64, 32, 8), f32(64, 1, 1), contiguous(tensor.I32, 2, 1)),
			2*64*32*4 + 64*4 + 2*4 + 32*2*4, 2 * 64 * 32 * 2},
		{"FLASH_ATTN_EXT", node(tensor.OpFlashAttnExt, f32(128, 8, 1), nil,
			f32(128, 1, 8), contiguous(tensor.F16, 128, 256, 2), contiguous(tensor.F16, 128, 256, 2)),
			4*128*8 + 4*128*8 + 2*2*128*256*2, 2 * (128 + 128) * 256 * 8},
		{"GET_ROWS reads the rows it takes", node(tensor.OpGetRows, f32(64, 3), nil,
			contiguous(tensor.F16, 64, 1000), contiguous(tensor.I32, 3)),
			3*64*2 + 3*4 + 3*64*4, 0},
		{"element-wise ADD", node(tensor.OpAdd, f32(10, 2), nil, f32(10, 2), f32(10, 1)),
			4 * (20 + 20 + 10), 20},
		{"a view moves nothing", node(tensor.OpView, f32(10), nil, f32(20)), 0, 0},
	}
	for _, c := range cases {
		b, f := Cost(c.n)
		require.Equal(t, c.bytes, b, c.name+" bytes")
		require.Equal(t, c.flop, f, c.name+" FLOP")
	}
	b, f := Cost(nil)
	require.Zero(t, b+f)
}

func TestCostFused(t *testing.T) {
	x, w := f32(64, 2), f32(64)
	norm := node(tensor.OpRMSNorm, f32(64, 2), nil, x)
	mul := node(tensor.OpMul, f32(64, 2), nil, norm, w)
	b, f := CostFused([]*tensor.Tensor{norm, mul}, nil)
	require.Equal(t, uint64(4*(128+64+128)), b, "x and w read, the result written")
	require.Equal(t, uint64(128+128), f)
	// The add+norm+mul triple also writes the sum, which later nodes read.
	a, y := f32(64, 2), f32(64)
	add := node(tensor.OpAdd, f32(64, 2), nil, a, y)
	norm = node(tensor.OpRMSNorm, f32(64, 2), nil, add)
	mul = node(tensor.OpMul, f32(64, 2), nil, norm, w)
	b, f = CostFused([]*tensor.Tensor{add, norm, mul}, []*tensor.Tensor{add, mul})
	require.Equal(t, uint64(4*(128+64+64+128+128)), b, "a, y and w read, the sum and the result written")
	require.Equal(t, uint64(128+128+128), f)
	b, f = CostFused(nil, nil)
	require.Zero(t, b+f)

	// K roped and stored into an F16 cache, V stored beside it: K [8, 2, 3] and V [16, 3]
	// F32, positions, frequency factors and two I64 and I32 index tensors read; three rows
	// of 16 halves written into each cache (not the caches' 6 rows read or written).
	n := ropeSetRowsExample(true)
	b, f = CostFused(n, nil)
	require.Equal(t, uint64(4*48+4*3+4*8+8*3+4*48+4*3+3*16*2+3*16*4), b)
	require.Equal(t, uint64(48), f, "the rope's element count")
}
