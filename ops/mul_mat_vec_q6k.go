package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The Q6_K mat-vec (mul_mat_vec_q6k.wgsl): a MUL_MAT of Q6_K weights by one F32 column,
// sixteen invocations a block, each reading the five words of weights and two of scales
// of its 16 elements once, every field at a place within its words the compiler knows
// (the workgroup's SIMD groups take blocks of one alignment); its gate form (GLU) does the
// same for a feed-forward's gate and up matrices and stores their SWIGLU, the fusion
// mul_mat+mul_mat+glu (lowerMatVecGLU). The eight-element routine
// read six fields, each as two words at a run-time alignment, for every 8 weights; the
// integer mat-vec's Q6K form read its fields the same way. Q6_K is what a Q4_K_M model
// stores its output matrix and half its attn_v and ffn_down matrices in.
//
// Measured on an NVIDIA H200 (µs; weights beyond the L2 cache where marked cold; one
// machine start, GGML_WGPU_Q6K=0 -> default: the eight-element kernel, or the integer one
// for the output heads, -> this one; ggml-vulkan in brackets): 14336 x 4096 cold 57.2 ->
// 45.7 (20.2), 4096 x 14336 cold 59.7 -> 43.0 (20.5), 4096 x 4096 cold 22.1 -> 17.3
// (15.4), 2048 x 8192 cold 20.2 -> 19.9 (12.6), 1024 x 4096 cold 8.87 -> 7.86 (12.6), 512
// x 2048 cold 5.86 -> 5.51 (12.1), 128256 x 2048 186 -> 175 (91.2), 128256 x 4096 355 ->
// 329 (178). An 8B-class Q4_K_M model (mkmodel --type q4_k_m: every ffn_down and attn_v
// and the output in Q6_K): GPU time per decode graph 7,001, 7,024 -> 6,293, 6,622 µs,
// tg64 149, 151 -> 165, 165 t/s; the 1B-class one 1,622 -> 1,557 µs, 511 -> 531 t/s.
// Rows per workgroup x workgroup size (1, 2, 4 x 64, 128, 256; another start) moved the
// cold products by less than 10% but for 256 invocations (slower everywhere) and 4 rows
// of the smaller products; 4 rows helped the output heads (187 -> 182 µs), 128
// invocations the rows of 8192 elements and more (4096 x 14336 47.6 -> 44.2). Two blocks
// a loop turn (the kernel's UN) against one: output heads 183 -> 174 and 347 -> 332 µs,
// the rest even; four: no better. Putting each run's bits together four weights to a word
// before turning bytes into floats (where they were extracted element by element) took
// 14336 x 4096 from 47.2 to 45.9 µs, 4096 x 14336 from 44.6 to 42.9, the 4096-wide head
// from 332 to 326 (unpack4x8unorm for the bytes: 46.3, 43.7, 336); turning them into
// floats two at a time through unpack2x16float (bytes1024 in common.wgsl) then took 14336
// x 4096 from 46.0, 45.8 to 44.1, 44.0 µs and 4096 x 14336 from 42.8, 43.2 to 41.7, 41.3
// (another start; the head 328, 329 -> 326, 326). The kernel is bound by
// its arithmetic and the loads' latency in turn: without its activation loads 14336 x
// 4096 took 43.8 µs, without its weight loads 34.6, without either 31.8 (47.9 whole);
// reading both words of every field and selecting by the alignment, without the branch,
// so that a loop turn's loads could all go first, measured no better (46.5, 46.1, 329).
// Taking 2 to 8 columns too (the block's weights dequantized once for all of them) lost
// to the vectorised kernel (14336 x 4096 cold, n = 2, 4, 8: 60.6, 86.5, 141 against 60.6,
// 79.1, 112 µs) and cost the one-column form (heads 174 -> 190 µs), so it takes one
// column only. Once the weights were bound read-only (backend.readOnlyOperands), two rows
// a workgroup beat one (H200, cold, µs, rows x invocations: 14336 x 4096 39.5 at 1 x 64 ->
// 35.7 at 2 x 64; 4096 x 14336 37.1 at 1 x 128 -> 34.8 at 2 x 128; 4096 x 4096 16.1 ->
// 14.9), and four lost (42.3, 42.9, 16.3).

