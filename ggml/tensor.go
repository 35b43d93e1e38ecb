package ggml

import (
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// Type is a tensor element type (enum ggml_type).
type Type = tensor.Type

// The element types most programs use; every ggml type of package tensor works where an
// op accepts it.
const (
	F32  = tensor.F32
	F16  = tensor.F16
	I32  = tensor.I32
	Q8_0 = tensor.Q8_0
	Q4_0 = tensor.Q4_0
)

const maxSrc = tensor.MaxSrc

// Tensor is a ggml tensor of a Context: an input made by NewTensor or the result of an op.
type Tensor struct {
	ctx *Context
	ptr uintptr
}

// at converts a C address into an unsafe.Pointer without tripping go vet's uintptr check.
func at(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

func (t *Tensor) check() error {
	if t == nil || t.ctx == nil || t.ptr == 0 {
		return fmt.Errorf("%w: tensor", ErrNil)
	}
	return t.ctx.check()
}

// NewTensor creates a tensor of the type with the given dimensions (ggml order: ne[0], the
// row length, first; one to four, each at least 0). Quantized types need rows of whole
// blocks.
func (c *Context) NewTensor(typ Type, ne ...int64) (*Tensor, error) {
	if err := c.newTensorRoom(); err != nil {
		return nil, err
	}
	if len(ne) < 1 || len(ne) > 4 {
		return nil, fmt.Errorf("%w: %d dimensions (1..4)", ErrShape, len(ne))
	}
	blk, ok := typ.Block()
	if !ok {
		return nil, fmt.Errorf("%w: type %d", ErrType, int32(typ))
	}
	var dims [4]int64
	total := uint64(1)
	for i, n := range ne {
		if n < 0 {
			return nil, fmt.Errorf("%w: negative dimension %v", ErrShape, ne)
		}
		dims[i] = n
		if n > 0 && total > math.MaxInt64/uint64(n) {
			return nil, fmt.Errorf("%w: %v elements overflow", ErrShape, ne)
		}
		total *= uint64(n)
	}
	if dims[0]%int64(blk.Elems) != 0 {
		return nil, fmt.Errorf("%w: rows of %s hold whole blocks of %d, not %d elements", ErrShape, typ, blk.Elems, dims[0])
	}
	if total/uint64(blk.Elems) > math.MaxInt64/uint64(blk.Bytes) {
		return nil, fmt.Errorf("%w: %v of %s overflow", ErrShape, ne, typ)
	}
	p := c.lib.fn.newTensor(c.ptr, int32(typ), int32(len(ne)), unsafe.Pointer(&dims[0]))
	if p == 0 {
		return nil, fmt.Errorf("%w: ggml_new_tensor failed", ErrContext)
	}
	return c.result(p), nil
}

// Type returns the element type.
func (t *Tensor) Type() Type {
	if t.check() != nil {
		return 0
	}
	return Type(*(*int32)(at(t.ptr + tensor.OffsetType)))
}

// Shape returns the elements of each of the four dimensions (ne).
func (t *Tensor) Shape() [4]int64 {
	if t.check() != nil {
		return [4]int64{}
	}
	return *(*[4]int64)(at(t.ptr + tensor.OffsetNe))
}

// Strides returns the bytes between neighbours of each dimension (nb).
func (t *Tensor) Strides() [4]uint64 {
	if t.check() != nil {
		return [4]uint64{}
	}
	return *(*[4]uint64)(at(t.ptr + tensor.OffsetNb))
}

// Elements returns the number of elements.
func (t *Tensor) Elements() int64 {
	ne := t.Shape()
	return ne[0] * ne[1] * ne[2] * ne[3]
}

// Bytes returns the bytes the tensor's data spans (ggml_nbytes).
func (t *Tensor) Bytes() uint64 {
	if t.check() != nil {
		return 0
	}
	return uint64(t.ctx.lib.fn.nbytes(t.ptr))
}

// Name returns the tensor's name.
func (t *Tensor) Name() string {
	if t.check() != nil {
		return ""
	}
	b := (*[tensor.MaxName]byte)(at(t.ptr + tensor.OffsetName))
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b[:])
}

// SetName names the tensor (at most 63 bytes, no NUL) and returns it, for chaining.
func (t *Tensor) SetName(name string) (*Tensor, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if len(name) >= tensor.MaxName || strings.ContainsRune(name, 0) {
		return nil, fmt.Errorf("%w: tensor name %q (at most %d bytes, no NUL)", ErrShape, name, tensor.MaxName-1)
	}
	t.ctx.lib.fn.setName(t.ptr, name)
	return t, nil
}

// Contiguous reports whether the elements are packed densely in row-major order.
func (t *Tensor) Contiguous() bool {
	if t.check() != nil {
		return false
	}
	ne, nb, typ := t.Shape(), t.Strides(), t.Type()
	next := uint64(typ.Size())
	for i := 0; i < 4; i++ {
		if ne[i] != 1 && nb[i] != next {
			return false
		}
		n := uint64(ne[i])
		if i == 0 {
			n /= uint64(max(1, typ.BlockElems()))
		}
		next *= n
	}
	return true
}

// transposed reports ggml_is_transposed: the first dimension is not the fastest.
func (t *Tensor) transposed() bool {
	nb := t.Strides()
	return nb[0] > nb[1]
}

func (t *Tensor) src(i int) Tensor {
	return Tensor{ctx: t.ctx, ptr: *(*uintptr)(at(t.ptr + tensor.OffsetSrc + uintptr(8*i)))}
}

// allocated checks that the tensor has memory in a buffer.
func (t *Tensor) allocated() error {
	if *(*uintptr)(at(t.ptr + tensor.OffsetBuffer)) == 0 || *(*uintptr)(at(t.ptr + tensor.OffsetData)) == 0 {
		if t.Elements() == 0 {
			return nil
		}
		return fmt.Errorf("%w: tensor %q has no memory (call Context.Allocate after creating every tensor)", ErrAlloc, t.Name())
	}
	return nil
}

// transferable checks what ggml_backend_tensor_set and _get assert: memory, a dense
// layout and a length of exactly the tensor's bytes.
func (t *Tensor) transferable(bytes uint64) error {
	if err := t.check(); err != nil {
		return err
	}
	if err := t.allocated(); err != nil {
		return err
	}
	if !t.Contiguous() {
		return fmt.Errorf("%w: tensor %q is not contiguous (copy it with Cont first)", ErrShape, t.Name())
	}
	if bytes != t.Bytes() {
		return fmt.Errorf("%w: %d bytes for tensor %q of %d", ErrShape, bytes, t.Name(), t.Bytes())
	}
	return nil
}

// SetBytes copies raw data (the tensor's own storage format) into the tensor.
func (t *Tensor) SetBytes(data []byte) error {
	if err := t.transferable(uint64(len(data))); err != nil {
		return err
	}
	if len(data) > 0 {
		t.ctx.lib.fn.tensorSet(t.ptr, unsafe.Pointer(&data[0]), 0, uintptr(len(data)))
	}
	return nil
}

// ReadBytes returns a copy of the tensor's raw data.
func (t *Tensor) ReadBytes() ([]byte, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	data := make([]byte, t.Bytes())
	if err := t.transferable(uint64(len(data))); err != nil {
		return nil, err
	}
	if len(data) > 0 {
		t.ctx.lib.fn.tensorGet(t.ptr, unsafe.Pointer(&data[0]), 0, uintptr(len(data)))
	}
	return data, nil
}

// SetFloat32 sets the elements of an F32 tensor, or of an F16 one (rounded by ggml);
// len(v) must be the element count.
func (t *Tensor) SetFloat32(v []float32) error {
	if err := t.check(); err != nil {
		return err
	}
	if int64(len(v)) != t.Elements() {
		return fmt.Errorf("%w: %d values for tensor %q of %d elements", ErrShape, len(v), t.Name(), t.Elements())
	}
	switch t.Type() {
	case F32:
		return t.SetBytes(float32Bytes(v))
	case F16:
		h := make([]uint16, len(v))
		if len(v) > 0 {
			t.ctx.lib.fn.fp32ToFP16(unsafe.Pointer(&v[0]), unsafe.Pointer(&h[0]), int64(len(v)))
		}
		return t.SetBytes(uint16Bytes(h))
	}
	return fmt.Errorf("%w: SetFloat32 on a %s tensor (F32 or F16)", ErrType, t.Type())
}

// Float32 returns the elements of an F32 or F16 tensor as float32.
func (t *Tensor) Float32() ([]float32, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	typ := t.Type()
	if typ != F32 && typ != F16 {
		return nil, fmt.Errorf("%w: Float32 of a %s tensor (F32 or F16)", ErrType, typ)
	}
	raw, err := t.ReadBytes()
	if err != nil {
		return nil, err
	}
	out := make([]float32, t.Elements())
	if len(out) == 0 {
		return out, nil
	}
	if typ == F32 {
		copy(float32Bytes(out), raw)
		return out, nil
	}
	t.ctx.lib.fn.fp16ToFP32(unsafe.Pointer(&raw[0]), unsafe.Pointer(&out[0]), int64(len(out)))
	return out, nil
}

// SetInt32 sets the elements of an I32 tensor (row indices, positions).
func (t *Tensor) SetInt32(v []int32) error {
	if err := t.check(); err != nil {
		return err
	}
	if t.Type() != I32 {
		return fmt.Errorf("%w: SetInt32 on a %s tensor", ErrType, t.Type())
	}
	if int64(len(v)) != t.Elements() {
		return fmt.Errorf("%w: %d values for tensor %q of %d elements", ErrShape, len(v), t.Name(), t.Elements())
	}
	if len(v) == 0 {
		return t.SetBytes(nil)
	}
	return t.SetBytes(unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)))
}

func float32Bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

func uint16Bytes(v []uint16) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 2*len(v))
}
