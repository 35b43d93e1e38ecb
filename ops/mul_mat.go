package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// MUL_MAT: dst[i, j, b2, b3] = sum_k src0[k, i, b2/r2, b3/r3] * src1[k, j, b2, b3] with
// src0 F32, F16, BF16 (any strides) or quantized (every format of quantNames: rows of
// whole blocks, see quantRows), src1 F32 (any strides), dst F32.
// Few columns (decode) use the mat-vec kernels, more use the tiled kernel. Quantized rows are always read eight
// elements at a time, dequantized in registers by their format's routine (wgsl/formats.go);
// for the prompt kernel, into F16 chunks in scratch memory first (mul_mat_dequant.go).

type mulMatParams struct {
	A, B, D          [4]uint32 // src0, src1, dst strides
	M, N, K, Batches uint32
	Ne2, R2, R3      uint32
	// Row0 is the first dst row a dispatch computes (its src0 rows are Row0 .. Row0 + M - 1):
	// nonzero only for the chunks of the prompt kernel on dequantized weights
	// (mul_mat_dequant.go).
	Row0 uint32
}

// matVecMaxCols is the largest src1 column count that uses the mat-vec kernels: up to it,
// one pass over the weights serves every column (decode of several sequences, speculative
// decoding).
const matVecMaxCols = 8

// matVecSplitMaxCols is the most src1 columns a product takes as mat-vecs of up to
// matVecMaxCols columns each, one after another (lowerMatVecSplit), rather than the prompt
// kernel. On an H100 (14336 x 4096, µs) eight columns take 72 in F16, 62 in Q4_0 and 84 in
// Q4_K, where the prompt kernel's narrow form takes 293-329, 399-472 and 415-485 for 16 to
// 64 columns.
const matVecSplitMaxCols = 32

// matVecRed is the most partial sums the vectorised mat-vec kernel's workgroup reduces in
// shared memory (accumulators x invocations): 16 KiB of f32, WebGPU's guaranteed
// maxComputeWorkgroupStorageSize.
const matVecRed = 4096

// matTile is the dst block (rows and columns) one workgroup of the tiled kernel computes.
const matTile = 64

// matBigTile is the dst block of the large tiled kernel, for prompts: 128 x 128, 8 x 8
// sums per invocation.
const matBigTile = 128

// matBigGroups is the fewest workgroups of the large tiled kernel a product must give to
// use it: below, the 64 x 64 kernel keeps more of a large GPU busy.
const matBigGroups = 256

// matVecShape picks the vectorised mat-vec kernel's rows per workgroup and workgroup
// size: enough workgroups to fill a large GPU (a few thousand), and more invocations per
// row when rows are long. Limits can override either. acc is the accumulators per row
// (src1 columns, twice that with a second matrix): rows and then invocations are halved
// until the workgroup's partial sums fit matVecRed.
func matVecShape(rows, k uint32, acc int, l *Limits) (perGroup, wg int) {
	perGroup, wg = 4, 64
	switch {
	case rows < 4096:
		perGroup = 1
	case rows < 16384:
		perGroup = 2
	}
	if k >= 8192 {
		wg = 128
	}
	if l.MatVecRows > 0 {
		perGroup = l.MatVecRows
	}
	if l.MatVecWG > 0 {
		wg = l.MatVecWG
	}
	for perGroup*acc*wg > matVecRed {
		if perGroup > 1 {
			perGroup /= 2
		} else {
			wg /= 2
		}
	}
	return perGroup, wg
}

// vectorRows reports whether a mat-vec operand can be read eight elements at a time:
// contiguous rows whose length, strides and start are whole 8-element (F16) or
// 4-element (F32) vectors, and a row length that is a multiple of 8.
func vectorRows(t *tensor.Tensor) bool {
	es := t.TypeSize()
	if t.Nb[0] != es || t.Ne[0]%8 != 0 || t.Loc.Addr%16 != 0 {
		return false
	}
	vec := uint64(16)
	for i := 1; i < 4; i++ {
		if t.Nb[i]%vec != 0 {
			return false
		}
	}
	return true
}

// vec8 reports whether the kernels can read src0 eight elements at a time: always for a
// supported quantized tensor, where vectorRows allows it for the others.
func vec8(t *tensor.Tensor) bool {
	if quantized(t.Type) {
		return quantRows(t)
	}
	return vectorRows(t)
}

