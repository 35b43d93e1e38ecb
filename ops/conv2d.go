package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// CONV_2D and CONV_2D_DW (ggml_conv_2d_direct, ggml_conv_2d_dw_direct: the direct
// convolutions of vision and audio encoders): src0 the kernel {KW, KH, IC, OC} (depthwise:
// {KW, KH, 1, C}), src1 the input {W, H, IC, N}; op_params s0, s1, p0, p1, d0, d1. dst
// {OW, OH, OC, N}: dst[ox, oy, oc, n] = sum over ic, ky, kx of src0[kx, ky, ic, oc] *
// src1[ox s0 + kx d0 - p0, oy s1 + ky d1 - p1, ic, n], inputs outside being 0; depthwise,
// channel c by its own kernel only. Kernel F32 or F16, input and dst F32; any strides
// (the channel-first layouts ggml permutes into included).

type conv2dParams struct {
	Ne, A, B, D    [4]uint32 // dst shape; kernel, input, dst strides
	N              uint32
	KW, KH, IW, IH uint32
	Channels       uint32 // the input channels an output sums (1: depthwise)
	Depthwise      uint32
	S0, S1, D0, D1 uint32
	P0, P1         int32
}

func init() {
	describeFamily("CONV_2D, CONV_2D_DW", "F32, F16 kernels; F32 input", "stride, padding, dilation; any strides")
	register(tensor.OpConv2d, family{supports: supportsConv2d, lower: lowerConv2d, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpConv2d, f32(6, 6, 4, 2), []int32{1, 1, 1, 1, 1, 1}, contiguous(tensor.F16, 3, 3, 3, 4), f32(6, 6, 3, 2))}
	}})
	register(tensor.OpConv2dDw, family{supports: supportsConv2d, lower: lowerConv2d, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpConv2dDw, f32(3, 3, 5, 1), []int32{2, 2, 0, 0, 1, 1}, f32(3, 3, 1, 5), f32(7, 7, 5, 1))}
	}})
}

func supportsConv2d(t *tensor.Tensor, _ *Limits) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || (a.Type != tensor.F32 && a.Type != tensor.F16) || b.Type != tensor.F32 || t.Type != tensor.F32 {
		return false
	}
	if !elementAligned(a) || !elementAligned(b) || !elementAligned(t) {
		return false
	}
	s0, s1, p0, p1, d0, d1 := int64(t.Params[0]), int64(t.Params[1]), int64(t.Params[2]), int64(t.Params[3]), int64(t.Params[4]), int64(t.Params[5])
	if !windowParams(1, s0, s1, d0, d1) || !windowParams(0, p0, p1) {
		return false
	}
	oc := a.Ne[3]
	if t.Op == tensor.OpConv2dDw {
		if a.Ne[2] != 1 || a.Ne[3] != b.Ne[2] {
			return false
		}
		oc = b.Ne[2]
	} else if a.Ne[2] != b.Ne[2] {
		return false
	}
	ow, oh := convOut(b.Ne[0], a.Ne[0], s0, p0, d0), convOut(b.Ne[1], a.Ne[1], s1, p1, d1)
	return ow > 0 && oh > 0 && t.Ne == [4]int64{ow, oh, oc, b.Ne[3]}
}

func lowerConv2d(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a, b := t.Src[0], t.Src[1]
	q := t.Params
	p := conv2dParams{Ne: dims(t), A: strides(a), B: strides(b), D: strides(t), N: uint32(t.Elems()),
		KW: uint32(a.Ne[0]), KH: uint32(a.Ne[1]), IW: uint32(b.Ne[0]), IH: uint32(b.Ne[1]), Channels: uint32(b.Ne[2]),
		S0: uint32(q[0]), S1: uint32(q[1]), P0: q[2], P1: q[3], D0: uint32(q[4]), D1: uint32(q[5])}
	if t.Op == tensor.OpConv2dDw {
		p.Channels, p.Depthwise = 1, 1
	}
	s := spec("conv2d", wgElementwise, p, nil, in("src0", a), in("src1", b), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, b, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
