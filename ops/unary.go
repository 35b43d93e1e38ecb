package ops

import (
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The element-wise ops of one source: every UNARY op, SQR, SQRT, LOG, SIN, COS, CLAMP,
// LEAKY_RELU, FILL (F32 or F16, the result of the source's type), SCALE and DIAG_MASK_INF
// (F32). One kernel (unary.wgsl) whose variant names the function applied; any strides on
// both sides, in place.

type unaryParams struct {
	Ne, A, D [4]uint32  // dst shape; src0, dst strides
	F        [4]float32 // the op's float parameters (see unaryFloats)
	N, K     uint32     // elements; DIAG_MASK_INF's n_past
}

// unaryFuncs names the kernel function of each UNARY op (unary.wgsl).
var unaryFuncs = map[tensor.UnaryOp]string{
	tensor.UnaryAbs: "op_abs", tensor.UnarySgn: "op_sgn", tensor.UnaryNeg: "op_neg",
	tensor.UnaryStep: "op_step", tensor.UnaryTanh: "op_tanh", tensor.UnaryELU: "op_elu",
	tensor.UnaryReLU: "op_relu", tensor.UnarySigmoid: "op_sigmoid", tensor.UnaryGELU: "gelu",
	tensor.UnaryGELUQuick: "gelu_quick", tensor.UnarySILU: "silu",
	tensor.UnaryHardSwish: "op_hardswish", tensor.UnaryHardSigmoid: "op_hardsigmoid",
	tensor.UnaryExp: "exp", tensor.UnaryExpM1: "op_expm1", tensor.UnarySoftPlus: "op_softplus",
	tensor.UnaryGELUErf: "gelu_erf", tensor.UnaryXIELU: "op_xielu", tensor.UnaryFloor: "floor",
	tensor.UnaryCeil: "ceil", tensor.UnaryRound: "op_round", tensor.UnaryTrunc: "trunc",
}

// unaryOpFuncs names the kernel function of the other ops of the family.
var unaryOpFuncs = map[tensor.Op]string{
	tensor.OpSqr: "op_sqr", tensor.OpSqrt: "sqrt", tensor.OpLog: "log", tensor.OpSin: "sin",
	tensor.OpCos: "cos", tensor.OpClamp: "op_clamp", tensor.OpLeakyReLU: "op_leaky_relu",
	tensor.OpFill: "op_fill", tensor.OpScale: "op_scale", tensor.OpDiagMaskInf: "DIAG_MASK",
}

// unaryF32Only are the ops of the family that the CPU backend computes in F32 only.
var unaryF32Only = map[tensor.Op]bool{tensor.OpScale: true, tensor.OpDiagMaskInf: true}

func init() {
	describeFamily("UNARY (ABS, SGN, NEG, STEP, TANH, ELU, RELU, SIGMOID, GELU, GELU_QUICK, SILU, HARDSWISH, HARDSIGMOID, EXP, EXPM1, SOFTPLUS, GELU_ERF, XIELU, FLOOR, CEIL, ROUND, TRUNC)",
		"F32, F16", "any strides; in place; GELU and GELU_QUICK match the CPU's f16 tables")
	describeFamily("SQR, SQRT, LOG, SIN, COS, CLAMP, LEAKY_RELU, FILL", "F32, F16", "any strides; in place")
	describeFamily("SCALE", "F32", "scale and bias; any strides; in place")
	describeFamily("DIAG_MASK_INF", "F32", "any strides; in place")
	register(tensor.OpUnary, family{supports: supportsUnary, lower: lowerUnary, examples: func() []*tensor.Tensor {
		var ex []*tensor.Tensor
		for op := range unaryFuncs {
			ex = append(ex, node(tensor.OpUnary, f32(5), []int32{int32(op)}, f32(5)))
		}
		h := contiguous(tensor.F16, 5)
		return append(ex, node(tensor.OpUnary, h, []int32{int32(tensor.UnaryGELU)}, contiguous(tensor.F16, 5)))
	}})
	for op := range unaryOpFuncs {
		register(op, family{supports: supportsUnary, lower: lowerUnary, examples: func() []*tensor.Tensor {
			ex := []*tensor.Tensor{node(op, f32(5, 3), []int32{int32(f32bits(2))}, f32(5, 3))}
			if !unaryF32Only[op] {
				ex = append(ex, node(op, contiguous(tensor.F16, 5), nil, contiguous(tensor.F16, 5)))
			}
			return ex
		}})
	}
}

func supportsUnary(t *tensor.Tensor, _ *Limits) bool {
	a := t.Src[0]
	if a == nil || a.Type != t.Type || !tensor.SameShape(t, a) || !elementAligned(a) || !elementAligned(t) {
		return false
	}
	if t.Type != tensor.F32 && (t.Type != tensor.F16 || unaryF32Only[t.Op]) {
		return false
	}
	switch t.Op {
	case tensor.OpUnary:
		_, ok := unaryFuncs[t.UnaryOp()]
		return ok
	case tensor.OpDiagMaskInf:
		return t.Params[0] >= 0
	}
	return true
}

// unaryFloats returns the float parameters of a node as the kernel reads them (p.F).
func unaryFloats(t *tensor.Tensor) [4]float32 {
	f := func(i int) float32 { return math.Float32frombits(uint32(t.Params[i])) }
	switch t.Op {
	case tensor.OpScale, tensor.OpClamp: // scale, bias; min, max
		return [4]float32{f(0), f(1)}
	case tensor.OpLeakyReLU, tensor.OpFill: // negative slope; value
		return [4]float32{f(0)}
	case tensor.OpUnary:
		if t.UnaryOp() == tensor.UnaryXIELU { // alpha_n, alpha_p, beta, eps
			return [4]float32{f(1), f(2), f(3), f(4)}
		}
	}
	return [4]float32{}
}

func lowerUnary(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a := t.Src[0]
	p := unaryParams{Ne: dims(t), A: strides(a), D: strides(t), F: unaryFloats(t), N: uint32(t.Elems())}
	fn := unaryOpFuncs[t.Op]
	if t.Op == tensor.OpUnary {
		fn = unaryFuncs[t.UnaryOp()]
	}
	defs := map[string]string{"OP": fn}
	if t.Op == tensor.OpDiagMaskInf {
		p.K = uint32(t.Params[0])
		defs = map[string]string{"DIAG_MASK": "1"}
	}
	s := spec("unary", wgElementwise, p, defs, in("src0", a), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
