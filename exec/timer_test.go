package exec

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/stretchr/testify/require"
)

// A timed Run reports each timed dispatch's timestamps, in order, and the CPU time of
// each of its submissions; dispatches beyond the capacity run untimed. On an adapter
// without timestamp queries the timer cannot be made, and says so.
// openTimed opens the first adapter with timestamps, closed when the test ends.
func openTimed(t *testing.T) *gpu.Device {
	t.Helper()
	in, err := gpu.NewInstance()
	require.NoError(t, err)
	ads := in.Adapters()
	require.NotEmpty(t, ads)
	d, err := ads[0].OpenWithTimestamps()
	require.NoError(t, err)
	t.Cleanup(d.Close)
	return d
}

// stampRig makes an executor on d, the stamp pipeline and a 64-byte buffer for it, all
// released when the test ends.
func stampRig(t *testing.T, d *gpu.Device) (*Executor, *gpu.Pipeline, *gpu.Buffer) {
	t.Helper()
	e, err := New(d, 8, 256)
	require.NoError(t, err)
	t.Cleanup(e.Close)
	p, err := e.Pipeline("stamp", "stamp", gpu.Layout{Storage: 1}, func() (string, error) { return stamp, nil })
	require.NoError(t, err)
	out, err := d.CreateBuffer(64, gpu.UsageStorage)
	require.NoError(t, err)
	t.Cleanup(out.Release)
	return e, p, out
}

// stampSteps are five stamp dispatches into out, a submission after step submitAfter.
func stampSteps(p *gpu.Pipeline, out *gpu.Buffer, submitAfter uint32) []Step {
	var s []Step
	for i := uint32(0); i < 5; i++ {
		s = append(s, Step{Pipeline: p, Bindings: []gpu.Binding{{Buffer: out, Size: 64}},
			Params: params(i, i), Grid: [3]uint32{1, 1, 1}, Submit: i == submitAfter})
	}
	return s
}

func TestTimerSpansAndSubmits(t *testing.T) {
	d := openTimed(t)
	if !d.Timestamps() {
		_, err := NewTimer(d, 4)
		require.ErrorContains(t, err, "timestamp")
		return
	}
	_, err := NewTimer(d, 4096)
	require.Error(t, err, "a query set holds 4096 queries: 2048 dispatches")
	tm, err := NewTimer(d, 3)
	require.NoError(t, err)
	defer tm.Release()
	e, p, out := stampRig(t, d)
	steps := stampSteps(p, out, 1)
	require.NoError(t, e.Run(steps, tm))
	got, err := tm.Collect()
	require.NoError(t, err)
	require.Len(t, got.Spans, 3, "the first Capacity() dispatches are timed")
	require.Len(t, got.Submits, 2, "one submission after step 1, one at the end")
	for i, s := range got.Spans {
		require.GreaterOrEqual(t, s.End, s.Start, "dispatch %d", i)
		require.Equal(t, s.End-s.Start, s.Duration())
		if i > 0 {
			require.GreaterOrEqual(t, s.Start, got.Spans[i-1].Start, "dispatches run in order")
		}
	}
	for _, s := range got.Submits {
		require.False(t, s.End.Before(s.Start))
	}
	again, err := tm.Collect()
	require.NoError(t, err)
	require.Empty(t, again.Spans, "a Collect takes the Run's measurements once")
	require.Empty(t, again.Submits)
	require.Zero(t, Span{Start: 5, End: 3}.Duration())
}

// TestPassTimer: a pass timer times each submission's compute pass, its dispatches
// together: two submissions of five dispatches, two spans in order, and the first
// Capacity() passes only.
func TestPassTimer(t *testing.T) {
	d := openTimed(t)
	if !d.Timestamps() {
		_, err := NewPassTimer(d, 4)
		require.ErrorContains(t, err, "timestamp")
		return
	}
	e, p, out := stampRig(t, d)
	steps := func(submitAfter uint32) []Step { return stampSteps(p, out, submitAfter) }
	tm, err := NewPassTimer(d, 4)
	require.NoError(t, err)
	defer tm.Release()
	require.NoError(t, e.Run(steps(1), tm))
	got, err := tm.Collect()
	require.NoError(t, err)
	require.Len(t, got.Spans, 2, "one pass per submission: after step 1 and at the end")
	require.Len(t, got.Submits, 2)
	require.Greater(t, got.Spans[0].End, got.Spans[0].Start)
	require.GreaterOrEqual(t, got.Spans[1].Start, got.Spans[0].End, "the passes run in order")
	// What the stamp kernel stored is what the dispatches did, timed or not.
	data := make([]byte, 64)
	require.NoError(t, d.Read(out, 0, data))
	plain := make([]byte, 64)
	require.NoError(t, e.Run(steps(9), nil))
	require.NoError(t, d.Read(out, 0, plain))
	require.Equal(t, plain, data)

	one, err := NewPassTimer(d, 1)
	require.NoError(t, err)
	defer one.Release()
	require.NoError(t, e.Run(steps(0), one))
	got, err = one.Collect()
	require.NoError(t, err)
	require.Len(t, got.Spans, 1, "the first Capacity() passes")
}
