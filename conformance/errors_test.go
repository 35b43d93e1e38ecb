package conformance

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The tests below check how the device behaves through ggml's public API at the edges that
// llama.cpp relies on (docs/ARCHITECTURE.md section 3): supports_op must refuse what the library does not
// implement without touching unallocated tensors, a graph the device cannot compute must
// fail cleanly, and the device must describe itself truthfully.

// openDevice opens the suite's environment on WGPU0 of build/libggml-wgpu.so.
func openDevice(t testing.TB) (*Env, *ggml.Lib, ggml.Backend, ggml.Device) {
	t.Helper()
	env := openTestEnv(t)
	l, be := env.L, env.Runner.Test
	return env, l, be, l.BackendDevice(be)
}

// scaleBicubic is ggml_scale_mode's BICUBIC, an UPSCALE the library refuses (its float
// truncations are not reproducible in WGSL: ops/upscale.go): the unsupported node of the
// tests below.
const scaleBicubic = 2

// newCtx returns a no_alloc context freed at the end of the test.
func newCtx(t *testing.T, l *ggml.Lib) ggml.Context {
	t.Helper()
	ctx := l.Init(uintptr(l.TensorOverhead()*64+l.GraphOverhead()+1<<16), true)
	require.NotZero(t, ctx)
	t.Cleanup(func() { l.Free(ctx) })
	return ctx
}

func f32Bytes(v []float32) []byte {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	return raw
}

