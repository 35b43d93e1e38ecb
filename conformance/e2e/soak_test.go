package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// soakEnv sets the number of decode steps of TestSoakDecode (default soakSteps); the long
// run is GGML_WGPU_SOAK=10000.
const soakEnv = "GGML_WGPU_SOAK"

// soakSteps is the CI-sized run (about 20 s on lavapipe): more than one full context
// (soakCtx), so the KV cache is cleared and refilled once after the warm-up.
const soakSteps = 200

// soakCtx is the context size of the soak run.
const soakCtx = 128

// Tolerances of the memory figures after the warm-up: the device's reported free memory
// must not drop at all beyond soakDevTolerance (buffers are allocated once, at load), and
// the process's resident memory may wander by allocator noise only.
const (
	soakDevTolerance = 1 << 20
	soakRSSTolerance = 16 << 20
)

// soakSample is one report line of the soak host.
type soakSample struct {
	step             int
	rss, free, total uint64
}

// parseSoak reads the soak host's stdout: its report lines and the final count of
// non-finite logits.
func parseSoak(t *testing.T, out string) (samples []soakSample, done int, nonfinite int64) {
	t.Helper()
	done = -1
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var s soakSample
		var rssKiB uint64
		if n, _ := fmt.Sscanf(line, "step %d rss_kib %d dev_free %d dev_total %d", &s.step, &rssKiB, &s.free, &s.total); n == 4 {
			s.rss = rssKiB << 10
			samples = append(samples, s)
			continue
		}
		if n, _ := fmt.Sscanf(line, "done %d nonfinite %d", &done, &nonfinite); n == 2 {
			continue
		}
		t.Fatalf("unexpected soak output line %q", line)
	}
	return samples, done, nonfinite
}

// mib formats a byte count (possibly negative) in MiB.
func mib(b int64) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) }

// TestSoakDecode decodes the tiny llama model token by token on WGPU0 through llama.cpp
// for GGML_WGPU_SOAK steps (default soakSteps), clearing the KV cache whenever the
// 128-token context is full. The long run is
//
//	GGML_WGPU_SOAK=10000 go test -timeout 60m -run TestSoakDecode ./conformance/e2e
//
// (about 100 ms a step on lavapipe with two cores). After a warm-up of a third of the steps, the
// device's reported free memory (ggml_backend_dev_memory) and the host's resident memory
// must stay flat within soakDevTolerance and soakRSSTolerance, both from the end of the
// warm-up and over the last half of the run; every logit must be finite. The figures are
// logged.
func TestSoakDecode(t *testing.T) {
	root := repoRoot(t)
	model := tinyModel(t, root)
	steps := soakSteps
	if s := os.Getenv(soakEnv); s != "" {
		v, err := strconv.Atoi(s)
		require.NoError(t, err, "%s=%q", soakEnv, s)
		require.Greater(t, v, 30, "%s must exceed 30 steps", soakEnv)
		steps = v
	}
	every := max(steps/40, 5)
	exe, libDir := buildHost(t, root, "soak")
	out, log := run(t, root, exe, "-L", libDir, "-m", model, "-d", "WGPU0",
		"-n", strconv.Itoa(steps), "-k", strconv.Itoa(every), "-c", strconv.Itoa(soakCtx))
	require.NotContains(t, log, "graph_compute on WGPU0", "a decode graph failed on WGPU0")
	require.NotContains(t, log, "internal error", "the library recovered from a panic")

	samples, done, nonfinite := parseSoak(t, out)
	require.Equal(t, steps, done, "the soak host did not finish")
	require.Zero(t, nonfinite, "non-finite logits")
	require.GreaterOrEqual(t, len(samples), 6, "too few memory reports")

	warm, mid := -1, -1
	for i, s := range samples {
		if warm < 0 && s.step >= steps/3 {
			warm = i
		}
		if mid < 0 && s.step >= steps/2 {
			mid = i
		}
	}
	first, w, m, last := samples[0], samples[warm], samples[mid], samples[len(samples)-1]
	var peak uint64
	minFree := w.free
	for _, s := range samples[warm:] {
		peak = max(peak, s.rss)
		minFree = min(minFree, s.free)
	}
	t.Logf("%d decode steps (context %d), reports every %d steps", steps, soakCtx, every)
	t.Logf("host RSS: step %d %s, warm (step %d) %s, step %d %s, end (step %d) %s; peak after warm-up %s; growth after warm-up %s, over the last half %s",
		first.step, mib(int64(first.rss)), w.step, mib(int64(w.rss)), m.step, mib(int64(m.rss)), last.step, mib(int64(last.rss)),
		mib(int64(peak)), mib(int64(last.rss)-int64(w.rss)), mib(int64(last.rss)-int64(m.rss)))
	t.Logf("WGPU0 free memory (total %s): step %d %s, warm %s, end %s; lowest after warm-up %s; drop after warm-up %s",
		mib(int64(last.total)), first.step, mib(int64(first.free)), mib(int64(w.free)), mib(int64(last.free)),
		mib(int64(minFree)), mib(int64(w.free)-int64(minFree)))

	require.LessOrEqual(t, int64(w.free)-int64(minFree), int64(soakDevTolerance),
		"WGPU0's free memory dropped by %s after the warm-up", mib(int64(w.free)-int64(minFree)))
	require.LessOrEqual(t, int64(peak)-int64(w.rss), int64(soakRSSTolerance),
		"host RSS grew by %s after the warm-up", mib(int64(peak)-int64(w.rss)))
	require.LessOrEqual(t, int64(last.rss)-int64(m.rss), int64(soakRSSTolerance/2),
		"host RSS grew by %s over the last half of the run", mib(int64(last.rss)-int64(m.rss)))
}