// matVec8Reads reports whether the vectorised mat-vec takes weights a by columns b: b F32,
// a read eight elements at a time, and b too unless a is quantized (b then by its
// strides).
func matVec8Reads(a, b *tensor.Tensor) bool {
	return b.Type == tensor.F32 && vec8(a) && (quantized(a.Type) || vectorRows(b))
}

func init() {
	describeFamily("MUL_MAT", "F32, F16, BF16, "+quantNames()+" x F32; F16 x F16",
		"batched, src0 broadcast over dims 2, 3; any strides (quantized src0: rows of whole blocks)")
	register(tensor.OpMulMat, family{supports: supportsMulMat, lower: lowerMulMatOp, examples: func() []*tensor.Tensor {
		ex := []*tensor.Tensor{
			node(tensor.OpMulMat, f32(3, 2), nil, contiguous(tensor.F16, 5, 3), f32(5, 2)),                        // mat-vec
			node(tensor.OpMulMat, f32(3, 2), nil, contiguous(tensor.F16, 16, 3), contiguous(tensor.F16, 16, 2)),   // F16 activations
			node(tensor.OpMulMat, f32(3, 20), nil, contiguous(tensor.F16, 16, 3), contiguous(tensor.F16, 16, 20)), // tiled, F16 activations
			node(tensor.OpMulMat, f32(3, 9), nil, f32(5, 3), f32(5, 9)),                                           // tiled
			node(tensor.OpMulMat, f32(3, 1), nil, contiguous(tensor.F16, 16, 3), f32(16, 1)),                      // vectorised mat-vec
			node(tensor.OpMulMat, f32(3, 4), nil, f32(16, 3), f32(16, 4)),
			node(tensor.OpMulMat, f32(3, 9), nil, contiguous(tensor.F16, 16, 3), f32(16, 9)),                      // tiled, vectorised loads
			node(tensor.OpMulMat, f32(3, 8), nil, contiguous(tensor.F16, 16, 3), f32(16, 8)),                      // vectorised mat-vec, most columns
			node(tensor.OpMulMat, f32(2048, 2048), nil, contiguous(tensor.F16, 16, 2048), f32(16, 2048)),          // large tiles
			node(tensor.OpMulMat, f32(2048, 2048), nil, contiguous(tensor.Q4_K, 256, 2048), padded(256, 2048, 1)), // large tiles, src1 by element
			node(tensor.OpMulMat, f32(3, 2), nil, contiguous(tensor.BF16, 5, 3), f32(5, 2)),                       // BF16: mat-vec
			node(tensor.OpMulMat, f32(3, 1), nil, contiguous(tensor.BF16, 16, 3), f32(16, 1)),
			node(tensor.OpMulMat, f32(3, 9), nil, contiguous(tensor.BF16, 5, 3), f32(5, 9)),
			node(tensor.OpMulMat, f32(3, 9), nil, contiguous(tensor.BF16, 16, 3), f32(16, 9)),
		}
		for _, q := range quantTypes {
			k := int64(max(64, unitElems(q))) // whole units: the mat-vec kernel's unit reads
			ex = append(ex,
				node(tensor.OpMulMat, f32(3, 2), nil, contiguous(q, k, 3), f32(k, 2)), // mat-vec
				node(tensor.OpMulMat, f32(3, 9), nil, contiguous(q, k, 3), f32(k, 9)), // tiled
			)
		}
		// src1 read element by element: mat-vec and tiled
		ex = append(ex,
			node(tensor.OpMulMat, f32(3, 2), nil, contiguous(tensor.Q4_0, 64, 3), padded(64, 2, 1)),
			node(tensor.OpMulMat, f32(3, 9), nil, contiguous(tensor.Q4_0, 64, 3), padded(64, 9, 1)))
		ex = append(ex, matVecQ6KExamples()...)
		return append(ex, matVecQ4Examples()...)
	}})
}

