package backend

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ggml-wgpu/ggml-wgpu/exec"
	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/ggml-wgpu/ggml-wgpu/sched"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// Environment variables of the execution path.
const (
	// EnvBatch sets how many dispatches go into one submission.
	EnvBatch = "GGML_WGPU_BATCH"
	// EnvProfile=1 logs, when a backend is freed, where its graphs spent their time;
	// EnvProfile=2 also times every dispatch on the GPU (each in a compute pass of its own,
	// read back after every graph: slow) and logs the time per node name and kernel. A
	// value that is not a number names a file: level 2, and a Chrome trace-event JSON of
	// the graphs written there whenever a backend is freed (trace.go).
	EnvProfile = "GGML_WGPU_PROFILE"
	// EnvAhead=0 turns off recording a graph that ran again ahead of its next run (on by
	// default: see exec.Recording).
	EnvAhead = "GGML_WGPU_AHEAD"
	// EnvRecordBatch sets how many dispatches go into one command buffer (one compute
	// pass) of a graph recorded ahead after its first part (default: all of them on a
	// GPU, EnvBatch on a CPU driver), and EnvFirstPart the dispatches of that first part,
	// submitted on its own (default exec.FirstPart; 0: none apart), for comparisons.
	EnvRecordBatch = "GGML_WGPU_RECORD_BATCH"
	EnvFirstPart   = "GGML_WGPU_FIRST_PART"
)

// defaultBatch keeps submissions short on CPU drivers (they crash on long ones) and lets
// a GPU start while the rest of the graph is still being encoded.
const defaultBatch = 64

// planCacheSize is how many recent graphs a backend keeps ready to run again.
const planCacheSize = 4

// Backend is one ggml backend instance on a device. Several may share a device.
type Backend struct {
	Dev   *Device
	batch int
	ahead bool // record reused graphs ahead of their next run (EnvAhead)
	// recordBatch is EnvRecordBatch's dispatches per command buffer of a recording (0:
	// all of them on a GPU, batch on a CPU driver).
	recordBatch int
	plans       []*compiled // most recently used first
	profile     int
	stats       Stats
	timer       *kernelTimer  // nil unless EnvProfile >= 1 (level 1: a pass timer)
	trace       *backendTrace // nil unless EnvProfile names a trace file
	// lastSync is when the last Synchronize returned, until the next Compute (Stats.Between).
	lastSync time.Time
	// readBase and writeBase are the device's buffer read and write times (readNS,
	// writeNS) when the backend's first graph began: the model's upload is not between
	// graphs.
	readBase, writeBase int64
	waitBase            gpu.WaitStats // the device's wait statistics then
	snap                []byte        // the snapshot a graph no cached plan matched was built in
}

// Stats counts a backend's work.
type Stats struct {
	Graphs, Reused, Dispatches int
	Encode, Wait               time.Duration // CPU time in Compute; time blocked in Synchronize
	// EncodeReused is the part of Encode spent on reused graphs: the steady state of a
	// decode, without the first graph's planning and pipeline compilation.
	EncodeReused time.Duration
	// Match is the part of EncodeReused spent finding the cached graph (comparing the
	// host's graph with the cached ones).
	Match time.Duration
	// Between is the time from the end of a Synchronize to the next Compute, summed over
	// Betweens such gaps: the host's own work between graphs (a decode: sampling, building
	// and placing the next graph; llama reads the logits before it synchronizes).
	Between  time.Duration
	Betweens int
	// Rows and Refused sum sched.Plan's counts of the graphs planned (reused ones not
	// again): fused patterns by fusion row, and rows whose ops matched but that were not
	// taken, by row and reason.
	Rows, Refused map[string]int
}

// addCounts adds the counts of from to *to.
func addCounts(to *map[string]int, from map[string]int) {
	if len(from) > 0 && *to == nil {
		*to = map[string]int{}
	}
	for k, v := range from {
		(*to)[k] += v
	}
}

