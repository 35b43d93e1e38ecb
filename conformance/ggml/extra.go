package ggml

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// This file binds the few ggml functions the robustness tests need beyond the suite's core
// set: placing a tensor at a chosen address of a buffer, the buffer's base address and
// alignment, memset and clear. They are bound on first use, so a missing symbol fails
// only the test that needs it.

// TypeI8 is GGML_TYPE_I8 (one byte per element): the robustness tests use it to address a
// buffer byte by byte through ggml's own tensor_set/tensor_get.
const TypeI8 Type = 24

// extraFuncs are the lazily bound functions.
type extraFuncs struct {
	once sync.Once
	err  error

	bufferGetBase  func(Buffer) uintptr
	tensorAlloc    func(Buffer, Tensor, uintptr) int32
	tensorMemset   func(Tensor, uint8, uintptr, uintptr)
	bufferClear    func(Buffer, uint8)
	buftAlignment  func(BufferType) uintptr
	buftMaxSize    func(BufferType) uintptr
	bufferGetBuft  func(Buffer) BufferType
	bufferIsHost   func(Buffer) bool
	bufferAllocSiz func(Buffer, Tensor) uintptr
}

var extras sync.Map // *Lib -> *extraFuncs

// ext returns l's extra functions, binding them on the first call; it panics with the
// missing symbols when ggml lacks one (a test's recover turns that into a failure).
func (l *Lib) ext() *extraFuncs {
	v, _ := extras.LoadOrStore(l, &extraFuncs{})
	e := v.(*extraFuncs)
	e.once.Do(func() {
		reg := func(fptr any, name string) {
			sym, err := purego.Dlsym(l.ggml, name)
			if err != nil || sym == 0 {
				sym, err = purego.Dlsym(l.base, name)
			}
			if err != nil || sym == 0 {
				if e.err == nil {
					e.err = fmt.Errorf("ggml: symbol %s not found: %v", name, err)
				}
				return
			}
			purego.RegisterFunc(fptr, sym)
		}
		reg(&e.bufferGetBase, "ggml_backend_buffer_get_base")
		reg(&e.tensorAlloc, "ggml_backend_tensor_alloc")
		reg(&e.tensorMemset, "ggml_backend_tensor_memset")
		reg(&e.bufferClear, "ggml_backend_buffer_clear")
		reg(&e.buftAlignment, "ggml_backend_buft_get_alignment")
		reg(&e.buftMaxSize, "ggml_backend_buft_get_max_size")
		reg(&e.bufferGetBuft, "ggml_backend_buffer_get_type")
		reg(&e.bufferIsHost, "ggml_backend_buffer_is_host")
		reg(&e.bufferAllocSiz, "ggml_backend_buffer_get_alloc_size")
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
func (l *Lib) TensorAlloc(buf Buffer, t Tensor, addr uintptr) int {
	return int(l.ext().tensorAlloc(buf, t, addr))
}

// TensorMemset sets size bytes of t from byte offset to value (ggml_backend_tensor_memset).
func (l *Lib) TensorMemset(t Tensor, value byte, offset, size uint64) {
	l.ext().tensorMemset(t, value, uintptr(offset), uintptr(size))
}

// BufferClear sets every byte of buf to value (ggml_backend_buffer_clear).
func (l *Lib) BufferClear(buf Buffer, value byte) { l.ext().bufferClear(buf, value) }

// BuftAlignment returns the alignment of a buffer type (ggml_backend_buft_get_alignment).
func (l *Lib) BuftAlignment(b BufferType) uint64 { return uint64(l.ext().buftAlignment(b)) }

// BuftMaxSize returns the largest buffer of the type (ggml_backend_buft_get_max_size).
func (l *Lib) BuftMaxSize(b BufferType) uint64 { return uint64(l.ext().buftMaxSize(b)) }

// BufferType returns the type of buf (ggml_backend_buffer_get_type).
func (l *Lib) BufferType(buf Buffer) BufferType { return l.ext().bufferGetBuft(buf) }

// BufferIsHost reports whether buf lives in host memory (ggml_backend_buffer_is_host).
func (l *Lib) BufferIsHost(buf Buffer) bool { return l.ext().bufferIsHost(buf) }

// BufferAllocSize returns the bytes t takes in buf (ggml_backend_buffer_get_alloc_size).
func (l *Lib) BufferAllocSize(buf Buffer, t Tensor) uint64 {
	return uint64(l.ext().bufferAllocSiz(buf, t))
}

// TensorSetPtr is TensorSet with a raw host pointer and size, for tests that hand ggml
// a range the Go slice API cannot express (e.g. reading into memory guarded by canaries).
func (l *Lib) TensorSetPtr(t Tensor, data unsafe.Pointer, offset, size uint64) {
	l.tensorSet(t, data, uintptr(offset), uintptr(size))
}
