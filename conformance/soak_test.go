package conformance

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// rssBytes returns the resident set size of this process (from /proc/self/statm).
func rssBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatalf("reading /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		t.Fatalf("/proc/self/statm: %q", b)
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatalf("/proc/self/statm: %v", err)
	}
	return pages * int64(os.Getpagesize())
}

// mibs formats a byte count (possibly negative) in MiB.
func mibs(b int64) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) }

// Tolerances of TestInitFreeCycles after its warm-up: the device's free memory must come
// back to within cycleDevTolerance; the process's resident memory may rise by at most
// cycleRSSTolerance in all (allocator and driver caches settle over the first few dozen
// cycles) and by half that from the first half of the cycles to the second (a leak keeps
// growing: one leaked cycle buffer alone is cycleBufMiB).
const (
	cycleDevTolerance = 1 << 20
	cycleRSSTolerance = 16 << 20
	cycleBufMiB       = 4
	// The warm-up lasts until the RSS grew by at most cycleSettle over the last
	// cycleSettleSpan cycles (at least that many cycles), or cycleMaxWarm cycles.
	cycleSettle     = 1 << 20
	cycleSettleSpan = 50
	cycleMaxWarm    = 400
)

// settled reports whether the last cycleSettleSpan samples grew by at most cycleSettle.
func settled(rss []int64) bool {
	n := len(rss)
	return n > cycleSettleSpan && rss[n-1]-rss[n-1-cycleSettleSpan] <= cycleSettle
}

// TestInitFreeCycles runs GGML_WGPU_CYCLES cycles (default 100) of: a backend created on
// WGPU0 (ggml_backend_dev_init), a 4 MiB buffer of tensors allocated, filled and used by a
// small graph (MUL_MAT, ADD, SOFT_MAX), an extra buffer allocated from the buffer type,
// everything freed again. Each cycle's result must equal the first one's. After a warm-up
// that lasts until the RSS settles (see settled), the device's reported free memory and the process's resident memory
// (sampled after every cycle) must stay flat within tolerances; the figures are logged. It runs in a child process,
// so that its memory is its own.
func TestInitFreeCycles(t *testing.T) {
	isolated(t, func(t *testing.T) {
		cycles := envInt(t, "GGML_WGPU_CYCLES", 100)
		_, l, _, dev := openDevice(t)
		buft := l.DevBufferType(dev)
		var first []float32
		var rss, free, warmRSS []int64
		warm := -1 // cycles of warm-up, known once the RSS settles
		for c := 0; warm < 0 || c < cycles+warm; c++ {
			be := l.DevInit(dev)
			if be == 0 {
				t.Fatalf("cycle %d: ggml_backend_dev_init failed", c)
			}
			got := cycleGraph(t, l, be, c)
			extra := l.BuftAllocBuffer(buft, cycleBufMiB<<20)
			if extra == 0 {
				t.Fatalf("cycle %d: allocating %d MiB failed", c, cycleBufMiB)
			}
			l.BufferFree(extra)
			l.BackendFree(be)
			if first == nil {
				first = got
			} else if !equalF32(got, first) {
				t.Fatalf("cycle %d: the graph's result differs from the first cycle's", c)
			}
			f, _ := l.DevMemory(dev) // in the warm-up too: the first query loads the Vulkan driver again
			runtime.GC()
			if warm < 0 {
				// Drivers grow their own pools over the first cycles (the NVIDIA driver
				// for about a hundred): warm up until the RSS has settled.
				warmRSS = append(warmRSS, rssBytes(t))
				if settled(warmRSS) || c+1 == cycleMaxWarm {
					warm = c + 1
				}
				continue
			}
			rss, free = append(rss, rssBytes(t)), append(free, int64(f))
		}
		_, total := l.DevMemory(dev)
		half := len(rss) / 2
		peak1, peak2 := slices.Max(rss[:half]), slices.Max(rss[half:])
		t.Logf("%d init/alloc/compute/free cycles after %d warm-up cycles", cycles, warm)
		t.Logf("host RSS: after warm-up %s, end %s; peak in the first half %s, in the second half %s (growth %s after warm-up, %s between the halves)",
			mibs(rss[0]), mibs(rss[len(rss)-1]), mibs(peak1), mibs(peak2), mibs(peak2-rss[0]), mibs(peak2-peak1))
		t.Logf("WGPU0 free memory (total %s): after warm-up %s, end %s, lowest %s (drop %s)",
			mibs(int64(total)), mibs(free[0]), mibs(free[len(free)-1]), mibs(slices.Min(free)), mibs(free[0]-slices.Min(free)))
		if d := free[0] - slices.Min(free); d > cycleDevTolerance {
			t.Errorf("WGPU0's free memory dropped by %s over the cycles", mibs(d))
		}
		if d := peak2 - rss[0]; d > cycleRSSTolerance {
			t.Errorf("host RSS grew by %s over the cycles", mibs(d))
		}
		if d := peak2 - peak1; d > cycleRSSTolerance/2 {
			t.Errorf("host RSS still grew by %s from the first half of the cycles to the second", mibs(d))
		}
	})
}

// cycleGraph allocates a graph's tensors in a buffer of be (about 1 MiB), fills
// them deterministically, computes softmax(W x + b) and returns the result.
func cycleGraph(t *testing.T, l *ggml.Lib, be ggml.Backend, cycle int) []float32 {
	t.Helper()
	const k, m, n = 1024, 256, 4 // W: 1 MiB of F32
	ctx := l.Init(uintptr(l.TensorOverhead()*16+l.GraphOverhead()+1<<14), true)
	if ctx == 0 {
		t.Fatal("ggml_init failed")
	}
	defer l.Free(ctx)
	w := l.NewTensor2D(ctx, f32, k, m)
	x := l.NewTensor2D(ctx, f32, k, n)
	b := l.NewTensor2D(ctx, f32, m, 1)
	out := l.SoftMax(ctx, l.Add(ctx, l.MulMat(ctx, w, x), b))
	g := l.NewGraph(ctx)
	l.BuildForwardExpand(g, out)
	buf := l.AllocCtxTensors(ctx, be)
	if buf == 0 {
		t.Fatalf("cycle %d: ggml_backend_alloc_ctx_tensors failed", cycle)
	}
	defer l.BufferFree(buf)
	l.TensorSet(w, f32Bytes(Uniform(-1, 1)(newRand(11), k*m)), 0)
	l.TensorSet(x, f32Bytes(Uniform(-1, 1)(newRand(12), k*n)), 0)
	l.TensorSet(b, f32Bytes(Uniform(-1, 1)(newRand(13), m)), 0)
	if st := l.GraphCompute(be, g); st != tensor.StatusSuccess {
		t.Fatalf("cycle %d: graph_compute returned %d", cycle, st)
	}
	l.Synchronize(be)
	return f32Values(tensorBytes(l, out))
}
