package ops

import (
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// Copies into and out of block-quantized types (the KV cache's types), for CPY (also
// CONT and DUP, which share its lowering but never change the type) and SET_ROWS:
//   - F32 or F16 into Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 or IQ4_NL: one invocation per block of
//     32 elements quantizes them with the format's routine (wgsl's quantWriters), rounding
//     as ggml's CPU backend does;
//   - a readable quantized type into F32 or F16 (CPY): one invocation per eight elements,
//     dequantized by the format's routine (NAME_get8).
// The quantized side has rows of whole blocks (quantWriteRows, quantRows), any strides in
// blocks over dims 1..3; the float side any element strides.

func init() {
	describeFamily("CPY (quantized)", "F32, F16 to Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL; Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 to F32, F16",
		"rows of whole blocks on the quantized side, any strides over dims 1..3; the float side any strides")
	describeFamily("SET_ROWS (quantized)", "F32, F16 to Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL; I32, I64 indices",
		"rows of whole blocks; indices broadcast over dims 2, 3; rounding as ggml's CPU quantizers")
}

// writeFormat returns the writable block format of a type (see wgsl.WritableFormat).
func writeFormat(t tensor.Type) (wgsl.Format, bool) {
	if !t.Quantized() {
		return 0, false
	}
	return wgsl.WritableFormat(t.String())
}

// quantWriteRows reports whether a tensor of a writable block format can be written a
// block at a time: blocks of 32 elements of the format's size, rows of whole blocks,
// strides of whole blocks.
func quantWriteRows(t *tensor.Tensor) bool {
	f, ok := writeFormat(t.Type)
	if !ok || t.Type.BlockElems() != 32 || int(t.TypeSize()) != f.WriteBlockBytes() {
		return false
	}
	return t.Ne[0]%32 == 0 && t.Nb[0] == t.TypeSize() && elementAligned(t)
}

// blockStrides returns a block-format tensor's strides in elements of whole blocks (as
// strides does for the formats kernels read): element i is element i % 32 of block i / 32.
func blockStrides(t *tensor.Tensor) [4]uint32 {
	es, be := t.TypeSize(), uint64(t.Type.BlockElems())
	return [4]uint32{1, uint32(t.Nb[1] / es * be), uint32(t.Nb[2] / es * be), uint32(t.Nb[3] / es * be)}
}

// outBlocks is the written operand of a block format.
func outBlocks(name string, t *tensor.Tensor) wgsl.Operand {
	f, _ := writeFormat(t.Type)
	return wgsl.Operand{Name: name, Type: f, Written: true}
}

// quantCopy reports whether a copy node converts to or from a quantized type (the float
// copies of cpy.go handle the others).
func quantCopy(t *tensor.Tensor) bool {
	return t.Src[0] != nil && (t.Type.Quantized() || t.Src[0].Type.Quantized())
}

// supportsQuantCopy: CPY from F32 or F16 into a writable block format, or from a
// readable quantized type of blocks of 32 into F32 or F16, same element count, the
// quantized side of rows of whole blocks. The shapes may differ: the float side is read
// or written element by element at its own coordinates.
func supportsQuantCopy(t *tensor.Tensor) bool {
	a := t.Src[0]
	if t.Op != tensor.OpCpy || a.Elems() != t.Elems() || !elementAligned(a) || !elementAligned(t) {
		return false
	}
	switch {
	case isFloat(a.Type) && t.Type.Quantized():
		return quantWriteRows(t)
	case quantized(a.Type) && isFloat(t.Type):
		// back from the KV cache's types (those with a quantizer)
		_, kv := writeFormat(a.Type)
		return kv && quantRows(a) && a.Type.BlockElems() == 32
	}
	return false
}

func lowerQuantCopy(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a := t.Src[0]
	p := cpyParams{Ae: dims(a), De: dims(t)}
	var s *wgsl.Spec
	if t.Type.Quantized() {
		// one invocation per block of the destination
		p.A, p.D, p.N = strides(a), blockStrides(t), uint32(t.Elems()/32)
		s = spec("cpy_quant", wgElementwise, p, map[string]string{"QUANT_DST": "1"}, in("src0", a), outBlocks("dst", t))
	} else {
		// one invocation per eight elements of the source
		p.A, p.D, p.N = strides(a), strides(t), uint32(a.Elems()/8)
		src0 := in("src0", a)
		src0.Vec = true
		s = spec("cpy_quant", wgElementwise, p, map[string]string{"QUANT_DST": "0"}, src0, out("dst", t))
	}
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, t}, Params: p, Grid: gridElems(int64(p.N), l)}}, nil
}

// quantCopyExamples are CPY nodes into and out of each block format kernels write or read.
func quantCopyExamples() []*tensor.Tensor {
	var ex []*tensor.Tensor
	for _, q := range tensor.Types() {
		if _, ok := writeFormat(q); ok {
			ex = append(ex,
				node(tensor.OpCpy, contiguous(q, 64, 3), nil, f32(64, 3), contiguous(q, 64, 3)),
				node(tensor.OpCpy, contiguous(q, 32, 6), nil, contiguous(tensor.F16, 32, 6), contiguous(q, 32, 6)))
		}
		if _, ok := writeFormat(q); ok && quantized(q) {
			ex = append(ex,
				node(tensor.OpCpy, f32(64, 3), nil, contiguous(q, 64, 3), f32(64, 3)),
				node(tensor.OpCpy, contiguous(tensor.F16, 64, 3), nil, contiguous(q, 64, 3), contiguous(tensor.F16, 64, 3)))
		}
	}
	return ex
}

func lowerQuantSetRows(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a, b := t.Src[0], t.Src[1]
	// one invocation per block of 32 elements of src0
	p := setRowsParams{Ne: dims(a), A: strides(a), Be: dims(b), B: strides(b), D: blockStrides(t), N: uint32(a.Elems() / 32), Rows: uint32(t.Ne[1])}
	s := spec("set_rows_quant", wgElementwise, p, nil, in("src0", a), in("src1", b), outBlocks("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, b, t}, Params: p, Grid: gridElems(int64(p.N), l)}}, nil
}

// quantSetRowsExamples are SET_ROWS nodes into each writable block format.
func quantSetRowsExamples() []*tensor.Tensor {
	var ex []*tensor.Tensor
	for _, q := range tensor.Types() {
		if _, ok := writeFormat(q); ok {
			ex = append(ex, node(tensor.OpSetRows, contiguous(q, 64, 6), nil, f32(64, 3), contiguous(tensor.I64, 3)))
		}
	}
	return append(ex, node(tensor.OpSetRows, contiguous(tensor.Q8_0, 32, 6), nil, contiguous(tensor.F16, 32, 3), contiguous(tensor.I32, 3)))
}