func supportsMulMat(t *tensor.Tensor, _ *Limits) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || !(isFloatOrBF16(a.Type) || quantized(a.Type)) || t.Type != tensor.F32 {
		return false
	}
	// F16 activations (ggml_conv_2d's columns by an F16 kernel): by F16 weights only, as the
	// CPU backend takes them
	if b.Type != tensor.F32 && (b.Type != tensor.F16 || a.Type != tensor.F16) {
		return false
	}
	if quantized(a.Type) && !quantRows(a) {
		return false
	}
	if a.Ne[0] != b.Ne[0] || t.Ne[0] != a.Ne[1] || t.Ne[1] != b.Ne[1] || t.Ne[2] != b.Ne[2] || t.Ne[3] != b.Ne[3] {
		return false
	}
	if a.Ne[2] == 0 || a.Ne[3] == 0 || b.Ne[2]%a.Ne[2] != 0 || b.Ne[3]%a.Ne[3] != 0 {
		return false
	}
	return elementAligned(a) && elementAligned(b) && elementAligned(t) && t.Ne[2]*t.Ne[3] <= 65535
}

func mulMatParamsOf(t *tensor.Tensor) mulMatParams {
	a, b := t.Src[0], t.Src[1]
	return mulMatParams{
		A: strides(a), B: strides(b), D: strides(t),
		M: uint32(t.Ne[0]), N: uint32(t.Ne[1]), K: uint32(a.Ne[0]), Batches: uint32(t.Ne[2] * t.Ne[3]),
		Ne2: uint32(t.Ne[2]), R2: uint32(b.Ne[2] / a.Ne[2]), R3: uint32(b.Ne[3] / a.Ne[3]),
	}
}

func lowerMulMat(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a, b := t.Src[0], t.Src[1]
	p := mulMatParamsOf(t)
	batches := p.Batches
	operands := []wgslOperand{in("src0", a), in("src1", b), out("dst", t)}
	tensors := []*tensor.Tensor{a, b, t}
	q := quantized(a.Type)
	if ds, ok := lowerMatVecQ6K(t, p, l); ok {
		return ds, nil
	}
	if ds, ok := lowerMatVecQ4(t, p, l); ok {
		return ds, nil
	}
	if p.N <= matVecMaxCols && matVec8Reads(a, b) {
		return []Dispatch{matVec8(p, operands, tensors, secondNone, vectorRows(b), l)}, nil
	}
	if p.N <= matVecMaxCols {
		s := spec("mul_mat_vec", wgMatVec, p, nil, operands...)
		return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: grid1D(uint64(p.M)*uint64(p.N)*uint64(batches), l)}}, nil
	}
	defs := tiledLoads(a, b, operands)
	// F16 activations (ggml_conv_2d) take the plain kernels, whose accessors read any
	// format: not the vectorised mat-vec (matVec8Reads) nor the prompt kernel.
	if b.Type == tensor.F32 {
		if ds, ok := lowerBigTiles(p, defs, operands, tensors, l); ok {
			if q && !l.DequantPromptOff {
				if dq, ok := lowerBigDequant(t, p, l); ok {
					return dq, nil
				}
			}
			return ds, nil
		}
	}
	s := spec("mul_mat", 256, p, defs, operands...)
	grid := [3]uint32{(p.M + matTile - 1) / matTile, (p.N + matTile - 1) / matTile, batches}
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: grid}}, nil
}

// lowerMulMatOp lowers a MUL_MAT node: of a few more columns than the mat-vecs take, as
// mat-vecs one after another (lowerMatVecSplit), else as lowerMulMat chooses. The fusions
// that end in a product call lowerMulMat, whose dispatches store the node itself.
func lowerMulMatOp(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	if ds, ok := lowerMatVecSplit(t, l); ok {
		return ds, nil
	}
	return lowerMulMat(t, l)
}

// lowerMatVecSplit lowers a product of matVecMaxCols + 1 to matVecSplitMaxCols columns
// as mat-vecs of up to matVecMaxCols columns each, over views of src1's and dst's columns,
// where the vectorised mat-vec takes its weights and columns (ok false otherwise): each
// reads the weights once more, but a few passes over them cost less than the prompt
// kernel's products at these sizes.
func lowerMatVecSplit(t *tensor.Tensor, l *Limits) ([]Dispatch, bool) {
	a, b := t.Src[0], t.Src[1]
	n := t.Ne[1]
	if n <= matVecMaxCols || n > matVecSplitMaxCols || !matVec8Reads(a, b) {
		return nil, false
	}
	var ds []Dispatch
	for j0 := int64(0); j0 < n; j0 += matVecMaxCols {
		c := min(matVecMaxCols, n-j0)
		sb, st := *b, *t
		sb.Ne[1], sb.Loc.Addr = c, b.Loc.Addr+uint64(j0)*b.Nb[1]
		st.Ne[1], st.Loc.Addr = c, t.Loc.Addr+uint64(j0)*t.Nb[1]
		st.Src[1] = &sb
		part, err := lowerMulMat(&st, l)
		if err != nil {
			return nil, false
		}
		ds = append(ds, part...)
	}
	return ds, true
}

