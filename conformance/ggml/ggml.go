// Package ggml is a small purego (no cgo) binding of the public C API of the real ggml host
// libraries (libggml-base.so and libggml.v0.5.0.so of ggml 0.25.1). It exposes just what the
// conformance suite needs: contexts, tensor constructors for a handful of ops, graphs, backend
// loading, allocation, tensor transfers and graph computation.
//
// Pointers returned by ggml are represented as uintptr-based types (Context, Tensor, ...);
// tensor fields are read straight from the C struct at the ggml 0.25.1 x86-64 offsets.
package ggml

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// Context is a pointer to a C struct ggml_context.
type Context uintptr

// Tensor is a pointer to a C struct ggml_tensor.
type Tensor uintptr

// Graph is a pointer to a C struct ggml_cgraph.
type Graph uintptr

// Backend is a ggml_backend_t.
type Backend uintptr

// Device is a ggml_backend_dev_t.
type Device uintptr

// Reg is a ggml_backend_reg_t.
type Reg uintptr

// Buffer is a ggml_backend_buffer_t.
type Buffer uintptr

// BufferType is a ggml_backend_buffer_type_t.
type BufferType uintptr

// Backend device types (enum ggml_backend_dev_type).
const (
	DevTypeCPU = 0 // GGML_BACKEND_DEVICE_TYPE_CPU
	DevTypeGPU = 1 // GGML_BACKEND_DEVICE_TYPE_GPU
)

// RopeExt holds the scalar arguments of ggml_rope_ext after the tensors.
type RopeExt struct {
	// NDims is the number of rotated dimensions of each row (even, at most ne0).
	NDims int
	// Mode is tensor.RopeNormal or tensor.RopeNeox (tensor.RopeMrope, tensor.RopeVision or tensor.RopeImrope for RopeMulti).
	Mode int
	// NCtxOrig is the original training context (YaRN).
	NCtxOrig int
	// FreqBase, FreqScale, ExtFactor, AttnFactor, BetaFast and BetaSlow are the RoPE and
	// YaRN parameters.
	FreqBase, FreqScale, ExtFactor, AttnFactor, BetaFast, BetaSlow float32
}

// InitParams mirrors struct ggml_init_params {size_t mem_size; void *mem_buffer; bool no_alloc;}.
type InitParams struct {
	// MemSize is the size of the context's memory pool in bytes.
	MemSize uintptr
	// MemBuffer is caller-provided pool memory, or 0 to let ggml allocate it.
	MemBuffer uintptr
	// NoAlloc makes tensors metadata only (data allocated later in a backend buffer).
	NoAlloc bool
	_       [7]byte
}

// at converts a C address into an unsafe.Pointer without tripping go vet's uintptr check.
func at(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

// Type returns the tensor's element type.
func (t Tensor) Type() tensor.Type { return tensor.Type(*(*int32)(at(uintptr(t) + tensor.OffsetType))) }

// Buffer returns the backend buffer the tensor lives in (0 if unallocated).
func (t Tensor) Buffer() Buffer { return Buffer(*(*uintptr)(at(uintptr(t) + tensor.OffsetBuffer))) }

// Ne returns the number of elements in each of the 4 dimensions.
func (t Tensor) Ne() [4]int64 { return *(*[4]int64)(at(uintptr(t) + tensor.OffsetNe)) }

// Nb returns the byte stride of each of the 4 dimensions.
func (t Tensor) Nb() [4]uint64 { return *(*[4]uint64)(at(uintptr(t) + tensor.OffsetNb)) }

// Op returns the tensor's op (OpNone for leaves).
func (t Tensor) Op() tensor.Op { return tensor.Op(*(*int32)(at(uintptr(t) + tensor.OffsetOp))) }

// OpParamI32 returns op_params[i] as an int32.
func (t Tensor) OpParamI32(i int) int32 {
	return *(*int32)(at(uintptr(t) + tensor.OffsetOpParams + uintptr(4*i)))
}

// OpParamF32 returns op_params[i] reinterpreted as a float32.
func (t Tensor) OpParamF32(i int) float32 {
	return *(*float32)(at(uintptr(t) + tensor.OffsetOpParams + uintptr(4*i)))
}

// Flags returns the tensor flags (INPUT 1, OUTPUT 2, PARAM 4, LOSS 8, COMPUTE 16).
func (t Tensor) Flags() int32 { return *(*int32)(at(uintptr(t) + tensor.OffsetFlags)) }

// Src returns source i (0..9) of the tensor, or 0.
func (t Tensor) Src(i int) Tensor {
	if i < 0 || i >= tensor.MaxSrc {
		return 0
	}
	return Tensor(*(*uintptr)(at(uintptr(t) + tensor.OffsetSrc + uintptr(8*i))))
}

// ViewSrc returns the tensor this one is a view of, or 0.
func (t Tensor) ViewSrc() Tensor { return Tensor(*(*uintptr)(at(uintptr(t) + tensor.OffsetViewSrc))) }

// ViewOffs returns the byte offset of a view inside its ViewSrc.
func (t Tensor) ViewOffs() uint64 { return *(*uint64)(at(uintptr(t) + tensor.OffsetViewOffs)) }

// Data returns the tensor's data address (a backend address; not necessarily host memory).
func (t Tensor) Data() uintptr { return *(*uintptr)(at(uintptr(t) + tensor.OffsetData)) }

// SetBuffer stores buf in the tensor's buffer field, as llama.cpp does with a zero-size
// buffer of a device's type to probe supports_op for a weight that is not allocated yet.
func (t Tensor) SetBuffer(buf Buffer) {
	*(*uintptr)(at(uintptr(t) + tensor.OffsetBuffer)) = uintptr(buf)
}

// Name returns the tensor's name.
func (t Tensor) Name() string {
	b := (*[tensor.MaxName]byte)(at(uintptr(t) + tensor.OffsetName))
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b[:])
}

