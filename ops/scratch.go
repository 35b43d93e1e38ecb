package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// ScratchBuffer is the Loc.Buffer of a scratch operand: device memory that belongs to no
// ggml tensor, for results that pass from one dispatch of a node to the next (the partial
// results of split flash attention, the F16 rows of a dequantized weight chunk). A lowering
// asks for it with scratch(n) or scratchAt; the backend binds every scratch operand to one
// device-owned buffer, grown to the largest request, at the operand's Loc.Addr (a byte
// offset into the scratch memory, so that operands of one node can lie side by side).
// Dispatches run in order with a barrier between them, and a node's dispatches follow each
// other, so every node may use the scratch from its start.
const ScratchBuffer = ^uint64(0)

// ScratchBudget bounds the scratch memory one prompt product takes: its dequantized F16
// chunk (Limits.DequantChunkBytes, 32 MiB by default) and the split-K partial sums after
// it. Where the partial sums would pass the budget the product splits K into fewer parts
// (the same dispatches, fewer workgroups); a chunk limit set above the budget leaves no
// room for partial sums. The scratch buffer grows no further than the budget for what fits
// in it, and the buffer it replaces is released, so the device's own memory (this, the
// readback buffer of 1 to 4 MiB and the 1 MiB parameter arena) stays under 64 MiB for
// prompts of any length. At 56 MiB the prompt products of the 1B and 8B models keep the
// splits they had without a budget (the largest, the 8B's 14336 x 4096 in Q4_K, takes a 28
// MiB chunk and 28 MiB of partial sums); at 44 MiB three of them lost half their
// workgroups and a 1B Q4_K model's pp512 measured 4% slower on an H100.
const ScratchBudget = 56 << 20

// scratchAlign is the alignment of scratch operands placed after others (scratchAt): the
// largest storage offset alignment WebGPU allows, so that each starts a binding of its own.
const scratchAlign = 256

// scratch returns an F32 operand of n elements at the start of the device's scratch memory.
func scratch(n uint64) *tensor.Tensor { return scratchAt(tensor.F32, 0, int64(max(n, 1))) }

// scratchAt returns a contiguous operand of type ty and shape ne in the device's scratch
// memory, at byte offset at (a multiple of scratchAlign).
func scratchAt(ty tensor.Type, at uint64, ne ...int64) *tensor.Tensor {
	t := contiguous(ty, ne...)
	t.Loc = tensor.Loc{Buffer: ScratchBuffer, Addr: at}
	t.Name = "scratch"
	return t
}

// scratchEnd returns the offset just past t in scratch memory, rounded up to scratchAlign:
// where the next operand of the same node may start.
func scratchEnd(t *tensor.Tensor) uint64 {
	return (t.Loc.Addr + t.Extent() + scratchAlign - 1) / scratchAlign * scratchAlign
}

// IsScratch reports whether t is a scratch operand (see ScratchBuffer).
func IsScratch(t *tensor.Tensor) bool { return t.Loc.Buffer == ScratchBuffer }
