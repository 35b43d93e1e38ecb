package backend

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
)

// addressShift spaces the fake base addresses of buffers: buffer id i owns the address
// range [i<<addressShift, (i+1)<<addressShift). No buffer can be that large.
const addressShift = 40

// Buffer is GPU memory behind a fake, aligned base address. ggml computes tensor data
// addresses as base + offset; the backend maps them back to offsets in gpu.
type Buffer struct {
	ID   uint64
	Size uint64
	dev  *Device
	gpu  *gpu.Buffer
}

// Base is the fake address of the buffer's first byte.
func (b *Buffer) Base() uint64 { return b.ID << addressShift }

// Device returns the owning device.
func (b *Buffer) Device() *Device { return b.dev }

// Alloc creates a buffer of size bytes, or returns an error saying why it cannot.
func (d *Device) Alloc(size uint64) (*Buffer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	g, err := d.openLocked()
	if err != nil {
		return nil, err
	}
	if err := d.usable(); err != nil {
		return nil, err
	}
	if size >= 1<<addressShift {
		return nil, fmt.Errorf("%s: buffer of %d bytes is too large", d.Name, size)
	}
	if err := d.fits(size); err != nil {
		return nil, err
	}
	gb, err := g.CreateBuffer(max(size, 4), gpu.UsageStorage)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Name, err)
	}
	b := &Buffer{ID: nextBufferID.Add(1), Size: size, dev: d, gpu: gb}
	d.buffers[b.ID] = b
	liveBuffers.Store(b.ID, b)
	d.allocated += gb.Size
	return b, nil
}

// fits reports, as an error naming the sizes, a buffer that cannot fit: more than
// EnvMemory allows beside the buffers already allocated, or, for a hardware adapter whose
// Vulkan heaps are known, more than the device-local memory in all. Called with d.mu held.
func (d *Device) fits(size uint64) error {
	mib := func(b uint64) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) }
	if limit := memoryOverride(); limit > 0 {
		if size > limit || d.allocated > limit-size {
			free := uint64(0)
			if d.allocated < limit {
				free = limit - d.allocated
			}
			return fmt.Errorf("%s: a buffer of %s does not fit: %s of the %s that %s allows are free (%s allocated)",
				d.Name, mib(size), mib(free), mib(limit), EnvMemory, mib(d.allocated))
		}
		return nil
	}
	if d.adapter.Info.Type == gpu.CPU {
		return nil
	}
	if _, total, ok := d.vulkanMemory(); ok && size > total {
		return fmt.Errorf("%s: a buffer of %s does not fit in the device's %s of device-local memory", d.Name, mib(size), mib(total))
	}
	return nil
}

var (
	nextBufferID atomic.Uint64
	liveBuffers  sync.Map // id -> *Buffer
)

// LookupBuffer returns the live buffer with the given id, on any device.
func LookupBuffer(id uint64) (*Buffer, bool) {
	b, ok := liveBuffers.Load(id)
	if !ok {
		return nil, false
	}
	return b.(*Buffer), true
}

// Free releases the buffer and every bind group that refers to it.
func (b *Buffer) Free() {
	d := b.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	if b.gpu == nil {
		return
	}
	d.exe.Forget(b.gpu)
	d.allocated -= b.gpu.Size
	delete(d.buffers, b.ID)
	liveBuffers.Delete(b.ID)
	b.gpu.Release()
	b.gpu = nil
}

var errRange = errors.New("range outside the buffer")

func (b *Buffer) check(offset, size uint64) error {
	if b.gpu == nil {
		return errors.New("buffer already freed")
	}
	if offset > b.Size || size > b.Size-offset {
		return fmt.Errorf("%w: offset %d size %d, buffer %d bytes", errRange, offset, size, b.Size)
	}
	return nil
}

// words returns the 4-byte aligned range that covers [offset, offset+size).
func words(offset, size uint64) (start, end uint64) {
	return offset &^ 3, (offset + size + 3) &^ 3
}

