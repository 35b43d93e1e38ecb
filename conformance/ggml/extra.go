package ggml

import (
	"fmt"
	"sync"

	"github.com/ebitengine/purego"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// This file binds the few ggml functions the robustness tests need beyond the suite's core
// set: placing a tensor at a chosen address of a buffer, the buffer's base address, the
// buffer type's largest buffer, alignment and tensor sizes, memset and clear. They are bound on first use, so a
// missing symbol fails only the test that needs it.

// extraFuncs are the lazily bound functions.
type extraFuncs struct {
	once sync.Once
	err  error

	bufferGetBase func(Buffer) uintptr
	tensorAlloc   func(Buffer, Tensor, uintptr) int32
	tensorMemset  func(Tensor, uint8, uintptr, uintptr)
	bufferClear   func(Buffer, uint8)
	buftMaxSize   func(BufferType) uintptr
	buftAlign     func(BufferType) uintptr
	buftAllocSize func(BufferType, Tensor) uintptr
	viewInit      func(Tensor) int32
}

var extras sync.Map // *Lib -> *extraFuncs

// ext returns l's extra functions, binding them on the first call; it panics naming the
// first missing symbol when ggml lacks one.
func (l *Lib) ext() *extraFuncs {
	v, _ := extras.LoadOrStore(l, &extraFuncs{})
	e := v.(*extraFuncs)
	e.once.Do(func() {
		reg := func(fptr any, name string) {
			if err := l.bindSym(fptr, name); err != nil && e.err == nil {
				e.err = err
			}
		}
		reg(&e.bufferGetBase, "ggml_backend_buffer_get_base")
		reg(&e.tensorAlloc, "ggml_backend_tensor_alloc")
		reg(&e.tensorMemset, "ggml_backend_tensor_memset")
		reg(&e.bufferClear, "ggml_backend_buffer_clear")
		reg(&e.buftMaxSize, "ggml_backend_buft_get_max_size")
		reg(&e.buftAlign, "ggml_backend_buft_get_alignment")
		reg(&e.buftAllocSize, "ggml_backend_buft_get_alloc_size")
		reg(&e.viewInit, "ggml_backend_view_init")
	})
	if e.err != nil {
		panic(e.err)
	}
	return e
}

// BufferBase returns the base address of a buffer (ggml_backend_buffer_get_base): for a
// device buffer an address that only the backend can interpret; 0 for a zero-size buffer.
func (l *Lib) BufferBase(b Buffer) uintptr { return l.ext().bufferGetBase(b) }

// TensorAlloc places t at address addr inside buf (ggml_backend_tensor_alloc) and
// returns the ggml_status. ggml asserts that [addr, addr+alloc size) lies in the buffer.
func (l *Lib) TensorAlloc(buf Buffer, t Tensor, addr uintptr) tensor.Status {
	return tensor.Status(l.ext().tensorAlloc(buf, t, addr))
}

// TensorMemset sets size bytes of t from byte offset to value (ggml_backend_tensor_memset).
func (l *Lib) TensorMemset(t Tensor, value byte, offset, size uint64) {
	l.ext().tensorMemset(t, value, uintptr(offset), uintptr(size))
}

// BufferClear sets every byte of buf to value (ggml_backend_buffer_clear).
func (l *Lib) BufferClear(buf Buffer, value byte) { l.ext().bufferClear(buf, value) }

// BuftMaxSize returns the largest buffer of the type (ggml_backend_buft_get_max_size).
func (l *Lib) BuftMaxSize(b BufferType) uint64 { return uint64(l.ext().buftMaxSize(b)) }

// BuftAlignment returns the buffer type's tensor alignment (ggml_backend_buft_get_alignment).
func (l *Lib) BuftAlignment(b BufferType) uint64 { return uint64(l.ext().buftAlign(b)) }

// BuftAllocSize returns the bytes t takes in a buffer of the type
// (ggml_backend_buft_get_alloc_size).
func (l *Lib) BuftAllocSize(b BufferType, t Tensor) uint64 {
	return uint64(l.ext().buftAllocSize(b, t))
}

// ViewInit places a view in its source's buffer (ggml_backend_view_init); the source must
// be allocated.
func (l *Lib) ViewInit(t Tensor) tensor.Status { return tensor.Status(l.ext().viewInit(t)) }

// bindSym binds the C function name, from libggml or libggml-base, to the Go function
// pointer fptr. Files that bind ggml functions lazily (on first use, so that a missing
// symbol fails only the test that needs it) use it as extra.go does.
func (l *Lib) bindSym(fptr any, name string) error {
	sym, err := purego.Dlsym(l.ggml, name)
	if err != nil || sym == 0 {
		sym, err = purego.Dlsym(l.base, name)
	}
	if err != nil || sym == 0 {
		return fmt.Errorf("ggml: symbol %s not found: %v", name, err)
	}
	purego.RegisterFunc(fptr, sym)
	return nil
}
