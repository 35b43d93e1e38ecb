package ops

import (
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// ROPE in the NORMAL and NEOX modes with YaRN scaling and optional frequency factors
// (src2); src0 and dst F32 or F16 of the same type, positions I32 (src1).

// Rope modes (op_params[2]).
const (
	RopeNormal = 0
	RopeNeox   = 2
)

type ropeParams struct {
	Ne, A, D              [4]uint32 // dst shape; src0, dst strides
	N, NDims, NOffs       uint32
	ThetaScale, FreqScale float32
	ExtFactor, AttnFactor float32
	Corr0, Corr1          float32
}

func init() {
	describeFamily("ROPE", "F32, F16", "NORMAL and NEOX modes, YaRN, frequency factors; in place")
	register(tensor.OpRope, family{supports: supportsRope, lower: lowerRope, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{ropeExample(RopeNormal, tensor.F32, false), ropeExample(RopeNeox, tensor.F16, true)}
	}})
}

// ropeExample is a ROPE node of the given mode and type, with frequency factors if ff.
func ropeExample(mode int32, ty tensor.Type, ff bool) *tensor.Tensor {
	var f *tensor.Tensor
	if ff {
		f = f32(4)
	}
	params := []int32{0, 8, mode, 0, 512, int32(f32bits(10000)), int32(f32bits(1)), 0, int32(f32bits(1)), int32(f32bits(32)), int32(f32bits(1))}
	return node(tensor.OpRope, contiguous(ty, 8, 2, 3), params, contiguous(ty, 8, 2, 3), contiguous(tensor.I32, 3), f)
}

func supportsRope(t *tensor.Tensor, _ *Limits) bool {
	a, pos, ff := t.Src[0], t.Src[1], t.Src[2]
	mode, nDims, nOffs := t.Params[2], t.Params[1], t.Params[15]
	if a == nil || pos == nil || !isFloat(a.Type) || a.Type != t.Type || pos.Type != tensor.I32 || !tensor.SameShape(a, t) {
		return false
	}
	if mode != RopeNormal && mode != RopeNeox {
		return false
	}
	if nDims <= 0 || nDims%2 != 0 || nOffs < 0 || nOffs%2 != 0 || int64(nDims+nOffs) > a.Ne[0] || a.Ne[0]%2 != 0 {
		return false
	}
	if pos.Ne[0] < a.Ne[2] || !pos.Contiguous() {
		return false
	}
	if ff != nil && (ff.Type != tensor.F32 || ff.Ne[0] < int64(nDims/2) || !ff.Contiguous()) {
		return false
	}
	return elementAligned(a) && elementAligned(t)
}

// yarnCorrDim is the dimension at which the rotation count over n_ctx_orig positions is nRot.
func yarnCorrDim(nDims, nCtxOrig int32, nRot, base float32) float32 {
	return float32(nDims) * float32(math.Log(float64(float32(nCtxOrig)/(nRot*2*math.Pi)))) / (2 * float32(math.Log(float64(base))))
}

func lowerRope(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a, pos, ff := t.Src[0], t.Src[1], t.Src[2]
	nDims, nCtxOrig := t.Params[1], t.Params[4]
	freqBase, freqScale := t.ParamF32(5), t.ParamF32(6)
	betaFast, betaSlow := t.ParamF32(9), t.ParamF32(10)
	corr0 := float32(math.Max(0, math.Floor(float64(yarnCorrDim(nDims, nCtxOrig, betaFast, freqBase)))))
	corr1 := float32(math.Min(float64(nDims-1), math.Ceil(float64(yarnCorrDim(nDims, nCtxOrig, betaSlow, freqBase)))))
	p := ropeParams{
		Ne: dims(t), A: strides(a), D: strides(t),
		N: uint32(t.Elems() / 2), NDims: uint32(nDims), NOffs: uint32(t.Params[15]),
		ThetaScale: float32(math.Pow(float64(freqBase), -2.0/float64(nDims))),
		FreqScale:  freqScale, ExtFactor: t.ParamF32(7), AttnFactor: t.ParamF32(8),
		Corr0: corr0, Corr1: corr1,
	}
	defs := map[string]string{"NEOX": "0", "FREQ_FACTORS": "0"}
	if t.Params[2] == RopeNeox {
		defs["NEOX"] = "1"
	}
	operands := []wgslOperand{in("src0", a), in("pos", pos)}
	tensors := []*tensor.Tensor{a, pos}
	if ff != nil {
		defs["FREQ_FACTORS"] = "1"
		operands = append(operands, in("ff", ff))
		tensors = append(tensors, ff)
	}
	operands = append(operands, out("dst", t))
	tensors = append(tensors, t)
	s := spec("rope", wgElementwise, p, defs, operands...)
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: gridElems(t.Elems()/2, l)}}, nil
}
