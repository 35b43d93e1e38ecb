package ggml

import (
	"sync"
	"unsafe"
)

// This file binds, lazily (see bindSym), the norm and RoPE builders beyond the core set:
// the in-place norms, L2 and group norms, in-place multi-section RoPE, its gradient and the
// offset of the rotated dims.

// normRopeFuncs are the lazily bound functions.
type normRopeFuncs struct {
	once sync.Once
	err  error

	rmsNormInplace func(Context, Tensor, float32) Tensor
	normInplace    func(Context, Tensor, float32) Tensor
	l2Norm         func(Context, Tensor, float32) Tensor
	l2NormInplace  func(Context, Tensor, float32) Tensor
	groupNorm      func(Context, Tensor, int32, float32) Tensor
	groupNormInp   func(Context, Tensor, int32, float32) Tensor
	ropeMultiInp   func(Context, Tensor, Tensor, Tensor, int32, unsafe.Pointer, int32, int32, float32, float32, float32, float32, float32, float32) Tensor
	ropeSetOffset  func(Tensor, int32) Tensor
	ropeMultiBack  func(Context, Tensor, Tensor, Tensor, int32, unsafe.Pointer, int32, int32, float32, float32, float32, float32, float32, float32) Tensor
}

var normRopes sync.Map // *Lib -> *normRopeFuncs

// nr returns l's norm and RoPE functions, binding them on the first call; it panics
// naming the first missing symbol when ggml lacks one.
func (l *Lib) nr() *normRopeFuncs {
	v, _ := normRopes.LoadOrStore(l, &normRopeFuncs{})
	f := v.(*normRopeFuncs)
	f.once.Do(func() {
		reg := func(fptr any, name string) {
			if err := l.bindSym(fptr, name); err != nil && f.err == nil {
				f.err = err
			}
		}
		reg(&f.rmsNormInplace, "ggml_rms_norm_inplace")
		reg(&f.normInplace, "ggml_norm_inplace")
		reg(&f.l2Norm, "ggml_l2_norm")
		reg(&f.l2NormInplace, "ggml_l2_norm_inplace")
		reg(&f.groupNorm, "ggml_group_norm")
		reg(&f.groupNormInp, "ggml_group_norm_inplace")
		reg(&f.ropeMultiInp, "ggml_rope_multi_inplace")
		reg(&f.ropeSetOffset, "ggml_rope_set_offset")
		reg(&f.ropeMultiBack, "ggml_rope_multi_back")
	})
	if f.err != nil {
		panic(f.err)
	}
	return f
}

// RMSNormInplace is RMSNorm writing into a (ggml_rms_norm_inplace).
func (l *Lib) RMSNormInplace(ctx Context, a Tensor, eps float32) Tensor {
	return l.nr().rmsNormInplace(ctx, a, eps)
}

// NormInplace is Norm writing into a (ggml_norm_inplace).
func (l *Lib) NormInplace(ctx Context, a Tensor, eps float32) Tensor {
	return l.nr().normInplace(ctx, a, eps)
}

// L2Norm divides the rows of a by their Euclidean norm, at least eps (ggml_l2_norm).
func (l *Lib) L2Norm(ctx Context, a Tensor, eps float32) Tensor { return l.nr().l2Norm(ctx, a, eps) }

// L2NormInplace is L2Norm writing into a (ggml_l2_norm_inplace).
func (l *Lib) L2NormInplace(ctx Context, a Tensor, eps float32) Tensor {
	return l.nr().l2NormInplace(ctx, a, eps)
}

// GroupNorm normalizes a to zero mean and unit variance over groups of its dim-2
// channels, nGroups groups of ceil(ne2/nGroups) channels (ggml_group_norm).
func (l *Lib) GroupNorm(ctx Context, a Tensor, nGroups int, eps float32) Tensor {
	return l.nr().groupNorm(ctx, a, int32(nGroups), eps)
}

// GroupNormInplace is GroupNorm writing into a (ggml_group_norm_inplace).
func (l *Lib) GroupNormInplace(ctx Context, a Tensor, nGroups int, eps float32) Tensor {
	return l.nr().groupNormInp(ctx, a, int32(nGroups), eps)
}

// RopeMultiInplace is RopeMulti writing into a (ggml_rope_multi_inplace).
func (l *Lib) RopeMultiInplace(ctx Context, a, pos, freq Tensor, sections [4]int32, p RopeExt) Tensor {
	return l.nr().ropeMultiInp(ctx, a, pos, freq, int32(p.NDims), unsafe.Pointer(&sections[0]), int32(p.Mode),
		int32(p.NCtxOrig), p.FreqBase, p.FreqScale, p.ExtFactor, p.AttnFactor, p.BetaFast, p.BetaSlow)
}

// RopeMultiBack is the gradient of RopeMulti, a ROPE_BACK node (ggml_rope_multi_back).
func (l *Lib) RopeMultiBack(ctx Context, a, pos, freq Tensor, sections [4]int32, p RopeExt) Tensor {
	return l.nr().ropeMultiBack(ctx, a, pos, freq, int32(p.NDims), unsafe.Pointer(&sections[0]), int32(p.Mode),
		int32(p.NCtxOrig), p.FreqBase, p.FreqScale, p.ExtFactor, p.AttnFactor, p.BetaFast, p.BetaSlow)
}

// RopeSetOffset sets the first rotated dim of the ROPE node r (ggml_rope_set_offset; not
// for the VISION mode) and returns r.
func (l *Lib) RopeSetOffset(r Tensor, nOffs int) Tensor { return l.nr().ropeSetOffset(r, int32(nOffs)) }
