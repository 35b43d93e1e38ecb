package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// POOL_1D and POOL_2D (ggml_pool_1d, ggml_pool_2d: the poolings of vision and audio
// projectors, Gemma 3's among them): op_params [op, k0, s0, p0] (1-D) or [op, k0, k1, s0,
// s1, p0, p1] (2-D); op 0 MAX, 1 AVG. dst {OW, OH, ...} F32 holds, at (ox, oy), the
// maximum or mean of src over the window from (ox s0 - p0, oy s1 - p1) of k0 x k1
// elements inside src: a 2-D mean divides by k0 k1 whatever the padding, a 1-D one by the
// elements inside, as the CPU backend does; a window with none is -FLT_MAX (MAX) or 0
// (AVG, 1-D). src F32 or F16, its planes (2-D) or rows (1-D) one after another as the CPU
// backend walks them.

type poolParams struct {
	Ne, A, D       [4]uint32 // dst shape; src, dst strides
	N              uint32
	IW, IH         uint32
	K0, K1, S0, S1 uint32
	P0, P1         int32
	Avg            uint32 // 1: the mean, else the maximum
	InsideOnly     uint32 // 1: the mean divides by the elements inside (1-D)
}

// Pool ops of ggml_op_pool.
const (
	poolMax = 0
	poolAvg = 1
)

func init() {
	describeFamily("POOL_1D, POOL_2D", "F32, F16 to F32", "MAX and AVG; stride, padding")
	register(tensor.OpPool1d, family{supports: supportsPool, lower: lowerPool, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpPool1d, f32(4, 3, 2), []int32{poolAvg, 3, 2, 1}, f32(8, 3, 2))}
	}})
	register(tensor.OpPool2d, family{supports: supportsPool, lower: lowerPool, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpPool2d, f32(4, 3, 2), []int32{poolMax, 2, 2, 2, 2, 0, 0}, contiguous(tensor.F16, 8, 6, 2))}
	}})
}

// poolWindow returns the kernel, strides and padding of a pool node (1-D: k1 and s1 1,
// p1 0).
func poolWindow(t *tensor.Tensor) (k0, k1, s0, s1, p0, p1 int64) {
	q := t.Params
	if t.Op == tensor.OpPool1d {
		return int64(q[1]), 1, int64(q[2]), 1, int64(q[3]), 0
	}
	return int64(q[1]), int64(q[2]), int64(q[3]), int64(q[4]), int64(q[5]), int64(q[6])
}

func supportsPool(t *tensor.Tensor, _ *Limits) bool {
	a := t.Src[0]
	if a == nil || (a.Type != tensor.F32 && a.Type != tensor.F16) || t.Type != tensor.F32 || !t.Contiguous() {
		return false
	}
	if t.Params[0] != poolMax && t.Params[0] != poolAvg {
		return false
	}
	k0, k1, s0, s1, p0, p1 := poolWindow(t)
	if !windowParams(1, k0, k1, s0, s1) || !windowParams(0, p0, p1) {
		return false
	}
	// the CPU backend walks 2-D planes (1-D rows) one after another from the first
	es := uint64(a.TypeSize())
	if a.Nb[0] != es || a.Nb[3] != a.Nb[2]*uint64(a.Ne[2]) || (t.Op == tensor.OpPool1d && a.Nb[2] != a.Nb[1]*uint64(a.Ne[1])) {
		return false
	}
	// ggml_calc_pool_output_size is the convolution's without dilation
	oh := a.Ne[1]
	if t.Op == tensor.OpPool2d {
		oh = convOut(a.Ne[1], k1, s1, p1, 1)
	}
	return t.Ne == [4]int64{convOut(a.Ne[0], k0, s0, p0, 1), oh, a.Ne[2], a.Ne[3]} && t.Ne[0] > 0 && t.Ne[1] > 0
}

func lowerPool(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a := t.Src[0]
	k0, k1, s0, s1, p0, p1 := poolWindow(t)
	p := poolParams{Ne: dims(t), A: strides(a), D: strides(t), N: uint32(t.Elems()),
		IW: uint32(a.Ne[0]), IH: uint32(a.Ne[1]),
		K0: uint32(k0), K1: uint32(k1), S0: uint32(s0), S1: uint32(s1), P0: int32(p0), P1: int32(p1)}
	if t.Params[0] == poolAvg {
		p.Avg = 1
	}
	if t.Op == tensor.OpPool1d {
		p.InsideOnly = 1 // a window of one row: k1 = s1 = 1, p1 = 0 keep it on dst's row
	}
	s := spec("pool", wgElementwise, p, nil, in("src0", a), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
