package conformance

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// swarTypes are the formats of the integer mat-vec's nibble and byte forms.
var swarTypes = []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q4_K, tensor.Q5_0, tensor.Q5_1, tensor.Q5_K, tensor.Q8_0, tensor.MXFP4, tensor.IQ4_NL, tensor.IQ4_XS}

// mulMatSwarCases cover the integer mat-vec of 4-bit and 8-bit weights
// (ops/mul_mat_vec_q4.go: one column quantized to 8 bits per block of 32 as the kernel
// reads it): swarTypes at K of 256, 2048, 4096 and 12544, rows not a
// multiple of the workgroup's, src0 broadcast over dims 2 and 3, activations spanning six
// orders of magnitude across blocks with an all-zero block (its scale 0: results must stay
// finite), weights and activations at their extremes (nibbles 0 and 15, Q5's 0 and 31,
// bytes +-127, IQ4 levels -127 and 113, against +-127), MXFP4 blocks of every E2M1 code and a range of exponents
// (mxfp4CodesCase), and the fused feed-forward gate (swarGLUCases); Q6_K's in
// mulMatSwarQ6Cases. Only the product of 8192 x 4096 (Q4_0) reaches the kernel's size
// threshold in the suite; TestConformanceSwar runs them all with the threshold at one
// weight, where every one takes it.
func mulMatSwarCases() []*Case {
	one := [2]int64{1, 1}
	var cs []*Case
	for _, ta := range swarTypes {
		for _, k := range []int64{256, 2048, 4096, 12544} {
			cs = append(cs, mulMatCase(mmSpec{ta: ta, m: 37, n: 1, k: k, bs: one, nr: one}))
		}
		cs = append(cs,
			mulMatCase(mmSpec{ta: ta, m: 20, n: 1, k: 2048, bs: [2]int64{2, 3}, nr: [2]int64{2, 1}}),
			swarCase(ta, 33, 2048, "range_zero_block", Uniform(-1, 1), blockRange),
			swarCase(ta, 33, 2048, "extremes", signs, signs))
	}
	cs = append(cs, mulMatCase(mmSpec{ta: tensor.Q4_0, m: 8192, n: 1, k: 4096, bs: one, nr: one}),
		mxfp4CodesCase(35, 2048, 1), mxfp4CodesCase(35, 2048, 2))
	cs = append(cs, mulMatSwarColsCases()...)
	cs = append(cs, mulMatSwarQ6Cases()...)
	return append(cs, swarGLUCases()...)
}

// swarCodedCols is the most src1 columns of the formats whose words the integer mat-vec
// changes for every column (ops.swarCodedCols); the others take up to 8.
var swarCodedCols = map[tensor.Type]int64{tensor.MXFP4: 2, tensor.Q5_K: 4, tensor.Q5_0: 2, tensor.Q5_1: 2, tensor.IQ4_NL: 1, tensor.IQ4_XS: 1}

// swarTakes reports whether the integer mat-vec takes products of n columns of ta.
func swarTakes(ta tensor.Type, n int64) bool {
	most, ok := swarCodedCols[ta]
	return n <= 8 && (!ok || n <= most)
}

// mulMatSwarColsCases are the integer mat-vec's products of several columns (its XQ form,
// after the columns' quantization): each column count it takes, rows of one block and of
// many, broadcast batches, and a src1 whose columns lie apart (permuted).
func mulMatSwarColsCases() []*Case {
	one := [2]int64{1, 1}
	var cs []*Case
	for _, ta := range swarTypes {
		for _, s := range []mmSpec{{m: 37, n: 2, k: 2048}, {m: 37, n: 3, k: 2048}, {m: 37, n: 4, k: 2048}, {m: 37, n: 8, k: 2048},
			{m: 9, n: 5, k: 256}, {m: 20, n: 4, k: 1024, bs: [2]int64{2, 3}, nr: [2]int64{2, 1}},
			{m: 33, n: 3, k: 512, bs: [2]int64{4, 1}, perB: true}} {
			if !swarTakes(ta, s.n) {
				continue
			}
			s.ta = ta
			if s.bs == [2]int64{} {
				s.bs = one
			}
			if s.nr == [2]int64{} {
				s.nr = one
			}
			cs = append(cs, mulMatCase(s))
		}
	}
	return cs
}

