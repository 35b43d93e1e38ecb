package ggml

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/ebitengine/purego"
)

// Options says where the libraries are.
type Options struct {
	// LibDir is the folder holding libggml-base.so and libggml.so (or libggml.v0.5.0.so,
	// as the npm package @node-llama-cpp/linux-x64 names it) and the CPU backend's
	// libggml-cpu-*.so variants. Empty means the GGML_LIB_DIR environment variable.
	LibDir string
	// Backends lists backend library files to load with ggml_backend_load, for example
	// the path of libggml-wgpu.so. A library named by GGML_BACKEND_PATH is loaded too.
	Backends []string
}

// Library is the loaded ggml host libraries with the functions this package calls.
// Its methods are safe for concurrent use.
type Library struct {
	dir        string
	base, core uintptr
	fn         functions
}

var (
	// loadMu guards loaded: ggml's backend registry is global to the process, and a
	// backend library registered twice would show its devices twice.
	loadMu sync.Mutex
	loaded = map[string]bool{}
)

// Open loads libggml-base and libggml from opts.LibDir (RTLD_GLOBAL, as backend libraries
// expect), binds the functions the package uses, registers the CPU backend of that folder
// and the backend libraries of opts.Backends and GGML_BACKEND_PATH. A missing file or
// symbol is an error wrapping ErrLibrary.
func Open(opts Options) (*Library, error) {
	dir := opts.LibDir
	if dir == "" {
		dir = os.Getenv("GGML_LIB_DIR")
	}
	if dir == "" {
		return nil, fmt.Errorf("%w: no library folder (set Options.LibDir or GGML_LIB_DIR)", ErrLibrary)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLibrary, err)
	}
	l := &Library{dir: abs}
	basePath, err := firstFile(abs, "libggml-base.so")
	if err != nil {
		return nil, err
	}
	corePath, err := firstFile(abs, "libggml.so", "libggml.v0.5.0.so")
	if err != nil {
		return nil, err
	}
	if l.base, err = purego.Dlopen(basePath, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
		return nil, fmt.Errorf("%w: dlopen %s: %v", ErrLibrary, basePath, err)
	}
	if l.core, err = purego.Dlopen(corePath, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
		return nil, fmt.Errorf("%w: dlopen %s: %v", ErrLibrary, corePath, err)
	}
	if err := l.bind(); err != nil {
		return nil, err
	}
	if err := l.loadBackends(opts.Backends); err != nil {
		return nil, err
	}
	return l, nil
}

// Dir returns the folder the host libraries were loaded from.
func (l *Library) Dir() string { return l.dir }

// firstFile returns the first of names that exists in dir.
func firstFile(dir string, names ...string) (string, error) {
	for _, n := range names {
		p := filepath.Join(dir, n)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: none of %v in %s", ErrLibrary, names, dir)
}

// loadBackends registers the CPU backend variants of the library folder (and the file
// GGML_BACKEND_PATH names) once per process, then each backend file not loaded before.
func (l *Library) loadBackends(paths []string) error {
	loadMu.Lock()
	defer loadMu.Unlock()
	if !loaded["dir:"+l.dir] {
		loaded["dir:"+l.dir] = true
		if env := os.Getenv("GGML_BACKEND_PATH"); env != "" {
			if real, err := filepath.EvalSymlinks(env); err == nil {
				loaded[real] = true // ggml_backend_load_all_from_path loads it
			}
		}
		l.fn.loadAllFromPath(l.dir)
	}
	for _, p := range paths {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return fmt.Errorf("%w: backend library: %v", ErrLibrary, err)
		}
		if real, err = filepath.Abs(real); err != nil {
			return fmt.Errorf("%w: backend library: %v", ErrLibrary, err)
		}
		if loaded[real] {
			continue
		}
		if l.fn.backendLoad(real) == 0 {
			return fmt.Errorf("%w: ggml_backend_load(%s) failed (see ggml's log)", ErrLibrary, real)
		}
		loaded[real] = true
	}
	return nil
}

// bind resolves every function of the table in libggml, then libggml-base.
func (l *Library) bind() error {
	var missing []string
	for _, s := range l.fn.symbols() {
		sym, err := purego.Dlsym(l.core, s.name)
		if err != nil || sym == 0 {
			sym, err = purego.Dlsym(l.base, s.name)
		}
		if err != nil || sym == 0 {
			missing = append(missing, s.name)
			continue
		}
		purego.RegisterFunc(s.fptr, sym)
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: symbols not found in %s: %v", ErrLibrary, l.dir, missing)
	}
	return nil
}