// NElements returns the number of elements (product of Ne), computed without calling ggml.
func (t Tensor) NElements() int64 {
	ne := t.Ne()
	return ne[0] * ne[1] * ne[2] * ne[3]
}

// IsContiguous reports whether the tensor's elements are densely packed in row-major order
// (a row of a quantized type holds its blocks).
func (t Tensor) IsContiguous() bool {
	ne, nb := t.Ne(), t.Nb()
	next := uint64(t.Type().Size())
	for i := 0; i < 4; i++ {
		if ne[i] != 1 && nb[i] != next {
			return false
		}
		n := uint64(ne[i])
		if i == 0 {
			n /= uint64(max(1, t.Type().BlockElems())) // a row holds blocks
		}
		next *= n
	}
	return true
}

// Lib is a loaded pair of ggml host libraries with the functions the suite uses.
type Lib struct {
	// Dir is the directory the libraries were loaded from.
	Dir string

	base, ggml uintptr

	initFn       func(InitParams) Context
	free         func(Context)
	newTensor1d  func(Context, tensor.Type, int64) Tensor
	newTensor2d  func(Context, tensor.Type, int64, int64) Tensor
	newTensor3d  func(Context, tensor.Type, int64, int64, int64) Tensor
	newTensor4d  func(Context, tensor.Type, int64, int64, int64, int64) Tensor
	view1d       func(Context, Tensor, int64, uintptr) Tensor
	view2d       func(Context, Tensor, int64, int64, uintptr, uintptr) Tensor
	view3d       func(Context, Tensor, int64, int64, int64, uintptr, uintptr, uintptr) Tensor
	view4d       func(Context, Tensor, int64, int64, int64, int64, uintptr, uintptr, uintptr, uintptr) Tensor
	permute      func(Context, Tensor, int32, int32, int32, int32) Tensor
	transpose    func(Context, Tensor) Tensor
	reshape4d    func(Context, Tensor, int64, int64, int64, int64) Tensor
	cont         func(Context, Tensor) Tensor
	cont2D       func(Context, Tensor, int64, int64) Tensor
	cpy          func(Context, Tensor, Tensor) Tensor
	dup          func(Context, Tensor) Tensor
	add          func(Context, Tensor, Tensor) Tensor
	addInplace   func(Context, Tensor, Tensor) Tensor
	sub          func(Context, Tensor, Tensor) Tensor
	subInplace   func(Context, Tensor, Tensor) Tensor
	mul          func(Context, Tensor, Tensor) Tensor
	mulInplace   func(Context, Tensor, Tensor) Tensor
	div          func(Context, Tensor, Tensor) Tensor
	divInplace   func(Context, Tensor, Tensor) Tensor
	scale        func(Context, Tensor, float32) Tensor
	scaleInplace func(Context, Tensor, float32) Tensor
	scaleBias    func(Context, Tensor, float32, float32) Tensor
	scaleBiasInp func(Context, Tensor, float32, float32) Tensor
	rmsNorm      func(Context, Tensor, float32) Tensor
	norm         func(Context, Tensor, float32) Tensor
	getRows      func(Context, Tensor, Tensor) Tensor
	mulMat       func(Context, Tensor, Tensor) Tensor
	softMax      func(Context, Tensor) Tensor
	softMaxExt   func(Context, Tensor, Tensor, float32, float32) Tensor
	silu         func(Context, Tensor) Tensor
	gelu         func(Context, Tensor) Tensor
	swiglu       func(Context, Tensor) Tensor
	swigluSplit  func(Context, Tensor, Tensor) Tensor
	sin          func(Context, Tensor) Tensor
	setRows      func(Context, Tensor, Tensor, Tensor) Tensor
	ropeInplace  func(Context, Tensor, Tensor, int32, int32) Tensor
	ropeExt      func(Context, Tensor, Tensor, Tensor, int32, int32, int32, float32, float32, float32, float32, float32, float32) Tensor
	ropeExtInp   func(Context, Tensor, Tensor, Tensor, int32, int32, int32, float32, float32, float32, float32, float32, float32) Tensor
	ropeMulti    func(Context, Tensor, Tensor, Tensor, int32, unsafe.Pointer, int32, int32, float32, float32, float32, float32, float32, float32) Tensor

	newGraph       func(Context) Graph
	buildForward   func(Graph, Tensor)
	graphNNodes    func(Graph) int32
	graphNode      func(Graph, int32) Tensor
	nbytes         func(Tensor) uintptr
	nelements      func(Tensor) int64
	setName        func(Tensor, string) Tensor
	firstTensor    func(Context) Tensor
	nextTensor     func(Context, Tensor) Tensor
	fp16ToFP32Row  func(unsafe.Pointer, unsafe.Pointer, int64)
	fp32ToFP16Row  func(unsafe.Pointer, unsafe.Pointer, int64)
	quantizeChunk  func(tensor.Type, unsafe.Pointer, unsafe.Pointer, int64, int64, int64, unsafe.Pointer) uintptr
	opName         func(tensor.Op) string
	typeName       func(tensor.Type) string
	tensorOverhead func() uintptr
	graphOverhead  func() uintptr

	backendLoad        func(string) Reg
	backendLoadAll     func()
	backendLoadAllFrom func(string)
	devByName          func(string) Device
	devCount           func() uintptr
	devGet             func(uintptr) Device
	devName            func(Device) string
	devDescription     func(Device) string
	devMemory          func(Device, *uintptr, *uintptr)
	devInit            func(Device, uintptr) Backend
	devSupportsOp      func(Device, Tensor) bool
	initByType         func(int32, uintptr) Backend
	backendFree        func(Backend)
	backendName        func(Backend) string
	backendGetDevice   func(Backend) Device
	allocCtxTensors    func(Context, Backend) Buffer
	bufferFree         func(Buffer)
	tensorSet          func(Tensor, unsafe.Pointer, uintptr, uintptr)
	tensorGet          func(Tensor, unsafe.Pointer, uintptr, uintptr)
	graphCompute       func(Backend, Graph) int32
	synchronize        func(Backend)
	devBackendReg      func(Device) Reg
	devType            func(Device) int32
	devBufferType      func(Device) BufferType
	buftAllocBuffer    func(BufferType, uintptr) Buffer
	buftName           func(BufferType) string
	bufferGetSize      func(Buffer) uintptr
	regName            func(Reg) string
	regGetProcAddress  func(Reg, string) uintptr
}

