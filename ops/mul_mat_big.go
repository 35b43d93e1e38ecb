package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// The prompt MUL_MAT: the 128 x 128 tiled kernel wgsl/kernels/mul_mat_big.wgsl (8-wide K
// slices, double-buffered, the next slice prefetched into registers), and split-K for
// products with few 128 x 128 tiles (mul_mat_big_reduce adds the parts), or, where the
// device's multiprocessors are known (Limits.ComputeUnits), for those whose workgroups
// would leave a multiprocessor the most work alone in a last wave (bigWaves).
//
// It was chosen by measurement among four variants on an NVIDIA H100 (`wgpu-conformance
// -perf -filter n=512`, WGPU0, µs, n = 512): the earlier 128 x 128 kernel without prefetch
// (16-wide slices, one buffer; the 64 x 64 kernel below 256 tiles), and prefetching ones
// with two 16-wide buffers, two 8-wide buffers (this one) or one 32-wide buffer, the three
// with split-K. Against the earlier kernel:
//
//	f16 m=2048 k=2048     276 -> 158 (15.6 -> 27.3 TFLOP/s)
//	f16 m=512 k=2048      181 -> 56.7 (split-K; 5.9 -> 18.9)
//	f16 m=8192 k=2048     578 -> 508 (29.7 -> 33.8)
//	f16 m=2048 k=8192    1102 -> 524 (15.6 -> 32.8)
//	f16 m=32000 k=2048   2266 -> 2066 (29.6 -> 32.5)
//	f16 m=14336 k=4096   2240 -> 2010 (26.8 -> 29.9)
//	f16 m=4096 k=14336   3862 -> 1704 (15.6 -> 35.3)
//	q8_0 m=14336 k=4096  2493 -> 2533
//	q4_0 m=4096 k=14336  3906 -> 2191 (27.4)
//	q4_K m=14336 k=4096  3371 -> 3344 (17.8 -> 18.0)
//	q6_K m=4096 k=14336  4856 -> 2318 (25.9)
//	iq4_xs m=14336 k=4096 3366 -> 3530
//
// The 8-wide double buffers were the fastest of the prefetching variants but for q4_K (one
// 32-wide buffer: 3121) and iq4_xs (two 16-wide buffers: 3522); slower than the earlier
// kernel only for q8_0 (2%) and iq4_xs (5%). They take the least workgroup memory (16
// KiB, as the earlier kernel), which leaves room for the IQ formats' lookup tables.
//
// F16 src0 stays raw words from its load until it is staged (RAW_A): converted at the
// load, the invocations loading it waited for the memory before the products the load was
// issued ahead of (H100: f16 m=4096 k=14336 1727 -> 1640 µs, the quantized formats through
// their F16 chunks 5-7% faster). Products of matBigMinCols (9) to 127 columns take the narrow
// form (NARROW: 128 x 64 blocks, 8 x 4 sums per invocation) instead of the 64 x 64 kernel
// (H100, m=14336 k=4096 by 16, 32, 64 columns, f16 551, 559, 575 -> 293, 305, 329 µs; q4_K
// 588, 597, 612 -> 415, 433, 485). docs/ARCHITECTURE.md section 5 has the figures.

// matBigTK is the width of the prompt kernel's K slices.
const matBigTK = 8

// matBigNarrow is the prompt kernel's dst columns per workgroup (its NARROW form: 8 x 4
// sums per invocation) for products of fewer than matBigTile columns, and matBigMinCols
// the fewest columns a product needs to take the prompt kernel at all: every product
// past the mat-vecs' matVecMaxCols (the 64 x 64 kernel takes those the prompt kernel
// cannot: too few rows, tiles and K to split). On an H100 the 1B Q4_0's prompts of 9, 12
// and 15 tokens went from 300, 398, 496 t/s on the 64 x 64 kernel to 1051, 1395, 1736.
const (
	matBigNarrow  = 64
	matBigMinCols = matVecMaxCols + 1
)

// bigCols returns the prompt kernel's dst columns per workgroup for n src1 columns.
func bigCols(n uint32) uint32 {
	if n < matBigTile {
		return matBigNarrow
	}
	return matBigTile
}

// bigTiles returns the prompt kernel's workgroups of a product of m rows (before splitting
// K).
func bigTiles(p mulMatParams, m uint32) uint64 {
	tn := bigCols(p.N)
	return uint64((m+matBigTile-1)/matBigTile) * uint64((p.N+tn-1)/tn) * uint64(p.Batches)
}

// matBigStorage is the workgroup memory of the prompt kernel's slice buffers: two
// operands, two slices each of matBigTK x matBigTile f32.
const matBigStorage = 2 * 2 * matBigTK * matBigTile * 4

