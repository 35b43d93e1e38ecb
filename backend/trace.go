package backend

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A trace (GGML_WGPU_PROFILE naming a file) records the process's graphs as Chrome
// trace-event JSON, the format Perfetto (ui.perfetto.dev) and chrome://tracing open:
//   - per backend a CPU track: every Compute ("compute", holding "lookup" of a cached plan
//     or "build" of a new one, "record+submit" with each queue "submit" inside it, and
//     "collect timestamps", the read-back of the GPU times, which waits for the GPU) and
//     every Synchronize ("wait");
//   - per backend a GPU track: one event per timed dispatch, named by its op, with the node,
//     kernel and variant, shapes, bytes, FLOP (ops.Cost) and graph index as arguments.
//
// The GPU's timestamps have no known relation to the CPU's clock, so each graph's
// dispatches are placed on the CPU axis: the first starts when the graph's first queue
// submission returned, the others at their GPU offsets from it. Times between graphs on
// the GPU track are therefore not measured ones.
//
// The trace is written (whole, replacing the file) whenever a backend is freed. Tracing
// is off unless asked for, and then costs nothing: Backend.trace is nil and the normal
// path only tests it.

// traceEventLimit caps the events a trace keeps (about 50 bytes each in memory); later
// ones are counted and dropped, and the file says so.
const traceEventLimit = 2_000_000

// profileSetting reads EnvProfile: a number is the profile level; anything else names the
// trace file and means level 2 (GPU times needed).
func profileSetting() (level int, path string) {
	v := strings.TrimSpace(os.Getenv(EnvProfile))
	if v == "" {
		return 0, ""
	}
	if n, err := strconv.Atoi(v); err == nil {
		return n, ""
	}
	return 2, v
}

// tracer collects the events of one trace file, shared by the process's backends.
type tracer struct {
	mu       sync.Mutex
	path     string
	start    time.Time
	limit    int
	events   []traceEvent
	dropped  uint64
	untimed  uint64   // dispatches beyond the timer's capacity
	threads  []string // thread names; tid i+1 is threads[i]
	notes    []string
	gpuTimes []string // per backend: "timestamp queries" or why not
}

// traceEvent is one complete event; step is set for GPU dispatches.
type traceEvent struct {
	name    string
	tid     int32
	graph   int32
	ts, dur float64 // µs since the tracer's start
	step    *traceStep
	args    string // extra JSON members of a CPU event (after the graph index), or ""
}

var tracers = struct {
	sync.Mutex
	m map[string]*tracer
}{m: map[string]*tracer{}}

// tracerFor returns the process's tracer of path, creating it on first use.
func tracerFor(path string) *tracer {
	tracers.Lock()
	defer tracers.Unlock()
	t := tracers.m[path]
	if t == nil {
		t = &tracer{path: path, start: time.Now(), limit: traceEventLimit}
		tracers.m[path] = t
	}
	return t
}

// thread adds a named track and returns its id.
func (t *tracer) thread(name string) int32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.threads = append(t.threads, name)
	return int32(len(t.threads))
}

// note adds a line to the trace's metadata.
func (t *tracer) note(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.notes = append(t.notes, s)
}

// us returns the µs from the tracer's start to at.
func (t *tracer) us(at time.Time) float64 { return float64(at.Sub(t.start).Nanoseconds()) / 1e3 }

// add appends events, dropping what goes past the limit. Callers hold mu.
func (t *tracer) add(e traceEvent) {
	if len(t.events) >= t.limit {
		t.dropped++
		return
	}
	t.events = append(t.events, e)
}

// span adds a CPU event from start to end. Callers hold mu.
func (t *tracer) span(tid, graph int32, name string, start, end time.Time, args string) {
	t.add(traceEvent{name: name, tid: tid, graph: graph, ts: t.us(start), dur: t.us(end) - t.us(start), args: args})
}

// flush writes the trace file (replacing it through a temporary file, so a reader never
// sees half of one).
func (t *tracer) flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	tmp := t.path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	werr := t.write(f)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return werr
	}
	return os.Rename(tmp, t.path)
}

// backendTrace is one backend's part of a trace: its two tracks and its graph count.
type backendTrace struct {
	t        *tracer
	cpu, gpu int32
	graphs   int32
}

// newBackendTrace starts the tracks of a backend on device dev; timerErr says why its
// dispatches are not timed (nil: they are).
func newBackendTrace(path, dev string, timerErr error) *backendTrace {
	t := tracerFor(path)
	bt := &backendTrace{t: t}
	t.mu.Lock()
	n := len(t.gpuTimes) + 1
	if timerErr != nil {
		t.gpuTimes = append(t.gpuTimes, fmt.Sprintf("%s backend %d: GPU times unavailable: %v", dev, n, timerErr))
	} else {
		t.gpuTimes = append(t.gpuTimes, fmt.Sprintf("%s backend %d: GPU timestamp queries", dev, n))
	}
	t.mu.Unlock()
	bt.cpu = t.thread(fmt.Sprintf("%s backend %d: CPU", dev, n))
	bt.gpu = t.thread(fmt.Sprintf("%s backend %d: GPU dispatches", dev, n))
	return bt
}

// compute runs one graph (run) and records it: the CPU phases and, when k timed it, its
// dispatches. start is when Compute began, hit whether the plan came from the cache.
func (bt *backendTrace) compute(start time.Time, hit bool, c *compiled, k *kernelTimer, run func() error) error {
	planned := time.Now()
	err := run()
	end := time.Now()
	t := bt.t
	t.mu.Lock()
	defer t.mu.Unlock()
	g := bt.graphs
	bt.graphs++
	plan, phase := `"plan":"built"`, "build"
	if hit {
		plan, phase = `"plan":"cached"`, "lookup"
	}
	t.span(bt.cpu, g, "compute", start, end, fmt.Sprintf(`%s,"dispatches":%d`, plan, len(c.steps)))
	t.span(bt.cpu, g, phase, start, planned, "")
	if k == nil {
		t.span(bt.cpu, g, "record+submit", planned, end, "")
		return err
	}
	t.span(bt.cpu, g, "record+submit", planned, k.collected.Start, "")
	for _, s := range k.last.Submits {
		t.span(bt.cpu, g, "submit", s.Start, s.End, "")
	}
	t.span(bt.cpu, g, "collect timestamps", k.collected.Start, k.collected.End, "")
	spans := k.last.Spans
	if len(spans) == 0 {
		return err
	}
	anchor := t.us(planned)
	if len(k.last.Submits) > 0 {
		anchor = t.us(k.last.Submits[0].End)
	}
	base := spans[0].Start
	for i, s := range spans {
		if i >= len(c.trace) {
			break
		}
		var off float64
		if s.Start > base {
			off = float64(s.Start-base) / 1e3
		}
		st := c.trace[i]
		t.add(traceEvent{name: st.name, tid: bt.gpu, graph: g, ts: anchor + off, dur: float64(s.Duration()) / 1e3, step: st})
	}
	if len(c.steps) > len(spans) {
		t.untimed += uint64(len(c.steps) - len(spans))
	}
	return err
}

// wait records one Synchronize that began at start.
func (bt *backendTrace) wait(start time.Time) {
	end := time.Now()
	t := bt.t
	t.mu.Lock()
	defer t.mu.Unlock()
	t.span(bt.cpu, bt.graphs-1, "wait", start, end, "")
}
