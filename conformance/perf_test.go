package conformance

import (
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPerfSmoke runs the perf machinery on tiny cases on the CPU backend and on WGPU0 (when
// build/libggml-wgpu.so exists), with a device that does not exist among them: the missing
// device must be noted and left out, and every figure must be positive and finite. The perf
// suite itself is a benchmark, run with `wgpu-conformance -perf`, not by go test.
func TestPerfSmoke(t *testing.T) {
	cfg := testConfig(t)
	devices := []string{"CPU"}
	if _, err := os.Stat(cfg.BackendPath); err == nil {
		devices = append(devices, DefaultDevice)
	}
	devices = append(devices, "NoSuchDevice0")
	env, err := OpenPerf(PerfConfig{LibDir: cfg.LibDir, BackendPath: cfg.BackendPath, Devices: devices, Threads: 1})
	require.NoError(t, err)
	defer env.Close()
	require.Len(t, env.Devices, len(devices)-1)
	require.Contains(t, strings.Join(env.Notes, "\n"), "device NoSuchDevice0 not found")

	opts := QuickPerfOptions()
	opts.MinRuns, opts.MinTime, opts.MaxTime, opts.MaxReps = 2, 0, 0, 4
	cases := []*PerfCase{perfBinary("ADD", 64, 4, 4), perfMulMat(tensor.F16, 64, 32, 4), perfMulMat(tensor.Q4_0, 64, 32, 4)}
	wantBytes := []uint64{3 * 64 * 4 * 4, 64*32*2 + 64*4*4 + 32*4*4, 64*32/32*18 + 64*4*4 + 32*4*4}
	wantFlops := []uint64{0, 2 * 64 * 32 * 4, 2 * 64 * 32 * 4}
	rep := env.Run(cases, opts, func(r PerfResult) { t.Log(r) })
	require.True(t, rep.OK())
	finite := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }
	for i, row := range rep.Results {
		require.Len(t, row, len(env.Devices))
		for _, r := range row {
			require.Equal(t, PerfOK, r.Status, r.String())
			require.GreaterOrEqual(t, r.Runs, 2)
			require.True(t, r.Reps >= 1 && r.Reps <= 4, "reps %d", r.Reps)
			require.Equal(t, wantBytes[i], r.Bytes, r.Case.Name)
			require.Equal(t, wantFlops[i], r.Flops, r.Case.Name)
			require.True(t, finite(r.US), "%s: %g µs", r, r.US)
			require.True(t, finite(r.GBps), "%s: %g GB/s", r, r.GBps)
			if r.Flops > 0 {
				require.True(t, finite(r.TFLOPS), "%s: %g TFLOP/s", r, r.TFLOPS)
			} else {
				require.Zero(t, r.TFLOPS)
			}
		}
	}
	table := rep.Table()
	t.Logf("\n%s", table)
	require.Contains(t, table, "| CPU µs |")
	require.Contains(t, table, "NoSuchDevice0")
	for _, c := range cases {
		require.Contains(t, table, c.Name)
	}
	if len(env.Devices) > 1 {
		require.Contains(t, table, "CPU/"+DefaultDevice)
	}

	// A case over MaxOpFlops is skipped, not measured.
	opts.MaxOpFlops = 1
	r := env.Measure(cases[1], env.Devices[0], opts)
	require.Equal(t, PerfSkipped, r.Status, r.String())
}

func TestPerfCases(t *testing.T) {
	cs := PerfCases()
	names := map[string]bool{}
	for _, c := range cs {
		require.False(t, names[c.Name], "duplicate perf case %s", c.Name)
		names[c.Name] = true
	}
	// 8 F16 shapes at n = 1 and 512; 2 shapes x n = 2, 4, 8 in F16; 2 shapes x 5 n in 6
	// formats; 2 output heads at n = 1 in 7; 3 more decode shapes in 2; a prompt product
	// over normal weights, twice.
	require.Len(t, FilterPerf(cs, "MUL_MAT"), 16+6+60+14+6+2)
	require.Len(t, FilterPerf(cs, "n=512,k=4096"), 2+6)
	require.Len(t, FilterPerf(cs, "type_a=q4_K"), 15)
	require.Len(t, FilterPerf(cs, "type_a=q4_K|type_a=q4_0"), 30, "alternatives")
	require.Len(t, FilterPerf(cs, "m=128256,"), 14)
}
