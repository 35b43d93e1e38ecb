package ops

import (
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// SCALE (dst = src0 * scale + bias) and the UNARY ops SILU and GELU, f32, any strides.

type unaryParams struct {
	Ne, A, D    [4]uint32 // dst shape; src0, dst strides
	N           uint32
	Scale, Bias float32
}

var unaryKernels = map[tensor.UnaryOp]string{tensor.UnarySILU: "SILU", tensor.UnaryGELU: "GELU"}

func init() {
	describeFamily("SCALE", "F32", "scale and bias; any strides")
	describeFamily("UNARY (SILU, GELU)", "F32", "any strides; GELU matches the CPU's f16 table")
	register(tensor.OpScale, family{supports: supportsUnary, lower: lowerUnary, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpScale, f32(5), []int32{int32(f32bits(2))}, f32(5))}
	}})
	register(tensor.OpUnary, family{supports: supportsUnary, lower: lowerUnary, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{
			node(tensor.OpUnary, f32(5), []int32{int32(tensor.UnarySILU)}, f32(5)),
			node(tensor.OpUnary, f32(5), []int32{int32(tensor.UnaryGELU)}, f32(5)),
		}
	}})
}

func supportsUnary(t *tensor.Tensor, _ *Limits) bool {
	a := t.Src[0]
	if a == nil || t.Type != tensor.F32 || a.Type != tensor.F32 || !tensor.SameShape(t, a) {
		return false
	}
	if t.Op == tensor.OpUnary {
		if _, ok := unaryKernels[t.UnaryOp()]; !ok {
			return false
		}
	}
	return elementAligned(a) && elementAligned(t)
}

func lowerUnary(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a := t.Src[0]
	p := unaryParams{Ne: dims(t), A: strides(a), D: strides(t), N: uint32(t.Elems())}
	variant := "SCALE"
	if t.Op == tensor.OpScale {
		p.Scale = math.Float32frombits(uint32(t.Params[0]))
		p.Bias = math.Float32frombits(uint32(t.Params[1]))
	} else {
		variant = unaryKernels[t.UnaryOp()]
	}
	s := spec("unary", wgElementwise, p, map[string]string{variant: "1"}, in("src0", a), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
