package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// IM2COL (ggml_im2col, the first half of ggml_conv_1d and ggml_conv_2d: vision encoders'
// patch embeddings, audio encoders' convolutions): src0 the kernel (its shape only), src1
// the input {IW, IH, IC, N} (1-D: {IW, IC, N}); op_params s0, s1, p0, p1, d0, d1, is_2D.
// dst {IC KH KW, OW, OH, N} (1-D: {IC KW, OW, N}) holds, at column (ic KH + ky) KW + kx of
// output position (ox, oy), input element (ox s0 + kx d0 - p0, oy s1 + ky d1 - p1) of
// channel ic, or 0 outside the input. src1 F32 or F16 (F16 into F16 only, as the CPU
// backend), dst F32 or F16; any input strides.

type im2colParams struct {
	Ne, B, D       [4]uint32 // dst shape as {cols, OW, OH, N}; src1 strides as {x, y, channel, batch}; dst strides
	N              uint32
	KW, KH, IW, IH uint32
	S0, S1, D0, D1 uint32
	P0, P1         int32
}

func init() {
	describeFamily("IM2COL", "F32 to F32 or F16; F16 to F16", "1-D and 2-D, stride, padding, dilation; any input strides")
	register(tensor.OpIm2col, family{supports: supportsIm2col, lower: lowerIm2col, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{
			node(tensor.OpIm2col, f32(27, 8, 8, 2), []int32{1, 1, 1, 1, 1, 1, 1}, f32(3, 3, 3, 1), f32(8, 8, 3, 2)),
			node(tensor.OpIm2col, contiguous(tensor.F16, 12, 9, 2), []int32{1, 0, 0, 0, 1, 0, 0}, f32(3, 4), f32(11, 4, 2)),
		}
	}})
}

// im2colShape returns the kernel's width and height, the input's width, height and
// channels, and the outputs' width, height and batches (1-D: KH, IH and OH 1).
func im2colShape(t *tensor.Tensor) (kw, kh, iw, ih, ic, ow, oh, n int64) {
	a, b := t.Src[0], t.Src[1]
	if t.Params[6] == 1 {
		return a.Ne[0], a.Ne[1], b.Ne[0], b.Ne[1], b.Ne[2], t.Ne[1], t.Ne[2], b.Ne[3]
	}
	return a.Ne[0], 1, b.Ne[0], 1, b.Ne[1], t.Ne[1], 1, b.Ne[2]
}

// convOut is ggml_calc_conv_output_size.
func convOut(in, k, s, p, d int64) int64 { return (in+2*p-d*(k-1)-1)/s + 1 }

// windowParamMax bounds the strides, paddings, dilations and pool windows the window ops
// (IM2COL, CONV_2D, POOL) take, so that their kernels' 32-bit positions cannot overflow
// and a pool's window loop stays short; real models use single or double digits.
const windowParamMax = 1 << 16

// windowParams reports whether every value is in [lo, windowParamMax].
func windowParams(lo int64, v ...int64) bool {
	for _, x := range v {
		if x < lo || x > windowParamMax {
			return false
		}
	}
	return true
}

func supportsIm2col(t *tensor.Tensor, _ *Limits) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || !t.Contiguous() || !elementAligned(b) {
		return false
	}
	switch {
	case t.Type == tensor.F32 && b.Type == tensor.F32:
	case t.Type == tensor.F16 && (b.Type == tensor.F32 || b.Type == tensor.F16):
	default:
		return false
	}
	s0, s1, p0, p1, d0, d1, is2D := int64(t.Params[0]), int64(t.Params[1]), int64(t.Params[2]), int64(t.Params[3]),
		int64(t.Params[4]), int64(t.Params[5]), t.Params[6]
	if !windowParams(1, s0, d0) || !windowParams(0, p0) || (is2D != 0 && is2D != 1) {
		return false
	}
	kw, kh, iw, ih, ic, ow, oh, n := im2colShape(t)
	if is2D == 1 {
		if !windowParams(1, s1, d1) || !windowParams(0, p1) || a.Ne[2] != ic || t.Ne != [4]int64{ic * kh * kw, ow, oh, n} || oh != convOut(ih, kh, s1, p1, d1) {
			return false
		}
	} else if a.Ne[1] != ic || b.Ne[3] != 1 || t.Ne != [4]int64{ic * kw, ow, n, 1} {
		return false
	}
	return ow == convOut(iw, kw, s0, p0, d0) && ow > 0
}

func lowerIm2col(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	b := t.Src[1]
	kw, kh, iw, ih, ic, ow, oh, n := im2colShape(t)
	bs, ds := strides(b), strides(t)
	p := im2colParams{
		Ne: [4]uint32{uint32(ic * kh * kw), uint32(ow), uint32(oh), uint32(n)},
		B:  bs, D: ds, N: uint32(t.Elems()),
		KW: uint32(kw), KH: uint32(kh), IW: uint32(iw), IH: uint32(ih),
		S0: uint32(t.Params[0]), S1: uint32(t.Params[1]), D0: uint32(t.Params[4]), D1: uint32(t.Params[5]),
		P0: t.Params[2], P1: t.Params[3],
	}
	if t.Params[6] != 1 { // 1-D: no rows, the channels and batches one dimension down
		p.B = [4]uint32{bs[0], 0, bs[1], bs[2]}
		p.D = [4]uint32{ds[0], ds[1], 0, ds[2]}
		p.S1, p.D1, p.P1 = 1, 1, 0
	}
	s := spec("im2col", wgElementwise, p, nil, in("src1", b), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{b, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
