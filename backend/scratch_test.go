package backend

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// TestScratchSize: at least minScratch, doubling within ops.ScratchBudget, exactly the
// request beyond it, and the request even where it passes a binding.
func TestScratchSize(t *testing.T) {
	const mib = 1 << 20
	require.Equal(t, uint64(minScratch), scratchSize(0, 100, 1<<30))
	require.Equal(t, uint64(2*mib), scratchSize(mib, mib+mib/2, 1<<30), "doubled")
	require.Equal(t, uint64(24*mib), scratchSize(2*mib, 24*mib, 1<<30), "the request beyond double")
	require.Equal(t, uint64(ops.ScratchBudget), scratchSize(32*mib, 40*mib, 1<<30), "doubling stops at the budget")
	require.Equal(t, uint64(60*mib), scratchSize(40*mib, 60*mib, 1<<30), "a request beyond the budget: exactly")
	require.Equal(t, uint64(3*mib), scratchSize(mib, 3*mib, 2*mib), "past a binding: the request")
	require.Equal(t, uint64(4*mib), scratchSize(2*mib, 3*mib, 4*mib), "doubling within a binding")
}

// mulMatGraph is a MUL_MAT of random F32 operands (m x k weights, n columns) in one device
// buffer, with the product's expected result.
type mulMatGraph struct {
	buf  *Buffer
	dst  *tensor.Tensor
	want []float64
	m, n int64
}

func newMulMatGraph(t *testing.T, d *Device, m, n, k int64, seed int64) *mulMatGraph {
	t.Helper()
	w, x, dst := f32Node(k, m), f32Node(k, n), f32Node(m, n)
	buf, err := d.Alloc(4 * uint64(k*m+k*n+m*n))
	require.NoError(t, err)
	t.Cleanup(buf.Free)
	at := buf.Base()
	for _, tn := range []*tensor.Tensor{w, x, dst} {
		tn.Loc = tensor.Loc{Buffer: buf.ID, Addr: at}
		at += tn.Extent()
	}
	dst.Op, dst.Name, dst.Src[0], dst.Src[1] = tensor.OpMulMat, "mm", w, x
	dst.Flags |= tensor.FlagCompute
	rng := rand.New(rand.NewSource(seed))
	wv, xv := make([]float32, k*m), make([]float32, k*n)
	for i := range wv {
		wv[i] = rng.Float32()*2 - 1
	}
	for i := range xv {
		xv[i] = rng.Float32()*2 - 1
	}
	require.NoError(t, buf.Write(0, f32Bytes(wv)))
	require.NoError(t, buf.Write(w.Extent(), f32Bytes(xv)))
	g := &mulMatGraph{buf: buf, dst: dst, want: make([]float64, m*n), m: m, n: n}
	for j := range n {
		for i := range m {
			var s float64
			for l := range k {
				s += float64(wv[i*k+l]) * float64(xv[j*k+l])
			}
			g.want[j*m+i] = s
		}
	}
	return g
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// compute clears the result, runs the graph on b (snapshot names it) and checks the result.
func (g *mulMatGraph) compute(t *testing.T, b *Backend, snapshot string) {
	t.Helper()
	off := g.dst.Loc.Addr - g.buf.Base()
	require.NoError(t, g.buf.Memset(off, g.dst.Extent(), 0))
	require.NoError(t, b.Compute([]byte(snapshot), func() []*tensor.Tensor { return []*tensor.Tensor{g.dst} }))
	require.NoError(t, b.Synchronize())
	got := make([]byte, g.dst.Extent())
	require.NoError(t, g.buf.Read(off, got))
	for i, w := range g.want {
		v := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:]))
		require.InDelta(t, w, v, 1e-3*(1+math.Abs(w)), "%s: element %d", snapshot, i)
	}
}

