package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// CPY, CONT, DUP: copy with conversion between F32 and F16, any strides on both sides.
// CPY writes into src1's memory (dst is a view of it); the two may differ in shape but
// not in element count.

type cpyParams struct {
	N              uint32
	Ae0, Ae1, Ae2  uint32
	A0, A1, A2, A3 uint32
	De0, De1, De2  uint32
	D0, D1, D2, D3 uint32
}

func init() {
	describeFamily("CPY, CONT, DUP", "F32, F16 to F32, F16", "any strides on both sides, shapes may differ")
	for _, op := range []tensor.Op{tensor.OpCpy, tensor.OpCont, tensor.OpDup} {
		register(op, family{supportsCpy, lowerCpy})
	}
}

func isFloat(t tensor.Type) bool { return t == tensor.F32 || t == tensor.F16 }

func supportsCpy(t *tensor.Tensor, _ *Limits) bool {
	a := t.Src[0]
	if a == nil || !isFloat(a.Type) || !isFloat(t.Type) || a.Elems() != t.Elems() {
		return false
	}
	return elementAligned(a) && elementAligned(t)
}

func lowerCpy(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a := t.Src[0]
	ae, as, de, ds := dims(a), strides(a), dims(t), strides(t)
	p := cpyParams{
		N:   uint32(t.Elems()),
		Ae0: ae[0], Ae1: ae[1], Ae2: ae[2], A0: as[0], A1: as[1], A2: as[2], A3: as[3],
		De0: de[0], De1: de[1], De2: de[2], D0: ds[0], D1: ds[1], D2: ds[2], D3: ds[3],
	}
	s := spec("cpy", wgElementwise, p, nil, in("src0", a), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
