// Command yzma generates text with hybridgroup/yzma, the Go ecosystem's llama.cpp binding
// over purego (no cgo), on a device of ours: ggml loads libggml-wgpu.so through
// GGML_BACKEND_PATH when yzma registers the backends, and the model's layers go to the
// named device (WGPU0 by default). It prints the text, the tokens and the tokens per
// second. yzma v1.27.0 binds the C API of the pinned llama.cpp release (see README.md,
// "Go").
//
// Its own module keeps yzma's dependencies out of the library's. From the repository root:
//
//	(cd examples/yzma && CGO_ENABLED=0 go build -o ../../build/yzma-generate .)
//	GGML_BACKEND_PATH=$PWD/build/libggml-wgpu.so build/yzma-generate [-m model.gguf] [-p prompt] [-n 16]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"github.com/hybridgroup/yzma/pkg/llama"
	"modernc.org/libc"
)

func main() {
	model := flag.String("m", "../shared/models/llama-2-tiny-random.gguf", "GGUF model")
	prompt := flag.String("p", "Once upon a time", "prompt")
	n := flag.Int("n", 16, "tokens to generate")
	device := flag.String("device", "WGPU0", "device for the model's layers")
	libDir := flag.String("lib", envOr("GGML_LIB_DIR", ".cache/ggml/lib"), "folder of libllama, libggml, libggml-base and libggml-cpu-*")
	flag.Parse()
	if err := run(*model, *prompt, *n, *device, *libDir); err != nil {
		fmt.Fprintln(os.Stderr, "yzma:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(modelPath, prompt string, n int, device, libDir string) error {
	if n < 1 {
		return fmt.Errorf("-n %d: at least one token", n)
	}
	if _, err := os.Stat(modelPath); err != nil {
		return fmt.Errorf("model: %w (pass -m)", err)
	}
	if os.Getenv("GGML_BACKEND_PATH") == "" {
		return errors.New("set GGML_BACKEND_PATH to the path of libggml-wgpu.so")
	}
	dir, cleanup, err := yzmaLibDir(libDir)
	if err != nil {
		return err
	}
	defer cleanup()
	if err := llama.Load(dir); err != nil {
		return fmt.Errorf("yzma: %w", err)
	}
	llama.Init() // llama_backend_init, then ggml_backend_load_all_from_path: CPU and GGML_BACKEND_PATH
	defer llama.Close()

	dev := llama.GGMLBackendDeviceByName(device)
	if dev == 0 {
		var names []string
		for i := uint64(0); i < llama.GGMLBackendDeviceCount(); i++ {
			names = append(names, llama.GGMLBackendDeviceName(llama.GGMLBackendDeviceGet(i)))
		}
		return fmt.Errorf("no device %q (devices: %s)", device, strings.Join(names, ", "))
	}
	// The NULL-terminated device list is read by the model load: C memory, not Go memory.
	tls := libc.NewTLS()
	defer tls.Close()
	devs := libc.Xcalloc(tls, 2, 8)
	if devs == 0 {
		return errors.New("out of C memory")
	}
	defer libc.Xfree(tls, devs)
	*(*uintptr)(at(devs)) = uintptr(dev)
	mp := llama.ModelDefaultParams()
	mp.Devices, mp.NGpuLayers = devs, 999

	model, err := llama.ModelLoadFromFile(modelPath, mp)
	if err != nil {
		return err
	}
	defer llama.ModelFree(model)
	vocab := llama.ModelGetVocab(model)
	tokens := llama.Tokenize(vocab, prompt, true, false)
	if len(tokens) == 0 {
		return fmt.Errorf("no tokens for %q", prompt)
	}
	cp := llama.ContextDefaultParams()
	cp.NCtx, cp.NBatch = uint32(len(tokens)+n+8), uint32(len(tokens))
	cp.NThreads, cp.NThreadsBatch = 2, 2
	ctx, err := llama.InitFromModel(model, cp)
	if err != nil {
		return err
	}
	defer llama.Free(ctx)
	sampler := llama.SamplerChainInit(llama.SamplerChainDefaultParams())
	defer llama.SamplerFree(sampler)
	llama.SamplerChainAdd(sampler, llama.SamplerInitGreedy())

	fmt.Printf("yzma: %d prompt tokens, device %s (%s)\n", len(tokens), device, llama.GGMLBackendDeviceDescription(dev))
	var text strings.Builder
	text.WriteString(prompt)
	var generated []llama.Token
	batch := llama.BatchGetOne(tokens)
	start := time.Now()
	for len(generated) < n {
		if rc, err := llama.Decode(ctx, batch); err != nil || rc != 0 {
			return fmt.Errorf("llama_decode returned %d: %v", rc, err)
		}
		tok := llama.SamplerSample(sampler, ctx, -1)
		if llama.VocabIsEOG(vocab, tok) {
			break
		}
		generated = append(generated, tok)
		buf := make([]byte, 64)
		if k := llama.TokenToPiece(vocab, tok, buf, 0, false); k > 0 {
			text.Write(buf[:k])
		}
		batch = llama.BatchGetOne([]llama.Token{tok})
	}
	elapsed := time.Since(start)
	fmt.Println(text.String())
	fmt.Printf("tokens: %v\n", generated)
	fmt.Printf("%d tokens in %v (%.1f tokens/s, prompt included) on %s\n", len(generated), elapsed.Round(time.Millisecond),
		float64(len(generated))/elapsed.Seconds(), device)
	if len(generated) == 0 {
		return errors.New("no token generated")
	}
	return nil
}

// yzmaLibDir returns a folder where yzma finds the libraries under the names it loads
// (libllama.so, libggml.so, libggml-base.so): the npm package names two of them
// lib*.v0.5.0.so, so a temporary folder of links is made when needed.
func yzmaLibDir(dir string) (string, func(), error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	if _, err := os.Stat(filepath.Join(abs, "libllama.so")); err == nil {
		return abs, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "yzma-lib")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	entries, err := os.ReadDir(abs)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".so") {
			continue
		}
		links := []string{name}
		if short := strings.Replace(name, ".v0.5.0.so", ".so", 1); short != name {
			links = append(links, short)
		}
		for _, l := range links {
			if err := os.Symlink(filepath.Join(abs, name), filepath.Join(tmp, l)); err != nil {
				cleanup()
				return "", nil, err
			}
		}
	}
	return tmp, cleanup, nil
}

// at converts a C address into an unsafe.Pointer without tripping go vet's uintptr check.
func at(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}