// Open dlopens libggml-base.so and then libggml.v0.5.0.so from libDir (RTLD_NOW|RTLD_GLOBAL)
// and binds the functions the suite uses.
func Open(libDir string) (*Lib, error) {
	abs, err := filepath.Abs(libDir)
	if err != nil {
		return nil, err
	}
	l := &Lib{Dir: abs}
	basePath := filepath.Join(abs, "libggml-base.so")
	ggmlPath := filepath.Join(abs, "libggml.v0.5.0.so")
	if _, err := os.Stat(ggmlPath); err != nil {
		if _, err2 := os.Stat(filepath.Join(abs, "libggml.so")); err2 == nil {
			ggmlPath = filepath.Join(abs, "libggml.so")
		}
	}
	if l.base, err = purego.Dlopen(basePath, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
		return nil, fmt.Errorf("ggml: dlopen %s: %w", basePath, err)
	}
	if l.ggml, err = purego.Dlopen(ggmlPath, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
		return nil, fmt.Errorf("ggml: dlopen %s: %w", ggmlPath, err)
	}
	var errs []error
	reg := func(fptr any, name string) {
		sym, err := purego.Dlsym(l.ggml, name)
		if err != nil || sym == 0 {
			sym, err = purego.Dlsym(l.base, name)
		}
		if err != nil || sym == 0 {
			errs = append(errs, fmt.Errorf("ggml: symbol %s not found: %v", name, err))
			return
		}
		purego.RegisterFunc(fptr, sym)
	}
	reg(&l.initFn, "ggml_init")
	reg(&l.free, "ggml_free")
	reg(&l.newTensor1d, "ggml_new_tensor_1d")
	reg(&l.newTensor2d, "ggml_new_tensor_2d")
	reg(&l.newTensor3d, "ggml_new_tensor_3d")
	reg(&l.newTensor4d, "ggml_new_tensor_4d")
	reg(&l.view1d, "ggml_view_1d")
	reg(&l.view2d, "ggml_view_2d")
	reg(&l.view3d, "ggml_view_3d")
	reg(&l.view4d, "ggml_view_4d")
	reg(&l.permute, "ggml_permute")
	reg(&l.transpose, "ggml_transpose")
	reg(&l.reshape4d, "ggml_reshape_4d")
	reg(&l.cont, "ggml_cont")
	reg(&l.cont2D, "ggml_cont_2d")
	reg(&l.cpy, "ggml_cpy")
	reg(&l.dup, "ggml_dup")
	reg(&l.add, "ggml_add")
	reg(&l.addInplace, "ggml_add_inplace")
	reg(&l.sub, "ggml_sub")
	reg(&l.subInplace, "ggml_sub_inplace")
	reg(&l.mul, "ggml_mul")
	reg(&l.mulInplace, "ggml_mul_inplace")
	reg(&l.div, "ggml_div")
	reg(&l.divInplace, "ggml_div_inplace")
	reg(&l.scale, "ggml_scale")
	reg(&l.scaleInplace, "ggml_scale_inplace")
	reg(&l.scaleBias, "ggml_scale_bias")
	reg(&l.scaleBiasInp, "ggml_scale_bias_inplace")
	reg(&l.rmsNorm, "ggml_rms_norm")
	reg(&l.norm, "ggml_norm")
	reg(&l.getRows, "ggml_get_rows")
	reg(&l.mulMat, "ggml_mul_mat")
	reg(&l.softMax, "ggml_soft_max")
	reg(&l.softMaxExt, "ggml_soft_max_ext")
	reg(&l.silu, "ggml_silu")
	reg(&l.gelu, "ggml_gelu")
	reg(&l.swiglu, "ggml_swiglu")
	reg(&l.swigluSplit, "ggml_swiglu_split")
	reg(&l.sin, "ggml_sin")
	reg(&l.setRows, "ggml_set_rows")
	reg(&l.ropeInplace, "ggml_rope_inplace")
	reg(&l.ropeExt, "ggml_rope_ext")
	reg(&l.ropeExtInp, "ggml_rope_ext_inplace")
	reg(&l.ropeMulti, "ggml_rope_multi")
	reg(&l.newGraph, "ggml_new_graph")
	reg(&l.buildForward, "ggml_build_forward_expand")
	reg(&l.graphNNodes, "ggml_graph_n_nodes")
	reg(&l.graphNode, "ggml_graph_node")
	reg(&l.nbytes, "ggml_nbytes")
	reg(&l.nelements, "ggml_nelements")
	reg(&l.setName, "ggml_set_name")
	reg(&l.firstTensor, "ggml_get_first_tensor")
	reg(&l.nextTensor, "ggml_get_next_tensor")
	reg(&l.fp16ToFP32Row, "ggml_fp16_to_fp32_row")
	reg(&l.fp32ToFP16Row, "ggml_fp32_to_fp16_row")
	reg(&l.quantizeChunk, "ggml_quantize_chunk")
	reg(&l.opName, "ggml_op_name")
	reg(&l.typeName, "ggml_type_name")
	reg(&l.tensorOverhead, "ggml_tensor_overhead")
	reg(&l.graphOverhead, "ggml_graph_overhead")
	reg(&l.backendLoad, "ggml_backend_load")
	reg(&l.backendLoadAll, "ggml_backend_load_all")
	reg(&l.backendLoadAllFrom, "ggml_backend_load_all_from_path")
	reg(&l.devByName, "ggml_backend_dev_by_name")
	reg(&l.devCount, "ggml_backend_dev_count")
	reg(&l.devGet, "ggml_backend_dev_get")
	reg(&l.devName, "ggml_backend_dev_name")
	reg(&l.devDescription, "ggml_backend_dev_description")
	reg(&l.devMemory, "ggml_backend_dev_memory")
	reg(&l.devInit, "ggml_backend_dev_init")
	reg(&l.devSupportsOp, "ggml_backend_dev_supports_op")
	reg(&l.initByType, "ggml_backend_init_by_type")
	reg(&l.backendFree, "ggml_backend_free")
	reg(&l.backendName, "ggml_backend_name")
	reg(&l.backendGetDevice, "ggml_backend_get_device")
	reg(&l.allocCtxTensors, "ggml_backend_alloc_ctx_tensors")
	reg(&l.bufferFree, "ggml_backend_buffer_free")
	reg(&l.tensorSet, "ggml_backend_tensor_set")
	reg(&l.tensorGet, "ggml_backend_tensor_get")
	reg(&l.graphCompute, "ggml_backend_graph_compute")
	reg(&l.synchronize, "ggml_backend_synchronize")
	reg(&l.devBackendReg, "ggml_backend_dev_backend_reg")
	reg(&l.devType, "ggml_backend_dev_type")
	reg(&l.devBufferType, "ggml_backend_dev_buffer_type")
	reg(&l.buftAllocBuffer, "ggml_backend_buft_alloc_buffer")
	reg(&l.buftName, "ggml_backend_buft_name")
	reg(&l.bufferGetSize, "ggml_backend_buffer_get_size")
	reg(&l.regName, "ggml_backend_reg_name")
	reg(&l.regGetProcAddress, "ggml_backend_reg_get_proc_address")
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return l, nil
}

