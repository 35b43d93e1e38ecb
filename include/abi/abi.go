// Package abi proves include/ggml-backend-abi.h, our own rendition of the ggml backend ABI
// (API version 2, ggml 0.25.1), against the real libggml-base at run time.
//
// The package links the real libggml-base.so from .cache/ggml/lib (put there by
// scripts/setup.sh) and gives its tests thin Go handles on two kinds of objects:
//
//   - tensors and graphs made by the real ggml (ggml_new_tensor_*, ggml_add, ...), whose
//     fields Go reads through the cgo view of our struct ggml_tensor;
//   - a probe registry, device, two buffer types, their buffers and a backend, written in
//     abi.c and filled only through our header, that the real libggml-base then drives
//     through its public API (ggml_backend_tensor_set, ggml_backend_sched_graph_compute,
//     ...). Every vtable slot counts its calls and records its arguments (Calls, Last).
//
// A field at a wrong offset in our header makes ggml read or call the wrong thing, which
// the tests in this package catch. The package holds no production code.
package abi

/*
#cgo CFLAGS: -I${SRCDIR}/..
#cgo LDFLAGS: -L${SRCDIR}/../../.cache/ggml/lib -lggml-base -Wl,-rpath,${SRCDIR}/../../.cache/ggml/lib -lm
#include <stdlib.h>
#include "abi_probe.h"
*/
import "C"

import (
	"errors"
	"math"
	"unsafe"
)

// Values the probe objects report, for the tests to compare with what ggml returns.
const (
	ProbeBuftAlignment     = uintptr(C.ABI_BUFT_ALIGNMENT)      // alignment of ProbeBufferType
	ProbeHostBuftAlignment = uintptr(C.ABI_HOST_BUFT_ALIGNMENT) // alignment of ProbeHostBufferType
	ProbeLeafAllocPad      = uintptr(C.ABI_LEAF_ALLOC_PAD)      // get_alloc_size pads op NONE tensors by this
	ProbeBuftMaxSize       = uintptr(1) << 40                   // get_max_size of ProbeBufferType
	ProbeHostBuftMaxSize   = uintptr(1) << 36                   // get_max_size of ProbeHostBufferType
	ProbeMemFree           = uintptr(3) << 30                   // free memory the probe device reports
	ProbeMemTotal          = uintptr(8) << 30                   // total memory the probe device reports
)

// Values of our ABI header the tests compare with ggml's behaviour (types and ops come
// from package tensor, the project's one source of ggml's enums).
const (
	FlagInput   = int32(C.GW_FLAG_INPUT)   // GGML_TENSOR_FLAG_INPUT
	FlagOutput  = int32(C.GW_FLAG_OUTPUT)  // GGML_TENSOR_FLAG_OUTPUT
	FlagCompute = int32(C.GW_FLAG_COMPUTE) // GGML_TENSOR_FLAG_COMPUTE

	StatusSuccess = int(C.GW_STATUS_SUCCESS) // GGML_STATUS_SUCCESS
	StatusFailed  = int(C.GW_STATUS_FAILED)  // GGML_STATUS_FAILED

	DevTypeCPU = int(C.GW_DEV_TYPE_CPU) // GGML_BACKEND_DEVICE_TYPE_CPU
	DevTypeGPU = int(C.GW_DEV_TYPE_GPU) // GGML_BACKEND_DEVICE_TYPE_GPU

	UsageAny     = 0 // GGML_BACKEND_BUFFER_USAGE_ANY
	UsageWeights = 1 // GGML_BACKEND_BUFFER_USAGE_WEIGHTS
	UsageCompute = 2 // GGML_BACKEND_BUFFER_USAGE_COMPUTE
)

// Layout returns the size of every struct and the offset of every field of
// include/ggml-backend-abi.h, computed in C with sizeof and offsetof. Keys read
// "sizeof(ggml_tensor)" and "ggml_tensor.op_params".
func Layout() map[string]uintptr {
	var n C.int
	p := C.abi_layout(&n)
	entries := unsafe.Slice(p, int(n))
	out := make(map[string]uintptr, len(entries))
	for _, e := range entries {
		out[C.GoString(e.name)] = uintptr(e.value)
	}
	return out
}

// TensorOverhead is the real ggml_tensor_overhead(): ggml's object header plus its
// sizeof(struct ggml_tensor).
func TensorOverhead() uintptr { return uintptr(C.ggml_tensor_overhead()) }

// OpName is the real ggml_op_name.
func OpName(op int) string { return C.GoString(C.ggml_op_name(C.int(op))) }

// TypeName is the real ggml_type_name (empty for a NULL name).
func TypeName(typ int) string { return goString(C.ggml_type_name(C.int(typ))) }

// UnaryOpName is the real ggml_unary_op_name.
func UnaryOpName(op int) string { return goString(C.ggml_unary_op_name(C.int(op))) }

// GLUOpName is the real ggml_glu_op_name.
func GLUOpName(op int) string { return goString(C.ggml_glu_op_name(C.int(op))) }

