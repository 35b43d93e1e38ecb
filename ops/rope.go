package ops

import (
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// ROPE in every mode of ggml 0.25.1 (op_params[2]): NORMAL (pairs of neighbours), NEOX
// (pairs half the rotated width apart), MROPE and IMROPE (NEOX pairs whose angle takes
// one of four positions per token by section, contiguous or interleaved) and VISION (the
// whole row rotated, pairs n_dims apart, the angle restarting at each section). YaRN
// scaling, optional frequency factors (src2), rotated dims at an offset (op_params[15]);
// src0 and dst F32 or F16 of the same type, any element-aligned strides, positions I32
// (src1, four per token for the multi-section modes).

// ropeParams are the kernel's parameters.
type ropeParams struct {
	Ne, A, D [4]uint32 // dst shape; src0, dst strides
	// Sec is the four section widths of the multi-section modes (pair slots); Reset[k]
	// is 1 where the angle of section k restarts at the section's first slot (VISION).
	Sec, Reset [4]uint32
	N          uint32 // pair slots of the whole tensor (ne0/2 per row)
	// NDims and NOffs are op_params[1] and [15]; NRot the rotated pair slots of a row and
	// Partner the distance from a rotated pair's first element to its second.
	NDims, NOffs, NRot, Partner uint32
	ThetaScale, FreqScale       float32
	ExtFactor                   float32
	// MScale multiplies cos and sin: attn_factor, times YaRN's magnitude correction when
	// ext_factor is not 0.
	MScale       float32
	Corr0, Corr1 float32
}

func init() {
	describeFamily("ROPE", "F32, F16", "NORMAL, NEOX, MROPE, IMROPE and VISION modes, YaRN, frequency factors, rotated dims at an offset; any strides; in place")
	register(tensor.OpRope, family{supports: supportsRope, lower: lowerRope, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{
			ropeExample(tensor.RopeNormal, tensor.F32, false), ropeExample(tensor.RopeNeox, tensor.F16, true),
			ropeExample(tensor.RopeMrope, tensor.F32, true), ropeExample(tensor.RopeImrope, tensor.F16, false),
			ropeExample(tensor.RopeVision, tensor.F32, true),
		}
	}})
}

// ropeExample is a ROPE node of the given mode and type, with frequency factors if ff.
func ropeExample(mode int32, ty tensor.Type, ff bool) *tensor.Tensor {
	nDims, npos := int32(8), int64(3)
	params := []int32{0, nDims, mode, 0, 512, int32(f32bits(10000)), int32(f32bits(1)), 0, int32(f32bits(1)), int32(f32bits(32)), int32(f32bits(1))}
	if mode&tensor.RopeMrope != 0 {
		npos = 12
		params = append(params, 2, 1, 1, 0)
	}
	if mode == tensor.RopeVision {
		nDims = 4
		params[1] = nDims
		params[11], params[12], params[13] = 2, 2, 0
	}
	var f *tensor.Tensor
	if ff {
		f = f32(8)
	}
	return node(tensor.OpRope, contiguous(ty, 8, 2, 3), params, contiguous(ty, 8, 2, 3), contiguous(tensor.I32, npos), f)
}

// ropeMulti reports whether mode takes four positions per token (ggml's mode & MROPE).
func ropeMulti(mode int32) bool { return mode&tensor.RopeMrope != 0 }

func supportsRope(t *tensor.Tensor, _ *Limits) bool {
	a, pos, ff := t.Src[0], t.Src[1], t.Src[2]
	mode, nDims, nOffs := t.Params[2], t.Params[1], t.Params[15]
	if a == nil || pos == nil || !isFloat(a.Type) || a.Type != t.Type || pos.Type != tensor.I32 || !tensor.SameShape(a, t) {
		return false
	}
	switch mode {
	case tensor.RopeNormal, tensor.RopeNeox, tensor.RopeMrope, tensor.RopeImrope, tensor.RopeVision:
	default:
		return false
	}
	if nDims <= 0 || nDims%2 != 0 || nOffs < 0 || nOffs%2 != 0 || int64(nDims+nOffs) > a.Ne[0] || a.Ne[0]%2 != 0 {
		return false
	}
	// positions: one per token, four for the multi-section modes
	perToken := int64(1)
	if ropeMulti(mode) {
		perToken = 4
		sec := t.Params[11:15]
		total := int64(0)
		for _, s := range sec {
			if s < 0 {
				return false
			}
			total += int64(s)
		}
		if sec[0] <= 0 && sec[1] <= 0 && sec[2] <= 0 || total > a.Ne[0] {
			return false
		}
	}
	if pos.Ne[0] < perToken*a.Ne[2] || pos.Nb[0] != 4 {
		return false
	}
	// VISION rotates the whole row: n_dims pair slots, each with its frequency factor.
	factors := int64(nDims / 2)
	if mode == tensor.RopeVision {
		if int64(2*nDims) != a.Ne[0] || nOffs != 0 {
			return false
		}
		factors = int64(nDims)
	}
	if ff != nil && (ff.Type != tensor.F32 || ff.Ne[0] < factors || ff.Nb[0] != 4) {
		return false
	}
	return elementAligned(a) && elementAligned(t)
}

