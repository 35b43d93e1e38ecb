package ops

import (
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// CONCAT, REPEAT, PAD, ACC and ARANGE: ops that place source elements at other
// coordinates of dst (layout.wgsl), one invocation per dst element.

type layoutParams struct {
	Ne, A, D [4]uint32 // dst shape; src0, dst strides
	Ae, B    [4]uint32 // src0's shape (ACC: src1's); src1 strides
	// Off: CONCAT: where src1 starts; PAD: the left padding; ACC: the view's strides of
	// dims 1..3 and its offset, in elements.
	Off         [4]uint32
	N, Circular uint32
	Start, Step float32 // ARANGE
}

// layoutTypes are the element types of CONCAT and REPEAT (the CPU backend copies F32 and
// I32 as words, F16 as halves).
func layoutType(t tensor.Type) bool { return t == tensor.F32 || t == tensor.F16 || t == tensor.I32 }

func init() {
	describeFamily("CONCAT, REPEAT", "F32, F16, I32", "any dimension; any strides")
	describeFamily("PAD", "F32", "left and right padding per dimension (ggml_pad_ext), circular too; any strides")
	describeFamily("ACC", "F32", "src1 added to a view of src0 (strides, offset) whose rows and planes do not interleave; in place")
	describeFamily("ARANGE", "F32", "")
	i32 := func(ne ...int64) *tensor.Tensor { return contiguous(tensor.I32, ne...) }
	h := func(ne ...int64) *tensor.Tensor { return contiguous(tensor.F16, ne...) }
	register(tensor.OpConcat, family{supports: supportsLayout, lower: lowerLayout, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{
			node(tensor.OpConcat, f32(4, 5), []int32{1}, f32(4, 2), f32(4, 3)),
			node(tensor.OpConcat, h(7, 2), []int32{0}, h(4, 2), h(3, 2)),
			node(tensor.OpConcat, i32(4, 2, 2), []int32{2}, i32(4, 2), i32(4, 2)),
		}
	}})
	register(tensor.OpRepeat, family{supports: supportsLayout, lower: lowerLayout, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpRepeat, f32(4, 6), nil, f32(4, 2)), node(tensor.OpRepeat, i32(4, 6), nil, i32(2, 3))}
	}})
	register(tensor.OpPad, family{supports: supportsLayout, lower: lowerLayout, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpPad, f32(6, 3), []int32{1, 1, 0, 1}, f32(4, 2))}
	}})
	register(tensor.OpAcc, family{supports: supportsLayout, lower: lowerLayout, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpAcc, f32(6, 3), []int32{24, 72, 72, 4}, f32(6, 3), f32(2, 2))}
	}})
	register(tensor.OpArange, family{supports: supportsLayout, lower: lowerLayout, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpArange, f32(6), []int32{0, int32(f32bits(6)), int32(f32bits(1))})}
	}})
}

func supportsLayout(t *tensor.Tensor, _ *Limits) bool {
	a, b := t.Src[0], t.Src[1]
	if !elementAligned(t) {
		return false
	}
	switch t.Op {
	case tensor.OpArange:
		return t.Type == tensor.F32
	case tensor.OpConcat:
		d := t.Params[0]
		if a == nil || b == nil || !layoutType(t.Type) || a.Type != t.Type || b.Type != t.Type || d < 0 || d > 3 {
			return false
		}
		for i := 0; i < 4; i++ {
			want := a.Ne[i]
			if int32(i) == d {
				want += b.Ne[i]
			} else if b.Ne[i] != a.Ne[i] {
				return false
			}
			if t.Ne[i] != want {
				return false
			}
		}
		return elementAligned(a) && elementAligned(b)
	case tensor.OpRepeat:
		if a == nil || !layoutType(t.Type) || a.Type != t.Type {
			return false
		}
		for i := 0; i < 4; i++ {
			if a.Ne[i] == 0 || t.Ne[i]%a.Ne[i] != 0 {
				return false
			}
		}
		return elementAligned(a)
	case tensor.OpPad:
		if a == nil || t.Type != tensor.F32 || a.Type != tensor.F32 {
			return false
		}
		for i := 0; i < 4; i++ {
			lp, rp := int64(t.Params[2*i]), int64(t.Params[2*i+1])
			if lp < 0 || rp < 0 || a.Ne[i]+lp+rp != t.Ne[i] {
				return false
			}
		}
		return elementAligned(a)
	case tensor.OpAcc:
		if a == nil || b == nil || t.Type != tensor.F32 || a.Type != tensor.F32 || b.Type != tensor.F32 || !tensor.SameShape(a, t) {
			return false
		}
		_, ok := accView(t)
		return ok && elementAligned(a) && elementAligned(b)
	}
	return false
}