// tiledLoads chooses how the tiled kernels load src0 and src1 (operands[0] and [1]): eight
// elements at a time (VEC_A, VEC_B, marking the operands Vec) where both can be, and a
// quantized src0 always.
func tiledLoads(a, b *tensor.Tensor, operands []wgslOperand) map[string]string {
	q := quantized(a.Type)
	defs := map[string]string{"VEC_A": "0", "VEC_B": "0"}
	if q || vectorRows(a) && vectorRows(b) {
		operands[0].Vec = true
		defs["VEC_A"] = "1"
	}
	if vectorRows(b) && (q || vectorRows(a)) {
		operands[1].Vec = true
		defs["VEC_B"] = "1"
	}
	return defs
}

// matVecSecond is what the vectorised mat-vec kernel does with a second matrix (operand
// src0b: same type, shape and strides as src0, multiplied by the same src1).
type matVecSecond int

const (
	secondNone matVecSecond = iota // one matrix
	secondGLU                      // stores silu(src0 . src1) * (src0b . src1) into dst
)

// matVec8 is the vectorised mat-vec dispatch; with a second matrix, operands hold src0,
// src0b, src1 and dst. The weights are read eight elements at a time, src1 too when vec1
// (otherwise element by element, with its strides).
func matVec8(p mulMatParams, operands []wgslOperand, tensors []*tensor.Tensor, second matVecSecond, vec1 bool, l *Limits) Dispatch {
	v := matVec{m: p.M, k: p.K, batches: p.Batches, cols: p.N, second: second, vec1: vec1, units: unitRows(tensors[0], l)}
	if second != secondNone {
		v.units = v.units && unitRows(tensors[1], l)
	}
	s, grid := v.spec(p, operands, l)
	return Dispatch{Spec: s, Tensors: tensors, Params: p, Grid: grid}
}

// matVec describes a dispatch of the vectorised mat-vec kernel (mul_mat_vec8.wgsl): the
// product's rows, row length, batches and src1 columns; second selects its forms with two
// matrices (the fused gate), ids its MUL_MAT_ID form, vec1 reads src1
// eight elements at a time, units reads quantized weights a unit at a time (unitRows).
type matVec struct {
	m, k, batches, cols uint32
	second              matVecSecond
	ids, vec1           bool
	units               bool
}

// spec returns the kernel variant and grid of v; it marks the operands read eight
// elements at a time (the weights always, src1 with vec1).
func (v matVec) spec(params any, operands []wgslOperand, l *Limits) (*wgsl.Spec, [3]uint32) {
	for i := range operands {
		operands[i].Vec = !operands[i].Written && operands[i].Name != "ids" && (v.vec1 || operands[i].Name != "src1")
	}
	perRow := int(v.cols)
	if v.second != secondNone {
		perRow *= 2
	}
	rows, wg := matVecShape(v.m*v.batches, v.k, perRow, l)
	// Q4_0 and Q4_1 take two rows per workgroup where the shape gives one (fewer than 4096
	// rows): on an H100 a 1B Q4_0 decode's GPU time per graph went from 1451, 1444 to 1429,
	// 1428 µs (its attention output and feed-forward down products; alternating runs).
	if t := operands[0].Type; rows == 1 && l.MatVecRows == 0 && (t == wgsl.Q4_0 || t == wgsl.Q4_1) && 2*perRow*wg <= matVecRed {
		rows = 2
	}
	two := false
	if l.MatVecRows == 0 && l.MatVecWG == 0 {
		if r, w, ok := matVecColsShape(v.m*v.batches, v.cols, v.second != secondNone, operands[0].Type.Quantized()); ok {
			rows, wg = r, w
			two = r == 4 && w == 32 && v.second == secondNone && v.k >= matVecTwoMinK
		}
	}
	acc := rows * perRow
	units := v.units && wg >= operands[0].Type.BlockElems()/8
	// Pairs of eighths per invocation: on an H100, Q4_0 14336 x 4096 took 32.9 µs at one
	// column (36.8 without) but 152 at eight (93: twice the src1 registers).
	pair := units && v.cols <= matVecPairMaxCols && operands[0].Type.PairDistance() > 0
	defs := map[string]string{"ROWS": fmt.Sprint(rows), "NCOLS": fmt.Sprint(v.cols), "VEC1": flag(v.vec1),
		"SRC0B": flag(v.second != secondNone), "GLU": flag(v.second == secondGLU),
		"IDS": flag(v.ids), "UNITS": flag(units), "PAIR": flag(pair), "ACC": fmt.Sprint(acc), "RED": fmt.Sprint(acc * wg),
		"TWO": flag(two && !units)}
	blocks := (uint64(v.m) + uint64(rows) - 1) / uint64(rows)
	return spec("mul_mat_vec8", wg, params, defs, operands...), grid1D(blocks*uint64(v.batches), l)
}

