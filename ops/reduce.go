package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// Row reductions, one workgroup per row (reduce.wgsl): SUM_ROWS (dst[0, i1, i2, i3] = the
// row's sum), MEAN (that sum / ne0), ARGMAX (I32: the index of the row's largest value,
// the last one of equal values as ggml's CPU; a matrix, one result per row), and SUM (the
// sum of every element, one workgroup; F32 or F16). CUMSUM (cumsum.wgsl) writes each row's
// inclusive prefix sums, scanning it a workgroup-wide chunk at a time. Any strides.

type reduceParams struct {
	Ne, A, D [4]uint32 // src0 shape; src0, dst strides
	Rows     uint32    // rows of src0 (dims 1..3)
	N        uint32    // SUM: elements of src0
}

// sumMaxElems bounds SUM: its single workgroup (256 invocations) loops over the tensor,
// and lavapipe stops a loop after 65535 iterations.
const sumMaxElems = 256 * 65535

// reduceKernel names the kernel variant (reduce.wgsl's OP define) of each reduction.
var reduceKernel = map[tensor.Op]string{
	tensor.OpSum: "TOTAL", tensor.OpSumRows: "SUM", tensor.OpMean: "MEAN", tensor.OpArgMax: "ARGMAX", tensor.OpCumsum: "",
}

func init() {
	describeFamily("SUM, SUM_ROWS, MEAN, ARGMAX, CUMSUM", "F32 (SUM: F16 too); ARGMAX to I32",
		"one workgroup per row; any strides; SUM up to 16M elements")
	ex := map[tensor.Op]func() []*tensor.Tensor{
		tensor.OpSum: func() []*tensor.Tensor {
			return []*tensor.Tensor{node(tensor.OpSum, f32(1), nil, f32(7, 3, 2)),
				node(tensor.OpSum, contiguous(tensor.F16, 1), nil, contiguous(tensor.F16, 7, 3))}
		},
		tensor.OpSumRows: func() []*tensor.Tensor {
			return []*tensor.Tensor{node(tensor.OpSumRows, f32(1, 3, 2), nil, f32(7, 3, 2))}
		},
		tensor.OpMean: func() []*tensor.Tensor { return []*tensor.Tensor{node(tensor.OpMean, f32(1, 3, 2), nil, f32(7, 3, 2))} },
		tensor.OpArgMax: func() []*tensor.Tensor {
			return []*tensor.Tensor{node(tensor.OpArgMax, contiguous(tensor.I32, 3), nil, f32(7, 3))}
		},
		tensor.OpCumsum: func() []*tensor.Tensor { return []*tensor.Tensor{node(tensor.OpCumsum, f32(300, 3), nil, f32(300, 3))} },
	}
	for op := range reduceKernel {
		register(op, family{supports: supportsReduce, lower: lowerReduce, examples: ex[op]})
	}
}

func supportsReduce(t *tensor.Tensor, _ *Limits) bool {
	a := t.Src[0]
	if a == nil || !elementAligned(a) || !elementAligned(t) {
		return false
	}
	switch t.Op {
	case tensor.OpSum:
		return isFloat(a.Type) && t.Type == a.Type && t.Elems() == 1 && a.Elems() <= sumMaxElems
	case tensor.OpSumRows, tensor.OpMean:
		return a.Type == tensor.F32 && t.Type == tensor.F32 && t.Ne == [4]int64{1, a.Ne[1], a.Ne[2], a.Ne[3]}
	case tensor.OpArgMax:
		return a.Type == tensor.F32 && t.Type == tensor.I32 && a.Ne[2] == 1 && a.Ne[3] == 1 &&
			t.Ne == [4]int64{a.Ne[1], 1, 1, 1}
	case tensor.OpCumsum:
		return a.Type == tensor.F32 && t.Type == tensor.F32 && tensor.SameShape(a, t)
	}
	return false
}

func lowerReduce(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a := t.Src[0]
	p := reduceParams{Ne: dims(a), A: strides(a), D: strides(t), Rows: uint32(a.Ne[1] * a.Ne[2] * a.Ne[3]), N: uint32(a.Elems())}
	if t.Op == tensor.OpArgMax {
		// one result per row: dst's row stride is its element stride
		p.D = [4]uint32{0, p.D[0], 0, 0}
	}
	ops := []wgslOperand{in("src0", a), out("dst", t)}
	tensors := []*tensor.Tensor{a, t}
	if t.Op == tensor.OpCumsum {
		s := spec("cumsum", rowGroup(a.Ne[0], l), p, nil, ops...)
		return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: grid1D(uint64(p.Rows), l)}}, nil
	}
	wg, grid := rowGroup(a.Ne[0], l), grid1D(uint64(p.Rows), l)
	if t.Op == tensor.OpSum {
		wg, grid = 256, [3]uint32{1, 1, 1}
	}
	s := spec("reduce", wg, p, map[string]string{"OP": reduceKernel[t.Op], reduceKernel[t.Op]: "1"}, ops...)
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: grid}}, nil
}
