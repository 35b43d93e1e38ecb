package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// The Q4_K mat-vec with 16-byte weight loads (mul_mat_vec_q4k.wgsl): single products of
// Q4_K weights by one column quantized ahead (the integer mat-vec's XQ form, whose
// quantizing dispatch it keeps), eight invocations a block, each reading the block's
// header and 16 consecutive bytes of its quants with one vector load each, where the
// integer mat-vec reads a group's eight quant words with one 4-byte load each.
//
// Measured on an NVIDIA H100 (µs, weights beyond the L2 cache, two runs each; the
// integer mat-vec at 2 x 32 -> this kernel at 2 x 32 / 2 x 64 rows x invocations):
// 14336 x 4096 20.9, 21.2 -> 21.4, 21.5 / 20.9, 21.0; 4096 x 14336 23.1, 23.3 -> 24.4, 24.4
// / 21.1, 20.9; 4096 x 4096 12.2, 12.2 -> 11.8, 12.1 / 11.1, 11.0; the output head 128256 x
// 4096 118, 117 -> 126, 126 / 129, 129. So it takes products of up to q4kWideMaxRows rows,
// two rows by 64 invocations: a decode's attention output and feed-forward down products.
// An 8B Q4_K decode graph's GPU time (GGML_WGPU_PROFILE=1, another start, alternating,
// GGML_WGPU_Q4K_WIDE=0 -> default) went from 3,451.4, 3,451.4 to 3,329.7, 3,325.9 µs.

// q4kWideMaxRows bounds the rows (over every batch) of the products the kernel takes: the
// output heads stay on the integer mat-vec.
const q4kWideMaxRows = 16384

// q4kWideRows and q4kWideWG are the kernel's rows per workgroup and workgroup size.
const (
	q4kWideRows = 2
	q4kWideWG   = 64
)

// q4kWide reports whether a single product of weights a over m rows (every batch) on the
// quantized column takes the kernel: Q4_K weights whose bytes start on 16 bytes within
// their binding (the tensor at a multiple of 16, bindings at multiples of the device's
// storage alignment, itself a multiple of 16), at most q4kWideMaxRows rows, not turned off.
func q4kWide(a *tensor.Tensor, m uint32, l *Limits) bool {
	return !l.Q4KWideOff && a.Type == tensor.Q4_K && m <= q4kWideMaxRows && a.Loc.Addr%16 == 0 &&
		l.StorageAlign > 0 && l.StorageAlign%16 == 0
}

// q4kWideSpec returns the kernel's spec of rows rows by wg invocations a workgroup
// (swarFit of q4kWideRows, q4kWideWG) for the integer mat-vec's operands (src0, xq, dst).
func q4kWideSpec(a *tensor.Tensor, operands []wgslOperand, params any, rows, wg int) *wgsl.Spec {
	words := append([]wgslOperand{{Name: "src0", Type: mustFormat(a), Vec16: true}}, operands[1:]...)
	return spec("mul_mat_vec_q4k", wg, params, map[string]string{"ROWS": fmt.Sprint(rows), "ACC": fmt.Sprint(rows),
		"RED": fmt.Sprint(rows * wg)}, words...)
}
