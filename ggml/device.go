package ggml

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// DeviceType is a device's kind (enum ggml_backend_dev_type).
type DeviceType int32

// Device kinds.
const (
	DeviceCPU   DeviceType = 0 // system memory, the CPU backend
	DeviceGPU   DeviceType = 1 // dedicated memory
	DeviceIGPU  DeviceType = 2 // integrated GPU using host memory
	DeviceAccel DeviceType = 3 // an accelerator used together with the CPU backend
	DeviceMeta  DeviceType = 4 // a device wrapping several others
)

// String returns the kind's name.
func (t DeviceType) String() string {
	switch t {
	case DeviceCPU:
		return "CPU"
	case DeviceGPU:
		return "GPU"
	case DeviceIGPU:
		return "IGPU"
	case DeviceAccel:
		return "ACCEL"
	case DeviceMeta:
		return "META"
	}
	return fmt.Sprintf("DeviceType(%d)", int32(t))
}

// DeviceInfo describes a registered device.
type DeviceInfo struct {
	// Name is the device's name, for NewBackend (WGPU0, CPU, ...).
	Name string
	// Description is the device's own description (the adapter, the CPU model).
	Description string
	// Type is the device's kind.
	Type DeviceType
	// FreeBytes and TotalBytes are the memory the device reports.
	FreeBytes, TotalBytes uint64
}

// Devices lists the devices of every registered backend, in registry order.
func (l *Library) Devices() []DeviceInfo {
	n := int(l.fn.devCount())
	out := make([]DeviceInfo, 0, n)
	for i := 0; i < n; i++ {
		d := l.fn.devGet(uintptr(i))
		if d == 0 {
			continue
		}
		out = append(out, l.deviceInfo(d))
	}
	return out
}

func (l *Library) deviceInfo(d uintptr) DeviceInfo {
	var free, total uintptr
	l.fn.devMemory(d, &free, &total)
	return DeviceInfo{
		Name:        l.fn.devName(d),
		Description: l.fn.devDescription(d),
		Type:        DeviceType(l.fn.devType(d)),
		FreeBytes:   uint64(free),
		TotalBytes:  uint64(total),
	}
}

// Backend is an execution stream on one device (a ggml_backend_t). Close frees it.
type Backend struct {
	lib    *Library
	ptr    uintptr
	device DeviceInfo
}

// NewBackend starts a backend on the device with the given name (case-insensitive, as
// ggml_backend_dev_by_name compares). An unknown name is an error wrapping
// ErrUnknownDevice that lists the devices there are.
func (l *Library) NewBackend(device string) (*Backend, error) {
	if l == nil {
		return nil, ErrNil
	}
	if device == "" || strings.ContainsRune(device, 0) {
		return nil, fmt.Errorf("%w: %q", ErrUnknownDevice, device)
	}
	d := l.fn.devByName(device)
	if d == 0 {
		var names []string
		for _, info := range l.Devices() {
			names = append(names, info.Name)
		}
		return nil, fmt.Errorf("%w: %q (devices: %s)", ErrUnknownDevice, device, strings.Join(names, ", "))
	}
	b := l.fn.devInit(d, 0)
	if b == 0 {
		return nil, fmt.Errorf("%w: ggml_backend_dev_init(%s) failed (see ggml's log)", ErrAlloc, device)
	}
	return &Backend{lib: l, ptr: b, device: l.deviceInfo(d)}, nil
}

// Device describes the backend's device.
func (b *Backend) Device() DeviceInfo {
	if b == nil {
		return DeviceInfo{}
	}
	return b.device
}

// Name returns the backend's name, or "" once closed.
func (b *Backend) Name() string {
	if b.check() != nil {
		return ""
	}
	return b.lib.fn.backendName(b.ptr)
}

// Close frees the backend; a second Close returns ErrClosed. Buffers allocated for it stay
// valid until their Context is closed.
func (b *Backend) Close() error {
	if err := b.check(); err != nil {
		return err
	}
	b.lib.fn.backendFree(b.ptr)
	b.ptr = 0
	return nil
}

