package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// ADD_ID (ggml_add_id, the per-expert bias of a mixture of experts): dst[i0, i1, i2, i3] =
// src0[i0, i1, i2, i3] + src1[i0, ids[i1, i2]], f32, ids I32; an id outside src1's rows
// is clamped to them (ggml asserts it is inside). Any strides; in place.

type addIDParams struct {
	Ne, A, B, I, D [4]uint32 // dst shape; src0, src1, ids, dst strides
	N              uint32
	Rows           uint32 // src1's rows
}

func init() {
	describeFamily("ADD_ID", "F32; I32 ids", "src1 row chosen per (i1, i2) by ids; any strides; in place")
	register(tensor.OpAddID, family{supports: supportsAddID, lower: lowerAddID, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpAddID, f32(5, 2, 3), nil, f32(5, 2, 3), f32(5, 4), contiguous(tensor.I32, 2, 3))}
	}})
}

func supportsAddID(t *tensor.Tensor, _ *Limits) bool {
	a, b, ids := t.Src[0], t.Src[1], t.Src[2]
	if a == nil || b == nil || ids == nil || t.Type != tensor.F32 || a.Type != tensor.F32 || b.Type != tensor.F32 ||
		ids.Type != tensor.I32 || !tensor.SameShape(a, t) {
		return false
	}
	if b.Ne[0] != a.Ne[0] || b.Ne[1] == 0 || ids.Ne[0] != a.Ne[1] || ids.Ne[1] != a.Ne[2] {
		return false
	}
	return elementAligned(a) && elementAligned(b) && elementAligned(ids) && elementAligned(t)
}

func lowerAddID(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a, b, ids := t.Src[0], t.Src[1], t.Src[2]
	p := addIDParams{Ne: dims(t), A: strides(a), B: strides(b), I: strides(ids), D: strides(t), N: uint32(t.Elems()), Rows: uint32(b.Ne[1])}
	s := spec("add_id", wgElementwise, p, nil, in("src0", a), in("src1", b), in("ids", ids), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, b, ids, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