func f32Values(raw []byte) []float32 {
	v := make([]float32, len(raw)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return v
}

// TestSupportsOpRejects asks WGPU0 about nodes the library does not implement (a MUL_MAT
// with a Q8_K weight, a BICUBIC UPSCALE) whose tensors have no buffer and NULL data, as the scheduler
// and llama's weight placement do before anything is allocated: the answer must be false,
// and the call must not crash. Supported counterparts of the same nodes (F16 and Q4_K
// weights) must be accepted. It then repeats llama's weight probe: a zero-size buffer of
// the device's own type attached to the weight (data still NULL).
func TestSupportsOpRejects(t *testing.T) {
	_, l, _, dev := openDevice(t)
	ctx := newCtx(t, l)

	wq := l.NewTensor2D(ctx, tensor.Q8_K, 256, 16)
	wk := l.NewTensor2D(ctx, tensor.Q4_K, 256, 16)
	wf := l.NewTensor2D(ctx, tensor.F16, 256, 16)
	x := l.NewTensor2D(ctx, tensor.F32, 256, 3)
	mmQ := l.MulMat(ctx, wq, x)
	mmF := l.MulMat(ctx, wf, x)
	mmK := l.MulMat(ctx, wk, x)
	refl := l.Interpolate(ctx, x, 512, 3, 1, 1, scaleBicubic)
	add := l.Add(ctx, x, x)
	for _, tt := range []ggml.Tensor{wq, wf, x, mmQ, refl} {
		require.Zero(t, tt.Buffer(), "tensor %s has a buffer", tt.Name())
		require.Zero(t, tt.Data(), "tensor %s has data", tt.Name())
	}

	require.False(t, l.DevSupportsOp(dev, mmQ), "supports_op(MUL_MAT q8_K x f32) must be false")
	require.False(t, l.DevSupportsOp(dev, refl), "supports_op(UPSCALE bicubic) must be false")
	require.True(t, l.DevSupportsOp(dev, mmF), "supports_op(MUL_MAT f16 x f32) must be true")
	require.True(t, l.DevSupportsOp(dev, mmK), "supports_op(MUL_MAT q4_K x f32) must be true")
	require.True(t, l.DevSupportsOp(dev, add), "supports_op(ADD) must be true")

	// llama's weight probe (llama-model-loader's weight_buft_supported).
	buft := l.DevBufferType(dev)
	require.NotZero(t, buft)
	for _, c := range []struct {
		w, op ggml.Tensor
		want  bool
	}{{wq, mmQ, false}, {wf, mmF, true}, {wk, mmK, true}} {
		buf := l.BuftAllocBuffer(buft, 0)
		require.NotZero(t, buf, "zero-size buffer of %s", l.BuftName(buft))
		c.w.SetBuffer(buf)
		got := l.DevSupportsOp(dev, c.op)
		c.w.SetBuffer(0)
		l.BufferFree(buf)
		require.Equal(t, c.want, got, "supports_op(MUL_MAT %s x f32) with a zero-size %s buffer",
			c.w.Type(), l.BuftName(buft))
	}
}

// TestGraphComputeUnsupported computes graphs with a node the library does not implement
// (a BICUBIC UPSCALE alone, and after a supported ADD), allocated in WGPU0's buffer: the compute must
// return GGML_STATUS_FAILED without taking the process down, and a following supported
// graph on the same backend must still compute correctly.
func TestGraphComputeUnsupported(t *testing.T) {
	_, l, be, _ := openDevice(t)
	const n = 33
	xs := make([]float32, n)
	ys := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i)*0.25 - 4
		ys[i] = float32(i%7) - 3.5
	}

	bad := func(withAdd bool) {
		ctx := newCtx(t, l)
		x := l.NewTensor1D(ctx, tensor.F32, n)
		y := l.NewTensor1D(ctx, tensor.F32, n)
		in := x
		if withAdd {
			in = l.Add(ctx, x, y)
		}
		out := l.Interpolate(ctx, in, 2*n, 1, 1, 1, scaleBicubic)
		g := l.NewGraph(ctx)
		l.BuildForwardExpand(g, out)
		buf := l.AllocCtxTensors(ctx, be)
		require.NotZero(t, buf)
		defer l.BufferFree(buf)
		l.TensorSet(x, f32Bytes(xs), 0)
		l.TensorSet(y, f32Bytes(ys), 0)
		st := l.GraphCompute(be, g)
		require.Equal(t, tensor.StatusFailed, st, "graph_compute of UPSCALE bicubic (after ADD: %v) on %s", withAdd, l.BackendName(be))
		l.Synchronize(be)
	}
	bad(false)
	bad(true)

	ctx := newCtx(t, l)
	x := l.NewTensor1D(ctx, tensor.F32, n)
	y := l.NewTensor1D(ctx, tensor.F32, n)
	out := l.Scale(ctx, l.Add(ctx, x, y), 0.5)
	g := l.NewGraph(ctx)
	l.BuildForwardExpand(g, out)
	buf := l.AllocCtxTensors(ctx, be)
	require.NotZero(t, buf)
	defer l.BufferFree(buf)
	l.TensorSet(x, f32Bytes(xs), 0)
	l.TensorSet(y, f32Bytes(ys), 0)
	require.Equal(t, tensor.StatusSuccess, l.GraphCompute(be, g), "supported graph after a failed one")
	l.Synchronize(be)
	raw := make([]byte, 4*n)
	l.TensorGet(out, raw, 0)
	got := f32Values(raw)
	for i := range xs {
		require.Equal(t, (xs[i]+ys[i])*0.5, got[i], "element %d", i)
	}
}

// TestDeviceProperties checks what WGPU0 says about itself: a GPU device of the "WGPU"
// registry with nonzero memory, whose buffer type refuses an impossible allocation by
// returning NULL (instead of aborting).
func TestDeviceProperties(t *testing.T) {
	_, l, _, dev := openDevice(t)
	require.Equal(t, ggml.DevTypeGPU, l.DevType(dev), "device type")
	reg := l.DevBackendReg(dev)
	require.NotZero(t, reg)
	require.Equal(t, "WGPU", l.RegName(reg), "registry name")
	free, total := l.DevMemory(dev)
	require.NotZero(t, total, "ggml_backend_dev_memory total")
	require.LessOrEqual(t, free, total, "free memory above total")

	buft := l.DevBufferType(dev)
	require.NotZero(t, buft)
	require.Zero(t, l.BuftAllocBuffer(buft, 1<<50), "ggml_backend_buft_alloc_buffer(1<<50) must return NULL")
	// The buffer type still works afterwards.
	buf := l.BuftAllocBuffer(buft, 1<<20)
	require.NotZero(t, buf)
	require.GreaterOrEqual(t, l.BufferSize(buf), uint64(1<<20))
	l.BufferFree(buf)
}
