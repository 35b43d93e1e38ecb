package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// traceEnv names the trace file of TestProfileTrace's child process.
const traceEnv = "GGML_WGPU_PROFILE"

// TestProfileTrace runs small graphs on WGPU0 in a child process whose GGML_WGPU_PROFILE
// names a file, frees the backend, and reads the trace the library wrote: valid JSON,
// metadata naming the process and tracks, CPU compute and wait events, and, where the
// adapter has timestamp queries (lavapipe has), one GPU event per dispatch with its op,
// node, kernel and cost; where it has none, the file must say that GPU times are
// unavailable and hold no GPU event.
func TestProfileTrace(t *testing.T) {
	cfg := testConfig(t)
	_, err := os.Stat(cfg.BackendPath)
	require.NoError(t, err, "run scripts/build.sh")
	var path string
	if !isChild(t) {
		path = filepath.Join(t.TempDir(), "trace.json")
		t.Setenv(traceEnv, path)
	}
	isolated(t, func(t *testing.T) {
		env, err := OpenPerf(PerfConfig{LibDir: cfg.LibDir, BackendPath: cfg.BackendPath, Devices: []string{DefaultDevice}})
		require.NoError(t, err)
		opts := QuickPerfOptions()
		opts.MinRuns, opts.MinTime, opts.MaxTime, opts.MaxReps = 2, 0, 0, 2
		for _, c := range []*PerfCase{perfMulMat(tensor.F16, 64, 32, 1), perfBinary("ADD", 64, 4, 4)} {
			r := env.Measure(c, env.Devices[0], opts)
			require.Equal(t, PerfOK, r.Status, r.String())
		}
		env.Close() // frees the backend: the trace is written
	})
	if isChild(t) {
		return
	}
	checkTrace(t, path)
}

func checkTrace(t *testing.T, path string) {
	raw, err := os.ReadFile(path)
	require.NoError(t, err, "no trace written")
	var f struct {
		DisplayTimeUnit string `json:"displayTimeUnit"`
		OtherData       struct {
			GPUTimes []string `json:"gpu_times"`
			Events   int      `json:"events"`
		} `json:"otherData"`
		TraceEvents []struct {
			Name string         `json:"name"`
			Cat  string         `json:"cat"`
			Ph   string         `json:"ph"`
			TS   float64        `json:"ts"`
			Dur  float64        `json:"dur"`
			Tid  int            `json:"tid"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(raw, &f), "the trace is not valid JSON")
	require.Equal(t, "ns", f.DisplayTimeUnit)
	require.Len(t, f.OtherData.GPUTimes, 1)
	timed := strings.Contains(f.OtherData.GPUTimes[0], "GPU timestamp queries")
	t.Logf("%d events; %s", f.OtherData.Events, f.OtherData.GPUTimes[0])

	count := map[string]int{}
	threads := map[string]bool{}
	var gpuOps []string
	for _, e := range f.TraceEvents {
		if e.Ph == "M" {
			count["M:"+e.Name]++
			if e.Name == "thread_name" {
				threads[e.Args["name"].(string)] = true
			}
			continue
		}
		require.Equal(t, "X", e.Ph, e.Name)
		require.GreaterOrEqual(t, e.Dur, 0.0, e.Name)
		require.GreaterOrEqual(t, e.TS, 0.0, e.Name)
		count[e.Cat+":"+e.Name]++
		if e.Cat != "gpu" {
			continue
		}
		gpuOps = append(gpuOps, e.Name)
		require.Contains(t, []string{"MUL_MAT", "ADD"}, e.Name)
		require.NotEmpty(t, e.Args["kernel"], "dispatch without its kernel")
		require.Contains(t, e.Args, "node")
		require.Contains(t, e.Args, "variant")
		require.Contains(t, e.Args["shapes"], "dst")
		if e.Name == "MUL_MAT" && e.Args["dispatch"] == "1/1" {
			require.Equal(t, float64(2*64*32), e.Args["flop"])
			require.Equal(t, float64(64*32*2+64*4+32*4), e.Args["bytes"])
		}
	}
	require.Equal(t, 1, count["M:process_name"])
	require.True(t, threads["WGPU0 backend 1: CPU"] && threads["WGPU0 backend 1: GPU dispatches"], "tracks: %v", threads)
	require.Positive(t, count["cpu:compute"], "no compute (encode) event")
	require.Positive(t, count["cpu:wait"], "no wait (synchronize) event")
	require.Positive(t, count["cpu:build"])
	require.Positive(t, count["cpu:record+submit"])
	if timed {
		require.Positive(t, count["cpu:submit"])
		require.Contains(t, gpuOps, "MUL_MAT")
		require.Contains(t, gpuOps, "ADD")
	} else {
		require.Contains(t, f.OtherData.GPUTimes[0], "GPU times unavailable")
		require.Empty(t, gpuOps, "GPU events without GPU times")
	}
}
