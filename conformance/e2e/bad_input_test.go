package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// smallModel writes a small F16 llama model with the built-in vocabulary and returns its
// path and vocabulary size.
func smallModel(t *testing.T, root string) (path string, vocab int) {
	t.Helper()
	mk, _ := buildHost(t, root, "mkmodel")
	path = filepath.Join(t.TempDir(), "f16.gguf")
	out, errOut := run(t, root, mk, "-o", path, "--type", "f16", "--embd", "256", "--layers", "2",
		"--heads", "4", "--kv-heads", "2", "--ff", "512", "--ctx", "256")
	m := regexp.MustCompile(`vocab (\d+)`).FindStringSubmatch(out + errOut)
	require.NotNil(t, m, "mkmodel printed no vocabulary size: %s", out+errOut)
	vocab, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return path, vocab
}

// runFail runs exe with GGML_BACKEND_PATH set, requires it to fail, and returns its stderr.
func runFail(t *testing.T, root, exe string, args ...string) string {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "GGML_BACKEND_PATH="+filepath.Join(root, "build", "libggml-wgpu.so"))
	var e bytes.Buffer
	cmd.Stderr = &e
	require.Error(t, cmd.Run(), "%s %v succeeded", exe, args)
	return e.String()
}

// TestBadModelThenGood loads a truncated or corrupt GGUF onto WGPU0 through llama.cpp (the
// host must report the real reason), then a good model in the same process, whose logits
// must match the CPU backend's: a failed load leaves the library usable.
func TestBadModelThenGood(t *testing.T) {
	root := repoRoot(t)
	exe, libDir := buildGenerate(t, root)
	model, vocab := smallModel(t, root)
	good, err := os.ReadFile(model)
	require.NoError(t, err)
	dir := t.TempDir()
	bad := []struct {
		name   string
		bytes  []byte
		reason string
	}{
		{"truncated-data", good[:len(good)/2], `tensor '[^']+' data is not within the file bounds, model is corrupted or incomplete`},
		{"truncated-header", good[:100], `gguf_init_from_reader: failed to read`},
		{"bad-magic", append([]byte("XXXX"), good[4:]...), `invalid magic characters: 'XXXX', expected 'GGUF'`},
	}
	for i, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			path := filepath.Join(dir, b.name+".gguf")
			require.NoError(t, os.WriteFile(path, b.bytes, 0o644))
			var log string
			if i == 0 {
				// The whole comparison once: the good model after the bad one, on both devices.
				_, log = compareLogits(t, root, exe, libDir, model, vocab, "offloaded 3/3 layers to GPU", "-t", "1", "--load-first", path)
			} else {
				out, stderr := run(t, root, exe, "-L", libDir, "-m", model, "-t", "1", "--logits", "--load-first", path, "-d", "WGPU0")
				require.Len(t, parseLogits(t, out), vocab)
				log = stderr
			}
			require.Regexp(t, b.reason, log, "the host must report why the file cannot be loaded")
			require.Contains(t, log, "cannot load "+path+" first; going on")
			require.NotContains(t, log, "ggml-wgpu: internal error")
		})
	}
}

// TestModelDoesNotFit caps the device's memory (GGML_WGPU_MEMORY_MB=2) below the model's
// weights: loading fails with a message naming the buffer's size and what is free.
func TestModelDoesNotFit(t *testing.T) {
	root := repoRoot(t)
	exe, libDir := buildGenerate(t, root)
	model, _ := smallModel(t, root)
	t.Setenv("GGML_WGPU_MEMORY_MB", "2")
	log := runFail(t, root, exe, "-L", libDir, "-m", model, "-t", "1", "--logits", "-d", "WGPU0")
	require.Regexp(t, `WGPU0: a buffer of [0-9.]+ MiB does not fit: [0-9.]+ MiB of the 2\.00 MiB that GGML_WGPU_MEMORY_MB allows are free`, log)
	require.Contains(t, log, "generate: cannot load")
}

// TestDevicesMatchNone selects adapters that do not exist (GGML_WGPU_DEVICES): the library
// says so in the host's log instead of only being "not supported".
func TestDevicesMatchNone(t *testing.T) {
	root := repoRoot(t)
	exe, libDir := buildGenerate(t, root)
	model, _ := smallModel(t, root)
	t.Setenv("GGML_WGPU_DEVICES", "no-such-adapter")
	log := runFail(t, root, exe, "-L", libDir, "-m", model, "--logits", "-d", "WGPU0")
	require.Contains(t, log, `GGML_WGPU_DEVICES entry "no-such-adapter" matches no WebGPU adapter (adapters: 0 "`)
	require.Contains(t, log, "the backend has no device")
}
