package backend

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/exec"
	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/sched"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// operand is where one operand lives: a binding range and the operand's first element in it.
type operand struct {
	binding gpu.Binding
	elem    uint32
}

// resolve finds the binding of an operand. Callers hold the device lock.
func (d *Device) resolve(t *tensor.Tensor, f wgsl.Format) (operand, error) {
	if ops.IsScratch(t) {
		return d.resolveScratch(t, f)
	}
	buf, ok := d.buffers[t.Loc.Buffer]
	if !ok || buf.gpu == nil {
		return operand{}, fmt.Errorf("tensor %q is not in a %s buffer", t.Name, d.Name)
	}
	if t.Loc.Addr < buf.Base() {
		return operand{}, fmt.Errorf("tensor %q: address below its buffer", t.Name)
	}
	off := t.Loc.Addr - buf.Base()
	ext := t.Extent()
	if ext == 0 {
		// An empty operand is never read or written, but WebGPU has no empty binding:
		// bind the buffer's first word.
		return operand{gpu.Binding{Buffer: buf.gpu, Offset: 0, Size: 4}, 0}, nil
	}
	if off > buf.Size || ext > buf.Size-off {
		return operand{}, fmt.Errorf("tensor %q extends past its buffer", t.Name)
	}
	align := uint64(d.gpu.Limits.MinStorageBufferOffsetAlignment)
	start := off / align * align
	rem := off - start
	es := uint64(f.OffsetUnit())
	if rem%es != 0 {
		return operand{}, fmt.Errorf("tensor %q: offset %d is not a whole number of elements", t.Name, off)
	}
	size := (rem + ext + 3) &^ 3
	if size > d.gpu.Limits.MaxStorageBufferBindingSize {
		return operand{}, fmt.Errorf("tensor %q: %d bytes exceed the binding limit", t.Name, size)
	}
	return operand{gpu.Binding{Buffer: buf.gpu, Offset: start, Size: size}, uint32(rem / es)}, nil
}

// compile resolves every step of a plan for the executor: pipelines compiled, operands
// bound, parameters encoded. With special the steps take pipelines with their parameters
// built in (specialize.go) while the device's budget of them lasts. scratchGen is the
// generation of the scratch memory the steps bind (0: none).
func (d *Device) compile(plan *sched.Plan, special bool) (steps []exec.Step, scratchGen uint64, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return nil, 0, err
	}
	if scratchGen, err = d.ensureScratch(plan); err != nil {
		return nil, 0, err
	}
	steps = make([]exec.Step, len(plan.Steps))
	for i := range plan.Steps {
		ps := &plan.Steps[i]
		ds := &ps.Dispatch
		if len(ds.Tensors) != len(ds.Spec.Operands) || len(ds.Tensors) > exec.MaxBindings {
			return nil, 0, fmt.Errorf("%s: dispatch with %d operands for %d bindings", ps.Node.Name, len(ds.Tensors), len(ds.Spec.Operands))
		}
		spec := ds.Spec
		s := exec.Step{Grid: ds.Grid, Submit: ps.Submit,
			Bindings: make([]gpu.Binding, len(ds.Tensors)), Params: make([]byte, wgsl.SlotSize)}
		offsets := make([]uint32, len(ds.Tensors))
		for j, t := range ds.Tensors {
			op, err := d.resolve(t, spec.Operands[j].Type)
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %w", ps.Node.Name, err)
			}
			s.Bindings[j], offsets[j] = op.binding, op.elem
			s.Bindings[j].ReadOnly = !spec.Operands[j].Written // read-only operands may overlap
			s.Bindings[j].MayOverlap = spec.Operands[j].Overlaps || !touchesOther(ds.Tensors, j)
		}
		if !d.readWriteOnly {
			spec = readOnlyOperands(spec, s.Bindings)
		}
		spec, s.Bindings = d.bindTables(spec, s.Bindings)
		if s.Bindings, err = d.bindCounters(spec, s.Bindings); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", ps.Node.Name, err)
		}
		if err := wgsl.EncodeParams(s.Params, ds.Params, offsets); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", ps.Node.Name, err)
		}
		if special && (d.specialPipes < maxSpecialPipes || d.specialize == specializeAll) {
			s.Pipeline, err = d.specialPipeline(constantsSpec(spec, s.Params))
			if err != nil {
				// Built-in constants can fail where the uniform slot computes (WGSL makes
				// a constant expression's overflow a compile error): take the slot.
				d.specialFailed++
				if d.specialFailed == 1 {
					logf(LogWarn, "%s: a specialized pipeline failed, the uniform one takes its place (further failures logged at debug level): %v", ps.Node.Name, err)
				} else {
					logf(LogDebug, "%s: a specialized pipeline failed: %v", ps.Node.Name, err)
				}
			}
		}
		if s.Pipeline == nil {
			s.Pipeline, err = d.pipeline(spec, wgsl.Source)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", ps.Node.Name, err)
		}
		if d.ablate != nil && d.ablate.MatchString(stepLabel(ps.Node.Name, spec.Kernel)) {
			s.Grid = [3]uint32{1, 1, 1}
		}
		steps[i] = s
	}
	return steps, scratchGen, nil
}