// Init creates a ggml context (ggml_init). With noAlloc set, tensors get no host memory and
// must be allocated in a backend buffer (AllocCtxTensors).
func (l *Lib) Init(memSize uintptr, noAlloc bool) Context {
	return l.initFn(InitParams{MemSize: memSize, NoAlloc: noAlloc})
}

// Free frees a context (ggml_free).
func (l *Lib) Free(ctx Context) { l.free(ctx) }

// NewTensor1D creates a 1-D tensor (ggml_new_tensor_1d).
func (l *Lib) NewTensor1D(ctx Context, t tensor.Type, ne0 int64) Tensor {
	return l.newTensor1d(ctx, t, ne0)
}

// NewTensor2D creates a 2-D tensor (ggml_new_tensor_2d).
func (l *Lib) NewTensor2D(ctx Context, t tensor.Type, ne0, ne1 int64) Tensor {
	return l.newTensor2d(ctx, t, ne0, ne1)
}

// NewTensor3D creates a 3-D tensor (ggml_new_tensor_3d).
func (l *Lib) NewTensor3D(ctx Context, t tensor.Type, ne0, ne1, ne2 int64) Tensor {
	return l.newTensor3d(ctx, t, ne0, ne1, ne2)
}

// NewTensor4D creates a 4-D tensor (ggml_new_tensor_4d).
func (l *Lib) NewTensor4D(ctx Context, t tensor.Type, ne0, ne1, ne2, ne3 int64) Tensor {
	return l.newTensor4d(ctx, t, ne0, ne1, ne2, ne3)
}

// View1D creates a 1-D view of a at byte offset (ggml_view_1d).
func (l *Lib) View1D(ctx Context, a Tensor, ne0 int64, offset uint64) Tensor {
	return l.view1d(ctx, a, ne0, uintptr(offset))
}

// View2D creates a 2-D view of a with row stride nb1 at byte offset (ggml_view_2d).
func (l *Lib) View2D(ctx Context, a Tensor, ne0, ne1 int64, nb1, offset uint64) Tensor {
	return l.view2d(ctx, a, ne0, ne1, uintptr(nb1), uintptr(offset))
}

// View3D creates a 3-D view of a (ggml_view_3d).
func (l *Lib) View3D(ctx Context, a Tensor, ne0, ne1, ne2 int64, nb1, nb2, offset uint64) Tensor {
	return l.view3d(ctx, a, ne0, ne1, ne2, uintptr(nb1), uintptr(nb2), uintptr(offset))
}

