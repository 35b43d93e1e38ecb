package ggml

import (
	"sync"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// This file binds ggml_im2col, ggml_conv_1d, ggml_conv_2d, ggml_pool_1d, ggml_pool_2d,
// ggml_roll, ggml_conv_2d_direct, ggml_conv_2d_dw_direct,
// ggml_interpolate and the graph builders of the recurrent layers (ggml_ssm_conv,
// ggml_ssm_scan, ggml_gated_delta_net, ggml_rwkv_wkv6, ggml_gated_linear_attn,
// ggml_rwkv_wkv7), lazily as extra.go does.

type ssmFuncs struct {
	once sync.Once
	err  error

	ssmConv       func(Context, Tensor, Tensor) Tensor
	ssmScan       func(Context, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, int64) Tensor
	gatedDeltaNet func(Context, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, int64) Tensor
	wkv6          func(Context, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) Tensor
	gla           func(Context, Tensor, Tensor, Tensor, Tensor, Tensor, float32) Tensor
	wkv7          func(Context, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) Tensor
	im2col        func(Context, Tensor, Tensor, int32, int32, int32, int32, int32, int32, bool, int32) Tensor
	conv2d        func(Context, Tensor, Tensor, int32, int32, int32, int32, int32, int32) Tensor
	conv1d        func(Context, Tensor, Tensor, int32, int32, int32) Tensor
	pool1d        func(Context, Tensor, int32, int32, int32, int32) Tensor
	pool2d        func(Context, Tensor, int32, int32, int32, int32, int32, float32, float32) Tensor
	roll          func(Context, Tensor, int32, int32, int32, int32) Tensor
	conv2dDirect  func(Context, Tensor, Tensor, int32, int32, int32, int32, int32, int32) Tensor
	conv2dDW      func(Context, Tensor, Tensor, int32, int32, int32, int32, int32, int32) Tensor
	interpolate   func(Context, Tensor, int64, int64, int64, int64, uint32) Tensor
}

var ssms sync.Map // *Lib -> *ssmFuncs

// ssm returns l's recurrent-layer builders, binding them on first use; it panics naming
// the first missing symbol.
func (l *Lib) ssm() *ssmFuncs {
	v, _ := ssms.LoadOrStore(l, &ssmFuncs{})
	f := v.(*ssmFuncs)
	f.once.Do(func() {
		reg := func(fptr any, name string) {
			if err := l.bindSym(fptr, name); err != nil && f.err == nil {
				f.err = err
			}
		}
		reg(&f.ssmConv, "ggml_ssm_conv")
		reg(&f.ssmScan, "ggml_ssm_scan")
		reg(&f.gatedDeltaNet, "ggml_gated_delta_net")
		reg(&f.wkv6, "ggml_rwkv_wkv6")
		reg(&f.gla, "ggml_gated_linear_attn")
		reg(&f.wkv7, "ggml_rwkv_wkv7")
		reg(&f.im2col, "ggml_im2col")
		reg(&f.conv2d, "ggml_conv_2d")
		reg(&f.conv1d, "ggml_conv_1d")
		reg(&f.pool1d, "ggml_pool_1d")
		reg(&f.pool2d, "ggml_pool_2d")
		reg(&f.roll, "ggml_roll")
		reg(&f.conv2dDirect, "ggml_conv_2d_direct")
		reg(&f.conv2dDW, "ggml_conv_2d_dw_direct")
		reg(&f.interpolate, "ggml_interpolate")
	})
	if f.err != nil {
		panic(f.err)
	}
	return f
}

// SSMConv is ggml_ssm_conv: the causal depthwise convolution of sx {d_conv - 1 + n_t,
// d_inner, n_s} by c {d_conv, d_inner}.
func (l *Lib) SSMConv(ctx Context, sx, c Tensor) Tensor { return l.ssm().ssmConv(ctx, sx, c) }

// SSMScan is ggml_ssm_scan: the selective scan of x from the states s (row ids[i] for
// sequence i), keeping k snapshots of the states.
func (l *Lib) SSMScan(ctx Context, s, x, dt, a, b, c, ids Tensor, snapshots int64) Tensor {
	return l.ssm().ssmScan(ctx, s, x, dt, a, b, c, ids, snapshots)
}

// GatedDeltaNet is ggml_gated_delta_net: the gated delta rule over the tokens of q, k, v
// from state, keeping k snapshots of the state.
func (l *Lib) GatedDeltaNet(ctx Context, q, k, v, g, beta, state Tensor, snapshots int64) Tensor {
	return l.ssm().gatedDeltaNet(ctx, q, k, v, g, beta, state, snapshots)
}

// RWKVWKV6 is ggml_rwkv_wkv6: RWKV-6's recurrence over k, v, r with the bonus tf and the
// decays td, from state.
func (l *Lib) RWKVWKV6(ctx Context, k, v, r, tf, td, state Tensor) Tensor {
	return l.ssm().wkv6(ctx, k, v, r, tf, td, state)
}

// GatedLinearAttn is ggml_gated_linear_attn: gated linear attention over k, v, q with the
// gates g, from state, its output scaled by scale.
func (l *Lib) GatedLinearAttn(ctx Context, k, v, q, g, state Tensor, scale float32) Tensor {
	return l.ssm().gla(ctx, k, v, q, g, state, scale)
}

// RWKVWKV7 is ggml_rwkv_wkv7: RWKV-7's recurrence over r, w, k, v, a, b, from state.
func (l *Lib) RWKVWKV7(ctx Context, r, w, k, v, a, b, state Tensor) Tensor {
	return l.ssm().wkv7(ctx, r, w, k, v, a, b, state)
}

// Im2col is ggml_im2col: the columns of input b under kernel a's shape (strides s, padding
// p, dilation d), 2-D or 1-D, of type dst.
func (l *Lib) Im2col(ctx Context, a, b Tensor, s0, s1, p0, p1, d0, d1 int32, is2D bool, dst tensor.Type) Tensor {
	return l.ssm().im2col(ctx, a, b, s0, s1, p0, p1, d0, d1, is2D, int32(dst))
}

// Conv2D is ggml_conv_2d: kernel a over input b (strides s, padding p, dilation d), as
// IM2COL, MUL_MAT and a permuted copy.
func (l *Lib) Conv2D(ctx Context, a, b Tensor, s0, s1, p0, p1, d0, d1 int32) Tensor {
	return l.ssm().conv2d(ctx, a, b, s0, s1, p0, p1, d0, d1)
}

// Conv1D is ggml_conv_1d: kernel a over input b (stride s0, padding p0, dilation d0), as
// IM2COL and MUL_MAT.
func (l *Lib) Conv1D(ctx Context, a, b Tensor, s0, p0, d0 int32) Tensor {
	return l.ssm().conv1d(ctx, a, b, s0, p0, d0)
}

// Pool1D is ggml_pool_1d: op 0 MAX, 1 AVG over windows of k0 (stride s0, padding p0).
func (l *Lib) Pool1D(ctx Context, a Tensor, op, k0, s0, p0 int32) Tensor {
	return l.ssm().pool1d(ctx, a, op, k0, s0, p0)
}

// Pool2D is ggml_pool_2d: op 0 MAX, 1 AVG over windows of k0 x k1 (strides s, padding p).
func (l *Lib) Pool2D(ctx Context, a Tensor, op, k0, k1, s0, s1 int32, p0, p1 float32) Tensor {
	return l.ssm().pool2d(ctx, a, op, k0, k1, s0, s1, p0, p1)
}

// Roll is ggml_roll: a cyclic shift by s0..s3 along each dimension.
func (l *Lib) Roll(ctx Context, a Tensor, s0, s1, s2, s3 int32) Tensor {
	return l.ssm().roll(ctx, a, s0, s1, s2, s3)
}

// Conv2DDirect is ggml_conv_2d_direct (CONV_2D): kernel a over input b.
func (l *Lib) Conv2DDirect(ctx Context, a, b Tensor, s0, s1, p0, p1, d0, d1 int32) Tensor {
	return l.ssm().conv2dDirect(ctx, a, b, s0, s1, p0, p1, d0, d1)
}

// Conv2DDW is ggml_conv_2d_dw_direct (CONV_2D_DW): each channel of b by its own kernel of a.
func (l *Lib) Conv2DDW(ctx Context, a, b Tensor, s0, s1, p0, p1, d0, d1 int32) Tensor {
	return l.ssm().conv2dDW(ctx, a, b, s0, s1, p0, p1, d0, d1)
}

// Interpolate is ggml_interpolate (UPSCALE): a resized to ne0..ne3 by mode (a
// ggml_scale_mode with its flags).
func (l *Lib) Interpolate(ctx Context, a Tensor, ne0, ne1, ne2, ne3 int64, mode uint32) Tensor {
	return l.ssm().interpolate(ctx, a, ne0, ne1, ne2, ne3, mode)
}
