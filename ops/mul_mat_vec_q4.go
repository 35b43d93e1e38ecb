package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// The integer mat-vec of 4-bit weights (mul_mat_vec_q4.wgsl): a MUL_MAT of Q4_0, Q4_1,
// Q4_K, Q5_0, Q5_1, Q5_K (their fifth bits added: the HBIT form), MXFP4 (its E2M1 codes
// made integers: the FP4 form), IQ4_NL or IQ4_XS weights (their levels looked up: the
// LEVELS form; see swarCodedCols) by one F32 column multiplies the weights' nibbles by
// the column quantized to 8 bits per block of 32 (as ggml's CPU backend does: Q8_0, Q8_1,
// Q8_K activations), two products per i32 multiply-add. Q6_K's 6-bit weights take the
// same kernel in signed lanes (its Q6K form), and so do Q8_0's output heads (its BYTES
// form: swarQ8MinRows), and a MUL_MAT_ID's experts in the nibble formats where the
// mat-vec takes it (its IDS form: swarIDApplies). A single product quantizes the
// activations in each workgroup, in registers, for all the rows the workgroup computes.
// The fused feed-forward gate (gate and up projections of the same weight format and the
// SWIGLU, lowerMatVecGLU) takes its two-matrix form, after a dispatch that quantizes the
// column once into scratch memory (XQ), so that each of its workgroups takes two rows: on
// an H100 (µs, weights beyond the L2 cache, ggml-vulkan's gate, up and SWIGLU in
// brackets) Q4_K 14336 x 4096 68.1 -> 40.7 (54.1), 8192 x 2048 32.1 -> 22.3 (22.0). That
// dispatch cost ~10 µs when it took one invocation a group, which single products did not
// repay: Q4_K 14336 x 4096 30.5 -> 31.0, 4096 x 14336 29.5 -> 30.7, 2048 x 8192 15.8 ->
// 19.8-24.4 µs. It now takes an invocation a quant word (mul_mat_vec_q4_act.wgsl): on an
// H100 the gate form 8192 x 2048 went 21.0, 21.7 -> 20.1, 19.9 µs and a 1B Q4_K decode
// graph's GPU time 1,339.5, 1,339.5 -> 1,301.0, 1,301.1 µs; single products of many rows
// now take it too (swarXQMinRows).
//
// Its MULTI form computes two or three products of one column quantized by the norm
// before them (llama's Q, V and K projections: the fusion row add+norm+mul+qkv,
// norm_gate.go, swarMulti).
//
// Products of 2 to 8 columns of Q4_0, Q4_1 and Q4_K weights (several sequences decoded
// together, speculative drafts) take the same form: the columns quantized once by that
// dispatch, each weight word's nibbles masked once for every column. On an H100 (µs,
// weights beyond the L2 cache, n = 2, 4, 8; the vectorised kernel -> this; ggml-vulkan in
// brackets; one machine start): Q4_0 14336 x 4096 40.8, 52.8, 69.7 -> 26.1,
// 31.9, 61.7 (23.6, 36.1, 63.5); Q4_0 4096 x 14336 42.3, 55.4, 72.6 -> 29.0, 33.3, 60.5
// (25.3, 37.8, 64.7); Q4_K 14336 x 4096 43.9, 63.3, 86.3 -> 32.5, 46.9, 84.0 (29.6, 47.1,
// 83.1); Q4_K 4096 x 14336 44.0, 70.5, 92.4 -> 33.0, 46.9, 86.1 (33.9, 50.7, 101); the Q4_K
// gate form 14336 x 4096 85.9, 124 -> 49.8, 83.8 at n = 2, 4 (52.8, 86.6). Below the
// one-column thresholds the vectorised kernel measured even or faster (Q4_K 2048 x 2048
// at n = 2: 8.0 against 12.9), so those thresholds hold for several columns too. An 8B
// Q4_K_M decode of 2 sequences took 8,270 µs of GPU time a step against 9,177 before.
// Q6_K products of 3 to 8 columns take it too (q6kSwarCols), their weights in signed
// lanes once for every column.

// swarMinDefault is the fewest weights (M x K over every batch) of a product that takes
// the integer mat-vec (Limits.SwarMin overrides it). Each workgroup quantizes the
// activations it reads, so the kernel pays off where enough work shares them: on an H100
// (perf harness, one column, µs, float kernel -> integer kernel) Q4_K 2048 x 2048 8.0 ->
// 9.5, 4096 x 4096 16.2 -> 13.1, Q4_0 4096 x 4096 13.1 -> 13.1, Q4_K 2048 x 8192 17.0 ->
// 12.8, 4096 x 14336 42 -> 27.3, 14336 x 4096 43 -> 27.5, 128256 x 2048 184 -> 99.
const swarMinDefault = 1 << 24

// swarMinSmallBlocks replaces swarMinDefault for Q4_0 and Q4_1 (blocks of 32, whose float
// kernel is cheaper): a 1B Q4_0 model decoded slower with its 2^24-weight products on the
// integer kernel (H100 tg128 398, 372 -> 364, 342 t/s), Q4_0 4096 x 4096 measured even
// (13.1 µs) and 14336 x 4096 faster (34 -> 30.9 µs).
const swarMinSmallBlocks = 1 << 25

