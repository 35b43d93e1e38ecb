package backend

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// ensureCounters returns the device's buffer of atomic counters (wgsl.Spec.Counters,
// wgsl.CounterSlots of them), created zeroed on first use: the kernels that bind it leave
// every counter at zero when they finish. Callers hold the device lock.
func (d *Device) ensureCounters() (*gpu.Buffer, error) {
	if d.counters != nil {
		return d.counters, nil
	}
	size := uint64(4 * wgsl.CounterSlots)
	b, err := d.gpu.CreateBuffer(size, gpu.UsageStorage)
	if err != nil {
		return nil, fmt.Errorf("%s: counters of %d bytes: %w", d.Name, size, err)
	}
	if err := d.gpu.Write(b, 0, make([]byte, size)); err != nil {
		b.Release()
		return nil, fmt.Errorf("%s: counters: %w", d.Name, err)
	}
	d.counters = b
	d.allocated += b.Size
	return b, nil
}

// bindCounters returns bindings with the counters' buffer bound after the operands and
// the tables where the spec asks for it (wgsl.Spec.Counters). Callers hold the device
// lock.
func (d *Device) bindCounters(spec *wgsl.Spec, bs []gpu.Binding) ([]gpu.Binding, error) {
	if !spec.Counters {
		return bs, nil
	}
	if len(bs) >= storageBindings(d.gpu) {
		return nil, fmt.Errorf("%s: %s binds %d storage buffers and its counters", d.Name, spec.Kernel, len(bs))
	}
	b, err := d.ensureCounters()
	if err != nil {
		return nil, err
	}
	return append(bs, gpu.Binding{Buffer: b, Offset: 0, Size: b.Size, MayOverlap: true}), nil
}
