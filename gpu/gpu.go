// Package gpu is the ground floor of ggml-wgpu: a thin cgo layer over the wgpu-native
// C API that owns instances, adapters, devices, buffers, pipelines, bind groups and command
// encoding. It calls the C API directly (never through callbacks that hold Go memory), so
// the known defects of the Go binding's MapAsync and error callbacks do not apply.
//
// The library is loaded into other people's processes, and a Rust panic inside
// wgpu-native aborts the whole process. So every exported entry point validates its input
// first (validate.go) and returns an error instead of passing wgpu-native anything it
// would panic on; a nil or released object is an error, never a crash. Every wait for the
// GPU has a deadline (Device.Timeout); a wait that runs past it, or a device-lost report,
// marks the device lost, and from then on every call on it fails at once with an error
// wrapping ErrDeviceLost, without calling into wgpu-native.
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
	"math"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	// Linked for its static libwgpu_native.a; this package calls the C API itself.
	_ "github.com/cogentcore/webgpu/wgpu"
)

// The usage bits of validate.go are the header's: a mismatch makes an array type of
// non-zero length that cannot be assigned to a zero-length one, and fails to compile.
var (
	_ [0]struct{} = [usageMapRead ^ C.WGPUBufferUsage_MapRead]struct{}{}
	_ [0]struct{} = [usageCopySrc ^ C.WGPUBufferUsage_CopySrc]struct{}{}
	_ [0]struct{} = [usageCopyDst ^ C.WGPUBufferUsage_CopyDst]struct{}{}
	_ [0]struct{} = [usageUniform ^ C.WGPUBufferUsage_Uniform]struct{}{}
	_ [0]struct{} = [usageStorage ^ C.WGPUBufferUsage_Storage]struct{}{}
	_ [0]struct{} = [usageQueryResolve ^ C.WGPUBufferUsage_QueryResolve]struct{}{}
	_ [0]struct{} = [maxLayoutStorage ^ C.GW_MAX_STORAGE]struct{}{}
)

// EnvTimeout is the environment variable that bounds every wait for the GPU, in
// milliseconds. The package reads it when a device is requested and opened; the result is
// the Device's Timeout, which the caller may change afterwards.
const EnvTimeout = "GGML_WGPU_TIMEOUT_MS"

// DefaultTimeout bounds every wait for the GPU when EnvTimeout is unset or invalid.
const DefaultTimeout = 60 * time.Second

// ErrDeviceLost is wrapped by the errors of a device that was lost or whose wait timed out.
var ErrDeviceLost = errors.New("device lost")

// timeoutFromEnv returns the wait deadline EnvTimeout asks for, or DefaultTimeout.
func timeoutFromEnv() time.Duration {
	ms, err := strconv.ParseInt(os.Getenv(EnvTimeout), 10, 64)
	if err != nil || ms <= 0 {
		return DefaultTimeout
	}
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ms) * time.Millisecond
}

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

// Adapters lists the Vulkan adapters of the instance, in the order wgpu-native reports them
// (none for a nil instance, or when host memory for the list cannot be had).
func (in *Instance) Adapters() []*Adapter {
	if in == nil || in.h == nil {
		return nil
	}
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
	if a == nil {
		return 0, 0, false
	}
	var t, f C.uint64_t
	if C.gw_vk_memory(C.uint32_t(a.Info.VendorID), C.uint32_t(a.Info.DeviceID), &t, &f) == 0 {
		return 0, 0, false
	}
	return uint64(f), uint64(t), true
}

// PCIBusID returns the adapter's PCI bus location, lower-case "domain:bus:device.function"
// (e.g. "0000:c1:00.0"), read through the Vulkan loader (VK_EXT_pci_bus_info). ok is false
// when that cannot be told: no loader, no such extension (software adapters), or several
// Vulkan devices with the adapter's vendor and device IDs.
func (a *Adapter) PCIBusID() (id string, ok bool) {
	if a == nil {
		return "", false
	}
	var loc [4]C.uint32_t
	if C.gw_vk_pci_bus(C.uint32_t(a.Info.VendorID), C.uint32_t(a.Info.DeviceID), &loc[0]) == 0 {
		return "", false
	}
	return FormatPCIBusID(uint32(loc[0]), uint32(loc[1]), uint32(loc[2]), uint32(loc[3])), true
}

// ComputeUnits returns the adapter's multiprocessor count (NVIDIA's SMs, through the Vulkan
// loader's VK_NV_shader_sm_builtins), which WebGPU does not report: how many workgroups of
// a kernel that fills a multiprocessor run at once. ok is false when that cannot be told
// (no loader, another vendor, a software adapter).
func (a *Adapter) ComputeUnits() (n uint32, ok bool) {
	if a == nil {
		return 0, false
	}
	var u C.uint32_t
	if C.gw_vk_compute_units(C.uint32_t(a.Info.VendorID), C.uint32_t(a.Info.DeviceID), &u) == 0 {
		return 0, false
	}
	return uint32(u), true
}

// FormatPCIBusID writes a PCI location the way ggml's device_id property expects it.
func FormatPCIBusID(domain, bus, device, function uint32) string {
	return fmt.Sprintf("%04x:%02x:%02x.%x", domain, bus, device, function)
}

// maxRequestableBufferSize caps maxBufferSize: the adapter reports 2^64-1, which as a
// requested limit means "undefined" and silently yields the 256 MiB default.
const maxRequestableBufferSize = 1 << 40

