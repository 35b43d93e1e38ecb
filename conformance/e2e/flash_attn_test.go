package e2e

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFlashAttnLlamaLogits writes a small llama model (head size 64, four query heads per
// KV head; random F16 weights, conformance/host/mkmodel) and compares its logits with
// llama's flash attention on and F16 K and V caches, on WGPU0 against the CPU backend under
// the same settings (whole-model NMSE threshold 2e-3, same greedy token): a short prompt
// (at most eight tokens: the split-KV decoding path) and a long one (the prompt path).
// The long prompt runs again with Q8_0 K and V caches (written by SET_ROWS into Q8_0, read
// by flash attention through the format's routine), and with flash attention off (llama's
// MUL_MAT, SOFT_MAX, MUL_MAT chain).
// llama's scheduler must cut the graph in two (the token embeddings on the CPU, the rest
// on WGPU0): a FLASH_ATTN_EXT node that WGPU0 refused would add splits around it.
func TestFlashAttnLlamaLogits(t *testing.T) {
	root := repoRoot(t)
	tiny := tinyModel(t, root)
	exe, libDir := buildGenerate(t, root)
	mk, _ := buildHost(t, root, "mkmodel")
	model := filepath.Join(t.TempDir(), "fa.gguf")
	run(t, root, mk, "-t", tiny, "-o", model, "--type", "f16", "--embd", "512", "--layers", "2",
		"--heads", "8", "--kv-heads", "2", "--ff", "512", "--ctx", "512")
	long := "The quick brown fox jumps over the lazy dog because it was bored and wanted to see what lay beyond the hill"
	for _, c := range []struct{ name, prompt, kv, fa string }{
		{"short", "The quick brown fox", "f16", "on"},
		{"long", long, "f16", "on"},
		{"long_q8_0", long, "q8_0", "on"},
		{"long_off", long, "f16", "off"},
	} {
		name, prompt := c.name, c.prompt
		t.Run(name, func(t *testing.T) {
			nmse, gpuLog := compareLogits(t, root, exe, libDir, model, 32000, "offloaded 3/3 layers to GPU",
				"-p", prompt, "--fa", c.fa, "--kv-type", c.kv)
			require.Contains(t, gpuLog, "flash_attn            = "+map[string]string{"on": "enabled", "off": "disabled"}[c.fa])
			require.Regexp(t, `graph: nodes = \d+, splits = 2,`, gpuLog, "attention must run on WGPU0")
			t.Logf("flash attention %s, %s prompt, %s KV, 32000 logits: NMSE %.3g (threshold 2e-3)", c.fa, name, c.kv, nmse)
		})
	}
}
