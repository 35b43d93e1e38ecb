// Package tensor is the model of a ggml graph shared by every layer: the Go view of a
// ggml_tensor (type, shape, strides, op, op params, sources, where its data lives), ggml's
// op and type enums (enums.go, generated from the pinned ggml headers), element and block
// sizes (types.go, checked against the real libggml-base by include/abi) and the byte
// layout of struct ggml_tensor (layout.go, likewise checked). It imports nothing.
package tensor

import "math"

//go:generate go run ./internal/genenums -header ../.cache/ggml/include/ggml.h -out enums.go

// Loc says where a tensor's data lives: a buffer of this backend and the data address
// inside that buffer's address range. A zero Buffer means the data is not in one of our
// buffers (or the tensor is unallocated).
type Loc struct {
	Buffer uint64
	Addr   uint64
}

// Tensor is the Go view of a ggml_tensor: the fields lowering needs.
type Tensor struct {
	Type   Type
	Ne     [4]int64
	Nb     [4]uint64
	Op     Op
	Params [16]int32
	Flags  Flag
	Src    [10]*Tensor
	Loc    Loc
	Name   string
}

// Elems returns the number of elements.
func (t *Tensor) Elems() int64 { return t.Ne[0] * t.Ne[1] * t.Ne[2] * t.Ne[3] }

// Empty reports whether the tensor has no elements.
func (t *Tensor) Empty() bool { return t.Elems() == 0 }

// IsViewOf reports whether t is m, or a view of m through a chain of view ops (each
// viewing its first source).
func (t *Tensor) IsViewOf(m *Tensor) bool {
	for ; t != nil; t = t.Src[0] {
		if t == m {
			return true
		}
		if !t.Op.IsView() {
			return false
		}
	}
	return false
}

// TypeSize returns the bytes of one element (block) of the tensor's type, 0 if unknown.
func (t *Tensor) TypeSize() uint64 { return uint64(t.Type.Size()) }

// Extent returns the number of bytes from the first to one past the last byte the tensor
// touches, following its strides (ggml_nbytes). A quantized row of ne[0] elements is
// ne[0]/block whole blocks of nb[0] bytes each.
func (t *Tensor) Extent() uint64 {
	if t.Empty() {
		return 0
	}
	var e uint64
	if t.Type.Quantized() {
		e = uint64(t.Ne[0]) / uint64(t.Type.BlockElems()) * t.Nb[0]
	} else {
		e = t.TypeSize() + uint64(t.Ne[0]-1)*t.Nb[0]
	}
	for i := 1; i < 4; i++ {
		e += uint64(t.Ne[i]-1) * t.Nb[i]
	}
	return e
}

// Contiguous reports whether the tensor's elements are densely packed in row-major order
// (ggml_is_contiguous: for a quantized type, rows of whole blocks).
func (t *Tensor) Contiguous() bool {
	next := t.TypeSize()
	for i := 0; i < 4; i++ {
		if t.Ne[i] != 1 && t.Nb[i] != next {
			return false
		}
		if i == 0 {
			next = next * uint64(t.Ne[0]) / uint64(max(t.Type.BlockElems(), 1))
			continue
		}
		next *= uint64(t.Ne[i])
	}
	return true
}

// SameShape reports whether a and b have the same ne.
func SameShape(a, b *Tensor) bool { return a.Ne == b.Ne }

// ParamF32 reads op_params[i] as a float32.
func (t *Tensor) ParamF32(i int) float32 { return math.Float32frombits(uint32(t.Params[i])) }

// IsView reports whether the op only reinterprets its source (no computation).
func (o Op) IsView() bool {
	switch o {
	case OpNone, OpReshape, OpView, OpPermute, OpTranspose:
		return true
	}
	return false
}

// UnaryOp returns which unary function an OpUnary node applies (op_params[0]).
func (t *Tensor) UnaryOp() UnaryOp { return UnaryOp(t.Params[0]) }

// GLUOp returns which gated linear unit an OpGLU node applies (op_params[0]).
func (t *Tensor) GLUOp() GLUOp { return GLUOp(t.Params[0]) }
