package backend

import (
	"fmt"

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
// doubling; a replaced buffer stays alive until the device goes, because compiled graphs
// still bind it (doubling bounds the old buffers to the size of the current one).
type scratchMem struct {
	buf *gpu.Buffer
	old []*gpu.Buffer
}

// ensureScratch grows the scratch buffer to hold every scratch operand of the plan.
// Callers hold the device lock.
func (d *Device) ensureScratch(plan *sched.Plan) error {
	var need uint64
	for i := range plan.Steps {
		for _, t := range plan.Steps[i].Dispatch.Tensors {
			if ops.IsScratch(t) {
				need = max(need, (t.Loc.Addr+max(t.Extent(), 4)+3)&^3)
			}
		}
	}
	cur := d.scratch.buf
	if need == 0 || cur != nil && cur.Size >= need {
		return nil
	}
	size := max(need, minScratch)
	if cur != nil {
		size = max(size, 2*cur.Size)
	}
	size = min(size, max(need, d.gpu.Limits.MaxStorageBufferBindingSize))
	b, err := d.gpu.CreateBuffer(size, gpu.UsageStorage)
	if err != nil {
		return fmt.Errorf("%s: scratch memory of %d bytes: %w", d.Name, size, err)
	}
	if cur != nil {
		d.scratch.old = append(d.scratch.old, cur)
	}
	d.scratch.buf = b
	d.allocated += b.Size
	return nil
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
