package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// SSM_CONV (ggml_ssm_conv, the depthwise causal convolution of Mamba's and the delta-net
// layers' inputs, LFM2's short convolution): src0 sx {d_conv - 1 + n_t, d_inner, n_s}
// holds each channel's window (the last d_conv - 1 inputs, then the n_t new ones), src1
// c {d_conv, d_inner} each channel's kernel, and dst {d_inner, n_t, n_s}:
// dst[i, t, s] = sum_{j < d_conv} sx[t + j, i, s] * c[j, i], summed in j's order as the
// CPU backend does. F32; any strides.

type ssmConvParams struct {
	Ne, A, C, D [4]uint32 // dst shape; sx, c, dst strides
	N           uint32
	Width       uint32 // d_conv
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
	sx, c := t.Src[0], t.Src[1]
	p := ssmConvParams{Ne: dims(t), A: strides(sx), C: strides(c), D: strides(t), N: uint32(t.Elems()), Width: uint32(c.Ne[0])}
	s := spec("ssm_conv", wgElementwise, p, nil, in("src0", sx), in("src1", c), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{sx, c, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
