package e2e

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMoELlamaLogits writes small llama models with a mixture of experts in every layer
// (8 experts, 2 or 4 used per token: the router, top-k selection, MUL_MAT_ID and the
// weighted sum; conformance/host/mkmodel --experts) with F16 and Q4_K experts, and compares their
// logits on WGPU0 with the CPU backend's. The experts' weights must be placed on WGPU0,
// which llama does only when supports_op accepts MUL_MAT_ID on them.
func TestMoELlamaLogits(t *testing.T) {
	root := repoRoot(t)
	tiny := tinyModel(t, root)
	exe, libDir := buildGenerate(t, root)
	mk, _ := buildHost(t, root, "mkmodel")
	// ff: each expert's hidden size (Q4_K rows are whole 256-element blocks); bpw: bits
	// per weight.
	for _, c := range []struct {
		typ     string
		ff, bpw float64
		used    int
	}{{"f16", 128, 16, 2}, {"q4_k", 256, 4.5, 4}} {
		typ := c.typ
		// the experts of both layers: 2 layers x 3 matrices x 8 experts x 256 x ff weights
		expertMiB := 2 * 3 * 8 * 256 * c.ff * c.bpw / 8 / 1048576
		t.Run(typ, func(t *testing.T) {
			// the library's profile names the fusions its plans took
			t.Setenv("GGML_WGPU_PROFILE", "1")
			model := filepath.Join(t.TempDir(), "moe-"+typ+".gguf")
			run(t, root, mk, "-t", tiny, "-o", model, "--type", typ, "--embd", "256", "--layers", "2",
				"--heads", "8", "--kv-heads", "4", "--ff", strconv.Itoa(int(c.ff)), "--ctx", "256", "--experts", "8",
				"--experts-used", strconv.Itoa(c.used))
			nmse, log := compareLogits(t, root, exe, libDir, model, 32000, "offloaded 3/3 layers to GPU")
			// the router in one dispatch (ops/moe_router.go), and with more than 2 slots the
			// MUL by the weights and the chain of ADDs over the slots (ops/moe_sum.go)
			require.Regexp(t, `fusions in the graphs planned: .*soft_max\+argsort\+get_rows\+sum_rows\+clamp\+div \d+`, log)
			if c.used > 2 {
				require.Regexp(t, `fusions in the graphs planned: .*mul\+moe_sum\(4\) \d+`, log)
			}
			m := regexp.MustCompile(`WGPU0 model buffer size =\s*([0-9.]+) MiB`).FindStringSubmatch(log)
			require.NotNil(t, m, "no WGPU0 model buffer in the log")
			mib, err := strconv.ParseFloat(m[1], 64)
			require.NoError(t, err)
			require.Greater(t, mib, expertMiB, "the experts must be placed on WGPU0")
			// The whole graph on WGPU0 but its inputs (router, ARGSORT, the experts' MUL_MAT_ID,
			// CLAMP and SUM_ROWS of the weights): a refused node would add splits.
			require.Regexp(t, `graph: nodes = \d+, splits = 2,`, log, "the MoE graph must run on WGPU0")
			t.Logf("%s MoE llama (embd 256, 2 layers, 8 experts, %d used), 32000 logits: NMSE %.3g (threshold 2e-3), %.2f MiB of weights on WGPU0", typ, c.used, nmse, mib)
			// Longer prompts, whose experts average 15 to 60 (slot, token) pairs: MUL_MAT_ID
			// takes the routed prompt kernel's 32- and 64-column tiles (the short prompt's
			// ~3 pairs of F16 experts took the mat-vec, its ~6 of Q4_K experts the 32 columns).
			for _, n := range []int{6, 12} {
				long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", n)
				nmse, _ = compareLogits(t, root, exe, libDir, model, 32000, "offloaded 3/3 layers to GPU", "-p", long)
				t.Logf("%s MoE llama, a prompt of ~%d tokens: NMSE %.3g", typ, 10*n, nmse)
			}
		})
	}
}
