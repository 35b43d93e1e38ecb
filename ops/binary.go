package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// ADD, SUB, MUL, DIV: dst = src0 op src1, src1 repeated over src0 (f32).

type binaryParams struct {
	N, Ne0, Ne1, Ne2   uint32
	A0, A1, A2, A3     uint32
	Be0, Be1, Be2, Be3 uint32
	B0, B1, B2, B3     uint32
	D0, D1, D2, D3     uint32
}

var binarySymbol = map[tensor.Op]string{tensor.OpAdd: "+", tensor.OpSub: "-", tensor.OpMul: "*", tensor.OpDiv: "/"}

func init() {
	describeFamily("ADD, SUB, MUL, DIV", "F32", "src1 repeated over any dimension of src0; any strides; in place")
	for op := range binarySymbol {
		register(op, family{supportsBinary, lowerBinary})
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
	ne, as, be, bs, ds := dims(t), strides(a), dims(b), strides(b), strides(t)
	p := binaryParams{
		N: uint32(t.Elems()), Ne0: ne[0], Ne1: ne[1], Ne2: ne[2],
		A0: as[0], A1: as[1], A2: as[2], A3: as[3],
		Be0: be[0], Be1: be[1], Be2: be[2], Be3: be[3],
		B0: bs[0], B1: bs[1], B2: bs[2], B3: bs[3],
		D0: ds[0], D1: ds[1], D2: ds[2], D3: ds[3],
	}
	s := spec("binary", wgElementwise, p, map[string]string{"OP": binarySymbol[t.Op]},
		in("src0", a), in("src1", b), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, b, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
