package arena

import (
	"github.com/ggml-wgpu/ggml-wgpu/backend/webgpu"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// Params is the slotted parameter arena: one uniform buffer of fixed-size slots. Each
// dispatch writes its parameters into a slot of the open batch (host memory); Flush writes
// the whole batch with one queue write just before the batch is submitted, and Seal ties
// the slots to that submission so they are reused only after it completed.
type Params struct {
	dev   *webgpu.Device
	Buf   *webgpu.Buffer
	ring  *Ring
	host  []byte
	dirty bool
}

// NewParams creates an arena of n slots of wgsl.SlotSize bytes on dev.
func NewParams(dev *webgpu.Device, n int) (*Params, error) {
	buf, err := dev.CreateBuffer(uint64(n*wgsl.SlotSize), webgpu.UsageUniform)
	if err != nil {
		return nil, err
	}
	return &Params{dev: dev, Buf: buf, ring: NewRing(n, dev.Wait), host: make([]byte, n*wgsl.SlotSize)}, nil
}

// Slot takes a slot for the open batch and returns its byte offset and its host bytes to
// fill. ok is false when the batch is full and must be submitted first.
func (a *Params) Slot() (offset uint32, data []byte, ok bool) {
	s, ok := a.ring.Alloc()
	if !ok {
		return 0, nil, false
	}
	a.dirty = true
	off := s * wgsl.SlotSize
	data = a.host[off : off+wgsl.SlotSize]
	clear(data)
	return uint32(off), data, true
}

// Flush writes the open batch's slots to the GPU buffer (ordered before later submissions).
func (a *Params) Flush() {
	if !a.dirty {
		return
	}
	start, end := a.ring.Open()
	a.dev.Write(a.Buf, uint64(start*wgsl.SlotSize), a.host[start*wgsl.SlotSize:end*wgsl.SlotSize])
	a.dirty = false
}

// Seal ties the open batch's slots to submission seq.
func (a *Params) Seal(seq uint64) { a.ring.Seal(seq) }

// Release frees the GPU buffer.
func (a *Params) Release() { a.Buf.Release() }
