// Command wgpu-chat is the demo's client: it starts llama.cpp's llama-server with a model on
// one device (WGPU0 by default), sends one chat-completion request over loopback, prints the
// answer, the speed and the adapter that ran it, and stops the server.
//
//	wgpu-chat -bin DIR -m model.gguf [-p prompt] [-n tokens] [-d WGPU0|CPU] [-lib libggml-wgpu.so]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/llamaserver"
)

func main() {
	bin := flag.String("bin", "", "folder holding llama-server (scripts/llama/build.sh)")
	model := flag.String("m", "", "GGUF model")
	prompt := flag.String("p", "Once upon a time", "the user's message")
	n := flag.Int("n", 32, "tokens to generate at most")
	device := flag.String("d", "WGPU0", "ggml device running the model (WGPU0, or CPU)")
	lib := flag.String("lib", "", "libggml-wgpu.so (GGML_BACKEND_PATH)")
	verbose := flag.Bool("v", false, "print the whole server log")
	flag.Parse()
	if *bin == "" || *model == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*bin, *model, *prompt, *n, *device, *lib, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(bin, model, prompt string, n int, device, lib string, verbose bool) error {
	ctx := context.Background()
	fmt.Fprintf(os.Stderr, "demo: starting llama-server on %s with %s\n", device, model)
	start := time.Now()
	s, err := llamaserver.Start(ctx, llamaserver.Options{
		BinDir: bin, Model: model, Device: device, BackendPath: lib, Context: 2048,
	})
	if err != nil {
		return err
	}
	defer s.Stop()
	if verbose {
		defer func() { fmt.Fprint(os.Stderr, s.Log()) }()
	}
	if d, desc := s.Adapter(); d != "" {
		fmt.Fprintf(os.Stderr, "demo: model loaded in %.1f s on %s (%s)\n", time.Since(start).Seconds(), d, desc)
	} else {
		fmt.Fprintf(os.Stderr, "demo: model loaded in %.1f s on ggml's CPU backend\n", time.Since(start).Seconds())
	}
	for _, line := range offloadLines(s.Log()) {
		fmt.Fprintln(os.Stderr, "demo:", line)
	}
	fmt.Printf("> %s\n", prompt)
	resp, err := s.Chat(ctx, llamaserver.ChatRequest{
		Messages:    []llamaserver.Message{{Role: "user", Content: prompt}},
		MaxTokens:   n,
		Temperature: 0,
		Seed:        42,
		CachePrompt: true,
	})
	if err != nil {
		return fmt.Errorf("%w\n--- llama-server log (end) ---\n%s", err, tailLines(s.Log(), 30))
	}
	fmt.Println(resp.Content())
	t := resp.Timings
	fmt.Fprintf(os.Stderr, "demo: %d prompt tokens at %.1f tokens/s, %d tokens generated at %.1f tokens/s (finish: %s)\n",
		t.PromptN, float64(t.PromptN)/(t.PromptMS/1000+1e-9), t.PredictedN, t.PredictedPerSecond, resp.Choices[0].FinishReason)
	d, desc := s.Adapter()
	if d == "" {
		d, desc = "CPU", "ggml's CPU backend"
	}
	fmt.Fprintf(os.Stderr, "demo: served by llama-server over loopback on %s: %s\n", d, desc)
	if strings.Contains(s.Log(), "graph_compute on") {
		return fmt.Errorf("the backend reported a failed graph:\n%s", tailLines(s.Log(), 30))
	}
	return nil
}

var offload = regexp.MustCompile(`(offloaded \d+/\d+ layers to GPU|\S+ model buffer size = .*)$`)

// offloadLines returns llama.cpp's lines saying where the weights went.
func offloadLines(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if m := offload.FindString(line); m != "" {
			out = append(out, strings.Join(strings.Fields(m), " "))
		}
	}
	return out
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
