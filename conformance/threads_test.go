package conformance

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// envInt reads a positive integer from the environment variable name, or returns def.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return v
}

// threadCases picks a spread of the suite's cases for the concurrency tests: from every op
// family (required cases only) the first, middle and last case, which differ in shape,
// layout and kernel.
func threadCases() []*Case {
	byOp := map[string][]*Case{}
	var order []string
	for _, c := range Cases() {
		if c.Optional {
			continue
		}
		if _, ok := byOp[c.Op]; !ok {
			order = append(order, c.Op)
		}
		byOp[c.Op] = append(byOp[c.Op], c)
	}
	var out []*Case
	for _, op := range order {
		cs := byOp[op]
		seen := map[int]bool{}
		for _, i := range []int{0, len(cs) / 2, len(cs) - 1} {
			if !seen[i] {
				seen[i] = true
				out = append(out, cs[i])
			}
		}
	}
	return out
}

// TestConcurrentBackends runs N goroutines (GGML_WGPU_THREADS, default 4), each with its
// own backend on WGPU0 from ggml_backend_dev_init, computing a different share of a spread
// of the suite's graphs at the same time, GGML_WGPU_THREAD_ROUNDS times (default 3). Every
// result must be bit-identical to the same graph computed serially on one backend before.
// Meanwhile another goroutine writes and reads back a buffer of yet another backend with
// tensor_set/tensor_get, which must stay byte-exact. It runs in a child process: a data
// race in the library that corrupts wgpu-native state would abort the process.
func TestConcurrentBackends(t *testing.T) {
	isolated(t, func(t *testing.T) {
		n := envInt(t, "GGML_WGPU_THREADS", 4)
		rounds := envInt(t, "GGML_WGPU_THREAD_ROUNDS", 3)
		env, l, _, dev := openDevice(t)
		cases := threadCases()

		// The serial reference, on a backend of its own.
		serialBe := l.DevInit(dev)
		if serialBe == 0 {
			t.Fatal("ggml_backend_dev_init failed")
		}
		want := serialResults(t, env, serialBe, cases)
		l.BackendFree(serialBe)

		backends := make([]ggml.Backend, n)
		for i := range backends {
			if backends[i] = l.DevInit(dev); backends[i] == 0 {
				t.Fatalf("ggml_backend_dev_init #%d failed", i)
			}
		}
		defer func() {
			for _, be := range backends {
				l.BackendFree(be)
			}
		}()

		var computed, transfers atomic.Int64
		done := make(chan struct{})
		var io sync.WaitGroup
		io.Add(1)
		go func() {
			defer io.Done()
			if err := transferLoop(l, dev, done, &transfers); err != nil {
				t.Errorf("set/get while other backends compute: %v", err)
			}
		}()

		var wg sync.WaitGroup
		for w := 0; w < n; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					// Each worker takes every n-th case, starting at its own index and
					// rotating by round, so different graphs run at the same time.
					for i := (w + r) % n; i < len(cases); i += n {
						got, unsupported, err := env.Runner.eval(cases[i], backends[w], false)
						if unsupported != "" || err != nil {
							t.Errorf("worker %d round %d %s: %s %v", w, r, cases[i].Name, unsupported, err)
							return
						}
						if !equalF32(got, want[i]) {
							ma, at := MaxAbsDiff(want[i], got)
							t.Errorf("worker %d round %d %s: result differs from the serial run (max |diff| %g at %d)", w, r, cases[i].Name, ma, at)
						}
						computed.Add(1)
					}
				}
			}(w)
		}
		wg.Wait()
		close(done)
		io.Wait()
		t.Logf("%d backends x %d rounds: %d graph computations over %d distinct graphs, identical to the serial run; %d set/get round trips on another backend's buffer meanwhile",
			n, rounds, computed.Load(), len(cases), transfers.Load())
		if transfers.Load() == 0 {
			t.Error("no set/get round trip ran while the backends computed")
		}
	})
}