// swarMinQ6K replaces swarMinDefault for Q6_K, which the integer kernel reads at either
// alignment (blocks of 210 bytes): on an H100 (µs, float kernel -> integer kernel) 14336 x
// 4096 58.8 -> 61.9, 4096 x 14336 61.8 -> 59.8, and only the output heads gained, 128256 x
// 2048 225 -> 200, 128256 x 4096 425 -> 388 (ggml-vulkan 20.6, 21.2, 94.2, 184).
const swarMinQ6K = 1 << 27

// swarQ8MinRows is the fewest rows (over every batch) of a Q8_0 product of one column
// that the integer mat-vec takes (its BYTES form; every product where Limits.SwarMin is
// set): the output heads. On an H100 (µs, one start, the vectorised float mat-vec -> this;
// ggml-vulkan in brackets): 128256 x 2048 126 -> 116 (120), 128256 x 4096 236 -> 208
// (236); but with weights beyond the L2 cache 14336 x 4096 33.3 -> 33.6 (26.5), 4096 x
// 14336 32.9 -> 34.6 (27.3), by 2, 4 and 8 columns 41.1, 58.6, 74.8 -> 41.4, 62.4, 109,
// and a 1B Q8_0 decode's GPU time per graph 1,220 -> 1,309 µs with every product of 2^24
// weights and more on it (its gate form, its 2048 x 8192 down products).
const swarQ8MinRows = 65536

// swarRows is the integer mat-vec's rows per workgroup, swarWG its workgroup size for
// products of many rows (fewer rows take more invocations, up to swarMaxWG, splitting
// their rows' tasks). Measured on an NVIDIA H100 (perf harness, one column, µs for Q4_K
// 14336 x 4096, 4096 x 14336, 128256 x 2048, 2048 x 8192, 4096 x 4096): 8 x 32 27.5,
// 47.9, 99.3, 27.2, 16.6; 8 x 64 30.6, 32.6, 144, 16.9, 13.1; 8 x 128 35.1, 27.3, 198,
// 12.8, 13.9; 4 x 64 36.3, 34.5, 189, 15.3, 13.9; 16 x 32 29.4, 75.8, 95.4, 33.8, 21.5
// (the float kernel 43.0, 41.8, 184, 17.0-21.8, 16.1; ggml-vulkan 24.4, 19.2, 107, 16.3,
// 17.5).
const (
	swarRows     = 8
	swarWG       = 32
	swarMaxWG    = 128
	swarManyRows = 8192 // rows from which swarWG is the workgroup size
)

// swarXQRows and swarXQWG are the rows per workgroup and workgroup size of the integer
// mat-vec whose column comes quantized (the gate form). Measured on an NVIDIA H100
// (perf harness, the kernel alone, weights beyond the L2 cache, µs for Q4_K 14336 x 4096,
// 4096 x 14336, the gate form 14336 x 4096, chains of 4096 x 4096 and 2048 x 2048): 2 x 32
// 20.5, 20.8, 34.3, 10.5, 6.31; 1 x 32 21.4, 22.2, 33.7, 9.76, 6.69; 2 x 64 22.3, 22.8,
// 36.2, 10.7, 6.91; 4 x 32 21.3, 33.2, 54.0, 13.4, 8.81; 8 x 32 23.8, 44.3, 62.7, 17.2,
// 10.7. In an 8B Q4_K decode, 1 x 32 measured as 2 x 32 (GPU time per graph).
const (
	swarXQRows = 2
	swarXQWG   = 32
)

// swarXQMinRows is the fewest rows of a single product of one column of the nibble
// formats that takes the XQ form (its column quantized by a dispatch of its own, two rows
// a workgroup), where fewer keep quantizing in the kernel (Limits.SwarXQ: every single
// product). On an H100 (µs, weights beyond the L2 cache, two runs each, in the kernel ->
// XQ, the quantizing dispatch included): Q4_0 14336 x 4096 25.7, 25.5 -> 21.9, 21.3 and
// 4096 x 14336 25.1, 25.1 -> 22.2, 21.8; Q4_K 14336 x 4096 28.8, 28.2 -> 23.1, 22.7 and
// 4096 x 14336 28.0, 27.8 -> 24.4, 24.6; Q4_K 4096 x 4096 13.0, 13.2 -> 12.3, 12.3 and
// 8192 x 2048 13.1, 13.5 -> 12.6, 12.3; but Q4_K 2048 x 8192 12.7, 13.2 -> 14.5, 14.7
// (ggml-vulkan 18.2, 23.3 at 14336 x 4096). A 1B Q4_K decode graph, all of whose single
// products above the threshold have 2048 rows, measured 1,287, 1,291 µs of GPU time
// against 1,296, 1,296 with every one on XQ; an 8B Q4_K_M's varied more between runs of
// one setting (6,572 and 6,673 µs) than between the settings (6,111 and 6,641 on XQ).
const swarXQMinRows = 4096

// swarColsRowsSmallBlocks replaces swarXQRows for one matrix of Q4_0 or Q4_1 (four quant
// words a group) by several columns; Q4_K (eight) and the gate form keep two rows. On an
// H100 (µs, weights beyond the L2 cache, n = 2, 4, 8; 2 rows -> 4 rows -> 1 row;
// ggml-vulkan in brackets): Q4_0 14336 x 4096 29.7, 40.0, 79.3 -> 26.1, 31.9, 61.7 ->
// 35.2, 58.6, 110 (23.6, 36.1, 63.5); 4096 x 14336 30.3, 40.1, 79.0 -> 29.0, 33.3, 60.5 ->
// 41.5, 71.1, 147 (25.3, 37.8, 64.7); but Q4_K 14336 x 4096 32.5, 46.9, 84.0 -> 39.2, 61.8,
// 132 -> 35.8, 57.4, 103 (29.6, 47.1, 83.1), 4096 x 14336 33.0, 46.9, 86.1 -> 44.9, 71.1,
// 119 -> 43.8, 80.1, 143 (33.9, 50.7, 101); the Q4_K gate form 14336 x 4096 49.8, 83.8, 193
// -> 69.8, 110, 468 -> 50.3, 97.8, 194 (52.8, 86.6, 157).
const swarColsRowsSmallBlocks = 4

