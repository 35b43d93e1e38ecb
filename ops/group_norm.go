package ops

import (
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// GROUP_NORM (f32): the dim-2 channels of each dim-3 batch in groups of
// ceil(ne2 / op_params[0]) channels (the last group may hold fewer), each group normalised
// to zero mean and unit variance over all its ne0*ne1*channels elements; eps is
// op_params[1].

type groupNormParams struct {
	Ne, A, D [4]uint32 // dst shape; src0, dst strides
	// Channels is the channels of a group, Groups the groups that hold any channel.
	Channels, Groups uint32
	Eps              float32
}

func init() {
	describeFamily("GROUP_NORM", "F32", "any strides; in place")
	register(tensor.OpGroupNorm, family{supports: supportsGroupNorm, lower: lowerGroupNorm, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpGroupNorm, f32(3, 2, 5, 2), []int32{2, int32(f32bits(1e-6))}, f32(3, 2, 5, 2))}
	}})
}

// groupNormShape returns the channels of a group and the groups that hold any channel.
func groupNormShape(t *tensor.Tensor) (channels, groups int64) {
	channels = (t.Ne[2] + int64(t.Params[0]) - 1) / int64(t.Params[0])
	return channels, (t.Ne[2] + channels - 1) / channels
}

func supportsGroupNorm(t *tensor.Tensor, l *Limits) bool {
	a := t.Src[0]
	if a == nil || a.Type != tensor.F32 || t.Type != tensor.F32 || !tensor.SameShape(a, t) || t.Params[0] <= 0 {
		return false
	}
	channels, _ := groupNormShape(t)
	return elementAligned(a) && elementAligned(t) && reductionFits(t.Ne[0]*t.Ne[1]*channels, l)
}

func lowerGroupNorm(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a := t.Src[0]
	channels, groups := groupNormShape(t)
	p := groupNormParams{Ne: dims(t), A: strides(a), D: strides(t), Channels: uint32(channels), Groups: uint32(groups), Eps: t.ParamF32(1)}
	s := spec("group_norm", rowGroup(t.Ne[0]*t.Ne[1]*channels, l), p, nil, in("src0", a), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, t}, Params: p, Grid: grid1D(uint64(groups)*uint64(t.Ne[3]), l)}}, nil
}
