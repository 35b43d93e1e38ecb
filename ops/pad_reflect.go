package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// PAD_REFLECT_1D (ggml_pad_reflect_1d, the reflected padding of an audio encoder's
// frames before its STFT-like convolutions): dst[o, i1, i2, i3] = src0[j, i1, i2, i3]
// with j = o - p0 reflected about the first and the last element: -j before the row,
// 2 (ne00 - 1) - j past it; op_params p0, p1 (0 <= p < ne00, as ggml asks), dst ne0 =
// ne00 + p0 + p1. A copy: the CPU's result exactly. F32; any strides.

type padReflectParams struct {
	Ne, A, D [4]uint32 // dst's shape; src0, dst strides
	N        uint32
	P0, Len  uint32 // the padding before the row; the source row's length
}

func init() {
	describeFamily("PAD_REFLECT_1D", "F32", "any strides")
	register(tensor.OpPadReflect1d, family{supports: supportsPadReflect, lower: lowerPadReflect, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpPadReflect1d, f32(12, 3, 2), []int32{3, 2}, f32(7, 3, 2))}
	}})
}

func supportsPadReflect(t *tensor.Tensor, _ *Limits) bool {
	a := t.Src[0]
	if a == nil || a.Type != tensor.F32 || t.Type != tensor.F32 || !elementAligned(a) || !elementAligned(t) {
		return false
	}
	p0, p1 := int64(t.Params[0]), int64(t.Params[1])
	if p0 < 0 || p1 < 0 || p0 >= a.Ne[0] || p1 >= a.Ne[0] || t.Ne[0] != a.Ne[0]+p0+p1 {
		return false
	}
	return t.Ne[1] == a.Ne[1] && t.Ne[2] == a.Ne[2] && t.Ne[3] == a.Ne[3]
}

func lowerPadReflect(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a := t.Src[0]
	p := padReflectParams{Ne: dims(t), A: strides(a), D: strides(t), N: uint32(t.Elems()),
		P0: uint32(t.Params[0]), Len: uint32(a.Ne[0])}
	s := spec("pad_reflect", wgElementwise, p, nil, in("src0", a), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
