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
	describeFamily("CPY, CONT, DUP", "F32, F16, BF16 to F32, F16, BF16; F32 to I32, I32 to F32, I32", "any strides on both sides, shapes may differ")
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
		i32 := func(ne ...int64) *tensor.Tensor { return contiguous(tensor.I32, ne...) }
		return []*tensor.Tensor{
			node(tensor.OpDup, f32(6), nil, f32(6)),
			node(tensor.OpDup, i32(6), nil, f32(6)),
			node(tensor.OpDup, f32(6), nil, i32(6)),
			node(tensor.OpDup, i32(6), nil, i32(6)),
		}
	}})
}

func isFloat(t tensor.Type) bool { return t == tensor.F32 || t == tensor.F16 }

// isFloatOrBF16 adds BF16 to isFloat, for the ops that read or write it (copies, rows,
// matrix weights).
func isFloatOrBF16(t tensor.Type) bool { return isFloat(t) || t == tensor.BF16 }

// cpyTypes reports whether a copy from type a into type d is computed: between F32, F16
// and BF16, and as the CPU backend, F32 to I32 (truncated), I32 to F32 and I32 to I32.
func cpyTypes(a, d tensor.Type) bool {
	if isFloatOrBF16(a) && isFloatOrBF16(d) {
		return true
	}
	return (a == tensor.I32 || d == tensor.I32) && (a == tensor.F32 || a == tensor.I32) && (d == tensor.F32 || d == tensor.I32)
}

func supportsCpy(t *tensor.Tensor, _ *Limits) bool {
	a := t.Src[0]
	if a != nil && quantCopy(t) {
		return supportsQuantCopy(t)
	}
	if a == nil || !cpyTypes(a.Type, t.Type) || a.Elems() != t.Elems() {
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
	defs := map[string]string{}
	if a.Type == tensor.I32 {
		defs["SRC_INT"] = "1"
	}
	if t.Type == tensor.I32 {
		defs["DST_INT"] = "1"
	}
	s := spec("cpy", wgElementwise, p, defs, in("src0", a), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