// q6kShape returns the Q6_K mat-vec's rows per workgroup and workgroup size for m rows
// (over every batch) of k elements, with Limits' overrides. Products of one column whose
// blocks go a pair at a time (pairs) take 32 invocations, two rows, from 4096 rows: one
// SIMD group a workgroup, as ggml-vulkan's Q6_K mat-vec takes on NVIDIA (one at a time,
// the kernel needs multiples of 64: its two sixteens of a SIMD group read blocks of one
// alignment). On an H100 (µs, weights beyond the L2 cache, two rows by 64 or 128
// invocations -> two by 32; ggml-vulkan in brackets): 14336 x 4096 34.7 -> 31.3 (21.5),
// 4096 x 14336 36.9 -> 34.3 (21.3), 8192 x 2048 14.8 -> 12.4 (11.8), 4096 x 4096 15.1 ->
// 13.2 (12.6); the gate form (one row) 14336 x 4096 56.7 -> 54.3, 8192 x 2048 22.7 -> 20.9;
// but 2048 x 8192 15.0 -> 17.1 (fewer rows keep 64 or 128), two columns of 4096 x 14336
// 40.6 -> 48.3 and four of 14336 x 4096 56.5 -> 60.5 (several columns keep them). One row
// by 32 and four lost (34.7, 36.1 and 36.0, 79.2 for the first two).
func q6kShape(m, k uint32, pairs bool, l *Limits) (rows, wg int) {
	rows, wg = 1, 64
	switch {
	case m >= 65536:
		rows = 4
	case m >= 4096:
		rows = 2
	}
	if k >= 8192 {
		wg = 128
	}
	if pairs && m >= 4096 {
		rows, wg = 2, 32
	}
	if l.Q6KRows > 0 && l.Q6KRows <= 16 {
		rows = l.Q6KRows
	}
	if w := l.Q6KWG; w == 32 || w >= 64 && w <= 256 && w%64 == 0 {
		wg = w
	}
	return rows, wg
}

// lowerMatVecQ6K returns the Q6_K mat-vec dispatch of the MUL_MAT t (parameters p), or
// false where it does not apply: weights other than Q6_K, more columns than q6kCols,
// columns not in 16-byte vectors, weights whose blocks do not start on even bytes,
// Limits.Q6KOff, or an output head that the integer mat-vec takes (q6kHeadOnXQ).
func lowerMatVecQ6K(t *tensor.Tensor, p mulMatParams, l *Limits) ([]Dispatch, bool) {
	a, b := t.Src[0], t.Src[1]
	if !q6kApplies(a, b, p, l) || q6kHeadOnXQ(a, b, p, l) || q6kOnSwar(a, b, p, l) {
		return nil, false
	}
	return []Dispatch{matVecQ6K(p, []*tensor.Tensor{a, b, t}, l)}, true
}

// q6kApplies reports whether the Q6_K mat-vec takes weights a by columns b: Q6_K rows
// whose blocks start on even bytes, one to q6kCols columns in 16-byte vectors,
// unless Limits.Q6KOff.
func q6kApplies(a, b *tensor.Tensor, p mulMatParams, l *Limits) bool {
	return !l.Q6KOff && a.Type == tensor.Q6_K && p.N >= 1 && p.N <= uint32(q6kCols(l)) && vectorRows(b) && quantRows(a) &&
		a.Loc.Addr%2 == 0 && a.Nb[1]%2 == 0 && a.Nb[2]%2 == 0 && a.Nb[3]%2 == 0
}

// q6kOnSwar reports whether the Q6_K product p of weights a by b, of several columns,
// takes the integer mat-vec's Q6K form on XQ (q6kSwarCols) instead of the Q6_K mat-vec.
func q6kOnSwar(a, b *tensor.Tensor, p mulMatParams, l *Limits) bool {
	return a.Type == tensor.Q6_K && p.N > 1 && swarApplies(a, b, p, l)
}

// q6kSwarMinCols and q6kSwarMaxCols are the fewest and the most src1 columns of a Q6_K
// product of 2^24 weights or more (swarMinDefault) that the integer mat-vec's Q6K form
// takes on XQ: the columns quantized once by a dispatch of their own, each row's weights
// put in signed lanes once for all of them (q6_group_cols), instead of the Q6_K mat-vec's
// several-column kernel, which turns them into floats. On an H100 (µs, weights beyond
// the L2 cache, n = 2, 4, 8, one machine start; the Q6_K mat-vec -> this; ggml-vulkan in
// brackets): 14336 x 4096 35.7, 56.8, 82.5 -> 38.6, 46.3, 75.3 (24.9, 41.8, 82.3); 4096 x
// 14336 35.9, 65.0, 90.2 -> 39.4, 49.2, 83.5 (26.0, 41.1, 76.8); at one row a workgroup
// 43.1, 63.2, 109 and 53.4, 86.0, 148, at four 88.1, 89.4, 117 and 83.6, 87.3, 109. An 8B
// Q4_K_M decoding S sequences (every ffn_down in Q6_K; GPU µs a step, medians,
// GGML_WGPU_PROFILE=1, same start): S = 4 7,755.1, 7,772.3 -> 7,547.3, 7,560.1; S = 8
// 11,952.0 -> 11,684.2; but S = 2 4,798.6 -> 5,084.5, so two columns keep the Q6_K mat-vec.
const (
	q6kSwarMinCols = 3
	q6kSwarMaxCols = swarMaxCols
)

