// Package e2e runs real GGUF models through the real llama.cpp library, once on ggml's CPU
// backend and once on WGPU0, and compares the results.
package e2e

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/conformance"
	"github.com/stretchr/testify/require"
)

// repoRoot returns the folder holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := conformance.FindRepoRoot(".")
	require.NoError(t, err)
	return root
}

// tinyModel returns the shared test model, skipping (or failing under CI) when absent.
func tinyModel(t *testing.T, root string) string {
	t.Helper()
	path := filepath.Join(root, "..", "shared", "models", "llama-2-tiny-random.gguf")
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("test model missing under CI: %s", path)
		}
		t.Skipf("test model not present (%s); it lives in ../shared/models beside the repository", path)
	}
	return path
}

// buildGenerate compiles generate.c against the npm host libraries.
func buildGenerate(t *testing.T, root string) (exe, libDir string) {
	t.Helper()
	return buildHost(t, root, "generate")
}

// buildHost compiles conformance/host/<name>.c against llama.cpp and ggml from the npm
// host libraries, and returns the executable and the library directory.
func buildHost(t *testing.T, root, name string) (exe, libDir string) {
	t.Helper()
	libDir = filepath.Join(root, ".cache", "ggml", "lib")
	lib := filepath.Join(root, "build", "libggml-wgpu.so")
	if _, err := os.Stat(lib); err != nil {
		t.Fatalf("%s missing: run scripts/build.sh", lib)
	}
	exe = filepath.Join(t.TempDir(), name)
	cmd := exec.Command("gcc", "-O2", "-o", exe, filepath.Join(root, "conformance", "host", name+".c"),
		"-I", filepath.Join(root, ".cache", "ggml", "include"),
		filepath.Join(libDir, "libllama.v0.5.0.so"), filepath.Join(libDir, "libggml.v0.5.0.so"),
		filepath.Join(libDir, "libggml-base.so"), "-lm", "-Wl,-rpath,"+libDir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "compile %s.c: %s", name, out)
	return exe, libDir
}

func run(t *testing.T, root, exe string, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "GGML_BACKEND_PATH="+filepath.Join(root, "build", "libggml-wgpu.so"))
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	require.NoError(t, err, "%s %v\n%s", exe, args, tail(e.String(), 4000))
	return o.String(), e.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func parseLogits(t *testing.T, s string) []float64 {
	t.Helper()
	var v []float64
	for _, f := range strings.Fields(s) {
		x, err := strconv.ParseFloat(f, 64)
		require.NoError(t, err)
		v = append(v, x)
	}
	return v
}

func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// TestTinyLlamaLogits runs the prompt through the tiny llama model with every layer on
// WGPU0 and compares the last token's logits with the CPU backend's (whole-model NMSE
// threshold 2e-3).
func TestTinyLlamaLogits(t *testing.T) {
	root := repoRoot(t)
	model := tinyModel(t, root)
	exe, libDir := buildGenerate(t, root)
	nmse, _ := compareLogits(t, root, exe, libDir, model, 32000, "offloaded 2/2 layers to GPU")
	t.Logf("tiny llama, 32000 logits: NMSE %.3g (threshold 2e-3)", nmse)
}

// TestQuantizedKCacheLogits writes a small llama model with heads of 32 (a K cache block;
// the tiny model's vocabulary, random F16 weights; conformance/host/mkmodel), runs it with
// its K cache in Q8_0 (llama stores it with SET_ROWS, quantizing each token's keys;
// attention reads it with MUL_MAT) on WGPU0 and on the CPU backend, and compares the
// logits (whole-model NMSE threshold 2e-3).
func TestQuantizedKCacheLogits(t *testing.T) {
	root := repoRoot(t)
	tiny := tinyModel(t, root)
	exe, libDir := buildGenerate(t, root)
	mk, _ := buildHost(t, root, "mkmodel")
	model := filepath.Join(t.TempDir(), "f16.gguf")
	run(t, root, mk, "-t", tiny, "-o", model, "--type", "f16", "--embd", "256", "--layers", "2",
		"--heads", "8", "--kv-heads", "4", "--ff", "512", "--ctx", "256")
	nmse, log := compareLogits(t, root, exe, libDir, model, 32000, "offloaded 3/3 layers to GPU", "--type-k", "q8_0")
	require.Regexp(t, `K \(q8_0\)`, log, "the K cache must be Q8_0")
	require.Contains(t, log, "WGPU0 KV buffer", "the KV cache must be on WGPU0")
	// The whole graph on WGPU0 but its inputs: a SET_ROWS or MUL_MAT of the cache that
	// supports_op refused would run on the CPU in further splits.
	require.Regexp(t, `graph: nodes = \d+, splits = 2,`, log)
	t.Logf("llama (embd 256, heads of 32, 2 layers), K cache Q8_0, 32000 logits: NMSE %.3g (threshold 2e-3)", nmse)
}