// bigFits reports whether the prompt kernels' slice buffers, the lookup tables of weights
// in format f and extra bytes of the kernel's own fit the device's workgroup memory.
func bigFits(f wgsl.Format, extra int, l *Limits) bool {
	return matBigStorage+wgsl.WorkgroupTableBytes(f)+extra <= l.workgroupStorage()
}

// matSplitMinK is the shortest part of K one split of a split-K product sums.
const matSplitMinK = 256

// matSplitMax bounds the splits of K.
const matSplitMax = 16

// bigSplits returns how many parts of K a product of the given tiles (128 x 128 blocks
// times batches) splits into: enough for matBigGroups workgroups (l.bigGroups()), within
// bigSplitFits; 1 when none.
func bigSplits(p mulMatParams, tiles, partAt uint64, l *Limits) uint32 {
	s := uint32(1)
	for tiles*uint64(s) < l.bigGroups() && s < matSplitMax {
		s *= 2
	}
	for s > 1 && !bigSplitFits(p, s, partAt, l) {
		s /= 2
	}
	return s
}

// bigSplitFits reports whether K can split into s parts: each at least matSplitMinK long,
// the partial sums (at byte partAt of scratch memory) ending within one binding and
// ScratchBudget, and the grid.
func bigSplitFits(p mulMatParams, s uint32, partAt uint64, l *Limits) bool {
	if s == 1 {
		return true
	}
	room := min(l.MaxBinding, ScratchBudget)
	room -= min(room, partAt)
	partial := uint64(p.M) * uint64(p.N) * uint64(p.Batches) * uint64(s)
	return p.K/s >= matSplitMinK && uint64(p.Batches)*uint64(s) <= uint64(l.groupsPerDim()) &&
		4*partial <= room && partial < 1<<32
}

// bigSplitGain is how much less time (bigWaves) a further split of K must take to be
// chosen over fewer splits (its partial sums and their reduction cost the rest).
const bigSplitGain = 0.03

// bigAlone is the time one workgroup of the prompt kernel takes alone on a
// multiprocessor, as a share of its time beside another: a multiprocessor holds two at a
// time (their registers fill it), and one alone hides less of its loads' latency. On an
// H100 at 512 columns, 4096 x 4096 in 128 workgroups (one a multiprocessor, the whole K
// each) took 607 and 604 µs against 472 and 477 in 256 (two, half of K each): 0.64.
const bigAlone = 0.64

// bigWaves returns the time the prompt kernel takes over tiles workgroups with K split in
// s parts on units multiprocessors, in units of one workgroup's time over the whole K
// beside another: the busiest multiprocessor takes ceil(tiles s / units) of them, two at
// a time, the last alone where they are odd (bigAlone). On an H100 (132 multiprocessors)
// 14336 x 4096 by 512 columns, 448 workgroups, took 1,876 and 1,871 µs over the whole K
// (2: four a multiprocessor) and 1,645 and 1,643 with K in two parts (1.82: seven).
func bigWaves(tiles uint64, s, units uint32) float64 {
	j := (tiles*uint64(s) + uint64(units) - 1) / uint64(units)
	return (float64(j/2) + bigAlone*float64(j%2)) / float64(s)
}

// bigSplitsByWaves returns the split of K (1, 2, 4 .. matSplitMax, within bigSplitFits)
// that takes the least time on l.ComputeUnits multiprocessors (bigWaves), fewer splits
// unless more gain bigSplitGain, and that time.
func bigSplitsByWaves(p mulMatParams, tiles, partAt uint64, l *Limits) (uint32, float64) {
	best, waves := uint32(1), bigWaves(tiles, 1, l.ComputeUnits)
	for s := uint32(2); s <= matSplitMax && bigSplitFits(p, s, partAt, l); s *= 2 {
		if w := bigWaves(tiles, s, l.ComputeUnits); w < waves*(1-bigSplitGain) {
			best, waves = s, w
		}
	}
	return best, waves
}

// byWaves reports whether the prompt kernel's splits of K and chunks of dequantized rows
// are chosen by waves for a product of params p: the device's multiprocessors are known,
// BigGroups does not override the choice, and the product takes the wide form (128
// columns a workgroup), whose two workgroups a multiprocessor bigWaves reckons with (the
// narrow form's fewer sums may let more share one: it keeps the count rule).
func (l *Limits) byWaves(p mulMatParams) bool {
	return l.ComputeUnits > 0 && l.BigGroups == 0 && bigCols(p.N) == matBigTile
}