// swarGLUCases are llama's feed-forward gate, SWIGLU(gate x, up x), on one column with
// 4-bit weights: the fusion row mul_mat+mul_mat+glu in the integer mat-vec's gate form.
// K = 14336 (llama 3 8B's down projection's rows) is beyond what the first form of the
// kernel kept in 32 KiB of workgroup memory.
func swarGLUCases() []*Case {
	var cs []*Case
	for _, ta := range swarTypes {
		cs = append(cs, swarGLUCase(ta, 48, 256, 1))
	}
	cs = append(cs, swarGLUCase(tensor.Q4_0, 20, 14336, 1), swarGLUCase(tensor.Q4_K, 20, 14336, 1), swarGLUCase(tensor.Q6_K, 12, 2048, 1),
		swarGLUCase(tensor.Q8_0, 20, 14336, 1), swarGLUCase(tensor.MXFP4, 20, 14336, 1), swarGLUCase(tensor.IQ4_XS, 20, 14336, 1), swarGLUCase(tensor.Q5_K, 20, 14336, 1))
	// several columns (the kernel's XQ form by NCOLS)
	return append(cs, swarGLUCase(tensor.Q4_0, 20, 2048, 2), swarGLUCase(tensor.Q4_1, 11, 512, 3), swarGLUCase(tensor.Q4_K, 20, 2048, 4),
		swarGLUCase(tensor.Q4_0, 7, 256, 4), swarGLUCase(tensor.Q8_0, 20, 2048, 3), swarGLUCase(tensor.MXFP4, 20, 2048, 2), swarGLUCase(tensor.Q5_K, 20, 2048, 2), swarGLUCase(tensor.Q5_0, 20, 2048, 2))
}

// swarGLUCase is SWIGLU(gate x, up x) with m x k gate and up weights of type ta and n
// columns x.
func swarGLUCase(ta tensor.Type, m, k, n int64) *Case {
	return &Case{Name: fmt.Sprintf("GRAPH(ffn_swiglu_swar,type=%s,m=%d,n=%d,k=%d)", ta, m, n, k),
		Op: "GRAPH", Types: ta.String(), MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			x := b.New("x", f32, k, n)
			gate, up := b.New("w_gate", ta, k, m), b.New("w_up", ta, k, m)
			return l.SwiGLUSplit(ctx, l.MulMat(ctx, gate, x), l.MulMat(ctx, up, x))
		}}
}

// swarCase is a one-column MUL_MAT of an m x k matrix of type ta with its own
// initializers of the weights (before ggml quantizes them) and of the column.
func swarCase(ta tensor.Type, m, k int64, label string, weights, column InitFunc) *Case {
	return &Case{Name: fmt.Sprintf("MUL_MAT(type_a=%s,type_b=f32,m=%d,n=1,k=%d,%s)", ta, m, k, label),
		Op: "MUL_MAT", Types: ta.String() + " x f32", MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			a := b.New("a", ta, k, m)
			y := b.New("b", f32, k, 1)
			b.Init(a, weights)
			b.Init(y, column)
			return b.L.MulMat(b.Ctx, a, y)
		}}
}

// mxfp4CodesCase is a MUL_MAT of m x k MXFP4 weights by n columns whose blocks hold random
// bytes, so every E2M1 code (negative zero among them, which ggml's quantizer never
// writes) and exponents 2^-8 to 2^7 around 1 (the subnormal halves of e = 0 and 1 in the
// first two blocks of each row).
func mxfp4CodesCase(m, k, n int64) *Case {
	return &Case{Name: fmt.Sprintf("MUL_MAT(type_a=mxfp4,type_b=f32,m=%d,n=%d,k=%d,codes)", m, n, k),
		Op: "MUL_MAT", Types: "mxfp4 x f32", MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			a := b.New("a", tensor.MXFP4, k, m)
			y := b.New("b", f32, k, n)
			b.Patch(a, func(raw []byte) {
				r := rand.New(rand.NewSource(int64(m*k + n)))
				for i := 0; i+17 <= len(raw); i += 17 {
					raw[i] = byte(120 + r.Intn(16))
					if blk := i / 17 % int(k/32); blk < 2 {
						raw[i] = byte(blk)
					}
					r.Read(raw[i+1 : i+17])
				}
			})
			return b.L.MulMat(b.Ctx, a, y)
		}}
}

// blockRange draws each block of 32 values uniformly from [-s, s] with s from 1e-3 to
// 1e3 (log-uniform), and leaves the second block zero.
func blockRange(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for blk := 0; blk*32 < n; blk++ {
		s := float32(math.Pow(10, 6*r.Float64()-3))
		for i := blk * 32; i < min(n, blk*32+32); i++ {
			if blk != 1 {
				v[i] = s * (2*r.Float32() - 1)
			}
		}
	}
	return v
}

// signs draws +1 and -1: quantized by ggml, the weights' nibbles are 0 and 15 (Q4_0, Q4_1;
// Q4_K's largest and smallest; Q6_K's -32 and 31; Q8_0's bytes +-127), the activations
// +-127.
func signs(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(2*r.Intn(2) - 1)
	}
	return v
}
