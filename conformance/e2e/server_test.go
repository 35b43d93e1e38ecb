package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/llamaserver"
	"github.com/stretchr/testify/require"
)

// serverMarginLimit is the CPU's top-2 log-probability margin (equal to the logit margin)
// under which WGPU0 may pick the other token: rounding alone may flip so close a call.
const serverMarginLimit = 1e-2

// serverPrompts are the clients' messages, one request each.
var serverPrompts = []string{
	"Once upon a time",
	"Tell me a story about a dragon and a king.",
	"What is the color of the sea?",
	"The quick brown fox jumps over the lazy dog because",
	"Hello! How are you today?",
	"Why do stars shine at night?",
	"Write a song about the forest and the river.",
	"Which device runs this model?",
}

// programsDir returns the folder of llama.cpp's programs, skipping the test (failing
// under CI) when scripts/llama/build.sh has not built them.
func programsDir(t *testing.T, root string) string {
	t.Helper()
	bin := llamaserver.ProgramsDir(root)
	if _, err := os.Stat(filepath.Join(bin, "llama-server")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("llama-server missing under CI (%s): scripts/test.sh builds it with scripts/llama/build.sh", bin)
		}
		t.Skipf("llama.cpp's programs are not built (%s): run scripts/llama/build.sh", bin)
	}
	return bin
}

// serverModel writes a small llama model with the generator's own vocabulary (no
// ../shared needed): grouped-query attention, F16 weights.
func serverModel(t *testing.T, root string) string {
	t.Helper()
	mk, _ := buildHost(t, root, "mkmodel")
	model := filepath.Join(t.TempDir(), "server.gguf")
	run(t, root, mk, "-o", model, "--type", "f16", "--embd", "256", "--layers", "2",
		"--heads", "8", "--kv-heads", "4", "--ff", "512", "--ctx", "2048")
	return model
}

func serverRequest(prompt string) llamaserver.ChatRequest {
	return llamaserver.ChatRequest{
		Messages:    []llamaserver.Message{{Role: "user", Content: prompt}},
		MaxTokens:   24,
		Temperature: 0,
		Seed:        1234,
		Logprobs:    true,
		TopLogprobs: 2,
	}
}

// TestServerConcurrentRequests starts llama.cpp's llama-server with every layer on WGPU0
// and four parallel slots, sends every prompt at once from its own client (greedy sampling),
// and checks each answer against the same request served by llama-server on the CPU
// device: the tokens must agree up to the first place where the CPU's top two candidates
// are closer than serverMarginLimit (after it the two continuations may part).
func TestServerConcurrentRequests(t *testing.T) {
	root := repoRoot(t)
	bin := programsDir(t, root)
	model := serverModel(t, root)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	gpuServer, err := llamaserver.Start(ctx, llamaserver.Options{
		BinDir: bin, Model: model, Device: "WGPU0", Parallel: 4, Context: 2048,
		BackendPath: filepath.Join(root, "build", "libggml-wgpu.so"),
	})
	require.NoError(t, err)
	gpu := make([]*llamaserver.ChatResponse, len(serverPrompts))
	errs := make([]error, len(serverPrompts))
	start := time.Now()
	var wg sync.WaitGroup
	for i, p := range serverPrompts {
		wg.Add(1)
		go func(i int, p string) {
			defer wg.Done()
			gpu[i], errs[i] = gpuServer.Chat(ctx, serverRequest(p))
		}(i, p)
	}
	wg.Wait()
	wall := time.Since(start)
	gpuLog := gpuServer.Log()
	gpuServer.Stop()
	for i, err := range errs {
		require.NoError(t, err, "request %d on WGPU0\n%s", i, tail(gpuLog, 4000))
	}
	require.Contains(t, gpuLog, "offloaded 3/3 layers to GPU", "the model must run on WGPU0")
	require.Regexp(t, `WGPU0 model buffer size`, gpuLog)
	require.NotContains(t, gpuLog, "graph_compute on WGPU0", "the backend reported a failed graph")

	cpuServer, err := llamaserver.Start(ctx, llamaserver.Options{
		BinDir: bin, Model: model, Device: llamaserver.CPU, Parallel: 1, Context: 512,
	})
	require.NoError(t, err)
	defer cpuServer.Stop()

	generated, compared, parted := 0, 0, 0
	var perRequest float64
	for i, p := range serverPrompts {
		want, err := cpuServer.Chat(ctx, serverRequest(p))
		require.NoError(t, err, "request %d on the CPU", i)
		got := gpu[i]
		generated += got.Timings.PredictedN
		perRequest += got.Timings.PredictedPerSecond
		n, diverged, err := compareGreedy(want, got)
		require.NoError(t, err, "request %d (%q)", i, p)
		compared += n
		if diverged {
			parted++
			t.Logf("request %d parts from the CPU's answer at token %d, where the CPU's top-2 margin is under %g", i, n, serverMarginLimit)
		}
	}
	tps := float64(generated) / wall.Seconds()
	t.Logf("llama-server on WGPU0, 4 slots: %d concurrent requests, %d tokens generated in %.2f s "+
		"(%.1f tokens/s together, %.1f tokens/s per request on average); %d tokens identical to the CPU's, "+
		"%d requests parted at a CPU top-2 margin under %g",
		len(serverPrompts), generated, wall.Seconds(), tps, perRequest/float64(len(serverPrompts)), compared, parted, serverMarginLimit)
	require.Greater(t, compared, generated/2, "too few tokens could be compared")
}

// compareGreedy checks got's tokens against want's up to the first difference, which is
// allowed only where want's two most likely tokens were within serverMarginLimit. It
// returns the number of identical tokens, whether the answers parted, and an error for a
// difference the margin does not excuse.
func compareGreedy(want, got *llamaserver.ChatResponse) (same int, parted bool, err error) {
	w, g := want.Tokens(), got.Tokens()
	if len(w) == 0 || len(g) == 0 {
		return 0, false, fmt.Errorf("no tokens with log-probabilities (CPU %d, WGPU0 %d)", len(w), len(g))
	}
	for k := range w {
		if k >= len(g) {
			return k, false, fmt.Errorf("WGPU0 stopped after %d tokens, the CPU after %d", len(g), len(w))
		}
		if w[k].ID == g[k].ID {
			continue
		}
		top := w[k].TopLogprobs
		if len(top) < 2 {
			return k, false, fmt.Errorf("token %d: the CPU reported %d alternatives, want 2", k, len(top))
		}
		if margin := top[0].Logprob - top[1].Logprob; margin >= serverMarginLimit {
			return k, false, fmt.Errorf("token %d: WGPU0 chose %q, the CPU %q with a top-2 margin of %.3g\nCPU:   %q\nWGPU0: %q",
				k, g[k].Token, w[k].Token, margin, want.Content(), got.Content())
		}
		return k, true, nil
	}
	if len(g) != len(w) {
		return len(w), false, fmt.Errorf("WGPU0 generated %d tokens, the CPU %d", len(g), len(w))
	}
	if want.Content() != got.Content() {
		return len(w), false, fmt.Errorf("same tokens, different texts: CPU %q, WGPU0 %q", want.Content(), got.Content())
	}
	return len(w), false, nil
}
