package arena

import "github.com/ggml-wgpu/ggml-wgpu/gpu"

// Params is the slotted parameter arena: one uniform buffer of fixed-size slots. Each
// dispatch writes its parameters into a slot of the open batch (host memory); Flush writes
// the whole batch with one queue write just before the batch is submitted, and Seal ties
// the slots to that submission so they are reused only after it completed.
type Params struct {
	dev      *gpu.Device
	Buf      *gpu.Buffer
	SlotSize int
	ring     *Ring
	host     []byte
	dirty    bool
}

// NewParams creates an arena of n slots of slotSize bytes on dev. slotSize must be a
// multiple of the device's uniform offset alignment.
func NewParams(dev *gpu.Device, n, slotSize int) (*Params, error) {
	buf, err := dev.CreateBuffer(uint64(n*slotSize), gpu.UsageUniform)
	if err != nil {
		return nil, err
	}
	return &Params{dev: dev, Buf: buf, SlotSize: slotSize, ring: NewRing(n, dev.Wait), host: make([]byte, n*slotSize)}, nil
}

// Slot takes a slot for the open batch and returns its byte offset and its host bytes to
// fill: ErrFull when the batch is full and must be submitted first.
func (a *Params) Slot() (offset uint32, data []byte, err error) {
	s, err := a.ring.Alloc()
	if err != nil {
		return 0, nil, err
	}
	a.dirty = true
	off := s * a.SlotSize
	data = a.host[off : off+a.SlotSize]
	clear(data)
	return uint32(off), data, nil
}

// Flush writes the open batch's slots to the GPU buffer (ordered before later submissions).
func (a *Params) Flush() error {
	if !a.dirty {
		return nil
	}
	start, end := a.ring.Open()
	a.dirty = false
	return a.dev.Write(a.Buf, uint64(start*a.SlotSize), a.host[start*a.SlotSize:end*a.SlotSize])
}

// Seal ties the open batch's slots to submission seq.
func (a *Params) Seal(seq uint64) { a.ring.Seal(seq) }

// Hold sets the open batch's slots aside for a recording submitted later (Ring.Hold).
func (a *Params) Hold() Held { return a.ring.Hold() }

// Settle ties held slots to the submission that read them (Ring.Settle).
func (a *Params) Settle(h Held, seq uint64) { a.ring.Settle(h, seq) }

// Release frees the GPU buffer.
func (a *Params) Release() { a.Buf.Release() }