// swarGateRowsSmallBlocks replaces swarXQRows for the gate form of Q4_0 or Q4_1 (four
// quant words a group) by one column. On an H100 (µs, weights beyond the L2 cache, the
// gate form 14336 x 4096, rows x invocations a workgroup): Q4_0 2 x 32 33.7, 1 x 32 31.5,
// 1 x 64 36.0, 4 x 32 36.5; Q4_K 31.9, 31.4, 36.6, 38.8 (Q4_K keeps two rows: in an 8B
// Q4_K decode, one row measured as two). Another start, two rows -> one, alternating: the
// gate form 33.2, 33.4 -> 31.7, 32.1 (8192 x 2048 15.5, 15.6 -> 15.8, 15.5); GPU time per
// decode graph (GGML_WGPU_PROFILE=1) of the 8B Q4_0 2,939.9, 2,943.5 -> 2,893.6, 2,896.0
// µs, of the 1B Q4_0 887.2 -> 881.8, 878.8.
const swarGateRowsSmallBlocks = 1

// swarGateMaxCols is the most src1 columns of the integer mat-vec's gate form: at eight
// the vectorised kernel's gate form is faster (H100, Q4_K 14336 x 4096, cold: 156 against
// 193 µs; at two and four columns 85.9 and 124 against 49.8 and 83.8).
const swarGateMaxCols = 4

// swarActWG is the workgroup size of the columns' quantization (an invocation a quant
// word: a multiple of every format's quant words a group).
const swarActWG = 64

// q6kHalf is the distance in elements between the low and the high nibbles' elements of
// a Q6_K ql byte (runs r and r + 2 of a half block: wgsl/q6k.go); q6kGroupWords the ql
// (and qh) words of one of the kernel's Q6_K groups (32 l of two runs: 64 elements).
const (
	q6kHalf       = 64
	q6kGroupWords = 8
)

// swarShape returns the rows per workgroup and workgroup size of the integer mat-vec of
// mats matrices (1, or 2 for the gate form) of m rows (over every batch) of tasks tasks by
// cols src1 columns, its columns quantized ahead (xq) or in the kernel, with groups of
// wpg quant words, with Limits' overrides (SwarRows; SwarWG: a power of two); the partial
// sums of the workgroup must fit its storage.
func swarShape(m, tasks uint32, mats, cols, wpg int, xq bool, l *Limits) (rows, wg int) {
	rows, wg = swarRows, swarWG
	if xq {
		rows, wg = swarXQRows, swarXQWG
		if cols > 1 && mats == 1 && wpg == 4 {
			rows = swarColsRowsSmallBlocks
		}
		if cols == 1 && mats == 2 && wpg == 4 {
			rows = swarGateRowsSmallBlocks
		}
	} else if m < swarManyRows {
		for wg < swarMaxWG && uint32(2*wg) <= tasks {
			wg *= 2
		}
	}
	return swarFit(rows, wg, mats, cols, l)
}

// swarFit returns an integer mat-vec kernel's rows per workgroup and workgroup size from
// its defaults rows and wg, with Limits' overrides (SwarRows; SwarWG: a power of two),
// halved until the workgroup's partial sums (mats x cols x rows of each invocation) fit
// its storage.
func swarFit(rows, wg, mats, cols int, l *Limits) (int, int) {
	if l.SwarRows > 0 && l.SwarRows <= 64 {
		rows = l.SwarRows
	}
	maxWG := l.MaxGroupSize
	if maxWG == 0 {
		maxWG = 256
	}
	if w := l.SwarWG; w >= 32 && w <= maxWG && w&(w-1) == 0 {
		wg = w
	}
	limit := l.workgroupStorage()
	for 4*mats*cols*rows*wg > limit {
		if rows > 1 {
			rows /= 2
		} else {
			wg /= 2
		}
	}
	return rows, wg
}

// swarPreload reports whether the integer mat-vec of mats matrices of a nibble format
// with the given half loads every row's quant words of a group before it quantizes the
// activations: for one matrix of Q4_0 or Q4_1 (four words per group). Measured on an
// H100 (µs, weights beyond the L2 cache; two runs each, without -> with): Q4_0 14336 x
// 4096 35.0, 37.3 -> 33.8, 33.9; Q4_0 128256 x 2048 94.7, 96.1 -> 84.0, 87.6 (ggml-vulkan
// 84.4); 1B Q4_0 tg128 373, 380 -> 400, 404 t/s. Q4_K's eight words a group lost: 4096 x
// 14336 36.4, 35.3 -> 46.1, 44.6, 8B Q4_K tg128 146 -> 136 t/s; and so did the gate
// form's two matrices (1B Q4_K tg128 ~400 -> ~350 t/s).
func swarPreload(half, mats int) bool {
	return half == 16 && mats == 1
}

