package backend

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// BenchmarkRecordChain reports the CPU time Compute takes to record and submit a cached
// graph of 128 dependent ADDs of 2048 floats (a decode graph's dispatch count), the GPU's
// time left out, and checks the chain's result: go test -run - -bench RecordChain ./backend.
// Most of it is inside wgpu-native (the end of a compute pass, where it records the pass,
// and the submission); on lavapipe the GPU's work competes for the same processors.
func BenchmarkRecordChain(b *testing.B) {
	d := firstDevice(b)
	be, err := NewBackend(d)
	require.NoError(b, err)
	const n, steps = 2048, 128
	buf, err := d.Alloc(4 * n * (steps + 2))
	require.NoError(b, err)
	defer buf.Free()
	at := buf.Base()
	place := func(x *tensor.Tensor) *tensor.Tensor {
		x.Loc = tensor.Loc{Buffer: buf.ID, Addr: at}
		at += x.Extent()
		return x
	}
	x, y := place(f32Node(n)), place(f32Node(n))
	var nodes []*tensor.Tensor
	prev := x
	for range steps {
		s := place(f32Node(n))
		s.Op, s.Src[0], s.Src[1] = tensor.OpAdd, prev, y
		s.Flags |= tensor.FlagCompute
		nodes = append(nodes, s)
		prev = s
	}
	ones := make([]float32, n)
	halves := make([]float32, n)
	for i := range ones {
		ones[i], halves[i] = 1, 0.5
	}
	require.NoError(b, buf.Write(0, f32Bytes(ones)))
	require.NoError(b, buf.Write(4*n, f32Bytes(halves)))
	graph := func() []*tensor.Tensor { return nodes }
	require.NoError(b, be.Compute([]byte("chain"), graph))
	require.NoError(b, be.Synchronize())
	var rec time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		require.NoError(b, be.Compute([]byte("chain"), graph))
		rec += time.Since(start)
		require.NoError(b, be.Synchronize())
	}
	b.ReportMetric(float64(rec.Microseconds())/float64(b.N)/steps, "µs-record/dispatch")
	got := make([]byte, 4*n)
	require.NoError(b, buf.Read(prev.Loc.Addr-buf.Base(), got))
	for i := 0; i < 4*n; i += 4 {
		require.Equal(b, float32(1+0.5*steps), math.Float32frombits(binary.LittleEndian.Uint32(got[i:])), "element %d", i/4)
	}
}
