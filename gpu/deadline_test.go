package gpu

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTimeoutFromEnv(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"":                    DefaultTimeout,
		"junk":                DefaultTimeout,
		"0":                   DefaultTimeout,
		"-5":                  DefaultTimeout,
		"1500":                1500 * time.Millisecond,
		"9223372036854775807": time.Duration(math.MaxInt64),
	} {
		t.Setenv(EnvTimeout, v)
		require.Equal(t, want, timeoutFromEnv(), "%s=%q", EnvTimeout, v)
	}
}

// spin keeps each invocation busy for 60000 steps of a generator (llvmpipe ends any loop
// after 65535 iterations, so the work is spread over workgroups instead).
const spin = `
struct P { n: u32, pad: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> a: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
	var x = id.x;
	for (var j = 0u; j < 60000u; j++) { x = x * 1664525u + 1013904223u; }
	a[id.x] = x;
}`

// TestWaitTimeoutMarksLost runs, in a child whose environment sets a 50 ms deadline, a
// submission that takes far longer (most of a second on lavapipe) and waits for it. The
// wait must give up with an error that says so, the device must be lost from then on,
// every call must fail at once, and Close must not hang.
//
// (Read's waits share the code; they are not timed out here because lavapipe blocks the
// readback's submission itself until the earlier work is done.)
func TestWaitTimeoutMarksLost(t *testing.T) {
	switch childMode() {
	case "":
		out, code := runChild(t, "^TestWaitTimeoutMarksLost$", "timeout", EnvTimeout+"=50")
		if code != 0 || !strings.Contains(out, "TIMEOUT-OK") {
			t.Fatalf("child (exit %d):\n%s", code, out)
		}
	case "timeout":
		timeoutChild(t)
	default:
		t.Skip("a child for another test")
	}
}

func timeoutChild(t *testing.T) {
	a0 := firstAdapter(t)
	d, err := a0.Open()
	require.NoError(t, err)
	t.Cleanup(d.Close)
	require.Equal(t, 50*time.Millisecond, d.Timeout)
	p, err := d.CreatePipeline("spin", spin, 1)
	require.NoError(t, err)
	// Most of a second on lavapipe; a GPU needs a far larger grid to stay busy past the
	// deadline (65535 x 256 workgroups: about a second on an H200; rows of the grid write
	// the same words).
	groups, rows := uint32(512), uint32(1)
	if a0.Info.Type != CPU {
		groups, rows = 65535, 256
	}
	u, err := d.CreateBuffer(256, UsageUniform)
	require.NoError(t, err)
	a, err := d.CreateBuffer(uint64(groups)*64*4, UsageStorage)
	require.NoError(t, err)
	g, err := d.CreateBindGroup(p, u, 16, []Binding{{Buffer: a, Size: a.Size}})
	require.NoError(t, err)
	e := d.NewEncoder()
	require.NoError(t, e.Dispatch(p, g, 0, [3]uint32{groups, rows, 1}))
	seq, err := e.Submit()
	require.NoError(t, err)
	next := d.NewEncoder() // opened before the loss: must fail afterwards

	start := time.Now()
	err = d.Wait(seq)
	took := time.Since(start)
	require.ErrorIs(t, err, ErrDeviceLost)
	require.ErrorContains(t, err, "did not complete within 50 ms")
	require.ErrorContains(t, err, EnvTimeout)
	require.Less(t, took, 2*time.Second, "the wait overran its deadline")
	t.Logf("gave up after %v: %v", took, err)

	lost := d.Lost()
	require.ErrorIs(t, lost, ErrDeviceLost)
	require.True(t, strings.HasPrefix(lost.Error(), "webgpu: device lost: "), lost.Error())
	start = time.Now()
	isLost := func(err error) { t.Helper(); require.ErrorIs(t, err, ErrDeviceLost) }
	isLost(d.Wait(seq))
	isLost(d.WaitIdle())
	isLost(d.Read(a, 0, make([]byte, 16)))
	isLost(d.Write(a, 0, make([]byte, 16)))
	isLost(d.Clear(a, 0, 16))
	_, err = d.CreateBuffer(64, UsageStorage)
	isLost(err)
	_, err = d.CreatePipeline("spin", spin, 1)
	isLost(err)
	_, err = d.CreateBindGroup(p, u, 16, []Binding{{Buffer: a, Size: a.Size}})
	isLost(err)
	_, err = d.CreateQuerySet(2)
	isLost(err)
	isLost(next.Dispatch(p, g, 0, [3]uint32{1, 1, 1}))
	_, err = next.Submit()
	isLost(err)
	e = d.NewEncoder()
	isLost(e.Copy(a, 0, a, 64, 16))
	_, err = e.Submit()
	isLost(err)
	require.Equal(t, seq-1, d.Completed()) // no poll of a lost device
	g.Release()
	p.Release()
	a.Release()
	u.Release()
	d.Close()
	require.Less(t, time.Since(start), time.Second, "calls on a lost device must fail at once")
	isLost(d.Lost())
	t.Log("TIMEOUT-OK")
}