// countsLine formats counts as "name N, ..." in name order ("none" when empty).
func countsLine(c map[string]int) string {
	if len(c) == 0 {
		return "none"
	}
	keys := slices.Sorted(maps.Keys(c))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, c[k])
	}
	return strings.Join(parts, ", ")
}

// NewBackend creates a backend instance on d.
func NewBackend(d *Device) (*Backend, error) {
	if _, err := d.open(); err != nil {
		return nil, err
	}
	b := &Backend{Dev: d, batch: defaultBatch, ahead: os.Getenv(EnvAhead) != "0"}
	var tracePath string
	b.profile, tracePath = profileSetting()
	if v, err := strconv.Atoi(os.Getenv(EnvBatch)); err == nil && v > 0 {
		b.batch = v
	}
	if v, err := strconv.Atoi(os.Getenv(EnvRecordBatch)); err == nil && v > 0 {
		b.recordBatch = v
	}
	if b.profile >= 2 {
		t, err := d.newKernelTimer()
		if err != nil {
			logf(LogWarn, "%s: no kernel timing: %v", d.Name, err)
		}
		b.timer = t
		if tracePath != "" {
			b.trace = newBackendTrace(tracePath, d.Name, err)
		}
	} else if b.profile == 1 {
		t, err := d.newPassTimer()
		if err != nil {
			logf(LogWarn, "%s: no GPU time per graph: %v", d.Name, err)
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
	snapshot   []byte
	steps      []exec.Step
	scratchGen uint64       // the generation of the scratch memory the steps bind (0: none)
	labels     []string     // per step, for kernel timing: node name (without its layer) and kernel
	trace      []*traceStep // per step, for a trace
	output     *outputRange // the graph's output to read ahead (nil: none)
}

// outputRange is the bytes of a graph's output in one of the device's buffers.
type outputRange struct {
	buf          *Buffer
	offset, size uint64 // multiples of 4
}

// scratchRetries bounds how often Compute compiles a graph again because another
// backend of the device replaced the scratch buffer between compiling and running it.
const scratchRetries = 3

// Compute submits the graph's work without waiting for the GPU. snapshot identifies the
// graph exactly (the raw bytes of its tensors); nodes converts it when it is not cached
// (or binds a scratch buffer replaced since). It fails before submitting anything when a
// node is unsupported or not in this device's buffers.
func (b *Backend) Compute(snapshot []byte, nodes func() []*tensor.Tensor) error {
	return b.ComputeMatching(func(cached []byte) bool { return bytes.Equal(cached, snapshot) },
		func(buf []byte) []byte { return append(buf, snapshot...) }, nodes)
}

// ComputeMatching is Compute for a host that can tell whether its graph is the one a
// cached snapshot describes (equal) without building its own snapshot, which build
// appends to a buffer only when no cached graph matches: a reused decode graph is then
// compared in place, where building its snapshot first copied as many bytes again (about
// 1 MiB for an 8B model's decode graph).
func (b *Backend) ComputeMatching(equal func(cached []byte) bool, build func(buf []byte) []byte, nodes func() []*tensor.Tensor) error {
	start := time.Now()
	b.Dev.steps.mark(evCompute)
	defer b.Dev.steps.mark(evComputeEnd)
	if b.stats.Graphs == 0 {
		b.readBase, b.writeBase = b.Dev.readNS.Load(), b.Dev.writeNS.Load()
		b.waitBase = b.Dev.waitStats()
	}
	if !b.lastSync.IsZero() {
		b.stats.Between += start.Sub(b.lastSync)
		b.stats.Betweens++
		b.lastSync = time.Time{}
	}
	for try, at := 1, start; ; try, at = try+1, time.Now() {
		err := b.compute(at, equal, build, nodes)
		if !errors.Is(err, errScratchMoved) || try == scratchRetries {
			return err
		}
	}
}

// compute is one attempt of Compute: the cached graph, or the graph compiled, run.
func (b *Backend) compute(start time.Time, equal func([]byte) bool, build func([]byte) []byte, nodes func() []*tensor.Tensor) error {
	d := b.Dev
	c := b.lookup(equal)
	if c != nil {
		b.stats.Match += time.Since(start)
		d.steps.mark(evFound)
	}
	if c != nil && d.scratchStale(c) {
		b.plans = b.plans[1:] // lookup put it first
		c = nil
	}
	hit := c != nil
	if b.timer != nil && b.timer.perPass {
		b.timer.collected = exec.Interval{}
		b.timer.begun = time.Time{}
		if hit { // the first run's planning and compiling would swamp the steady state
			b.timer.begun = start
		}
	}
	defer func() {
		took := time.Since(start)
		if b.timer != nil && b.timer.perPass {
			// The pass timer's read-back waited for the GPU: wait, not encode.
			w := b.timer.collected.End.Sub(b.timer.collected.Start)
			took -= w
			b.stats.Wait += w
		}
		b.stats.Encode += took
		if hit {
			b.stats.EncodeReused += took
		}
	}()
	if c == nil {
		l := d.Limits()
		ns := nodes()
		plan, err := sched.Build(ns, &l)
		if err != nil {
			return err
		}
		if d.skip != nil {
			plan.Steps = slices.DeleteFunc(plan.Steps, func(s sched.Step) bool {
				return d.skip.MatchString(stepLabel(s.Node.Name, s.Dispatch.Spec.Kernel))
			})
		}
		plan.Cut(b.batch)
		addCounts(&b.stats.Rows, plan.Rows)
		addCounts(&b.stats.Refused, plan.Refused)
		steps, gen, err := d.compile(plan, d.specializes(ns))
		if err != nil {
			return err
		}
		b.snap = build(b.snap[:0])
		c = &compiled{snapshot: append([]byte(nil), b.snap...), steps: steps, scratchGen: gen}
		if b.ahead {
			c.output = d.outputOf(ns)
		}
		if b.timer != nil {
			c.labels = stepLabels(plan)
		}
		if b.trace != nil {
			c.trace = traceSteps(plan)
		}
		b.remember(c)
	}
	if hit {
		b.stats.Reused++
	}
	b.stats.Graphs++
	b.stats.Dispatches += len(c.steps)
	var err error
	if b.trace != nil { // off by default: the normal path does no more than this test
		err = b.trace.compute(start, hit, c, b.timer, func() error { return d.run(c, b.timer, 0) })
	} else {
		// A graph that ran again (llama's decode graph) is likely to run next too.
		ahead := 0
		if hit && b.ahead {
			ahead = b.recordingBatch(len(c.steps))
		}
		err = d.run(c, b.timer, ahead)
	}
	if errors.Is(err, errScratchMoved) { // another backend of the device grew the scratch memory
		b.plans = slices.DeleteFunc(b.plans, func(p *compiled) bool { return p == c })
	}
	return err
}

// recordingBatch returns the dispatches per command buffer of a graph of n steps recorded
// ahead: on a GPU all of them after the first part, in one compute pass (every pass
// boundary left the GPU idle: on an H100 a 1B Q4_0 decode graph's GPU time was 1,221 and
// 1,222 µs in command buffers of 64 dispatches against 1,190 and 1,190 in one, the 8B
// Q4_K's tokens/s 225-226 against 236-240); on a CPU driver, which needs short
// submissions, batch.
func (b *Backend) recordingBatch(n int) int {
	switch {
	case b.recordBatch > 0:
		return b.recordBatch
	case b.Dev.software:
		return b.batch
	}
	return max(n, 1)
}

// Order returns the graph's nodes in the order the backend computes them best, before ggml
// places their memory (graph_optimize): nodes moved where a fusion row then takes them
// (sched.Order; root names the memory each tensor is). Placed in this order, the graph
// keeps its meaning.
func (b *Backend) Order(nodes []*tensor.Tensor, root func(t *tensor.Tensor) any) []*tensor.Tensor {
	l := b.Dev.Limits()
	return sched.Order(nodes, &l, root)
}

func (b *Backend) lookup(equal func(cached []byte) bool) *compiled {
	for i, c := range b.plans {
		if equal(c.snapshot) {
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
func (b *Backend) Synchronize() error {
	start := time.Now()
	b.Dev.steps.mark(evSync)
	err := b.Dev.Synchronize()
	b.Dev.steps.mark(evSyncEnd)
	b.lastSync = time.Now()
	b.stats.Wait += b.lastSync.Sub(start)
	if b.trace != nil {
		b.trace.wait(start)
	}
	return err
}

// Stats returns the backend's counters.
func (b *Backend) Stats() Stats { return b.stats }

// Close waits for the backend's work and logs the profile when EnvProfile asks for it.
func (b *Backend) Close() {
	if err := b.Synchronize(); err != nil {
		logf(LogError, "%s: %v", b.Dev.Name, err)
	}
	if b.timer != nil {
		defer b.Dev.releaseTimer(b.timer)
	}
	if b.trace != nil {
		if err := b.trace.t.flush(); err != nil {
			logf(LogError, "%s: trace not written: %v", b.Dev.Name, err)
		} else {
			logf(LogInfo, "%s: trace of %d graphs written to %s", b.Dev.Name, b.trace.graphs, b.trace.t.path)
		}
	}
	if sum := b.Dev.steps.summary(8); sum != "" {
		logf(LogInfo, "%s %s", b.Dev.Name, sum)
	}
	if b.profile == 0 || b.stats.Graphs == 0 {
		return
	}
	s := b.stats
	n := time.Duration(s.Graphs)
	reused := "-"
	if s.Reused > 0 {
		reused = fmt.Sprintf("%v/graph, %v of it finding the graph", s.EncodeReused/time.Duration(s.Reused), s.Match/time.Duration(s.Reused))
	}
	logf(LogInfo, "%s profile: %d graphs (%d reused), %.1f dispatches/graph, encode %v/graph (reused graphs %v), wait %v/graph, pipelines %d (%d specialized), own memory %.2f MiB",
		b.Dev.Name, s.Graphs, s.Reused, float64(s.Dispatches)/float64(s.Graphs), s.Encode/n, reused, s.Wait/n, b.Dev.PipelineCount(), b.Dev.specialized(),
		float64(b.Dev.OwnMemory())/(1<<20))
	if s.Betweens > 0 {
		logf(LogInfo, "%s host between graphs %v/graph (the device's buffer reads, which wait for the GPU first: %v/graph; its buffer writes: %v/graph); "+
			"reads served from outputs read ahead: %d of %d", b.Dev.Name,
			s.Between/time.Duration(s.Betweens), time.Duration(b.Dev.readNS.Load()-b.readBase)/n, time.Duration(b.Dev.writeNS.Load()-b.writeBase)/n,
			b.Dev.readsTaken(), b.Dev.reads.Load())
	}
	if w := b.Dev.waitStats(); w.Waits > b.waitBase.Waits {
		k := w.Waits - b.waitBase.Waits
		logf(LogInfo, "%s waits for the GPU (the device's, since this backend's first graph): %d, %.1f polls a wait, %v a wait, of which %v in the poll that saw the work done",
			b.Dev.Name, k, float64(w.Polls-b.waitBase.Polls)/float64(k), (w.Wait-b.waitBase.Wait)/time.Duration(k), (w.DonePoll-b.waitBase.DonePoll)/time.Duration(k))
	}
	l := b.Dev.Limits()
	logf(LogInfo, "%s limits the plans used: storage binding %d bytes, %d storage bindings a dispatch, workgroup %d invocations, %d bytes shared",
		b.Dev.Name, l.MaxBinding, l.MaxStorageBuffers, l.MaxGroupSize, l.MaxWorkgroupStorage)
	logf(LogInfo, "%s fusions in the graphs planned: %s; not taken where their ops matched: %s",
		b.Dev.Name, countsLine(s.Rows), countsLine(s.Refused))
	switch {
	case b.timer != nil && b.timer.perPass:
		logf(LogInfo, "%s %s", b.Dev.Name, b.timer.report())
	case b.timer != nil:
		logf(LogInfo, "%s GPU time by node and kernel:\n%s", b.Dev.Name, b.timer.report())
	}
}
