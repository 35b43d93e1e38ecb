package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// ScratchBuffer is the Loc.Buffer of a scratch operand: device memory that belongs to no
// ggml tensor, for results that pass from one dispatch of a node to the next (the partial
// results of split flash attention). A lowering asks for it with scratch(n); the backend
// binds every scratch operand to one device-owned buffer, grown to the largest request.
// Dispatches run in order with a barrier between them, and a node's dispatches follow each
// other, so every node may use the scratch from its start.
const ScratchBuffer = ^uint64(0)

// scratch returns an F32 operand of n elements in the device's scratch memory.
func scratch(n uint64) *tensor.Tensor {
	t := contiguous(tensor.F32, int64(max(n, 1)))
	t.Loc = tensor.Loc{Buffer: ScratchBuffer}
	t.Name = "scratch"
	return t
}

// IsScratch reports whether t is a scratch operand (see ScratchBuffer).
func IsScratch(t *tensor.Tensor) bool { return t.Loc.Buffer == ScratchBuffer }