// pipeline compiles (or finds) the pipeline of spec, its WGSL written by source. Called
// with d.mu held.
func (d *Device) pipeline(spec *wgsl.Spec, source func(*wgsl.Spec) (string, error)) (*gpu.Pipeline, error) {
	return d.exe.Pipeline(spec.Key(), spec.Kernel, gpu.Layout{Storage: spec.Bindings(), ReadOnly: spec.ReadOnly()},
		func() (string, error) { return source(spec) })
}

// run hands a compiled graph to the executor, and collects kernel times when timed. A
// graph that binds a replaced scratch buffer is not run: errScratchMoved. A graph that
// the executor holds recorded ahead is submitted as recorded; with ahead > 0 the graph's
// next run is recorded (in submissions of at most ahead steps) before run returns. The
// graph's output (compiled.output) is read ahead: untimed, by the recorded graph's last
// submission, else by a submission of its own after the graph's.
func (d *Device) run(c *compiled, timer *kernelTimer, ahead int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return err
	}
	if d.scratchStale(c) {
		return errScratchMoved
	}
	var t *exec.Timer
	if timer != nil {
		t = timer.t
	}
	// Untimed, the recorded graph's last submission copies its output aside (a timer's
	// read-back would come after it and leave it unused).
	var out *exec.Readout
	if o := c.output; o != nil && timer == nil && o.buf.gpu.Alive() {
		out = &exec.Readout{Buf: o.buf.gpu, Offset: o.offset, Size: o.size}
	}
	ran, read, err := d.exe.RunRecorded(c, t, out)
	if err != nil {
		return err
	}
	if !ran {
		if err := d.exe.Run(c.steps, t); err != nil {
			return err
		}
	}
	if ahead > 0 && (timer == nil || timer.perPass) {
		// The next run of c, recorded while the GPU runs this one (exec.Recording). On
		// failure c records as it runs, as before.
		if err := d.exe.Prerecord(c, c.steps, ahead, !d.software, t); err != nil {
			logf(LogDebug, "%s: graph not recorded ahead: %v", d.Name, err)
		}
	}
	if timer != nil {
		if err := timer.collect(c.labels); err != nil {
			return err
		}
	}
	// The graph's output copied aside for the host's read of it, last: a submission after
	// it would leave it unused (gpu.Device.ReadAhead).
	if o := c.output; o != nil && !read && o.buf.gpu.Alive() {
		if _, err := d.gpu.ReadAhead(o.buf.gpu, o.offset, o.size); err != nil {
			logf(LogDebug, "%s: output not read ahead: %v", d.Name, err)
		}
	}
	return nil
}

// readOnlyOperands returns spec with Operand.ReadOnly set for every operand the kernel does
// not write whose buffer no written operand binds (WebGPU forbids a buffer bound both
// read-only and read_write in one dispatch): in a model, its weights, which llama.cpp keeps
// in buffers of their own. spec itself is returned when no operand qualifies.
func readOnlyOperands(spec *wgsl.Spec, bs []gpu.Binding) *wgsl.Spec {
	var out *wgsl.Spec
	for j, o := range spec.Operands {
		if o.Written {
			continue
		}
		shared := false
		for k, w := range spec.Operands {
			if w.Written && bs[k].Buffer == bs[j].Buffer {
				shared = true
				break
			}
		}
		if shared {
			continue
		}
		if out == nil {
			c := *spec
			c.Operands = append([]wgsl.Operand(nil), spec.Operands...)
			out = &c
		}
		out.Operands[j].ReadOnly = true
	}
	if out == nil {
		return spec
	}
	return out
}

// touchesOther reports whether operand j's bytes overlap those of another operand of the
// same dispatch other than one at exactly the same place and extent (an in-place operand).
// Bindings are widened to alignment, so two operands with disjoint bytes may still get
// overlapping bindings: that is harmless, and only a real overlap is left for the GPU
// layer to judge.
func touchesOther(ts []*tensor.Tensor, j int) bool {
	a := ts[j]
	for k, b := range ts {
		if k == j || a.Loc.Buffer != b.Loc.Buffer || a.Empty() || b.Empty() {
			continue
		}
		if a.Loc.Addr == b.Loc.Addr && a.Extent() == b.Extent() {
			continue
		}
		if a.Loc.Addr < b.Loc.Addr+b.Extent() && b.Loc.Addr < a.Loc.Addr+a.Extent() {
			return true
		}
	}
	return false
}

// outputOf returns the bytes of the last node of a graph flagged as its output (llama's
// logits) that lies in one of the device's buffers and fits a read made ahead
// (gpu.Device.ReadAhead), or nil. Callers hold no lock.
func (d *Device) outputOf(nodes []*tensor.Tensor) *outputRange {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := len(nodes) - 1; i >= 0; i-- {
		t := nodes[i]
		if t.Flags&tensor.FlagOutput == 0 || ops.IsScratch(t) {
			continue
		}
		buf, ok := d.buffers[t.Loc.Buffer]
		if !ok || buf.gpu == nil || t.Loc.Addr < buf.Base() {
			return nil
		}
		start, end := words(t.Loc.Addr-buf.Base(), t.Extent())
		if t.Extent() == 0 || end > buf.Size || end-start > gpu.MaxReadAhead {
			return nil
		}
		return &outputRange{buf: buf, offset: start, size: end - start}
	}
	return nil
}
