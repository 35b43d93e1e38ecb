package conformance

import "testing"

// TestConformanceDequantPrompt runs the cases of the prompt kernel on dequantized weights
// (mulMatDequantCases) in child processes, whose library reads the switches at load time:
// with chunks of 256 KiB (128 rows of K = 1024: several chunks per product, the last
// partial) and with the direct quantized loads (GGML_WGPU_DEQUANT_PROMPT=0).
func TestConformanceDequantPrompt(t *testing.T) {
	for _, run := range []struct{ name, env, value string }{
		{"chunks", "GGML_WGPU_DEQUANT_CHUNK_KB", "256"},
		{"direct", "GGML_WGPU_DEQUANT_PROMPT", "0"},
	} {
		t.Run(run.name, func(t *testing.T) {
			t.Setenv(run.env, run.value) // inherited by the child process
			isolated(t, func(t *testing.T) {
				runSuite(t, openTestEnv(t), mulMatDequantCases())
			})
		})
	}
}

// TestConformanceBigWaves runs the prompt kernel's cases (mulMatBigCases and
// mulMatDequantCases) in a child process whose library reckons its splits of K and its
// chunks of dequantized rows by waves of three multiprocessors
// (GGML_WGPU_COMPUTE_UNITS=3, read at load time), as it does on a GPU whose
// multiprocessors Vulkan reports: other splits and chunks than lavapipe's count rule
// takes.
func TestConformanceBigWaves(t *testing.T) {
	t.Setenv("GGML_WGPU_COMPUTE_UNITS", "3") // inherited by the child process
	isolated(t, func(t *testing.T) {
		runSuite(t, openTestEnv(t), append(mulMatBigCases(), mulMatDequantCases()...))
	})
}
