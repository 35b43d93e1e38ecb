package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// The fused triple ADD -> RMS_NORM or NORM -> MUL (the fusion row "add+norm+mul"): llama's
// residual sum followed by the next norm and its weight. One workgroup per row stores the
// sum (ADD's result, which later nodes read again) and the weighted norm of it (MUL's
// result); the norm itself stays in the kernel. The kernel is the norm kernel with ADD set
// (wgsl/kernels/norm.wgsl).

// guardAddNormMul admits add -> norm -> mul where norm normalises add's result, mul
// multiplies the norm by a weight repeated over its shape, everything is F32 (the ADD's
// src1 repeated over its src0 as a binary ADD takes it), and the two results the kernel
// stores have contiguous rows, so that workgroups store disjoint rows.
//
// Aliasing: each invocation reads element j of the sources, then stores element j of the
// sum, reads it back, and last stores element j of the result. So a stored result may take
// the place of a source (or the result that of the sum) exactly, at the same layout, but
// not overlap it any other way; and the sum must not overlap the weight at all (a weight
// row is read by every workgroup, after the sum is stored). The norm, which the kernel
// does not store, may be in place of the sum only where nothing reads the sum later: the
// scheduler checks that for every private result.
func guardAddNormMul(n []*tensor.Tensor, l *Limits) bool {
	add, norm, mul := n[0], n[1], n[2]
	if norm.Src[0] != add || mul.Src[0] != norm {
		return false
	}
	a, b, w := add.Src[0], add.Src[1], mul.Src[1]
	if a == nil || b == nil || w == nil || w == add || w == norm {
		return false
	}
	if a.Type != tensor.F32 || b.Type != tensor.F32 || add.Type != tensor.F32 || mul.Type != tensor.F32 {
		return false
	}
	if !Supports(add, l) || !Supports(norm, l) || !Supports(mul, l) || !add.Contiguous() || !mul.Contiguous() {
		return false
	}
	for _, r := range []*tensor.Tensor{a, b} {
		if overlaps(add, r) && !sameLayout(add, r) {
			return false
		}
	}
	for _, r := range []*tensor.Tensor{a, b, w, add} {
		if overlaps(mul, r) && !sameLayout(mul, r) {
			return false
		}
	}
	return !overlaps(add, w)
}

// lowerAddNormMul lowers the triple as one dispatch that writes add and mul.
func lowerAddNormMul(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	return normDispatch(n[0], n[1], n[2].Src[1], n[2], nil, l), nil
}
