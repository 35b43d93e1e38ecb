package tensor

// Byte layout of struct ggml_tensor on x86-64 (ggml 0.25.1). include/ggml-backend-abi.h
// declares the same struct for cgo; include/abi checks both against the real
// libggml-base, and the purego binding (conformance/ggml) reads tensors through these.
const (
	TensorSize        = 336
	OffsetType        = 0
	OffsetBuffer      = 8
	OffsetNe          = 16
	OffsetNb          = 48
	OffsetOp          = 80
	OffsetOpParams    = 84
	OffsetFlags       = 148
	OffsetSrc         = 152
	OffsetViewSrc     = 232
	OffsetViewOffs    = 240
	OffsetData        = 248
	OffsetName        = 256
	OffsetExtra       = 320
	MaxSrc            = 10
	MaxOpParams       = 64 // bytes
	MaxName           = 64
	GraphOffsetNNodes = 4  // int n_nodes in struct ggml_cgraph
	GraphOffsetNodes  = 16 // struct ggml_tensor **nodes
)
