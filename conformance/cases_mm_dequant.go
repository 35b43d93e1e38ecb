package conformance

import (
	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// mulMatDequantCases reach the prompt kernel on quantized weights dequantized into F16
// chunks first (ops/mul_mat_dequant.go): a k-quant, a legacy quant with two src0 matrices
// broadcast over src1's batches, an IQ format with a lookup grid, and the
// mul_mat+permute+cont fusion, all with split-K (few 128 x 128 tiles, K of 1024). Run in
// the suite they take one chunk each; TestConformanceDequantPrompt runs them again with
// chunks of 128 rows (several chunks, the last partial) and with the direct quantized
// loads (GGML_WGPU_DEQUANT_PROMPT=0).
func mulMatDequantCases() []*Case {
	one := [2]int64{1, 1}
	return []*Case{
		mulMatCase(mmSpec{ta: tensor.Q4_K, m: 300, n: 128, k: 1024, bs: one, nr: one}),
		mulMatCase(mmSpec{ta: tensor.Q8_0, m: 256, n: 130, k: 1024, bs: [2]int64{2, 1}, nr: [2]int64{1, 2}}),
		mulMatCase(mmSpec{ta: tensor.IQ3_S, m: 200, n: 128, k: 1024, bs: one, nr: one}),
		{Name: "GRAPH(mul_mat+permute+cont,q8_0,m=256,n=128,k=1024,heads=2)", Op: "GRAPH", Types: "mixed", MaxNMSE: MulMatMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				v := b.New("v", tensor.Q8_0, 1024, 256, 2)
				kq := b.New("kq", f32, 1024, 128, 2)
				kqv := b.L.MulMat(b.Ctx, v, kq) // [256, 128, 2]
				return b.L.Cont(b.Ctx, b.Permute(kqv, [4]int{0, 2, 1, 3}))
			}},
	}
}