// View4D creates a 4-D view of a (ggml_view_4d).
func (l *Lib) View4D(ctx Context, a Tensor, ne0, ne1, ne2, ne3 int64, nb1, nb2, nb3, offset uint64) Tensor {
	return l.view4d(ctx, a, ne0, ne1, ne2, ne3, uintptr(nb1), uintptr(nb2), uintptr(nb3), uintptr(offset))
}

// Permute permutes the axes of a: source axis i goes to position axis[i] (ggml_permute).
func (l *Lib) Permute(ctx Context, a Tensor, ax0, ax1, ax2, ax3 int) Tensor {
	return l.permute(ctx, a, int32(ax0), int32(ax1), int32(ax2), int32(ax3))
}

// Transpose swaps the first two axes of a (ggml_transpose).
func (l *Lib) Transpose(ctx Context, a Tensor) Tensor { return l.transpose(ctx, a) }

// Reshape4D reshapes a contiguous tensor (ggml_reshape_4d).
func (l *Lib) Reshape4D(ctx Context, a Tensor, ne0, ne1, ne2, ne3 int64) Tensor {
	return l.reshape4d(ctx, a, ne0, ne1, ne2, ne3)
}

// Cont makes a contiguous copy of a (ggml_cont).
func (l *Lib) Cont(ctx Context, a Tensor) Tensor { return l.cont(ctx, a) }

// Cont2D makes a contiguous copy of a in the shape ne0 x ne1 (ggml_cont_2d: one CONT node).
func (l *Lib) Cont2D(ctx Context, a Tensor, ne0, ne1 int64) Tensor { return l.cont2D(ctx, a, ne0, ne1) }

// Cpy copies a into b and returns a view of b (ggml_cpy).
func (l *Lib) Cpy(ctx Context, a, b Tensor) Tensor { return l.cpy(ctx, a, b) }

// Dup duplicates a (ggml_dup).
func (l *Lib) Dup(ctx Context, a Tensor) Tensor { return l.dup(ctx, a) }

// Add returns a+b with b broadcast over a (ggml_add).
func (l *Lib) Add(ctx Context, a, b Tensor) Tensor { return l.add(ctx, a, b) }

// AddInplace is Add writing into a (ggml_add_inplace).
func (l *Lib) AddInplace(ctx Context, a, b Tensor) Tensor { return l.addInplace(ctx, a, b) }

// Sub returns a-b (ggml_sub).
func (l *Lib) Sub(ctx Context, a, b Tensor) Tensor { return l.sub(ctx, a, b) }

// SubInplace is Sub writing into a (ggml_sub_inplace).
func (l *Lib) SubInplace(ctx Context, a, b Tensor) Tensor { return l.subInplace(ctx, a, b) }

// Mul returns a*b (ggml_mul).
func (l *Lib) Mul(ctx Context, a, b Tensor) Tensor { return l.mul(ctx, a, b) }

// MulInplace is Mul writing into a (ggml_mul_inplace).
func (l *Lib) MulInplace(ctx Context, a, b Tensor) Tensor { return l.mulInplace(ctx, a, b) }

// Div returns a/b (ggml_div).
func (l *Lib) Div(ctx Context, a, b Tensor) Tensor { return l.div(ctx, a, b) }

// DivInplace is Div writing into a (ggml_div_inplace).
func (l *Lib) DivInplace(ctx Context, a, b Tensor) Tensor { return l.divInplace(ctx, a, b) }

// Scale returns a*s (ggml_scale).
func (l *Lib) Scale(ctx Context, a Tensor, s float32) Tensor { return l.scale(ctx, a, s) }

// ScaleInplace is Scale writing into a (ggml_scale_inplace).
func (l *Lib) ScaleInplace(ctx Context, a Tensor, s float32) Tensor {
	return l.scaleInplace(ctx, a, s)
}

// ScaleBias returns a*s + b (ggml_scale_bias).
func (l *Lib) ScaleBias(ctx Context, a Tensor, s, b float32) Tensor {
	return l.scaleBias(ctx, a, s, b)
}

// ScaleBiasInplace is ScaleBias writing into a (ggml_scale_bias_inplace).
func (l *Lib) ScaleBiasInplace(ctx Context, a Tensor, s, b float32) Tensor {
	return l.scaleBiasInp(ctx, a, s, b)
}

// RMSNorm normalizes the rows of a by their root mean square (ggml_rms_norm).
func (l *Lib) RMSNorm(ctx Context, a Tensor, eps float32) Tensor { return l.rmsNorm(ctx, a, eps) }

// Norm normalizes the rows of a to zero mean and unit variance (ggml_norm).
func (l *Lib) Norm(ctx Context, a Tensor, eps float32) Tensor { return l.norm(ctx, a, eps) }

// GetRows gathers the rows of a named by the I32 tensor b (ggml_get_rows).
func (l *Lib) GetRows(ctx Context, a, b Tensor) Tensor { return l.getRows(ctx, a, b) }

// MulMat returns a*b^T as ggml defines it (ggml_mul_mat).
func (l *Lib) MulMat(ctx Context, a, b Tensor) Tensor { return l.mulMat(ctx, a, b) }

// SoftMax returns the row-wise softmax of a (ggml_soft_max).
func (l *Lib) SoftMax(ctx Context, a Tensor) Tensor { return l.softMax(ctx, a) }

