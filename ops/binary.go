package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// ADD, SUB, MUL, DIV: dst = src0 op src1, src1 repeated over src0; ADD1 adds a scalar
// src1. The type combinations of the CPU backend: all F32, all F16, F16 with F32 into F16
// or F32 (computed in f32, rounded once when stored).

type binaryParams struct {
	Ne, A, Be, B, D [4]uint32 // dst shape; src0 strides; src1 shape, strides; dst strides
	N               uint32
}

var binarySymbol = map[tensor.Op]string{tensor.OpAdd: "+", tensor.OpSub: "-", tensor.OpMul: "*", tensor.OpDiv: "/"}

// binaryTypes are the (src0, src1, dst) types the CPU backend computes.
var binaryTypes = map[[3]tensor.Type]bool{
	{tensor.F32, tensor.F32, tensor.F32}: true,
	{tensor.F16, tensor.F16, tensor.F16}: true,
	{tensor.F16, tensor.F32, tensor.F16}: true,
	{tensor.F16, tensor.F32, tensor.F32}: true,
}

func init() {
	describeFamily("ADD, SUB, MUL, DIV, ADD1", "F32; F16; F16 with F32 to F16 or F32",
		"src1 repeated over any dimension of src0 (ADD1: a scalar); any strides; in place")
	for op := range binarySymbol {
		register(op, family{supports: supportsBinary, lower: lowerBinary, examples: func() []*tensor.Tensor {
			h := func(ne ...int64) *tensor.Tensor { return contiguous(tensor.F16, ne...) }
			return []*tensor.Tensor{
				node(op, f32(4, 3), nil, f32(4, 3), f32(4)),
				node(op, h(4, 3), nil, h(4, 3), h(4)),
				node(op, h(4, 3), nil, h(4, 3), f32(4)),
				node(op, f32(4, 3), nil, h(4, 3), f32(4)),
			}
		}})
	}
	register(tensor.OpAdd1, family{supports: supportsBinary, lower: lowerBinary, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpAdd1, f32(4, 3), nil, f32(4, 3), f32(1))}
	}})
}

func supportsBinary(t *tensor.Tensor, _ *Limits) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || !binaryTypes[[3]tensor.Type{a.Type, b.Type, t.Type}] || !tensor.SameShape(t, a) {
		return false
	}
	if t.Op == tensor.OpAdd1 && b.Elems() != 1 {
		return false
	}
	for i := 0; i < 4; i++ {
		if b.Ne[i] == 0 || a.Ne[i]%b.Ne[i] != 0 {
			return false
		}
	}
	return elementAligned(a) && elementAligned(b) && elementAligned(t)
}

func lowerBinary(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a, b := t.Src[0], t.Src[1]
	p := binaryParams{Ne: dims(t), A: strides(a), Be: dims(b), B: strides(b), D: strides(t), N: uint32(t.Elems())}
	sym, ok := binarySymbol[t.Op]
	if !ok {
		sym = "+" // ADD1
	}
	s := spec("binary", wgElementwise, p, map[string]string{"OP": sym},
		in("src0", a), in("src1", b), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, b, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