// matVecColsShape returns the vectorised mat-vec kernel's rows per workgroup and workgroup
// size for a product of m rows (over every batch) by cols >= 2 columns, of two matrices
// (the gate) or one, quantized or not, where it differs from matVecShape's (ok), from
// 4096 rows: four rows an invocation, so that its src1 registers serve more rows; 32
// invocations from 5 columns; 128 by two columns and for quantized weights by three and
// four, 64 for unquantized ones by three and four; 2 rows by 32 for the gate's two
// matrices (8192 rows and more).
//
// Measured on an NVIDIA H100 (weights beyond the L2 cache, 14336 x 4096 / 4096 x 14336,
// µs; the shape before, 4 x 32 for unquantized weights from 8192 rows and 2 x 32 for
// quantized ones, matVecShape's 2 x 128 below: -> 4 x 64 -> 4 x 128; ggml-vulkan in brackets):
//   - n = 2: F16 43.9 / 45.7 -> 47.5 / 49.2 -> 44.4 / 44.2 (39.2 / 39.1); Q8_0 37.6 / 42.9
//     -> 35.7 / 40.3 -> 34.7 / 35.8 (32.6 / 33.2); IQ4_XS 62.6 / 61.5 -> 49.9 / 46.1 ->
//     48.4 / 43.4 (41.5 / 40.3, another start).
//   - n = 4: F16 54.4 / 74.8 -> 49.5 / 48.7 -> 50.6 / 51.8 (46.0 / 56.6); Q8_0 56.1 / 59.3
//     -> 43.2 / 43.0 -> 45.9 / 42.9 (44.6 / 45.2); IQ4_XS 70.7 / 74.8 -> 63.0 / 66.0 ->
//     62.9 / 57.4 (57.9 / 67.7); MXFP4 51.7 / 53.4 -> 46.6 / 47.5 -> 48.5 / 47.8 (41.9 at
//     14336 x 4096).
//   - n = 8 (4 x 32 kept, with TWO for F16): F16 70.5 / 66.2 -> 69.8 / 82.1 -> 78.4 / 72.1;
//     Q8_0 73.5 / 73.8 -> 71.2 / 76.3 -> 80.1 / 70.1; IQ4_XS 85.1 / 101 -> 102 / 93.5 ->
//     124 / 96.4; MXFP4 87.2 / 83.3 -> 79.8 / 79.1 -> 89.4 / 85.7.
//   - 2 x 64 lost everywhere (F16 n = 4 62.7 / 68.9, Q8_0 63.2 / 57.4); 1 x 64 and 2 x 32
//     too (F16 n = 4 78.3 and 80.3 at 4096 x 14336).
//
// The other formats this kernel takes by 2 to 4 columns take their shapes unmeasured:
// Q5_0 and Q5_1 from three columns, Q2_K, Q3_K, IQ4_NL and the other IQ formats the
// quantized one, F32 and BF16 the unquantized one. An earlier round (H200) chose 4 x 32
// from 5 columns and for unquantized weights, where 8 rows lost everywhere.
func matVecColsShape(m, cols uint32, second, quantized bool) (rows, wg int, ok bool) {
	switch {
	case cols < 2 || m < 4096:
		return 0, 0, false
	case second && m < 8192:
		return 0, 0, false
	case second:
		return 2, 32, true
	case cols >= 5:
		return 4, 32, true
	case cols == 2 || quantized:
		return 4, 128, true
	}
	return 4, 64, true
}

