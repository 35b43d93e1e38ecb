package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// CPY, CONT, DUP: copy with conversion between F32, F16 and BF16, any strides on both sides.
// CPY writes into src1's memory (dst is a view of it); the two may differ in shape but
// not in element count.

type cpyParams struct {
	Ae, A, De, D [4]uint32 // src0 shape, strides; dst shape, strides
	N            uint32
}

func init() {
	describeFamily("CPY, CONT, DUP", "F32, F16, BF16 to F32, F16, BF16", "any strides on both sides, shapes may differ")
	register(tensor.OpCpy, family{supports: supportsCpy, lower: lowerCpy, examples: func() []*tensor.Tensor {
		ex := []*tensor.Tensor{node(tensor.OpCpy, contiguous(tensor.F16, 6), nil, f32(6), contiguous(tensor.F16, 6))}
		return append(ex, quantCopyExamples()...)
	}})
	register(tensor.OpCont, family{supports: supportsCpy, lower: lowerCpy, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{
			node(tensor.OpCont, f32(6), nil, contiguous(tensor.F16, 6)),
			node(tensor.OpCont, contiguous(tensor.F16, 6), nil, contiguous(tensor.F16, 6)),
			node(tensor.OpCont, contiguous(tensor.BF16, 6), nil, f32(6)),
			node(tensor.OpCont, f32(6), nil, contiguous(tensor.BF16, 6)),
		}
	}})
	register(tensor.OpDup, family{supports: supportsCpy, lower: lowerCpy, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpDup, f32(6), nil, f32(6))}
	}})
}

func isFloat(t tensor.Type) bool { return t == tensor.F32 || t == tensor.F16 }

// isFloatOrBF16 adds BF16 to isFloat, for the ops that read or write it (copies, rows,
// matrix weights).
func isFloatOrBF16(t tensor.Type) bool { return isFloat(t) || t == tensor.BF16 }

func supportsCpy(t *tensor.Tensor, _ *Limits) bool {
	a := t.Src[0]
	if a != nil && quantCopy(t) {
		return supportsQuantCopy(t)
	}
	if a == nil || !isFloatOrBF16(a.Type) || !isFloatOrBF16(t.Type) || a.Elems() != t.Elems() {
		return false
	}
	return elementAligned(a) && elementAligned(t)
}

func lowerCpy(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a := t.Src[0]
	if quantCopy(t) {
		return lowerQuantCopy(t, l)
	}
	p := cpyParams{Ae: dims(a), A: strides(a), De: dims(t), D: strides(t), N: uint32(t.Elems())}
	s := spec("cpy", wgElementwise, p, nil, in("src0", a), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
