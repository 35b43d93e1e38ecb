package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// The integer mat-vec of 4-bit weights (mul_mat_vec_q4.wgsl): a MUL_MAT of Q4_0, Q4_1 or
// Q4_K weights by one F32 column multiplies the weights' nibbles by the column quantized
// to 8 bits per block of 32 (as ggml's CPU backend does: Q8_0, Q8_1, Q8_K activations),
// two products per i32 multiply-add. Q6_K's 6-bit weights take the same kernel in signed
// lanes (its Q6K form). Each invocation quantizes the activations it reads,
// in registers, for all the rows it computes: a dispatch quantizing the column once into
// memory cost ~10 µs on an H100, more than it saved. The fused feed-forward gate (gate and
// up projections of the same weight format and the SWIGLU, lowerMatVecGLU) takes its
// two-matrix form.

// swarMinDefault is the fewest rows (M over every batch) of a product that takes the
// integer mat-vec (Limits.SwarMin overrides it). Each workgroup quantizes the activations
// it reads, so the kernel pays off where many rows share them: on an H100 (1B and 8B
// llama models, Q4_K) it slowed decoding with products of 2048 and 4096 rows (the output
// and down projections: 19.3 -> 31.9 µs at 2048 x 8192) and sped up those of 8192 rows
// and more (the fused feed-forward gate, the output head: 185 -> 135 µs at 128256 x 2048).
const swarMinDefault = 8192

// swarRows and swarWG are the integer mat-vec's rows per workgroup and workgroup size
// (from swarMinDefault rows on). Measured on an NVIDIA H100 (perf harness, one column, µs
// for Q4_0 14336 x 4096, Q4_0 4096 x 14336, Q4_K 14336 x 4096, Q4_K 4096 x 14336, Q4_0
// 128256 x 2048, Q4_K 128256 x 2048): 8 x 32 30.9, 49.6, 30.9, 52.1, 93.8, 103; 4 x 32
// 31.4, 35.8, 39.7, 42.3, 106, 135; 2 x 64 51.2, 46.6, 54.9, 59.0, 232, 255; 1 x 64
// 84.9 .. 428 (the float kernel, another run of the same card: 34.3, 36.1, 44.1, 43.9,
// 119, 185; ggml-vulkan 18.2, 30.0, 24.8, 17.6, 84.6, 105).
const (
	swarRows = 8
	swarWG   = 32
)

// q6kHalf is the distance in elements between the low and the high nibbles' elements of
// a Q6_K ql byte (runs r and r + 2 of a half block: wgsl/q6k.go); q6kGroupWords the ql
// (and qh) words of one of the kernel's Q6_K groups (32 l of two runs: 64 elements).
const (
	q6kHalf       = 64
	q6kGroupWords = 8
)

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

// swarFormat returns the distance in elements between the low and the high nibbles'
// elements of the weights a (the nibble half of wgsl/nibbles.go; q6kHalf for Q6_K), 0
// where the integer mat-vec cannot read them: not Q4_0, Q4_1, Q4_K or Q6_K, or, for the
// nibble formats, not in rows of whole units on 4-byte boundaries (unitRows' alignment;
// the Q6_K form computes each block's byte and reads it at either alignment).
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
// mat-vec: weights it reads (swarFormat), one column in 16-byte aligned vectors, at least
// Limits.SwarMin rows (swarMinDefault), and not Limits.SwarOff.
func swarApplies(a, b *tensor.Tensor, p mulMatParams, l *Limits) bool {
	least := uint64(swarMinDefault)
	if l.SwarMin > 0 {
		least = uint64(l.SwarMin)
	}
	return !l.SwarOff && p.N == 1 && swarFormat(a) > 0 && vectorRows(b) && uint64(p.M)*uint64(p.Batches) >= least
}

// matVecQ4 returns the dispatches of the integer mat-vec of weights ws (one matrix, or
// the gate and the up projection: then dst holds the SWIGLU of their products) by the
// column b, with parameters p (its D: dst's strides).
func matVecQ4(ws []*tensor.Tensor, b, dst *tensor.Tensor, p mulMatParams, l *Limits) []Dispatch {
	half := swarFormat(ws[0])
	q6k := ws[0].Type == tensor.Q6_K
	wpg := half / 4
	if q6k {
		wpg = q6kGroupWords
	}
	rows, wg := swarShape(len(ws), l)
	operands := []wgslOperand{in("src0", ws[0])}
	tensors := []*tensor.Tensor{ws[0]}
	if len(ws) == 2 {
		operands = append(operands, in("src0b", ws[1]))
		tensors = append(tensors, ws[1])
	}
	operands = append(operands, in("src1", b), out("dst", dst))
	for i := range operands {
		operands[i].Vec = operands[i].Type.Quantized() || operands[i].Name == "src1"
	}
	tensors = append(tensors, b, dst)
	acc := len(ws) * rows
	defs := map[string]string{"ROWS": fmt.Sprint(rows), "HALF": fmt.Sprint(half), "WPG": fmt.Sprint(wpg),
		"SPLIT": flag(half == 32 || q6k), "Q6K": flag(q6k), "NIBBLES": flag(!q6k),
		"SRC0B": flag(len(ws) == 2), "GLU": flag(len(ws) == 2),
		"ACC": fmt.Sprint(acc), "RED": fmt.Sprint(acc * wg)}
	s := spec("mul_mat_vec_q4", wg, p, defs, operands...)
	groups := (uint64(p.M) + uint64(rows) - 1) / uint64(rows) * uint64(p.Batches)
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: grid1D(groups, l)}}
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
	for _, q := range []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q4_K, tensor.Q6_K} {
		ex = append(ex,
			node(tensor.OpMulMat, f32(8192, 1), nil, contiguous(q, 4096, 8192), f32(4096, 1)),
			node(tensor.OpMulMat, f32(32768, 1), nil, contiguous(q, 256, 32768), f32(256, 1)))
	}
	return ex
}
