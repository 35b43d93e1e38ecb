package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCHost compiles conformance/host/host.c against the real ggml headers and libraries and
// runs it with GGML_BACKEND_PATH pointing at build/libggml-wgpu.so: a plain C ggml host must
// find WGPU0 through ggml_backend_load_all and compute a small graph that agrees with the CPU.
func TestCHost(t *testing.T) {
	cfg := testConfig(t)
	if _, err := os.Stat(cfg.BackendPath); err != nil {
		t.Fatalf("%s not found: run scripts/build.sh first", cfg.BackendPath)
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatalf("gcc not found (scripts/setup.sh installs it): %v", err)
	}
	root := filepath.Dir(cfg.LibDir) // .cache/ggml
	include := filepath.Join(root, "include")
	src, err := filepath.Abs(filepath.Join("host", "host.c"))
	require.NoError(t, err)

	// libggml is only shipped as libggml.v0.5.0.so: give the linker a libggml.so to find.
	tmp := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(cfg.LibDir, "libggml.v0.5.0.so"), filepath.Join(tmp, "libggml.so")))
	bin := filepath.Join(tmp, "host")
	cc := exec.Command(gcc, "-std=c11", "-O1", "-Wall", "-Wextra", "-o", bin, src,
		"-I", include, "-L", tmp, "-L", cfg.LibDir, "-lggml", "-lggml-base", "-lm",
		"-Wl,-rpath,"+cfg.LibDir)
	out, err := cc.CombinedOutput()
	require.NoError(t, err, "compiling host.c:\n%s", out)
	if len(out) > 0 {
		t.Logf("gcc:\n%s", out)
	}

	run := exec.Command(bin)
	// ggml_backend_load_all looks for libggml-cpu-*.so next to the executable and in the
	// working directory.
	run.Dir = cfg.LibDir
	run.Env = append(os.Environ(), "GGML_BACKEND_PATH="+cfg.BackendPath)
	out, err = run.CombinedOutput()
	t.Logf("host output:\n%s", out)
	require.NoError(t, err, "host exited with an error")
	require.Contains(t, string(out), "WGPU0")
	require.True(t, strings.Contains(string(out), "host: OK"), "host did not report OK")
}
