package backend

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/ggml-wgpu/ggml-wgpu/backend/webgpu"
	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/sched"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// Environment variables of the execution path.
const (
	// EnvBatch sets how many dispatches go into one submission.
	EnvBatch = "GGML_WGPU_BATCH"
	// EnvProfile=1 logs, when a backend is freed, where its graphs spent their time;
	// EnvProfile=2 also times every dispatch on the GPU (each in a compute pass of its own,
	// read back after every graph: slow) and logs the time per node name and kernel.
	EnvProfile = "GGML_WGPU_PROFILE"
)

// defaultBatch keeps submissions short on CPU drivers (they crash on long ones) and lets
// a GPU start while the rest of the graph is still being encoded.
const defaultBatch = 64

// planCacheSize is how many recent graphs a backend keeps ready to run again.
const planCacheSize = 4

// Backend is one ggml backend instance on a device. Several may share a device.
type Backend struct {
	Dev     *Device
	batch   int
	plans   []*compiled // most recently used first
	profile int
	stats   Stats
	timer   *kernelTimer
}

// Stats counts a backend's work.
type Stats struct {
	Graphs, Reused, Dispatches int
	Encode, Wait               time.Duration // CPU time in Compute; time blocked in Synchronize
}

// NewBackend creates a backend instance on d.
func NewBackend(d *Device) (*Backend, error) {
	if _, err := d.open(); err != nil {
		return nil, err
	}
	b := &Backend{Dev: d, batch: defaultBatch}
	b.profile, _ = strconv.Atoi(os.Getenv(EnvProfile))
	if v, err := strconv.Atoi(os.Getenv(EnvBatch)); err == nil && v > 0 {
		b.batch = v
	}
	if b.profile >= 2 {
		t, err := newKernelTimer(d)
		if err != nil {
			logf(LogWarn, "%s: no kernel timing: %v", d.Name, err)
		}
		b.timer = t
	}
	return b, nil
}

// compiled is a graph ready to record: every dispatch with its pipeline, bindings and
// encoded parameters resolved. It is keyed by a snapshot of the graph's tensors, so a
// graph that comes back unchanged (llama reuses its decode graph) skips conversion,
// lowering and resolution.
type compiled struct {
	snapshot []byte
	plan     *sched.Plan
	steps    []prepared
	labels   []string // per step, for kernel timing: node name (without its layer) and kernel
}

// prepared is one dispatch resolved against this device's buffers.
type prepared struct {
	pipe   *webgpu.Pipeline
	key    groupKey
	binds  []webgpu.Binding
	params []byte // the slot's contents
	grid   [3]uint32
}

// Compute submits the graph's work without waiting for the GPU. snapshot identifies the
// graph exactly (the raw bytes of its tensors); nodes converts it when it is not cached.
// It fails before submitting anything when a node is unsupported or not in this device's
// buffers.
func (b *Backend) Compute(snapshot []byte, nodes func() []*ops.Tensor) error {
	start := time.Now()
	d := b.Dev
	c := b.lookup(snapshot)
	if c == nil {
		l := d.Limits()
		plan, err := sched.Build(nodes(), &l)
		if err != nil {
			return err
		}
		d.mu.Lock()
		steps, err := d.prepare(plan)
		d.mu.Unlock()
		if err != nil {
			return err
		}
		c = &compiled{snapshot: append([]byte(nil), snapshot...), plan: plan, steps: steps}
		if b.timer != nil {
			c.labels = stepLabels(plan)
		}
		b.remember(c)
	} else {
		b.stats.Reused++
	}
	d.mu.Lock()
	ln := &launcher{d: d, steps: c.steps, timer: b.timer}
	err := c.plan.Run(ln, b.batch)
	if err != nil {
		ln.abandon()
	} else if b.timer != nil {
		err = b.timer.collect(c.labels[:min(len(c.labels), b.timer.capacity())])
	}
	d.mu.Unlock()
	b.stats.Graphs++
	b.stats.Dispatches += len(c.steps)
	b.stats.Encode += time.Since(start)
	return err
}

func (b *Backend) lookup(snapshot []byte) *compiled {
	for i, c := range b.plans {
		if bytes.Equal(c.snapshot, snapshot) {
			copy(b.plans[1:i+1], b.plans[:i])
			b.plans[0] = c
			return c
		}
	}
	return nil
}

func (b *Backend) remember(c *compiled) {
	if len(b.plans) < planCacheSize {
		b.plans = append(b.plans, nil)
	}
	copy(b.plans[1:], b.plans)
	b.plans[0] = c
}

// Synchronize waits until all work submitted to the device has completed.
func (b *Backend) Synchronize() {
	start := time.Now()
	b.Dev.Synchronize()
	b.stats.Wait += time.Since(start)
}

// Stats returns the backend's counters.
func (b *Backend) Stats() Stats { return b.stats }

// Close logs the profile when EnvProfile asks for it.
func (b *Backend) Close() {
	b.Synchronize()
	if b.profile == 0 || b.stats.Graphs == 0 {
		return
	}
	s := b.stats
	n := time.Duration(s.Graphs)
	logf(LogInfo, "%s profile: %d graphs (%d reused), %.1f dispatches/graph, encode %v/graph, wait %v/graph, pipelines %d",
		b.Dev.Name, s.Graphs, s.Reused, float64(s.Dispatches)/float64(s.Graphs), s.Encode/n, s.Wait/n, b.Dev.PipelineCount())
	if b.timer != nil {
		b.Dev.mu.Lock()
		logf(LogInfo, "%s GPU time by node and kernel:\n%s", b.Dev.Name, b.timer.report())
		b.timer.release()
		b.Dev.mu.Unlock()
	}
}