// swarFormat returns the distance in elements between the low and the high nibbles'
// elements of the weights a (the nibble half of wgsl/nibbles.go: 4 for Q8_0's bytes;
// q6kHalf for Q6_K), 0 where the integer mat-vec cannot read them: not Q4_0, Q4_1, Q4_K,
// Q5_0, Q5_1, Q5_K, Q8_0, MXFP4, IQ4_NL, IQ4_XS or Q6_K, or, but for Q6_K, not in rows of
// whole units on 4-byte boundaries (unitRows' alignment; the Q6_K form computes each
// block's byte and reads it at either alignment).
func swarFormat(a *tensor.Tensor) int {
	f, ok := format(a.Type)
	if !ok || !quantRows(a) {
		return 0
	}
	if f == wgsl.Q6_K {
		return q6kHalf
	}
	if f.NibbleHalf() == 0 {
		return 0
	}
	if a.Ne[0]%int64(f.UnitElems()) != 0 || a.Loc.Addr%4 != 0 || a.Nb[1]%4 != 0 || a.Nb[2]%4 != 0 || a.Nb[3]%4 != 0 {
		return 0
	}
	return f.NibbleHalf()
}

// swarApplies reports whether the product p of weights a by src1 b takes the integer
// mat-vec: weights it reads (swarFormat), columns in 16-byte aligned vectors, at least
// Limits.SwarMin weights (swarMinDefault), and not Limits.SwarOff; several columns (up to
// swarCols) for the nibble formats, Q8_0 and Q6_K (q6kSwarCols; from swarMinDefault
// weights) only, from Limits.SwarColsMin weights where set; Q8_0's output heads only
// unless Limits.SwarMin is set (swarQ8MinRows).
func swarApplies(a, b *tensor.Tensor, p mulMatParams, l *Limits) bool {
	return swarAppliesMats(a, b, p, 1, l)
}

// swarAppliesMats is swarApplies for mats matrices of a's type and shape by the same
// columns (the feed-forward gate's two: swarGLUApplies), whose weights all count towards
// the threshold, as the columns' quantization serves them all.
func swarAppliesMats(a, b *tensor.Tensor, p mulMatParams, mats int, l *Limits) bool {
	half := swarFormat(a)
	least := uint64(swarMinDefault)
	switch {
	case a.Type == tensor.Q6_K:
		least = swarMinQ6K
	case half == 16: // Q4_0, Q4_1: blocks of 32
		least = swarMinSmallBlocks
	}
	if l.SwarMin > 0 {
		least = uint64(l.SwarMin)
	} else if a.Type == tensor.Q8_0 && (p.N > 1 || uint64(p.M)*uint64(p.Batches) < swarQ8MinRows) {
		return false
	}
	if p.N > 1 {
		if p.N > uint32(swarTypeCols(a.Type, l)) || !swarXQFits(a, p) {
			return false
		}
		if a.Type == tensor.Q6_K {
			fewest, most := q6kSwarCols(l)
			if p.N < uint32(fewest) || p.N > uint32(most) {
				return false
			}
			if l.SwarMin == 0 {
				least = swarMinDefault // several columns from the other formats' threshold
			}
		}
		if l.SwarColsMin > 0 {
			least = uint64(l.SwarColsMin)
		}
	}
	return !l.SwarOff && p.N >= 1 && half > 0 && vectorRows(b) && uint64(mats)*uint64(p.M)*uint64(p.Batches)*uint64(p.K) >= least
}

// swarGLUApplies reports whether the feed-forward gate of weights wg and wu (the same
// type and shape) by x, product p (of one of them), takes the integer mat-vec's gate form
// (the XQ form: its columns quantized ahead): of one column, both matrices' weights count
// towards the threshold. On an H100 a 1B Q4_0 decode (gate 8192 x 2048, 2^24 weights
// each, below swarMinSmallBlocks alone) took 982.7, 982.9 µs of GPU time per graph on the
// gate form against 999.3, 996.2 on the vectorised kernel (alternating runs,
// GGML_WGPU_PROFILE=1), with the columns' quantization still a dispatch of its own.
// Several columns (not measured so) keep one matrix's weights against it.
func swarGLUApplies(wg, wu, x *tensor.Tensor, p mulMatParams, l *Limits) bool {
	mats := 1
	if p.N == 1 {
		mats = 2
	}
	q6kCols := wg.Type == tensor.Q6_K && p.N > 1 // the Q6K form's gate takes one column (q6kSwarCols: single products)
	return !q6kCols && swarAppliesMats(wg, x, p, mats, l) && swarFormat(wu) > 0 && p.N <= swarGateCols(wg.Type) && swarXQFits(wg, p)
}

// swarXQFits reports whether the quantized columns of the integer mat-vec's XQ form (its
// gate form and several columns) of weights a by p's columns fit in ScratchBudget: 16
// bytes a quant word and the scales' four words per group of every column and batch, for
// the columns' 4 bytes an element 2.5 (blocks of 32) or 2.25. Batches beyond that (only
// odd graphs have them) take the vectorised kernel.
func swarXQFits(a *tensor.Tensor, p mulMatParams) bool {
	wpg := uint64(swarWPG(a))
	if wpg == 0 {
		return false
	}
	return swarGroups(a, p)*16*(wpg+1) <= ScratchBudget
}

