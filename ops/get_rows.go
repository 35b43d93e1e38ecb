package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// GET_ROWS: dst[:, i1, i2, i3] = src0[:, rows[i1, i2, i3], i2, i3]; src0 F32, F16, BF16 or
// quantized (rows of whole blocks, see quantRows; dequantized eight elements at a time),
// rows I32, dst F32.

type getRowsParams struct {
	Ne, A, B, D [4]uint32 // dst shape; src0, rows (dims 0..2), dst strides
	N           uint32
	Rows        uint32 // src0's rows: an index outside [0, Rows) reads zeros
}

func init() {
	describeFamily("GET_ROWS", "F32, F16, BF16, I32 and every quantized format ("+quantNames()+") rows; I32 indices", "batched over dims 2, 3; F32 result (I32 rows: I32)")
	register(tensor.OpGetRows, family{supports: supportsGetRows, lower: lowerGetRows, examples: func() []*tensor.Tensor {
		ex := []*tensor.Tensor{
			node(tensor.OpGetRows, f32(4, 3), nil, contiguous(tensor.F16, 4, 5), contiguous(tensor.I32, 3)),
			node(tensor.OpGetRows, f32(4, 3), nil, f32(4, 5), contiguous(tensor.I32, 3)),
			node(tensor.OpGetRows, f32(4, 3), nil, contiguous(tensor.BF16, 4, 5), contiguous(tensor.I32, 3)),
			node(tensor.OpGetRows, contiguous(tensor.I32, 4, 3), nil, contiguous(tensor.I32, 4, 5), contiguous(tensor.I32, 3)),
		}
		for _, q := range quantTypes {
			k := int64(max(64, q.BlockElems()))
			ex = append(ex, node(tensor.OpGetRows, f32(k, 3), nil, contiguous(q, k, 5), contiguous(tensor.I32, 3)))
		}
		return ex
	}})
}

func supportsGetRows(t *tensor.Tensor, _ *Limits) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || !(isFloatOrBF16(a.Type) || quantized(a.Type) || a.Type == tensor.I32) || b.Type != tensor.I32 {
		return false
	}
	if t.Type != tensor.F32 && (t.Type != tensor.I32 || a.Type != tensor.I32) { // I32 rows give I32
		return false
	}
	if quantized(a.Type) && !quantRows(a) {
		return false
	}
	if t.Ne[0] != a.Ne[0] || t.Ne[1] != b.Ne[0] || t.Ne[2] != b.Ne[1] || t.Ne[3] != b.Ne[2] {
		return false
	}
	return elementAligned(a) && elementAligned(b) && elementAligned(t)
}

func lowerGetRows(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a, b := t.Src[0], t.Src[1]
	p := getRowsParams{Ne: dims(t), A: strides(a), B: strides(b), D: strides(t), N: uint32(t.Elems()), Rows: uint32(a.Ne[1])}
	src0 := in("src0", a)
	defs := map[string]string{"QUANT": "0"}
	if a.Type == tensor.I32 {
		defs["INT"] = "1"
	}
	if quantized(a.Type) {
		// one invocation per eight elements
		p.N /= 8
		src0.Vec, defs["QUANT"] = true, "1"
	}
	s := spec("get_rows", wgElementwise, p, defs, src0, in("src1", b), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, b, t}, Params: p, Grid: gridElems(int64(p.N), l)}}, nil
}