// SoftMaxExt returns softmax(a*scale + mask*slope) (ggml_soft_max_ext); mask may be 0.
func (l *Lib) SoftMaxExt(ctx Context, a, mask Tensor, scale, maxBias float32) Tensor {
	return l.softMaxExt(ctx, a, mask, scale, maxBias)
}

// SiLU applies x*sigmoid(x) (ggml_silu).
func (l *Lib) SiLU(ctx Context, a Tensor) Tensor { return l.silu(ctx, a) }

// GELU applies the tanh-approximated GELU (ggml_gelu).
func (l *Lib) GELU(ctx Context, a Tensor) Tensor { return l.gelu(ctx, a) }

// SwiGLU applies silu(first half of each row) * second half (ggml_swiglu).
func (l *Lib) SwiGLU(ctx Context, a Tensor) Tensor { return l.swiglu(ctx, a) }

// SwiGLUSplit applies silu(a)*b (ggml_swiglu_split).
func (l *Lib) SwiGLUSplit(ctx Context, a, b Tensor) Tensor { return l.swigluSplit(ctx, a, b) }

// Sin applies sin element-wise (ggml_sin).
func (l *Lib) Sin(ctx Context, a Tensor) Tensor { return l.sin(ctx, a) }

// SetRows writes the rows of values into dst at the row indices named by the I64 or I32
// tensor rows, and returns a view of dst (ggml_set_rows(ctx, dst, values, rows)); rows
// [n, ne2', ne3'] is broadcast over dims 2 and 3 of values.
func (l *Lib) SetRows(ctx Context, dst, values, rows Tensor) Tensor {
	return l.setRows(ctx, dst, values, rows)
}

// RopeInplace rotates a in place with ggml's default RoPE parameters (ggml_rope_inplace).
func (l *Lib) RopeInplace(ctx Context, a, pos Tensor, nDims, mode int) Tensor {
	return l.ropeInplace(ctx, a, pos, int32(nDims), int32(mode))
}

// RopeExt applies rotary position embedding to a (ggml_rope_ext): pos is an I32 tensor of
// ne2 positions, freq (may be 0) F32 frequency factors of n_dims/2 elements.
func (l *Lib) RopeExt(ctx Context, a, pos, freq Tensor, p RopeExt) Tensor {
	return l.ropeExt(ctx, a, pos, freq, int32(p.NDims), int32(p.Mode), int32(p.NCtxOrig),
		p.FreqBase, p.FreqScale, p.ExtFactor, p.AttnFactor, p.BetaFast, p.BetaSlow)
}

// RopeExtInplace is RopeExt writing into a (ggml_rope_ext_inplace).
func (l *Lib) RopeExtInplace(ctx Context, a, pos, freq Tensor, p RopeExt) Tensor {
	return l.ropeExtInp(ctx, a, pos, freq, int32(p.NDims), int32(p.Mode), int32(p.NCtxOrig),
		p.FreqBase, p.FreqScale, p.ExtFactor, p.AttnFactor, p.BetaFast, p.BetaSlow)
}

// RopeMulti is multi-section RoPE for the MROPE, IMROPE and VISION modes (ggml_rope_multi);
// pos holds 4 positions per ne2.
func (l *Lib) RopeMulti(ctx Context, a, pos, freq Tensor, sections [4]int32, p RopeExt) Tensor {
	return l.ropeMulti(ctx, a, pos, freq, int32(p.NDims), unsafe.Pointer(&sections[0]), int32(p.Mode),
		int32(p.NCtxOrig), p.FreqBase, p.FreqScale, p.ExtFactor, p.AttnFactor, p.BetaFast, p.BetaSlow)
}

// NewGraph creates a graph of the default size in ctx (ggml_new_graph).
func (l *Lib) NewGraph(ctx Context) Graph { return l.newGraph(ctx) }

// BuildForwardExpand adds t and its ancestors to g (ggml_build_forward_expand).
func (l *Lib) BuildForwardExpand(g Graph, t Tensor) { l.buildForward(g, t) }

// GraphNNodes returns the number of nodes of g (ggml_graph_n_nodes).
func (l *Lib) GraphNNodes(g Graph) int { return int(l.graphNNodes(g)) }

// GraphNode returns node i of g; negative i counts from the end (ggml_graph_node).
func (l *Lib) GraphNode(g Graph, i int) Tensor { return l.graphNode(g, int32(i)) }

// NBytes returns the byte span of t (ggml_nbytes).
func (l *Lib) NBytes(t Tensor) uint64 { return uint64(l.nbytes(t)) }

// NElements returns the number of elements of t (ggml_nelements).
func (l *Lib) NElements(t Tensor) int64 { return l.nelements(t) }

// SetName sets the name of t (ggml_set_name) and returns t.
func (l *Lib) SetName(t Tensor, name string) Tensor { return l.setName(t, name) }

// FirstTensor returns the first tensor of ctx, or 0 (ggml_get_first_tensor).
func (l *Lib) FirstTensor(ctx Context) Tensor { return l.firstTensor(ctx) }

// NextTensor returns the tensor after t in ctx, or 0 (ggml_get_next_tensor).
func (l *Lib) NextTensor(ctx Context, t Tensor) Tensor { return l.nextTensor(ctx, t) }

// Tensors returns all tensors of ctx in creation order.
func (l *Lib) Tensors(ctx Context) []Tensor {
	var ts []Tensor
	for t := l.FirstTensor(ctx); t != 0; t = l.NextTensor(ctx, t) {
		ts = append(ts, t)
	}
	return ts
}