// swarWPG returns the activation vectors of four words per group of the integer mat-vec
// of weights a (a group being 8 wpg elements): the nibble formats' quant words per group,
// q6kGroupWords for Q6_K, 4 for Q8_0 (a block of 32, eight quant words), 0 where the
// kernel cannot read a (swarFormat).
func swarWPG(a *tensor.Tensor) int {
	half := swarFormat(a)
	switch {
	case half == 0:
		return 0
	case a.Type == tensor.Q6_K:
		return q6kGroupWords
	case a.Type == tensor.Q8_0:
		return 4
	}
	return half / 4
}

// swarCoded reports whether the integer mat-vec turns the nibbles of weights of type t
// into other integers before its products (MXFP4's codes: its FP4 form; IQ4_NL's and
// IQ4_XS's levels: its LEVELS form; Q5_K's, Q5_0's and Q5_1's nibbles topped with their
// fifth bits: its HBIT form), for every column unless LANES (see swarCodedCols).
func swarCoded(t tensor.Type) bool {
	f, ok := format(t)
	return ok && (f.FP4Quants() || f.LevelQuants() || f.NibbleHighBits())
}

// swarCodedCols returns the most src1 columns of a product of coded nibbles (swarCoded)
// of type t that the integer mat-vec takes: 4 for Q5_K, 2 for MXFP4, Q5_0 and Q5_1, 1
// for IQ4_NL and IQ4_XS.
//
// Its FP4 form turns each quant word's E2M1 codes into integers (positive and negative
// magnitudes apart: about three times a nibble word's integer operations), once for
// every column, and integer operations bound it. On an H100 (µs, the vectorised
// float mat-vec -> FP4; weights beyond the L2 cache unless named; ggml-vulkan of that start in
// brackets): 14336 x 4096 by 1, 2, 4, 8 columns 34.8, 49.5, 54.0, 81.0 -> 32.5, 41.8,
// 60.9, 150 (26.2, 33.5, 41.8, 59.3); 4096 x 14336 35.6, 52.9, 55.8, 86.2 -> 31.2, 46.7,
// 63.0, 140 (23.0, 35.4, 46.3, 63.4); the heads 128256 x 2048 and x 4096, warm, 204, 214
// -> 154, 185 (98.0, 191); a 1B MXFP4 model's decode graph 1,666.4, 1,666.0 -> 1,619.6,
// 1,619.3 µs of GPU time (its 2048-row products below the threshold, as Q4_0's).
// Experts (MUL_MAT_ID) keep the float mat-vec: a 12-layer model of 32 MXFP4 experts of
// 2048 x 2048, 4 used, decoded with them on the IDS form at 1,748.6, 1,769.4 against
// 1,462.9, 1,462.0 µs a graph.
//
// Its LEVELS form looks each nibble's level up in workgroup memory and takes each SWAR
// product's dot apart (levels reach 127). On an H200 (µs, the vectorised float mat-vec ->
// LEVELS; weights beyond the L2 cache unless named; ggml-vulkan of that start in
// brackets): IQ4_XS 14336 x 4096 by 1 and 2 columns 43.7, 63.8 -> 36.1, 60.8 (35.5, 44.3),
// 4096 x 14336 44.4, 61.5 -> 39.9, 76.4 (36.3, 45.2); the heads 128256 x 2048 and x 4096,
// warm, 143, 301 -> 103, 217 (123, 252); IQ4_NL 14336 x 4096 43.6 -> 35.5 (23.2).
//
// Its HBIT form tops each nibble with its fifth bit from qh (four more operations a
// product's lanes) and sums 4 products (weights to 31) a SWAR accumulator. On an H200 (µs,
// the vectorised float mat-vec -> HBIT; weights beyond the L2 cache unless named;
// ggml-vulkan of that start in brackets): Q5_K 14336 x 4096 by 1, 2, 4, 8 columns 44.1,
// 48.9, 66.9, 87.5 -> 26.3, 42.5, 86.4, 167 (25.1, 35.1, 52.4, 89.8); 4096 x 14336 43.5,
// 47.3, 70.0, 91.2 -> 28.9, 44.9, 77.1, 174 (26.9, 35.1, 54.7, 115); the heads 128256 x
// 2048 and x 4096, warm, 182, 344 -> 87.4, 159 (109, 215); 2048 x 8192 19.2 -> 14.8 and
// 8192 x 2048 16.7 -> 13.6 (15.6, 13.3); a 1B Q5_K model's decode graph 1,522.3, 1,520.8
// -> 1,267.0, 1,268.0 µs of GPU time.
// Q5_0 and Q5_1 take it with their blocks' one word of fifth bits (HWORD). On an H100
// (14336 x 4096, weights beyond the L2 cache, by 1, 2, 4 columns, the vectorised float
// mat-vec -> HBIT, their single products by 2 and 4 on LANES; ggml-vulkan in brackets):
// Q5_0 33.6, 45.9, 54.6 -> 27.2, 39.1, 61.3 (26.0, 28.1, 41.6); Q5_1 33.2, 44.3, 53.0 ->
// 25.7, 35.3, 60.3 (26.8, 27.5, 41.0).
//
// Q5_K's single products on XQ change each row's words once for all columns instead
// (LANES: group_lanes), and so do Q5_0's and Q5_1's. On an H100 (µs, weights beyond the
// L2 cache; the vectorised float mat-vec, HBIT's words changed for every column, LANES):
// 14336 x 4096 by 2, 4, 8 columns 48.1, 67.6, 87.4 / 42.7, 72.9, 167 / 33.6, 57.5, 103;
// 4096 x 14336 47.8, 70.7, 91.6 / 45.5, 77.3, 174 / 33.2, 58.7, 102; by one column even
// (28.0, 29.9 / 28.5, 31.4). MXFP4's words changed once lost (14336 x 4096 by 2, 4, 8
// columns 41.9, 54.3, 80.8 against 44.4, 62.3, 122), and so did the gate form's two
// matrices that way (a 1B Q5_K decode graph 1,331, 1,333 against 2,024, 2,029 µs): those
// change their words for every column, the gate form by at most two (swarGateCols).
func swarCodedCols(t tensor.Type) int {
	switch t {
	case tensor.Q5_K:
		return 4
	case tensor.MXFP4, tensor.Q5_0, tensor.Q5_1:
		return 2
	}
	return 1
}