// q6kSwarCols returns the fewest and the most src1 columns of a Q6_K product that the
// integer mat-vec takes (Limits.Q6KSwarMinCols, Q6KSwarCols where set).
func q6kSwarCols(l *Limits) (least, most int) {
	least, most = q6kSwarMinCols, q6kSwarMaxCols
	if l.Q6KSwarMinCols > 1 {
		least = l.Q6KSwarMinCols
	}
	if l.Q6KSwarCols > 0 {
		most = min(l.Q6KSwarCols, swarMaxCols)
	}
	return least, most
}

// q6kXQMinRows is the fewest rows (over every batch) of a single Q6_K product of one
// column that takes the integer mat-vec's Q6K form on XQ (its column quantized by a
// dispatch of its own, q6kXQRows rows a workgroup) instead of the Q6_K mat-vec: the output
// heads. On an H100 (µs, one column, two runs each in one machine start, Q6_K mat-vec ->
// XQ at two rows -> at four): 128256 x 2048 132, 133 -> 117, 116 -> 113; 128256 x 4096
// 246, 246 -> 216, 217 -> 213; but 14336 x 4096 (cold) 32.9, 32.9 -> 33.5, 33.6 and 4096 x
// 14336 35.8, 35.8 -> 37.7, 37.6 at two rows (54.7 at four), 4096 x 4096 14.6 -> 17.0,
// 1024 x 4096 8.2 -> 12.3, and the gate form 14336 x 4096 55.7 -> 94.1.
const (
	q6kXQMinRows = 65536
	q6kXQRows    = 4
)

// q6kHeadOnXQ reports whether the Q6_K product p of weights a by b is one of one column
// and q6kXQMinRows rows or more (Limits.Q6KXQMinRows where set) that the integer mat-vec
// takes on XQ.
func q6kHeadOnXQ(a, b *tensor.Tensor, p mulMatParams, l *Limits) bool {
	least := uint64(q6kXQMinRows)
	if l.Q6KXQMinRows > 0 {
		least = uint64(l.Q6KXQMinRows)
	}
	return a.Type == tensor.Q6_K && p.N == 1 && uint64(p.M)*uint64(p.Batches) >= least && swarApplies(a, b, p, l) && swarXQFits(a, p)
}

// q6kMaxCols is the most src1 columns the Q6_K mat-vec takes: 2 to 8 columns through
// mul_mat_vec_q6k_cols.wgsl, each block's weights turned into floats once for every
// column. On an H100 (µs, cold, the vectorised kernel -> this; ggml-vulkan in brackets,
// another start): 14336 x 4096 at n = 2 51.2 -> 38.9 (24.9), 4 72.3 -> 56.4 (40.3), 8
// 92.6 -> 88.9 (79.6); 4096 x 14336 52.1 -> 39.7 (23.9), 73.9 -> 61.4 (40.4), 103 -> 94.4
// (76.3). An earlier measurement of four columns, before the kernel took its final form,
// had them even. Two rows a workgroup at most (four at eight columns: 252 and 277 µs; one
// row: 141 and 165), and blocks a pair at a time (one at a time: 142, 141 at eight
// columns). The gate form keeps two columns at most (q6kGateMaxCols). (The one-column
// kernel keeps its own source: written with the several-column one's struct of
// activations and sums through a pointer, the same arithmetic slowed a 1B Q4_K_M decode
// graph from 1,483 to 1,654 µs.)
const q6kMaxCols = 8

// q6kGateMaxCols is the most src1 columns of the Q6_K mat-vec's gate form: two, as
// measured (more take the vectorised kernel's gate form).
const q6kGateMaxCols = 2

// q6kCols returns the most columns the Q6_K mat-vec takes, Limits.Q6KCols where set.
func q6kCols(l *Limits) int {
	if l.Q6KCols > 0 {
		return min(l.Q6KCols, q6kMaxCols)
	}
	return q6kMaxCols
}

