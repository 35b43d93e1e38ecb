package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// SET_ROWS: dst[:, rows[i1, i2 % ne11, i3 % ne12], i2, i3] = src0[:, i1, i2, i3], where dst
// is a view of src2 (the destination base); src0 F32 or F16, rows I32 or I64, dst F32, F16 or BF16.

type setRowsParams struct {
	Ne, A, Be, B, D [4]uint32 // src0 shape, strides; rows shape, strides; dst strides
	N               uint32
	Rows            uint32 // dst's rows: a row whose index is outside [0, Rows) is not written
}

func init() {
	describeFamily("SET_ROWS", "F32, F16 to F32, F16, BF16; I32, I64 indices", "indices broadcast over dims 2, 3")
	register(tensor.OpSetRows, family{supports: supportsSetRows, lower: lowerSetRows, examples: func() []*tensor.Tensor {
		return append([]*tensor.Tensor{
			node(tensor.OpSetRows, contiguous(tensor.F16, 4, 6), nil, f32(4, 3), contiguous(tensor.I64, 3)),
			node(tensor.OpSetRows, f32(4, 6), nil, f32(4, 3), contiguous(tensor.I32, 3)),
			node(tensor.OpSetRows, contiguous(tensor.BF16, 4, 6), nil, f32(4, 3), contiguous(tensor.I64, 3)),
		}, quantSetRowsExamples()...)
	}})
}

func supportsSetRows(t *tensor.Tensor, _ *Limits) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || !isFloat(a.Type) || !(isFloatOrBF16(t.Type) || quantWriteRows(t)) || (b.Type != tensor.I32 && b.Type != tensor.I64) {
		return false
	}
	if a.Ne[0] != t.Ne[0] || a.Ne[2] != t.Ne[2] || a.Ne[3] != t.Ne[3] || b.Ne[0] != a.Ne[1] {
		return false
	}
	if b.Ne[1] == 0 || b.Ne[2] == 0 || a.Ne[2]%b.Ne[1] != 0 || a.Ne[3]%b.Ne[2] != 0 {
		return false
	}
	return elementAligned(a) && elementAligned(b) && elementAligned(t)
}

func lowerSetRows(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a, b := t.Src[0], t.Src[1]
	if t.Type.Quantized() {
		return lowerQuantSetRows(t, l)
	}
	p := setRowsParams{Ne: dims(a), A: strides(a), Be: dims(b), B: strides(b), D: strides(t), N: uint32(a.Elems()), Rows: uint32(t.Ne[1])}
	s := spec("set_rows", wgElementwise, p, nil, in("src0", a), in("src1", b), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, b, t}, Params: p, Grid: gridElems(a.Elems(), l)}}, nil
}
