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
	b, err := d.filledBuffer("counters", make([]byte, 4*wgsl.CounterSlots))
	if err != nil {
		return nil, err
	}
	d.counters = b
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
