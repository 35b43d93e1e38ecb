package backend

import (
	"fmt"
	"os"
	"strconv"

	"github.com/ggml-wgpu/ggml-wgpu/backend/webgpu"
	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/sched"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// EnvBatch sets how many dispatches go into one submission.
const EnvBatch = "GGML_WGPU_BATCH"

// defaultBatch keeps submissions short on CPU drivers (they crash on long ones) and lets
// a GPU start while the rest of the graph is still being encoded.
const defaultBatch = 64

// Backend is one ggml backend instance on a device. Several may share a device.
type Backend struct {
	Dev   *Device
	batch int
}

// NewBackend creates a backend instance on d.
func NewBackend(d *Device) (*Backend, error) {
	if _, err := d.open(); err != nil {
		return nil, err
	}
	b := &Backend{Dev: d, batch: defaultBatch}
	if v, err := strconv.Atoi(os.Getenv(EnvBatch)); err == nil && v > 0 {
		b.batch = v
	}
	return b, nil
}

// Compute lowers and submits the graph's nodes without waiting for the GPU. It fails
// before submitting anything when a node is unsupported or not in this device's buffers.
func (b *Backend) Compute(nodes []*ops.Tensor) error {
	d := b.Dev
	l := d.Limits()
	plan, err := sched.Build(nodes, &l)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	ln := &launcher{d: d}
	for i := range plan.Steps {
		if err := ln.check(&plan.Steps[i].Dispatch); err != nil {
			return fmt.Errorf("%s: %w", plan.Steps[i].Node.Name, err)
		}
	}
	if err := plan.Run(ln, b.batch); err != nil {
		ln.abandon()
		return err
	}
	return nil
}

// Synchronize waits until all work submitted to the device has completed.
func (b *Backend) Synchronize() { b.Dev.Synchronize() }

// launcher encodes dispatches into one open command encoder per submission. Callers hold
// the device lock.
type launcher struct {
	d   *Device
	enc *webgpu.Encoder
}

// binding is where one operand lives: a binding range and the operand's first element in it.
type binding struct {
	buf       *Buffer
	off, size uint64
	elem      uint32
}

func (l *launcher) resolve(t *ops.Tensor, f wgsl.Format) (binding, error) {
	buf, ok := l.d.buffers[t.Loc.Buffer]
	if !ok || buf.gpu == nil {
		return binding{}, fmt.Errorf("tensor %q is not in a %s buffer", t.Name, l.d.Name)
	}
	if t.Loc.Addr < buf.Base() {
		return binding{}, fmt.Errorf("tensor %q: address below its buffer", t.Name)
	}
	off := t.Loc.Addr - buf.Base()
	ext := t.Extent()
	if off+ext > buf.Size {
		return binding{}, fmt.Errorf("tensor %q extends past its buffer", t.Name)
	}
	align := uint64(l.d.gpu.Limits.MinStorageBufferOffsetAlignment)
	start := off / align * align
	rem := off - start
	es := uint64(f.ElemSize())
	if rem%es != 0 {
		return binding{}, fmt.Errorf("tensor %q: offset %d is not a whole number of elements", t.Name, off)
	}
	size := (rem + ext + 3) &^ 3
	if size > l.d.gpu.Limits.MaxStorageBufferBindingSize {
		return binding{}, fmt.Errorf("tensor %q: %d bytes exceed the binding limit", t.Name, size)
	}
	return binding{buf: buf, off: start, size: size, elem: uint32(rem / es)}, nil
}

// check validates a dispatch's operands without recording anything.
func (l *launcher) check(d *ops.Dispatch) error {
	for i, t := range d.Tensors {
		if _, err := l.resolve(t, d.Spec.Operands[i].Type); err != nil {
			return err
		}
	}
	return nil
}

// groupKey identifies a bind group: its layout size and the ranges it binds.
type groupKey struct {
	n    int
	refs [maxOperands]groupRef
}

type groupRef struct{ buf, off, size uint64 }

const maxOperands = 6

func (k groupKey) uses(id uint64) bool {
	for i := 0; i < k.n; i++ {
		if k.refs[i].buf == id {
			return true
		}
	}
	return false
}

// maxGroups bounds the bind group cache.
const maxGroups = 8192

func (l *launcher) Launch(d *ops.Dispatch) error {
	dev := l.d
	if len(d.Tensors) > maxOperands {
		return fmt.Errorf("dispatch with %d operands", len(d.Tensors))
	}
	pipe, err := dev.pipelines.Pipeline(d.Spec)
	if err != nil {
		return err
	}
	key := groupKey{n: len(d.Tensors)}
	offsets := make([]uint32, len(d.Tensors))
	binds := make([]webgpu.Binding, len(d.Tensors))
	for i, t := range d.Tensors {
		b, err := l.resolve(t, d.Spec.Operands[i].Type)
		if err != nil {
			return err
		}
		key.refs[i] = groupRef{b.buf.ID, b.off, b.size}
		offsets[i] = b.elem
		binds[i] = webgpu.Binding{Buffer: b.buf.gpu, Offset: b.off, Size: b.size}
	}
	group, ok := dev.groups[key]
	if !ok {
		if len(dev.groups) >= maxGroups {
			for k, g := range dev.groups {
				g.Release()
				delete(dev.groups, k)
			}
		}
		if group, err = dev.gpu.CreateBindGroup(pipe, dev.params.Buf, wgsl.SlotSize, binds); err != nil {
			return err
		}
		dev.groups[key] = group
	}
	slot, data, ok := dev.params.Slot()
	if !ok {
		return sched.ErrBatchFull
	}
	if err := wgsl.EncodeParams(data, d.Params, offsets); err != nil {
		return err
	}
	if l.enc == nil {
		l.enc = dev.gpu.NewEncoder()
	}
	l.enc.Dispatch(pipe, group, slot, d.Grid[0], d.Grid[1], d.Grid[2])
	return nil
}

func (l *launcher) Submit() error {
	dev := l.d
	dev.params.Flush()
	if l.enc == nil {
		dev.params.Seal(dev.gpu.Submitted())
		return nil
	}
	seq, err := l.enc.Submit()
	l.enc = nil
	if err != nil {
		dev.params.Seal(dev.gpu.Submitted())
		return err
	}
	dev.params.Seal(seq)
	return nil
}

// abandon drops a half-recorded submission after an error.
func (l *launcher) abandon() {
	if l.enc != nil {
		l.enc.Discard()
		l.enc = nil
	}
	l.d.params.Seal(l.d.gpu.Submitted())
}
