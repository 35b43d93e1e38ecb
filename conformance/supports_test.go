package conformance

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// supportsChain builds, in a no_alloc context, depth dependent ADDs of 64 floats (a deep
// graph, as the nodes at the end of a model's graph are) followed by MUL_MATs of its last
// sum by a Q8_K weight (which the library refuses) and by an F16 one, and returns the last
// sum and the two products.
func supportsChain(t testing.TB, l *ggml.Lib, depth int) (sum, refused, taken ggml.Tensor) {
	ctx := l.Init(uintptr(l.TensorOverhead()*uint64(depth+8)+1<<16), true)
	require.NotZero(t, ctx)
	t.Cleanup(func() { l.Free(ctx) })
	x := l.NewTensor2D(ctx, tensor.F32, 256, 1)
	sum = x
	for range depth {
		sum = l.Add(ctx, sum, x)
	}
	refused = l.MulMat(ctx, l.NewTensor2D(ctx, tensor.Q8_K, 256, 16), sum)
	taken = l.MulMat(ctx, l.NewTensor2D(ctx, tensor.F16, 256, 16), sum)
	return sum, refused, taken
}

// TestSupportsOpDeepGraph: supports_op decides a node by the node and its sources, however
// many nodes lie above them, as it does for the same node at the top of a graph.
func TestSupportsOpDeepGraph(t *testing.T) {
	_, l, _, dev := openDevice(t)
	for _, depth := range []int{1, 3000} {
		sum, refused, taken := supportsChain(t, l, depth)
		require.True(t, l.DevSupportsOp(dev, sum), "ADD at depth %d", depth)
		require.False(t, l.DevSupportsOp(dev, refused), "MUL_MAT q8_K x f32 after %d ADDs", depth)
		require.True(t, l.DevSupportsOp(dev, taken), "MUL_MAT f16 x f32 after %d ADDs", depth)
	}
}

// BenchmarkSupportsOpDeep reports what one supports_op call costs at the end of a chain of
// 3,000 nodes: ggml asks it for every node each time it splits a graph anew. It read every
// node above the one asked about, which made a 16-layer hybrid's graph (838 nodes) cost
// ~90 ms of the host's per split on an H200's machine; it now reads the node and two
// levels of sources. go test -run - -bench SupportsOpDeep ./conformance
func BenchmarkSupportsOpDeep(b *testing.B) {
	_, l, _, dev := openDevice(b)
	_, _, taken := supportsChain(b, l, 3000)
	b.ResetTimer()
	for range b.N {
		if !l.DevSupportsOp(dev, taken) {
			b.Fatal("MUL_MAT f16 x f32 refused")
		}
	}
}