// matVecTwoMinK: the vectorised mat-vec kernel, where it reads one matrix's weights eight
// elements at a time (not by units: F32, F16, BF16) in matVecColsShape's 4 rows by 32
// invocations (5 columns and more, 4096 rows and more), takes two chunks of the row a loop
// turn (its TWO form) for rows of matVecTwoMinK elements and more. On an H100 (F16, weights
// beyond the L2 cache, µs, one chunk -> two): by 8 columns 14336 x 4096 74.5, 74.0, 73.9,
// 73.8 -> 66.2, 66.3, 65.6, 65.8 and 4096 x 14336 69.6, 69.8 -> 61.7, 61.3. Elsewhere it
// lost: by one column 14336 x 4096 43.6, 43.8 -> 44.4, 44.5, 4096 x 14336 43.9, 43.8 ->
// 45.5, 45.0, the gate form 83.0, 83.2 -> 84.4, 83.7; a 1B F16 model decoding 8
// sequences, GPU time a step, 2,725, 2,724, 2,735 -> 2,761, 2,759, 2,758 µs with every
// product of 5 columns and more on it, 2,723, 2,734, 2,734 -> 2,755, 2,785, 2,763 with
// those of one matrix and rows of 4096 and more (its down products: 2048 rows, one row by
// 128 invocations). An 8B F16 model was not measured.
const matVecTwoMinK = 4096

// matVecPairMaxCols is the most src1 columns for which a mat-vec invocation takes two
// eighth groups of a block that read the same words (see matVec.spec).
const matVecPairMaxCols = 2

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// unitRows reports whether the mat-vec kernel can read a quantized src0 a unit at a time
// (wgsl.Format.UnitElems: whole blocks filling whole words): rows of whole units that
// start, like every row and matrix, on a 4-byte boundary. Limits can turn it off.
func unitRows(t *tensor.Tensor, l *Limits) bool {
	f, ok := format(t.Type)
	if l.MatVecNoUnits || !ok || !f.Quantized() || !quantRows(t) || t.Ne[0]%int64(f.UnitElems()) != 0 || t.Loc.Addr%4 != 0 {
		return false
	}
	return t.Nb[1]%4 == 0 && t.Nb[2]%4 == 0 && t.Nb[3]%4 == 0
}

// guardMatVecGLU admits llama's feed-forward gate: two MUL_MATs of the same src1 (one of
// them the gate, the other the up projection, in either order) and the split SWIGLU that
// reads both, all three small enough for the vectorised mat-vec kernel.
func guardMatVecGLU(n []*tensor.Tensor, l *Limits) bool {
	m1, m2, glu := n[0], n[1], n[2]
	if glu.GLUOp() != tensor.GLUSwiGLU || glu.Params[1] != 0 {
		return false
	}
	gate, up := glu.Src[0], glu.Src[1]
	if !(gate == m1 && up == m2) && !(gate == m2 && up == m1) {
		return false
	}
	if gate.Src[1] != up.Src[1] || gate.Src[0].Type != up.Src[0].Type || gate.Ne != up.Ne ||
		gate.Src[0].Ne != up.Src[0].Ne || gate.Src[0].Nb != up.Src[0].Nb || glu.Ne != gate.Ne {
		return false
	}
	if !Supports(gate, l) || !Supports(up, l) || !Supports(glu, l) {
		return false
	}
	wg, wu, x := gate.Src[0], up.Src[0], gate.Src[1]
	// Every workgroup reads all of x: the result must not touch it (or the weights).
	if overlaps(glu, x) || overlaps(glu, wg) || overlaps(glu, wu) {
		return false
	}
	return gate.Ne[1] <= matVecMaxCols && vec8(wg) && vec8(wu) && vectorRows(x)
}

