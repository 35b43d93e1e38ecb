package ops

import (
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// GLU: dst = act(a) * b for REGLU, GEGLU, SWIGLU, SWIGLU_OAI (alpha, limit), GEGLU_ERF,
// GEGLU_QUICK and SWIGLU_CLAMP (limit); fused (src0 holds a and b as the two halves of
// each row; op_params[1] swaps them) and split (a = src0, b = src1) forms; F32 and F16
// (SWIGLU_OAI F32 only, as the CPU backend).

type gluParams struct {
	Ne, A, B, D   [4]uint32 // dst shape; a, b, dst strides
	F             [4]float32
	N, AOff, BOff uint32
}

// gluFuncs names the kernel function of each GLU op (glu.wgsl).
var gluFuncs = map[tensor.GLUOp]string{
	tensor.GLUReGLU: "glu_reglu", tensor.GLUGeGLU: "glu_geglu", tensor.GLUSwiGLU: "glu_swiglu",
	tensor.GLUSwiGLUOAI: "glu_swiglu_oai", tensor.GLUGeGLUErf: "glu_geglu_erf",
	tensor.GLUGeGLUQuick: "glu_geglu_quick", tensor.GLUSwiGLUClamp: "glu_swiglu_clamp",
}

func init() {
	describeFamily("GLU (REGLU, GEGLU, SWIGLU, SWIGLU_OAI, GEGLU_ERF, GEGLU_QUICK, SWIGLU_CLAMP)", "F32, F16 (SWIGLU_OAI F32)",
		"fused (swapped too) and split forms; any strides")
	register(tensor.OpGLU, family{supports: supportsGLU, lower: lowerGLU, examples: func() []*tensor.Tensor {
		var ex []*tensor.Tensor
		for op := range gluFuncs {
			ex = append(ex, node(tensor.OpGLU, f32(4, 2), []int32{int32(op)}, f32(8, 2)))
		}
		h := func(ne ...int64) *tensor.Tensor { return contiguous(tensor.F16, ne...) }
		return append(ex,
			node(tensor.OpGLU, f32(4, 2), []int32{int32(tensor.GLUSwiGLU)}, f32(4, 2), f32(4, 2)),
			node(tensor.OpGLU, h(4, 2), []int32{int32(tensor.GLUGeGLU), 1}, h(8, 2)),
			node(tensor.OpGLU, h(4, 2), []int32{int32(tensor.GLUReGLU)}, h(4, 2), h(4, 2)),
		)
	}})
}

func supportsGLU(t *tensor.Tensor, _ *Limits) bool {
	a, b := t.Src[0], t.Src[1]
	if _, ok := gluFuncs[t.GLUOp()]; !ok || a == nil || a.Type != t.Type || !elementAligned(a) || !elementAligned(t) {
		return false
	}
	if t.Type != tensor.F32 && (t.Type != tensor.F16 || t.GLUOp() == tensor.GLUSwiGLUOAI) {
		return false
	}
	if b == nil {
		return a.Ne[0] == 2*t.Ne[0] && a.Ne[1] == t.Ne[1] && a.Ne[2] == t.Ne[2] && a.Ne[3] == t.Ne[3]
	}
	return b.Type == t.Type && tensor.SameShape(a, t) && tensor.SameShape(b, t) && elementAligned(b)
}

func lowerGLU(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a, b := t.Src[0], t.Src[1]
	f := func(i int) float32 { return math.Float32frombits(uint32(t.Params[i])) }
	p := gluParams{Ne: dims(t), A: strides(a), D: strides(t), N: uint32(t.Elems()), F: [4]float32{f(2), f(3)}}
	defs := map[string]string{"SPLIT": "0", "OP": gluFuncs[t.GLUOp()]}
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
