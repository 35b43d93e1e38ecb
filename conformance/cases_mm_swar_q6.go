package conformance

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// mulMatSwarQ6Cases cover the integer mat-vec's Q6_K form (signed 6-bit lanes, a scale
// per 16 elements): K of 256, 2048, 4096 and 12544 (49 blocks: rows starting at either
// alignment), src0 broadcast over dims 2 and 3, activations spanning six orders of
// magnitude with an all-zero block, weights and activations at their extremes (6-bit
// -32 and 31 against +-127), and a product of 8192 rows. Q6_K takes the kernel from 2^27
// weights (output heads): TestConformanceSwar runs these with the threshold at one
// weight. ggml's Q6_K quantization is slow: few rows.
func mulMatSwarQ6Cases() []*Case {
	one := [2]int64{1, 1}
	var cs []*Case
	for _, k := range []int64{256, 2048, 4096, 12544} {
		cs = append(cs, mulMatCase(mmSpec{ta: tensor.Q6_K, m: 13, n: 1, k: k, bs: one, nr: one}))
	}
	return append(cs,
		mulMatCase(mmSpec{ta: tensor.Q6_K, m: 9, n: 1, k: 1024, bs: [2]int64{2, 3}, nr: [2]int64{2, 1}}),
		swarCase(tensor.Q6_K, 11, 2048, "range_zero_block", Uniform(-1, 1), blockRange),
		swarCase(tensor.Q6_K, 11, 2048, "extremes", signs, signs),
		mulMatCase(mmSpec{ta: tensor.Q6_K, m: 8192, n: 1, k: 256, bs: one, nr: one}))
}