// bigSplitsFor returns the parts K of a product of the given tiles splits into: by waves
// where the multiprocessors are known (bigSplitsByWaves), else enough for l.bigGroups()
// workgroups (bigSplits).
func bigSplitsFor(p mulMatParams, tiles, partAt uint64, l *Limits) uint32 {
	if l.byWaves(p) {
		s, _ := bigSplitsByWaves(p, tiles, partAt, l)
		return s
	}
	if tiles < l.bigGroups() {
		return bigSplits(p, tiles, partAt, l)
	}
	return 1
}

// lowerBigTiles lowers a product for the prompt kernel mul_mat_big when it is large
// enough: at least 128 rows and columns, and matBigGroups tiles, or K split into parts
// that give four times the workgroups of one tile each at least (split-K: the parts'
// partial sums go to scratch memory and mul_mat_big_reduce adds them). ok is false when
// the product takes the 64 x 64 kernel: too small, or the slice buffers and the format's
// lookup tables exceed the device's workgroup memory. defs and operands are tiledLoads'
// choice of loads.
func lowerBigTiles(p mulMatParams, defs map[string]string, operands []wgslOperand, tensors []*tensor.Tensor, l *Limits) (ds []Dispatch, ok bool) {
	if p.M < matBigTile || p.N < matBigMinCols {
		return nil, false
	}
	if !bigFits(operands[0].Type, 0, l) {
		return nil, false
	}
	tiles := bigTiles(p, p.M)
	if tiles < matBigGroups {
		if s := bigSplits(p, tiles, 0, l); s < 4 && tiles*uint64(s) < matBigGroups {
			return nil, false
		}
	}
	return bigDispatches(p, bigSplitsFor(p, tiles, 0, l), defs, operands, tensors, 0, l), true
}

// bigDefs returns the prompt kernel's defines for tn dst columns a workgroup, with loads
// defs (tiledLoads) of operands. F16 words read eight elements at a time are turned into
// floats when staged (RAW_A), after the products of the slice before, not as they are
// loaded.
func bigDefs(tn uint32, defs map[string]string, operands []wgslOperand) map[string]string {
	kdefs := map[string]string{"RAW_A": flag(defs["VEC_A"] == "1" && operands[0].Type == wgsl.F16),
		"TN": fmt.Sprint(tn), "WIDE": flag(tn == matBigTile), "NARROW": flag(tn == matBigNarrow), "SLIM": flag(tn == idSlim), "SLICEB": fmt.Sprint(2 * tn),
		"TBV": fmt.Sprint(4 * tn), "ACC": fmt.Sprint(8 * tn / 64)}
	for k, d := range defs {
		kdefs[k] = d
	}
	return kdefs
}

// bigDispatches returns the dispatches of the prompt kernel over K in splits parts: the
// kernel alone (splits 1), or the kernel storing partial sums to scratch memory at byte
// offset partAt and mul_mat_big_reduce adding them into dst.
func bigDispatches(p mulMatParams, splits uint32, defs map[string]string, operands []wgslOperand, tensors []*tensor.Tensor, partAt uint64, l *Limits) []Dispatch {
	tn := bigCols(p.N)
	grid := [3]uint32{(p.M + matBigTile - 1) / matBigTile, (p.N + tn - 1) / tn, p.Batches}
	kdefs := bigDefs(tn, defs, operands)
	if splits == 1 {
		s := spec("mul_mat_big", 256, p, kdefs, operands...)
		return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: grid}}
	}
	// Each split sums kper elements of K (whole slices); the last one may be shorter, and
	// no split is empty.
	kper := ((p.K+splits-1)/splits + matBigTK - 1) / matBigTK * matBigTK
	splits = (p.K + kper - 1) / kper
	kdefs["SPLITK"], kdefs["SPLITS"], kdefs["KPER"] = "1", fmt.Sprint(splits), fmt.Sprint(kper)
	grid[2] = p.Batches * splits
	total := uint64(p.M) * uint64(p.N) * uint64(p.Batches)
	part := scratchAt(tensor.F32, partAt, int64(max(total*uint64(splits), 1)))
	kops := append(append([]wgslOperand{}, operands[:2]...), out("part", part))
	s := spec("mul_mat_big", 256, p, kdefs, kops...)
	r := spec("mul_mat_big_reduce", 256, p, map[string]string{"SPLITS": fmt.Sprint(splits)}, in("part", part), operands[2])
	return []Dispatch{
		{Spec: s, Tensors: []*tensor.Tensor{tensors[0], tensors[1], part}, Params: p, Grid: grid},
		{Spec: r, Tensors: []*tensor.Tensor{part, tensors[2]}, Params: p, Grid: grid1D((total+255)/256, l)},
	}
}