func (b *Backend) check() error {
	if b == nil || b.lib == nil {
		return fmt.Errorf("%w: backend", ErrNil)
	}
	if b.ptr == 0 {
		return fmt.Errorf("%w: backend %s", ErrClosed, b.device.Name)
	}
	return nil
}

// Supports reports whether the backend's device can compute the op that produced t.
func (b *Backend) Supports(t *Tensor) bool {
	if b.check() != nil || t.check() != nil {
		return false
	}
	return b.lib.fn.backendSupports(b.ptr, t.ptr)
}

// Compute runs the graph on the backend and waits for it. The graph's context must be
// allocated on this backend, and the device must support every node (checked first:
// an unsupported node is an error wrapping ErrUnsupported, and nothing runs). A failure
// status from ggml is an error wrapping ErrCompute.
func (b *Backend) Compute(g *Graph) error {
	if err := b.check(); err != nil {
		return err
	}
	if err := g.check(); err != nil {
		return err
	}
	ctx := g.ctx
	if ctx.backend != b {
		if ctx.backend == nil {
			return fmt.Errorf("%w: the graph's context is not allocated (call Context.Allocate)", ErrAlloc)
		}
		return fmt.Errorf("%w: the graph's context is allocated on %s, not on %s", ErrAlloc, ctx.backend.device.Name, b.device.Name)
	}
	f := &b.lib.fn
	n := int(f.graphNNodes(g.ptr))
	for i := 0; i < n; i++ {
		node := Tensor{ctx: ctx, ptr: f.graphNode(g.ptr, int32(i))}
		if err := node.allocated(); err != nil {
			return err
		}
		for s := 0; s < maxSrc; s++ {
			if src := node.src(s); src.ptr != 0 {
				if err := src.allocated(); err != nil {
					return err
				}
			}
		}
		if node.op() == tensor.OpGetRows {
			if err := checkRowIndices(&node); err != nil {
				return err
			}
		}
		if !f.backendSupports(b.ptr, node.ptr) {
			return fmt.Errorf("%w: %s cannot compute node %d (%s %s, %s)", ErrUnsupported, b.device.Name, i, f.opDesc(node.ptr), node.Name(), node.Type())
		}
	}
	if status := f.graphCompute(b.ptr, g.ptr); status != 0 {
		return fmt.Errorf("%w: %s on %s", ErrCompute, f.statusString(status), b.device.Name)
	}
	return nil
}

// checkRowIndices reads a GET_ROWS node's indices (a tensor made by NewTensor, see
// GetRows) and checks each against the rows of the source: ggml's CPU backend asserts.
func checkRowIndices(node *Tensor) error {
	src, idx := node.src(0), node.src(1)
	rows := src.Shape()[1]
	vals := make([]int32, idx.Elements())
	if len(vals) == 0 {
		return nil
	}
	idx.ctx.lib.fn.tensorGet(idx.ptr, unsafe.Pointer(&vals[0]), 0, uintptr(4*len(vals)))
	for i, v := range vals {
		if v < 0 || int64(v) >= rows {
			return fmt.Errorf("%w: GetRows index %d is %d, outside 0..%d", ErrShape, i, v, rows-1)
		}
	}
	return nil
}

// DeviceHandle returns the ggml_backend_dev_t of the named device, for other C APIs of
// the same process that take devices (llama_model_params.devices, for one). It stays
// valid while the process runs.
func (l *Library) DeviceHandle(name string) (uintptr, error) {
	if l == nil {
		return 0, ErrNil
	}
	if name == "" || strings.ContainsRune(name, 0) {
		return 0, fmt.Errorf("%w: %q", ErrUnknownDevice, name)
	}
	d := l.fn.devByName(name)
	if d == 0 {
		return 0, fmt.Errorf("%w: %q", ErrUnknownDevice, name)
	}
	return d, nil
}
