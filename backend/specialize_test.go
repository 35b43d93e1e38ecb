package backend

import (
	"fmt"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
	"github.com/stretchr/testify/require"
)

// withSpecialize sets the shared test device's specialize mode and, where spent >= 0, its
// count of specialized pipelines for the test, restoring both after (tests share the
// device: one closed and another opened on its adapter fails its first submission in
// wgpu-native).
func withSpecialize(t *testing.T, mode specializeMode, spent int) *Device {
	t.Helper()
	d := firstDevice(t)
	d.mu.Lock()
	oldMode, oldSpent := d.specialize, d.specialPipes
	d.specialize = mode
	if spent >= 0 {
		d.specialPipes = spent
	}
	d.mu.Unlock()
	t.Cleanup(func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.specialize = oldMode
		if spent >= 0 {
			d.specialPipes = oldSpent
		}
	})
	return d
}

// TestSpecializedGraphs: by default a decode step's graph (a mat-vec here) compiles
// pipelines with its parameters built in, once per device (a second backend and the same
// graph again compile none), and computes right; a prompt's graph (a product of many
// columns) keeps the uniform slots. Off, or with the device's budget spent, none are
// compiled; "all" specializes prompt graphs too.
func TestSpecializedGraphs(t *testing.T) {
	d := withSpecialize(t, specializeDecode, -1) // lavapipe too
	b, err := NewBackend(d)
	require.NoError(t, err)
	defer b.Close()
	spent := d.specialized()
	g := newMulMatGraph(t, d, 64, 1, 256, 3)
	g.compute(t, b, "g")
	n := d.specialized() - spent
	require.Positive(t, n)
	pipes := d.PipelineCount()
	for range 3 {
		g.compute(t, b, "g")
	}
	b2, err := NewBackend(d)
	require.NoError(t, err)
	defer b2.Close()
	g.compute(t, b2, "g")
	require.Equal(t, spent+n, d.specialized(), "compiled once per device")
	require.Equal(t, pipes, d.PipelineCount())

	prompt := newMulMatGraph(t, d, 48, 16, 96, 5)
	prompt.compute(t, b, "prompt")
	require.Equal(t, spent+n, d.specialized(), "a prompt's graph keeps the uniform slots")

	for i, c := range []struct {
		mode  specializeMode
		spent int
		more  bool
	}{{specializeOff, -1, false}, {specializeDecode, maxSpecialPipes, false}, {specializeAll, -1, true}} {
		d := withSpecialize(t, c.mode, c.spent)
		b, err := NewBackend(d)
		require.NoError(t, err)
		spent := d.specialized()
		for j, shape := range [][3]int64{{72, 1, 320}, {40, 3, 96}, {128, 24, 1024}} {
			g := newMulMatGraph(t, d, shape[0], shape[1], shape[2], int64(10*i+j))
			name := fmt.Sprintf("g%d", j)
			g.compute(t, b, name)
			g.compute(t, b, name)
		}
		require.Equal(t, c.more, d.specialized() > spent, "case %d", i)
		b.Close()
	}
}

// TestDecodeGraph: a graph is a decode step's when it holds a matrix product and each has
// at most eight columns (tokens, for MUL_MAT_ID).
func TestDecodeGraph(t *testing.T) {
	mm := func(cols int64) *tensor.Tensor {
		return &tensor.Tensor{Op: tensor.OpMulMat, Ne: [4]int64{64, cols, 1, 1}}
	}
	id := func(tokens int64) *tensor.Tensor {
		return &tensor.Tensor{Op: tensor.OpMulMatID, Ne: [4]int64{64, 4, tokens, 1}}
	}
	add := &tensor.Tensor{Op: tensor.OpAdd, Ne: [4]int64{64, 512, 1, 1}}
	require.True(t, ops.DecodeGraph([]*tensor.Tensor{add, mm(1), mm(8), id(2)}))
	require.False(t, ops.DecodeGraph([]*tensor.Tensor{add}), "no product")
	require.False(t, ops.DecodeGraph([]*tensor.Tensor{mm(1), mm(9)}))
	require.False(t, ops.DecodeGraph([]*tensor.Tensor{mm(1), id(16)}))
}

// TestSpecializedFallback: a dispatch whose specialized pipeline fails to compile (here
// its WGSL is made invalid; in practice a constant expression that overflows once the
// parameters are built in) takes the uniform pipeline, and the graph computes right; the
// failure is logged once at warning level.
func TestSpecializedFallback(t *testing.T) {
	d := withSpecialize(t, specializeDecode, -1)
	old, oldLog := constantsSource, Logger
	var warned []string
	constantsSource = func(s *wgsl.Spec) (string, error) {
		src, err := wgsl.Source(s)
		return src + "\nfn broken( {\n", err
	}
	Logger = func(level int, msg string) {
		if level >= LogWarn {
			warned = append(warned, msg)
		}
	}
	t.Cleanup(func() { constantsSource, Logger = old, oldLog })
	b, err := NewBackend(d)
	require.NoError(t, err)
	defer b.Close()
	d.mu.Lock()
	spent, failed := d.specialPipes, d.specialFailed
	d.mu.Unlock()
	g := newMulMatGraph(t, d, 56, 1, 200, 11) // a shape no other test specializes
	g.compute(t, b, "fallback")
	g.compute(t, b, "fallback")
	d.mu.Lock()
	defer d.mu.Unlock()
	require.Equal(t, spent, d.specialPipes, "no specialized pipeline compiled")
	require.Greater(t, d.specialFailed, failed)
	if failed == 0 {
		require.Len(t, warned, 1)
		require.Contains(t, warned[0], "uniform one takes its place")
	}
}
