package exec

import (
	"encoding/binary"
	"time"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
)

// Timer measures each dispatch of a Run with GPU timestamps (each timed dispatch gets a
// compute pass of its own, so timing is slow) and notes when the Run's submissions were
// made on the CPU. The device must have been opened with timestamps.
type Timer struct {
	dev     *gpu.Device
	qs      *gpu.QuerySet
	buf     *gpu.Buffer
	cap     int
	used    int        // dispatches (passes) timed by the last Run
	submits []Interval // the last Run's queue submissions
	// perPass times each submission's compute pass, all of its dispatches (NewPassTimer).
	perPass bool
}

// Span is one dispatch's start and end timestamps in nanoseconds on the GPU's clock (which
// has no known relation to the CPU's).
type Span struct{ Start, End uint64 }

// Duration returns the dispatch's GPU time in nanoseconds (0 when the end is not after the
// start).
func (s Span) Duration() uint64 {
	if s.End > s.Start {
		return s.End - s.Start
	}
	return 0
}

// Interval is a stretch of CPU time.
type Interval struct{ Start, End time.Time }

// Timing is what a Timer measured of one Run.
type Timing struct {
	// Spans are the timed dispatches, in step order.
	Spans []Span
	// Submits are the CPU time of each queue submission of the Run, in order.
	Submits []Interval
}

// NewTimer creates a timer for the first capacity dispatches of each Run (at most half
// the queries of a query set: 2048).
func NewTimer(dev *gpu.Device, capacity int) (*Timer, error) {
	qs, err := dev.CreateQuerySet(2 * capacity)
	if err != nil {
		return nil, err
	}
	buf, err := dev.CreateBuffer(uint64(16*capacity), gpu.UsageTimestamps)
	if err != nil {
		qs.Release()
		return nil, err
	}
	return &Timer{dev: dev, qs: qs, buf: buf, cap: capacity}, nil
}

// NewPassTimer creates a timer of the compute passes of each Run, one per submission (the
// first capacity of them): each pass's start and end, the dispatches recorded as they are
// without timing, so that the GPU's time for a graph is measured without slowing it.
// Timing.Spans are then the passes'.
func NewPassTimer(dev *gpu.Device, capacity int) (*Timer, error) {
	t, err := NewTimer(dev, capacity)
	if err != nil {
		return nil, err
	}
	t.perPass = true
	return t, nil
}

// Capacity is how many dispatches (passes) of a Run are timed.
func (t *Timer) Capacity() int { return t.cap }

// submitted notes one submission of the Run in progress.
func (t *Timer) submitted(start, end time.Time) {
	t.submits = append(t.submits, Interval{start, end})
}

// Collect waits for the last Run's timed dispatches and returns their timestamps and the
// Run's submissions.
func (t *Timer) Collect() (Timing, error) {
	n := t.used
	tm := Timing{Submits: t.submits}
	t.used, t.submits = 0, nil
	if n == 0 {
		return tm, nil
	}
	e := t.dev.NewEncoder()
	if err := e.Resolve(t.qs, 0, 2*n, t.buf, 0); err != nil {
		e.Discard()
		return tm, err
	}
	if _, err := e.Submit(); err != nil {
		return tm, err
	}
	raw := make([]byte, 16*n)
	if err := t.dev.Read(t.buf, 0, raw); err != nil {
		return tm, err
	}
	tm.Spans = make([]Span, n)
	for i := range tm.Spans {
		tm.Spans[i] = Span{binary.LittleEndian.Uint64(raw[16*i:]), binary.LittleEndian.Uint64(raw[16*i+8:])}
	}
	return tm, nil
}

// Release frees the timer's GPU objects.
func (t *Timer) Release() {
	t.qs.Release()
	t.buf.Release()
}