// lowerMatVecGLU lowers the gate, up and SWIGLU nodes as one mat-vec dispatch that writes
// only the GLU result: the integer mat-vec's gate form (after the activations'
// quantization) where the product takes it (swarApplies), the vectorised kernel's
// otherwise; Q6_K weights take the Q6_K mat-vec's gate form. (Unfused, the Q6_K mat-vec
// twice and the SWIGLU apart measured slower than the integer gate form: H200, cold, µs,
// 14336 x 4096 89.7, 90.0 -> 93.8, 93.4; 8192 x 2048 30.9, 31.5 -> 35.2, 33.8; a 1B Q6_K
// decode 492, 496 -> 475, 480 t/s.)
func lowerMatVecGLU(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	glu := n[2]
	gate, up := glu.Src[0], glu.Src[1]
	wg, wu, x := gate.Src[0], up.Src[0], gate.Src[1]
	p := mulMatParamsOf(gate)
	p.D = strides(glu)
	if q6kApplies(wg, x, p, l) && q6kApplies(wu, x, p, l) && p.N <= q6kGateMaxCols {
		return []Dispatch{matVecQ6K(p, []*tensor.Tensor{wg, wu, x, glu}, l)}, nil
	}
	if swarGLUApplies(wg, wu, x, p, l) {
		return matVecQ4([]*tensor.Tensor{wg, wu}, x, glu, p, l), nil
	}
	operands := []wgslOperand{in("src0", wg), in("src0b", wu), in("src1", x), out("dst", glu)}
	return []Dispatch{matVec8(p, operands, []*tensor.Tensor{wg, wu, x, glu}, secondGLU, true, l)}, nil
}

// permutedStrides returns, for each dimension of mm, the element stride of the contiguous
// tensor that holds PERMUTE(mm) (perm) in row-major order; ok is false when perm is not a
// permutation of mm's dimensions.
func permutedStrides(mm, perm *tensor.Tensor) (dst [4]uint32, ok bool) {
	var lin [4]uint64
	lin[0] = 1
	for d := 1; d < 4; d++ {
		lin[d] = lin[d-1] * uint64(perm.Ne[d-1])
	}
	for k := 0; k < 4; k++ {
		axis := perm.Params[k]
		if axis < 0 || axis > 3 || perm.Ne[axis] != mm.Ne[k] {
			return dst, false
		}
		dst[k] = uint32(lin[axis])
	}
	return dst, true
}

// guardMulMatPermuteCont admits mm -> PERMUTE(mm) -> CONT (llama's kqv -> kqv_merged ->
// kqv_out) when the CONT's F32 contiguous result can take the matmul's stores directly.
func guardMulMatPermuteCont(n []*tensor.Tensor, l *Limits) bool {
	mm, perm, cont := n[0], n[1], n[2]
	if perm.Src[0] != mm || cont.Src[0] != perm {
		return false
	}
	if cont.Type != tensor.F32 || !cont.Contiguous() || cont.Elems() != mm.Elems() || !Supports(mm, l) || !Supports(cont, l) {
		return false
	}
	if overlaps(cont, mm.Src[0]) || overlaps(cont, mm.Src[1]) {
		return false
	}
	_, ok := permutedStrides(mm, perm)
	return ok
}

// lowerMulMatPermuteCont lowers the matmul storing each result straight at its place in
// the CONT's contiguous result.
func lowerMulMatPermuteCont(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	mm, perm, cont := n[0], n[1], n[2]
	dst, _ := permutedStrides(mm, perm)
	ds, err := lowerMulMat(mm, l)
	if err != nil {
		return nil, err
	}
	// The dispatches whose last operand is mm store the result (split-K: the reductions
	// after the splits; dequantized weights: one per chunk of rows), the last one among them.
	for i := range ds {
		p := ds[i].Params.(mulMatParams)
		p.D = dst
		ds[i].Params = p
		if ts := ds[i].Tensors; ts[len(ts)-1] == mm {
			ts[len(ts)-1] = cont
		}
	}
	last := ds[len(ds)-1].Tensors
	if last[len(last)-1] != cont {
		return nil, fmt.Errorf("ops: MUL_MAT's last dispatch does not store its result")
	}
	return ds, nil
}

// unitElems returns the elements of a quantized type's unit (wgsl.Format.UnitElems).
func unitElems(t tensor.Type) int {
	f, _ := format(t)
	return f.UnitElems()
}

// DecodeGraph reports whether nodes hold a matrix product and every one of them is of few
// columns (MUL_MAT of at most matVecMaxCols columns, MUL_MAT_ID of as many tokens): a
// decode step's graph, bound by the latency of its chain of dispatches rather than by
// arithmetic.
func DecodeGraph(nodes []*tensor.Tensor) bool {
	products := 0
	for _, n := range nodes {
		cols := int64(0)
		switch n.Op {
		case tensor.OpMulMat:
			cols = n.Ne[1]
		case tensor.OpMulMatID:
			cols = n.Ne[2]
		default:
			continue
		}
		if cols > matVecMaxCols {
			return false
		}
		products++
	}
	return products > 0
}
