package exec

import (
	"encoding/binary"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
)

// Timer measures each dispatch of a Run with GPU timestamps (each timed dispatch gets a
// compute pass of its own, so timing is slow). The device must have been opened with
// timestamps.
type Timer struct {
	dev  *gpu.Device
	qs   *gpu.QuerySet
	buf  *gpu.Buffer
	cap  int
	used int // dispatches timed by the last Run
}

// NewTimer creates a timer for the first capacity dispatches of each Run.
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

// Capacity is how many dispatches of a Run are timed.
func (t *Timer) Capacity() int { return t.cap }

// Collect waits for the last Run's timed dispatches and returns each one's GPU time in
// nanoseconds, in step order.
func (t *Timer) Collect() ([]uint64, error) {
	n := t.used
	t.used = 0
	if n == 0 {
		return nil, nil
	}
	e := t.dev.NewEncoder()
	if err := e.Resolve(t.qs, 0, 2*n, t.buf, 0); err != nil {
		e.Discard()
		return nil, err
	}
	if _, err := e.Submit(); err != nil {
		return nil, err
	}
	raw := make([]byte, 16*n)
	if err := t.dev.Read(t.buf, 0, raw); err != nil {
		return nil, err
	}
	out := make([]uint64, n)
	for i := range out {
		t0, t1 := binary.LittleEndian.Uint64(raw[16*i:]), binary.LittleEndian.Uint64(raw[16*i+8:])
		if t1 > t0 {
			out[i] = t1 - t0
		}
	}
	return out, nil
}

// Release frees the timer's GPU objects.
func (t *Timer) Release() {
	t.qs.Release()
	t.buf.Release()
}
