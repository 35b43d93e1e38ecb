package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// The window ops refuse strides, paddings, dilations and pool windows past windowParamMax
// (a hostile graph's, whose kernels would overflow their positions or loop for billions
// of turns) and those below their minimum, and take the same nodes with sane values.
func TestWindowParamsBounded(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	big := int32(windowParamMax + 1)
	pool := func(k, s, p int32) *tensor.Tensor {
		out := (8+2*int64(p)-int64(k))/max(int64(s), 1) + 1
		if out < 1 {
			out = 1
		}
		return node(tensor.OpPool2d, f32(out, out, 2), []int32{poolAvg, k, k, s, s, p, p}, f32(8, 8, 2))
	}
	require.True(t, Supports(pool(3, 1, 1), l))
	require.False(t, Supports(pool(3, 1, big), l), "padding past the bound")
	require.False(t, Supports(pool(3, 0, 1), l), "a zero stride")
	require.False(t, Supports(pool(3, 1, -1), l), "a negative padding")
	conv := func(s, p, d int32) *tensor.Tensor {
		ow := convOut(8, 3, max(int64(s), 1), int64(p), int64(d))
		if ow < 1 {
			ow = 1
		}
		return node(tensor.OpConv2d, f32(ow, ow, 4, 1), []int32{s, s, p, p, d, d}, f32(3, 3, 2, 4), f32(8, 8, 2, 1))
	}
	require.True(t, Supports(conv(1, 1, 1), l))
	require.False(t, Supports(conv(1, 1, big), l), "dilation past the bound")
	require.False(t, Supports(conv(big, 1, 1), l), "stride past the bound")
	require.False(t, Supports(conv(1, 1, 0), l), "a zero dilation")
	im2col := func(s, p int32) *tensor.Tensor {
		ow := convOut(11, 3, max(int64(s), 1), int64(p), 1)
		if ow < 1 {
			ow = 1
		}
		return node(tensor.OpIm2col, f32(12, ow, 2), []int32{s, 0, p, 0, 1, 0, 0}, f32(3, 4), f32(11, 4, 2))
	}
	require.True(t, Supports(im2col(2, 1), l))
	require.False(t, Supports(im2col(2, big), l), "padding past the bound")
}
