// Package exec is the executor: the one path from a compiled graph to the GPU queue. It
// takes steps (a pipeline, its storage bindings, its parameter bytes, a grid), puts each
// step's parameters in a slot of the parameter arena, finds or creates the bind group,
// records the dispatch into a compute pass and submits batches without waiting. It also
// owns the device's pipeline and bind group caches. It knows nothing of ggml or WGSL
// text: callers hand it sources and byte ranges.
//
// An Executor is not safe for concurrent use; the caller serialises access (backend.Device
// holds its lock around every call).
package exec

import (
	"errors"
	"fmt"
	"time"

	"github.com/ggml-wgpu/ggml-wgpu/arena"
	"github.com/ggml-wgpu/ggml-wgpu/gpu"
)

// MaxBindings is the most storage bindings one step may have (the device may allow fewer:
// WebGPU's default is 8).
const MaxBindings = 10

// maxGroups bounds the bind group cache; it is emptied when full.
const maxGroups = 8192

// Step is one dispatch ready to record.
type Step struct {
	Pipeline *gpu.Pipeline
	Bindings []gpu.Binding // bound at 1..n, in order
	Params   []byte        // the parameter slot's contents (at most the slot size)
	Grid     [3]uint32     // workgroups
	// Submit ends a submission after this step (the plan's batching); the executor also
	// submits before a step when the parameter arena's open batch is full.
	Submit bool

	// group is the bind group found for the step on an earlier Run: a compiled graph that
	// runs again (llama's decode graph) skips the cache lookup while it stays alive.
	group *gpu.BindGroup
}

// Executor records steps on one device.
type Executor struct {
	dev    *gpu.Device
	params *arena.Params
	groups map[groupKey]*gpu.BindGroup
	pipes  map[string]*gpu.Pipeline
	bad    map[string]error
	rec    *Recording // a graph recorded ahead (Prerecord), or nil
	// FirstPart is the steps of a recording submitted together that go first, on their
	// own (FirstPart by default; 0: none apart).
	FirstPart int
	// OnSubmit, when set, is called after every submission the executor makes (the
	// backend's host timeline).
	OnSubmit func()
}

// groupKey identifies a bind group: the pipeline layout (its binding count and read-only
// bindings) and the ranges it binds.
type groupKey struct {
	n    int
	ro   uint32
	refs [MaxBindings]groupRef
}

type groupRef struct {
	buf                  *gpu.Buffer
	off, size            uint64
	readOnly, mayOverlap bool
}

// New creates an executor on dev with a parameter arena of slots slots of slotSize bytes.
func New(dev *gpu.Device, slots, slotSize int) (*Executor, error) {
	p, err := arena.NewParams(dev, slots, slotSize)
	if err != nil {
		return nil, err
	}
	return &Executor{dev: dev, params: p, groups: map[groupKey]*gpu.BindGroup{},
		pipes: map[string]*gpu.Pipeline{}, bad: map[string]error{}, FirstPart: FirstPart}, nil
}

// Pipeline returns the pipeline known by key, compiling source() on first use for layout
// l. A key that failed to compile keeps failing with its error.
func (e *Executor) Pipeline(key, label string, l gpu.Layout, source func() (string, error)) (*gpu.Pipeline, error) {
	if p, ok := e.pipes[key]; ok {
		return p, nil
	}
	if err, ok := e.bad[key]; ok {
		return nil, err
	}
	src, err := source()
	if err == nil {
		var p *gpu.Pipeline
		if p, err = e.dev.CreatePipelineLayout(label, src, l); err == nil {
			e.pipes[key] = p
			return p, nil
		}
	}
	e.bad[key] = err
	return nil, err
}

// Pipelines returns how many pipelines have been compiled.
func (e *Executor) Pipelines() int { return len(e.pipes) }

// Forget releases the bind groups that bind b; call it before releasing b.
func (e *Executor) Forget(b *gpu.Buffer) {
	for k, g := range e.groups {
		for _, r := range k.refs[:k.n] {
			if r.buf == b {
				g.Release()
				delete(e.groups, k)
				break
			}
		}
	}
}

// Close releases every cached object and the arena.
func (e *Executor) Close() {
	e.DropRecording()
	for k, g := range e.groups {
		g.Release()
		delete(e.groups, k)
	}
	e.params.Release()
}

