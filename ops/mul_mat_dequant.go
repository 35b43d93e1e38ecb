package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The prompt MUL_MAT on quantized weights through F16 chunks: where the prompt kernel
// (mul_mat_big.go) would read a quantized src0, rows of src0 are first dequantized into
// F16 scratch memory (mul_mat_dequant.wgsl, by the format's one routine), a chunk of rows
// at a time, and the prompt kernel then multiplies that F16 chunk, storing those dst rows.
//
// Why: on an NVIDIA H100 the prompt kernel reaches 30-35 TFLOP/s on F16 weights but only
// 17-24 on quantized ones (Q4_K 18, Q6_K 21, Q8_0 24, IQ4_XS 17), because its loader
// dequantizes each 8-element group inside the inner loop, once per 128-column tile of dst.
// Dequantizing a weight matrix to F16 is one pass over memory (14336 x 4096 Q4_K: 33 MB
// read, 117 MB written, about 60 µs) against about 2 ms of product at 512 columns.
//
// A chunk holds at most Limits.DequantChunkBytes (default 32 MiB) of F16 rows, so the
// scratch memory the library keeps stays small; its rows are a multiple of the kernel's
// 128-row tiles and the chunks of a product are of even size. The split-K partial sums of
// a chunk (when it has few tiles) lie after the chunk in scratch memory. Each chunk costs
// one more dispatch. Chunk and partial sums together stay within ScratchBudget (56 MiB):
// where they would not, K splits into fewer parts and the dispatches stay the same (the 1B
// and 8B models' products fit: at n = 512, m=14336 k=4096 takes a 28 MiB chunk and four
// splits of 28 MiB partial sums, m=2048 k=8192 a 32 MiB chunk and 16 MiB). Where the
// device's multiprocessors are known, smaller chunks are taken when their prompt kernels
// fill the multiprocessors better (dequantRowsByWaves: m=14336 k=4096, 7 chunks of 16 MiB
// and four splits of 16 MiB).
// Limits.DequantPromptOff keeps the direct quantized loads.

// dequantChunkDefault is the default of Limits.DequantChunkBytes.
const dequantChunkDefault = 32 << 20

// dequantPer is the 8-element groups each invocation of mul_mat_dequant converts.
const dequantPer = 8

// dequantChunkRows returns the src0 rows of each chunk of a product of m rows whose rows
// (across every src0 matrix) take rowBytes of F16: the most whole tiles within the
// chunk limit (at least one tile), within one binding and 31-bit element indices, spread
// evenly over the chunks. ok is false when a single tile of rows does not fit a binding.
func dequantChunkRows(m uint32, rowBytes uint64, l *Limits) (rows uint32, ok bool) {
	limit := l.DequantChunkBytes
	if limit == 0 {
		limit = dequantChunkDefault
	}
	bind := min(l.MaxBinding, 1<<31) / rowBytes / matBigTile * matBigTile
	if bind == 0 {
		return 0, false
	}
	most := min(max(limit/rowBytes/matBigTile*matBigTile, matBigTile), bind)
	if uint64(m) <= most {
		return m, true
	}
	chunks := (uint64(m) + most - 1) / most
	per := (uint64(m) + chunks - 1) / chunks
	return uint32((per + matBigTile - 1) / matBigTile * matBigTile), true
}

// dequantRowsByWaves returns the rows of each chunk of a product (params p) whose chunks
// hold at most most rows (dequantChunkRows), chosen where the device's multiprocessors are
// known: the chunking, at most as many rows a chunk, whose prompt kernels take the least
// time in all (bigSplitsByWaves, each chunk's partial sums after it: chunkAt(rows) is a
// chunk's scratch tensor), fewer chunks unless more gain bigSplitGain. On an H100 the
// 8B's 14336 x 4096 weights at 512 columns go in 7 chunks of 2048 rows, each 256
// workgroups (two a multiprocessor) with K in four parts, where 4 chunks of 3584 rows
// took 448 workgroups each.
func dequantRowsByWaves(p mulMatParams, most uint32, chunkAt func(n uint32) *tensor.Tensor, l *Limits) uint32 {
	wavesOf := func(per uint32) float64 {
		w := 0.0
		for r0 := uint32(0); r0 < p.M; r0 += per {
			pc := p
			pc.M = min(per, p.M-r0)
			_, cw := bigSplitsByWaves(pc, bigTiles(pc, pc.M), scratchEnd(chunkAt(pc.M)), l)
			w += cw
		}
		return w
	}
	best, waves := most, wavesOf(most)
	for tr := (most - 1) / matBigTile; tr >= 1; tr-- {
		chunks := (p.M + tr*matBigTile - 1) / (tr * matBigTile)
		per := ((p.M+chunks-1)/chunks + matBigTile - 1) / matBigTile * matBigTile
		if w := wavesOf(per); w < waves*(1-bigSplitGain) {
			best, waves = per, w
		}
	}
	return best
}

// lowerBigDequant lowers MUL_MAT t (a quantized src0, params p, large enough for the
// prompt kernel) as, per chunk of src0 rows, the dequantization into F16 scratch memory
// and the prompt kernel on it (split-K where the chunk has few tiles). ok is false when
// the chunks cannot be bound.
func lowerBigDequant(t *tensor.Tensor, p mulMatParams, l *Limits) ([]Dispatch, bool) {
	a, b := t.Src[0], t.Src[1]
	mats := uint64(a.Ne[2] * a.Ne[3])
	rows, ok := dequantChunkRows(p.M, 2*uint64(p.K)*mats, l)
	if !ok {
		return nil, false
	}
	chunkAt := func(n uint32) *tensor.Tensor { return scratchAt(tensor.F16, 0, int64(p.K), int64(n), a.Ne[2], a.Ne[3]) }
	if l.byWaves(p) {
		rows = dequantRowsByWaves(p, rows, chunkAt, l)
	}
	vecB := vectorRows(b)
	var ds []Dispatch
	for r0 := uint32(0); r0 < p.M; r0 += rows {
		n := min(rows, p.M-r0)
		chunk := chunkAt(n)
		pd := p
		pd.M, pd.Row0 = n, r0
		groups := uint64(p.K) / 8 * uint64(n) * mats
		deq := spec("mul_mat_dequant", 256, pd, map[string]string{"PER": fmt.Sprint(dequantPer)},
			wgslOperand{Name: "src0", Type: mustFormat(a), Vec: true},
			wgslOperand{Name: "chunk", Type: mustFormat(chunk), Written: true, Vec: true})
		ds = append(ds, Dispatch{Spec: deq, Tensors: []*tensor.Tensor{a, chunk}, Params: pd,
			Grid: grid1D((groups+256*dequantPer-1)/(256*dequantPer), l)})

		pc := pd
		pc.A = strides(chunk)
		operands := []wgslOperand{in("src0", chunk), in("src1", b), out("dst", t)}
		operands[0].Vec, operands[1].Vec = true, vecB
		defs := map[string]string{"VEC_A": "1", "VEC_B": flag(vecB)}
		// the partial sums after the chunk, the scratch memory within one binding and
		// ScratchBudget
		splits := bigSplitsFor(pc, bigTiles(pc, n), scratchEnd(chunk), l)
		ds = append(ds, bigDispatches(pc, splits, defs, operands, []*tensor.Tensor{chunk, b, t}, scratchEnd(chunk), l)...)
	}
	return ds, true
}
