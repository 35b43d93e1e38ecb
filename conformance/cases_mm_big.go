package conformance

import (
	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// mulMatBigCases reach the large-tile kernel's split-K path (at least 128 rows and
// columns, few 128 x 128 tiles, K at least four times the shortest split): partial tiles,
// K not a multiple of the slice (nor the last split of a whole slice), broadcast batches,
// a permuted src1, element-wise loads, quantized formats with and without workgroup
// tables (IQ2_S's grid, the largest, beside the kernel's slices), the narrow form for
// fewer than 128 columns, the mat-vecs over column ranges for 9 to 32, and the result stored through the mul_mat+permute+cont fusion. The many-tile
// path is covered by mulMatCases' bs=[8,8] cases.
func mulMatBigCases() []*Case {
	one := [2]int64{1, 1}
	return []*Case{
		mulMatCase(mmSpec{ta: f16, m: 200, n: 140, k: 1000, bs: one, nr: one}),
		mulMatCase(mmSpec{ta: f32, m: 130, n: 129, k: 1030, bs: [2]int64{2, 1}, nr: [2]int64{2, 1}}),
		mulMatCase(mmSpec{ta: tensor.Q4_0, m: 256, n: 160, k: 1024, bs: [2]int64{2, 1}, nr: one, perB: true}),
		mulMatCase(mmSpec{ta: tensor.Q6_K, m: 128, n: 131, k: 1024, bs: one, nr: one, padA: true}),
		mulMatCase(mmSpec{ta: tensor.IQ4_XS, m: 130, n: 128, k: 1024, bs: one, nr: one}),
		mulMatCase(mmSpec{ta: tensor.IQ2_S, m: 128, n: 136, k: 1024, bs: one, nr: one}),
		// the narrow form (64 columns a workgroup, fewer than 128 columns): split-K, a
		// partial column tile, element-wise loads with K not a multiple of the slice, the
		// dequantized chunks, and many tiles without a split
		mulMatCase(mmSpec{ta: f16, m: 256, n: 40, k: 1024, bs: one, nr: one}),
		mulMatCase(mmSpec{ta: f32, m: 130, n: 33, k: 1030, bs: [2]int64{2, 1}, nr: [2]int64{2, 1}}),
		mulMatCase(mmSpec{ta: tensor.Q4_K, m: 300, n: 100, k: 1024, bs: one, nr: one}),
		mulMatCase(mmSpec{ta: f16, m: 512, n: 20, k: 64, bs: [2]int64{8, 8}, nr: one}),
		// 9 to 32 columns: mat-vecs over column ranges (8, 8, ... and the rest), batched
		// and broadcast, the integer mat-vec's quantized columns, Q6_K's kernels
		mulMatCase(mmSpec{ta: f16, m: 256, n: 17, k: 512, bs: [2]int64{2, 1}, nr: [2]int64{2, 1}}),
		mulMatCase(mmSpec{ta: tensor.Q4_K, m: 256, n: 20, k: 1024, bs: one, nr: one}),
		mulMatCase(mmSpec{ta: tensor.Q6_K, m: 200, n: 12, k: 512, bs: one, nr: one}),
		mulMatCase(mmSpec{ta: tensor.Q8_0, m: 128, n: 32, k: 256, bs: one, nr: one}),
		{Name: "GRAPH(mul_mat+permute+cont,m=128,n=256,k=1024,heads=2)", Op: "GRAPH", Types: "mixed", MaxNMSE: MulMatMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				v := b.New("v", f16, 1024, 128, 2)
				kq := b.New("kq", f32, 1024, 256, 2)
				kqv := b.L.MulMat(b.Ctx, v, kq) // [128, 256, 2]
				return b.L.Cont(b.Ctx, b.Permute(kqv, [4]int{0, 2, 1, 3}))
			}},
	}
}
