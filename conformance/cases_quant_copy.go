package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// ---------------------------------------------------------------------------------------
// The KV cache's quantized types, modelled on test-backend-ops' test_set_rows and test_cpy
// over them: SET_ROWS from F32 (and F16) into each type (plain, broadcast indices, views
// of values and indices, a destination view at an odd block, a slice of a cache), CPY from
// F32 (and F16) into each (contiguous, permuted rows, padded source, another shape), and
// CPY back from each to F32 (contiguous, permuted source, permuted destination, another
// shape) and to F16. Results of a quantized type are dequantized by ggml for the
// comparison. The device quantizes with the CPU backend's rounding, so the threshold is
// that of one quantized value off by one step (test-backend-ops' estimate), far below
// what a wrong rounding rule or scale would give.

// kvQuantTypes are the quantized types a KV cache is stored in.
var kvQuantTypes = []tensor.Type{tensor.Q8_0, tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.IQ4_NL}

// quantOffByOne is the NMSE of one value of n, drawn from [-1, 1], off by one quantization
// step of type t (test-backend-ops' max_nmse_err of test_set_rows and test_cpy).
func quantOffByOne(t tensor.Type, n int64) float64 {
	e := 1.0 / 8
	switch t {
	case tensor.IQ4_NL:
		e *= 2
	case tensor.Q5_0, tensor.Q5_1:
		e /= 2
	case tensor.Q8_0:
		e /= 8
	}
	return e * e / (0.25 * float64(n))
}

func quantCopyCases() []*Case {
	one := [2]int64{1, 1}
	var cs []*Case
	for _, q := range kvQuantTypes {
		for _, s := range []srSpec{
			{src: f32, idx: tensor.I64, ne: shape(256, 5, 1, 3), nr: one, r: 1},
			{src: f32, idx: tensor.I64, ne: shape(64, 11, 1, 2), nr: [2]int64{2, 3}, r: 7},
			{src: f32, idx: tensor.I32, ne: shape(96, 3, 2, 1), nr: [2]int64{2, 3}, r: 2, variant: "view"},
			{src: f32, idx: tensor.I64, ne: shape(32, 9, 2, 1), nr: one, r: 4, variant: "dst_view"},
			{src: f32, idx: tensor.I32, ne: shape(64, 16, 2, 1), nr: one, r: 5, variant: "kv_slice"},
			{src: f16, idx: tensor.I64, ne: shape(96, 7, 2, 1), nr: one, r: 3},
		} {
			s.dst = q
			c := setRowsCase(s)
			c.MaxNMSE = quantOffByOne(q, s.ne[0]*s.r*s.ne[2]*s.nr[0]*s.ne[3]*s.nr[1])
			cs = append(cs, c)
		}

		perm := [4]int{0, 2, 1, 3}
		for _, c := range []struct {
			src     tensor.Type
			ne      [4]int64
			variant string
		}{
			{f32, shape(64, 3, 2, 2), ""},
			{f32, shape(96), ""},
			{f32, shape(64, 2, 3, 2), "src_perm"},
			{f32, shape(32, 5, 3), "src_view"},
			{f32, shape(64, 3, 2), "reshape"},
			{f16, shape(64, 3, 2, 2), ""},
		} {
			k := cpyCase(c.src, q, c.ne, c.variant, perm)
			k.MaxNMSE = quantOffByOne(q, c.ne[0]*c.ne[1]*c.ne[2]*c.ne[3])
			cs = append(cs, k)
		}

		for _, c := range []struct {
			ne      [4]int64
			variant string
		}{
			{shape(64, 3, 2, 2), ""},
			{shape(64, 2, 3, 2), "src_perm"},
			{shape(64, 2, 3, 2), "dst_perm"},
			{shape(96, 3, 2), "reshape"},
		} {
			cs = append(cs, cpyCase(q, f32, c.ne, c.variant, perm))
		}
		cs = append(cs, quantToF16Case(q, shape(64, 3, 2, 2)))
	}
	return cs
}

// quantToF16Case copies a quantized tensor of shape ne into F16. The CPU backend cannot
// (ggml's CPY from a quantized type goes to F32 only): its graph copies to F32, then F32
// to F16, which rounds the same values the same way.
func quantToF16Case(q tensor.Type, ne [4]int64) *Case {
	name := fmt.Sprintf("CPY(type_src=%s,type_dst=%s,ne=%s)", q, f16, fmtNe(ne))
	leaves := func(b *Builder) (ggml.Tensor, ggml.Tensor) {
		return b.New("a", q, ne[:]...), b.New("d", f16, ne[:]...)
	}
	return &Case{Name: name, Op: "CPY", Types: q.String() + "->" + f16.String(),
		MaxNMSE: DefaultThreshold(true),
		Build: func(b *Builder) ggml.Tensor {
			a, d := leaves(b)
			return b.L.Cpy(b.Ctx, a, d)
		},
		RefBuild: func(b *Builder) ggml.Tensor {
			a, d := leaves(b)
			tmp := b.L.NewTensor4D(b.Ctx, f32, ne[0], ne[1], ne[2], ne[3])
			return b.L.Cpy(b.Ctx, b.L.Cpy(b.Ctx, a, tmp), d)
		}}
}
