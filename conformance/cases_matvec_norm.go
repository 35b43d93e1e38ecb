package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// ---------------------------------------------------------------------------------------
// GRAPH(mul_mat+add+norm): llama's attention output (or feed-forward down) product of one
// column followed by the residual sum and the next norm with its weight,
// out = MUL(RMS_NORM(ADD(MUL_MAT(w_o, x), inpSA)), norm_w), the sum read again after it
// (the next residual, sum + out) or read back by the host: the product's mat-vec (F16 and
// Q4_0 in the vectorised kernel, Q4_K in the integer one, Q6_K in its own), then the
// fusion row add+norm+mul, over memory that ggml-alloc may share between them. Rows that
// no workgroup shape divides, the residual as the ADD's first source, and the in-place
// forms ggml builds (the sum over the product, the result over the norm, the norm over a
// sum not read again).

// matVecNormResFirst is the form of matVecNormCase that adds the product to the residual
// (ADD(inpSA, product)); the others are addNormCase's (addNormSumInPlace: the sum over
// the product, addNormMulInPlace, addNormSumOutput, addNormLastNorm).
const matVecNormResFirst = "res_first"

// matVecNormCase builds the pattern with an m x k weight of type ta.
func matVecNormCase(ta tensor.Type, m, k int64, variant string) *Case {
	name := fmt.Sprintf("GRAPH(mul_mat+add+rms_norm*w,type=%s,m=%d,k=%d", ta, m, k)
	if variant != "" {
		name += "," + variant
	}
	name += ")"
	return &Case{Name: name, Op: "GRAPH", Types: ta.String(), MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			w := b.New("w_o", ta, k, m)
			x := b.New("x", f32, k, 1)
			inp := b.New("inpSA", f32, m, 1)
			nw := b.New("norm_w", f32, m)
			mm := l.MulMat(ctx, w, x)
			var sum ggml.Tensor
			switch variant {
			case matVecNormResFirst:
				sum = l.Add(ctx, inp, mm)
			case addNormSumInPlace:
				sum = l.AddInplace(ctx, mm, inp)
			default:
				sum = l.Add(ctx, mm, inp)
			}
			return addNormRest(b, sum, nw, "rms_norm", 1e-5, variant)
		}}
}

// matVecNormCases are the GRAPH(mul_mat+add+norm) cases.
func matVecNormCases() []*Case {
	return []*Case{
		matVecNormCase(tensor.F16, 300, 256, ""),
		matVecNormCase(tensor.F16, 2048, 512, ""), // the 1B model's rows
		matVecNormCase(tensor.F16, 4099, 64, matVecNormResFirst),
		matVecNormCase(tensor.F16, 1000, 128, addNormSumInPlace),
		matVecNormCase(tensor.F16, 1000, 128, addNormMulInPlace),
		matVecNormCase(tensor.F16, 777, 128, addNormSumOutput),
		matVecNormCase(tensor.F16, 777, 128, addNormLastNorm),
		matVecNormCase(tensor.Q4_0, 1000, 512, ""),
		matVecNormCase(tensor.Q4_K, 4096, 4096, ""), // the integer kernel (2^24 weights)
		matVecNormCase(tensor.Q4_K, 4096, 4096, addNormSumInPlace),
		matVecNormCase(tensor.Q6_K, 2051, 512, ""),
		matVecNormCase(tensor.Q6_K, 4096, 1024, matVecNormResFirst),
	}
}
