package conformance

import (
	"math"
	"math/rand"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// BF16 (bfloat16, the high half of an f32): weights multiplied by F32 activations, rows
// gathered into F32, copies to and from F32, F16 and BF16, and rows stored into a BF16
// cache. ggml's CPU rounds f32 to bf16 to nearest even (ggml_compute_fp32_to_bf16) and
// widens bf16 exactly, so every conversion that involves no F16 must agree bit for bit
// (ExactMaxNMSE); bf16ToBF16Rounding feeds values at and around the rounding ties. The
// CPU multiplies BF16 weights by src1 rounded to BF16, the device by src1 in F32: MUL_MAT
// keeps MulMatMaxNMSE.

const bf16 = tensor.BF16

// bf16Threshold is the NMSE bound of a conversion between src and dst: exact unless F16
// is involved (the device's f16 rounding, as copyThreshold).
func bf16Threshold(src, dst tensor.Type) float64 {
	if src == f16 || dst == f16 {
		return copyThreshold(src, dst)
	}
	return ExactMaxNMSE
}

func bf16Cases() []*Case {
	var cs []*Case
	one := [2]int64{1, 1}
	for _, m := range []int64{1, 7, 33, 129} {
		for _, n := range []int64{1, 4, 9, 67} {
			cs = append(cs, mulMatCase(mmSpec{ta: bf16, m: m, n: n, k: 48, bs: one, nr: one}))
		}
	}
	for _, k := range []int64{1, 37, 256, 1025} {
		cs = append(cs, mulMatCase(mmSpec{ta: bf16, m: 16, n: 7, k: k, bs: one, nr: one}))
	}
	for _, n := range []int64{1, 16} {
		for _, bn := range [][2][2]int64{{{3, 2}, {1, 1}}, {{3, 2}, {2, 1}}, {{1, 1}, {2, 3}}} {
			cs = append(cs, mulMatCase(mmSpec{ta: bf16, m: 70, n: n, k: 72, bs: bn[0], nr: bn[1]}))
		}
	}
	for _, n := range []int64{1, 8} {
		cs = append(cs, mulMatCase(mmSpec{ta: bf16, m: 16, n: n, k: 32, bs: [2]int64{2, 3}, nr: one, per: [4]int{0, 2, 1, 3}}))
	}
	cs = append(cs,
		mulMatCase(mmSpec{ta: bf16, m: 33, n: 7, k: 64, bs: [2]int64{4, 1}, nr: one, perB: true}),
		mulMatCase(mmSpec{ta: bf16, m: 16, n: 1, k: 64, bs: [2]int64{2, 1}, nr: [2]int64{2, 1}, perB: true}),
		mulMatCase(mmSpec{ta: bf16, m: 33, n: 7, k: 40, bs: [2]int64{2, 1}, nr: one, padA: true}),
		mulMatCase(mmSpec{ta: bf16, m: 16, n: 9, k: 40, bs: one, nr: one, padB: true}),
	)

	for _, s := range []struct {
		src  [4]int64
		n    int64
		view bool
	}{
		{shape(10, 5), 3, false},
		{shape(4097, 3), 2, false},
		{shape(16, 5, 3, 2), 4, false},
		{shape(16, 5), 3, true},
	} {
		c := getRowsCase(bf16, s.src, s.n, s.view)
		c.MaxNMSE = ExactMaxNMSE
		cs = append(cs, c)
	}

	for _, tp := range [][2]tensor.Type{{f32, bf16}, {bf16, f32}, {bf16, bf16}, {f16, bf16}, {bf16, f16}} {
		cpy := func(ne [4]int64, variant string, p [4]int) {
			c := cpyCase(tp[0], tp[1], ne, variant, p)
			c.MaxNMSE = bf16Threshold(tp[0], tp[1])
			cs = append(cs, c)
		}
		for _, ne := range [][4]int64{shape(7), shape(4097), shape(10, 5, 4, 3)} {
			cpy(ne, "", [4]int{})
		}
		cpy(shape(10, 5, 4, 3), "src_perm", [4]int{0, 2, 1, 3})
		cpy(shape(33, 7), "dst_perm", [4]int{1, 0, 2, 3})
		cpy(shape(10, 5, 3), "src_view", [4]int{})
		cpy(shape(10, 5, 3), "dst_view", [4]int{})
	}
	rounding := cpyCase(f32, bf16, shape(512, 4), "", [4]int{})
	rounding.Name = "CPY(type_src=f32,type_dst=bf16,ne=[512,4,1,1],rounding)"
	rounding.MaxNMSE, rounding.Init = ExactMaxNMSE, bf16Rounding
	cs = append(cs, rounding)
	cs = append(cs,
		contCase("CONT", bf16, shape(33, 7), "transpose", [4]int{1, 0, 2, 3}),
		contCase("CONT", bf16, shape(10, 5, 4, 3), "perm", [4]int{0, 2, 1, 3}),
		contCase("DUP", bf16, shape(10, 5, 3), "view", [4]int{}),
	)

	for _, src := range []tensor.Type{f32, f16} {
		for _, s := range []srSpec{
			{ne: shape(256, 5), nr: [2]int64{1, 1}, r: 1},
			{ne: shape(33, 11, 1, 2), nr: [2]int64{2, 3}, r: 7},
			{ne: shape(1, 96), nr: [2]int64{1, 1}, r: 24},
			{ne: shape(31, 7, 2, 1), nr: [2]int64{1, 1}, r: 4, variant: "dst_view"},
		} {
			s.src, s.dst, s.idx = src, bf16, tensor.I64
			c := setRowsCase(s)
			c.MaxNMSE = ExactMaxNMSE // an F16 value is exact in F32, then rounded as an F32 one
			cs = append(cs, c)
		}
	}
	return cs
}

// bf16Rounding draws f32 values of random sign and exponent (normal numbers, and the
// largest finite f32, which rounds to infinity) whose low 16 bits sit at, just below and
// just above the rounding tie 0x8000 or anywhere, over bf16 mantissas of both parities.
func bf16Rounding(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		hi := uint32(r.Intn(2))<<31 | uint32(r.Intn(255))<<23 | uint32(r.Intn(1<<7))<<16
		lo := []uint32{0x8000, 0x7fff, 0x8001, 0, uint32(r.Intn(1 << 16))}[i%5]
		v[i] = math.Float32frombits(hi | lo)
	}
	v[n-1] = math.MaxFloat32
	v[n-2] = -math.MaxFloat32
	return v
}