// Device is an open logical device with its queue.
type Device struct {
	d *C.gw_device
	// Limits are the device's limits as granted. The checks use a private copy, so
	// changing these changes nothing.
	Limits Limits
	// Timeout bounds every wait for the GPU (a submission, a readback, an error scope):
	// EnvTimeout's value when the device was requested (that request had the same bound),
	// else DefaultTimeout; the caller may change it, zero or less meaning DefaultTimeout.
	// A wait that runs out of time marks the device lost.
	Timeout time.Duration
	// OnMapped, when set, is called when a read served from a read ahead has its staging
	// buffer mapped, before the copy out of it (the host's timeline).
	OnMapped func()
	lim      Limits
	layout   map[Layout]C.WGPUBindGroupLayout
	stage    *Buffer // reusable readback buffer
	ahead    aheads  // reads made ahead (ReadAhead)
	prewake  prewake // SetPrewake
	lost     error
	live     atomic.Uint64 // bytes of the buffers created and not released
}

// LiveBytes returns the bytes of the device's buffers that are not released: what it
// holds of the GPU's memory in buffers.
func (d *Device) LiveBytes() uint64 { return d.live.Load() }

// Open requests a device with the adapter's own limits (clamped where the binding needs it).
func (a *Adapter) Open() (*Device, error) { return a.open(false) }

// OpenWithTimestamps is Open, also asking for timestamp queries (Device.Timestamps says
// whether the adapter granted them).
func (a *Adapter) OpenWithTimestamps() (*Device, error) { return a.open(true) }

func (a *Adapter) open(timestamps bool) (*Device, error) {
	if a == nil || a.h == nil {
		return nil, errors.New("webgpu: open of a nil adapter")
	}
	lim := a.limits
	if lim.maxBufferSize > maxRequestableBufferSize {
		lim.maxBufferSize = maxRequestableBufferSize
	}
	if lim.maxStorageBufferBindingSize > C.uint64_t(lim.maxBufferSize) {
		lim.maxStorageBufferBindingSize = lim.maxBufferSize
	}
	timeout := timeoutFromEnv()
	var msg [512]C.char
	ts := C.int(0)
	if timestamps {
		ts = 1
	}
	d := C.gw_open(a.h, &lim, ts, C.uint64_t(timeout.Milliseconds()), &msg[0], C.size_t(len(msg)))
	if d == nil {
		return nil, fmt.Errorf("webgpu: request device on %q: %s", a.Info.Device, C.GoString(&msg[0]))
	}
	var got C.WGPUSupportedLimits
	C.wgpuDeviceGetLimits(d.device, &got)
	l := got.limits
	lims := Limits{
		MaxBufferSize:                   uint64(l.maxBufferSize),
		MaxStorageBufferBindingSize:     uint64(l.maxStorageBufferBindingSize),
		MaxUniformBufferBindingSize:     uint64(l.maxUniformBufferBindingSize),
		MinStorageBufferOffsetAlignment: uint32(l.minStorageBufferOffsetAlignment),
		MinUniformBufferOffsetAlignment: uint32(l.minUniformBufferOffsetAlignment),
		MaxStorageBuffersPerShaderStage: uint32(l.maxStorageBuffersPerShaderStage),
		MaxComputeInvocationsPerGroup:   uint32(l.maxComputeInvocationsPerWorkgroup),
		MaxComputeWorkgroupStorageSize:  uint32(l.maxComputeWorkgroupStorageSize),
		MaxComputeWorkgroupsPerDim:      uint32(l.maxComputeWorkgroupsPerDimension),
	}
	return &Device{d: d, Limits: lims, lim: lims, Timeout: timeout, layout: map[Layout]C.WGPUBindGroupLayout{}}, nil
}

// SetWaitSpin sets how long a wait for the GPU yields between its polls before it sleeps
// between them (2 ms from Open): a sleep notices the GPU's end tens of µs late. Call it
// before the device's first wait.
func (d *Device) SetWaitSpin(t time.Duration) {
	if d != nil && d.d != nil && t >= 0 {
		d.d.spin_us = C.uint64_t(t.Microseconds())
	}
}

// prewake is SetPrewake's setting, and how long the last wait for a read made ahead
// lasted.
type prewake struct {
	lead, spin time.Duration
	last       time.Duration
}

// SetPrewake has a wait for the GPU whose end makes a read ahead ready (the host reads its
// logits next) wake the copy pool of the reads out of mapped memory lead before the last
// such wait's length, to watch for the copy for spin: a copy then finds the pool's threads
// running, where waking them takes tens of µs. Zero spin (the default) turns it off.
func (d *Device) SetPrewake(lead, spin time.Duration) {
	if d != nil && lead >= 0 && spin >= 0 {
		d.prewake.lead, d.prewake.spin = lead, spin
	}
}

// Lost returns why the device is lost (an error wrapping ErrDeviceLost: the device-lost
// report, or the wait that timed out), or nil while it is usable or after a clean Close.
func (d *Device) Lost() error {
	if d == nil {
		return nil
	}
	if d.lost == nil && d.d != nil && d.d.lost != 0 {
		d.lost = fmt.Errorf("webgpu: %w: %s", ErrDeviceLost, C.GoString(&d.d.lost_reason[0]))
	}
	return d.lost
}

// usable returns nil when calls may go to wgpu-native, else why not.
func (d *Device) usable() error {
	if d == nil {
		return errors.New("webgpu: nil device")
	}
	if err := d.Lost(); err != nil {
		return err
	}
	if d.d == nil {
		return errors.New("webgpu: device already closed")
	}
	return nil
}

// timeoutMS returns the wait deadline in milliseconds for the C helpers.
func (d *Device) timeoutMS() C.uint64_t {
	t := d.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	return C.uint64_t(max(t.Milliseconds(), 1))
}

// waitErr turns a GW_ result of a C helper into an error.
func (d *Device) waitErr(rc C.int, what string) error {
	switch rc {
	case C.GW_OK:
		return nil
	case C.GW_TIMEOUT, C.GW_LOST:
		err := d.Lost()
		if err == nil { // the C side marks the device before it says so; not reached
			err = fmt.Errorf("webgpu: %w: %s", ErrDeviceLost, what)
		}
		if rc == C.GW_TIMEOUT {
			err = fmt.Errorf("%w (the limit is Device.Timeout, which %s sets)", err, EnvTimeout)
		}
		return err
	case C.GW_NOMEM:
		return fmt.Errorf("webgpu: %s: out of host memory", what)
	case C.GW_MAP_FAILED:
		return fmt.Errorf("webgpu: %s: mapping the readback buffer failed", what)
	}
	return fmt.Errorf("webgpu: %s failed (code %d)", what, int(rc))
}