// FP16ToFP32 converts IEEE half-precision bit patterns to float32 (ggml_fp16_to_fp32_row).
func (l *Lib) FP16ToFP32(src []uint16) []float32 {
	dst := make([]float32, len(src))
	if len(src) > 0 {
		l.fp16ToFP32Row(unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0]), int64(len(src)))
	}
	return dst
}

// FP32ToFP16 converts float32 values to IEEE half-precision bit patterns (ggml_fp32_to_fp16_row).
func (l *Lib) FP32ToFP16(src []float32) []uint16 {
	dst := make([]uint16, len(src))
	if len(src) > 0 {
		l.fp32ToFP16Row(unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0]), int64(len(src)))
	}
	return dst
}

// Quantize converts rows of perRow float32 values to the blocks of the quantized type t
// with ggml's own quantizer (ggml_quantize_chunk; an importance matrix of ones for the types
// that require one, as test-backend-ops passes, none otherwise); len(src)
// must be a whole number of rows, and perRow a multiple of t's block.
func (l *Lib) Quantize(t tensor.Type, src []float32, perRow int) ([]byte, error) {
	be := t.BlockElems()
	if !t.Quantized() || perRow <= 0 || perRow%be != 0 || len(src)%perRow != 0 {
		return nil, fmt.Errorf("ggml: cannot quantize %d values to %s in rows of %d", len(src), t, perRow)
	}
	rows := len(src) / perRow
	dst := make([]byte, rows*perRow/be*t.Size())
	if rows == 0 {
		return dst, nil
	}
	im, ones, err := l.importance(t, perRow)
	if err != nil {
		return nil, err
	}
	n := l.quantizeChunk(t, unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0]), 0, int64(rows), int64(perRow), im)
	runtime.KeepAlive(ones)
	if int(n) != len(dst) {
		return nil, fmt.Errorf("ggml: ggml_quantize_chunk(%s) wrote %d bytes, want %d", t, n, len(dst))
	}
	return dst, nil
}

// OpName returns ggml's name of an op, e.g. "ADD" (ggml_op_name).
func (l *Lib) OpName(op tensor.Op) string { return l.opName(op) }

// TypeName returns ggml's name of a type, e.g. "f32" (ggml_type_name).
func (l *Lib) TypeName(t tensor.Type) string { return l.typeName(t) }

// TensorOverhead returns the context memory one tensor header takes (ggml_tensor_overhead).
func (l *Lib) TensorOverhead() uint64 { return uint64(l.tensorOverhead()) }

// GraphOverhead returns the context memory a default-size graph takes (ggml_graph_overhead).
func (l *Lib) GraphOverhead() uint64 { return uint64(l.graphOverhead()) }

// BackendLoad loads a dynamic backend library (ggml_backend_load); 0 on failure.
func (l *Lib) BackendLoad(path string) Reg { return l.backendLoad(path) }

// BackendLoadAll loads the known dynamic backends from the executable's directory and the
// working directory, then GGML_BACKEND_PATH (ggml_backend_load_all).
func (l *Lib) BackendLoadAll() { l.backendLoadAll() }

// BackendLoadAllFromPath is BackendLoadAll searching dir instead (ggml_backend_load_all_from_path).
func (l *Lib) BackendLoadAllFromPath(dir string) { l.backendLoadAllFrom(dir) }

// DevByName finds a device by name, case-insensitively (ggml_backend_dev_by_name); 0 if none.
func (l *Lib) DevByName(name string) Device { return l.devByName(name) }

// DevCount returns the number of registered devices (ggml_backend_dev_count).
func (l *Lib) DevCount() int { return int(l.devCount()) }

// DevGet returns device i (ggml_backend_dev_get).
func (l *Lib) DevGet(i int) Device { return l.devGet(uintptr(i)) }

// DevName returns the device's name (ggml_backend_dev_name).
func (l *Lib) DevName(d Device) string { return l.devName(d) }

// DevDescription returns the device's description (ggml_backend_dev_description).
func (l *Lib) DevDescription(d Device) string { return l.devDescription(d) }

// DevMemory returns the device's free and total memory in bytes (ggml_backend_dev_memory).
func (l *Lib) DevMemory(d Device) (free, total uint64) {
	var f, t uintptr
	l.devMemory(d, &f, &t)
	return uint64(f), uint64(t)
}

// DevType returns the device's type, e.g. DevTypeGPU (ggml_backend_dev_type).
func (l *Lib) DevType(d Device) int { return int(l.devType(d)) }

// DevBufferType returns the device's buffer type (ggml_backend_dev_buffer_type).
func (l *Lib) DevBufferType(d Device) BufferType { return l.devBufferType(d) }

// DevBackendReg returns the registry the device belongs to (ggml_backend_dev_backend_reg).
func (l *Lib) DevBackendReg(d Device) Reg { return l.devBackendReg(d) }

// RegName returns a registry's name (ggml_backend_reg_name).
func (l *Lib) RegName(r Reg) string { return l.regName(r) }

// BuftName returns a buffer type's name (ggml_backend_buft_name).
func (l *Lib) BuftName(b BufferType) string { return l.buftName(b) }

// BuftAllocBuffer allocates a buffer of size bytes of the buffer type
// (ggml_backend_buft_alloc_buffer); 0 on failure.
func (l *Lib) BuftAllocBuffer(b BufferType, size uint64) Buffer {
	return l.buftAllocBuffer(b, uintptr(size))
}

// BufferSize returns a buffer's size in bytes (ggml_backend_buffer_get_size).
func (l *Lib) BufferSize(b Buffer) uint64 { return uint64(l.bufferGetSize(b)) }