// transferLoop allocates a context of tensors on a backend of its own and, until done is
// closed (and at least once), writes random bytes at random offsets into them and reads
// them back; it returns the first mismatch.
func transferLoop(l *ggml.Lib, dev ggml.Device, done <-chan struct{}, count *atomic.Int64) error {
	be := l.DevInit(dev)
	if be == 0 {
		return fmt.Errorf("ggml_backend_dev_init failed")
	}
	defer l.BackendFree(be)
	ctx := l.Init(uintptr(l.TensorOverhead()*8+1<<12), true)
	if ctx == 0 {
		return fmt.Errorf("ggml_init failed")
	}
	defer l.Free(ctx)
	ts := []ggml.Tensor{
		l.NewTensor1D(ctx, tensor.I8, 4099),
		l.NewTensor2D(ctx, f32, 333, 7),
		l.NewTensor1D(ctx, f16, 1<<16),
	}
	buf := l.AllocCtxTensors(ctx, be)
	if buf == 0 {
		return fmt.Errorf("ggml_backend_alloc_ctx_tensors failed")
	}
	defer l.BufferFree(buf)
	r := newRand(7)
	for i := 0; ; i++ {
		select {
		case <-done:
			if i > 0 {
				return nil
			}
		default:
		}
		x := ts[i%len(ts)]
		size := l.NBytes(x)
		off := uint64(r.Int63n(int64(size)))
		n := 1 + uint64(r.Int63n(int64(size-off)))
		data := pattern(int(n), byte(i))
		l.TensorSet(x, data, off)
		got := make([]byte, n)
		l.TensorGet(x, got, off)
		if !bytes.Equal(got, data) {
			return fmt.Errorf("round trip %d: %d bytes at offset %d of %d-byte tensor differ", i, n, off, size)
		}
		count.Add(1)
	}
}

// TestConcurrentInitFree has N goroutines (GGML_WGPU_THREADS, default 4) each create a
// backend on WGPU0, compute a graph, allocate and free a buffer of the device's type and
// free the backend, GGML_WGPU_THREAD_ROUNDS*2 times (default 6), all at once: results
// must match the serial run, and every allocation must succeed. In a child process.
func TestConcurrentInitFree(t *testing.T) {
	isolated(t, func(t *testing.T) {
		n := envInt(t, "GGML_WGPU_THREADS", 4)
		rounds := 2 * envInt(t, "GGML_WGPU_THREAD_ROUNDS", 3)
		env, l, be, dev := openDevice(t)
		cases := threadCases()
		want := serialResults(t, env, be, cases)
		buft := l.DevBufferType(dev)
		var cycles atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < n; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					b := l.DevInit(dev)
					if b == 0 {
						t.Errorf("worker %d round %d: ggml_backend_dev_init failed", w, r)
						return
					}
					i := (w*rounds + r) % len(cases)
					got, _, err := env.Runner.eval(cases[i], b, false)
					if err != nil {
						t.Errorf("worker %d round %d %s: %v", w, r, cases[i].Name, err)
					} else if !equalF32(got, want[i]) {
						t.Errorf("worker %d round %d %s: result differs from the serial run", w, r, cases[i].Name)
					}
					buf := l.BuftAllocBuffer(buft, uint64(1+w)<<20)
					if buf == 0 {
						t.Errorf("worker %d round %d: allocating %d MiB failed", w, r, 1+w)
					} else {
						l.BufferFree(buf)
					}
					l.BackendFree(b)
					cycles.Add(1)
				}
			}(w)
		}
		wg.Wait()
		t.Logf("%d goroutines: %d backend init/compute/alloc/free cycles at once", n, cycles.Load())
	})
}

// serialResults computes every case on be, one after the other: the reference the
// concurrent runs must reproduce bit for bit.
func serialResults(t *testing.T, env *Env, be ggml.Backend, cases []*Case) [][]float32 {
	t.Helper()
	want := make([][]float32, len(cases))
	for i, c := range cases {
		out, unsupported, err := env.Runner.eval(c, be, true)
		if unsupported != "" || err != nil {
			t.Fatalf("serial %s: %s %v", c.Name, unsupported, err)
		}
		want[i] = out
	}
	return want
}
