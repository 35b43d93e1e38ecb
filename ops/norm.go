package ops

import "math"

// RMS_NORM and NORM over rows (dim 0), f32, eps in op_params[0].

type normParams struct {
	Rows, Ne0, Ne1, Ne2 uint32
	A0, A1, A2, A3      uint32
	D0, D1, D2, D3      uint32
	Eps                 float32
}

func init() {
	describeFamily("RMS_NORM, NORM", "F32", "any strides; in place")
	register(OpRMSNorm, family{supportsNorm, lowerNorm})
	register(OpNorm, family{supportsNorm, lowerNorm})
}

func supportsNorm(t *Tensor, _ *Limits) bool {
	a := t.Src[0]
	return a != nil && a.Type == F32 && t.Type == F32 && SameShape(a, t) && elementAligned(a) && elementAligned(t)
}

func lowerNorm(t *Tensor, l *Limits) ([]Dispatch, error) {
	a := t.Src[0]
	ne, as, ds := dims(t), strides(a), strides(t)
	rows := uint64(ne[1]) * uint64(ne[2]) * uint64(ne[3])
	p := normParams{
		Rows: uint32(rows), Ne0: ne[0], Ne1: ne[1], Ne2: ne[2],
		A0: as[0], A1: as[1], A2: as[2], A3: as[3],
		D0: ds[0], D1: ds[1], D2: ds[2], D3: ds[3],
		Eps: math.Float32frombits(uint32(t.Params[0])),
	}
	defs := map[string]string{"RMS": "0"}
	if t.Op == OpRMSNorm {
		defs["RMS"] = "1"
	}
	s := spec("norm", wgRow, p, defs, in("src0", a), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*Tensor{a, t}, Params: p, Grid: grid1D(rows, l)}}, nil
}
