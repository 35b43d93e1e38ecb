package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// GLU SWIGLU: fused (src0 holds a and b as the two halves of each row; op_params[1]
// swaps them) and split (a = src0, b = src1) forms; f32.

type gluParams struct {
	Ne, A, B, D   [4]uint32 // dst shape; a, b, dst strides
	N, AOff, BOff uint32
}

func init() {
	describeFamily("GLU (SWIGLU)", "F32", "fused (swapped too) and split forms")
	register(tensor.OpGLU, family{supports: supportsGLU, lower: lowerGLU, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{
			node(tensor.OpGLU, f32(4, 2), []int32{int32(tensor.GLUSwiGLU)}, f32(8, 2)),
			node(tensor.OpGLU, f32(4, 2), []int32{int32(tensor.GLUSwiGLU)}, f32(4, 2), f32(4, 2)),
		}
	}})
}

func supportsGLU(t *tensor.Tensor, _ *Limits) bool {
	a, b := t.Src[0], t.Src[1]
	if t.GLUOp() != tensor.GLUSwiGLU || a == nil || a.Type != tensor.F32 || t.Type != tensor.F32 || !elementAligned(a) || !elementAligned(t) {
		return false
	}
	if b == nil {
		return a.Ne[0] == 2*t.Ne[0] && a.Ne[1] == t.Ne[1] && a.Ne[2] == t.Ne[2] && a.Ne[3] == t.Ne[3]
	}
	return b.Type == tensor.F32 && tensor.SameShape(a, t) && tensor.SameShape(b, t) && elementAligned(b)
}

func lowerGLU(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a, b := t.Src[0], t.Src[1]
	p := gluParams{Ne: dims(t), A: strides(a), D: strides(t), N: uint32(t.Elems())}
	defs := map[string]string{"SPLIT": "0"}
	operands := []wgslOperand{in("src0", a)}
	tensors := []*tensor.Tensor{a}
	if b == nil {
		p.B = p.A
		p.BOff = p.Ne[0] * p.A[0]
		if t.Params[1] != 0 {
			p.AOff, p.BOff = p.BOff, 0
		}
	} else {
		defs["SPLIT"] = "1"
		p.B = strides(b)
		operands = append(operands, in("src1", b))
		tensors = append(tensors, b)
	}
	operands = append(operands, out("dst", t))
	tensors = append(tensors, t)
	s := spec("glu", wgElementwise, p, defs, operands...)
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
