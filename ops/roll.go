package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// ROLL (ggml_roll, the cyclic shift of vision encoders' windows): dst[i] = src0[(i - s)
// mod ne] in every dimension, op_params the shifts s0..s3 (|s_d| < ne_d). F32; any
// strides.

type rollParams struct {
	Ne, A, D [4]uint32 // shape; src0, dst strides
	N        uint32
	Shift    [4]uint32 // (ne_d - s_d) mod ne_d: the source index is (i_d + Shift_d) mod ne_d
}

func init() {
	describeFamily("ROLL", "F32", "any strides")
	register(tensor.OpRoll, family{supports: supportsRoll, lower: lowerRoll, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpRoll, f32(5, 4, 3, 2), []int32{2, -1, 0, 1}, f32(5, 4, 3, 2))}
	}})
}

func supportsRoll(t *tensor.Tensor, _ *Limits) bool {
	a := t.Src[0]
	if a == nil || a.Type != tensor.F32 || t.Type != tensor.F32 || !tensor.SameShape(a, t) || !elementAligned(a) || !elementAligned(t) {
		return false
	}
	for d := range 4 {
		s := int64(t.Params[d])
		if s >= t.Ne[d] || -s >= t.Ne[d] {
			return false
		}
	}
	return true
}

func lowerRoll(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a := t.Src[0]
	p := rollParams{Ne: dims(t), A: strides(a), D: strides(t), N: uint32(t.Elems())}
	for d := range 4 {
		p.Shift[d] = uint32(((t.Ne[d]-int64(t.Params[d]))%t.Ne[d] + t.Ne[d]) % t.Ne[d])
	}
	s := spec("roll", wgElementwise, p, nil, in("src0", a), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