// binding is where one operand lives: a binding range and the operand's first element in it.
type binding struct {
	buf       *Buffer
	off, size uint64
	elem      uint32
}

// resolve finds the binding of an operand. Callers hold the device lock.
func (d *Device) resolve(t *ops.Tensor, f wgsl.Format) (binding, error) {
	buf, ok := d.buffers[t.Loc.Buffer]
	if !ok || buf.gpu == nil {
		return binding{}, fmt.Errorf("tensor %q is not in a %s buffer", t.Name, d.Name)
	}
	if t.Loc.Addr < buf.Base() {
		return binding{}, fmt.Errorf("tensor %q: address below its buffer", t.Name)
	}
	off := t.Loc.Addr - buf.Base()
	ext := t.Extent()
	if off+ext > buf.Size {
		return binding{}, fmt.Errorf("tensor %q extends past its buffer", t.Name)
	}
	align := uint64(d.gpu.Limits.MinStorageBufferOffsetAlignment)
	start := off / align * align
	rem := off - start
	es := uint64(f.ElemSize())
	if rem%es != 0 {
		return binding{}, fmt.Errorf("tensor %q: offset %d is not a whole number of elements", t.Name, off)
	}
	size := (rem + ext + 3) &^ 3
	if size > d.gpu.Limits.MaxStorageBufferBindingSize {
		return binding{}, fmt.Errorf("tensor %q: %d bytes exceed the binding limit", t.Name, size)
	}
	return binding{buf: buf, off: start, size: size, elem: uint32(rem / es)}, nil
}

// prepare resolves every step of a plan: pipelines compiled, operands bound, parameters
// encoded. Callers hold the device lock.
func (d *Device) prepare(plan *sched.Plan) ([]prepared, error) {
	steps := make([]prepared, len(plan.Steps))
	for i := range plan.Steps {
		ds := &plan.Steps[i].Dispatch
		if len(ds.Tensors) > maxOperands {
			return nil, fmt.Errorf("%s: dispatch with %d operands", plan.Steps[i].Node.Name, len(ds.Tensors))
		}
		pipe, err := d.pipelines.Pipeline(ds.Spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", plan.Steps[i].Node.Name, err)
		}
		p := prepared{pipe: pipe, key: groupKey{n: len(ds.Tensors)}, grid: ds.Grid,
			binds: make([]webgpu.Binding, len(ds.Tensors)), params: make([]byte, wgsl.SlotSize)}
		offsets := make([]uint32, len(ds.Tensors))
		for j, t := range ds.Tensors {
			bd, err := d.resolve(t, ds.Spec.Operands[j].Type)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", plan.Steps[i].Node.Name, err)
			}
			p.key.refs[j] = groupRef{bd.buf.ID, bd.off, bd.size}
			p.binds[j] = webgpu.Binding{Buffer: bd.buf.gpu, Offset: bd.off, Size: bd.size}
			offsets[j] = bd.elem
		}
		if err := wgsl.EncodeParams(p.params, ds.Params, offsets); err != nil {
			return nil, err
		}
		steps[i] = p
	}
	return steps, nil
}

// groupKey identifies a bind group: its layout size and the ranges it binds.
type groupKey struct {
	n    int
	refs [maxOperands]groupRef
}

type groupRef struct{ buf, off, size uint64 }

const maxOperands = 6

func (k groupKey) uses(id uint64) bool {
	for i := 0; i < k.n; i++ {
		if k.refs[i].buf == id {
			return true
		}
	}
	return false
}

// maxGroups bounds the bind group cache.
const maxGroups = 8192

// launcher records prepared steps into one open command encoder per submission. Callers
// hold the device lock.
type launcher struct {
	d     *Device
	steps []prepared
	enc   *webgpu.Encoder
	timer *kernelTimer // nil unless dispatches are timed
}

func (l *launcher) Launch(i int) error {
	dev, p := l.d, &l.steps[i]
	for _, r := range p.key.refs[:p.key.n] {
		if _, live := dev.buffers[r.buf]; !live {
			return fmt.Errorf("a bound buffer was freed")
		}
	}
	group, ok := dev.groups[p.key]
	if !ok {
		if len(dev.groups) >= maxGroups {
			for k, g := range dev.groups {
				g.Release()
				delete(dev.groups, k)
			}
		}
		var err error
		if group, err = dev.gpu.CreateBindGroup(p.pipe, dev.params.Buf, wgsl.SlotSize, p.binds); err != nil {
			return err
		}
		dev.groups[p.key] = group
	}
	slot, data, ok := dev.params.Slot()
	if !ok {
		return sched.ErrBatchFull
	}
	copy(data, p.params)
	if l.enc == nil {
		l.enc = dev.gpu.NewEncoder()
	}
	if l.timer != nil && i < l.timer.capacity() {
		l.enc.DispatchTimed(l.timer.qs, i, p.pipe, group, slot, p.grid[0], p.grid[1], p.grid[2])
		return nil
	}
	l.enc.Dispatch(p.pipe, group, slot, p.grid[0], p.grid[1], p.grid[2])
	return nil
}

func (l *launcher) Submit() error {
	dev := l.d
	dev.params.Flush()
	if l.enc == nil {
		dev.params.Seal(dev.gpu.Submitted())
		return nil
	}
	seq, err := l.enc.Submit()
	l.enc = nil
	if err != nil {
		dev.params.Seal(dev.gpu.Submitted())
		return err
	}
	dev.params.Seal(seq)
	return nil
}

// abandon drops a half-recorded submission after an error.
func (l *launcher) abandon() {
	if l.enc != nil {
		l.enc.Discard()
		l.enc = nil
	}
	l.d.params.Seal(l.d.gpu.Submitted())
}
