package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// promptMemoryEnv, set to anything, runs TestPromptOwnMemory (about two minutes on
// lavapipe with two cores: writing the model, then compiling the prompt kernels).
const promptMemoryEnv = "GGML_WGPU_E2E_PROMPT_MEMORY"

// TestPromptOwnMemory writes a two-layer llama of a 1B model's shapes in Q4_K (embedding
// 2048, 32/8 heads, feed-forward 8192, the tiny model's 32000-token vocabulary;
// conformance/host/mkmodel), runs a 496-token prompt on WGPU0 the way llama-bench does
// (conformance/host/bench) and requires the device's own memory that GGML_WGPU_PROFILE=1
// reports under 64 MiB: its prompt products take 32 MiB chunks of dequantized weights
// and split-K partial sums in scratch memory (ops.ScratchBudget), beside the readback
// buffer and the parameter arena. On demand: promptMemoryEnv.
func TestPromptOwnMemory(t *testing.T) {
	if os.Getenv(promptMemoryEnv) == "" {
		t.Skipf("set %s=1 to run a 496-token prompt on a 1B-shaped model (minutes on lavapipe)", promptMemoryEnv)
	}
	root := repoRoot(t)
	tiny := tinyModel(t, root)
	mk, _ := buildHost(t, root, "mkmodel")
	bench, libDir := buildHost(t, root, "bench")
	model := filepath.Join(t.TempDir(), "q4_k-1b-2l.gguf")
	run(t, root, mk, "-t", tiny, "-o", model, "--type", "q4_k", "--embd", "2048", "--layers", "2",
		"--heads", "32", "--kv-heads", "8", "--ff", "8192", "--vocab", "32000")
	t.Setenv("GGML_WGPU_PROFILE", "1")
	out, log := run(t, root, bench, "-L", libDir, "-m", model, "-d", "WGPU0", "-p", "496", "-n", "0", "-r", "1")
	require.Contains(t, out, "pp496", "the prompt ran")
	require.NotContains(t, log, "graph_compute on WGPU0", "the backend reported a failed graph")
	m := regexp.MustCompile(`WGPU0 profile: .*own memory ([0-9.]+) MiB`).FindStringSubmatch(log)
	require.NotNil(t, m, "the profile reports the library's own memory")
	own, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	t.Logf("own memory after a 496-token prompt on a 1B-shaped Q4_K model: %.2f MiB", own)
	require.Greater(t, own, 32.0, "a prompt product takes a 32 MiB chunk of dequantized weights")
	require.Less(t, own, 64.0)
}
