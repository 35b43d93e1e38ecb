package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// PAD_REFLECT_1D answers false for paddings ggml itself forbids (negative, or as long as
// the row: the reflection would leave it) and for a result whose shape does not follow
// from them, so that a hostile node never reads outside its source.
func TestPadReflectBounds(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	pad := func(ne0 int64, p0, p1 int32) *tensor.Tensor {
		return node(tensor.OpPadReflect1d, f32(ne0, 3), []int32{p0, p1}, f32(7, 3))
	}
	require.True(t, Supports(pad(12, 3, 2), l))
	require.True(t, Supports(pad(19, 6, 6), l), "ne00 - 1 on each side")
	require.True(t, Supports(pad(7, 0, 0), l))
	for name, n := range map[string]*tensor.Tensor{
		"p0 the row's length": pad(14, 7, 0),
		"p1 past the row":     pad(16, 0, 9),
		"negative p0":         pad(6, -1, 0),
		"negative p1":         pad(5, 0, -2),
		"result too long":     pad(13, 3, 2),
		"result too short":    pad(11, 3, 2),
		"huge padding":        pad(7+1<<31, 1<<30, 1<<30),
	} {
		require.False(t, Supports(n, l), name)
	}
	q := pad(12, 3, 2)
	q.Src[0] = contiguous(tensor.F16, 7, 3)
	require.False(t, Supports(q, l), "F16 source")
}
