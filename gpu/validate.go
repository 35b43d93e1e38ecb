package gpu

// The checks every exported entry point runs before it calls into wgpu-native.
//
// wgpu-native reports most invalid input as a WebGPU validation error, which the error
// scopes turn into a Go error. Some invalid input makes it panic instead: a buffer binding
// of 0 bytes ("invalid size"), unknown buffer usage bits, a NULL (released) object, a
// submission that uses a destroyed buffer, any error while submitting or polling. A Rust
// panic cannot unwind through C, so it aborts the host process. The rules below keep such
// input away from it; they also catch what would only be a validation error, so that the
// caller gets a precise message without a round trip through wgpu-native.
//
// The checks are small pure functions over plain values (spans, limits, counts) so that
// they are tested without a GPU; the methods in gpu.go gather the values and call them.

import (
	"fmt"
	"strings"
)

// Buffer usage bits, as WGPUBufferUsage defines them (gpu.go asserts they equal the
// header's).
const (
	usageMapRead      = 0x001
	usageMapWrite     = 0x002
	usageCopySrc      = 0x004
	usageCopyDst      = 0x008
	usageIndex        = 0x010
	usageVertex       = 0x020
	usageUniform      = 0x040
	usageStorage      = 0x080
	usageIndirect     = 0x100
	usageQueryResolve = 0x200
	usageKnown        = 0x3ff
)

// maxQueries is the most queries one query set may hold (WebGPU's limit).
const maxQueries = 4096

// maxLayoutStorage is the most storage bindings a layout of this package has (the C
// helpers' fixed arrays, GW_MAX_STORAGE in gw.h).
const maxLayoutStorage = 15

// resolveAlignment is the alignment of a query resolve's destination offset.
const resolveAlignment = 256

// objState is what the validator knows of an object handed to an entry point.
type objState uint8

const (
	objLive     objState = iota // usable on the device at hand
	objNil                      // a nil pointer
	objReleased                 // released (or never successfully created)
	objForeign                  // created on another device
)

// check returns the error for an object that is not live; what names it.
func (s objState) check(what string) error {
	switch s {
	case objNil:
		return fmt.Errorf("webgpu: %s is nil", what)
	case objReleased:
		return fmt.Errorf("webgpu: %s was already released", what)
	case objForeign:
		return fmt.Errorf("webgpu: %s belongs to another device", what)
	}
	return nil
}

// span is a byte range of a buffer as the validator sees it.
type span struct {
	state        objState
	id           uint64 // the buffer's identity (unique in the process)
	bufSize      uint64 // the buffer's size
	usage        uint32 // the buffer's usage bits
	offset, size uint64
	readOnly     bool // a storage binding the kernel only reads (Binding.ReadOnly)
	mayOverlap   bool // a storage binding the kernel allows to overlap others (Binding.MayOverlap)
}

// inside reports whether the range lies inside the buffer (without overflowing).
func (s span) inside() bool { return s.offset <= s.bufSize && s.size <= s.bufSize-s.offset }

