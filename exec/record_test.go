package exec

import (
	"encoding/binary"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/stretchr/testify/require"
)

// bump adds p.value to out[p.index]: running a step twice shows.
const bump = `
struct P { index: u32, value: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn main() { out[p.index] = out[p.index] + p.value; }
`

// bumpRig is an executor of slots arena slots, a zeroed 32-word buffer and n bump steps
// (step i adds i+1 to word i).
func bumpRig(t *testing.T, d *gpu.Device, n, slots int) (*Executor, *gpu.Buffer, []Step) {
	t.Helper()
	e, err := New(d, slots, 256)
	require.NoError(t, err)
	t.Cleanup(e.Close)
	p, err := e.Pipeline("bump", "bump", gpu.Layout{Storage: 1}, func() (string, error) { return bump, nil })
	require.NoError(t, err)
	out, err := d.CreateBuffer(128, gpu.UsageStorage)
	require.NoError(t, err)
	require.NoError(t, d.Write(out, 0, make([]byte, 128)))
	var steps []Step
	for i := uint32(0); i < uint32(n); i++ {
		steps = append(steps, Step{Pipeline: p, Bindings: []gpu.Binding{{Buffer: out, Size: 128}}, Params: params(i, i+1), Grid: [3]uint32{1, 1, 1}})
	}
	return e, out, steps
}

// words reads the first n words of out after the GPU is idle.
func words(t *testing.T, d *gpu.Device, out *gpu.Buffer, n int) []uint32 {
	t.Helper()
	require.NoError(t, d.WaitIdle())
	b := make([]byte, 4*n)
	require.NoError(t, d.Read(out, 0, b))
	w := make([]uint32, n)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}

// A recording runs nothing until it is submitted, then runs every step once, with the
// parameters it was recorded with, from wherever the arena's ring stood; OnSubmit hears
// of each submission.
func TestRecordingRunsOnceWhenSubmitted(t *testing.T) {
	d := device(t)
	e, out, steps := bumpRig(t, d, 5, 8)
	require.NoError(t, e.Run(steps, nil)) // slots 0-4: the recording's 5 slots must wrap
	require.Equal(t, []uint32{1, 2, 3, 4, 5}, words(t, d, out, 5))
	require.NoError(t, e.Prerecord("graph", steps, 2, false, nil))
	require.Len(t, e.rec.cbs, 3, "submissions of at most 2 steps")
	require.Equal(t, []uint32{1, 2, 3, 4, 5}, words(t, d, out, 5), "recording runs nothing")
	ran, _, err := e.RunRecorded("another graph", nil, nil)
	require.NoError(t, err)
	require.False(t, ran)
	submits := 0
	e.OnSubmit = func() { submits++ }
	ran, _, err = e.RunRecorded("graph", nil, nil)
	require.NoError(t, err)
	require.True(t, ran)
	require.Equal(t, 3, submits, "OnSubmit after each of the recording's submissions")
	e.OnSubmit = nil
	require.Equal(t, []uint32{2, 4, 6, 8, 10}, words(t, d, out, 5))
	ran, _, err = e.RunRecorded("graph", nil, nil)
	require.NoError(t, err)
	require.False(t, ran, "a recording is submitted once")
	// The held slots came back: the ring serves more runs and recordings.
	for i := 0; i < 3; i++ {
		require.NoError(t, e.Prerecord("graph", steps, 4, true, nil))
		ran, _, err = e.RunRecorded("graph", nil, nil)
		require.NoError(t, err)
		require.True(t, ran)
		require.NoError(t, e.Run(steps[:1], nil))
	}
	require.Equal(t, []uint32{8, 10, 15, 20, 25}, words(t, d, out, 5))
	// Only the batch cuts a recording, not the plan's submissions (steps marked Submit).
	steps[0].Submit = true
	require.NoError(t, e.Prerecord("graph", steps, 8, true, nil))
	require.Len(t, e.rec.cbs, 1)
	e.DropRecording()
	require.Equal(t, []uint32{8, 10, 15, 20, 25}, words(t, d, out, 5), "a dropped recording runs nothing")
}