// yarnCorrDim is the dimension at which the rotation count over n_ctx_orig positions is nRot.
func yarnCorrDim(nDims, nCtxOrig int32, nRot, base float32) float32 {
	return float32(nDims) * float32(math.Log(float64(float32(nCtxOrig)/(nRot*2*math.Pi)))) / (2 * float32(math.Log(float64(base))))
}

// ropeMScale is the factor of cos and sin: attn_factor, with ext_factor times YaRN's
// magnitude correction 1 + 0.1 ln(1/freq_scale) (in f32 steps, as ggml computes it).
func ropeMScale(attnFactor, extFactor, freqScale float32) float32 {
	if extFactor == 0 {
		return attnFactor
	}
	l := float32(math.Log(float64(1 / freqScale)))
	return attnFactor * (1 + 0.1*l)
}

// ropeSections returns the section widths of a multi-section mode and, for VISION, which
// sections restart their angle at their first slot: ggml resets the four angles at the
// first slot of their sections in order, so a section that starts where the one before
// it starts (the one before is empty) is never reset.
func ropeSections(t *tensor.Tensor) (sec, reset [4]uint32) {
	mode := t.Params[2]
	if !ropeMulti(mode) {
		return sec, reset
	}
	for k := range sec {
		sec[k] = uint32(t.Params[11+k])
	}
	if mode == tensor.RopeVision {
		reset[0] = 1
		for k := 1; k < 4; k++ {
			if sec[k-1] > 0 {
				reset[k] = 1
			}
		}
	}
	return sec, reset
}

func lowerRope(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	p, defs, operands, tensors := ropeSetup(t)
	operands = append(operands, out("dst", t))
	tensors = append(tensors, t)
	s := spec("rope", wgElementwise, p, defs, operands...)
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: gridElems(t.Elems()/2, l)}}, nil
}

// ropeSetup returns what every kernel that includes rope_math.wgsl needs of ROPE node t:
// its parameters (the result's strides in D), the defines of its mode, and the operands it
// reads (src0, pos and, with frequency factors, ff) with their tensors.
func ropeSetup(t *tensor.Tensor) (ropeParams, map[string]string, []wgslOperand, []*tensor.Tensor) {
	a, pos, ff := t.Src[0], t.Src[1], t.Src[2]
	mode, nDims, nCtxOrig := t.Params[2], t.Params[1], t.Params[4]
	freqBase, freqScale := t.ParamF32(5), t.ParamF32(6)
	extFactor, attnFactor := t.ParamF32(7), t.ParamF32(8)
	betaFast, betaSlow := t.ParamF32(9), t.ParamF32(10)
	corr0 := float32(math.Max(0, math.Floor(float64(yarnCorrDim(nDims, nCtxOrig, betaFast, freqBase)))))
	corr1 := float32(math.Min(float64(nDims-1), math.Ceil(float64(yarnCorrDim(nDims, nCtxOrig, betaSlow, freqBase)))))
	sec, reset := ropeSections(t)
	nrot, partner := uint32(nDims/2), uint32(nDims/2)
	switch mode {
	case tensor.RopeNormal:
		partner = 1
	case tensor.RopeVision:
		nrot, partner = uint32(nDims), uint32(nDims)
	}
	p := ropeParams{
		Ne: dims(t), A: strides(a), D: strides(t), Sec: sec, Reset: reset,
		N: uint32(t.Elems() / 2), NDims: uint32(nDims), NOffs: uint32(t.Params[15]), NRot: nrot, Partner: partner,
		ThetaScale: float32(math.Pow(float64(freqBase), float64(float32(-2)/float32(nDims)))),
		FreqScale:  freqScale, ExtFactor: extFactor, MScale: ropeMScale(attnFactor, extFactor, freqScale),
		Corr0: corr0, Corr1: corr1,
	}
	defs := map[string]string{"NORMAL": "0", "MROPE": "0", "IMROPE": "0", "VISION": "0", "FREQ_FACTORS": "0"}
	switch mode {
	case tensor.RopeNormal:
		defs["NORMAL"] = "1"
	case tensor.RopeMrope:
		defs["MROPE"] = "1"
	case tensor.RopeImrope:
		defs["MROPE"], defs["IMROPE"] = "1", "1"
	case tensor.RopeVision:
		defs["MROPE"], defs["VISION"] = "1", "1"
	}
	operands := []wgslOperand{in("src0", a), in("pos", pos)}
	tensors := []*tensor.Tensor{a, pos}
	if ff != nil {
		defs["FREQ_FACTORS"] = "1"
		operands = append(operands, in("ff", ff))
		tensors = append(tensors, ff)
	}
	return p, defs, operands, tensors
}
