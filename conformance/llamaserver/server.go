// Package llamaserver runs llama.cpp's own llama-server (built by scripts/llama/build.sh)
// on one ggml device and talks to it over loopback: the demo's client and the
// concurrent-request test share it.
package llamaserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// CPU is the device name that keeps the whole model on ggml's CPU backend.
const CPU = "CPU"

// Options say how to start llama-server.
type Options struct {
	// BinDir is the folder holding llama-server (ProgramsDir finds the default one).
	BinDir string
	// Model is the GGUF file to serve.
	Model string
	// Device is the ggml device running every layer: "WGPU0", or CPU.
	Device string
	// BackendPath is libggml-wgpu.so, loaded through GGML_BACKEND_PATH (not for CPU).
	BackendPath string
	// Parallel is the number of slots (-np); 0 leaves llama-server's default.
	Parallel int
	// Context is the context size (-c) shared by the slots; 0 leaves the default.
	Context int
	// Extra are further llama-server arguments.
	Extra []string
	// Env are further environment variables (KEY=value).
	Env []string
	// StartTimeout bounds the wait for the model to load (default 3 minutes).
	StartTimeout time.Duration
}

// Server is a running llama-server.
type Server struct {
	// URL is the server's base address, http://127.0.0.1:PORT.
	URL string

	cmd    *exec.Cmd
	log    *syncBuffer
	done   chan struct{}
	err    error
	client *http.Client
}

// ProgramsDir returns the folder where scripts/llama/build.sh puts llama.cpp's programs,
// for the repository at root.
func ProgramsDir(root string) string {
	return filepath.Join(root, ".cache", "llama.cpp", "build", "bin")
}

// Args returns llama-server's arguments for o on the given port.
func (o Options) Args(port int) []string {
	// Verbosity 4: llama.cpp's model-loading lines (device, offloaded layers, buffers).
	args := []string{"-m", o.Model, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "-lv", "4"}
	if o.Device == CPU {
		args = append(args, "-dev", "none", "-ngl", "0")
	} else {
		args = append(args, "-dev", o.Device, "-ngl", "999")
	}
	if o.Parallel > 0 {
		args = append(args, "-np", strconv.Itoa(o.Parallel))
	}
	if o.Context > 0 {
		args = append(args, "-c", strconv.Itoa(o.Context))
	}
	return append(args, o.Extra...)
}

// Environ returns the environment of the server: GGML_BACKEND_PATH for our device, and a
// private XDG_RUNTIME_DIR when the caller has none (Vulkan's window-system code complains
// on every start without one).
func (o Options) Environ(runtimeDir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GGML_BACKEND_PATH=") {
			env = append(env, kv)
		}
	}
	if o.Device != CPU && o.BackendPath != "" {
		env = append(env, "GGML_BACKEND_PATH="+o.BackendPath)
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir == "" || !isDir(dir) {
		env = append(env, "XDG_RUNTIME_DIR="+runtimeDir)
	}
	return append(env, o.Env...)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Start launches llama-server and waits until it answers /health with 200 (the model is
// loaded). On failure the error carries the end of the server's log.
func Start(ctx context.Context, o Options) (*Server, error) {
	exe := filepath.Join(o.BinDir, "llama-server")
	if _, err := os.Stat(exe); err != nil {
		return nil, fmt.Errorf("llama-server not built (%s): run scripts/llama/build.sh", exe)
	}
	if _, err := os.Stat(o.Model); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if o.Device == "" {
		return nil, errors.New("llamaserver: no device")
	}
	runtimeDir, err := os.MkdirTemp("", "llama-server-run-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(runtimeDir, 0o700); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{
		URL:    fmt.Sprintf("http://127.0.0.1:%d", port),
		log:    &syncBuffer{},
		done:   make(chan struct{}),
		client: &http.Client{},
	}
	s.cmd = exec.Command(exe, o.Args(port)...)
	s.cmd.Env = o.Environ(runtimeDir)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start llama-server: %w", err)
	}
	go func() {
		s.err = s.cmd.Wait()
		_ = os.RemoveAll(runtimeDir)
		close(s.done)
	}()
	timeout := o.StartTimeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	if err := s.waitHealthy(ctx, timeout); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w\n--- llama-server log (end) ---\n%s", err, tail(s.Log(), 6000))
	}
	return s, nil
}

// waitHealthy polls /health until it answers 200, the process exits or time runs out.
func (s *Server) waitHealthy(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("llama-server exited before serving: %v", s.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		resp, err := s.client.Get(s.URL + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("llama-server not healthy after %v", timeout)
}

// Log returns everything the server printed so far.
func (s *Server) Log() string { return s.log.String() }

// Stop asks the server to quit (SIGINT), then kills it if it has not after 10 seconds.
func (s *Server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// freePort returns a loopback TCP port nobody listens on right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// syncBuffer is a bytes.Buffer safe for the process's writers and our readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
