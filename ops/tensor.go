// Package ops lowers ggml graph nodes into WGSL dispatches: for each op family one file
// with supports (what the kernels handle exactly) and lower (dispatches: pipeline spec,
// operand tensors, parameters, grid). It knows nothing of submission or GPU objects.
package ops

// Type is a ggml tensor type (enum ggml_type, ggml 0.25.1).
type Type int32

// Tensor types used by the kernels.
const (
	F32 Type = 0
	F16 Type = 1
	I32 Type = 26
	I64 Type = 27
)

// Op is a ggml operation (enum ggml_op, ggml 0.25.1).
type Op int32

// Operations (values from ggml 0.25.1).
const (
	OpNone      Op = 0
	OpDup       Op = 1
	OpAdd       Op = 2
	OpSub       Op = 6
	OpMul       Op = 7
	OpDiv       Op = 8
	OpNorm      Op = 24
	OpRMSNorm   Op = 25
	OpMulMat    Op = 29
	OpScale     Op = 32
	OpCpy       Op = 34
	OpCont      Op = 35
	OpReshape   Op = 36
	OpView      Op = 37
	OpPermute   Op = 38
	OpTranspose Op = 39
	OpGetRows   Op = 40
	OpSetRows   Op = 42
	OpSoftMax   Op = 46
	OpRope      Op = 48
	OpUnary     Op = 91
	OpGLU       Op = 100
)

// Unary ops (op_params[0] of OpUnary).
const (
	UnaryGELU = 8
	UnarySILU = 10
)

// GLU ops (op_params[0] of OpGLU).
const (
	GLUSwiGLU = 2
)

// Tensor flags.
const (
	FlagInput   = 1
	FlagOutput  = 2
	FlagCompute = 16
)

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
	Flags  int32
	Src    [10]*Tensor
	Loc    Loc
	Name   string
}

// Elems returns the number of elements.
func (t *Tensor) Elems() int64 { return t.Ne[0] * t.Ne[1] * t.Ne[2] * t.Ne[3] }

// Empty reports whether the tensor has no elements.
func (t *Tensor) Empty() bool { return t.Elems() == 0 }

// TypeSize returns the bytes of one element (block) of the tensor's type, 0 if unknown.
func (t *Tensor) TypeSize() uint64 {
	switch t.Type {
	case F32, I32:
		return 4
	case F16:
		return 2
	case I64:
		return 8
	}
	return 0
}

// Extent returns the number of bytes from the first to one past the last byte the tensor
// touches, following its strides.
func (t *Tensor) Extent() uint64 {
	if t.Empty() {
		return 0
	}
	e := t.TypeSize()
	for i := 0; i < 4; i++ {
		e += uint64(t.Ne[i]-1) * t.Nb[i]
	}
	return e
}

// Contiguous reports whether the tensor's elements are densely packed in row-major order.
func (t *Tensor) Contiguous() bool {
	next := t.TypeSize()
	for i := 0; i < 4; i++ {
		if t.Ne[i] != 1 && t.Nb[i] != next {
			return false
		}
		next *= uint64(t.Ne[i])
	}
	return true
}

// SameShape reports whether a and b have the same ne.
func SameShape(a, b *Tensor) bool { return a.Ne == b.Ne }

// ParamF32 reads op_params[i] as a float32.
func (t *Tensor) ParamF32(i int) float32 { return f32frombits(uint32(t.Params[i])) }

// IsView reports whether the op only reinterprets its source (no computation).
func (o Op) IsView() bool {
	switch o {
	case OpNone, OpReshape, OpView, OpPermute, OpTranspose:
		return true
	}
	return false
}
