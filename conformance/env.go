package conformance

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
)

// DefaultDevice is the name of the first device of libggml-wgpu.
const DefaultDevice = "WGPU0"

// Config says where the pieces of a suite run are.
type Config struct {
	// LibDir is the directory with libggml-base.so, libggml.v0.5.0.so and libggml-cpu-*.so.
	LibDir string
	// BackendPath is the path of libggml-wgpu.so.
	BackendPath string
	// Device is the device under test (DefaultDevice when empty).
	Device string
	// SelfTest runs a second CPU backend as the device under test instead of loading
	// BackendPath: it validates the harness itself.
	SelfTest bool
}

// Env is a loaded ggml with a reference CPU backend and a backend under test.
type Env struct {
	// L is the ggml library.
	L *ggml.Lib
	// Runner runs cases on the two backends.
	Runner *Runner
	// DeviceName is the name of the device under test.
	DeviceName string
	// Description is the device's description.
	Description string
}

// FindRepoRoot walks up from dir to the directory holding go.mod.
func FindRepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = parent
	}
}

// DefaultConfig returns the configuration of the repository at root: ggml libraries in
// .cache/ggml/lib (scripts/setup.sh) and the library in build/libggml-wgpu.so
// (scripts/build.sh).
func DefaultConfig(root string) Config {
	return Config{
		LibDir:      filepath.Join(root, ".cache", "ggml", "lib"),
		BackendPath: filepath.Join(root, "build", "libggml-wgpu.so"),
		Device:      DefaultDevice,
	}
}

// process-wide state: ggml and the backends are loaded once per process.
var (
	loadedLib *ggml.Lib
	loadedDir string
)

// openLib loads the ggml host libraries from libDir once per process and returns them; a
// later call with another directory fails.
func openLib(libDir string) (*ggml.Lib, error) {
	if loadedLib == nil {
		l, err := ggml.Open(libDir)
		if err != nil {
			return nil, err
		}
		loadedLib, loadedDir = l, libDir
	} else if loadedDir != libDir {
		return nil, fmt.Errorf("ggml already loaded from %s, cannot load from %s", loadedDir, libDir)
	}
	return loadedLib, nil
}

// Open loads ggml (once per process), the CPU backend, and the backend under test.
func Open(cfg Config) (*Env, error) {
	if cfg.Device == "" {
		cfg.Device = DefaultDevice
	}
	l, err := openLib(cfg.LibDir)
	if err != nil {
		return nil, err
	}
	ref, err := l.LoadCPU()
	if err != nil {
		return nil, err
	}
	// One thread: the cases are tiny, and ggml's default of 4 spinning threads on a machine
	// with few cores (CI, and lavapipe wants the cores too) costs orders of magnitude more.
	l.SetNThreads(ref, 1)
	env := &Env{L: l}
	if cfg.SelfTest {
		test := l.InitByType(ggml.DevTypeCPU)
		if test == 0 {
			l.BackendFree(ref)
			return nil, fmt.Errorf("second CPU backend failed")
		}
		l.SetNThreads(test, 1)
		d := l.BackendDevice(test)
		env.Runner = &Runner{L: l, Ref: ref, Test: test}
		env.DeviceName, env.Description = l.DevName(d)+" (self-test)", l.DevDescription(d)
		return env, nil
	}
	test, dev, err := l.LoadDevice(cfg.BackendPath, cfg.Device)
	if err != nil {
		l.BackendFree(ref)
		return nil, err
	}
	env.Runner = &Runner{L: l, Ref: ref, Test: test}
	env.DeviceName, env.Description = l.DevName(dev), l.DevDescription(dev)
	return env, nil
}

// Close frees the two backends (the libraries stay loaded).
func (e *Env) Close() {
	e.L.BackendFree(e.Runner.Test)
	e.L.BackendFree(e.Runner.Ref)
}

// RunAll runs the cases in order, calling each (if not nil) after every case.
func (e *Env) RunAll(cases []*Case, each func(Result)) *Summary {
	results := make([]Result, 0, len(cases))
	for _, c := range cases {
		r := e.Runner.Run(c)
		results = append(results, r)
		if each != nil {
			each(r)
		}
	}
	return Summarize(results)
}
