package backend

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/sched"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// minScratch is the smallest scratch buffer a device creates.
const minScratch = 1 << 20

// scratchMem is a device's scratch memory (see ops.ScratchBuffer): one buffer that every
// scratch operand binds at its Loc.Addr. It grows to the largest request, at least
// doubling up to ops.ScratchBudget (fewer regrowths, each of which recompiles the graphs
// that bind scratch memory); a request beyond the budget gets exactly what it asks.
//
// A replaced buffer is released at once, with the bind groups that bind it (work already
// submitted finishes first). gen counts the buffers: a compiled graph records the
// generation it bound (compiled.scratchGen) and one of an older generation is compiled
// again before it runs, in whichever backend of the device caches it.
type scratchMem struct {
	buf *gpu.Buffer
	gen atomic.Uint64 // written under the device lock; 0 before the first buffer
}

// errScratchMoved is the answer of run for a compiled graph that binds a scratch buffer
// since replaced: the caller compiles the graph again.
var errScratchMoved = errors.New("the graph binds a replaced scratch buffer")

// scratchStale reports whether c binds a scratch buffer that has been replaced since: one
// integer compare, so that a reused graph stays cheap.
func (d *Device) scratchStale(c *compiled) bool {
	return c.scratchGen != 0 && c.scratchGen != d.scratch.gen.Load()
}

// scratchNeed returns the bytes of scratch memory the plan's scratch operands span (0 when
// it has none).
func scratchNeed(plan *sched.Plan) uint64 {
	var need uint64
	for i := range plan.Steps {
		for _, t := range plan.Steps[i].Dispatch.Tensors {
			if ops.IsScratch(t) {
				need = max(need, (t.Loc.Addr+max(t.Extent(), 4)+3)&^3)
			}
		}
	}
	return need
}

// scratchSize returns the size of the buffer that replaces one of cur bytes (0: none) for
// a request of need bytes, within a binding of maxBinding bytes.
func scratchSize(cur, need, maxBinding uint64) uint64 {
	var grow uint64 // beyond the budget: the request
	if need <= ops.ScratchBudget {
		grow = min(2*cur, ops.ScratchBudget)
	}
	return min(max(need, grow, minScratch), max(need, maxBinding))
}

// ensureScratch grows the scratch buffer to hold every scratch operand of the plan and
// returns the generation the plan's operands bind (0 when it has none). The buffer it
// replaces is released. Callers hold the device lock.
func (d *Device) ensureScratch(plan *sched.Plan) (uint64, error) {
	need := scratchNeed(plan)
	if need == 0 {
		return 0, nil
	}
	cur := d.scratch.buf
	if cur != nil && cur.Size >= need {
		return d.scratch.gen.Load(), nil
	}
	var curSize uint64
	if cur != nil {
		curSize = cur.Size
	}
	size := scratchSize(curSize, need, d.gpu.Limits.MaxStorageBufferBindingSize)
	b, err := d.gpu.CreateBuffer(size, gpu.UsageStorage)
	if err != nil {
		return 0, fmt.Errorf("%s: scratch memory of %d bytes: %w", d.Name, size, err)
	}
	if cur != nil {
		d.exe.Forget(cur)
		d.allocated -= cur.Size
		cur.Release()
	}
	d.scratch.buf = b
	d.allocated += b.Size
	return d.scratch.gen.Add(1), nil
}

// resolveScratch binds a scratch operand: the scratch buffer from the operand's offset
// (Loc.Addr) rounded down to the storage offset alignment, the remainder the operand's
// first element.
func (d *Device) resolveScratch(t *tensor.Tensor, f wgsl.Format) (operand, error) {
	b := d.scratch.buf
	ext := max(t.Extent(), 4)
	at := t.Loc.Addr
	if b == nil || b.Size < (at+ext+3)&^3 {
		return operand{}, fmt.Errorf("%s: scratch memory of %d bytes at %d not allocated", d.Name, ext, at)
	}
	align := uint64(d.gpu.Limits.MinStorageBufferOffsetAlignment)
	start := at / align * align
	rem := at - start
	if rem%uint64(f.OffsetUnit()) != 0 {
		return operand{}, fmt.Errorf("scratch operand: offset %d is not a whole number of elements", at)
	}
	size := (rem + ext + 3) &^ 3
	if size > d.gpu.Limits.MaxStorageBufferBindingSize {
		return operand{}, fmt.Errorf("scratch operand: %d bytes exceed the binding limit", size)
	}
	return operand{gpu.Binding{Buffer: b, Offset: start, Size: size}, uint32(rem / uint64(f.OffsetUnit()))}, nil
}
