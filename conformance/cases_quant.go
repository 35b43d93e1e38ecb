package conformance

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// Quantized weights, modelled on test-backend-ops' test_mul_mat and test_get_rows over its
// quantized types: every format through the mat-vec kernel (n <= 4) and the tiled one,
// batched with src0 broadcast, permuted, with padded views of either source; GET_ROWS
// batched and from a view. The quantized leaves are filled by ggml's own quantizer, so the
// CPU backend and the device read the same blocks. The CPU multiplies quantized weights by
// src1 quantized to 8 bits, the device by src1 in F32: MUL_MAT keeps MulMatMaxNMSE, and
// GET_ROWS (exact dequantization) the default threshold.

// quantTypes are the quantized weight formats under test: blocks of 32 elements, then the
// quantTypes are the quantized weight formats under test: blocks of 32 elements, then the
// k-quants (blocks of 256), the ternary, FP4 and 1- and 2-bit formats (blocks of 256, 32,
// 64 and 128 elements), then the IQ formats (IQ4_NL in blocks of 32, the others of 256).
var quantTypes = []tensor.Type{tensor.Q8_0, tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1,
	tensor.Q4_K, tensor.Q6_K, tensor.Q5_K, tensor.Q2_K, tensor.Q3_K,
	tensor.TQ1_0, tensor.TQ2_0, tensor.MXFP4, tensor.NVFP4, tensor.Q1_0, tensor.Q2_0,
	tensor.IQ4_NL, tensor.IQ4_XS, tensor.IQ2_XXS, tensor.IQ2_XS, tensor.IQ2_S, tensor.IQ3_XXS, tensor.IQ3_S,
	tensor.IQ1_S, tensor.IQ1_M}

func quantCases() []*Case {
	one := [2]int64{1, 1}
	var cs []*Case
	for _, ta := range quantTypes {
		// Row lengths in whole blocks: k1 (one block, two of 32), k2 (at least two blocks
		// and 256 elements), k3 (three blocks).
		be := int64(ta.BlockElems())
		k1, k2, k3, ks := int64(64), int64(256), int64(96), []int64{32, 64, 4096}
		if be > 32 {
			k1, k2, k3, ks = be, max(2*be, 256), 3*be, []int64{be, 2 * be, 4096}
		}
		for _, n := range []int64{1, 2, 4, 8, 16, 64} {
			cs = append(cs, mulMatCase(mmSpec{ta: ta, m: 67, n: n, k: k2, bs: one, nr: one}))
		}
		for _, k := range ks {
			for _, n := range []int64{1, 9} {
				cs = append(cs, mulMatCase(mmSpec{ta: ta, m: 33, n: n, k: k, bs: one, nr: one}))
			}
		}
		for _, n := range []int64{1, 4, 16} {
			for _, bn := range [][2][2]int64{{{3, 2}, {1, 1}}, {{3, 2}, {2, 1}}, {{2, 3}, {1, 2}}, {{1, 1}, {2, 3}}} {
				cs = append(cs, mulMatCase(mmSpec{ta: ta, m: 35, n: n, k: k1, bs: bn[0], nr: bn[1]}))
			}
		}
		for _, n := range []int64{1, 8} {
			for _, p := range [][4]int{{0, 2, 1, 3}, {0, 1, 3, 2}} {
				cs = append(cs, mulMatCase(mmSpec{ta: ta, m: 17, n: n, k: k1, bs: [2]int64{2, 3}, nr: one, per: p}))
			}
		}
		cs = append(cs,
			mulMatCase(mmSpec{ta: ta, m: 33, n: 7, k: k1, bs: [2]int64{4, 1}, nr: one, perB: true}),
			mulMatCase(mmSpec{ta: ta, m: 17, n: 1, k: k1, bs: [2]int64{2, 1}, nr: [2]int64{2, 1}, perB: true}),
			mulMatCase(mmSpec{ta: ta, m: 33, n: 3, k: k3, bs: [2]int64{2, 1}, nr: one, padA: true}),
			mulMatCase(mmSpec{ta: ta, m: 33, n: 7, k: k3, bs: [2]int64{2, 1}, nr: one, padA: true}),
			mulMatCase(mmSpec{ta: ta, m: 17, n: 2, k: k1, bs: one, nr: one, padB: true}),
			mulMatCase(mmSpec{ta: ta, m: 17, n: 9, k: k1, bs: one, nr: one, padB: true}),
		)
		// GET_ROWS sources: rows of 1, 8, 2, 2, 1 and 3 blocks of 32 elements, or of 1,
		// 256 elements (at least two blocks), 1, 1, 1 and 3 blocks of more.
		b8 := be * 8
		if be > 32 {
			b8 = max(2*be, 256)
		}
		for _, s := range []struct {
			src  [4]int64
			n    int64
			view bool
		}{
			{shape(be, 5), 3, false},
			{shape(b8, 7), 9, false},
			{shape(k1, 5, 3), 4, false},
			{shape(k1, 5, 3, 2), 4, false},
			{shape(be, 6, 2, 2), 1, false},
			{shape(3*be, 5), 3, true},
		} {
			cs = append(cs, getRowsCase(ta, s.src, s.n, s.view))
		}
	}
	return cs
}
