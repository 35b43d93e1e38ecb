// Command generate runs a GGUF model with llama.cpp's libllama from Go, without cgo: it
// loads the ggml libraries and libggml-wgpu.so with package ggml, libllama with purego,
// tokenizes a prompt, decodes greedily on a device (WGPU0 by default) and prints the text
// and the tokens per second.
//
//	go run ./examples/generate [-m model.gguf] [-p prompt] [-n 32] [-device WGPU0]
package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"time"
	"unsafe"

	"github.com/ggml-wgpu/ggml-wgpu/ggml"
)

func main() {
	model := flag.String("m", "../shared/models/llama-2-tiny-random.gguf", "GGUF model")
	prompt := flag.String("p", "Once upon a time", "prompt")
	n := flag.Int("n", 32, "tokens to generate")
	device := flag.String("device", "WGPU0", "device for the model's layers (CPU: none offloaded)")
	libDir := flag.String("lib", envOr("GGML_LIB_DIR", ".cache/ggml/lib"), "folder of libggml-base, libggml and libllama")
	backend := flag.String("backend", envOr("GGML_WGPU_LIB", "build/libggml-wgpu.so"), "backend library that provides the device")
	flag.Parse()
	if err := run(*model, *prompt, *n, *device, *libDir, *backend); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(modelPath, prompt string, n int, device, libDir, backend string) error {
	if n < 1 {
		return fmt.Errorf("-n %d: at least one token", n)
	}
	if _, err := os.Stat(modelPath); err != nil {
		return fmt.Errorf("model: %w (pass -m)", err)
	}
	// Package ggml loads libggml-base and libggml (the ones libllama links to) and registers
	// the CPU backend and ours in ggml's process-wide registry, where libllama finds them.
	gl, err := ggml.Open(ggml.Options{LibDir: libDir, Backends: []string{backend}})
	if err != nil {
		return err
	}
	ll, err := openLlama(gl.Dir())
	if err != nil {
		return err
	}
	ll.backendInit()
	defer ll.backendFree()

	mp := ll.modelDefaultParams()
	if strings.EqualFold(device, "CPU") {
		mp.nGPULayers = 0
	} else {
		dev, err := gl.DeviceHandle(device)
		if err != nil {
			return err
		}
		devs, err := newCBuffer(2 * 8) // {dev, NULL}: read while the model loads
		if err != nil {
			return err
		}
		defer devs.free()
		devs.uintptrs()[0] = dev
		mp.devices, mp.nGPULayers = devs.ptr, 999
	}
	model := ll.modelLoad(modelPath, mp)
	if model == 0 {
		return fmt.Errorf("llama_model_load_from_file(%s) failed (see the log above)", modelPath)
	}
	defer ll.modelFree(model)
	vocab := ll.modelGetVocab(model)
	nVocab := int(ll.vocabNTokens(vocab))

	tokens, err := tokenize(ll, vocab, prompt)
	if err != nil {
		return err
	}
	cp := ll.contextDefaultParams()
	cp.nCtx = uint32(len(tokens) + n + 8)
	cp.nBatch = uint32(max(len(tokens), 1))
	cp.nThreads, cp.nThreadsBatch = 2, 2
	ctx := ll.initFromModel(model, cp)
	if ctx == 0 {
		return errors.New("llama_init_from_model failed (see the log above)")
	}
	defer ll.free(ctx)

	// The batch points into buf while llama_decode runs: C memory, not Go memory.
	buf, err := newCBuffer(4 * len(tokens))
	if err != nil {
		return err
	}
	defer buf.free()
	copy(buf.int32s(), tokens)

	desc := make([]byte, 128)
	ll.modelDesc(model, unsafe.Pointer(&desc[0]), uintptr(len(desc)))
	fmt.Printf("model %s (%s), %d prompt tokens, device %s\n", modelPath, cString(desc), len(tokens), device)
	start := time.Now()
	if rc := ll.decode(ctx, ll.batchGetOne(buf.ptr, int32(len(tokens)))); rc != 0 {
		return fmt.Errorf("llama_decode of the prompt returned %d", rc)
	}
	promptTime := time.Since(start)
	var text strings.Builder
	text.WriteString(prompt)
	var generated []int32
	start = time.Now()
	for len(generated) < n {
		next := argmax(unsafe.Slice((*float32)(at(ll.getLogitsIth(ctx, -1))), nVocab))
		if ll.vocabIsEOG(vocab, next) {
			break
		}
		generated = append(generated, next)
		text.WriteString(piece(ll, vocab, next))
		buf.int32s()[0] = next
		if rc := ll.decode(ctx, ll.batchGetOne(buf.ptr, 1)); rc != 0 {
			return fmt.Errorf("llama_decode of token %d returned %d", len(generated), rc)
		}
	}
	genTime := time.Since(start)
	fmt.Printf("%s\n", text.String())
	fmt.Printf("tokens: %v\n", generated)
	fmt.Printf("prompt: %d tokens in %v (%.1f tokens/s); generation: %d tokens in %v (%.1f tokens/s) on %s\n",
		len(tokens), promptTime.Round(time.Millisecond), float64(len(tokens))/promptTime.Seconds(),
		len(generated), genTime.Round(time.Millisecond), float64(len(generated))/genTime.Seconds(), device)
	if len(generated) == 0 {
		return errors.New("no token generated (the model ended the text at once)")
	}
	return nil
}

// tokenize returns the prompt's tokens, with the model's start token.
func tokenize(ll *llama, vocab uintptr, prompt string) ([]int32, error) {
	out := make([]int32, len(prompt)+8)
	k := ll.tokenize(vocab, prompt, int32(len(prompt)), unsafe.Pointer(&out[0]), int32(len(out)), true, false)
	if k < 0 {
		out = make([]int32, -k)
		k = ll.tokenize(vocab, prompt, int32(len(prompt)), unsafe.Pointer(&out[0]), int32(len(out)), true, false)
	}
	if k <= 0 {
		return nil, fmt.Errorf("llama_tokenize(%q) returned %d", prompt, k)
	}
	return out[:k], nil
}

// piece returns the text of one token.
func piece(ll *llama, vocab uintptr, tok int32) string {
	b := make([]byte, 64)
	k := ll.tokenToPiece(vocab, tok, unsafe.Pointer(&b[0]), int32(len(b)), 0, false)
	if k < 0 {
		b = make([]byte, -k)
		k = ll.tokenToPiece(vocab, tok, unsafe.Pointer(&b[0]), int32(len(b)), 0, false)
	}
	if k < 0 {
		return ""
	}
	return string(b[:k])
}

func argmax(v []float32) int32 {
	best, bestV := 0, float32(math.Inf(-1))
	for i, x := range v {
		if x > bestV {
			best, bestV = i, x
		}
	}
	return int32(best)
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