// Timestamps reports whether the device can time compute passes.
func (d *Device) Timestamps() bool { return d != nil && d.d != nil && d.d.timestamps != 0 }

// QuerySet holds GPU timestamps.
type QuerySet struct {
	h     C.WGPUQuerySet
	d     *Device
	Count int
}

// CreateQuerySet creates a set of count timestamp queries (1 to 4096).
func (d *Device) CreateQuerySet(count int) (*QuerySet, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	if !d.Timestamps() {
		return nil, errors.New("webgpu: the device has no timestamp queries")
	}
	if err := checkQueryCount(count); err != nil {
		return nil, err
	}
	return d.createQuerySet(count)
}

// createQuerySet is CreateQuerySet without the checks.
func (d *Device) createQuerySet(count int) (*QuerySet, error) {
	var h C.WGPUQuerySet
	err := d.scoped("query set", func() { h = C.gw_query_set(d.d, C.uint32_t(count)) })
	if err != nil || h == nil {
		if h != nil && d.Lost() == nil {
			C.wgpuQuerySetRelease(h)
		}
		if err == nil {
			err = errors.New("webgpu: query set: wgpu-native returned NULL")
		}
		return nil, err
	}
	return &QuerySet{h: h, d: d, Count: count}, nil
}

// Release frees the query set. On a lost device the handle is only dropped.
func (q *QuerySet) Release() {
	if q == nil || q.h == nil {
		return
	}
	if q.d.Lost() == nil {
		C.wgpuQuerySetRelease(q.h)
	}
	q.h = nil
}

// querySetState returns what the checks know of q on d.
func (d *Device) querySetState(q *QuerySet) objState {
	switch {
	case q == nil:
		return objNil
	case q.h == nil:
		return objReleased
	case q.d != d:
		return objForeign
	}
	return objLive
}

// UsageTimestamps is the usage of a buffer that receives resolved timestamps.
const UsageTimestamps = usageQueryResolve | usageCopySrc

// Close waits for outstanding work and releases the device. A lost device, or one whose
// work does not finish within Timeout, is left allocated: wgpu-native's teardown waits for
// the device and may abort the process over a dead one.
func (d *Device) Close() {
	if d == nil || d.d == nil {
		return
	}
	if d.Lost() == nil {
		C.gw_wait(d.d, d.d.submitted, d.timeoutMS())
	}
	if d.Lost() == nil {
		for _, l := range d.layout {
			C.wgpuBindGroupLayoutRelease(l)
		}
		d.stage.Release()
		d.ahead.close(d)
		C.gw_close(d.d, d.timeoutMS())
	}
	d.layout = nil
	d.stage = nil
	d.d = nil
}

// scoped runs f inside validation and out-of-memory error scopes and returns the scopes'
// error, or the device's when it was lost meanwhile.
func (d *Device) scoped(what string, f func()) error {
	C.gw_push_scope(d.d)
	f()
	var msg [1024]C.char
	switch rc := C.gw_pop_scope(d.d, d.timeoutMS(), &msg[0], C.size_t(len(msg))); rc {
	case 0:
		return d.Lost()
	case 1:
		return fmt.Errorf("webgpu: %s: %s", what, C.GoString(&msg[0]))
	default:
		return d.waitErr(rc, what)
	}
}

// Buffer usages.
const (
	UsageStorage = usageStorage | usageCopySrc | usageCopyDst
	UsageUniform = usageUniform | usageCopyDst
	usageStaging = usageMapRead | usageCopyDst
)

// Buffer is a GPU buffer.
type Buffer struct {
	h     C.WGPUBuffer
	d     *Device
	id    uint64
	usage uint32
	Size  uint64
	// writes counts the queue writes to the buffer (a read made ahead before one is stale).
	writes uint64
}

// bufferIDs numbers buffers so that the checks can tell them apart with plain values.
var bufferIDs atomic.Uint64

// CreateBuffer creates a buffer of size bytes (rounded up to 4; at least 1, at most the
// device's maxBufferSize) with the given usage.
func (d *Device) CreateBuffer(size uint64, usage uint32) (*Buffer, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	size, err := checkBufferDesc(size, usage, d.lim.MaxBufferSize)
	if err != nil {
		return nil, err
	}
	return d.createBuffer(size, usage)
}

// createBuffer is CreateBuffer without the checks.
func (d *Device) createBuffer(size uint64, usage uint32) (*Buffer, error) {
	var h C.WGPUBuffer
	err := d.scoped("create buffer", func() {
		desc := C.WGPUBufferDescriptor{usage: C.WGPUFlags(usage), size: C.uint64_t(size)}
		h = C.wgpuDeviceCreateBuffer(d.d.device, &desc)
	})
	if err != nil || h == nil {
		if h != nil && d.Lost() == nil {
			C.wgpuBufferRelease(h)
		}
		if err == nil {
			err = errors.New("webgpu: create buffer: wgpu-native returned NULL")
		}
		return nil, err
	}
	d.live.Add(size)
	return &Buffer{h: h, d: d, id: bufferIDs.Add(1), usage: usage, Size: size}, nil
}

// Release destroys the buffer. Work already submitted that uses it completes first. On a
// lost device the handle is only dropped.
func (b *Buffer) Release() {
	if b == nil || b.h == nil {
		return
	}
	if b.d.Lost() == nil {
		C.wgpuBufferDestroy(b.h)
		C.wgpuBufferRelease(b.h)
	}
	b.h = nil
	b.d.live.Add(^(b.Size - 1)) // less b.Size
}

