package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The integer mat-vec of 4-bit weights (mul_mat_vec_q4.wgsl): a MUL_MAT of Q4_0, Q4_1 or
// Q4_K weights by one F32 column multiplies the weights' nibbles by the column quantized
// to 8 bits per block of 32 (as ggml's CPU backend does: Q8_0, Q8_1, Q8_K activations),
// two products per i32 multiply-add. The column is quantized by every workgroup into
// workgroup memory (2.25 bytes per element), so K is bounded by the device's workgroup
// storage; products it does not take go to the vectorised mat-vec kernel.

// swarRows is the dst rows one workgroup of the integer mat-vec computes: every workgroup
// quantizes the whole column, so more rows amortize that.
const swarRows = 16

// swarWG is its workgroup size for rows of more than 32 tasks (32 below).
const swarWG = 64

// swarShape returns the rows per workgroup and workgroup size of the integer mat-vec for
// rows of tasks tasks, with Limits' overrides (SwarRows, SwarWG: a power of two).
func swarShape(tasks uint32, l *Limits) (rows, wg int) {
	rows, wg = swarRows, swarWG
	if tasks <= 32 {
		wg = 32
	}
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
	return rows, wg
}

// swarStorage returns the workgroup memory of the integer mat-vec in bytes: the packed
// column (K / 2 words), a scale and sum per 32 elements, the partial sums, and the
// common reduction array.
func swarStorage(k uint32, rows, wg int) int {
	return int(k)/8*16 + int(k)/32*8 + 4*rows*wg + 4*wg
}

// lowerMatVecQ4 returns the integer mat-vec dispatch of the MUL_MAT t (parameters p), or
// false where it does not apply: src0 not Q4_0, Q4_1 or Q4_K, in rows of whole units on
// 4-byte boundaries (unitRows' alignment); more than one column; src1 not in 16-byte
// aligned vectors; the column beyond the workgroup storage; or Limits.SwarOff.
func lowerMatVecQ4(t *tensor.Tensor, p mulMatParams, l *Limits) (Dispatch, bool) {
	a, b := t.Src[0], t.Src[1]
	f, ok := format(a.Type)
	if l.SwarOff || !ok || f.NibbleHalf() == 0 || p.N != 1 || !vectorRows(b) || !quantRows(a) {
		return Dispatch{}, false
	}
	unit := int64(f.UnitElems())
	if a.Ne[0]%unit != 0 || a.Loc.Addr%4 != 0 || a.Nb[1]%4 != 0 || a.Nb[2]%4 != 0 || a.Nb[3]%4 != 0 {
		return Dispatch{}, false
	}
	half := uint32(f.NibbleHalf())
	task := uint32(unit) / uint32(f.BlockElems()) * 2 * half // a unit of Q4_0's groups, one group otherwise
	rows, wg := swarShape(p.K/task, l)
	limit := l.MaxWorkgroupStorage
	if limit == 0 {
		limit = 16384
	}
	if swarStorage(p.K, rows, wg) > limit {
		return Dispatch{}, false
	}
	operands := []wgslOperand{in("src0", a), in("src1", b), out("dst", t)}
	operands[0].Vec, operands[1].Vec = true, true
	defs := map[string]string{"ROWS": fmt.Sprint(rows), "HALF": fmt.Sprint(half), "WPG": fmt.Sprint(half / 4),
		"SPLIT": flag(half == 32), "XWORDS": fmt.Sprint(p.K / 8), "XBLOCKS": fmt.Sprint(p.K / 32), "RED": fmt.Sprint(rows * wg)}
	s := spec("mul_mat_vec_q4", wg, p, defs, operands...)
	groups := (uint64(p.M) + uint64(rows) - 1) / uint64(rows) * uint64(p.Batches)
	return Dispatch{Spec: s, Tensors: []*tensor.Tensor{a, b, t}, Params: p, Grid: grid1D(groups, l)}, true
}

// matVecQ4Examples are MUL_MAT nodes that take the integer mat-vec (one per format, and
// rows of one and of many tasks), for the kernel compile test.
func matVecQ4Examples() []*tensor.Tensor {
	var ex []*tensor.Tensor
	for _, q := range []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q4_K} {
		ex = append(ex,
			node(tensor.OpMulMat, f32(3, 1), nil, contiguous(q, 256, 3), f32(256, 1)),
			node(tensor.OpMulMat, f32(40, 1), nil, contiguous(q, 4096, 40), f32(4096, 1)))
	}
	return ex
}
