package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// ADD, SUB, MUL, DIV: dst = src0 op src1, src1 repeated over src0 (f32).

type binaryParams struct {
	Ne, A, Be, B, D [4]uint32 // dst shape; src0 strides; src1 shape, strides; dst strides
	N               uint32
}

var binarySymbol = map[tensor.Op]string{tensor.OpAdd: "+", tensor.OpSub: "-", tensor.OpMul: "*", tensor.OpDiv: "/"}

func init() {
	describeFamily("ADD, SUB, MUL, DIV", "F32", "src1 repeated over any dimension of src0; any strides; in place")
	for op := range binarySymbol {
		register(op, family{supports: supportsBinary, lower: lowerBinary, examples: func() []*tensor.Tensor {
			return []*tensor.Tensor{node(op, f32(4, 3), nil, f32(4, 3), f32(4))}
		}})
	}
}

func supportsBinary(t *tensor.Tensor, _ *Limits) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || t.Type != tensor.F32 || a.Type != tensor.F32 || b.Type != tensor.F32 || !tensor.SameShape(t, a) {
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
	s := spec("binary", wgElementwise, p, map[string]string{"OP": binarySymbol[t.Op]},
		in("src0", a), in("src1", b), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, b, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