// allIQEnv, set to anything, adds the IQ formats other than IQ4_NL, IQ4_XS, IQ3_S and
// IQ2_XXS to TestQuantizedLlamaLogits (5 to 12 seconds each on lavapipe, much of it in
// ggml's quantizer).
const allIQEnv = "GGML_WGPU_E2E_ALL_IQ"

// TestQuantizedLlamaLogits writes small llama models with Q8_0, Q4_0, Q4_K, Q6_K, mixed
// Q4_K/Q6_K (Q4_K_M-like), Q5_K, Q2_K, Q3_K, BF16, MXFP4, IQ4_NL, IQ4_XS, IQ3_S and
// IQ2_XXS weights (the tiny model's vocabulary, random weights; conformance/host/mkmodel;
// the last two read their grids through the device's table buffer) and compares their
// logits on WGPU0, every layer and the output matrix there, with the CPU backend's.
// GGML_WGPU_E2E_TYPES=all adds TQ1_0, TQ2_0, NVFP4, Q1_0 and Q2_0 models (about ten
// seconds each on lavapipe; the conformance suite covers their kernels), and
// GGML_WGPU_E2E_ALL_IQ the other IQ formats.
func TestQuantizedLlamaLogits(t *testing.T) {
	root := repoRoot(t)
	tiny := tinyModel(t, root)
	exe, libDir := buildGenerate(t, root)
	mk, _ := buildHost(t, root, "mkmodel")
	// minMiB: a little under the output matrix alone (32000 x 256: bits per weight *
	// 0.977 MiB; Q6_K's in the mixed model).
	type model struct {
		typ    string
		minMiB float64
	}
	models := []model{{"q8_0", 8}, {"q4_0", 4.25}, {"q4_k", 4.25}, {"q6_k", 6.25}, {"q4_k_m", 6.25}, {"q5_k", 5.25}, {"q2_k", 2.5}, {"q3_k", 3.25},
		{"bf16", 15.5}, {"mxfp4", 4}, {"iq4_nl", 4.25}, {"iq4_xs", 4}, {"iq3_s", 3.25}, {"iq2_xxs", 1.9}}
	if os.Getenv("GGML_WGPU_E2E_TYPES") == "all" {
		models = append(models, model{"tq1_0", 1.5}, model{"tq2_0", 1.95}, model{"nvfp4", 4.25}, model{"q1_0", 1.05}, model{"q2_0", 2.1})
	}
	if os.Getenv(allIQEnv) != "" {
		models = append(models, []model{{"iq3_xxs", 2.9}, {"iq2_s", 2.4}, {"iq2_xs", 2.2}, {"iq1_m", 1.6}, {"iq1_s", 1.4}}...)
	}
	for _, c := range models {
		typ := c.typ
		t.Run(typ, func(t *testing.T) {
			model := filepath.Join(t.TempDir(), typ+".gguf")
			run(t, root, mk, "-t", tiny, "-o", model, "--type", typ, "--embd", "256", "--layers", "2",
				"--heads", "8", "--kv-heads", "4", "--ff", "512", "--ctx", "256")
			nmse, log := compareLogits(t, root, exe, libDir, model, 32000, "offloaded 3/3 layers to GPU")
			// llama keeps a weight on the CPU when supports_op refuses its probe: the output
			// matrix must be on WGPU0.
			m := regexp.MustCompile(`WGPU0 model buffer size =\s*([0-9.]+) MiB`).FindStringSubmatch(log)
			require.NotNil(t, m, "no WGPU0 model buffer in the log")
			mib, err := strconv.ParseFloat(m[1], 64)
			require.NoError(t, err)
			require.Greater(t, mib, c.minMiB, "the quantized weights must be placed on WGPU0")
			t.Logf("%s llama (embd 256, 2 layers), 32000 logits: NMSE %.3g (threshold 2e-3), %.2f MiB of weights on WGPU0", typ, nmse, mib)
		})
	}
}