// Alive reports whether the buffer has not been released.
func (b *Buffer) Alive() bool { return b != nil && b.h != nil }

// bufferState returns what the checks know of b on d.
func (d *Device) bufferState(b *Buffer) objState {
	switch {
	case b == nil:
		return objNil
	case b.h == nil:
		return objReleased
	case b.d != d:
		return objForeign
	}
	return objLive
}

// span describes offset and size of b for the checks.
func (d *Device) span(b *Buffer, offset, size uint64) span {
	s := span{state: d.bufferState(b), offset: offset, size: size}
	if b != nil {
		s.id, s.bufSize, s.usage = b.id, b.Size, b.usage
	}
	return s
}

// Write copies data into the buffer at offset through the queue (ordered with submissions).
// offset and len(data) must be multiples of 4.
func (d *Device) Write(b *Buffer, offset uint64, data []byte) error {
	if err := d.usable(); err != nil {
		return err
	}
	if err := checkTransfer("write destination", d.span(b, offset, uint64(len(data))), usageCopyDst); err != nil {
		return err
	}
	if len(data) == 0 {
		return nil
	}
	d.write(b, offset, data)
	return nil
}

// write is Write without the checks.
func (d *Device) write(b *Buffer, offset uint64, data []byte) {
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	C.wgpuQueueWriteBuffer(d.d.queue, b.h, C.uint64_t(offset), p, C.size_t(len(data)))
	b.writes++
}

// Clear zeroes size bytes at offset (both multiples of 4) through the queue.
func (d *Device) Clear(b *Buffer, offset, size uint64) error {
	if err := d.usable(); err != nil {
		return err
	}
	if err := checkTransfer("clear destination", d.span(b, offset, size), usageCopyDst); err != nil {
		return err
	}
	if size == 0 { // wgpu-native panics on a clear of 0 bytes
		return nil
	}
	return d.clear(b, offset, size)
}

// clear is Clear without the checks. An error scope catches what wgpu-native would
// otherwise only report as an uncaptured error while dropping the clear.
func (d *Device) clear(b *Buffer, offset, size uint64) error {
	var seq C.uint64_t
	err := d.scoped("clear", func() { seq = C.gw_clear(d.d, b.h, C.uint64_t(offset), C.uint64_t(size)) })
	if err == nil && seq == 0 {
		err = errors.New("webgpu: clear: out of host memory")
	}
	return err
}

// The reusable readback buffer is sized to the reads: at least stagingMin bytes, grown
// to the next power of two a read needs up to stagingChunk, through which longer reads
// go a chunk at a time. A decode's logits (128256 floats) take 1 MiB.
const (
	stagingMin   = 1 << 20
	stagingChunk = 4 << 20
)

// stagingSize returns the readback buffer's size for a read of n bytes (given the buffer
// size limit): a power of two from stagingMin to stagingChunk.
func stagingSize(n, limit uint64) uint64 {
	size := uint64(stagingMin)
	for size < n && size < stagingChunk {
		size *= 2
	}
	return min(size, limit&^3)
}

// Read copies len(dst) bytes at offset (both multiples of 4) into dst, waiting for all work
// submitted before it (each wait at most Timeout).
func (d *Device) Read(b *Buffer, offset uint64, dst []byte) error {
	if err := d.usable(); err != nil {
		return err
	}
	if err := checkTransfer("readback source", d.span(b, offset, uint64(len(dst))), usageCopySrc); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	if ok, err := d.ahead.take(d, b, offset, dst); ok || err != nil {
		return err
	}
	return d.read(b, offset, dst)
}

// read is Read without the checks (but for the error scope).
func (d *Device) read(b *Buffer, offset uint64, dst []byte) error {
	if want := stagingSize(uint64(len(dst)), d.lim.MaxBufferSize); d.stage == nil || d.stage.Size < want {
		s, err := d.CreateBuffer(want, usageStaging)
		if err != nil {
			return err
		}
		if d.stage != nil {
			d.stage.Release()
		}
		d.stage = s
	}
	for done := uint64(0); done < uint64(len(dst)); {
		n := min(uint64(len(dst))-done, d.stage.Size)
		// The scope turns a copy that wgpu-native drops (and would let the readback return
		// stale bytes) into an error.
		var rc C.int
		var p unsafe.Pointer
		err := d.scoped("readback", func() {
			p = C.gw_read_map(d.d, b.h, C.uint64_t(offset+done), C.uint64_t(n), d.stage.h, d.timeoutMS(), &rc)
		})
		if p == nil {
			return d.waitErr(rc, "readback")
		}
		copyParallel(dst[done:done+n], unsafe.Slice((*byte)(p), n))
		C.gw_unmap(d.stage.h)
		if err != nil {
			return err
		}
		done += n
	}
	return nil
}

// Layout is the bind group layout of a pipeline: one dynamic-offset uniform buffer at
// binding 0 and Storage storage buffers at bindings 1..Storage, read_write except those
// whose bit is set in ReadOnly (bit i for binding i+1), which the kernel declares
// var<storage, read>.
//
// A read-only binding lets the GPU's compiler know the kernel never writes it. WebGPU
// forbids binding one buffer both read-only and writable in one dispatch, so a read-only
// binding's buffer must be bound by no other binding that is not read-only (checkBindGroup).
type Layout struct {
	Storage  int
	ReadOnly uint32
}

// Pipeline is a compute pipeline of a Layout.
type Pipeline struct {
	h      C.WGPUComputePipeline
	d      *Device
	layout C.WGPUBindGroupLayout
	Layout
}

// CreatePipeline compiles WGSL source (entry point "main") into a compute pipeline with
// storage read_write storage bindings.
func (d *Device) CreatePipeline(label, source string, storage int) (*Pipeline, error) {
	return d.CreatePipelineLayout(label, source, Layout{Storage: storage})
}

