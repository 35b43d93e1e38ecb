package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// TestQuantCopySupports checks that supports_op accepts exactly the quantized copies the
// kernels implement.
func TestQuantCopySupports(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30}
	cpy := func(src, dst *tensor.Tensor) *tensor.Tensor { return node(tensor.OpCpy, dst, nil, src, dst) }
	setRows := func(q tensor.Type, src *tensor.Tensor) *tensor.Tensor {
		return node(tensor.OpSetRows, contiguous(q, src.Ne[0], 6), nil, src, contiguous(tensor.I64, src.Ne[1]))
	}
	for _, q := range []tensor.Type{tensor.Q8_0, tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.IQ4_NL} {
		require.True(t, Supports(cpy(f32(64, 3), contiguous(q, 64, 3)), l), "CPY f32 -> %s", q)
		require.True(t, Supports(cpy(contiguous(tensor.F16, 96), contiguous(q, 32, 3)), l), "CPY f16 -> %s", q)
		require.True(t, Supports(setRows(q, f32(64, 3)), l), "SET_ROWS f32 -> %s", q)
		require.True(t, Supports(setRows(q, contiguous(tensor.F16, 32, 3)), l), "SET_ROWS f16 -> %s", q)
		// the same type (a byte copy in ggml) and CONT, DUP of quantized tensors: not here
		require.False(t, Supports(cpy(contiguous(q, 64, 3), contiguous(q, 64, 3)), l), "CPY %s -> %s", q, q)
		cont := node(tensor.OpCont, contiguous(q, 64, 3), nil, contiguous(q, 64, 3))
		require.False(t, Supports(cont, l), "CONT %s", q)
		// a destination whose rows do not start at whole blocks
		odd := contiguous(q, 64, 3)
		odd.Nb[1]++
		require.False(t, Supports(cpy(f32(64, 3), odd), l), "CPY f32 -> %s with a row stride of a partial block", q)
		// from F32 or F16 only
		require.False(t, Supports(cpy(contiguous(tensor.I32, 64, 3), contiguous(q, 64, 3)), l))
		require.False(t, Supports(cpy(contiguous(tensor.Q8_0, 64, 3), contiguous(q, 64, 3)), l))
	}
	for _, q := range []tensor.Type{tensor.Q8_0, tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1} {
		require.True(t, Supports(cpy(contiguous(q, 64, 3), f32(64, 3)), l), "CPY %s -> f32", q)
		require.True(t, Supports(cpy(contiguous(q, 64, 3), contiguous(tensor.F16, 192)), l), "CPY %s -> f16", q)
		require.False(t, Supports(cpy(contiguous(q, 64, 3), contiguous(tensor.I32, 64, 3)), l), "CPY %s -> i32", q)
	}
	// types without a quantization routine, and k-quant sources
	for _, q := range []tensor.Type{tensor.Q4_K, tensor.Q6_K, tensor.IQ4_XS, tensor.Q8_1} {
		require.False(t, Supports(cpy(f32(256, 3), contiguous(q, 256, 3)), l), "CPY f32 -> %s", q)
		require.False(t, Supports(setRows(q, f32(256, 3)), l), "SET_ROWS f32 -> %s", q)
	}
	require.False(t, Supports(cpy(contiguous(tensor.Q4_K, 256, 3), f32(256, 3)), l))
}
