package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// GLU SWIGLU: fused (src0 holds a and b as the two halves of each row; op_params[1]
// swaps them) and split (a = src0, b = src1) forms; f32.

type gluParams struct {
	N, Ne0, Ne1, Ne2 uint32
	A0, A1, A2, A3   uint32
	B0, B1, B2, B3   uint32
	D0, D1, D2, D3   uint32
	AOff, BOff       uint32
}

func init() {
	describeFamily("GLU (SWIGLU)", "F32", "fused (swapped too) and split forms")
	register(tensor.OpGLU, family{supportsGLU, lowerGLU})
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
	ne, as, ds := dims(t), strides(a), strides(t)
	p := gluParams{
		N: uint32(t.Elems()), Ne0: ne[0], Ne1: ne[1], Ne2: ne[2],
		A0: as[0], A1: as[1], A2: as[2], A3: as[3],
		D0: ds[0], D1: ds[1], D2: ds[2], D3: ds[3],
	}
	defs := map[string]string{"SPLIT": "0"}
	operands := []wgslOperand{in("src0", a)}
	tensors := []*tensor.Tensor{a}
	if b == nil {
		p.B0, p.B1, p.B2, p.B3 = as[0], as[1], as[2], as[3]
		p.BOff = ne[0] * as[0]
		if t.Params[1] != 0 {
			p.AOff, p.BOff = p.BOff, 0
		}
	} else {
		defs["SPLIT"] = "1"
		bs := strides(b)
		p.B0, p.B1, p.B2, p.B3 = bs[0], bs[1], bs[2], bs[3]
		operands = append(operands, in("src1", b))
		tensors = append(tensors, b)
	}
	operands = append(operands, out("dst", t))
	tensors = append(tensors, t)
	s := spec("glu", wgElementwise, p, defs, operands...)
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
