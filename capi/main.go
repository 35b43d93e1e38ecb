// Command capi is the cgo boundary of libggml-wgpu.so (go build -buildmode=c-shared): the
// exported entry points of a dynamic ggml backend, the callbacks behind the ggml vtables
// that shim.c fills, handle <-> pointer mapping and reading ggml_tensor fields. It holds no
// logic of its own: every callback forwards to package backend.
package main

/*
#cgo CFLAGS: -O2
#cgo LDFLAGS: -L${SRCDIR}/../.cache/ggml/lib -lggml-base -Wl,-rpath,$ORIGIN
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/ggml-wgpu/ggml-wgpu/backend"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

func main() {}

var (
	regOnce sync.Once
	regPtr  *C.struct_ggml_backend_reg
	names   []*C.char // device names and descriptions, alive for the process
	descs   []*C.char

	idsMu sync.Mutex
	ids   = map[int]*C.char{} // device_id properties, made on first use, alive for the process
)

// deviceID returns the device_id property of device i: its PCI bus location as a C
// string, or nil when unknown.
func deviceID(i int, d *backend.Device) *C.char {
	idsMu.Lock()
	defer idsMu.Unlock()
	if id, ok := ids[i]; ok {
		return id
	}
	var id *C.char
	if s := d.PCIBusID(); s != "" {
		id = cstring(s)
	}
	ids[i] = id
	return id
}

func registry() *C.struct_ggml_backend_reg {
	regOnce.Do(func() {
		backend.Logger = func(level int, msg string) {
			cs := cstring(msg)
			if cs == nil {
				return // no memory even for the message
			}
			C.gw_log(C.int(level), cs)
			C.free(unsafe.Pointer(cs))
		}
		r := backend.Default()
		for _, d := range r.Devices {
			names = append(names, cstringOr(d.Name, regName))
			descs = append(descs, cstringOr(d.Description, regName))
		}
		regPtr = C.gw_reg_build(C.int(len(r.Devices)))
	})
	return regPtr
}

// guard turns a panic in a callback into a logged error; the host process survives.
func guard(name string) {
	if r := recover(); r != nil {
		backend.Logger(backend.LogError, fmt.Sprintf("ggml-wgpu: internal error in %s: %v\n%s", name, r, debug.Stack()))
	}
}

func logErr(format string, args ...any) {
	backend.Logger(backend.LogError, "ggml-wgpu: "+fmt.Sprintf(format, args...)+"\n")
}

//export ggml_backend_init
func ggml_backend_init() *C.struct_ggml_backend_reg {
	defer guard("ggml_backend_init")
	return registry()
}

//export ggml_backend_score
func ggml_backend_score() (score C.int) {
	defer guard("ggml_backend_score")
	registry()
	return C.int(backend.Default().Score())
}

//export ggml_backend_wgpu_reg
func ggml_backend_wgpu_reg() *C.struct_ggml_backend_reg {
	defer guard("ggml_backend_wgpu_reg")
	return registry()
}

//export ggml_backend_wgpu_device_count
func ggml_backend_wgpu_device_count() C.size_t {
	defer guard("ggml_backend_wgpu_device_count")
	registry()
	return C.size_t(len(backend.Default().Devices))
}

//export ggml_backend_is_wgpu
func ggml_backend_is_wgpu(b *C.struct_ggml_backend) C.bool {
	defer guard("ggml_backend_is_wgpu")
	return C.gw_is_ours(b) != 0
}

// device returns the backend device behind a ggml device pointer, or nil.
func device(dev *C.struct_ggml_backend_device) *backend.Device {
	i := int(C.gw_device_index(dev))
	if i < 0 {
		return nil
	}
	d, err := backend.Default().Device(i)
	if err != nil {
		return nil
	}
	return d
}

func buftDevice(buft *C.struct_ggml_backend_buffer_type) *backend.Device {
	i := int(C.gw_buft_index(buft))
	if i < 0 {
		return nil
	}
	d, _ := backend.Default().Device(i)
	return d
}

// ---- registry ----

// regName is the registry's name, a static C string.
var regName = C.gw_reg_name()

// cstring copies s into C memory, or returns nil when there is none.
func cstring(s string) *C.char {
	return C.shim_strndup((*C.char)(unsafe.Pointer(unsafe.StringData(s))), C.size_t(len(s)))
}

// cstringOr is cstring, with a fallback for names that must exist.
func cstringOr(s string, fallback *C.char) *C.char {
	if c := cstring(s); c != nil {
		return c
	}
	return fallback
}

//export gwRegGetName
func gwRegGetName(*C.struct_ggml_backend_reg) *C.char {
	defer guard("gwRegGetName")
	return regName
}

//export gwRegDeviceCount
func gwRegDeviceCount(*C.struct_ggml_backend_reg) C.size_t {
	defer guard("gwRegDeviceCount")
	return C.size_t(len(backend.Default().Devices))
}

//export gwRegGetDevice
func gwRegGetDevice(_ *C.struct_ggml_backend_reg, i C.size_t) *C.struct_ggml_backend_device {
	defer guard("gwRegGetDevice")
	return C.gw_device_at(C.int(i))
}

//export gwRegGetProcAddress
func gwRegGetProcAddress(*C.struct_ggml_backend_reg, *C.char) unsafe.Pointer {
	defer guard("gwRegGetProcAddress")
	return nil
}

// ---- device ----

//export gwDevGetName
func gwDevGetName(dev *C.struct_ggml_backend_device) (name *C.char) {
	name = regName
	defer guard("gwDevGetName")
	i := int(C.gw_device_index(dev))
	if i < 0 || i >= len(names) {
		return regName
	}
	return names[i]
}

//export gwDevGetDescription
func gwDevGetDescription(dev *C.struct_ggml_backend_device) (desc *C.char) {
	desc = regName
	defer guard("gwDevGetDescription")
	i := int(C.gw_device_index(dev))
	if i < 0 || i >= len(descs) {
		return regName
	}
	return descs[i]
}

//export gwDevGetMemory
func gwDevGetMemory(dev *C.struct_ggml_backend_device, free, total *C.size_t) {
	defer guard("get_memory")
	if d := device(dev); d != nil {
		f, t := d.Memory()
		*free, *total = C.size_t(f), C.size_t(t)
	}
}

//export gwDevGetType
func gwDevGetType(dev *C.struct_ggml_backend_device) (typ C.int) {
	typ = C.int(backend.DevTypeGPU)
	defer guard("gwDevGetType")
	if d := device(dev); d != nil {
		return C.int(d.Type)
	}
	return C.int(backend.DevTypeGPU)
}

//export gwDevGetProps
func gwDevGetProps(dev *C.struct_ggml_backend_device, props *C.struct_ggml_backend_dev_props) {
	defer guard("get_props")
	*props = C.struct_ggml_backend_dev_props{}
	props.name = gwDevGetName(dev)
	props.description = gwDevGetDescription(dev)
	props._type = gwDevGetType(dev)
	if d := device(dev); d != nil {
		f, t := d.Memory()
		props.memory_free, props.memory_total = C.size_t(f), C.size_t(t)
		props.device_id = deviceID(d.Index, d)
	}
	props.caps.async = true
}

var (
	backendsMu sync.Mutex
	backends   = map[uint64]*backend.Backend{}
	nextHandle uint64
)

//export gwDevInitBackend
func gwDevInitBackend(dev *C.struct_ggml_backend_device, _ *C.char) *C.struct_ggml_backend {
	defer guard("init_backend")
	d := device(dev)
	if d == nil {
		logErr("init_backend: unknown device")
		return nil
	}
	b, err := backend.NewBackend(d)
	if err != nil {
		logErr("init_backend %s: %v", d.Name, err)
		return nil
	}
	backendsMu.Lock()
	nextHandle++
	h := nextHandle
	backends[h] = b
	backendsMu.Unlock()
	gb := C.gw_backend_new(dev, C.uint64_t(h))
	if gb == nil {
		logErr("init_backend %s: out of host memory", d.Name)
		backendsMu.Lock()
		delete(backends, h)
		backendsMu.Unlock()
		b.Close()
	}
	return gb
}

//export gwDevGetBufferType
func gwDevGetBufferType(dev *C.struct_ggml_backend_device) *C.struct_ggml_backend_buffer_type {
	defer guard("gwDevGetBufferType")
	return C.gw_buft_at(C.gw_device_index(dev))
}

//export gwDevSupportsOp
func gwDevSupportsOp(dev *C.struct_ggml_backend_device, op *C.struct_ggml_tensor) (ok C.bool) {
	defer guard("supports_op")
	d := device(dev)
	if d == nil || op == nil {
		return false
	}
	return C.bool(d.Supports(newReader().node(op, supportsDepth)))
}

//export gwDevSupportsBuft
func gwDevSupportsBuft(dev *C.struct_ggml_backend_device, buft *C.struct_ggml_backend_buffer_type) C.bool {
	defer guard("gwDevSupportsBuft")
	i := C.gw_device_index(dev)
	return i >= 0 && C.gw_buft_index(buft) == i
}

// ---- buffer type ----

var buftNames sync.Map // device index -> *C.char

//export gwBuftGetName
func gwBuftGetName(buft *C.struct_ggml_backend_buffer_type) (name *C.char) {
	name = regName
	defer guard("gwBuftGetName")
	i := int(C.gw_buft_index(buft))
	if n, ok := buftNames.Load(i); ok {
		return n.(*C.char)
	}
	n, _ := buftNames.LoadOrStore(i, cstringOr(fmt.Sprintf("WGPU%d", i), regName))
	return n.(*C.char)
}

//export gwBuftAllocBuffer
func gwBuftAllocBuffer(buft *C.struct_ggml_backend_buffer_type, size C.size_t) *C.struct_ggml_backend_buffer {
	defer guard("alloc_buffer")
	d := buftDevice(buft)
	if d == nil {
		logErr("alloc_buffer: unknown buffer type")
		return nil
	}
	b, err := d.Alloc(uint64(size))
	if err != nil {
		logErr("alloc_buffer of %d bytes failed: %v", uint64(size), err)
		return nil
	}
	gb := C.gw_buffer_new(buft, C.uint64_t(b.ID), size)
	if gb == nil {
		logErr("alloc_buffer of %d bytes: ggml could not create the buffer object", uint64(size))
		b.Free()
	}
	return gb
}

//export gwBuftGetAlignment
func gwBuftGetAlignment(buft *C.struct_ggml_backend_buffer_type) (align C.size_t) {
	align = 256
	defer guard("gwBuftGetAlignment")
	if d := buftDevice(buft); d != nil {
		return C.size_t(d.Alignment())
	}
	return 256
}

//export gwBuftGetMaxSize
func gwBuftGetMaxSize(buft *C.struct_ggml_backend_buffer_type) C.size_t {
	defer guard("gwBuftGetMaxSize")
	if d := buftDevice(buft); d != nil {
		return C.size_t(d.MaxAlloc())
	}
	return 0
}

// ---- buffer ----

func buffer(b *C.struct_ggml_backend_buffer) *backend.Buffer {
	if b == nil || C.gw_buft_index(b.buft) < 0 {
		return nil
	}
	buf, _ := backend.LookupBuffer(uint64(uintptr(b.context)))
	return buf
}

//export gwBufferFree
func gwBufferFree(b *C.struct_ggml_backend_buffer) {
	defer guard("free_buffer")
	if buf := buffer(b); buf != nil {
		buf.Free()
	}
}

//export gwBufferGetBase
func gwBufferGetBase(b *C.struct_ggml_backend_buffer) unsafe.Pointer {
	defer guard("gwBufferGetBase")
	if buf := buffer(b); buf != nil {
		return C.gw_address(C.uint64_t(buf.Base())) // a fake address, never dereferenced
	}
	return nil
}

// tensorOffset returns the byte offset of t's data within buf.
func tensorOffset(buf *backend.Buffer, t *C.struct_ggml_tensor) (uint64, bool) {
	addr := uint64(uintptr(t.data))
	if addr < buf.Base() || addr-buf.Base() > buf.Size {
		return 0, false
	}
	return addr - buf.Base(), true
}

//export gwBufferMemsetTensor
func gwBufferMemsetTensor(b *C.struct_ggml_backend_buffer, t *C.struct_ggml_tensor, value C.uint8_t, offset, size C.size_t) {
	defer guard("memset_tensor")
	buf := buffer(b)
	if buf == nil || t == nil {
		return
	}
	if off, ok := tensorOffset(buf, t); ok {
		if err := buf.Memset(off+uint64(offset), uint64(size), byte(value)); err != nil {
			logErr("memset_tensor %s: %v", C.GoString(&t.name[0]), err)
		}
	}
}

//export gwBufferSetTensor
func gwBufferSetTensor(b *C.struct_ggml_backend_buffer, t *C.struct_ggml_tensor, data unsafe.Pointer, offset, size C.size_t) {
	defer guard("set_tensor")
	buf := buffer(b)
	if buf == nil || t == nil || size == 0 {
		return
	}
	off, ok := tensorOffset(buf, t)
	if !ok {
		logErr("set_tensor %s: data outside its buffer", C.GoString(&t.name[0]))
		return
	}
	src := unsafe.Slice((*byte)(data), int(size))
	if err := buf.Write(off+uint64(offset), src); err != nil {
		logErr("set_tensor %s: %v", C.GoString(&t.name[0]), err)
	}
}

//export gwBufferGetTensor
func gwBufferGetTensor(b *C.struct_ggml_backend_buffer, t *C.struct_ggml_tensor, data unsafe.Pointer, offset, size C.size_t) {
	defer guard("get_tensor")
	buf := buffer(b)
	if buf == nil || t == nil || size == 0 {
		return
	}
	off, ok := tensorOffset(buf, t)
	if !ok {
		logErr("get_tensor %s: data outside its buffer", C.GoString(&t.name[0]))
		return
	}
	dst := unsafe.Slice((*byte)(data), int(size))
	if err := buf.Read(off+uint64(offset), dst); err != nil {
		logErr("get_tensor %s: %v", C.GoString(&t.name[0]), err)
	}
}

//export gwBufferCpyTensor
func gwBufferCpyTensor(b *C.struct_ggml_backend_buffer, src, dst *C.struct_ggml_tensor) (ok C.bool) {
	defer guard("cpy_tensor")
	to := buffer(b)
	if to == nil || src == nil || dst == nil {
		return false
	}
	sb := src.buffer
	if src.view_src != nil {
		sb = src.view_src.buffer
	}
	from := buffer(sb)
	if from == nil {
		return false
	}
	so, ok1 := tensorOffset(from, src)
	do, ok2 := tensorOffset(to, dst)
	if !ok1 || !ok2 {
		return false
	}
	n := newReader().tensor(src)
	done, err := from.CopyTo(to, so, do, n.Extent())
	if err != nil {
		logErr("cpy_tensor: %v", err)
		return false
	}
	return C.bool(done)
}

//export gwBufferClear
func gwBufferClear(b *C.struct_ggml_backend_buffer, value C.uint8_t) {
	defer guard("clear")
	if buf := buffer(b); buf != nil {
		if err := buf.Clear(byte(value)); err != nil {
			logErr("clear: %v", err)
		}
	}
}

// ---- backend ----

func instance(b *C.struct_ggml_backend) *backend.Backend {
	if C.gw_is_ours(b) == 0 {
		return nil
	}
	backendsMu.Lock()
	defer backendsMu.Unlock()
	return backends[uint64(uintptr(b.context))]
}

//export gwBackendGetName
func gwBackendGetName(b *C.struct_ggml_backend) (name *C.char) {
	name = regName
	defer guard("gwBackendGetName")
	return gwDevGetName(b.device)
}

//export gwBackendFree
func gwBackendFree(b *C.struct_ggml_backend) {
	defer guard("free")
	if bk := instance(b); bk != nil {
		bk.Close()
	}
	backendsMu.Lock()
	delete(backends, uint64(uintptr(b.context)))
	backendsMu.Unlock()
	C.gw_backend_delete(b)
}

//export gwBackendSynchronize
func gwBackendSynchronize(b *C.struct_ggml_backend) {
	defer guard("synchronize")
	if bk := instance(b); bk != nil {
		if err := bk.Synchronize(); err != nil {
			logErr("synchronize on %s: %v", bk.Dev.Name, err)
		}
	}
}

//export gwBackendGraphCompute
func gwBackendGraphCompute(b *C.struct_ggml_backend, g *C.struct_ggml_cgraph) (status C.int) {
	status = C.GW_STATUS_FAILED
	defer guard("graph_compute")
	bk := instance(b)
	if bk == nil || g == nil {
		return C.GW_STATUS_FAILED
	}
	n := int(C.ggml_graph_n_nodes(g))
	nodes := make([]*C.struct_ggml_tensor, n)
	if n > 0 {
		C.gw_graph_nodes(g, &nodes[0], C.int(n))
	}
	convert := func() []*tensor.Tensor {
		r := newReader()
		out := make([]*tensor.Tensor, n)
		for i, t := range nodes {
			out[i] = r.tensor(t)
		}
		return out
	}
	equal := func(cached []byte) bool { return snapshotEqual(cached, nodes) }
	build := func(buf []byte) []byte { return snapshot(buf, nodes) }
	if err := bk.ComputeMatching(equal, build, convert); err != nil {
		logErr("graph_compute on %s: %v", bk.Dev.Name, err)
		return C.GW_STATUS_FAILED
	}
	return C.GW_STATUS_SUCCESS
}

//export gwBackendGraphOptimize
func gwBackendGraphOptimize(b *C.struct_ggml_backend, g *C.struct_ggml_cgraph, _ *C.struct_ggml_backend_graph_optimize_params) {
	defer guard("graph_optimize")
	bk := instance(b)
	if bk == nil || g == nil {
		return
	}
	n := int(C.ggml_graph_n_nodes(g))
	r := newReader()
	nodes := make([]*tensor.Tensor, n)
	for i := range nodes {
		nodes[i] = r.tensor(C.ggml_graph_node(g, C.int(i)))
	}
	raw := make(map[*tensor.Tensor]*C.struct_ggml_tensor, len(r.seen))
	for c, t := range r.seen {
		raw[t] = c
	}
	// a view's or in-place result's memory is that of the tensor it lies in
	root := func(t *tensor.Tensor) any {
		c := raw[t]
		for c != nil && c.view_src != nil {
			c = c.view_src
		}
		return c
	}
	order := bk.Order(nodes, root)
	// Only a permutation of the graph's own nodes is written back into ggml's graph.
	if len(order) != n {
		return
	}
	placed := make(map[*tensor.Tensor]bool, n)
	for _, t := range order {
		if raw[t] == nil || placed[t] {
			return
		}
		placed[t] = true
	}
	for i, t := range order {
		C.gw_graph_set_node(g, C.int(i), raw[t])
	}
}