// swarGateCols returns the most src1 columns of the integer mat-vec's gate form (two
// matrices, their words changed for every column) of weights of type t: swarGateMaxCols,
// at most 2 for the coded formats (swarCoded).
func swarGateCols(t tensor.Type) uint32 {
	if swarCoded(t) {
		return uint32(min(swarGateMaxCols, 2, swarCodedCols(t)))
	}
	return swarGateMaxCols
}

// swarMaxCols is the most src1 columns the integer mat-vec takes (its several-column form,
// after a dispatch that quantizes the columns).
const swarMaxCols = 8

// swarCols returns the most src1 columns the integer mat-vec takes, Limits.SwarCols where
// set.
func swarCols(l *Limits) int {
	if l.SwarCols > 0 {
		return min(l.SwarCols, swarMaxCols)
	}
	return swarMaxCols
}

// swarTypeCols returns the most src1 columns the integer mat-vec takes with weights of
// type t: swarCols, at most swarCodedCols for the coded formats (swarCoded).
func swarTypeCols(t tensor.Type, l *Limits) int {
	if swarCoded(t) {
		return min(swarCols(l), swarCodedCols(t))
	}
	return swarCols(l)
}

// matVecQ4 returns the dispatches of the integer mat-vec of weights ws (one matrix, or
// the gate and the up projection: then dst holds the SWIGLU of their products) by the
// p.N columns b, with parameters p (its D: dst's strides). The gate form and products of
// several columns quantize the columns first, into scratch memory (XQ).
func matVecQ4(ws []*tensor.Tensor, b, dst *tensor.Tensor, p mulMatParams, l *Limits) []Dispatch {
	return swarDispatches(ws, b, nil, dst, p, p, l)
}

// swarIDApplies reports whether the MUL_MAT_ID of experts a by b, which the mat-vec
// takes, takes the integer mat-vec's IDS form: experts of Q4_0, Q4_1 or Q4_K (not the
// coded formats, swarCoded: see swarCodedCols), columns in 16-byte vectors, not
// Limits.SwarOff. On an H100 (one
// start, the vectorised float mat-vec -> this; ggml-vulkan in brackets): one token's
// products of 128 experts of Q4_K, 8 used, 768 x 2048 (a row of b for all slots) 15.0 ->
// 15.2 µs (19.2), 2048 x 768 (a row a slot) 17.5 -> 17.0 (20.9); a 12-layer model of those
// experts decoding, GPU time per graph (medians, two alternating runs each) 1,294.7,
// 1,291.4 -> 1,286.9, 1,274.9 µs.
func swarIDApplies(a, b *tensor.Tensor, l *Limits) bool {
	plain := a.Type == tensor.Q4_0 || a.Type == tensor.Q4_1 || a.Type == tensor.Q4_K
	return !l.SwarOff && plain && swarFormat(a) > 0 && vectorRows(b)
}

// matVecQ4ID returns the integer mat-vec's IDS dispatch of the MUL_MAT_ID of experts a by
// b, routed by ids, into dst (parameters p: see lowerMulMatID), each (slot, token) pair's
// column quantized in the kernel.
func matVecQ4ID(a, b, ids, dst *tensor.Tensor, p mulMatIDParams, l *Limits) []Dispatch {
	shape := mulMatParams{M: p.M, N: 1, K: p.K, Batches: p.Batches}
	return swarDispatches([]*tensor.Tensor{a}, b, ids, dst, shape, p, l)
}