// compareLogits runs a prompt through model on the CPU backend and on WGPU0 (whose log
// must contain offloaded), requires n finite logits, a whole-model NMSE under 2e-3 and the
// same greedy next token, and returns the NMSE and WGPU0's log.
func compareLogits(t *testing.T, root, exe, libDir, model string, n int, offloaded string, extra ...string) (float64, string) {
	t.Helper()
	prompt := "The quick brown fox jumps over the lazy dog because"
	args := append([]string{"-L", libDir, "-m", model, "-p", prompt, "--logits"}, extra...)
	cpuOut, _ := run(t, root, exe, append(args, "-d", "CPU")...)
	gpuOut, gpuLog := run(t, root, exe, append(args, "-d", "WGPU0")...)
	require.Contains(t, gpuLog, offloaded, "the model's layers must run on WGPU0")
	require.Contains(t, gpuLog, "WGPU0 model buffer size")

	cpu, gpu := parseLogits(t, cpuOut), parseLogits(t, gpuOut)
	require.Len(t, cpu, n)
	require.Len(t, gpu, len(cpu))
	var num, den float64
	for i := range cpu {
		require.False(t, math.IsNaN(gpu[i]) || math.IsInf(gpu[i], 0), "logit %d is %v", i, gpu[i])
		d := cpu[i] - gpu[i]
		num += d * d
		den += cpu[i] * cpu[i]
	}
	nmse := num / den
	require.Less(t, nmse, 2e-3)
	require.Equal(t, argmax(cpu), argmax(gpu), "greedy next token differs")
	return nmse, gpuLog
}