// Run records steps and submits them: after every step marked Submit, when the arena's
// open batch is full, and at the end. It does not wait for the GPU. With a timer, the
// first timer.Capacity() steps are timed. On error nothing more of the steps is
// submitted; what was already submitted runs.
func (e *Executor) Run(steps []Step, timer *Timer) error {
	e.DropRecording()
	r := run{e: e, timer: timer}
	for i := range steps {
		err := r.record(i, &steps[i])
		if errors.Is(err, arena.ErrFull) {
			if err = r.submit(); err == nil {
				err = r.record(i, &steps[i])
			}
		}
		if err == nil && steps[i].Submit {
			err = r.submit()
		}
		if err != nil {
			r.abandon()
			return fmt.Errorf("step %d: %w", i, err)
		}
	}
	return r.submit()
}

// run is one Run in progress: the open command encoder.
type run struct {
	e      *Executor
	enc    *gpu.Encoder
	timer  *Timer
	passes int // passes timed (a pass timer)
}

func (e *Executor) group(s *Step) (*gpu.BindGroup, error) {
	if s.group.Alive() {
		return s.group, nil
	}
	if len(s.Bindings) > MaxBindings {
		return nil, fmt.Errorf("%d storage bindings (at most %d)", len(s.Bindings), MaxBindings)
	}
	k := groupKey{n: len(s.Bindings)}
	if s.Pipeline != nil {
		k.ro = s.Pipeline.ReadOnly
	}
	for j, b := range s.Bindings {
		if !b.Buffer.Alive() {
			return nil, errors.New("a bound buffer was freed")
		}
		k.refs[j] = groupRef{b.Buffer, b.Offset, b.Size, b.ReadOnly, b.MayOverlap}
	}
	if g, ok := e.groups[k]; ok {
		s.group = g
		return g, nil
	}
	if len(e.groups) >= maxGroups {
		for k, g := range e.groups {
			g.Release()
			delete(e.groups, k)
		}
	}
	g, err := e.dev.CreateBindGroup(s.Pipeline, e.params.Buf, uint64(e.params.SlotSize), s.Bindings)
	if err != nil {
		return nil, err
	}
	e.groups[k] = g
	s.group = g
	return g, nil
}

func (r *run) record(i int, s *Step) error {
	e := r.e
	if len(s.Params) > e.params.SlotSize {
		return fmt.Errorf("parameters of %d bytes exceed a %d-byte slot", len(s.Params), e.params.SlotSize)
	}
	g, err := e.group(s)
	if err != nil {
		return err
	}
	slot, data, err := e.params.Slot()
	if err != nil {
		return err
	}
	copy(data, s.Params)
	if r.enc == nil {
		r.enc = e.dev.NewEncoder()
		if t := r.timer; t != nil && t.perPass && r.passes < t.cap {
			if err := r.enc.TimeNextPass(t.qs, r.passes); err != nil {
				return err
			}
			r.passes++
			t.used = r.passes
		}
	}
	if r.timer != nil && !r.timer.perPass && i < r.timer.Capacity() {
		r.timer.used = max(r.timer.used, i+1)
		return r.enc.DispatchTimed(r.timer.qs, i, s.Pipeline, g, slot, s.Grid)
	}
	return r.enc.Dispatch(s.Pipeline, g, slot, s.Grid)
}

// submit flushes the open batch's parameters and submits the open encoder, if any.
func (r *run) submit() error {
	e := r.e
	if err := e.params.Flush(); err != nil {
		r.abandon()
		return err
	}
	if r.enc == nil {
		e.params.Seal(e.dev.Submitted())
		return nil
	}
	var start time.Time
	if r.timer != nil { // only when timing: the normal path reads no clock
		start = time.Now()
	}
	seq, err := r.enc.Submit()
	if r.timer != nil {
		r.timer.submitted(start, time.Now())
	}
	if e.OnSubmit != nil {
		e.OnSubmit()
	}
	r.enc = nil
	if err != nil {
		e.params.Seal(e.dev.Submitted())
		return err
	}
	e.params.Seal(seq)
	return nil
}

// abandon drops a half-recorded submission after an error.
func (r *run) abandon() {
	if r.enc != nil {
		r.enc.Discard()
		r.enc = nil
	}
	r.e.params.Seal(r.e.dev.Submitted())
}