// swarDispatches returns the integer mat-vec's dispatches of matVecQ4 (ids nil) or
// matVecQ4ID: p gives the product's shape, params the kernels' parameters.
func swarDispatches(ws []*tensor.Tensor, b, ids, dst *tensor.Tensor, p mulMatParams, params any, l *Limits) []Dispatch {
	half := swarFormat(ws[0])
	q6k := ws[0].Type == tensor.Q6_K
	minRows := uint32(swarXQMinRows)
	if l.SwarXQMinRows > 0 {
		minRows = uint32(l.SwarXQMinRows)
	}
	head := len(ws) == 1 && q6kHeadOnXQ(ws[0], b, p, l)
	xq := ids == nil && (len(ws) == 2 || p.N > 1 || head || ((l.SwarXQ || (!q6k && p.M >= minRows)) && swarXQFits(ws[0], p)))
	wpg := swarWPG(ws[0])
	task := uint32(8 * wpg) // elements per task: one group
	f, _ := format(ws[0].Type)
	if !q6k && f.UnitElems() > f.BlockElems() {
		task = uint32(f.UnitElems()) / uint32(f.BlockElems()) * task // Q4_0, Q8_0: a unit of two groups
	}
	rows, wg := swarShape(p.M*p.Batches, p.K/task, len(ws), int(p.N), wpg, xq, l)
	if head && l.SwarRows == 0 {
		rows = q6kXQRows
	}
	wide := xq && ids == nil && len(ws) == 1 && p.N == 1 && q4kWide(ws[0], p.M*p.Batches, l)
	if wide {
		rows, wg = swarFit(q4kWideRows, q4kWideWG, 1, 1, l)
	}
	layout := swarLayout(ws[0])
	// the single products with fifth bits on XQ change each row's words once for all
	// columns (group_lanes, swarCodedCols)
	layout["LANES"] = flag(xq && len(ws) == 1 && f.NibbleHighBits())
	var ds []Dispatch
	operands := []wgslOperand{vec(in("src0", ws[0]))}
	tensors := []*tensor.Tensor{ws[0]}
	if len(ws) == 2 {
		operands = append(operands, vec(in("src0b", ws[1])))
		tensors = append(tensors, ws[1])
	}
	if xq {
		groups := swarGroups(ws[0], p)
		x := swarColumns(ws[0], p)
		quant := spec("mul_mat_vec_q4_act", swarActWG, p, layout, vec(in("src1", b)), out("xq", x))
		ds = append(ds, Dispatch{Spec: quant, Tensors: []*tensor.Tensor{b, x}, Params: p,
			Grid: grid1D((groups*uint64(wpg)+swarActWG-1)/swarActWG, l)})
		operands = append(operands, vec(in("xq", x)))
		tensors = append(tensors, x)
	} else {
		operands = append(operands, vec(in("src1", b)))
		tensors = append(tensors, b)
	}
	if ids != nil {
		operands = append(operands, in("ids", ids))
		tensors = append(tensors, ids)
	}
	operands = append(operands, out("dst", dst))
	tensors = append(tensors, dst)
	var s *wgsl.Spec
	if wide {
		s = q4kWideSpec(ws[0], operands, params, rows, wg)
	} else {
		acc := len(ws) * rows * int(p.N)
		defs := map[string]string{"ROWS": fmt.Sprint(rows), "NCOLS": fmt.Sprint(p.N), "NIBBLES": flag(!q6k), "XQ": flag(xq),
			"SRC0B": flag(len(ws) == 2), "GLU": flag(len(ws) == 2), "IDS": flag(ids != nil),
			"MULTI": "0", "SRC0C": "0", "PRODUCTS": "1",
			"PRELOAD": flag(!xq && swarPreload(half, len(ws))), "QW": fmt.Sprint(rows * wpg),
			"ACC": fmt.Sprint(acc), "RED": fmt.Sprint(acc * wg),
			"COLS": flag(q6k && p.N > 1), "LW": fmt.Sprint(len(ws) * rows * wpg), "SF": fmt.Sprint(len(ws) * rows)}
		for k, v := range layout {
			defs[k] = v
		}
		s = spec("mul_mat_vec_q4", wg, params, defs, operands...)
	}
	blocks := (uint64(p.M) + uint64(rows) - 1) / uint64(rows) * uint64(p.Batches)
	return append(ds, Dispatch{Spec: s, Tensors: tensors, Params: params, Grid: grid1D(blocks, l)})
}

// swarGroups returns the activation groups (8 swarWPG(a) elements each) of the XQ form's
// quantized columns of the product p of weights a, over every column and batch (0 where
// the kernel cannot read a).
func swarGroups(a *tensor.Tensor, p mulMatParams) uint64 {
	wpg := uint64(swarWPG(a))
	if wpg == 0 {
		return 0
	}
	return uint64(p.K) / (8 * wpg) * uint64(p.N) * uint64(p.Batches)
}

// swarColumns returns the scratch operand of the XQ form's quantized columns of the
// product p of weights a (swarGroups' groups of WPG + 1 vectors of 4 words,
// mul_mat_vec_q4_quant.wgsl).
func swarColumns(a *tensor.Tensor, p mulMatParams) *tensor.Tensor {
	return scratchAt(tensor.I32, 0, int64(swarGroups(a, p))*int64(4*(swarWPG(a)+1)))
}

// swarMultiParams are the integer mat-vec's parameters in its MULTI form (several
// products of one column): mulMatParams (K, the first product's result strides D), and
// per product m its rows Ms[m], weights' row stride As[m] (elements) and first workgroup
// Start[m] (Start[products]: all of them), and the results' strides of the second and
// third products.
type swarMultiParams struct {
	mulMatParams
	Ms, As, Start [4]uint32
	Db, Dc        [4]uint32
}

