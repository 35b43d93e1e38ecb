package backend

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// ensureTables returns the device's buffer of the formats' lookup tables
// (wgsl.TableWords), created and written on first use: kernels that read IQ weights copy
// their tables from it into workgroup memory, the whole workgroup at once (wgsl
// Spec.Tables). Callers hold the device lock.
func (d *Device) ensureTables() (*gpu.Buffer, error) {
	if d.tables != nil {
		return d.tables, nil
	}
	words := wgsl.TableWords()
	if len(words) == 0 {
		return nil, errors.New("no lookup tables")
	}
	data := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(data[4*i:], w)
	}
	b, err := d.filledBuffer("lookup tables", data)
	if err != nil {
		return nil, err
	}
	d.tables = b
	return b, nil
}

// filledBuffer creates a storage buffer of the device's own holding data (what names it
// in errors) and counts it as allocated. Callers hold the device lock.
func (d *Device) filledBuffer(what string, data []byte) (*gpu.Buffer, error) {
	b, err := d.gpu.CreateBuffer(uint64(len(data)), gpu.UsageStorage)
	if err != nil {
		return nil, fmt.Errorf("%s: %s of %d bytes: %w", d.Name, what, len(data), err)
	}
	if err := d.gpu.Write(b, 0, data); err != nil {
		b.Release()
		return nil, fmt.Errorf("%s: %s: %w", d.Name, what, err)
	}
	d.allocated += b.Size
	return b, nil
}

// bindTables returns spec and bindings with the lookup tables' buffer bound after the
// operands (Spec.Tables) where the spec's formats have tables and one more storage binding
// fits the device; otherwise (or when the buffer cannot be made: the kernel then stores
// its tables from literals) it returns them unchanged. Callers hold the device lock.
func (d *Device) bindTables(spec *wgsl.Spec, bs []gpu.Binding) (*wgsl.Spec, []gpu.Binding) {
	if len(bs) >= storageBindings(d.gpu) || !wgsl.HasTables(spec) {
		return spec, bs
	}
	b, err := d.ensureTables()
	if err != nil {
		logf(LogDebug, "%s", err)
		return spec, bs
	}
	c := *spec
	c.Tables = true
	return &c, append(bs, gpu.Binding{Buffer: b, Offset: 0, Size: b.Size, ReadOnly: true, MayOverlap: true})
}