// TestTinyLlamaGenerates generates text greedily through llama.cpp's decode loop on WGPU0
// (whose decode graphs come back unchanged, so they run from the backend's plan cache)
// and on the CPU backend: the texts must agree.
func TestTinyLlamaGenerates(t *testing.T) {
	root := repoRoot(t)
	model := tinyModel(t, root)
	exe, libDir := buildGenerate(t, root)
	args := []string{"-L", libDir, "-m", model, "-p", "Once upon a time", "-n", "24"}
	cpu, _ := run(t, root, exe, append(args, "-d", "CPU")...)
	t.Setenv("GGML_WGPU_PROFILE", "1")
	gpu, log := run(t, root, exe, append(args, "-d", "WGPU0")...)
	require.True(t, strings.HasPrefix(gpu, "Once upon a time"))
	require.Greater(t, len(gpu), len("Once upon a time\n"), "no tokens generated")
	require.Equal(t, cpu, gpu, "greedy generation differs from the CPU backend")
	require.Contains(t, log, "tokens generated")
	require.NotContains(t, log, "graph_compute on WGPU0", "the backend reported a failed graph")
	require.Regexp(t, `WGPU0 profile: \d+ graphs \([1-9]\d* reused\)`, log, "decode graphs must be reused")
	// The memory the library holds beyond ggml's buffers: at least the parameter arena,
	// under 64 MiB.
	m := regexp.MustCompile(`WGPU0 profile: .*own memory ([0-9.]+) MiB`).FindStringSubmatch(log)
	require.NotNil(t, m, "the profile reports the library's own memory")
	own, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	t.Logf("the library's own memory: %.2f MiB", own)
	require.Greater(t, own, 0.0)
	require.Less(t, own, 64.0)
	// The GPU's time per graph from timestamps around each submission's pass (lavapipe has
	// timestamp queries): busy within the span from the first pass to the last, both > 0.
	g := regexp.MustCompile(`WGPU0 GPU ([0-9.]+) µs/graph busy in its passes, ([0-9.]+) µs/graph from`).FindStringSubmatch(log)
	require.NotNil(t, g, "the profile reports the GPU's time per graph")
	busy, err := strconv.ParseFloat(g[1], 64)
	require.NoError(t, err)
	span, err := strconv.ParseFloat(g[2], 64)
	require.NoError(t, err)
	t.Logf("GPU per graph: %.1f µs busy, %.1f µs span", busy, span)
	require.Greater(t, busy, 0.0)
	require.LessOrEqual(t, busy, span*1.0001)
	// and how the graphs' busy times spread (the GPU's clocks rise over the first ones)
	sp := regexp.MustCompile(`busy per graph: median ([0-9.]+) µs, first ([0-9.]+), largest ([0-9.]+), over (\d+) graphs`).FindStringSubmatch(log)
	require.NotNil(t, sp, "the profile reports the graphs' median GPU time")
	med, err := strconv.ParseFloat(sp[1], 64)
	require.NoError(t, err)
	largest, err := strconv.ParseFloat(sp[3], 64)
	require.NoError(t, err)
	require.Greater(t, med, 0.0)
	require.LessOrEqual(t, med, largest)
	// and how long the GPU idled between graphs (the host's share of a token)
	idle := regexp.MustCompile(`GPU idle between graphs: median ([0-9.]+) µs, mean ([0-9.]+), over (\d+) gaps`).FindStringSubmatch(log)
	require.NotNil(t, idle, "the profile reports the GPU's idle time between graphs")
	gaps, err := strconv.Atoi(idle[3])
	require.NoError(t, err)
	sps, err := strconv.Atoi(sp[4])
	require.NoError(t, err)
	require.Equal(t, sps-1, gaps, "a gap before every graph but the first")
	idleMed, err := strconv.ParseFloat(idle[1], 64)
	require.NoError(t, err)
	require.Greater(t, idleMed, 0.0, "the host's work between graphs takes time")
	t.Logf("GPU idle between graphs: median %.1f µs", idleMed)
	// Where the CPU's time of a graph goes around it: the first submission returns before
	// the last, and the GPU's times are read back after both.
	c := regexp.MustCompile(`reused graph's compute to its first submission ([0-9.]+) µs/graph \(the submission's call ([0-9.]+)\), to its last ([0-9.]+), to the GPU's times read back ([0-9.]+)`).FindStringSubmatch(log)
	require.NotNil(t, c, "the profile reports the CPU's time around the GPU's")
	var host [4]float64
	for i := range host {
		host[i], err = strconv.ParseFloat(c[i+1], 64)
		require.NoError(t, err)
	}
	t.Logf("CPU per graph: first submission %.1f µs (its call %.1f), last %.1f µs, read back %.1f µs", host[0], host[1], host[2], host[3])
	require.Greater(t, host[0], 0.0)
	require.Greater(t, host[1], 0.0)
	require.LessOrEqual(t, host[1], host[0], "the call is part of the time to the first submission")
	require.LessOrEqual(t, host[0], host[2])
	require.Less(t, host[2], host[3])
	// The part of a reused graph's compute spent finding it among the cached ones.
	f := regexp.MustCompile(`reused graphs ([0-9.]+)([µmn]?s)/graph, ([0-9.]+)([µmn]?s) of it finding the graph`).FindStringSubmatch(log)
	require.NotNil(t, f, "the profile reports the time spent finding the cached graph")
	t.Logf("reused graphs' compute %s%s, finding the graph %s%s", f[1], f[2], f[3], f[4])
	// The waits for the GPU, and the poll that saw each one's work done.
	w := regexp.MustCompile(`WGPU0 waits for the GPU \(.*\): ([0-9]+), ([0-9.]+) polls a wait, ([0-9.]+)([µmn]?s) a wait, of which ([0-9.]+)([µmn]?s) in the poll that saw the work done`).FindStringSubmatch(log)
	require.NotNil(t, w, "the profile reports the waits for the GPU")
	waits, err := strconv.Atoi(w[1])
	require.NoError(t, err)
	require.Greater(t, waits, 0)
	t.Logf("waits for the GPU: %s, %s polls a wait, %s%s a wait, %s%s in the poll that saw the work done", w[1], w[2], w[3], w[4], w[5], w[6])
	// The host's own time between graphs.
	require.Regexp(t, `WGPU0 host between graphs [0-9.]+[µmn]?s/graph \(the device.s buffer reads, which wait for the GPU first: [0-9.]+[µmn]?s/graph; its buffer writes: [0-9.]+[µmn]?s/graph\)`, log)
	// llama reads its logits after every graph: from the output read ahead.
	ra := regexp.MustCompile(`reads served from outputs read ahead: ([0-9]+) of ([0-9]+)`).FindStringSubmatch(log)
	require.NotNil(t, ra, "the profile reports the reads served from outputs read ahead")
	taken, err := strconv.Atoi(ra[1])
	require.NoError(t, err)
	t.Logf("reads served from outputs read ahead: %s of %s", ra[1], ra[2])
	require.Greater(t, taken, 0)
	// The fusions the tiny llama's decode takes.
	require.Regexp(t, `WGPU0 fusions in the graphs planned: .*add\+norm\+mul [1-9]`, log)
	// Decode graphs recorded ahead in one command buffer after their first part, as on a
	// GPU (CPU drivers default to command buffers of GGML_WGPU_BATCH): the same text.
	t.Setenv("GGML_WGPU_PROFILE", "")
	t.Setenv("GGML_WGPU_RECORD_BATCH", "100000")
	one, _ := run(t, root, exe, append(args, "-d", "WGPU0")...)
	require.Equal(t, cpu, one, "greedy generation with one-pass recordings differs from the CPU backend")
}