// swarMulti returns the integer mat-vec's MULTI dispatch of the products mms (2 or 3
// MUL_MATs of the same columns, weights of one format and row length that swarFormat
// reads, not Q6_K) on their columns quantized at xq (swarColumns), in the rows and
// workgroup of a single product on XQ by as many columns (swarShape).
func swarMulti(mms []*tensor.Tensor, xq *tensor.Tensor, l *Limits) Dispatch {
	w0 := mms[0].Src[0]
	cols := int(mms[0].Ne[1])
	rows, wg := swarShape(0, 0, 1, cols, swarWPG(w0), true, l)
	p := swarMultiParams{mulMatParams: mulMatParamsOf(mms[0])}
	names := []string{"src0", "src0b", "src0c"}
	results := []string{"dst", "dstb", "dstc"}
	var operands, outs []wgslOperand
	var tensors, dsts []*tensor.Tensor
	groups := uint32(0)
	for i, mm := range mms {
		w := mm.Src[0]
		operands, tensors = append(operands, vec(in(names[i], w))), append(tensors, w)
		outs, dsts = append(outs, out(results[i], mm)), append(dsts, mm)
		p.Ms[i], p.As[i], p.Start[i] = uint32(mm.Ne[0]), strides(w)[1], groups
		groups += (uint32(mm.Ne[0]) + uint32(rows) - 1) / uint32(rows)
	}
	p.Start[len(mms)] = groups
	p.Db = strides(mms[1])
	if len(mms) == 3 {
		p.Dc = strides(mms[2])
	}
	operands, tensors = append(append(operands, vec(in("xq", xq))), outs...), append(append(tensors, xq), dsts...)
	f, _ := format(w0.Type)
	defs := map[string]string{"ROWS": fmt.Sprint(rows), "NCOLS": fmt.Sprint(cols), "NIBBLES": "1", "XQ": "1",
		"SRC0B": "1", "SRC0C": flag(len(mms) == 3), "MULTI": "1", "PRODUCTS": fmt.Sprint(len(mms)),
		"GLU": "0", "IDS": "0", "PRELOAD": "0", "QW": fmt.Sprint(rows * swarWPG(w0)),
		"ACC": fmt.Sprint(rows * cols), "RED": fmt.Sprint(rows * cols * wg), "LANES": flag(f.NibbleHighBits())}
	for k, v := range swarLayout(w0) {
		defs[k] = v
	}
	s := spec("mul_mat_vec_q4", wg, p, defs, operands...)
	return Dispatch{Spec: s, Tensors: tensors, Params: p, Grid: grid1D(uint64(groups), l)}
}

// swarLayout returns the defines of the integer mat-vec's kernels for the layout of
// weights a (swarFormat), which the kernels that quantize its columns share.
func swarLayout(a *tensor.Tensor) map[string]string {
	half := swarFormat(a)
	q6k := a.Type == tensor.Q6_K
	f, _ := format(a.Type)
	return map[string]string{"HALF": fmt.Sprint(half), "WPG": fmt.Sprint(swarWPG(a)),
		"SPLIT": flag(half == 32 || q6k), "Q6K": flag(q6k), "BYTES": flag(f.ByteQuants()),
		"FP4": flag(f.FP4Quants()), "LEVELS": flag(f.LevelQuants()),
		"HBIT": flag(f.NibbleHighBits()), "HWORD": flag(f.HighBitWord())}
}

// vec returns operand o read a group of elements at a time (wgsl.Operand.Vec).
func vec(o wgslOperand) wgslOperand {
	o.Vec = true
	return o
}

// lowerMatVecQ4 returns the integer mat-vec dispatches of the MUL_MAT t (parameters p), or
// false where it does not apply (swarApplies).
func lowerMatVecQ4(t *tensor.Tensor, p mulMatParams, l *Limits) ([]Dispatch, bool) {
	a, b := t.Src[0], t.Src[1]
	if !swarApplies(a, b, p, l) {
		return nil, false
	}
	return matVecQ4([]*tensor.Tensor{a}, b, t, p, l), true
}

// matVecQ4Examples are MUL_MAT nodes that take the integer mat-vec under the default
// limits (per nibble format above its threshold: the column quantized in the kernel, and
// on XQ rows of one and of many tasks and several columns; a Q8_0 output head), for the
// kernel compile test.
func matVecQ4Examples() []*tensor.Tensor {
	ex := []*tensor.Tensor{node(tensor.OpMulMat, f32(65536, 1), nil, contiguous(tensor.Q8_0, 1024, 65536), f32(1024, 1))} // a Q8_0 head
	for _, q := range []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q4_K, tensor.Q5_0, tensor.Q5_1, tensor.Q5_K, tensor.MXFP4, tensor.IQ4_NL, tensor.IQ4_XS} {
		ex = append(ex,
			node(tensor.OpMulMat, f32(2048, 1), nil, contiguous(q, 16384, 2048), f32(16384, 1)), // the column quantized in the kernel
			node(tensor.OpMulMat, f32(8192, 1), nil, contiguous(q, 4096, 8192), f32(4096, 1)),
			node(tensor.OpMulMat, f32(131072, 1), nil, contiguous(q, 256, 131072), f32(256, 1)))
		for _, n := range []int64{2, 8} { // several columns, where the format takes them (swarCodedCols)
			if swarCoded(q) && int64(swarCodedCols(q)) < n {
				break
			}
			ex = append(ex, node(tensor.OpMulMat, f32(8192, n), nil, contiguous(q, 4096, 8192), f32(4096, n)))
		}
	}
	return ex
}

// swarQ6KExample is a MUL_MAT node that takes the integer mat-vec's single-matrix Q6_K
// form, its column quantized in the kernel, where the Q6_K mat-vec is off (Limits.Q6KOff),
// for the kernel compile test.
func swarQ6KExample() *tensor.Tensor {
	return node(tensor.OpMulMat, f32(32768, 1), nil, contiguous(tensor.Q6_K, 4096, 32768), f32(4096, 1))
}

// q6kHeadExample is an output head in Q6_K, which the integer mat-vec's Q6K form takes on
// XQ (q6kHeadOnXQ), for the kernel compile test.
func q6kHeadExample() *tensor.Tensor {
	return node(tensor.OpMulMat, f32(65536, 1), nil, contiguous(tensor.Q6_K, 2048, 65536), f32(2048, 1))
}