// CreatePipelineLayout compiles WGSL source (entry point "main") into a compute pipeline of
// layout l.
func (d *Device) CreatePipelineLayout(label, source string, l Layout) (*Pipeline, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	if err := checkShader(source, l, &d.lim); err != nil {
		return nil, fmt.Errorf("%w (pipeline %s)", err, label)
	}
	return d.createPipeline(label, source, l)
}

// createPipeline is CreatePipelineLayout without the checks.
func (d *Device) createPipeline(label, source string, l Layout) (*Pipeline, error) {
	bgl, ok := d.layout[l]
	if !ok {
		err := d.scoped("bind group layout", func() { bgl = C.gw_layout(d.d, C.uint32_t(l.Storage), C.uint32_t(l.ReadOnly)) })
		if err != nil || bgl == nil {
			if bgl != nil && d.Lost() == nil {
				C.wgpuBindGroupLayoutRelease(bgl)
			}
			return nil, fmt.Errorf("webgpu: layout with %d storage buffers: %v", l.Storage, err)
		}
		d.layout[l] = bgl
	}
	src := C.gw_strndup((*C.char)(unsafe.Pointer(unsafe.StringData(source))), C.size_t(len(source)))
	if src == nil {
		return nil, errors.New("webgpu: out of host memory for the shader source")
	}
	defer C.free(unsafe.Pointer(src))
	var mod C.WGPUShaderModule
	if err := d.scoped("compile "+label, func() { mod = C.gw_shader(d.d, src) }); err != nil {
		if mod != nil && d.Lost() == nil {
			C.wgpuShaderModuleRelease(mod)
		}
		return nil, err
	}
	defer func() {
		if d.Lost() == nil {
			C.wgpuShaderModuleRelease(mod)
		}
	}()
	var p C.WGPUComputePipeline
	if err := d.scoped("pipeline "+label, func() { p = C.gw_pipeline(d.d, mod, bgl) }); err != nil || p == nil {
		if p != nil && d.Lost() == nil {
			C.wgpuComputePipelineRelease(p)
		}
		return nil, fmt.Errorf("webgpu: pipeline %s: %v", label, err)
	}
	return &Pipeline{h: p, d: d, layout: bgl, Layout: l}, nil
}

// Release frees the pipeline. On a lost device the handle is only dropped.
func (p *Pipeline) Release() {
	if p == nil || p.h == nil {
		return
	}
	if p.d.Lost() == nil {
		C.wgpuComputePipelineRelease(p.h)
	}
	p.h = nil
}

// pipelineState returns what the checks know of p on d.
func (d *Device) pipelineState(p *Pipeline) objState {
	switch {
	case p == nil:
		return objNil
	case p.h == nil:
		return objReleased
	case p.d != d:
		return objForeign
	}
	return objLive
}

// Binding is a byte range of a buffer bound as a storage buffer.
type Binding struct {
	Buffer       *Buffer
	Offset, Size uint64
	// ReadOnly says the kernel never writes this binding (declared read_write all the same
	// unless the pipeline's Layout makes it read-only storage). Read-only bindings may
	// overlap each other in any way.
	ReadOnly bool
	// MayOverlap says the kernel is written for this range to overlap another binding of
	// the same buffer, a written one included, without being identical to it.
	//
	// Without either flag, two bindings of one buffer must be disjoint or identical: a
	// partial overlap is rejected (see checkOverlap).
	MayOverlap bool
}

// BindGroup binds a uniform buffer (dynamic offset, window of UniformSize bytes) and
// storage ranges to a pipeline's layout.
type BindGroup struct {
	h       C.WGPUBindGroup
	d       *Device
	layout  C.WGPUBindGroupLayout
	uniform *Buffer
	window  uint64
	bufs    []*Buffer // the storage buffers, in binding order
}

// CreateBindGroup creates a bind group for p: uniform bound at 0 as a window of uniformSize
// bytes (a dispatch's dynamic offset moves it), storage at 1..len(storage). The checks are
// those of checkBindGroup.
func (d *Device) CreateBindGroup(p *Pipeline, uniform *Buffer, uniformSize uint64, storage []Binding) (*BindGroup, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	if err := d.pipelineState(p).check("bind group's pipeline"); err != nil {
		return nil, err
	}
	spans := make([]span, len(storage))
	for i, s := range storage {
		spans[i] = d.span(s.Buffer, s.Offset, s.Size)
		spans[i].readOnly, spans[i].mayOverlap = s.ReadOnly, s.MayOverlap
	}
	if err := checkBindGroup(p.Layout, d.span(uniform, 0, uniformSize), spans, &d.lim); err != nil {
		return nil, err
	}
	return d.createBindGroup(p, uniform, uniformSize, storage)
}

// createBindGroup is CreateBindGroup without the checks (at most maxLayoutStorage
// bindings).
func (d *Device) createBindGroup(p *Pipeline, uniform *Buffer, uniformSize uint64, storage []Binding) (*BindGroup, error) {
	var bufs [maxLayoutStorage]C.WGPUBuffer
	var offs, sizes [maxLayoutStorage]C.uint64_t
	keep := make([]*Buffer, len(storage))
	for i, s := range storage {
		if s.Buffer != nil {
			bufs[i] = s.Buffer.h
		}
		offs[i], sizes[i] = C.uint64_t(s.Offset), C.uint64_t(s.Size)
		keep[i] = s.Buffer
	}
	var uh C.WGPUBuffer
	if uniform != nil {
		uh = uniform.h
	}
	var g C.WGPUBindGroup
	err := d.scoped("bind group", func() {
		g = C.gw_bind_group(d.d, p.layout, uh, C.uint64_t(uniformSize), C.uint32_t(len(storage)), &bufs[0], &offs[0], &sizes[0])
	})
	if err != nil || g == nil {
		if g != nil && d.Lost() == nil {
			C.wgpuBindGroupRelease(g)
		}
		return nil, fmt.Errorf("webgpu: bind group: %v", err)
	}
	return &BindGroup{h: g, d: d, layout: p.layout, uniform: uniform, window: uniformSize, bufs: keep}, nil
}

