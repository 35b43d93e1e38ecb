package ops

import (
	"fmt"
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// RMS_NORM, NORM and L2_NORM over rows (dim 0), f32, eps in op_params[0]; the fused pair
// RMS_NORM or NORM -> MUL by a weight broadcast over rows (llama's attn_norm and
// ffn_norm), which writes only the MUL's result; the pair of any of the three -> SCALE
// (the L2 norms of delta-net layers' q and k: RMS_NORM then SCALE by 1 / sqrt(n)), which
// writes only the SCALE's; and the triple ADD -> norm -> MUL (llama's residual sum and the
// norm after it), which writes the sum too (add_norm.go). GROUP_NORM is in
// group_norm.go.

type normParams struct {
	Ne, A, D [4]uint32 // dst shape; strides of the normalised rows (src0, or the sum), dst
	// The MUL operand of the fused forms (src1 of the MUL), broadcast like binary ops: its
	// shape and strides.
	We, W [4]uint32
	Rows  uint32
	Eps   float32
	// The ADD of the fused triple: its src0's strides, its src1's shape and strides (src1
	// repeated over the rows like binary ops).
	S, Be, B [4]uint32
	// The SCALE of the pair norm -> SCALE: its scale and bias.
	Sc [4]float32
}

func init() {
	describeFamily("RMS_NORM, NORM, L2_NORM", "F32", "any strides; in place; RMS_NORM and NORM fused with a following MUL, and with a preceding F32 ADD too")
	for _, op := range []tensor.Op{tensor.OpRMSNorm, tensor.OpNorm, tensor.OpL2Norm} {
		register(op, family{supports: supportsNorm, lower: lowerNorm, examples: func() []*tensor.Tensor {
			return []*tensor.Tensor{node(op, f32(7, 2), []int32{int32(f32bits(1e-5))}, f32(7, 2))}
		}})
	}
}

func supportsNorm(t *tensor.Tensor, l *Limits) bool {
	a := t.Src[0]
	return a != nil && a.Type == tensor.F32 && t.Type == tensor.F32 && tensor.SameShape(a, t) && elementAligned(a) && elementAligned(t) &&
		reductionFits(t.Ne[0], l)
}

// reductionFits reports whether one workgroup of rowGroup(n) invocations reduces n
// elements within the loop limit of CPU drivers (each invocation loops over n / size).
func reductionFits(n int64, l *Limits) bool {
	return (n+int64(rowGroup(n, l))-1)/int64(rowGroup(n, l)) <= 65535
}

func lowerNorm(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	return normDispatch(nil, t, nil, t, nil, l), nil
}

// normDispatch normalises the rows of norm's source into dst, multiplying by w if set,
// scaling as dst does where it is a SCALE (the pair norm+scale).
// With add (norm's source), the kernel first stores add's sum, row by row, and normalises
// what it stored.
// With xq, the register form also quantizes each result row (a column of the integer
// mat-vec after it) into xq's scratch memory, in the layout of weights xq.weights.
func normDispatch(add, norm, w, dst *tensor.Tensor, xq *xqOut, l *Limits) []Dispatch {
	a := norm.Src[0]
	ne := dims(dst)
	rows := uint64(ne[1]) * uint64(ne[2]) * uint64(ne[3])
	p := normParams{Ne: ne, A: strides(a), D: strides(dst), Rows: uint32(rows), Eps: math.Float32frombits(uint32(norm.Params[0]))}
	defs := map[string]string{"RMS": "0", "L2": "0", "MUL": "0", "ADD": "0", "SCALE": flag(dst.Op == tensor.OpScale)}
	if dst.Op == tensor.OpScale {
		p.Sc = unaryFloats(dst)
	}
	switch norm.Op {
	case tensor.OpRMSNorm:
		defs["RMS"] = "1"
	case tensor.OpL2Norm:
		defs["L2"] = "1"
	}
	var operands []wgslOperand
	var tensors []*tensor.Tensor
	if add != nil {
		defs["ADD"] = "1"
		s0, s1 := add.Src[0], add.Src[1]
		p.S, p.Be, p.B = strides(s0), dims(s1), strides(s1)
		operands = append(operands, in("src0", s0), in("src1", s1), out("added", add))
		tensors = append(tensors, s0, s1, add)
	} else {
		operands = append(operands, in("src0", a))
		tensors = append(tensors, a)
	}
	if w != nil {
		defs["MUL"] = "1"
		p.We, p.W = dims(w), strides(w)
		operands = append(operands, in("w", w))
		tensors = append(tensors, w)
	}
	operands = append(operands, out("dst", dst))
	tensors = append(tensors, dst)
	defs["XQ"] = flag(xq != nil)
	if xq != nil {
		xq.rowDefines(defs, dst.Ne[0])
		operands = append(operands, out("xq", xq.cols))
		tensors = append(tensors, xq.cols)
	}
	wg, e := normGroup(dst.Ne[0], l)
	defs["REG"], defs["E"], defs["NG"] = "0", fmt.Sprint(e), fmt.Sprint(normPartials(wg))
	if e > 0 {
		defs["REG"] = "1"
	}
	s := spec("norm", wg, p, defs, operands...)
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: grid1D(rows, l)}}
}