// Write copies data to offset. Unaligned edges are merged with the bytes already there.
func (b *Buffer) Write(offset uint64, data []byte) error {
	d := b.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	began := time.Now()
	d.steps.mark(evWrite)
	defer func() { d.writeNS.Add(int64(time.Since(began))); d.steps.mark(evWriteEnd) }()
	if err := b.check(offset, uint64(len(data))); err != nil {
		return err
	}
	return b.writeLocked(offset, data)
}

func (b *Buffer) writeLocked(offset uint64, data []byte) error {
	n := uint64(len(data))
	if n == 0 {
		return nil
	}
	start, end := words(offset, n)
	if start == offset && end == offset+n {
		return b.dev.gpu.Write(b.gpu, offset, data)
	}
	tmp := make([]byte, end-start)
	// Only the first and last words hold bytes that must be kept.
	if err := b.dev.gpu.Read(b.gpu, start, tmp[:4]); err != nil {
		return err
	}
	if end-start > 4 {
		if err := b.dev.gpu.Read(b.gpu, end-4, tmp[len(tmp)-4:]); err != nil {
			return err
		}
	}
	copy(tmp[offset-start:], data)
	return b.dev.gpu.Write(b.gpu, start, tmp)
}

// Read copies len(dst) bytes at offset into dst, after all work submitted so far.
func (b *Buffer) Read(offset uint64, dst []byte) error {
	d := b.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	began := time.Now()
	d.steps.mark(evRead)
	defer func() { d.readNS.Add(int64(time.Since(began))); d.steps.mark(evReadEnd) }()
	d.reads.Add(1)
	n := uint64(len(dst))
	if err := b.check(offset, n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	start, end := words(offset, n)
	if start == offset && end == offset+n {
		return d.gpu.Read(b.gpu, offset, dst)
	}
	tmp := make([]byte, end-start)
	if err := d.gpu.Read(b.gpu, start, tmp); err != nil {
		return err
	}
	copy(dst, tmp[offset-start:])
	return nil
}

// memsetChunk bounds the host memory a memset uses at once.
const memsetChunk = 4 << 20

// Memset sets size bytes at offset to value.
func (b *Buffer) Memset(offset, size uint64, value byte) error {
	d := b.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := b.check(offset, size); err != nil {
		return err
	}
	start, end := words(offset, size)
	if value == 0 && start == offset && end == offset+size {
		return d.gpu.Clear(b.gpu, offset, size)
	}
	chunk := make([]byte, min(size, memsetChunk))
	for i := range chunk {
		chunk[i] = value
	}
	for done := uint64(0); done < size; {
		n := min(size-done, uint64(len(chunk)))
		if err := b.writeLocked(offset+done, chunk[:n]); err != nil {
			return err
		}
		done += n
	}
	return nil
}

// Clear sets the whole buffer to value.
func (b *Buffer) Clear(value byte) error { return b.Memset(0, b.Size, value) }

// CopyTo copies size bytes from offset src of b to offset dst of to, on the GPU. ok is
// false when the copy cannot be done there (other device, unaligned); the caller then
// falls back to a host copy.
func (b *Buffer) CopyTo(to *Buffer, src, dst, size uint64) (ok bool, err error) {
	d := b.dev
	if to.dev != d || src%4 != 0 || dst%4 != 0 || size%4 != 0 {
		return false, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := b.check(src, size); err != nil {
		return false, err
	}
	if err := to.check(dst, size); err != nil {
		return false, err
	}
	if size == 0 {
		return true, nil
	}
	e := d.gpu.NewEncoder()
	if err := e.Copy(b.gpu, src, to.gpu, dst, size); err != nil {
		e.Discard()
		return false, err
	}
	if _, err := e.Submit(); err != nil {
		return false, err
	}
	return true, nil
}