// Release frees the bind group. On a lost device the handle is only dropped.
func (g *BindGroup) Release() {
	if g == nil || g.h == nil {
		return
	}
	if g.d.Lost() == nil {
		C.wgpuBindGroupRelease(g.h)
	}
	g.h = nil
}

// buffersLive returns an error when a buffer the group binds was released since.
// (wgpu-native aborts the process on a submission that uses a destroyed buffer.)
func (g *BindGroup) buffersLive() error {
	if !g.uniform.Alive() {
		return errors.New("webgpu: the bind group's uniform buffer was released")
	}
	for i, b := range g.bufs {
		if !b.Alive() {
			return fmt.Errorf("webgpu: the buffer of the bind group's storage binding %d was released", i)
		}
	}
	return nil
}

// Alive reports whether the bind group has not been released.
func (g *BindGroup) Alive() bool { return g != nil && g.h != nil }

// groupState returns what the checks know of g on d.
func (d *Device) groupState(g *BindGroup) objState {
	switch {
	case g == nil:
		return objNil
	case g.h == nil:
		return objReleased
	case g.d != d:
		return objForeign
	}
	return objLive
}

// Encoder records compute passes and copies into one command buffer.
type Encoder struct {
	d      *Device
	enc    C.WGPUCommandEncoder
	pass   C.WGPUComputePassEncoder
	err    error        // why the encoder cannot record (the device was unusable)
	groups []*BindGroup // bind groups of the recorded dispatches
	bufs   []*Buffer    // buffers of the recorded copies and resolves
	// passQS and passIndex time the next compute pass Dispatch opens (TimeNextPass).
	passQS    *QuerySet
	passIndex int
}

// NewEncoder starts a command buffer. On an unusable device it returns an encoder whose
// every method fails with the device's error.
func (d *Device) NewEncoder() *Encoder {
	if err := d.usable(); err != nil {
		return &Encoder{d: d, err: err}
	}
	return &Encoder{d: d, enc: C.wgpuDeviceCreateCommandEncoder(d.d.device, nil)}
}

// live returns nil when the encoder can record.
func (e *Encoder) live() error {
	switch {
	case e == nil:
		return errors.New("webgpu: nil encoder")
	case e.err != nil:
		return e.err
	}
	if err := e.d.usable(); err != nil {
		return err
	}
	if e.enc == nil {
		return errors.New("webgpu: encoder already submitted or discarded")
	}
	return nil
}

// checkDispatch validates a dispatch before wgpu-native sees it: a live encoder, pipeline
// and bind group of this device, the group made for the pipeline's layout and its buffers
// all still alive, a uniform offset on the alignment whose window fits the uniform buffer,
// and every workgroup count within the device's limit (zero workgroups records nothing).
func (e *Encoder) checkDispatch(p *Pipeline, g *BindGroup, uniformOffset uint32, grid [3]uint32) error {
	if err := e.live(); err != nil {
		return err
	}
	d := e.d
	if err := d.pipelineState(p).check("dispatch's pipeline"); err != nil {
		return err
	}
	if err := d.groupState(g).check("dispatch's bind group"); err != nil {
		return err
	}
	if g.layout != p.layout {
		return errors.New("webgpu: bind group made for another pipeline layout")
	}
	if err := g.buffersLive(); err != nil {
		return err
	}
	if err := checkUniformOffset(uniformOffset, g.window, g.uniform.Size, d.lim.MinUniformBufferOffsetAlignment); err != nil {
		return err
	}
	return checkGrid(grid, d.lim.MaxComputeWorkgroupsPerDim)
}

// uses notes a bind group the recorded commands use (checked again at Submit).
func (e *Encoder) uses(g *BindGroup) {
	if n := len(e.groups); n == 0 || e.groups[n-1] != g {
		e.groups = append(e.groups, g)
	}
}

// Dispatch records one dispatch in the current compute pass (opening one if needed).
func (e *Encoder) Dispatch(p *Pipeline, g *BindGroup, uniformOffset uint32, grid [3]uint32) error {
	if err := e.checkDispatch(p, g, uniformOffset, grid); err != nil {
		return err
	}
	if grid[0] == 0 || grid[1] == 0 || grid[2] == 0 {
		return nil
	}
	if e.pass == nil && e.passQS != nil {
		if err := e.d.querySetState(e.passQS).check("timestamp query set"); err != nil {
			return err
		}
	}
	e.dispatch(p, g, uniformOffset, grid)
	return nil
}

// dispatch is Dispatch without the checks.
func (e *Encoder) dispatch(p *Pipeline, g *BindGroup, uniformOffset uint32, grid [3]uint32) {
	if e.pass == nil {
		if qs := e.passQS; qs != nil {
			e.pass = C.gw_begin_timed_pass(e.enc, qs.h, C.uint32_t(e.passIndex))
			e.passQS = nil
		} else {
			e.pass = C.wgpuCommandEncoderBeginComputePass(e.enc, nil)
		}
	}
	C.gw_dispatch(e.pass, p.h, g.h, C.uint32_t(uniformOffset), C.uint32_t(grid[0]), C.uint32_t(grid[1]), C.uint32_t(grid[2]))
	e.uses(g)
}

// checkTimestampPair validates queries 2*index and 2*index+1 of qs, a live query set of d.
func (d *Device) checkTimestampPair(qs *QuerySet, index int) error {
	if err := d.querySetState(qs).check("timestamp query set"); err != nil {
		return err
	}
	if index < 0 || index > math.MaxInt32 {
		return fmt.Errorf("webgpu: timestamp pair %d outside the query set", index)
	}
	return checkQueries(2*index, 2, qs.Count)
}