// q6kHold returns the columns whose activations the Q6_K mat-vec's several-column kernel
// holds at a time for n columns, after turning a block's weights of its rows into floats
// (mul_mat_vec_q6k_cols.wgsl's HOLD), or 0 for every column's activations read first and
// each row's weights turned into floats in turn (the kernel's earlier form, which held
// 80 vec4s of activations for eight columns two blocks at a time); Limits.Q6KHold
// where set (-1: 0). On an H100 (µs, weights beyond the L2 cache, two runs of one start,
// 14336 x 4096 and 4096 x 14336 at n = 2, 4, 8; GGML_WGPU_Q6K_HOLD; one run of hold 0's
// first two lost to the log's truncation):
//
//	hold 0: 36.3       / 36.5, 37.2 | 61.5       / 76.6, 77.2 | 101, 103 / 136, 136
//	hold 1: 39.5, 40.4 / 44.4, 45.2 | 57.4, 58.3 / 65.6, 65.7 | 124, 125 / 159, 159
//	hold 2: 40.1, 40.6 / 38.7, 39.0 | 67.0, 67.6 / 97.8, 97.4 | 85.0, 85.3 / 93.9, 94.6
//	hold 4: 40.5, 40.4 / 39.2, 39.0 | 67.8, 67.2 / 97.4, 98.1 | 84.2, 84.5 / 93.6, 95.4
//	hold 8:                                                    123, 123 / 158, 157
//
// (ggml-vulkan, another start: 25.2 / 24.5, 41.3 / 40.7, 81.3 / 76.6.) An 8B-class Q4_K_M
// decoding several sequences (bench -p 0 -n 32 -r 2 -s S), t/s:
// S = 4 hold 0 442.2, 1 456.3, 2 407.4, 4 416.5; S = 8 hold 0 532.2, 1 509.4, 2 588.2, 4
// 597.1, 8 506.5 (every ffn_down, attn_v and the output in Q6_K). So four columns hold one
// at a time, five and more four (measured at eight), two and three every column first.
// With few columns held, four rows by 64 invocations measured faster alone (one run each,
// 14336 x 4096 and 4096 x 14336 at n = 4 and 8: 52.5, 81.9 / 59.7, 77.0 against 56.9, 81.2
// / 64.8, 89.6 at the two rows by 64 / 128 of q6kShape) but not in the model (S = 4 427.0,
// 440.1 against 452.4, 464.1 at two rows, GGML_WGPU_Q6K_ROWS=2; S = 8 575.4, 598.5 against
// 583.9, 588.4, alternating, the output head kept at two rows), so the rows stay two.
func q6kHold(n int, l *Limits) int {
	switch {
	case l.Q6KHold < 0:
		return 0
	case l.Q6KHold > 0:
		return min(l.Q6KHold, n)
	case n == 4:
		return 1
	case n > 4:
		return 4
	}
	return 0
}

// matVecQ6K is the Q6_K mat-vec dispatch of tensors src0, src1, dst, or with four tensors
// its gate form: gate and up weights (the same shape and strides), src1 and the SWIGLU
// result.
func matVecQ6K(p mulMatParams, tensors []*tensor.Tensor, l *Limits) Dispatch {
	glu := len(tensors) == 4
	least := uint64(q6kPairsMin)
	if l.Q6KPairsMin > 0 {
		least = uint64(l.Q6KPairsMin)
	}
	pairs := !l.Q6KPairsOff && uint64(p.M)*uint64(p.K) >= least
	for _, w := range tensors[:len(tensors)-2] {
		pairs = pairs && q6kPairs(w)
	}
	rows, wg := q6kShape(p.M*p.Batches, p.K, pairs && p.N == 1, l)
	if glu && l.Q6KRows == 0 {
		// One row of each matrix: on an H200 (cold, µs) the gate 14336 x 4096 took 61.8
		// at one row against 78.2, 79.4 at two (the integer kernel's gate form 88.0,
		// 88.3; ggml-vulkan 45.0), 8192 x 2048 22.9 against 28.7, 29.3 (30.7, 31.1;
		// 17.1).
		rows = 1
	}
	perRow := int(p.N) // sums per row
	if glu {
		perRow *= 2
	}
	if p.N > 2 && rows > 2 && l.Q6KRows == 0 {
		rows = 2 // see q6kMaxCols
	}
	for rows > 1 && rows*perRow*wg > matVecRed { // overrides only: the sums must fit
		rows /= 2
	}
	acc := rows * perRow
	ops := []wgslOperand{vec(in("src0", tensors[0]))}
	if glu {
		ops = append(ops, vec(in("src0b", tensors[1])))
	}
	ops = append(ops, vec(in("src1", tensors[len(tensors)-2])), out("dst", tensors[len(tensors)-1]))
	defs := map[string]string{"ROWS": fmt.Sprint(rows), "ACC": fmt.Sprint(acc), "RED": fmt.Sprint(acc * wg), "GLU": flag(glu), "PAIRS": flag(pairs)}
	kernel := "mul_mat_vec_q6k"
	if p.N > 1 {
		kernel = "mul_mat_vec_q6k_cols"
		hold := q6kHold(int(p.N), l)
		defs["NCOLS"], defs["NCOLS4"], defs["HOLD"], defs["HOLD4"], defs["ROWSB"] = fmt.Sprint(p.N), fmt.Sprint(4*p.N), fmt.Sprint(hold), fmt.Sprint(4*max(hold, 1)), "1"
		if glu {
			defs["ROWSB"] = fmt.Sprint(rows)
		}
	}
	s := spec(kernel, wg, p, defs, ops...)
	blocks := (uint64(p.M) + uint64(rows) - 1) / uint64(rows) * uint64(p.Batches)
	return Dispatch{Spec: s, Tensors: tensors, Params: p, Grid: grid1D(blocks, l)}
}