// accView returns ACC's view of dst in elements (strides of dims 1..3, offset), the strides
// of its single-element dimensions replaced by the extent below them, and whether the view
// lies in dst with rows, planes and batches that do not interleave (each element of dst
// then has at most one coordinate in the view, found by division).
func accView(t *tensor.Tensor) ([4]uint32, bool) {
	b := t.Src[1]
	var v [4]uint32
	ext := b.Ne[0] // the elements spanned by the view's dims below i
	for i := 1; i < 4; i++ {
		nb := int64(uint32(t.Params[i-1]))
		if nb%4 != 0 {
			return v, false
		}
		s := nb / 4
		if b.Ne[i] == 1 {
			s = ext
		}
		if s < ext {
			return v, false
		}
		v[i-1] = uint32(s)
		ext += s * (b.Ne[i] - 1)
	}
	off := int64(uint32(t.Params[3]))
	if off%4 != 0 || !tensorContiguous(t) || !tensorContiguous(t.Src[0]) || off/4+ext > t.Elems() {
		return v, false
	}
	v[3] = uint32(off / 4)
	return v, true
}

// tensorContiguous reports whether t's elements lie in row-major order without gaps.
func tensorContiguous(t *tensor.Tensor) bool {
	nb := t.TypeSize()
	for i := 0; i < 4; i++ {
		if t.Ne[i] != 1 && t.Nb[i] != nb {
			return false
		}
		nb *= uint64(t.Ne[i])
	}
	return true
}

func lowerLayout(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a, b := t.Src[0], t.Src[1]
	p := layoutParams{Ne: dims(t), D: strides(t), N: uint32(t.Elems())}
	variant := map[tensor.Op]string{tensor.OpConcat: "CONCAT", tensor.OpRepeat: "REPEAT", tensor.OpPad: "PAD", tensor.OpAcc: "ACC", tensor.OpArange: "ARANGE"}[t.Op]
	defs := map[string]string{variant: "1"}
	if t.Type == tensor.I32 {
		defs["INT"] = "1"
	}
	var operands []wgslOperand
	var tensors []*tensor.Tensor
	if a != nil {
		p.A, p.Ae = strides(a), dims(a)
		operands, tensors = append(operands, in("src0", a)), append(tensors, a)
	}
	switch t.Op {
	case tensor.OpConcat:
		p.B = strides(b)
		p.Off[t.Params[0]] = uint32(a.Ne[t.Params[0]])
		operands, tensors = append(operands, in("src1", b)), append(tensors, b)
	case tensor.OpPad:
		for i := 0; i < 4; i++ {
			p.Off[i] = uint32(t.Params[2*i])
		}
		if t.Params[8] != 0 {
			p.Circular = 1
		}
	case tensor.OpAcc:
		p.Ae, p.B = dims(b), strides(b)
		p.Off, _ = accView(t)
		operands, tensors = append(operands, in("src1", b)), append(tensors, b)
	case tensor.OpArange:
		p.Start = math.Float32frombits(uint32(t.Params[0]))
		p.Step = math.Float32frombits(uint32(t.Params[2]))
	}
	operands, tensors = append(operands, out("dst", t)), append(tensors, t)
	s := spec("layout", wgElementwise, p, defs, operands...)
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
