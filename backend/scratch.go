package backend

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/sched"
)

// minScratch is the smallest scratch buffer a device creates.
const minScratch = 1 << 20

// scratchMem is a device's scratch memory (see ops.ScratchBuffer): one buffer that every
// scratch operand binds from its start. It grows to the largest request, at least
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
				need = max(need, t.Extent())
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

// resolveScratch binds a scratch operand: the scratch buffer from its start.
func (d *Device) resolveScratch(ext uint64) (operand, error) {
	b := d.scratch.buf
	if b == nil || b.Size < ext {
		return operand{}, fmt.Errorf("%s: scratch memory of %d bytes not allocated", d.Name, ext)
	}
	if ext > d.gpu.Limits.MaxStorageBufferBindingSize {
		return operand{}, fmt.Errorf("scratch operand: %d bytes exceed the binding limit", ext)
	}
	return operand{gpu.Binding{Buffer: b, Offset: 0, Size: (max(ext, 4) + 3) &^ 3}, 0}, nil
}
