package ggml

import (
	"fmt"
	"math"
	"slices"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// Each op checks in Go what ggml asserts (an assertion failure aborts the process) and the
// types this package lets through to the devices, then creates the op's result tensor.

// operands checks that every tensor is a live tensor of c, that one more tensor fits and
// that each has one of the types allowed for its position.
func (c *Context) operands(op string, ts []*Tensor, types [][]Type) error {
	if err := c.newTensorRoom(); err != nil {
		return err
	}
	for i, t := range ts {
		if err := c.owns(t); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if !slices.Contains(types[i], t.Type()) {
			return fmt.Errorf("%w: %s operand %d is %s (takes %v)", ErrType, op, i, t.Type(), types[i])
		}
	}
	return nil
}

// result wraps the tensor an op created.
func (c *Context) result(p uintptr) *Tensor {
	c.tensors++
	return &Tensor{ctx: c, ptr: p}
}

var (
	f32Only    = []Type{F32}
	floatTypes = []Type{F32, F16}
	weightType = []Type{F32, F16, Q8_0, Q4_0}
)

// canRepeat is ggml_can_repeat(b, a): b's shape divides a's in every dimension.
func canRepeat(b, a [4]int64) bool {
	empty := func(ne [4]int64) bool { return ne[0]*ne[1]*ne[2]*ne[3] == 0 }
	if empty(b) {
		return empty(a)
	}
	for i := range 4 {
		if a[i]%b[i] != 0 {
			return false
		}
	}
	return true
}

func (c *Context) binary(op string, fn func(uintptr, uintptr, uintptr) uintptr, a, b *Tensor) (*Tensor, error) {
	if err := c.operands(op, []*Tensor{a, b}, [][]Type{f32Only, f32Only}); err != nil {
		return nil, err
	}
	if !canRepeat(b.Shape(), a.Shape()) {
		return nil, fmt.Errorf("%w: %s of %v and %v (b must repeat into a)", ErrShape, op, a.Shape(), b.Shape())
	}
	return c.result(fn(c.ptr, a.ptr, b.ptr)), nil
}

// Add returns a+b element-wise, b repeated over a's shape (F32).
func (c *Context) Add(a, b *Tensor) (*Tensor, error) { return c.binary("Add", c.fn().add, a, b) }

// Sub returns a-b element-wise, b repeated over a's shape (F32).
func (c *Context) Sub(a, b *Tensor) (*Tensor, error) { return c.binary("Sub", c.fn().sub, a, b) }

// Mul returns a*b element-wise, b repeated over a's shape (F32).
func (c *Context) Mul(a, b *Tensor) (*Tensor, error) { return c.binary("Mul", c.fn().mul, a, b) }

// Div returns a/b element-wise, b repeated over a's shape (F32).
func (c *Context) Div(a, b *Tensor) (*Tensor, error) { return c.binary("Div", c.fn().div, a, b) }

func (c *Context) fn() *functions {
	if c == nil || c.lib == nil {
		return &functions{}
	}
	return &c.lib.fn
}

// Scale returns a*s (F32, contiguous).
func (c *Context) Scale(a *Tensor, s float32) (*Tensor, error) {
	if err := c.operands("Scale", []*Tensor{a}, [][]Type{f32Only}); err != nil {
		return nil, err
	}
	if !a.Contiguous() {
		return nil, fmt.Errorf("%w: Scale of a non-contiguous tensor", ErrShape)
	}
	return c.result(c.lib.fn.scale(c.ptr, a.ptr, s)), nil
}

// MulMat returns the matrix product as ggml defines it: for a [k, m] (weights: F32, F16,
// Q8_0 or Q4_0) and b [k, n] (F32), the result is [m, n], each element the dot product of a
// row of a and a row of b; a is broadcast over b's dimensions 2 and 3.
func (c *Context) MulMat(a, b *Tensor) (*Tensor, error) {
	if err := c.operands("MulMat", []*Tensor{a, b}, [][]Type{weightType, f32Only}); err != nil {
		return nil, err
	}
	na, nb := a.Shape(), b.Shape()
	if na[0] != nb[0] || na[2] == 0 || na[3] == 0 || nb[2]%na[2] != 0 || nb[3]%na[3] != 0 {
		return nil, fmt.Errorf("%w: MulMat of %v and %v (same row length; a's dims 2, 3 divide b's)", ErrShape, na, nb)
	}
	if a.transposed() {
		return nil, fmt.Errorf("%w: MulMat with a transposed a (make it contiguous with Cont)", ErrShape)
	}
	return c.result(c.lib.fn.mulMat(c.ptr, a.ptr, b.ptr)), nil
}

func (c *Context) normalize(op string, fn func(uintptr, uintptr, float32) uintptr, a *Tensor, eps float32) (*Tensor, error) {
	if err := c.operands(op, []*Tensor{a}, [][]Type{f32Only}); err != nil {
		return nil, err
	}
	if !(eps >= 0) || math.IsInf(float64(eps), 0) {
		return nil, fmt.Errorf("%w: %s eps %v", ErrShape, op, eps)
	}
	if a.Strides()[0] != 4 {
		return nil, fmt.Errorf("%w: %s of rows that are not dense", ErrShape, op)
	}
	return c.result(fn(c.ptr, a.ptr, eps)), nil
}

// RMSNorm divides each row of a by its root mean square (plus eps) (F32).
func (c *Context) RMSNorm(a *Tensor, eps float32) (*Tensor, error) {
	return c.normalize("RMSNorm", c.fn().rmsNorm, a, eps)
}

// Norm normalizes each row of a to zero mean and unit variance (F32).
func (c *Context) Norm(a *Tensor, eps float32) (*Tensor, error) {
	return c.normalize("Norm", c.fn().norm, a, eps)
}

// SoftMax returns the softmax of each row of a (F32, contiguous).
func (c *Context) SoftMax(a *Tensor) (*Tensor, error) {
	if err := c.operands("SoftMax", []*Tensor{a}, [][]Type{f32Only}); err != nil {
		return nil, err
	}
	if !a.Contiguous() {
		return nil, fmt.Errorf("%w: SoftMax of a non-contiguous tensor", ErrShape)
	}
	return c.result(c.lib.fn.softMax(c.ptr, a.ptr)), nil
}

// SoftMaxMasked returns softmax(a*scale + mask) per row, as attention does: mask (F32 or
// F16, contiguous) has a's row length, at least a's rows, and dims 2 and 3 that divide
// a's; -Inf in the mask excludes an element.
func (c *Context) SoftMaxMasked(a, mask *Tensor, scale float32) (*Tensor, error) {
	if err := c.operands("SoftMaxMasked", []*Tensor{a, mask}, [][]Type{f32Only, floatTypes}); err != nil {
		return nil, err
	}
	na, nm := a.Shape(), mask.Shape()
	if !a.Contiguous() || !mask.Contiguous() {
		return nil, fmt.Errorf("%w: SoftMaxMasked of non-contiguous tensors", ErrShape)
	}
	if nm[0] != na[0] || nm[1] < na[1] || nm[2] == 0 || nm[3] == 0 || na[2]%nm[2] != 0 || na[3]%nm[3] != 0 {
		return nil, fmt.Errorf("%w: SoftMaxMasked of %v with mask %v", ErrShape, na, nm)
	}
	return c.result(c.lib.fn.softMaxExt(c.ptr, a.ptr, mask.ptr, scale, 0)), nil
}

// RopeMode is how RoPE pairs the elements of a row.
type RopeMode int32

// RoPE modes.
const (
	RopeNormal RopeMode = tensor.RopeNormal // adjacent pairs (LLaMA)
	RopeNeox   RopeMode = tensor.RopeNeox   // pairs half the rotated dims apart (GPT-NeoX)
)

// RopeParams are the parameters of Rope.
type RopeParams struct {
	// NDims is how many leading elements of each row are rotated (even, at most ne[0]).
	NDims int
	// Mode pairs the elements (RopeNormal or RopeNeox).
	Mode RopeMode
	// FreqBase is the base of the rotation frequencies (0 means 10000).
	FreqBase float32
	// FreqScale scales the positions (0 means 1).
	FreqScale float32
}

// Rope applies rotary position embedding to a [head dim, heads, tokens, 1] (F32 or F16):
// pos is an I32 vector of one position per token.
func (c *Context) Rope(a, pos *Tensor, p RopeParams) (*Tensor, error) {
	if err := c.operands("Rope", []*Tensor{a, pos}, [][]Type{floatTypes, {I32}}); err != nil {
		return nil, err
	}
	na, np := a.Shape(), pos.Shape()
	if np[1] != 1 || np[2] != 1 || np[3] != 1 || np[0] != na[2] {
		return nil, fmt.Errorf("%w: Rope of %v needs %d positions, got %v", ErrShape, na, na[2], np)
	}
	if p.NDims <= 0 || p.NDims%2 != 0 || int64(p.NDims) > na[0] {
		return nil, fmt.Errorf("%w: Rope of %d dims of rows of %d", ErrShape, p.NDims, na[0])
	}
	if p.Mode != RopeNormal && p.Mode != RopeNeox {
		return nil, fmt.Errorf("%w: RoPE mode %d", ErrType, p.Mode)
	}
	if a.Strides()[0] != uint64(a.Type().Size()) {
		return nil, fmt.Errorf("%w: Rope of rows that are not dense", ErrShape)
	}
	base, scale := p.FreqBase, p.FreqScale
	if base == 0 {
		base = 10000
	}
	if scale == 0 {
		scale = 1
	}
	if !(base > 0) || !(scale > 0) {
		return nil, fmt.Errorf("%w: Rope frequency base %v, scale %v", ErrShape, base, scale)
	}
	return c.result(c.lib.fn.ropeExt(c.ptr, a.ptr, pos.ptr, 0, int32(p.NDims), int32(p.Mode), 0,
		base, scale, 0, 1, 32, 1)), nil
}

// GetRows gathers rows of a (F32, F16, Q8_0 or Q4_0; an embedding table) named by rows, an
// I32 tensor made by NewTensor: for a [n, r, b2, b3] and rows [k, b2, b3], the result is
// [n, k, b2, b3] in F32. Compute checks that every index is in 0..r-1.
func (c *Context) GetRows(a, rows *Tensor) (*Tensor, error) {
	if err := c.operands("GetRows", []*Tensor{a, rows}, [][]Type{weightType, {I32}}); err != nil {
		return nil, err
	}
	na, nr := a.Shape(), rows.Shape()
	if nr[1] != na[2] || nr[2] != na[3] || nr[3] != 1 {
		return nil, fmt.Errorf("%w: GetRows of %v with indices %v", ErrShape, na, nr)
	}
	if rows.op() != tensor.OpNone || !rows.Contiguous() {
		return nil, fmt.Errorf("%w: GetRows indices must be a tensor made by NewTensor", ErrShape)
	}
	return c.result(c.lib.fn.getRows(c.ptr, a.ptr, rows.ptr)), nil
}

func (c *Context) unary(op string, fn func(uintptr, uintptr) uintptr, a *Tensor) (*Tensor, error) {
	if err := c.operands(op, []*Tensor{a}, [][]Type{f32Only}); err != nil {
		return nil, err
	}
	if !a.Contiguous() {
		return nil, fmt.Errorf("%w: %s of a non-contiguous tensor", ErrShape, op)
	}
	return c.result(fn(c.ptr, a.ptr)), nil
}

// SiLU applies x*sigmoid(x) element-wise (F32, contiguous).
func (c *Context) SiLU(a *Tensor) (*Tensor, error) { return c.unary("SiLU", c.fn().silu, a) }

// GELU applies the tanh approximation of GELU element-wise (F32, contiguous).
func (c *Context) GELU(a *Tensor) (*Tensor, error) { return c.unary("GELU", c.fn().gelu, a) }

// Cont copies a (F32, F16 or I32; a view, transposed or permuted) into a contiguous tensor.
func (c *Context) Cont(a *Tensor) (*Tensor, error) {
	if err := c.operands("Cont", []*Tensor{a}, [][]Type{{F32, F16, I32}}); err != nil {
		return nil, err
	}
	return c.result(c.lib.fn.cont(c.ptr, a.ptr)), nil
}

// Transpose swaps dimensions 0 and 1 of a, as a view (no copy).
func (c *Context) Transpose(a *Tensor) (*Tensor, error) {
	if err := c.operands("Transpose", []*Tensor{a}, [][]Type{{F32, F16, I32}}); err != nil {
		return nil, err
	}
	return c.result(c.lib.fn.transpose(c.ptr, a.ptr)), nil
}

// Permute moves dimension i of a to position axes[i], as a view (no copy); axes is a
// permutation of 0..3.
func (c *Context) Permute(a *Tensor, axes [4]int) (*Tensor, error) {
	if err := c.operands("Permute", []*Tensor{a}, [][]Type{{F32, F16, I32}}); err != nil {
		return nil, err
	}
	seen := [4]bool{}
	for _, x := range axes {
		if x < 0 || x > 3 || seen[x] {
			return nil, fmt.Errorf("%w: Permute axes %v", ErrShape, axes)
		}
		seen[x] = true
	}
	return c.result(c.lib.fn.permute(c.ptr, a.ptr, int32(axes[0]), int32(axes[1]), int32(axes[2]), int32(axes[3]))), nil
}

// Reshape views the contiguous tensor a with new dimensions (1..4, the same element count).
func (c *Context) Reshape(a *Tensor, ne ...int64) (*Tensor, error) {
	if err := c.operands("Reshape", []*Tensor{a}, [][]Type{{F32, F16, I32}}); err != nil {
		return nil, err
	}
	if len(ne) < 1 || len(ne) > 4 {
		return nil, fmt.Errorf("%w: %d dimensions (1..4)", ErrShape, len(ne))
	}
	dims := [4]int64{1, 1, 1, 1}
	n := int64(1)
	for i, x := range ne {
		if x < 0 {
			return nil, fmt.Errorf("%w: Reshape to %v", ErrShape, ne)
		}
		dims[i] = x
		n *= x
	}
	if !a.Contiguous() || n != a.Elements() {
		return nil, fmt.Errorf("%w: Reshape of %v (contiguous: %v) to %v", ErrShape, a.Shape(), a.Contiguous(), ne)
	}
	return c.result(c.lib.fn.reshape4d(c.ptr, a.ptr, dims[0], dims[1], dims[2], dims[3])), nil
}

func (t *Tensor) op() tensor.Op { return tensor.Op(*(*int32)(at(t.ptr + tensor.OffsetOp))) }
