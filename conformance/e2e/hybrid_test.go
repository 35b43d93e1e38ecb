package e2e

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRecurrentLogits writes small recurrent models (conformance/host/mkmodel --arch):
// Qwen3.5's hybrid (qwen35: a gated delta net layer, then a full attention layer), a
// Mamba-2 (mamba2) and LFM2's hybrid (lfm2: a short convolution layer, then attention),
// with the built-in vocabulary and random weights in F16, and Q4_K (qwen35, lfm2) or Q8_0
// (mamba2: the CPU backend's 8-bit rounding of a Q4_K product's
// activations compounds over Mamba's recurrent steps, and its logits measured an NMSE of
// 2.2e-3 against WGPU0's at one step of 64, past the threshold). It compares them with the
// CPU backend:
//   - the logits after a prompt (the recurrent ops over the prompt's tokens: SSM_CONV,
//     and GATED_DELTA_NET or SSM_SCAN, of many tokens);
//   - 64 teacher-forced steps of two sequences decoded together (one token a sequence, the
//     recurrent states of both).
//
// The whole graph must run on WGPU0: a recurrent op it refused would cut the graph into
// more splits.
func TestRecurrentLogits(t *testing.T) {
	root := repoRoot(t)
	exe, libDir := buildGenerate(t, root)
	mk, _ := buildHost(t, root, "mkmodel")
	dir := t.TempDir()
	for _, c := range []struct{ arch, typ string }{{"qwen35", "f16"}, {"qwen35", "q4_k"}, {"mamba2", "f16"}, {"mamba2", "q8_0"},
		{"lfm2", "f16"}, {"lfm2", "q4_k"}} {
		arch, typ := c.arch, c.typ
		t.Run(arch+"-"+typ, func(t *testing.T) {
			model, ref := filepath.Join(dir, arch+"-"+typ+".gguf"), filepath.Join(dir, arch+"-"+typ+"-f32.gguf")
			for i, path := range []string{model, ref} {
				run(t, root, mk, "-o", path, "--arch", arch, "--type", typ, "--embd", "256", "--layers", "2", "--heads", "4",
					"--kv-heads", "2", "--ff", "512", "--ctx", "256", "--dequantize", strconv.Itoa(i))
			}
			nmse, log := compareLogits(t, root, exe, libDir, model, 1720, "offloaded 3/3 layers to GPU")
			require.Contains(t, log, "WGPU0 RS buffer", "the recurrent states must be on WGPU0")
			require.Regexp(t, `graph: nodes = \d+, splits = 2,`, log, "the model's graph must run on WGPU0")
			t.Logf("%s %s, prompt logits: NMSE %.3g (threshold 2e-3)", arch, typ, nmse)
			r := compareTeacher(t, root, exe, libDir, model, ref, "--fa", "on", "--seqs", "2")
			require.Equal(t, 2, r.seqs, "sequences compared")
			t.Logf("%s %s, %d teacher-forced steps of 2 sequences: NMSE max %.3g, mean %.3g (against the F32 reference %.3g); greedy tokens equal on %d/%d steps with margin > %g",
				arch, typ, teacherSteps, r.maxNMSE, r.meanNMSE, r.maxRefNMSE, r.checked, r.steps, teacherMinMargin)
		})
	}
}

// TestRecurrentLogitsSpecialized runs the F16 Qwen3.5 hybrid and Mamba-2 teacher-forced
// with decode graphs taking pipelines with their parameters built in
// (GGML_WGPU_SPECIALIZE=decode, a GPU's default, which lavapipe's leaves off): every
// recurrent kernel compiled that way too, every step within TestRecurrentLogits' bounds.
func TestRecurrentLogitsSpecialized(t *testing.T) {
	t.Setenv("GGML_WGPU_SPECIALIZE", "decode")
	t.Setenv("GGML_WGPU_PROFILE", "1")
	root := repoRoot(t)
	exe, libDir := buildGenerate(t, root)
	mk, _ := buildHost(t, root, "mkmodel")
	dir := t.TempDir()
	for _, arch := range []string{"qwen35", "mamba2"} {
		t.Run(arch, func(t *testing.T) {
			model, ref := filepath.Join(dir, arch+".gguf"), filepath.Join(dir, arch+"-f32.gguf")
			for i, path := range []string{model, ref} {
				run(t, root, mk, "-o", path, "--arch", arch, "--type", "f16", "--embd", "256", "--layers", "2", "--heads", "4",
					"--kv-heads", "2", "--ff", "512", "--ctx", "256", "--dequantize", strconv.Itoa(i))
			}
			r := compareTeacher(t, root, exe, libDir, model, ref, "--fa", "on", "--seqs", "2")
			m := regexp.MustCompile(`WGPU0 profile: .*pipelines \d+ \((\d+) specialized\)`).FindStringSubmatch(r.log)
			require.NotNil(t, m, "the profile reports the specialized pipelines")
			n, err := strconv.Atoi(m[1])
			require.NoError(t, err)
			require.Positive(t, n, "decode graphs specialized")
			t.Logf("%s F16, specialized: %d pipelines built in, NMSE max %.3g", arch, n, r.maxNMSE)
		})
	}
}
