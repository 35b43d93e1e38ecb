package ops

import (
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// SCALE (dst = src0 * scale + bias) and the UNARY ops SILU and GELU, f32, any strides.

type unaryParams struct {
	N, Ne0, Ne1, Ne2 uint32
	A0, A1, A2, A3   uint32
	D0, D1, D2, D3   uint32
	Scale, Bias      float32
}

var unaryKernels = map[tensor.UnaryOp]string{tensor.UnarySILU: "SILU", tensor.UnaryGELU: "GELU"}

func init() {
	describeFamily("SCALE", "F32", "scale and bias; any strides")
	describeFamily("UNARY (SILU, GELU)", "F32", "any strides; GELU matches the CPU's f16 table")
	register(tensor.OpScale, family{supportsUnary, lowerUnary})
	register(tensor.OpUnary, family{supportsUnary, lowerUnary})
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
	ne, as, ds := dims(t), strides(a), strides(t)
	p := unaryParams{
		N: uint32(t.Elems()), Ne0: ne[0], Ne1: ne[1], Ne2: ne[2],
		A0: as[0], A1: as[1], A2: as[2], A3: as[3],
		D0: ds[0], D1: ds[1], D2: ds[2], D3: ds[3],
	}
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
