// Package gpu is the ground floor of ggml-wgpu: a thin cgo layer over the wgpu-native
// C API that owns instances, adapters, devices, buffers, pipelines, bind groups and command
// encoding. It calls the C API directly (never through callbacks that hold Go memory), so
// the known defects of the Go binding's MapAsync and error callbacks do not apply.
//
// A Device is not safe for concurrent use; callers serialise access (backend.Device does).
package gpu

/*
#cgo CFLAGS: -O2
#include <stdlib.h>
#include "gw.h"
#include "vkmem.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	// Linked for its static libwgpu_native.a; this package calls the C API itself.
	_ "github.com/cogentcore/webgpu/wgpu"
)

// AdapterType says what kind of hardware an adapter drives.
type AdapterType int

// Adapter types, as wgpu-native reports them.
const (
	DiscreteGPU AdapterType = iota
	IntegratedGPU
	CPU
	Unknown
)

func (t AdapterType) String() string {
	switch t {
	case DiscreteGPU:
		return "discrete GPU"
	case IntegratedGPU:
		return "integrated GPU"
	case CPU:
		return "CPU (software)"
	}
	return "unknown"
}

// Limits are the device limits this project cares about.
type Limits struct {
	MaxBufferSize                   uint64
	MaxStorageBufferBindingSize     uint64
	MaxUniformBufferBindingSize     uint64
	MinStorageBufferOffsetAlignment uint32
	MinUniformBufferOffsetAlignment uint32
	MaxStorageBuffersPerShaderStage uint32
	MaxComputeInvocationsPerGroup   uint32
	MaxComputeWorkgroupStorageSize  uint32
	MaxComputeWorkgroupsPerDim      uint32
}

// AdapterInfo describes an adapter.
type AdapterInfo struct {
	Vendor, Architecture, Device, Description string
	Type                                      AdapterType
	VendorID, DeviceID                        uint32
}

// Instance is a WebGPU instance.
type Instance struct{ h C.WGPUInstance }

// Adapter is a physical device reachable through an instance.
type Adapter struct {
	h      C.WGPUAdapter
	Info   AdapterInfo
	limits C.WGPULimits
}

// NewInstance creates a WebGPU instance. wgpu-native's own log is limited to errors.
func NewInstance() (*Instance, error) {
	C.wgpuSetLogLevel(1)
	h := C.wgpuCreateInstance(nil)
	if h == nil {
		return nil, errors.New("webgpu: wgpuCreateInstance failed")
	}
	return &Instance{h: h}, nil
}

// Adapters lists the Vulkan adapters of the instance, in the order wgpu-native reports them.
func (in *Instance) Adapters() []*Adapter {
	var hs [32]C.WGPUAdapter
	n := int(C.gw_enumerate(in.h, &hs[0], C.size_t(len(hs))))
	out := make([]*Adapter, 0, n)
	for i := 0; i < n; i++ {
		a := &Adapter{h: hs[i]}
		var info C.WGPUAdapterInfo
		C.wgpuAdapterGetInfo(a.h, &info)
		a.Info = AdapterInfo{
			Vendor:       C.GoString(info.vendor),
			Architecture: C.GoString(info.architecture),
			Device:       C.GoString(info.device),
			Description:  C.GoString(info.description),
			Type:         AdapterType(info.adapterType),
			VendorID:     uint32(info.vendorID),
			DeviceID:     uint32(info.deviceID),
		}
		C.wgpuAdapterInfoFreeMembers(info)
		var sl C.WGPUSupportedLimits
		C.wgpuAdapterGetLimits(a.h, &sl)
		a.limits = sl.limits
		out = append(out, a)
	}
	return out
}

// Memory returns the adapter's device-local memory (total) and what is free of it, read
// through the Vulkan loader. ok is false when that cannot be told (no loader, no match).
func (a *Adapter) Memory() (free, total uint64, ok bool) {
	var t, f C.uint64_t
	if C.gw_vk_memory(C.uint32_t(a.Info.VendorID), C.uint32_t(a.Info.DeviceID), &t, &f) == 0 {
		return 0, 0, false
	}
	return uint64(f), uint64(t), true
}

// maxRequestableBufferSize caps maxBufferSize: the adapter reports 2^64-1, which as a
// requested limit means "undefined" and silently yields the 256 MiB default.
const maxRequestableBufferSize = 1 << 40

// Device is an open logical device with its queue.
type Device struct {
	d      *C.gw_device
	Limits Limits
	layout map[int]C.WGPUBindGroupLayout
	stage  C.WGPUBuffer
	stageN uint64
}

// Open requests a device with the adapter's own limits (clamped where the binding needs it).
func (a *Adapter) Open() (*Device, error) { return a.open(false) }

// OpenWithTimestamps is Open, also asking for timestamp queries (Device.Timestamps says
// whether the adapter granted them).
func (a *Adapter) OpenWithTimestamps() (*Device, error) { return a.open(true) }

func (a *Adapter) open(timestamps bool) (*Device, error) {
	lim := a.limits
	if lim.maxBufferSize > maxRequestableBufferSize {
		lim.maxBufferSize = maxRequestableBufferSize
	}
	if lim.maxStorageBufferBindingSize > C.uint64_t(lim.maxBufferSize) {
		lim.maxStorageBufferBindingSize = lim.maxBufferSize
	}
	var msg [512]C.char
	ts := C.int(0)
	if timestamps {
		ts = 1
	}
	d := C.gw_open(a.h, &lim, ts, &msg[0], C.size_t(len(msg)))
	if d == nil {
		return nil, fmt.Errorf("webgpu: request device on %q: %s", a.Info.Device, C.GoString(&msg[0]))
	}
	var got C.WGPUSupportedLimits
	C.wgpuDeviceGetLimits(d.device, &got)
	l := got.limits
	return &Device{
		d: d,
		Limits: Limits{
			MaxBufferSize:                   uint64(l.maxBufferSize),
			MaxStorageBufferBindingSize:     uint64(l.maxStorageBufferBindingSize),
			MaxUniformBufferBindingSize:     uint64(l.maxUniformBufferBindingSize),
			MinStorageBufferOffsetAlignment: uint32(l.minStorageBufferOffsetAlignment),
			MinUniformBufferOffsetAlignment: uint32(l.minUniformBufferOffsetAlignment),
			MaxStorageBuffersPerShaderStage: uint32(l.maxStorageBuffersPerShaderStage),
			MaxComputeInvocationsPerGroup:   uint32(l.maxComputeInvocationsPerWorkgroup),
			MaxComputeWorkgroupStorageSize:  uint32(l.maxComputeWorkgroupStorageSize),
			MaxComputeWorkgroupsPerDim:      uint32(l.maxComputeWorkgroupsPerDimension),
		},
		layout: map[int]C.WGPUBindGroupLayout{},
	}, nil
}

// Timestamps reports whether the device can time compute passes.
func (d *Device) Timestamps() bool { return d.d.timestamps != 0 }

// QuerySet holds GPU timestamps.
type QuerySet struct {
	h     C.WGPUQuerySet
	Count int
}

// CreateQuerySet creates a set of count timestamp queries.
func (d *Device) CreateQuerySet(count int) (*QuerySet, error) {
	if !d.Timestamps() {
		return nil, errors.New("webgpu: the device has no timestamp queries")
	}
	var h C.WGPUQuerySet
	if err := d.scoped("query set", func() { h = C.gw_query_set(d.d, C.uint32_t(count)) }); err != nil || h == nil {
		return nil, fmt.Errorf("webgpu: query set: %v", err)
	}
	return &QuerySet{h: h, Count: count}, nil
}

// Release frees the query set.
func (q *QuerySet) Release() {
	if q.h != nil {
		C.wgpuQuerySetRelease(q.h)
		q.h = nil
	}
}

// UsageTimestamps is the usage of a buffer that receives resolved timestamps.
const UsageTimestamps = C.WGPUBufferUsage_QueryResolve | C.WGPUBufferUsage_CopySrc

// Close waits for outstanding work and releases the device.
func (d *Device) Close() {
	if d.d == nil {
		return
	}
	for _, l := range d.layout {
		C.wgpuBindGroupLayoutRelease(l)
	}
	if d.stage != nil {
		C.wgpuBufferRelease(d.stage)
	}
	C.gw_close(d.d)
	d.d = nil
}

// scoped runs f inside a validation error scope and returns the scope's error.
func (d *Device) scoped(what string, f func()) error {
	C.gw_push_scope(d.d)
	f()
	var msg [1024]C.char
	if C.gw_pop_scope(d.d, &msg[0], C.size_t(len(msg))) != 0 {
		return fmt.Errorf("webgpu: %s: %s", what, C.GoString(&msg[0]))
	}
	return nil
}

// Buffer usages.
const (
	UsageStorage = C.WGPUBufferUsage_Storage | C.WGPUBufferUsage_CopySrc | C.WGPUBufferUsage_CopyDst
	UsageUniform = C.WGPUBufferUsage_Uniform | C.WGPUBufferUsage_CopyDst
	usageStaging = C.WGPUBufferUsage_MapRead | C.WGPUBufferUsage_CopyDst
)

// Buffer is a GPU buffer.
type Buffer struct {
	h    C.WGPUBuffer
	Size uint64
}

// CreateBuffer creates a buffer of size bytes (rounded up to 4) with the given usage.
func (d *Device) CreateBuffer(size uint64, usage uint32) (*Buffer, error) {
	size = (size + 3) &^ 3
	if size > d.Limits.MaxBufferSize {
		return nil, fmt.Errorf("webgpu: buffer of %d bytes exceeds the device's maxBufferSize %d", size, d.Limits.MaxBufferSize)
	}
	var h C.WGPUBuffer
	err := d.scoped("create buffer", func() {
		desc := C.WGPUBufferDescriptor{usage: C.WGPUFlags(usage), size: C.uint64_t(size)}
		h = C.wgpuDeviceCreateBuffer(d.d.device, &desc)
	})
	if err != nil || h == nil {
		if h != nil {
			C.wgpuBufferRelease(h)
		}
		if err == nil {
			err = errors.New("webgpu: create buffer returned NULL")
		}
		return nil, err
	}
	return &Buffer{h: h, Size: size}, nil
}

// Release destroys the buffer. Work already submitted that uses it completes first.
func (b *Buffer) Release() {
	if b.h != nil {
		C.wgpuBufferDestroy(b.h)
		C.wgpuBufferRelease(b.h)
		b.h = nil
	}
}

// Alive reports whether the buffer has not been released.
func (b *Buffer) Alive() bool { return b != nil && b.h != nil }

// checkRange validates a byte range of b for a copy, write or clear: a live buffer, offset
// and size multiples of 4, the range inside the buffer.
func checkRange(b *Buffer, offset, size uint64) error {
	switch {
	case !b.Alive():
		return errors.New("webgpu: buffer already released")
	case offset%4 != 0 || size%4 != 0:
		return fmt.Errorf("webgpu: range at %d of %d bytes is not 4-byte aligned", offset, size)
	case offset > b.Size || size > b.Size-offset:
		return fmt.Errorf("webgpu: range at %d of %d bytes outside a buffer of %d", offset, size, b.Size)
	}
	return nil
}

// Write copies data into the buffer at offset through the queue (ordered with submissions).
// offset and len(data) must be multiples of 4.
func (d *Device) Write(b *Buffer, offset uint64, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	if err := checkRange(b, offset, uint64(len(data))); err != nil {
		return err
	}
	C.wgpuQueueWriteBuffer(d.d.queue, b.h, C.uint64_t(offset), unsafe.Pointer(&data[0]), C.size_t(len(data)))
	return nil
}

// Clear zeroes size bytes at offset (both multiples of 4) through the queue.
func (d *Device) Clear(b *Buffer, offset, size uint64) error {
	if size == 0 {
		return nil
	}
	if err := checkRange(b, offset, size); err != nil {
		return err
	}
	enc := C.wgpuDeviceCreateCommandEncoder(d.d.device, nil)
	C.wgpuCommandEncoderClearBuffer(enc, b.h, C.uint64_t(offset), C.uint64_t(size))
	cb := C.wgpuCommandEncoderFinish(enc, nil)
	C.wgpuCommandEncoderRelease(enc)
	C.gw_submit(d.d, cb)
	return nil
}

// stagingChunk is the size of the reusable readback buffer.
const stagingChunk = 16 << 20

// Read copies len(dst) bytes at offset (both multiples of 4) into dst, waiting for all work
// submitted before it.
func (d *Device) Read(b *Buffer, offset uint64, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	if err := checkRange(b, offset, uint64(len(dst))); err != nil {
		return err
	}
	if d.stage == nil {
		s, err := d.CreateBuffer(stagingChunk, usageStaging)
		if err != nil {
			return err
		}
		d.stage, d.stageN = s.h, s.Size
	}
	for done := uint64(0); done < uint64(len(dst)); {
		n := min(uint64(len(dst))-done, d.stageN)
		rc := C.gw_read(d.d, b.h, C.uint64_t(offset+done), C.uint64_t(n), d.stage, unsafe.Pointer(&dst[done]))
		if rc != 0 {
			return fmt.Errorf("webgpu: readback failed (code %d)", int(rc))
		}
		done += n
	}
	return nil
}

// Pipeline is a compute pipeline whose bind group layout has one dynamic-offset uniform
// buffer at binding 0 and Storage read-write storage buffers at bindings 1..Storage.
type Pipeline struct {
	h       C.WGPUComputePipeline
	layout  C.WGPUBindGroupLayout
	Storage int
}

// CreatePipeline compiles WGSL source (entry point "main") into a compute pipeline.
func (d *Device) CreatePipeline(label, source string, storage int) (*Pipeline, error) {
	bgl, ok := d.layout[storage]
	if !ok {
		if err := d.scoped("bind group layout", func() { bgl = C.gw_layout(d.d, C.uint32_t(storage)) }); err != nil || bgl == nil {
			return nil, fmt.Errorf("webgpu: layout with %d storage buffers: %v", storage, err)
		}
		d.layout[storage] = bgl
	}
	src := C.CString(source)
	defer C.free(unsafe.Pointer(src))
	var mod C.WGPUShaderModule
	if err := d.scoped("compile "+label, func() { mod = C.gw_shader(d.d, src) }); err != nil {
		if mod != nil {
			C.wgpuShaderModuleRelease(mod)
		}
		return nil, err
	}
	defer C.wgpuShaderModuleRelease(mod)
	var p C.WGPUComputePipeline
	if err := d.scoped("pipeline "+label, func() { p = C.gw_pipeline(d.d, mod, bgl) }); err != nil || p == nil {
		if p != nil {
			C.wgpuComputePipelineRelease(p)
		}
		return nil, fmt.Errorf("webgpu: pipeline %s: %v", label, err)
	}
	return &Pipeline{h: p, layout: bgl, Storage: storage}, nil
}

// Binding is a byte range of a buffer bound as a storage buffer.
type Binding struct {
	Buffer       *Buffer
	Offset, Size uint64
}

// BindGroup binds a uniform buffer (dynamic offset, window of UniformSize bytes) and
// storage ranges to a pipeline's layout.
type BindGroup struct {
	h      C.WGPUBindGroup
	layout C.WGPUBindGroupLayout
}

// CreateBindGroup creates a bind group for p.
func (d *Device) CreateBindGroup(p *Pipeline, uniform *Buffer, uniformSize uint64, storage []Binding) (*BindGroup, error) {
	n := len(storage)
	if n != p.Storage {
		return nil, fmt.Errorf("webgpu: pipeline wants %d storage bindings, got %d", p.Storage, n)
	}
	bufs := (*[16]C.WGPUBuffer)(C.calloc(16, C.size_t(unsafe.Sizeof(C.WGPUBuffer(nil)))))
	offs := (*[16]C.uint64_t)(C.calloc(16, 8))
	sizes := (*[16]C.uint64_t)(C.calloc(16, 8))
	defer C.free(unsafe.Pointer(bufs))
	defer C.free(unsafe.Pointer(offs))
	defer C.free(unsafe.Pointer(sizes))
	for i, s := range storage {
		bufs[i], offs[i], sizes[i] = s.Buffer.h, C.uint64_t(s.Offset), C.uint64_t(s.Size)
	}
	var g C.WGPUBindGroup
	err := d.scoped("bind group", func() {
		g = C.gw_bind_group(d.d, p.layout, uniform.h, C.uint64_t(uniformSize), C.uint32_t(n), &bufs[0], &offs[0], &sizes[0])
	})
	if err != nil || g == nil {
		if g != nil {
			C.wgpuBindGroupRelease(g)
		}
		return nil, fmt.Errorf("webgpu: bind group: %v", err)
	}
	return &BindGroup{h: g, layout: p.layout}, nil
}

// Release frees the bind group.
func (g *BindGroup) Release() {
	if g.h != nil {
		C.wgpuBindGroupRelease(g.h)
		g.h = nil
	}
}

// Encoder records compute passes and copies into one command buffer.
type Encoder struct {
	d    *Device
	enc  C.WGPUCommandEncoder
	pass C.WGPUComputePassEncoder
}

// NewEncoder starts a command buffer.
func (d *Device) NewEncoder() *Encoder {
	return &Encoder{d: d, enc: C.wgpuDeviceCreateCommandEncoder(d.d.device, nil)}
}

// checkDispatch validates a dispatch before wgpu-native sees it: live objects, a bind
// group made for the pipeline's layout, a uniform offset on a slot boundary and every
// workgroup count within the device's limit (zero workgroups records nothing).
func (e *Encoder) checkDispatch(p *Pipeline, g *BindGroup, uniformOffset uint32, grid [3]uint32) error {
	if e.enc == nil {
		return errors.New("webgpu: encoder already submitted")
	}
	if p == nil || p.h == nil || g == nil || g.h == nil {
		return errors.New("webgpu: dispatch without a live pipeline and bind group")
	}
	if g.layout != p.layout {
		return errors.New("webgpu: bind group made for another pipeline layout")
	}
	if a := e.d.Limits.MinUniformBufferOffsetAlignment; a != 0 && uniformOffset%a != 0 {
		return fmt.Errorf("webgpu: uniform offset %d not aligned to %d", uniformOffset, a)
	}
	for _, n := range grid {
		if n > e.d.Limits.MaxComputeWorkgroupsPerDim {
			return fmt.Errorf("webgpu: %d workgroups exceed the limit %d per dimension", n, e.d.Limits.MaxComputeWorkgroupsPerDim)
		}
	}
	return nil
}

// Dispatch records one dispatch in the current compute pass (opening one if needed).
func (e *Encoder) Dispatch(p *Pipeline, g *BindGroup, uniformOffset uint32, grid [3]uint32) error {
	if err := e.checkDispatch(p, g, uniformOffset, grid); err != nil {
		return err
	}
	if grid[0] == 0 || grid[1] == 0 || grid[2] == 0 {
		return nil
	}
	if e.pass == nil {
		e.pass = C.wgpuCommandEncoderBeginComputePass(e.enc, nil)
	}
	C.gw_dispatch(e.pass, p.h, g.h, C.uint32_t(uniformOffset), C.uint32_t(grid[0]), C.uint32_t(grid[1]), C.uint32_t(grid[2]))
	return nil
}

// DispatchTimed records one dispatch in a compute pass of its own, writing its start and
// end times to queries 2*index and 2*index+1 of qs.
func (e *Encoder) DispatchTimed(qs *QuerySet, index int, p *Pipeline, g *BindGroup, uniformOffset uint32, grid [3]uint32) error {
	if err := e.checkDispatch(p, g, uniformOffset, grid); err != nil {
		return err
	}
	if qs == nil || qs.h == nil || index < 0 || 2*index+1 >= qs.Count {
		return fmt.Errorf("webgpu: timestamp pair %d outside the query set", index)
	}
	e.EndPass()
	C.gw_dispatch_timed(e.enc, qs.h, C.uint32_t(index), p.h, g.h, C.uint32_t(uniformOffset), C.uint32_t(grid[0]), C.uint32_t(grid[1]), C.uint32_t(grid[2]))
	return nil
}

// Resolve writes queries [first, first+count) of qs as uint64 nanoseconds into dst at offset.
func (e *Encoder) Resolve(qs *QuerySet, first, count int, dst *Buffer, offset uint64) error {
	if e.enc == nil || qs == nil || qs.h == nil || first < 0 || count <= 0 || first+count > qs.Count {
		return fmt.Errorf("webgpu: resolve of queries %d..%d outside the query set", first, first+count)
	}
	if offset%256 != 0 {
		return fmt.Errorf("webgpu: resolve offset %d not a multiple of 256", offset)
	}
	if err := checkRange(dst, offset, 8*uint64(count)); err != nil {
		return err
	}
	e.EndPass()
	C.wgpuCommandEncoderResolveQuerySet(e.enc, qs.h, C.uint32_t(first), C.uint32_t(count), dst.h, C.uint64_t(offset))
	return nil
}

// EndPass closes the current compute pass, if any.
func (e *Encoder) EndPass() {
	if e.pass != nil {
		C.wgpuComputePassEncoderEnd(e.pass)
		C.wgpuComputePassEncoderRelease(e.pass)
		e.pass = nil
	}
}

// Copy records a buffer-to-buffer copy (offsets and size multiples of 4), outside any pass.
func (e *Encoder) Copy(src *Buffer, srcOff uint64, dst *Buffer, dstOff, size uint64) error {
	if e.enc == nil {
		return errors.New("webgpu: encoder already submitted")
	}
	if err := checkRange(src, srcOff, size); err != nil {
		return err
	}
	if err := checkRange(dst, dstOff, size); err != nil {
		return err
	}
	if src == dst && srcOff < dstOff+size && dstOff < srcOff+size {
		return errors.New("webgpu: copy between overlapping ranges of one buffer")
	}
	if size == 0 {
		return nil
	}
	e.EndPass()
	C.wgpuCommandEncoderCopyBufferToBuffer(e.enc, src.h, C.uint64_t(srcOff), dst.h, C.uint64_t(dstOff), C.uint64_t(size))
	return nil
}

// Submit finishes the command buffer and submits it, returning its sequence number. A
// command buffer that fails validation is dropped rather than submitted, and the error
// is returned.
func (e *Encoder) Submit() (uint64, error) {
	e.EndPass()
	var cb C.WGPUCommandBuffer
	err := e.d.scoped("finish command buffer", func() { cb = C.wgpuCommandEncoderFinish(e.enc, nil) })
	C.wgpuCommandEncoderRelease(e.enc)
	e.enc = nil
	if err != nil || cb == nil {
		if cb != nil {
			C.wgpuCommandBufferRelease(cb)
		}
		return 0, fmt.Errorf("webgpu: command buffer rejected: %v", err)
	}
	return uint64(C.gw_submit(e.d.d, cb)), nil
}

// Discard drops everything recorded so far without submitting it.
func (e *Encoder) Discard() {
	e.EndPass()
	if e.enc != nil {
		C.wgpuCommandEncoderRelease(e.enc)
		e.enc = nil
	}
}

// Wait blocks until the submission with sequence number seq has completed.
func (d *Device) Wait(seq uint64) error {
	C.gw_wait(d.d, C.uint64_t(seq))
	return nil
}

// WaitIdle blocks until all submitted work has completed.
func (d *Device) WaitIdle() error { return d.Wait(uint64(d.d.submitted)) }

// Completed polls the device and returns the highest completed sequence number.
func (d *Device) Completed() uint64 {
	C.gw_poll(d.d)
	return uint64(d.d.completed)
}

// Submitted returns the sequence number of the latest submission.
func (d *Device) Submitted() uint64 { return uint64(d.d.submitted) }

// Errors returns how many uncaptured errors the device has seen and the last message.
func (d *Device) Errors() (int, string) {
	return int(d.d.error_count), C.GoString(&d.d.last_error[0])
}