// TimeNextPass makes the next compute pass that Dispatch opens write its start and end
// times to queries 2*index and 2*index+1 of qs: the GPU time of all the dispatches the
// pass holds, the barriers between them included, without a pass per dispatch.
func (e *Encoder) TimeNextPass(qs *QuerySet, index int) error {
	if err := e.live(); err != nil {
		return err
	}
	if err := e.d.checkTimestampPair(qs, index); err != nil {
		return err
	}
	e.EndPass()
	e.passQS, e.passIndex = qs, index
	return nil
}

// DispatchTimed records one dispatch in a compute pass of its own, writing its start and
// end times to queries 2*index and 2*index+1 of qs.
func (e *Encoder) DispatchTimed(qs *QuerySet, index int, p *Pipeline, g *BindGroup, uniformOffset uint32, grid [3]uint32) error {
	if err := e.checkDispatch(p, g, uniformOffset, grid); err != nil {
		return err
	}
	if err := e.d.checkTimestampPair(qs, index); err != nil {
		return err
	}
	e.EndPass()
	C.gw_dispatch_timed(e.enc, qs.h, C.uint32_t(index), p.h, g.h, C.uint32_t(uniformOffset), C.uint32_t(grid[0]), C.uint32_t(grid[1]), C.uint32_t(grid[2]))
	e.uses(g)
	return nil
}

// Resolve writes queries [first, first+count) of qs as uint64 nanoseconds into dst at
// offset (a multiple of 256).
func (e *Encoder) Resolve(qs *QuerySet, first, count int, dst *Buffer, offset uint64) error {
	if err := e.live(); err != nil {
		return err
	}
	if err := e.d.querySetState(qs).check("resolved query set"); err != nil {
		return err
	}
	if err := checkQueries(first, count, qs.Count); err != nil {
		return err
	}
	if err := checkResolve(e.d.span(dst, offset, 8*uint64(count))); err != nil {
		return err
	}
	e.EndPass()
	C.wgpuCommandEncoderResolveQuerySet(e.enc, qs.h, C.uint32_t(first), C.uint32_t(count), dst.h, C.uint64_t(offset))
	e.bufs = append(e.bufs, dst)
	return nil
}

// EndPass closes the current compute pass, if any.
func (e *Encoder) EndPass() {
	if e == nil || e.pass == nil {
		return
	}
	if e.d.Lost() == nil {
		C.wgpuComputePassEncoderEnd(e.pass)
		C.wgpuComputePassEncoderRelease(e.pass)
	}
	e.pass = nil
}

// Copy records a buffer-to-buffer copy (offsets and size multiples of 4), outside any pass.
func (e *Encoder) Copy(src *Buffer, srcOff uint64, dst *Buffer, dstOff, size uint64) error {
	if err := e.live(); err != nil {
		return err
	}
	if err := checkCopy(e.d.span(src, srcOff, size), e.d.span(dst, dstOff, size)); err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	e.EndPass()
	C.wgpuCommandEncoderCopyBufferToBuffer(e.enc, src.h, C.uint64_t(srcOff), dst.h, C.uint64_t(dstOff), C.uint64_t(size))
	e.bufs = append(e.bufs, src, dst)
	return nil
}

// recordedLive returns an error when a buffer the recorded commands use was released
// after they were recorded.
func (e *Encoder) recordedLive() error {
	for _, g := range e.groups {
		if err := g.buffersLive(); err != nil {
			return fmt.Errorf("%w after the dispatch was recorded", err)
		}
	}
	for _, b := range e.bufs {
		if !b.Alive() {
			return errors.New("webgpu: a buffer of a recorded copy or resolve was released")
		}
	}
	return nil
}

// Submit finishes the command buffer and submits it, returning its sequence number. A
// command buffer that fails validation, or uses a buffer released since it was recorded,
// is dropped rather than submitted, and the error is returned.
func (e *Encoder) Submit() (uint64, error) {
	if err := e.live(); err != nil {
		e.Discard()
		return 0, err
	}
	if err := e.recordedLive(); err != nil {
		e.Discard()
		return 0, err
	}
	return e.submit()
}

// submit is Submit without the checks.
func (e *Encoder) submit() (uint64, error) {
	c, err := e.finish()
	if err != nil {
		return 0, err
	}
	return c.submit()
}

// CommandBuffer is a finished recording (Encoder.Finish), submitted later or dropped:
// it goes to exactly one Device.SubmitTogether or Discard.
type CommandBuffer struct {
	d      *Device
	cb     C.WGPUCommandBuffer
	groups []*BindGroup // what the recording uses, checked again before it is submitted
	bufs   []*Buffer
}

// Finish ends the recording without submitting it. Buffers may be released before the
// command buffer is submitted: SubmitTogether checks them then.
func (e *Encoder) Finish() (*CommandBuffer, error) {
	if err := e.live(); err != nil {
		e.Discard()
		return nil, err
	}
	if err := e.recordedLive(); err != nil {
		e.Discard()
		return nil, err
	}
	return e.finish()
}

// finish is Finish without the checks.
func (e *Encoder) finish() (*CommandBuffer, error) {
	d := e.d
	e.EndPass()
	var cb C.WGPUCommandBuffer
	err := d.scoped("finish command buffer", func() { cb = C.wgpuCommandEncoderFinish(e.enc, nil) })
	if d.Lost() == nil {
		C.wgpuCommandEncoderRelease(e.enc)
	}
	c := &CommandBuffer{d: d, cb: cb, groups: e.groups, bufs: e.bufs}
	e.enc, e.groups, e.bufs = nil, nil, nil
	if err != nil || cb == nil {
		c.Discard()
		return nil, fmt.Errorf("webgpu: command buffer rejected: %v", err)
	}
	return c, nil
}