// usageNames lists the names of the usage bits in u.
func usageNames(u uint32) string {
	names := []string{"MapRead", "MapWrite", "CopySrc", "CopyDst", "Index", "Vertex", "Uniform", "Storage", "Indirect", "QueryResolve"}
	var out []string
	for i, n := range names {
		if u&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	if u&^usageKnown != 0 {
		out = append(out, fmt.Sprintf("0x%x", u&^usageKnown))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "|")
}

// checkUsage validates the usage of a new buffer: not empty, only known bits (wgpu-native
// panics on unknown ones), and the mappable usages combined only as WebGPU allows (MapRead
// with CopyDst alone, MapWrite with CopySrc alone).
func checkUsage(usage uint32) error {
	switch {
	case usage == 0:
		return fmt.Errorf("webgpu: buffer usage is empty")
	case usage&^usageKnown != 0:
		return fmt.Errorf("webgpu: buffer usage 0x%x has unknown bits 0x%x", usage, usage&^usageKnown)
	case usage&usageMapRead != 0 && usage&^(usageMapRead|usageCopyDst) != 0:
		return fmt.Errorf("webgpu: buffer usage %s: MapRead combines only with CopyDst", usageNames(usage))
	case usage&usageMapWrite != 0 && usage&^(usageMapWrite|usageCopySrc) != 0:
		return fmt.Errorf("webgpu: buffer usage %s: MapWrite combines only with CopySrc", usageNames(usage))
	}
	return nil
}

// checkBufferDesc validates a new buffer of size bytes and returns the size rounded up to a
// multiple of 4: more than 0 bytes, at most maxSize, a valid usage.
func checkBufferDesc(size uint64, usage uint32, maxSize uint64) (uint64, error) {
	if size == 0 {
		return 0, fmt.Errorf("webgpu: buffer of 0 bytes")
	}
	if size > maxSize || (size+3)&^3 > maxSize {
		return 0, fmt.Errorf("webgpu: buffer of %d bytes exceeds the device's maxBufferSize %d", size, maxSize)
	}
	if err := checkUsage(usage); err != nil {
		return 0, err
	}
	return (size + 3) &^ 3, nil
}

// checkTransfer validates a byte range of a buffer that a copy, write, clear or readback
// touches: a live buffer with the usage need, offset and size multiples of 4, the range
// inside the buffer. what names the operand.
func checkTransfer(what string, s span, need uint32) error {
	if err := s.state.check(what); err != nil {
		return err
	}
	switch {
	case s.usage&need != need:
		return fmt.Errorf("webgpu: %s has usage %s, needs %s", what, usageNames(s.usage), usageNames(need))
	case s.offset%4 != 0 || s.size%4 != 0:
		return fmt.Errorf("webgpu: %s range at %d of %d bytes is not 4-byte aligned", what, s.offset, s.size)
	case !s.inside():
		return fmt.Errorf("webgpu: %s range at %d of %d bytes outside a buffer of %d", what, s.offset, s.size, s.bufSize)
	}
	return nil
}

// checkCopy validates a buffer-to-buffer copy: both ranges (of the same size) valid, and
// not overlapping when they are in one buffer.
func checkCopy(src, dst span) error {
	if err := checkTransfer("copy source", src, usageCopySrc); err != nil {
		return err
	}
	if err := checkTransfer("copy destination", dst, usageCopyDst); err != nil {
		return err
	}
	if src.id == dst.id && src.offset < dst.offset+dst.size && dst.offset < src.offset+src.size {
		return fmt.Errorf("webgpu: copy between overlapping ranges of one buffer")
	}
	return nil
}

// checkStorage validates storage binding i (counted from 0; bound at i+1): a live buffer
// with Storage usage, a size that is not 0 (wgpu-native panics on it) and a multiple of 4,
// an offset aligned to minStorageBufferOffsetAlignment, the range inside the buffer and
// within maxStorageBufferBindingSize.
func checkStorage(i int, s span, lim *Limits) error {
	what := fmt.Sprintf("storage binding %d", i)
	if err := s.state.check(what + "'s buffer"); err != nil {
		return err
	}
	switch {
	case s.usage&usageStorage == 0:
		return fmt.Errorf("webgpu: %s: buffer usage %s lacks Storage", what, usageNames(s.usage))
	case s.size == 0:
		return fmt.Errorf("webgpu: %s is 0 bytes", what)
	case s.size%4 != 0:
		return fmt.Errorf("webgpu: %s of %d bytes is not a multiple of 4", what, s.size)
	case lim.MinStorageBufferOffsetAlignment != 0 && s.offset%uint64(lim.MinStorageBufferOffsetAlignment) != 0:
		return fmt.Errorf("webgpu: %s offset %d is not aligned to %d", what, s.offset, lim.MinStorageBufferOffsetAlignment)
	case !s.inside():
		return fmt.Errorf("webgpu: %s at %d of %d bytes runs past the end of its buffer of %d", what, s.offset, s.size, s.bufSize)
	case s.size > lim.MaxStorageBufferBindingSize:
		return fmt.Errorf("webgpu: %s of %d bytes exceeds maxStorageBufferBindingSize %d", what, s.size, lim.MaxStorageBufferBindingSize)
	}
	return nil
}

// checkUniform validates the uniform binding (binding 0, a window that a dynamic offset
// moves): a live buffer with Uniform usage, a window that is not 0 bytes, fits the buffer
// and is within maxUniformBufferBindingSize.
func checkUniform(s span, lim *Limits) error {
	if err := s.state.check("uniform buffer"); err != nil {
		return err
	}
	switch {
	case s.usage&usageUniform == 0:
		return fmt.Errorf("webgpu: uniform buffer usage %s lacks Uniform", usageNames(s.usage))
	case s.size == 0:
		return fmt.Errorf("webgpu: uniform binding is 0 bytes")
	case lim.MinUniformBufferOffsetAlignment != 0 && s.offset%uint64(lim.MinUniformBufferOffsetAlignment) != 0:
		return fmt.Errorf("webgpu: uniform binding offset %d is not aligned to %d", s.offset, lim.MinUniformBufferOffsetAlignment)
	case !s.inside():
		return fmt.Errorf("webgpu: uniform binding at %d of %d bytes runs past the end of its buffer of %d", s.offset, s.size, s.bufSize)
	case s.size > lim.MaxUniformBufferBindingSize:
		return fmt.Errorf("webgpu: uniform binding of %d bytes exceeds maxUniformBufferBindingSize %d", s.size, lim.MaxUniformBufferBindingSize)
	}
	return nil
}

// checkOverlap applies the aliasing rule to the storage bindings of one bind group.
//
// Storage bindings are declared read_write unless their Layout makes them read-only, so
// two bindings whose ranges of one buffer overlap may be a write racing a read inside one
// dispatch.
// What kernels legitimately do is bind the very same range twice (an in-place op: source
// and destination are one tensor, each invocation reading and then writing its own
// elements), or read two overlapping views of one tensor. Hence two bindings of one buffer
// are accepted when their ranges are disjoint, when they are identical (same offset and
// size), when both are read-only (readOnly set, or bit i of the layout's readOnly: the
// kernel writes neither), or when either has mayOverlap set (the caller says the kernel is
// written for the overlap). Any other overlap, a partial one involving a binding the kernel
// may write, is rejected.
func checkOverlap(storage []span, readOnly uint32) error {
	ro := func(i int) bool { return storage[i].readOnly || readOnly>>i&1 == 1 }
	for i := range storage {
		a := storage[i]
		for j := i + 1; j < len(storage); j++ {
			b := storage[j]
			switch {
			case a.id != b.id:
			case a.offset == b.offset && a.size == b.size:
			case ro(i) && ro(j):
			case a.mayOverlap || b.mayOverlap:
			case a.offset < b.offset+b.size && b.offset < a.offset+a.size:
				return fmt.Errorf("webgpu: storage bindings %d (at %d, %d bytes) and %d (at %d, %d bytes) partially overlap in one buffer "+
					"and the kernel may write one of them; identical ranges and read-only ones may overlap, other overlaps need Binding.MayOverlap",
					i, a.offset, a.size, j, b.offset, b.size)
			}
		}
	}
	return nil
}

// checkBindGroup validates a bind group for layout l: the count, the uniform binding, each
// storage binding, the aliasing rule, the uniform buffer not bound as storage too
// (read_write storage and uniform use of one buffer conflict), and no buffer bound both
// read-only and read_write (the same conflict).
func checkBindGroup(l Layout, uniform span, storage []span, lim *Limits) error {
	if len(storage) != l.Storage {
		return fmt.Errorf("webgpu: the pipeline's layout has %d storage bindings, got %d", l.Storage, len(storage))
	}
	for i := range storage {
		for j := range storage {
			if l.ReadOnly>>i&1 == 1 && l.ReadOnly>>j&1 == 0 && storage[i].id == storage[j].id {
				return fmt.Errorf("webgpu: storage binding %d is read-only and binding %d read_write in one buffer", i, j)
			}
		}
	}
	if err := checkUniform(uniform, lim); err != nil {
		return err
	}
	for i, s := range storage {
		if err := checkStorage(i, s, lim); err != nil {
			return err
		}
		if s.id == uniform.id {
			return fmt.Errorf("webgpu: storage binding %d is the uniform buffer", i)
		}
	}
	return checkOverlap(storage, l.ReadOnly)
}

// checkShader validates a compute shader's source and its layout: source not empty and free
// of NUL bytes (C would see a truncated text), the storage binding count within
// maxStorageBuffersPerShaderStage and the C helpers' arrays, read-only bits only for
// bindings of the layout.
func checkShader(source string, l Layout, lim *Limits) error {
	storage := l.Storage
	if strings.TrimSpace(source) == "" {
		return fmt.Errorf("webgpu: empty shader source")
	}
	if strings.IndexByte(source, 0) >= 0 {
		return fmt.Errorf("webgpu: shader source contains a NUL byte")
	}
	limit := min(int(lim.MaxStorageBuffersPerShaderStage), maxLayoutStorage)
	if storage < 0 || storage > limit {
		return fmt.Errorf("webgpu: %d storage bindings (the device allows %d per shader stage, this package %d)",
			storage, lim.MaxStorageBuffersPerShaderStage, maxLayoutStorage)
	}
	if l.ReadOnly>>storage != 0 {
		return fmt.Errorf("webgpu: read-only bits %#x for a layout of %d storage bindings", l.ReadOnly, storage)
	}
	return nil
}

// checkQueryCount validates the size of a new query set: 1 to 4096 queries.
func checkQueryCount(count int) error {
	if count <= 0 || count > maxQueries {
		return fmt.Errorf("webgpu: query set of %d queries (1 to %d)", count, maxQueries)
	}
	return nil
}

// checkQueries validates queries [first, first+count) of a set of setSize.
func checkQueries(first, count, setSize int) error {
	if first < 0 || count <= 0 || first > setSize || count > setSize-first {
		return fmt.Errorf("webgpu: queries %d..%d outside a query set of %d", first, first+count, setSize)
	}
	return nil
}

// checkResolve validates the destination of a query resolve (8 bytes a query): a range
// valid for QueryResolve usage whose offset is a multiple of 256.
func checkResolve(dst span) error {
	if dst.offset%resolveAlignment != 0 {
		return fmt.Errorf("webgpu: resolve offset %d not a multiple of %d", dst.offset, resolveAlignment)
	}
	return checkTransfer("resolve destination", dst, usageQueryResolve)
}

// checkGrid validates a dispatch's workgroup counts against the per-dimension limit.
func checkGrid(grid [3]uint32, limit uint32) error {
	for i, n := range grid {
		if n > limit {
			return fmt.Errorf("webgpu: %d workgroups in dimension %d exceed the limit %d", n, i, limit)
		}
	}
	return nil
}

// checkUniformOffset validates a dispatch's dynamic uniform offset: aligned to
// minUniformBufferOffsetAlignment, and the window of window bytes it selects inside the
// uniform buffer of bufSize bytes.
func checkUniformOffset(offset uint32, window, bufSize uint64, align uint32) error {
	if align != 0 && offset%align != 0 {
		return fmt.Errorf("webgpu: uniform offset %d not aligned to %d", offset, align)
	}
	if uint64(offset) > bufSize || window > bufSize-uint64(offset) {
		return fmt.Errorf("webgpu: uniform window at %d of %d bytes outside a buffer of %d", offset, window, bufSize)
	}
	return nil
}