// DevInit creates a backend on the device with NULL params (ggml_backend_dev_init).
func (l *Lib) DevInit(d Device) Backend { return l.devInit(d, 0) }

// DevSupportsOp asks the device whether it can compute op (ggml_backend_dev_supports_op).
func (l *Lib) DevSupportsOp(d Device, op Tensor) bool { return l.devSupportsOp(d, op) }

// InitByType creates a backend on the first device of the given type with NULL params
// (ggml_backend_init_by_type); DevTypeCPU gives the CPU backend.
func (l *Lib) InitByType(devType int) Backend { return l.initByType(int32(devType), 0) }

// BackendFree frees a backend (ggml_backend_free).
func (l *Lib) BackendFree(b Backend) { l.backendFree(b) }

// BackendName returns the backend's name (ggml_backend_name).
func (l *Lib) BackendName(b Backend) string { return l.backendName(b) }

// BackendDevice returns the backend's device (ggml_backend_get_device).
func (l *Lib) BackendDevice(b Backend) Device { return l.backendGetDevice(b) }

// BackendSupportsOp asks the backend's device whether it can compute op.
func (l *Lib) BackendSupportsOp(b Backend, op Tensor) bool {
	return l.devSupportsOp(l.backendGetDevice(b), op)
}

// AllocCtxTensors allocates every tensor of a no_alloc ctx in one buffer of the backend
// (ggml_backend_alloc_ctx_tensors); 0 on failure or if there is nothing to allocate.
func (l *Lib) AllocCtxTensors(ctx Context, b Backend) Buffer { return l.allocCtxTensors(ctx, b) }

// BufferFree frees a backend buffer (ggml_backend_buffer_free).
func (l *Lib) BufferFree(buf Buffer) { l.bufferFree(buf) }

// TensorSet copies data into t at byte offset (ggml_backend_tensor_set).
func (l *Lib) TensorSet(t Tensor, data []byte, offset uint64) {
	if len(data) == 0 {
		return
	}
	l.tensorSet(t, unsafe.Pointer(&data[0]), uintptr(offset), uintptr(len(data)))
}

// TensorGet copies len(data) bytes of t from byte offset into data (ggml_backend_tensor_get).
func (l *Lib) TensorGet(t Tensor, data []byte, offset uint64) {
	if len(data) == 0 {
		return
	}
	l.tensorGet(t, unsafe.Pointer(&data[0]), uintptr(offset), uintptr(len(data)))
}

// GraphCompute computes g on the backend (ggml_backend_graph_compute) and returns the
// ggml_status (tensor.StatusSuccess is 0).
func (l *Lib) GraphCompute(b Backend, g Graph) tensor.Status {
	return tensor.Status(l.graphCompute(b, g))
}

// Synchronize waits for the backend's pending work (ggml_backend_synchronize).
func (l *Lib) Synchronize(b Backend) { l.synchronize(b) }

// SetNThreads sets the number of threads of a backend through its registry's optional
// "ggml_backend_set_n_threads" function; it reports false if the backend has none.
func (l *Lib) SetNThreads(b Backend, n int) bool {
	reg := l.devBackendReg(l.backendGetDevice(b))
	if reg == 0 {
		return false
	}
	sym := l.regGetProcAddress(reg, "ggml_backend_set_n_threads")
	if sym == 0 {
		return false
	}
	var fn func(Backend, int32)
	purego.RegisterFunc(&fn, sym)
	fn(b, int32(n))
	return true
}

// LoadCPU makes the CPU backend available and returns a new CPU backend. The CPU backend is a
// dynamic backend in this ggml build: the best libggml-cpu-*.so variant in the library
// directory is loaded with ggml_backend_load_all_from_path, falling back to
// libggml-cpu-x64.so.
func (l *Lib) LoadCPU() (Backend, error) {
	if !l.hasCPUDevice() {
		l.BackendLoadAllFromPath(l.Dir)
	}
	if !l.hasCPUDevice() {
		l.BackendLoad(filepath.Join(l.Dir, "libggml-cpu-x64.so"))
	}
	b := l.InitByType(DevTypeCPU)
	if b == 0 {
		return 0, fmt.Errorf("ggml: no CPU backend could be loaded from %s", l.Dir)
	}
	return b, nil
}

func (l *Lib) hasCPUDevice() bool {
	return l.DevByName("CPU") != 0
}

// LoadDevice loads the backend library at path (unless a device named devName is already
// registered, e.g. through GGML_BACKEND_PATH) and returns a new backend on device devName.
func (l *Lib) LoadDevice(path, devName string) (Backend, Device, error) {
	d := l.DevByName(devName)
	if d == 0 {
		if _, err := os.Stat(path); err != nil {
			return 0, 0, fmt.Errorf("ggml: backend library: %w", err)
		}
		if l.BackendLoad(path) == 0 {
			return 0, 0, fmt.Errorf("ggml: ggml_backend_load(%s) failed", path)
		}
		d = l.DevByName(devName)
	}
	if d == 0 {
		var names []string
		for i := 0; i < l.DevCount(); i++ {
			names = append(names, l.DevName(l.DevGet(i)))
		}
		return 0, 0, fmt.Errorf("ggml: no device %q after loading %s (devices: %v)", devName, path, names)
	}
	b := l.DevInit(d)
	if b == 0 {
		return 0, 0, fmt.Errorf("ggml: ggml_backend_dev_init(%s) failed", devName)
	}
	return b, d, nil
}