// Check reports whether Device.SubmitTogether would submit the command buffer: it is
// neither spent nor dropped, the device is usable, and the bind groups and buffers it
// uses are alive.
func (c *CommandBuffer) Check() error {
	if c == nil || c.cb == nil {
		return errors.New("webgpu: command buffer already submitted or discarded")
	}
	if err := c.d.usable(); err != nil {
		return err
	}
	for _, g := range c.groups {
		if !g.Alive() {
			return errors.New("webgpu: a bind group of the command buffer was released")
		}
	}
	e := Encoder{groups: c.groups, bufs: c.bufs}
	return e.recordedLive()
}

// submit submits the command buffer without the checks (Encoder.Submit made them).
func (c *CommandBuffer) submit() (uint64, error) {
	cb := c.cb
	c.cb, c.groups, c.bufs = nil, nil, nil
	seq := uint64(C.gw_submit(c.d.d, cb))
	if seq == 0 {
		return 0, errors.New("webgpu: submit: out of host memory")
	}
	return seq, nil
}

// SubmitTogether submits command buffers of d in one submission, in order, returning its
// sequence number: the GPU runs them back to back, without the pause it takes between
// submissions. Unless every one passes Check, none is submitted, all are dropped and the
// first failure is returned.
func (d *Device) SubmitTogether(cbs []*CommandBuffer) (uint64, error) {
	var bad error
	for i, c := range cbs {
		if c != nil && c.d != d && bad == nil {
			bad = errors.New("webgpu: a command buffer of another device")
		}
		if slices.Contains(cbs[:i], c) && bad == nil {
			bad = errors.New("webgpu: a command buffer given twice")
		}
		if err := c.Check(); err != nil && bad == nil {
			bad = err
		}
	}
	if bad == nil && len(cbs) == 0 {
		bad = errors.New("webgpu: no command buffers to submit")
	}
	if bad != nil {
		for _, c := range cbs {
			c.Discard()
		}
		return 0, bad
	}
	hs := make([]C.WGPUCommandBuffer, len(cbs))
	for i, c := range cbs {
		hs[i] = c.cb
		c.cb, c.groups, c.bufs = nil, nil, nil
	}
	seq := uint64(C.gw_submit_n(d.d, &hs[0], C.size_t(len(hs))))
	if seq == 0 {
		return 0, errors.New("webgpu: submit: out of host memory")
	}
	return seq, nil
}

// Discard drops the command buffer unsubmitted (nothing on a nil or spent one).
func (c *CommandBuffer) Discard() {
	if c == nil || c.cb == nil {
		return
	}
	if c.d.Lost() == nil {
		C.wgpuCommandBufferRelease(c.cb)
	}
	c.cb, c.groups, c.bufs = nil, nil, nil
}

// Discard drops everything recorded so far without submitting it. An open pass is
// dropped without being ended: ending it would validate what is being thrown away.
func (e *Encoder) Discard() {
	if e == nil {
		return
	}
	if e.d.Lost() == nil {
		if e.pass != nil {
			C.wgpuComputePassEncoderRelease(e.pass)
		}
		if e.enc != nil {
			C.wgpuCommandEncoderRelease(e.enc)
		}
	}
	e.pass, e.enc, e.groups, e.bufs = nil, nil, nil, nil
}

// Wait blocks until the submission with sequence number seq has completed, at most
// Timeout; past it the device is marked lost and the error says so.
func (d *Device) Wait(seq uint64) error {
	if err := d.usable(); err != nil {
		return err
	}
	if seq > uint64(d.d.submitted) {
		return fmt.Errorf("webgpu: wait for submission %d, but only %d were made", seq, uint64(d.d.submitted))
	}
	// A read made ahead whose copy this wait sees done is taken next (llama's logits).
	r := d.ahead.last
	ahead := d.prewake.spin > 0 && r != nil && r.seq <= seq && uint64(d.d.completed) < r.seq
	if ahead && d.prewake.last > d.prewake.lead {
		d.d.prewake_after_ns = C.uint64_t((d.prewake.last - d.prewake.lead).Nanoseconds())
		d.d.prewake_spin_ns = C.uint64_t(d.prewake.spin.Nanoseconds())
	}
	start := time.Now()
	rc := C.gw_wait(d.d, C.uint64_t(seq), d.timeoutMS())
	d.d.prewake_after_ns = 0
	if ahead && rc == C.GW_OK {
		d.prewake.last = time.Since(start)
	}
	return d.waitErr(rc, fmt.Sprintf("wait for submission %d", seq))
}

// WaitIdle blocks until all submitted work has completed, like Wait.
func (d *Device) WaitIdle() error {
	if err := d.usable(); err != nil {
		return err
	}
	return d.Wait(uint64(d.d.submitted))
}

// Completed polls the device (unless it is unusable) and returns the highest completed
// sequence number.
func (d *Device) Completed() uint64 {
	if d == nil || d.d == nil {
		return 0
	}
	if d.usable() == nil {
		C.gw_poll(d.d)
	}
	return uint64(d.d.completed)
}

// Submitted returns the sequence number of the latest submission.
func (d *Device) Submitted() uint64 {
	if d == nil || d.d == nil {
		return 0
	}
	return uint64(d.d.submitted)
}

// WaitStats sums the waits for the GPU that saw their work complete (Wait, reads and
// maps): how many, the polls they made, the time of the polls that saw the work complete
// (wgpu-native retiring it and running its callbacks) and of the waits.
type WaitStats struct {
	Waits, Polls   uint64
	DonePoll, Wait time.Duration
}

// WaitStats returns the device's wait statistics so far.
func (d *Device) WaitStats() WaitStats {
	if d == nil || d.d == nil {
		return WaitStats{}
	}
	return WaitStats{Waits: uint64(d.d.waits), Polls: uint64(d.d.wait_polls),
		DonePoll: time.Duration(d.d.done_poll_ns), Wait: time.Duration(d.d.wait_ns)}
}

// Errors returns how many uncaptured errors the device has seen and the last message.
func (d *Device) Errors() (int, string) {
	if d == nil || d.d == nil {
		return 0, ""
	}
	return int(d.d.error_count), C.GoString(&d.d.last_error[0])
}