// BlockSize is the real ggml_blck_size: elements per block of a type.
func BlockSize(typ int) int { return int(C.ggml_blck_size(C.int(typ))) }

// TypeSize is the real ggml_type_size: bytes per block of a type.
func TypeSize(typ int) int { return int(C.ggml_type_size(C.int(typ))) }

func goString(p *C.char) string {
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

// ---------------------------------------------------------------------------------------
// Contexts, tensors, graphs

// Context is a ggml_context made by the real ggml_init.
type Context struct{ p *C.struct_ggml_context }

// NewContext calls ggml_init with an internally allocated pool of memSize bytes.
func NewContext(memSize uintptr, noAlloc bool) (*Context, error) {
	p := C.ggml_init(C.struct_ggml_init_params{mem_size: C.size_t(memSize), no_alloc: C.bool(noAlloc)})
	if p == nil {
		return nil, errors.New("abi: ggml_init failed")
	}
	return &Context{p}, nil
}

// Free calls ggml_free.
func (c *Context) Free() {
	if c.p != nil {
		C.ggml_free(c.p)
		c.p = nil
	}
}

// NewTensor2D calls ggml_new_tensor_2d.
func (c *Context) NewTensor2D(typ int, ne0, ne1 int64) Tensor {
	return Tensor{C.ggml_new_tensor_2d(c.p, C.int(typ), C.int64_t(ne0), C.int64_t(ne1))}
}

// NewTensor4D calls ggml_new_tensor_4d.
func (c *Context) NewTensor4D(typ int, ne0, ne1, ne2, ne3 int64) Tensor {
	return Tensor{C.ggml_new_tensor_4d(c.p, C.int(typ), C.int64_t(ne0), C.int64_t(ne1), C.int64_t(ne2), C.int64_t(ne3))}
}

// View2D calls ggml_view_2d.
func (c *Context) View2D(a Tensor, ne0, ne1 int64, nb1, offset uintptr) Tensor {
	return Tensor{C.ggml_view_2d(c.p, a.p, C.int64_t(ne0), C.int64_t(ne1), C.size_t(nb1), C.size_t(offset))}
}

// Add calls ggml_add.
func (c *Context) Add(a, b Tensor) Tensor { return Tensor{C.ggml_add(c.p, a.p, b.p)} }

// RMSNorm calls ggml_rms_norm.
func (c *Context) RMSNorm(a Tensor, eps float32) Tensor {
	return Tensor{C.ggml_rms_norm(c.p, a.p, C.float(eps))}
}

// ScaleBias calls ggml_scale_bias (a*s + b).
func (c *Context) ScaleBias(a Tensor, s, b float32) Tensor {
	return Tensor{C.ggml_scale_bias(c.p, a.p, C.float(s), C.float(b))}
}

// NewGraph calls ggml_new_graph.
func (c *Context) NewGraph() Graph { return Graph{C.ggml_new_graph(c.p)} }

// Tensor is a struct ggml_tensor made by the real ggml. Its field accessors read the tensor
// through our header's struct ggml_tensor; the methods named after ggml functions call them.
type Tensor struct{ p *C.struct_ggml_tensor }

// Ptr is the tensor's address.
func (t Tensor) Ptr() uintptr { return uintptr(unsafe.Pointer(t.p)) }

// IsNil reports whether t is a NULL tensor.
func (t Tensor) IsNil() bool { return t.p == nil }

// Type reads the type field.
func (t Tensor) Type() int { return int(t.p._type) }

// Buffer reads the buffer field.
func (t Tensor) Buffer() Buffer { return Buffer{t.p.buffer} }

// BufferPtr reads the buffer field as an address.
func (t Tensor) BufferPtr() uintptr { return uintptr(unsafe.Pointer(t.p.buffer)) }

// Ne reads ne[].
func (t Tensor) Ne() [4]int64 {
	return [4]int64{int64(t.p.ne[0]), int64(t.p.ne[1]), int64(t.p.ne[2]), int64(t.p.ne[3])}
}

// Nb reads nb[].
func (t Tensor) Nb() [4]uintptr {
	return [4]uintptr{uintptr(t.p.nb[0]), uintptr(t.p.nb[1]), uintptr(t.p.nb[2]), uintptr(t.p.nb[3])}
}

// SetNb writes nb[i] (so that the real ggml_nbytes can be seen to follow our field).
func (t Tensor) SetNb(i int, v uintptr) { t.p.nb[i] = C.size_t(v) }

// Op reads the op field.
func (t Tensor) Op() int { return int(t.p.op) }

// OpParams reads op_params[] as int32.
func (t Tensor) OpParams() [16]int32 {
	var out [16]int32
	for i := range out {
		out[i] = int32(t.p.op_params[i])
	}
	return out
}

// OpParamF32 reads op_params[i] as a float32.
func (t Tensor) OpParamF32(i int) float32 { return math.Float32frombits(uint32(t.p.op_params[i])) }

// OpParamU64 reads op_params[i..i+1] as one little-endian 64-bit value (a size_t param).
func (t Tensor) OpParamU64(i int) uint64 {
	return uint64(uint32(t.p.op_params[i])) | uint64(uint32(t.p.op_params[i+1]))<<32
}

// Flags reads the flags field.
func (t Tensor) Flags() int32 { return int32(t.p.flags) }

// Src reads src[i].
func (t Tensor) Src(i int) Tensor { return Tensor{t.p.src[i]} }

// ViewSrc reads view_src.
func (t Tensor) ViewSrc() Tensor { return Tensor{t.p.view_src} }

// ViewOffs reads view_offs.
func (t Tensor) ViewOffs() uintptr { return uintptr(t.p.view_offs) }

// Data reads the data field.
func (t Tensor) Data() uintptr { return uintptr(t.p.data) }

// Name reads the name field (up to its NUL).
func (t Tensor) Name() string { return C.GoString(&t.p.name[0]) }

// NameFieldPtr is the address of the name field.
func (t Tensor) NameFieldPtr() uintptr { return uintptr(unsafe.Pointer(&t.p.name[0])) }

// SetNameField writes the name field directly (truncated to 63 bytes).
func (t Tensor) SetNameField(s string) {
	n := min(len(s), len(t.p.name)-1)
	for i := 0; i < n; i++ {
		t.p.name[i] = C.char(s[i])
	}
	t.p.name[n] = 0
}

// Extra reads the extra field.
func (t Tensor) Extra() uintptr { return uintptr(t.p.extra) }

// SetName calls the real ggml_set_name.
func (t Tensor) SetName(s string) {
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	C.ggml_set_name(t.p, cs)
}

// GGMLName calls the real ggml_get_name and returns the string.
func (t Tensor) GGMLName() string { return C.GoString(C.ggml_get_name(t.p)) }

// GGMLNamePtr calls the real ggml_get_name and returns the pointer (&tensor->name).
func (t Tensor) GGMLNamePtr() uintptr { return uintptr(unsafe.Pointer(C.ggml_get_name(t.p))) }

// GGMLData calls the real ggml_get_data (tensor->data).
func (t Tensor) GGMLData() uintptr { return uintptr(C.ggml_get_data(t.p)) }

// NBytes calls the real ggml_nbytes.
func (t Tensor) NBytes() uintptr { return uintptr(C.ggml_nbytes(t.p)) }

// NElements calls the real ggml_nelements.
func (t Tensor) NElements() int64 { return int64(C.ggml_nelements(t.p)) }

// SetInput calls the real ggml_set_input.
func (t Tensor) SetInput() { C.ggml_set_input(t.p) }

// SetOutput calls the real ggml_set_output.
func (t Tensor) SetOutput() { C.ggml_set_output(t.p) }

// Graph is a ggml_cgraph made by the real ggml_new_graph.
type Graph struct{ p *C.struct_ggml_cgraph }

// BuildForwardExpand calls ggml_build_forward_expand.
func (g Graph) BuildForwardExpand(t Tensor) { C.ggml_build_forward_expand(g.p, t.p) }

// NNodes calls ggml_graph_n_nodes (declared in our header).
func (g Graph) NNodes() int { return int(C.ggml_graph_n_nodes(g.p)) }

// Node calls ggml_graph_node (declared in our header); i < 0 counts from the end.
func (g Graph) Node(i int) Tensor { return Tensor{C.ggml_graph_node(g.p, C.int(i))} }

// RawNNodes reads the internal n_nodes field at offset 4 (docs/ARCHITECTURE.md).
func (g Graph) RawNNodes() int { return int(C.abi_graph_raw_n_nodes(g.p)) }

// RawNode reads nodes[i] through the internal nodes pointer at offset 16 (docs/ARCHITECTURE.md).
func (g Graph) RawNode(i int) Tensor { return Tensor{C.abi_graph_raw_node(g.p, C.int(i))} }

// Ptr is the graph's address.
func (g Graph) Ptr() uintptr { return uintptr(unsafe.Pointer(g.p)) }

// ---------------------------------------------------------------------------------------
// Probe call records

// Calls returns how many times ggml called each slot of the probe's vtables since the last
// ResetProbe, keyed "buffer.set_tensor", "device.supports_op", ... (slots never called
// are present with 0).
func Calls() map[string]int {
	out := make(map[string]int, int(C.ABI_SLOT_COUNT))
	for i := 0; i < int(C.ABI_SLOT_COUNT); i++ {
		out[C.GoString(C.abi_slot_names[i])] = int(C.abi_calls[i])
	}
	return out
}

// ResetProbe zeroes the call counters and the recorded arguments, and makes the probe
// device report the GPU type again.
func ResetProbe() { C.abi_reset() }

// SetProbeDeviceType sets what the probe device's get_type (and get_props) report.
func SetProbeDeviceType(typ int) { C.abi_dev_type = C.int(typ) }

// LastArgs is what the probe's vtable functions recorded of their latest calls.
type LastArgs struct {
	Self          uintptr // the object the latest call was made on
	Tensor        uintptr
	Tensor2       uintptr
	Data          uintptr
	Offset        uintptr
	Size          uintptr
	NCopies       uintptr
	StrideTensor  uintptr
	StrideData    uintptr
	MaxTensorSize uintptr
	Index         uintptr
	Value         int
	Backend2      uintptr
	Graph         uintptr
	Plan          uintptr
	Event         uintptr
	Buft          uintptr
	OptParams     uintptr
	Params        uintptr
	ProcName      string
	GraphNNodes   int
	Seen          []uintptr // nodes the latest graph compute executed, in order
}

// Last returns the recorded arguments.
func Last() LastArgs {
	l := &C.abi_last
	out := LastArgs{
		Self:          uintptr(l.self),
		Tensor:        uintptr(l.tensor),
		Tensor2:       uintptr(l.tensor2),
		Data:          uintptr(l.data),
		Offset:        uintptr(l.offset),
		Size:          uintptr(l.size),
		NCopies:       uintptr(l.n_copies),
		StrideTensor:  uintptr(l.stride_tensor),
		StrideData:    uintptr(l.stride_data),
		MaxTensorSize: uintptr(l.max_tensor_size),
		Index:         uintptr(l.index),
		Value:         int(l.value),
		Backend2:      uintptr(l.backend2),
		Graph:         uintptr(l.graph),
		Plan:          uintptr(l.plan),
		Event:         uintptr(l.event),
		Buft:          uintptr(l.buft),
		OptParams:     uintptr(l.opt_params),
		Params:        uintptr(unsafe.Pointer(l.params)),
		GraphNNodes:   int(l.graph_n_nodes),
	}
	out.ProcName = C.GoString(&l.proc_name[0])
	for i := 0; i < int(l.n_seen); i++ {
		out.Seen = append(out.Seen, uintptr(l.seen[i]))
	}
	return out
}

// PropsSeen is the props memory as the probe's get_props received it from the latest
// ggml_backend_dev_get_props: ggml zeroed its sizeof(struct ggml_backend_dev_props) bytes of
// 128 bytes of 0xCC.
func PropsSeen() []byte { return C.GoBytes(unsafe.Pointer(&C.abi_last.props_seen[0]), 128) }

// ExtraMarker is the pointer the probe's init_tensor stores in tensor->extra.
func ExtraMarker() uintptr { return uintptr(C.abi_extra_marker()) }

// ProbeProc is the address the probe registry's get_proc_address returns for "abi_probe".
func ProbeProc() uintptr { return uintptr(C.abi_probe_proc()) }

// ProbeGUID is the address of the probe backends' 16-byte GUID.
func ProbeGUID() uintptr { return uintptr(unsafe.Pointer(&C.abi_guid[0])) }

// ---------------------------------------------------------------------------------------
// Buffer types and buffers

// BufferType is a ggml_backend_buffer_type_t.
type BufferType struct{ p C.gw_buft_t }

// ProbeBufferType is the probe device's buffer type ("ABI0", not host).
func ProbeBufferType() BufferType { return BufferType{C.abi_buft()} }

// ProbeHostBufferType is the probe device's host buffer type ("ABI0_Host", host).
func ProbeHostBufferType() BufferType { return BufferType{C.abi_host_buft()} }

// Ptr is the buffer type's address.
func (b BufferType) Ptr() uintptr { return uintptr(unsafe.Pointer(b.p)) }

// Name calls ggml_backend_buft_name.
func (b BufferType) Name() string { return C.GoString(C.ggml_backend_buft_name(b.p)) }

// Alignment calls ggml_backend_buft_get_alignment.
func (b BufferType) Alignment() uintptr { return uintptr(C.ggml_backend_buft_get_alignment(b.p)) }

// MaxSize calls ggml_backend_buft_get_max_size.
func (b BufferType) MaxSize() uintptr { return uintptr(C.ggml_backend_buft_get_max_size(b.p)) }

// AllocSize calls ggml_backend_buft_get_alloc_size.
func (b BufferType) AllocSize(t Tensor) uintptr {
	return uintptr(C.ggml_backend_buft_get_alloc_size(b.p, t.p))
}

// IsHost calls ggml_backend_buft_is_host.
func (b BufferType) IsHost() bool { return bool(C.ggml_backend_buft_is_host(b.p)) }

// Device calls ggml_backend_buft_get_device.
func (b BufferType) Device() Device { return Device{C.ggml_backend_buft_get_device(b.p)} }

// AllocBuffer calls ggml_backend_buft_alloc_buffer.
func (b BufferType) AllocBuffer(size uintptr) Buffer {
	return Buffer{C.ggml_backend_buft_alloc_buffer(b.p, C.size_t(size))}
}

// Buffer is a ggml_backend_buffer_t.
type Buffer struct{ p C.gw_buffer_t }

// Ptr is the buffer's address.
func (b Buffer) Ptr() uintptr { return uintptr(unsafe.Pointer(b.p)) }

// IsNil reports whether b is a NULL buffer.
func (b Buffer) IsNil() bool { return b.p == nil }

// BuftField reads the buffer's buft field through our header.
func (b Buffer) BuftField() BufferType { return BufferType{b.p.buft} }

// ContextField reads the buffer's context field through our header.
func (b Buffer) ContextField() uintptr { return uintptr(b.p.context) }

// SizeField reads the buffer's size field through our header.
func (b Buffer) SizeField() uintptr { return uintptr(b.p.size) }

// UsageField reads the buffer's usage field through our header.
func (b Buffer) UsageField() int { return int(b.p.usage) }

// HostMemory is the memory the probe allocated for the buffer (its context's mem).
func (b Buffer) HostMemory() uintptr { return uintptr((*C.struct_abi_buffer_ctx)(b.p.context).mem) }

// Bytes copies n bytes of the probe buffer's host memory from off.
func (b Buffer) Bytes(off, n uintptr) []byte {
	mem := (*C.struct_abi_buffer_ctx)(b.p.context).mem
	return C.GoBytes(unsafe.Add(mem, off), C.int(n))
}

// Name calls ggml_backend_buffer_name.
func (b Buffer) Name() string { return C.GoString(C.ggml_backend_buffer_name(b.p)) }

// Base calls ggml_backend_buffer_get_base.
func (b Buffer) Base() uintptr { return uintptr(C.ggml_backend_buffer_get_base(b.p)) }

// Size calls ggml_backend_buffer_get_size.
func (b Buffer) Size() uintptr { return uintptr(C.ggml_backend_buffer_get_size(b.p)) }

// Alignment calls ggml_backend_buffer_get_alignment.
func (b Buffer) Alignment() uintptr { return uintptr(C.ggml_backend_buffer_get_alignment(b.p)) }

// MaxSize calls ggml_backend_buffer_get_max_size.
func (b Buffer) MaxSize() uintptr { return uintptr(C.ggml_backend_buffer_get_max_size(b.p)) }

// AllocSize calls ggml_backend_buffer_get_alloc_size.
func (b Buffer) AllocSize(t Tensor) uintptr {
	return uintptr(C.ggml_backend_buffer_get_alloc_size(b.p, t.p))
}

// IsHost calls ggml_backend_buffer_is_host.
func (b Buffer) IsHost() bool { return bool(C.ggml_backend_buffer_is_host(b.p)) }

// Usage calls ggml_backend_buffer_get_usage.
func (b Buffer) Usage() int { return int(C.ggml_backend_buffer_get_usage(b.p)) }

// SetUsage calls ggml_backend_buffer_set_usage.
func (b Buffer) SetUsage(u int) { C.ggml_backend_buffer_set_usage(b.p, C.int(u)) }

// Type calls ggml_backend_buffer_get_type.
func (b Buffer) Type() BufferType { return BufferType{C.ggml_backend_buffer_get_type(b.p)} }

// Clear calls ggml_backend_buffer_clear.
func (b Buffer) Clear(v uint8) { C.ggml_backend_buffer_clear(b.p, C.uint8_t(v)) }

// Reset calls ggml_backend_buffer_reset.
func (b Buffer) Reset() { C.ggml_backend_buffer_reset(b.p) }

// Free calls ggml_backend_buffer_free.
func (b Buffer) Free() { C.ggml_backend_buffer_free(b.p) }

// AllocTensor calls ggml_backend_tensor_alloc(buffer, t, base+offset) and returns its status.
func (b Buffer) AllocTensor(t Tensor, offset uintptr) int {
	base := C.ggml_backend_buffer_get_base(b.p)
	return int(C.ggml_backend_tensor_alloc(b.p, t.p, unsafe.Add(base, offset)))
}

// HostMem is C memory for buffer_from_host_ptr.
type HostMem struct {
	p unsafe.Pointer
	n uintptr
}

// NewHostMem mallocs n bytes.
func NewHostMem(n uintptr) HostMem { return HostMem{C.malloc(C.size_t(n)), n} }

// Ptr is the memory's address.
func (m HostMem) Ptr() uintptr { return uintptr(m.p) }

// Free frees the memory.
func (m HostMem) Free() { C.free(m.p) }

// ---------------------------------------------------------------------------------------
// Tensor data through the real ggml-backend API

func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// TensorSet calls ggml_backend_tensor_set(t, data, offset, len(data)).
func TensorSet(t Tensor, data []byte, offset uintptr) {
	C.ggml_backend_tensor_set(t.p, bytesPtr(data), C.size_t(offset), C.size_t(len(data)))
}

// TensorGet calls ggml_backend_tensor_get(t, out, offset, n).
func TensorGet(t Tensor, offset, n uintptr) []byte {
	out := make([]byte, n)
	C.ggml_backend_tensor_get(t.p, bytesPtr(out), C.size_t(offset), C.size_t(n))
	return out
}

// TensorMemset calls ggml_backend_tensor_memset.
func TensorMemset(t Tensor, v uint8, offset, n uintptr) {
	C.ggml_backend_tensor_memset(t.p, C.uint8_t(v), C.size_t(offset), C.size_t(n))
}

// TensorSet2D calls ggml_backend_tensor_set_2d.
func TensorSet2D(t Tensor, data []byte, offset, size, nCopies, strideTensor, strideData uintptr) {
	C.ggml_backend_tensor_set_2d(t.p, bytesPtr(data), C.size_t(offset), C.size_t(size), C.size_t(nCopies),
		C.size_t(strideTensor), C.size_t(strideData))
}

// TensorGet2D calls ggml_backend_tensor_get_2d into a fresh buffer of outLen bytes.
func TensorGet2D(t Tensor, outLen, offset, size, nCopies, strideTensor, strideData uintptr) []byte {
	out := make([]byte, outLen)
	C.ggml_backend_tensor_get_2d(t.p, bytesPtr(out), C.size_t(offset), C.size_t(size), C.size_t(nCopies),
		C.size_t(strideTensor), C.size_t(strideData))
	return out
}

// TensorCopy calls ggml_backend_tensor_copy.
func TensorCopy(src, dst Tensor) { C.ggml_backend_tensor_copy(src.p, dst.p) }

// AllocCtxTensors calls ggml_backend_alloc_ctx_tensors_from_buft.
func AllocCtxTensors(c *Context, b BufferType) Buffer {
	return Buffer{C.ggml_backend_alloc_ctx_tensors_from_buft(c.p, b.p)}
}

// ---------------------------------------------------------------------------------------
// Registry, device, events, backend

// Reg is a ggml_backend_reg_t.
type Reg struct{ p C.gw_reg_t }

// ProbeReg is the probe's registry.
func ProbeReg() Reg { return Reg{C.abi_reg()} }

// Ptr is the registry's address.
func (r Reg) Ptr() uintptr { return uintptr(unsafe.Pointer(r.p)) }

// APIVersion reads api_version through our header.
func (r Reg) APIVersion() int { return int(r.p.api_version) }

// Name calls ggml_backend_reg_name.
func (r Reg) Name() string { return C.GoString(C.ggml_backend_reg_name(r.p)) }

// DevCount calls ggml_backend_reg_dev_count.
func (r Reg) DevCount() int { return int(C.ggml_backend_reg_dev_count(r.p)) }

// Dev calls ggml_backend_reg_dev_get.
func (r Reg) Dev(i int) Device { return Device{C.ggml_backend_reg_dev_get(r.p, C.size_t(i))} }

// ProcAddress calls ggml_backend_reg_get_proc_address.
func (r Reg) ProcAddress(name string) uintptr {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return uintptr(C.ggml_backend_reg_get_proc_address(r.p, cs))
}

// Device is a ggml_backend_dev_t.
type Device struct{ p C.gw_dev_t }

// ProbeDevice is the probe's device ("ABI0").
func ProbeDevice() Device { return Device{C.abi_device()} }

// Ptr is the device's address.
func (d Device) Ptr() uintptr { return uintptr(unsafe.Pointer(d.p)) }

// Name calls ggml_backend_dev_name.
func (d Device) Name() string { return C.GoString(C.ggml_backend_dev_name(d.p)) }

// Description calls ggml_backend_dev_description.
func (d Device) Description() string { return C.GoString(C.ggml_backend_dev_description(d.p)) }

// Memory calls ggml_backend_dev_memory.
func (d Device) Memory() (free, total uintptr) {
	var f, t C.size_t
	C.ggml_backend_dev_memory(d.p, &f, &t)
	return uintptr(f), uintptr(t)
}

// Type calls ggml_backend_dev_type.
func (d Device) Type() int { return int(C.ggml_backend_dev_type(d.p)) }

// Props is struct ggml_backend_dev_props read through our header.
type Props struct {
	Name, Description         string
	MemoryFree, MemoryTotal   uintptr
	Type                      int
	DeviceID                  string
	Async, HostBuffer         bool
	BufferFromHostPtr, Events bool
	MmapSupport               bool
}

// Props calls ggml_backend_dev_get_props (into 128 bytes of 0xCC; see PropsSeen).
func (d Device) Props() Props {
	var buf C.union_abi_props_buf
	C.abi_dev_get_props(d.p, &buf)
	p := (*C.struct_ggml_backend_dev_props)(unsafe.Pointer(&buf))
	out := Props{
		Name: C.GoString(p.name), Description: C.GoString(p.description),
		MemoryFree: uintptr(p.memory_free), MemoryTotal: uintptr(p.memory_total), Type: int(p._type),
		Async: bool(p.caps.async), HostBuffer: bool(p.caps.host_buffer),
		BufferFromHostPtr: bool(p.caps.buffer_from_host_ptr), Events: bool(p.caps.events),
		MmapSupport: bool(p.caps.mmap_support),
	}
	if p.device_id != nil {
		out.DeviceID = C.GoString(p.device_id)
	}
	return out
}

// BackendReg calls ggml_backend_dev_backend_reg.
func (d Device) BackendReg() Reg { return Reg{C.ggml_backend_dev_backend_reg(d.p)} }

// RegField reads the device's reg field through our header.
func (d Device) RegField() Reg { return Reg{d.p.reg} }

// Init calls ggml_backend_dev_init(dev, params); a nil params passes NULL.
func (d Device) Init(params *string) Backend {
	var cs *C.char
	if params != nil {
		cs = C.CString(*params)
		defer C.free(unsafe.Pointer(cs))
	}
	return Backend{C.ggml_backend_dev_init(d.p, cs)}
}

// BufferType calls ggml_backend_dev_buffer_type.
func (d Device) BufferType() BufferType { return BufferType{C.ggml_backend_dev_buffer_type(d.p)} }

// HostBufferType calls ggml_backend_dev_host_buffer_type.
func (d Device) HostBufferType() BufferType {
	return BufferType{C.ggml_backend_dev_host_buffer_type(d.p)}
}

// BufferFromHostPtr calls ggml_backend_dev_buffer_from_host_ptr over m.
func (d Device) BufferFromHostPtr(m HostMem, maxTensorSize uintptr) Buffer {
	return Buffer{C.ggml_backend_dev_buffer_from_host_ptr(d.p, m.p, C.size_t(m.n), C.size_t(maxTensorSize))}
}

// SupportsOp calls ggml_backend_dev_supports_op.
func (d Device) SupportsOp(t Tensor) bool { return bool(C.ggml_backend_dev_supports_op(d.p, t.p)) }

// SupportsBuft calls ggml_backend_dev_supports_buft.
func (d Device) SupportsBuft(b BufferType) bool {
	return bool(C.ggml_backend_dev_supports_buft(d.p, b.p))
}

// OffloadOp calls ggml_backend_dev_offload_op.
func (d Device) OffloadOp(t Tensor) bool { return bool(C.ggml_backend_dev_offload_op(d.p, t.p)) }

// EventNew calls ggml_backend_event_new.
func (d Device) EventNew() Event { return Event{C.ggml_backend_event_new(d.p)} }

// Event is a ggml_backend_event_t.
type Event struct{ p C.gw_event_t }

// Ptr is the event's address.
func (e Event) Ptr() uintptr { return uintptr(unsafe.Pointer(e.p)) }

// DeviceField reads the event's device field through our header.
func (e Event) DeviceField() Device { return Device{e.p.device} }

// Record calls ggml_backend_event_record(e, b).
func (e Event) Record(b Backend) { C.ggml_backend_event_record(e.p, b.p) }

// Wait calls ggml_backend_event_wait(b, e).
func (e Event) Wait(b Backend) { C.ggml_backend_event_wait(b.p, e.p) }

// Synchronize calls ggml_backend_event_synchronize.
func (e Event) Synchronize() { C.ggml_backend_event_synchronize(e.p) }

// Free calls ggml_backend_event_free.
func (e Event) Free() { C.ggml_backend_event_free(e.p) }

// Backend is a ggml_backend_t made by the probe device's init_backend.
type Backend struct{ p C.gw_backend_t }

// Ptr is the backend's address.
func (b Backend) Ptr() uintptr { return uintptr(unsafe.Pointer(b.p)) }

// IsNil reports whether b is a NULL backend.
func (b Backend) IsNil() bool { return b.p == nil }

// DeviceField reads the backend's device field through our header.
func (b Backend) DeviceField() Device { return Device{b.p.device} }

// ContextParams reads the params the probe's init_backend kept in the backend's context
// (found through our header's context field); ok is false when params was NULL.
func (b Backend) ContextParams() (params string, ok bool) {
	ctx := (*C.struct_abi_backend_ctx)(b.p.context)
	return C.GoString(&ctx.params[0]), !bool(ctx.params_null)
}

// GUID calls ggml_backend_guid.
func (b Backend) GUID() uintptr { return uintptr(unsafe.Pointer(C.ggml_backend_guid(b.p))) }

// Name calls ggml_backend_name.
func (b Backend) Name() string { return C.GoString(C.ggml_backend_name(b.p)) }

// Device calls ggml_backend_get_device.
func (b Backend) Device() Device { return Device{C.ggml_backend_get_device(b.p)} }

// DefaultBufferType calls ggml_backend_get_default_buffer_type.
func (b Backend) DefaultBufferType() BufferType {
	return BufferType{C.ggml_backend_get_default_buffer_type(b.p)}
}

// Synchronize calls ggml_backend_synchronize.
func (b Backend) Synchronize() { C.ggml_backend_synchronize(b.p) }

// Free calls ggml_backend_free.
func (b Backend) Free() { C.ggml_backend_free(b.p) }

// TensorSetAsync calls ggml_backend_tensor_set_async.
func (b Backend) TensorSetAsync(t Tensor, data []byte, offset uintptr) {
	C.ggml_backend_tensor_set_async(b.p, t.p, bytesPtr(data), C.size_t(offset), C.size_t(len(data)))
}

// TensorGetAsync calls ggml_backend_tensor_get_async.
func (b Backend) TensorGetAsync(t Tensor, offset, n uintptr) []byte {
	out := make([]byte, n)
	C.ggml_backend_tensor_get_async(b.p, t.p, bytesPtr(out), C.size_t(offset), C.size_t(n))
	return out
}

// TensorSet2DAsync calls ggml_backend_tensor_set_2d_async.
func (b Backend) TensorSet2DAsync(t Tensor, data []byte, offset, size, nCopies, strideTensor, strideData uintptr) {
	C.ggml_backend_tensor_set_2d_async(b.p, t.p, bytesPtr(data), C.size_t(offset), C.size_t(size),
		C.size_t(nCopies), C.size_t(strideTensor), C.size_t(strideData))
}

// TensorGet2DAsync calls ggml_backend_tensor_get_2d_async into a fresh buffer of outLen bytes.
func (b Backend) TensorGet2DAsync(t Tensor, outLen, offset, size, nCopies, strideTensor, strideData uintptr) []byte {
	out := make([]byte, outLen)
	C.ggml_backend_tensor_get_2d_async(b.p, t.p, bytesPtr(out), C.size_t(offset), C.size_t(size),
		C.size_t(nCopies), C.size_t(strideTensor), C.size_t(strideData))
	return out
}

// TensorCopyAsync calls ggml_backend_tensor_copy_async(b, dst, src, dstT).
func (b Backend) TensorCopyAsync(dst Backend, src, dstT Tensor) {
	C.ggml_backend_tensor_copy_async(b.p, dst.p, src.p, dstT.p)
}

// GraphPlan is a ggml_backend_graph_plan_t.
type GraphPlan struct{ p unsafe.Pointer }

// Ptr is the plan's address.
func (p GraphPlan) Ptr() uintptr { return uintptr(p.p) }

// GraphPlanCreate calls ggml_backend_graph_plan_create.
func (b Backend) GraphPlanCreate(g Graph) GraphPlan {
	return GraphPlan{C.ggml_backend_graph_plan_create(b.p, g.p)}
}

// GraphPlanCompute calls ggml_backend_graph_plan_compute.
func (b Backend) GraphPlanCompute(p GraphPlan) int {
	return int(C.ggml_backend_graph_plan_compute(b.p, p.p))
}

// GraphPlanFree calls ggml_backend_graph_plan_free.
func (b Backend) GraphPlanFree(p GraphPlan) { C.ggml_backend_graph_plan_free(b.p, p.p) }

// GraphCompute calls ggml_backend_graph_compute (compute, then synchronize).
func (b Backend) GraphCompute(g Graph) int { return int(C.ggml_backend_graph_compute(b.p, g.p)) }

// SupportsOp calls ggml_backend_supports_op.
func (b Backend) SupportsOp(t Tensor) bool { return bool(C.ggml_backend_supports_op(b.p, t.p)) }

// SupportsBuft calls ggml_backend_supports_buft.
func (b Backend) SupportsBuft(bt BufferType) bool {
	return bool(C.ggml_backend_supports_buft(b.p, bt.p))
}

// OffloadOp calls ggml_backend_offload_op.
func (b Backend) OffloadOp(t Tensor) bool { return bool(C.ggml_backend_offload_op(b.p, t.p)) }

// Sched is a ggml_backend_sched_t over one backend.
type Sched struct{ p *C.struct_ggml_backend_sched }

// NewSched calls ggml_backend_sched_new({b}, NULL, 1, graphSize, parallel=false,
// op_offload=false). ggml requires the last backend's device to report the CPU type.
func NewSched(b Backend, graphSize int) *Sched {
	backends := (*C.gw_backend_t)(C.malloc(C.size_t(unsafe.Sizeof(b.p))))
	defer C.free(unsafe.Pointer(backends))
	*backends = b.p
	return &Sched{C.ggml_backend_sched_new(backends, nil, 1, C.size_t(graphSize), false, false)}
}

// AllocGraph calls ggml_backend_sched_alloc_graph.
func (s *Sched) AllocGraph(g Graph) bool { return bool(C.ggml_backend_sched_alloc_graph(s.p, g.p)) }

// GraphCompute calls ggml_backend_sched_graph_compute.
func (s *Sched) GraphCompute(g Graph) int { return int(C.ggml_backend_sched_graph_compute(s.p, g.p)) }

// NSplits calls ggml_backend_sched_get_n_splits.
func (s *Sched) NSplits() int { return int(C.ggml_backend_sched_get_n_splits(s.p)) }

// Free calls ggml_backend_sched_free.
func (s *Sched) Free() { C.ggml_backend_sched_free(s.p) }