// q6kPairsMin is the fewest weights (M x K) of a matrix whose Q6_K mat-vec takes blocks a
// pair at a time. On an H100 (µs, cold weights but for the heads, one machine start, one
// block at a time, twice -> pairs): 14336 x 4096 35.0, 34.9 -> 33.2; the heads 128256 x
// 2048 148, 148 -> 134 and x 4096 278, 279 -> 247; 2048 x 8192 16.8, 16.5 -> 14.8; 4096
// x 4096 15.2, 14.8 -> 14.7; 8192 x 2048 15.1, 15.1 -> 14.9; the gate form 14336 x 4096
// 62.0, 62.0 -> 55.5 and 8192 x 2048 22.7, 23.2 -> 21.9; 4096 x 14336 35.7, 35.6 -> 36.2;
// but the products of 2^22 weights lost (2048 x 2048 7.40, 7.37 -> 8.52; 1024 x 4096 8.27,
// 8.54 -> 9.78). A 1B Q4_K_M decode's GPU time per graph with pairs at every size 1,545,
// 1,482 -> 1,434, 1,434 µs; from this threshold, the previous library against this one
// (another start, alternating) 1,492, 1,488 -> 1,440, 1,439.
const q6kPairsMin = 1 << 24

// q6kPairs reports whether the Q6_K mat-vec can take weights w a pair of blocks at a
// time, the first starting on a word and the second two bytes past one: rows of an even
// count of blocks (so that their bytes are a multiple of 4) starting on a word.
func q6kPairs(w *tensor.Tensor) bool {
	return (w.Ne[0]/256)%2 == 0 && w.Loc.Addr%4 == 0 && w.Nb[1]%4 == 0 && w.Nb[2]%4 == 0 && w.Nb[3]%4 == 0
}

// matVecQ6KExamples are MUL_MAT nodes that take the Q6_K mat-vec under the default limits,
// in each of its shapes (1, 2 and 4 rows, 64 and 128 invocations, blocks one or two at a
// time, one, two and four columns: the last with the columns' activations held one at a
// time), for the kernel compile test.
func matVecQ6KExamples() []*tensor.Tensor {
	return []*tensor.Tensor{
		node(tensor.OpMulMat, f32(512, 1), nil, contiguous(tensor.Q6_K, 2048, 512), f32(2048, 1)),
		node(tensor.OpMulMat, f32(4096, 1), nil, contiguous(tensor.Q6_K, 4096, 4096), f32(4096, 1)),
		node(tensor.OpMulMat, f32(65536, 1), nil, contiguous(tensor.Q6_K, 1024, 65536), f32(1024, 1)),
		node(tensor.OpMulMat, f32(64, 1), nil, contiguous(tensor.Q6_K, 8192, 64), f32(8192, 1)),
		node(tensor.OpMulMat, f32(4096, 2), nil, contiguous(tensor.Q6_K, 4096, 4096), f32(4096, 2)), // two columns, pairs
		node(tensor.OpMulMat, f32(512, 2), nil, contiguous(tensor.Q6_K, 2048, 512), f32(2048, 2)),
		node(tensor.OpMulMat, f32(4096, 4), nil, contiguous(tensor.Q6_K, 3584, 4096), f32(3584, 4)), // four columns held one at a time, pairs (below q6kSwarCols' weights)
		node(tensor.OpMulMat, f32(512, 4), nil, contiguous(tensor.Q6_K, 2048, 512), f32(2048, 4)),
	}
}
