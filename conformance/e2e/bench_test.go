package e2e

import (
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchSequences runs conformance/host/bench on the tiny model with three sequences
// decoded side by side (-s 3: each step a batch of one token per sequence, its own
// position and sequence id) on WGPU0 and on the CPU backend, and requires a rate for both:
// llama accepts the batches and every step decodes on each device.
func TestBenchSequences(t *testing.T) {
	root := repoRoot(t)
	tiny := tinyModel(t, root)
	bench, libDir := buildHost(t, root, "bench")
	out, log := run(t, root, bench, "-L", libDir, "-m", tiny, "-d", "WGPU0", "-d", "CPU", "-p", "8", "-n", "6", "-r", "1", "-s", "3", "-fa", "on")
	require.NotContains(t, log, "decode failed", "the log: %s", log)
	for _, dev := range []string{"WGPU0", "CPU"} {
		m := regexp.MustCompile(`\| ` + dev + ` \|.*\| tg6 x3 \| ([0-9.]+) \|`).FindStringSubmatch(out)
		require.NotNil(t, m, "%s decoded three sequences: %s", dev, out)
		rate, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		require.Positive(t, rate)
		require.Regexp(t, `\| `+dev+` \|.*\| pp8 \|`, out, "the prompt stays one sequence")
	}
	bad, err := exec.Command(bench, "-L", libDir, "-m", tiny, "-s", "0").CombinedOutput()
	require.Error(t, err, "no sequences")
	require.Contains(t, string(bad), "-s takes 1 to 64 sequences")
}
