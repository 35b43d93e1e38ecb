package ggml

import "unsafe"

// initParams mirrors struct ggml_init_params {size_t mem_size; void *mem_buffer; bool no_alloc;}.
type initParams struct {
	memSize   uintptr
	memBuffer uintptr
	noAlloc   bool
	_         [7]byte
}

// functions holds the C functions the package calls, bound by Library.bind. C pointers
// (contexts, tensors, graphs, backends, devices, buffers) are uintptr values.
type functions struct {
	initCtx         func(initParams) uintptr
	freeCtx         func(uintptr)
	usedMem         func(uintptr) uintptr
	memSize         func(uintptr) uintptr
	tensorOverhead  func() uintptr
	graphOverhead   func(uintptr, bool) uintptr
	newTensor       func(uintptr, int32, int32, unsafe.Pointer) uintptr
	setName         func(uintptr, string) uintptr
	nbytes          func(uintptr) uintptr
	typeName        func(int32) string
	opDesc          func(uintptr) string
	statusString    func(int32) string
	newGraph        func(uintptr, uintptr, bool) uintptr
	buildForward    func(uintptr, uintptr)
	graphNNodes     func(uintptr) int32
	graphNode       func(uintptr, int32) uintptr
	fp32ToFP16      func(unsafe.Pointer, unsafe.Pointer, int64)
	fp16ToFP32      func(unsafe.Pointer, unsafe.Pointer, int64)
	add, sub        func(uintptr, uintptr, uintptr) uintptr
	mul, div        func(uintptr, uintptr, uintptr) uintptr
	mulMat          func(uintptr, uintptr, uintptr) uintptr
	getRows         func(uintptr, uintptr, uintptr) uintptr
	scale           func(uintptr, uintptr, float32) uintptr
	rmsNorm, norm   func(uintptr, uintptr, float32) uintptr
	softMax         func(uintptr, uintptr) uintptr
	softMaxExt      func(uintptr, uintptr, uintptr, float32, float32) uintptr
	ropeExt         func(uintptr, uintptr, uintptr, uintptr, int32, int32, int32, float32, float32, float32, float32, float32, float32) uintptr
	silu, gelu      func(uintptr, uintptr) uintptr
	cont, transpose func(uintptr, uintptr) uintptr
	reshape4d       func(uintptr, uintptr, int64, int64, int64, int64) uintptr
	permute         func(uintptr, uintptr, int32, int32, int32, int32) uintptr
	backendLoad     func(string) uintptr
	loadAllFromPath func(string)
	devCount        func() uintptr
	devGet          func(uintptr) uintptr
	devName         func(uintptr) string
	devDescription  func(uintptr) string
	devType         func(uintptr) int32
	devMemory       func(uintptr, *uintptr, *uintptr)
	devByName       func(string) uintptr
	devInit         func(uintptr, uintptr) uintptr
	backendFree     func(uintptr)
	backendName     func(uintptr) string
	backendSupports func(uintptr, uintptr) bool
	allocCtxTensors func(uintptr, uintptr) uintptr
	bufferFree      func(uintptr)
	bufferSize      func(uintptr) uintptr
	tensorSet       func(uintptr, unsafe.Pointer, uintptr, uintptr)
	tensorGet       func(uintptr, unsafe.Pointer, uintptr, uintptr)
	graphCompute    func(uintptr, uintptr) int32
}

// symbol pairs a C function name with the field that receives it.
type symbol struct {
	name string
	fptr any
}

// symbols lists every function of the table with its C name.
func (f *functions) symbols() []symbol {
	return []symbol{
		{"ggml_init", &f.initCtx}, {"ggml_free", &f.freeCtx},
		{"ggml_used_mem", &f.usedMem}, {"ggml_get_mem_size", &f.memSize},
		{"ggml_tensor_overhead", &f.tensorOverhead}, {"ggml_graph_overhead_custom", &f.graphOverhead},
		{"ggml_new_tensor", &f.newTensor}, {"ggml_set_name", &f.setName}, {"ggml_nbytes", &f.nbytes},
		{"ggml_type_name", &f.typeName}, {"ggml_op_desc", &f.opDesc},
		{"ggml_status_to_string", &f.statusString},
		{"ggml_new_graph_custom", &f.newGraph}, {"ggml_build_forward_expand", &f.buildForward},
		{"ggml_graph_n_nodes", &f.graphNNodes}, {"ggml_graph_node", &f.graphNode},
		{"ggml_fp32_to_fp16_row", &f.fp32ToFP16}, {"ggml_fp16_to_fp32_row", &f.fp16ToFP32},
		{"ggml_add", &f.add}, {"ggml_sub", &f.sub}, {"ggml_mul", &f.mul}, {"ggml_div", &f.div},
		{"ggml_mul_mat", &f.mulMat}, {"ggml_get_rows", &f.getRows}, {"ggml_scale", &f.scale},
		{"ggml_rms_norm", &f.rmsNorm}, {"ggml_norm", &f.norm},
		{"ggml_soft_max", &f.softMax}, {"ggml_soft_max_ext", &f.softMaxExt},
		{"ggml_rope_ext", &f.ropeExt}, {"ggml_silu", &f.silu}, {"ggml_gelu", &f.gelu},
		{"ggml_cont", &f.cont}, {"ggml_transpose", &f.transpose},
		{"ggml_reshape_4d", &f.reshape4d}, {"ggml_permute", &f.permute},
		{"ggml_backend_load", &f.backendLoad}, {"ggml_backend_load_all_from_path", &f.loadAllFromPath},
		{"ggml_backend_dev_count", &f.devCount}, {"ggml_backend_dev_get", &f.devGet},
		{"ggml_backend_dev_name", &f.devName}, {"ggml_backend_dev_description", &f.devDescription},
		{"ggml_backend_dev_type", &f.devType}, {"ggml_backend_dev_memory", &f.devMemory},
		{"ggml_backend_dev_by_name", &f.devByName}, {"ggml_backend_dev_init", &f.devInit},
		{"ggml_backend_free", &f.backendFree}, {"ggml_backend_name", &f.backendName},
		{"ggml_backend_supports_op", &f.backendSupports},
		{"ggml_backend_alloc_ctx_tensors", &f.allocCtxTensors},
		{"ggml_backend_buffer_free", &f.bufferFree}, {"ggml_backend_buffer_get_size", &f.bufferSize},
		{"ggml_backend_tensor_set", &f.tensorSet}, {"ggml_backend_tensor_get", &f.tensorGet},
		{"ggml_backend_graph_compute", &f.graphCompute},
	}
}
