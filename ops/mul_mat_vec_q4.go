package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// The integer mat-vec of 4-bit weights (mul_mat_vec_q4.wgsl): a MUL_MAT of Q4_0, Q4_1 or
// Q4_K weights by one F32 column multiplies the weights' nibbles by the column quantized
// to 8 bits per block of 32 (as ggml's CPU backend does: Q8_0, Q8_1, Q8_K activations),
// two products per i32 multiply-add. The column is quantized once, by a dispatch of its
// own (quantize_act.wgsl), into scratch memory that the mat-vec then reads: 2.25 bytes per
// element, read by every workgroup through the caches. The fused feed-forward gate (gate
// and up projections of the same weight format and the SWIGLU, lowerMatVecGLU) takes its
// two-matrix form. The extra dispatch costs a few microseconds, so products of fewer than
// swarMinDefault weights keep the vectorised mat-vec kernel.

// swarMinDefault is the fewest weights (M x K) of a product that takes the integer mat-vec
// (Limits.SwarMin overrides it).
const swarMinDefault = 8 << 20

// swarRows and swarWG are the integer mat-vec's rows per workgroup and workgroup size,
// measured on an NVIDIA H100 (perf harness, one column, µs for Q4_0 14336 x 4096, Q4_K
// 14336 x 4096, Q4_K 4096 x 14336, Q4_0 128256 x 2048, Q4_K 128256 x 2048, the
// quantization's dispatch included): 4 x 32 24.4, 31.1, 35.7, 76.6, 92.3; 4 x 64 30.4,
// 33.2, 32.4, 107, 134; 2 x 64 34.2, 39.8, 36.5, 130, 161; 8 x 32 27.8, 32.5, 49.6, 87.0,
// 89.6; 1 x 64 53.2 .. 233 (the float kernel: 34.3, 44.1, 43.9, 119, 185; ggml-vulkan
// 18.2, 24.8, 17.6, 84.6, 105).
const (
	swarRows = 4
	swarWG   = 32
)

// swarQuantWG is the workgroup size of the activations' quantization (one group each).
const swarQuantWG = 64

// swarShape returns the rows per workgroup and workgroup size of the integer mat-vec of
// mats matrices (1, or 2 for the gate form), with Limits' overrides (SwarRows; SwarWG: a
// power of two); the partial sums of the workgroup must fit its storage.
func swarShape(mats int, l *Limits) (rows, wg int) {
	rows, wg = swarRows, swarWG
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
	limit := l.MaxWorkgroupStorage
	if limit == 0 {
		limit = 16384
	}
	for 4*mats*rows*wg > limit {
		if rows > 1 {
			rows /= 2
		} else {
			wg /= 2
		}
	}
	return rows, wg
}

// swarFormat returns the nibble half (wgsl/nibbles.go) of the weights a, 0 where the
// integer mat-vec cannot read them: not Q4_0, Q4_1 or Q4_K, or not in rows of whole units
// on 4-byte boundaries (unitRows' alignment).
func swarFormat(a *tensor.Tensor) int {
	f, ok := format(a.Type)
	if !ok || f.NibbleHalf() == 0 || !quantRows(a) {
		return 0
	}
	if a.Ne[0]%int64(f.UnitElems()) != 0 || a.Loc.Addr%4 != 0 || a.Nb[1]%4 != 0 || a.Nb[2]%4 != 0 || a.Nb[3]%4 != 0 {
		return 0
	}
	return f.NibbleHalf()
}

// swarApplies reports whether the product p of weights a by src1 b takes the integer
// mat-vec: weights it reads (swarFormat), one column in 16-byte aligned vectors, at least
// Limits.SwarMin weights (swarMinDefault), and not Limits.SwarOff.
func swarApplies(a, b *tensor.Tensor, p mulMatParams, l *Limits) bool {
	least := uint64(swarMinDefault)
	if l.SwarMin > 0 {
		least = uint64(l.SwarMin)
	}
	return !l.SwarOff && p.N == 1 && swarFormat(a) > 0 && vectorRows(b) && uint64(p.M)*uint64(p.K) >= least
}

// quantizeAct returns the dispatch that quantizes the src1 columns b of the product p for
// weights of nibble half half, and the two scratch operands it writes: the packed words
// (K / 2 i32 per column) and the blocks' (dx, sx) (K / 16 f32 per column).
func quantizeAct(b *tensor.Tensor, p mulMatParams, half int, l *Limits) (d Dispatch, xq, xs *tensor.Tensor) {
	cols := int64(p.N) * int64(p.Batches)
	xq = scratchAt(tensor.I32, 0, int64(p.K/2), cols)
	xs = scratchAt(tensor.F32, scratchEnd(xq), int64(p.K/16), cols)
	operands := []wgslOperand{in("src1", b), out("xq", xq), out("xs", xs)}
	operands[0].Vec = true
	defs := map[string]string{"HALF": fmt.Sprint(half), "SPLIT": flag(half == 32)}
	s := spec("quantize_act", swarQuantWG, p, defs, operands...)
	groups := uint64(p.K) / uint64(2*half) * uint64(cols)
	grid := grid1D((groups+swarQuantWG-1)/swarQuantWG, l)
	return Dispatch{Spec: s, Tensors: []*tensor.Tensor{b, xq, xs}, Params: p, Grid: grid}, xq, xs
}

// matVecQ4 returns the dispatches of the integer mat-vec of weights ws (one matrix, or
// the gate and the up projection: then dst holds the SWIGLU of their products) by the
// column b, with parameters p (its D: dst's strides).
func matVecQ4(ws []*tensor.Tensor, b, dst *tensor.Tensor, p mulMatParams, l *Limits) []Dispatch {
	half := swarFormat(ws[0])
	quant, xq, xs := quantizeAct(b, p, half, l)
	rows, wg := swarShape(len(ws), l)
	operands := []wgslOperand{in("src0", ws[0])}
	tensors := []*tensor.Tensor{ws[0]}
	if len(ws) == 2 {
		operands = append(operands, in("src0b", ws[1]))
		tensors = append(tensors, ws[1])
	}
	operands = append(operands, in("xq", xq), in("xs", xs), out("dst", dst))
	for i := range operands {
		operands[i].Vec = operands[i].Type.Quantized() || operands[i].Type == wgsl.I32
	}
	tensors = append(tensors, xq, xs, dst)
	acc := len(ws) * rows
	defs := map[string]string{"ROWS": fmt.Sprint(rows), "HALF": fmt.Sprint(half), "WPG": fmt.Sprint(half / 4),
		"SPLIT": flag(half == 32), "SRC0B": flag(len(ws) == 2), "GLU": flag(len(ws) == 2),
		"ACC": fmt.Sprint(acc), "RED": fmt.Sprint(acc * wg)}
	s := spec("mul_mat_vec_q4", wg, p, defs, operands...)
	groups := (uint64(p.M) + uint64(rows) - 1) / uint64(rows) * uint64(p.Batches)
	return []Dispatch{quant, {Spec: s, Tensors: tensors, Params: p, Grid: grid1D(groups, l)}}
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

// matVecQ4Examples are MUL_MAT nodes that take the integer mat-vec (one per format, and
// rows of one and of many tasks), for the kernel compile test.
func matVecQ4Examples() []*tensor.Tensor {
	var ex []*tensor.Tensor
	for _, q := range []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q4_K} {
		ex = append(ex,
			node(tensor.OpMulMat, f32(2048, 1), nil, contiguous(q, 4096, 2048), f32(4096, 1)),
			node(tensor.OpMulMat, f32(32768, 1), nil, contiguous(q, 256, 32768), f32(256, 1)))
	}
	return ex
}
