package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// ropeNode is a ROPE node over src [ne0, 2, 3] of type ty: n_dims, mode, sections, n_offs,
// npos positions and, when nff > 0, nff frequency factors.
func ropeNode(ty tensor.Type, ne0 int64, nDims, mode int32, sec [4]int32, nOffs int32, npos, nff int64) *tensor.Tensor {
	params := []int32{0, nDims, mode, 0, 512, int32(f32bits(10000)), int32(f32bits(1)), 0, int32(f32bits(1)), int32(f32bits(32)), int32(f32bits(1)),
		sec[0], sec[1], sec[2], sec[3], nOffs}
	var ff *tensor.Tensor
	if nff > 0 {
		ff = f32(nff)
	}
	return node(tensor.OpRope, contiguous(ty, ne0, 2, 3), params, contiguous(ty, ne0, 2, 3), contiguous(tensor.I32, npos), ff)
}

// TestSupportsNormRope checks that supports accepts the norm and RoPE forms ggml's CPU
// backend computes and rejects the others.
func TestSupportsNormRope(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	eps := int32(f32bits(1e-6))
	sec := [4]int32{2, 1, 1, 0}
	vis := [4]int32{2, 2, 0, 0}
	mixed := ropeNode(tensor.F16, 8, 8, tensor.RopeNeox, sec, 0, 3, 0)
	mixed.Type = tensor.F32
	mixed.Nb = f32(8, 2, 3).Nb
	posApart := ropeNode(tensor.F32, 8, 8, tensor.RopeNeox, sec, 0, 3, 0)
	posApart.Src[1].Nb[0] = 8
	accepted := map[string]*tensor.Tensor{
		"rope normal offset":    ropeNode(tensor.F32, 16, 8, tensor.RopeNormal, sec, 4, 3, 4),
		"rope mrope":            ropeNode(tensor.F16, 8, 8, tensor.RopeMrope, sec, 0, 12, 4),
		"rope imrope offset":    ropeNode(tensor.F32, 12, 8, tensor.RopeImrope, sec, 2, 12, 0),
		"rope vision":           ropeNode(tensor.F32, 8, 4, tensor.RopeVision, vis, 0, 12, 4),
		"l2 norm":               node(tensor.OpL2Norm, f32(5, 3), []int32{eps}, f32(5, 3)),
		"group norm":            node(tensor.OpGroupNorm, f32(4, 3, 10), []int32{4, eps}, f32(4, 3, 10)),
		"group norm > channels": node(tensor.OpGroupNorm, f32(4, 3, 3), []int32{5, eps}, f32(4, 3, 3)),
	}
	for name, n := range accepted {
		require.True(t, Supports(n, l), name)
		_, err := Lower(n, l)
		require.NoError(t, err, name)
	}
	rejected := map[string]*tensor.Tensor{
		"rope unknown mode":        ropeNode(tensor.F32, 8, 8, 4, sec, 0, 3, 0),
		"rope odd mode":            ropeNode(tensor.F32, 8, 8, 1, sec, 0, 3, 0),
		"rope types differ":        mixed,
		"rope positions apart":     posApart,
		"rope odd n_dims":          ropeNode(tensor.F32, 8, 7, tensor.RopeNormal, sec, 0, 3, 0),
		"rope window past row":     ropeNode(tensor.F32, 8, 8, tensor.RopeNeox, sec, 2, 3, 0),
		"rope odd offset":          ropeNode(tensor.F32, 16, 8, tensor.RopeNeox, sec, 1, 3, 0),
		"rope few factors":         ropeNode(tensor.F32, 8, 8, tensor.RopeNormal, sec, 0, 3, 3),
		"rope few positions":       ropeNode(tensor.F32, 8, 8, tensor.RopeNormal, sec, 0, 2, 0),
		"mrope one position":       ropeNode(tensor.F32, 8, 8, tensor.RopeMrope, sec, 0, 3, 0),
		"mrope no sections":        ropeNode(tensor.F32, 8, 8, tensor.RopeMrope, [4]int32{0, 0, 0, 5}, 0, 12, 0),
		"mrope negative section":   ropeNode(tensor.F32, 8, 8, tensor.RopeMrope, [4]int32{4, -1, 1, 0}, 0, 12, 0),
		"mrope sections past row":  ropeNode(tensor.F32, 8, 8, tensor.RopeImrope, [4]int32{4, 4, 4, 0}, 0, 12, 0),
		"vision part of row":       ropeNode(tensor.F32, 8, 2, tensor.RopeVision, vis, 0, 12, 0),
		"vision offset":            ropeNode(tensor.F32, 12, 4, tensor.RopeVision, vis, 4, 12, 0),
		"vision half the factors":  ropeNode(tensor.F32, 8, 4, tensor.RopeVision, vis, 0, 12, 2),
		"l2 norm f16":              node(tensor.OpL2Norm, contiguous(tensor.F16, 5, 3), []int32{eps}, contiguous(tensor.F16, 5, 3)),
		"group norm no groups":     node(tensor.OpGroupNorm, f32(4, 3, 10), []int32{0, eps}, f32(4, 3, 10)),
		"group norm f16":           node(tensor.OpGroupNorm, contiguous(tensor.F16, 4, 3, 10), []int32{4, eps}, contiguous(tensor.F16, 4, 3, 10)),
		"group norm shapes differ": node(tensor.OpGroupNorm, f32(4, 3, 10), []int32{4, eps}, f32(4, 3, 5, 2)),
	}
	for name, n := range rejected {
		require.False(t, Supports(n, l), name)
		_, err := Lower(n, l)
		require.Error(t, err, name)
	}
	// One workgroup of at most 64 invocations loops at most 65535 times over its elements.
	small := &Limits{MaxBinding: 1 << 40, MaxGroupsPerDim: 65535, MaxGroupSize: 64}
	g := func(ne1 int64) *tensor.Tensor {
		return node(tensor.OpGroupNorm, f32(4096, ne1, 2), []int32{2, eps}, f32(4096, ne1, 2))
	}
	row := func(ne0 int64) *tensor.Tensor { return node(tensor.OpL2Norm, f32(ne0), []int32{eps}, f32(ne0)) }
	require.True(t, Supports(g(1023), small))
	require.False(t, Supports(g(1025), small))
	require.True(t, Supports(row(64*65535), small))
	require.False(t, Supports(row(64*65535+1), small))
}