// Run drops a recording (it may reuse what the recording holds); so does a buffer
// released after it was recorded, without a crash.
func TestRecordingDroppedByRunAndReleasedBuffers(t *testing.T) {
	d := device(t)
	e, out, steps := bumpRig(t, d, 3, 8)
	require.NoError(t, e.Prerecord("graph", steps, 8, false, nil))
	require.NoError(t, e.Run(steps[:1], nil))
	ran, _, err := e.RunRecorded("graph", nil, nil)
	require.NoError(t, err)
	require.False(t, ran, "Run dropped the recording")
	require.Equal(t, []uint32{1, 0, 0}, words(t, d, out, 3))

	require.NoError(t, e.Prerecord("graph", steps, 8, true, nil))
	e.Forget(out)
	out.Release()
	ran, _, err = e.RunRecorded("graph", nil, nil)
	require.NoError(t, err)
	require.False(t, ran, "a recording that binds a released buffer is not submitted")
	require.Nil(t, e.rec)
	require.Error(t, e.Run(steps, nil), "the steps themselves now fail cleanly")
}

// A pass timer times each of a recording's command buffers: submitted together, the first
// FirstPart steps on their own, the rest in one submission.
func TestRecordingTimedByPassTimer(t *testing.T) {
	d := openTimed(t)
	e, out, steps := bumpRig(t, d, FirstPart+4, 64)
	tm, err := NewPassTimer(d, 16)
	require.NoError(t, err)
	defer tm.Release()
	require.NoError(t, e.Prerecord("graph", steps, 2, true, tm))
	ran, _, err := e.RunRecorded("graph", nil, nil)
	require.NoError(t, err)
	require.False(t, ran, "a timed recording runs only with its timer")
	require.NoError(t, e.Prerecord("graph", steps, 2, true, tm))
	ran, _, err = e.RunRecorded("graph", tm, nil)
	require.NoError(t, err)
	require.True(t, ran)
	got, err := tm.Collect()
	require.NoError(t, err)
	require.Len(t, got.Spans, 3, "one timed pass per command buffer: the first part, then two of 2 steps")
	require.Len(t, got.Submits, 2, "the first part on its own, then the rest together")
	want := make([]uint32, FirstPart+4)
	for i := range want {
		want[i] = uint32(i + 1)
	}
	require.Equal(t, want, words(t, d, out, len(want)))
}

// With a Readout, a recorded run's last submission copies the range aside: the host's
// Read is served from it, and no submission follows the recording's own.
func TestRecordingReadsOut(t *testing.T) {
	d := device(t)
	e, out, steps := bumpRig(t, d, FirstPart+3, 64)
	require.NoError(t, e.Prerecord("graph", steps, 2, true, nil))
	before := d.Submitted()
	ran, read, err := e.RunRecorded("graph", nil, &Readout{Buf: out, Offset: 0, Size: 128})
	require.NoError(t, err)
	require.True(t, ran)
	require.True(t, read)
	require.Equal(t, before+2, d.Submitted(), "the first part, then the rest with the copy")
	b := make([]byte, 4*len(steps))
	require.NoError(t, d.Read(out, 0, b))
	require.EqualValues(t, 1, d.ReadsTaken(), "served from the copy")
	for i := range steps {
		require.EqualValues(t, i+1, binary.LittleEndian.Uint32(b[4*i:]), "word %d", i)
	}
}

// Without a first part apart, a recording of command buffers as long as the graph is one
// command buffer, one submission.
func TestRecordingInOnePart(t *testing.T) {
	d := device(t)
	e, out, steps := bumpRig(t, d, FirstPart+5, 64)
	e.FirstPart = 0
	require.NoError(t, e.Prerecord("graph", steps, len(steps), true, nil))
	require.Len(t, e.rec.cbs, 1)
	before := d.Submitted()
	ran, _, err := e.RunRecorded("graph", nil, nil)
	require.NoError(t, err)
	require.True(t, ran)
	require.Equal(t, before+1, d.Submitted())
	got := words(t, d, out, len(steps))
	for i := range steps {
		require.EqualValues(t, i+1, got[i])
	}
	// The default first part: that part, then the rest in one command buffer.
	e.FirstPart = FirstPart
	require.NoError(t, e.Prerecord("graph", steps, len(steps), true, nil))
	require.Len(t, e.rec.cbs, 2)
	e.DropRecording()
}