// TestScratchReleasedOnGrowth runs split-K products (their partial sums in scratch
// memory) on two backends of one device: when a larger product grows the scratch buffer,
// the one it replaces is released at once (the device's own memory grows by the
// difference only), and the graphs compiled on it, cached in either backend, are compiled
// again and still compute right; a stale graph is refused by run.
func TestScratchReleasedOnGrowth(t *testing.T) {
	d := newDevice(firstDevice(t).Index, firstDevice(t).adapter) // a device of its own: fresh scratch memory
	_, err := d.open()
	require.NoError(t, err)
	t.Cleanup(func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.exe.Close()
		d.gpu.Close()
	})
	small := newMulMatGraph(t, d, 128, 128, 1024, 1) // partial sums of 256 KiB
	large := newMulMatGraph(t, d, 128, 256, 4096, 2) // 2 MiB
	b1, err := NewBackend(d)
	require.NoError(t, err)
	b2, err := NewBackend(d)
	require.NoError(t, err)

	small.compute(t, b1, "small")
	first := d.scratch.buf
	require.NotNil(t, first, "split-K binds scratch memory")
	gen := d.scratch.gen.Load()
	require.Equal(t, gen, b1.plans[0].scratchGen)
	small.compute(t, b2, "small")
	small.compute(t, b1, "small")
	require.Equal(t, 1, b1.Stats().Reused, "the same scratch buffer: reused")
	require.Same(t, first, d.scratch.buf)
	stale := b1.plans[0]
	own := d.OwnMemory()

	large.compute(t, b2, "large")
	require.NotSame(t, first, d.scratch.buf, "grown")
	require.GreaterOrEqual(t, d.scratch.buf.Size, uint64(2<<20))
	require.False(t, first.Alive(), "the replaced buffer is released")
	require.Equal(t, gen+1, d.scratch.gen.Load())
	require.Equal(t, own+d.scratch.buf.Size-first.Size, d.OwnMemory(), "own memory grows by the difference")
	require.ErrorIs(t, d.run(stale, nil, 0), errScratchMoved, "a stale graph does not run")

	for _, b := range []*Backend{b1, b2} {
		reused := b.Stats().Reused
		small.compute(t, b, "small")
		require.Equal(t, reused, b.Stats().Reused, "compiled again on the new scratch buffer")
		require.Equal(t, gen+1, b.plans[0].scratchGen)
		small.compute(t, b, "small")
		require.Equal(t, reused+1, b.Stats().Reused)
	}
	require.LessOrEqual(t, len(b1.plans), planCacheSize)
	for _, c := range b1.plans {
		require.NotSame(t, stale, c, "the stale graph left the cache")
	}
	large.compute(t, b1, "large")
	require.Equal(t, gen+1, d.scratch.gen.Load(), "no growth for what fits")
}

// TestComputeMatching checks that a graph a cached plan matches runs without building
// its snapshot, and that one no plan matches builds it once, in memory reused graph after
// graph.
func TestComputeMatching(t *testing.T) {
	d := firstDevice(t)
	b, err := NewBackend(d)
	require.NoError(t, err)
	defer b.Close()
	g := newMulMatGraph(t, d, 8, 2, 16, 1)
	nodes := func() []*tensor.Tensor { return []*tensor.Tensor{g.dst} }
	builds := 0
	build := func(snap string) func([]byte) []byte {
		return func(buf []byte) []byte {
			builds++
			require.Empty(t, buf)
			return append(buf, snap...)
		}
	}
	never := func([]byte) bool { return false }
	require.NoError(t, b.ComputeMatching(never, build("first"), nodes))
	require.Equal(t, 1, builds)
	mem := &b.snap[0]
	is := func(snap string) func([]byte) bool { return func(c []byte) bool { return string(c) == snap } }
	require.NoError(t, b.ComputeMatching(is("first"), build("unused"), nodes))
	require.Equal(t, 1, builds, "a cached graph is matched in place")
	require.Equal(t, 1, b.stats.Reused)
	require.NoError(t, b.ComputeMatching(never, build("other"), nodes))
	require.Equal(t, 2, builds)
	require.Same(t, mem, &b.snap[0], "no new memory for a snapshot that fits")
	require.NoError(t, b.Synchronize())
}