// The register form of the norm kernel: a row of at most normMaxRegElems elements per
// invocation stays in registers, loaded once with independent loads.
const (
	// normRegElems is the elements per invocation the workgroup size is chosen for.
	normRegElems = 8
	// normMaxRegElems is the most elements per invocation the register form holds (rows
	// up to that many times the largest workgroup).
	normMaxRegElems = 16
)

// normGroup returns the workgroup size of the norm kernel for rows of n elements and the
// elements each invocation holds in registers (0: the row is too long, the kernel loops).
// The workgroup is the smallest power of two from 64 that holds the row at normRegElems
// elements an invocation, within the device's limit and 1024; at the largest, up to
// normMaxRegElems.
func normGroup(n int64, l *Limits) (wg, elems int) {
	limit := l.MaxGroupSize
	if limit <= 0 {
		limit = 256
	}
	limit = min(limit, 1024)
	wg = 64
	for wg*2 <= limit && int64(wg)*normRegElems < n {
		wg *= 2
	}
	e := (n + int64(wg) - 1) / int64(wg)
	if e > normMaxRegElems {
		return rowGroup(n, l), 0
	}
	return wg, int(max(e, 1))
}

// normPartials is the partial sums of the norm kernel's two-round reduction for a
// workgroup of wg invocations (a power of two): about its square root, a power of two.
func normPartials(wg int) int {
	g := 1
	for g*g*4 <= wg {
		g *= 2
	}
	return g
}

// guardNormMul admits the pair norm -> mul (mul = norm * w, w repeated over norm's shape).
func guardNormMul(n []*tensor.Tensor, l *Limits) bool {
	norm, mul := n[0], n[1]
	if mul.Src[0] != norm || mul.Src[1] == norm || !Supports(norm, l) || !Supports(mul, l) {
		return false
	}
	// Each element is read and written by the same invocation, so the result may replace
	// an input exactly, but not overlap it any other way.
	for _, r := range []*tensor.Tensor{norm.Src[0], mul.Src[1]} {
		if overlaps(mul, r) && !sameLayout(mul, r) {
			return false
		}
	}
	return true
}

// lowerNormMul lowers the pair as one dispatch that writes only mul.
func lowerNormMul(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	return normDispatch(nil, n[0], n[1].Src[1], n[1], nil, l), nil
}

// guardNormScale admits the pair norm -> scale (scale = norm * s + b), the result in
// place of the norm's source or apart from it.
func guardNormScale(n []*tensor.Tensor, l *Limits) bool {
	norm, sc := n[0], n[1]
	if sc.Src[0] != norm || !Supports(norm, l) || !Supports(sc, l) || !tensor.SameShape(norm, sc) {
		return false
	}
	return !overlaps(sc, norm.Src[0]) || sameLayout(sc, norm.Src[0])
}

// lowerNormScale lowers the pair as one dispatch that writes only the scale.
func lowerNormScale(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	return normDispatch(nil, n[0], nil, n[1], nil, l), nil
}
