package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// SSM_CONV (ggml_ssm_conv, the depthwise causal convolution of Mamba's and the delta-net
// layers' inputs, LFM2's short convolution): src0 sx {d_conv - 1 + n_t, d_inner, n_s}
// holds each channel's window (the last d_conv - 1 inputs, then the n_t new ones), src1
// c {d_conv, d_inner} each channel's kernel, and dst {d_inner, n_t, n_s}:
// dst[i, t, s] = sum_{j < d_conv} sx[t + j, i, s] * c[j, i], summed in j's order as the
// CPU backend does. F32; any strides. The fusion row ssm_conv+activation applies the
// activation after it (Mamba's and the delta-net layers' SILU) in the same dispatch.

type ssmConvParams struct {
	Ne, A, C, D [4]uint32 // dst shape; sx, c, dst strides
	N           uint32
	Width       uint32     // d_conv
	F           [4]float32 // the activation's float parameters
}

// ssmConvActRow is the fusion row SSM_CONV -> an activation of its result.
var ssmConvActRow = Fusion{
	Name:    "ssm_conv+activation",
	Ops:     []OpSet{{tensor.OpSSMConv}, chainActivations},
	Private: []int{0},
	Guard:   guardSSMConvAct,
	Lower:   lowerSSMConvAct,
	Example: func() []*tensor.Tensor {
		conv := node(tensor.OpSSMConv, f32(6, 3, 2), nil, f32(6, 6, 2), f32(4, 6))
		return []*tensor.Tensor{conv, node(tensor.OpUnary, f32(6, 3, 2), []int32{int32(tensor.UnarySILU)}, conv)}
	},
}

func init() {
	describeFamily("SSM_CONV", "F32", "any strides")
	register(tensor.OpSSMConv, family{supports: supportsSSMConv, lower: lowerSSMConv, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpSSMConv, f32(6, 3, 2), nil, f32(6, 6, 2), f32(4, 6))}
	}})
}

func supportsSSMConv(t *tensor.Tensor, _ *Limits) bool {
	sx, c := t.Src[0], t.Src[1]
	if sx == nil || c == nil || t.Type != tensor.F32 || sx.Type != tensor.F32 || c.Type != tensor.F32 {
		return false
	}
	width := c.Ne[0]
	if width < 1 || c.Ne[2] != 1 || c.Ne[3] != 1 || sx.Ne[3] != 1 || t.Ne[3] != 1 {
		return false
	}
	if c.Ne[1] != sx.Ne[1] || t.Ne[0] != sx.Ne[1] || t.Ne[1] != sx.Ne[0]-width+1 || t.Ne[2] != sx.Ne[2] {
		return false
	}
	return elementAligned(sx) && elementAligned(c) && elementAligned(t)
}

func lowerSSMConv(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	return ssmConvDispatch(t, t, l)
}

// ssmConvDispatch computes conv into dst, dst an activation of conv's result or conv.
func ssmConvDispatch(conv, dst *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	sx, c := conv.Src[0], conv.Src[1]
	p := ssmConvParams{Ne: dims(conv), A: strides(sx), C: strides(c), D: strides(dst), N: uint32(conv.Elems()), Width: uint32(c.Ne[0])}
	post := "sum"
	if dst != conv {
		var err error
		if post, err = chainExpr(dst, "sum", "", "p.F", true); err != nil {
			return nil, err
		}
		p.F = unaryFloats(dst)
	}
	s := spec("ssm_conv", wgElementwise, p, map[string]string{"POST": post}, in("src0", sx), in("src1", c), out("dst", dst))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{sx, c, dst}, Params: p, Grid: gridElems(conv.Elems(), l)}}, nil
}

// guardSSMConvAct admits an F32 activation of the convolution's result, of its shape,
// stored apart from the convolution's inputs (an invocation reads a window of positions
// that others store).
func guardSSMConvAct(n []*tensor.Tensor, l *Limits) bool {
	conv, act := n[0], n[1]
	if act.Src[0] != conv || act.Type != tensor.F32 || !tensor.SameShape(conv, act) || !Supports(conv, l) || !Supports(act, l) {
		return false
	}
	return !overlaps(act, conv.Src[0]) && !overlaps(act, conv.Src[1])
}

func lowerSSMConvAct(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	return ssmConvDispatch(n[0], n[1], l)
}
