package examples_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// model is the small test model; CI has it, a fresh clone may not.
const model = "../shared/models/llama-2-tiny-random.gguf"

// root is the repository root, where the examples run (their defaults are relative to it).
var root = filepath.Join("..")

// build compiles the package in dir (relative to root) with CGO_ENABLED=0 and returns
// the binary.
func build(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(dir))
	abs, err := filepath.Abs(bin)
	require.NoError(t, err)
	cmd := exec.Command("go", "build", "-o", abs, ".")
	cmd.Dir = filepath.Join(root, dir)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "CGO_ENABLED=0 go build in %s:\n%s", dir, out)
	return abs
}

// run runs the binary in the repository root and returns its standard output.
func run(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, err, "%s %v:\n%s\n%s", filepath.Base(bin), args, stdout.String(), stderr.String())
	return stdout.String()
}

func requireLibraries(t *testing.T) {
	for _, p := range []string{".cache/ggml/lib", "build/libggml-wgpu.so"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Fatalf("%v: run scripts/setup.sh and scripts/build.sh first", err)
		}
	}
}

func TestGraphExample(t *testing.T) {
	requireLibraries(t)
	bin := build(t, "examples/graph")
	out := run(t, bin, nil)
	require.Regexp(t, `max \|WGPU0 - CPU\| = `, out)
	require.Contains(t, out, "OK\n")
	// A device that does not exist is an error and a non-zero exit, not a crash.
	cmd := exec.Command(bin, "-device", "NOPE0")
	cmd.Dir = root
	msg, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(msg), `unknown device: "NOPE0"`)
}

var tokensLine = regexp.MustCompile(`(?m)^tokens: \[[0-9 ]+\]$`)

// TestGenerateExamples decodes the test model greedily from Go on WGPU0 with our libllama
// binding and with yzma, and on the CPU: the three token sequences are the same.
func TestGenerateExamples(t *testing.T) {
	requireLibraries(t)
	if _, err := os.Stat(filepath.Join(root, model)); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the test model %s is missing under CI: %v", model, err)
		}
		t.Skipf("the test model %s is not there (CI has it): %v", model, err)
	}
	gen := build(t, "examples/generate")
	wgpu := run(t, gen, nil, "-n", "6")
	cpu := run(t, gen, nil, "-n", "6", "-device", "CPU")
	require.Regexp(t, `generation: 6 tokens in .* tokens/s\) on WGPU0`, wgpu)
	require.Equal(t, tokensLine.FindString(cpu), tokensLine.FindString(wgpu), "WGPU0:\n%s\nCPU:\n%s", wgpu, cpu)

	backend, err := filepath.Abs(filepath.Join(root, "build", "libggml-wgpu.so"))
	require.NoError(t, err)
	yz := run(t, build(t, "examples/yzma"), []string{"GGML_BACKEND_PATH=" + backend}, "-n", "6")
	require.Regexp(t, `6 tokens in .* on WGPU0`, yz)
	require.Equal(t, tokensLine.FindString(wgpu), tokensLine.FindString(yz), "yzma:\n%s", yz)
	require.NotEmpty(t, tokensLine.FindString(yz))
}
