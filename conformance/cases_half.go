package conformance

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// Every F16 read goes through half2/half4 (wgsl/kernels/common.wgsl), integer arithmetic
// in place of the GPU's half-to-float conversion. These cases read every finite half,
// subnormals and signed zeros included, and check the result exactly: a scalar copy, a
// vectorised mat-vec and the prompt kernel over weights rich in subnormals.

// halfValue returns the f32 value of half bits h (finite halves only).
func halfValue(h uint16) float32 {
	sign := float32(1)
	if h&0x8000 != 0 {
		sign = -1
	}
	e, m := int(h>>10)&0x1f, float64(h&0x3ff)
	if e == 0 {
		return sign * float32(math.Ldexp(m, -24))
	}
	return sign * float32(math.Ldexp(1+m/1024, e-15))
}

// allHalves fills n values with the finite halves in order of their bits, repeated.
func allHalves(_ *rand.Rand, n int) []float32 {
	var finite []float32
	for h := 0; h < 1<<16; h++ {
		if h&0x7c00 != 0x7c00 {
			finite = append(finite, halfValue(uint16(h)))
		}
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = finite[i%len(finite)]
	}
	return v
}

// subnormalHeavy draws values of which one in four is a subnormal half (the rest of
// magnitude up to 1), as the weights that made unpack2x16float slow.
func subnormalHeavy(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		if r.Intn(4) == 0 {
			v[i] = float32(math.Ldexp(float64(r.Intn(2047)-1023), -24))
		} else {
			v[i] = r.Float32()*2 - 1
		}
	}
	return v
}

func halfCases() []*Case {
	const n = 63488 // the finite halves
	cs := []*Case{{
		Name: "CPY(f16 every finite half -> f32)", Op: "CPY", Types: "f16", MaxNMSE: ExactMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			a := b.New("a", tensor.F16, n)
			b.Init(a, allHalves)
			return b.L.Cpy(b.Ctx, a, b.New("dst", tensor.F32, n))
		}}, {
		Name: "GET_ROWS(f16 every finite half)", Op: "GET_ROWS", Types: "f16[i32]", MaxNMSE: ExactMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			a := b.New("a", tensor.F16, 1024, n/1024)
			b.Init(a, allHalves)
			return b.L.GetRows(b.Ctx, a, b.Index("idx", n/1024, 9))
		}},
	}
	for _, s := range [][3]int64{{256, 40, 1}, {256, 40, 4}, {256, 160, 160}} {
		k, m, cols := s[0], s[1], s[2]
		cs = append(cs, &Case{
			Name: fmt.Sprintf("MUL_MAT(f16 subnormal-heavy weights,m=%d,n=%d,k=%d)", m, cols, k), Op: "MUL_MAT",
			Types: "f16", MaxNMSE: MulMatMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				a := b.New("a", tensor.F16, k, m)
				b.Init(a, subnormalHeavy)
				return b.L.MulMat(b.Ctx, a, b.New("x", tensor.F32, k, cols))
			}})
	}
	return cs
}
