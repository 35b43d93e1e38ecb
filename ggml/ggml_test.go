package ggml_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/ggml"
	"github.com/stretchr/testify/require"
)

// The libraries of the repository: .cache/ggml/lib (scripts/setup.sh) and
// build/libggml-wgpu.so (scripts/build.sh).
var (
	libDir  = filepath.Join("..", ".cache", "ggml", "lib")
	wgpuLib = filepath.Join("..", "build", "libggml-wgpu.so")
)

func open(t *testing.T) *ggml.Library {
	t.Helper()
	for _, p := range []string{libDir, wgpuLib} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%v: run scripts/setup.sh and scripts/build.sh first", err)
		}
	}
	lib, err := ggml.Open(ggml.Options{LibDir: libDir, Backends: []string{wgpuLib}})
	require.NoError(t, err)
	return lib
}

func backend(t *testing.T, lib *ggml.Library, name string) *ggml.Backend {
	t.Helper()
	b, err := lib.NewBackend(name)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func context(t *testing.T, lib *ggml.Library, n int) *ggml.Context {
	t.Helper()
	c, err := lib.NewContext(n)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func tensor(t *testing.T, c *ggml.Context, typ ggml.Type, ne ...int64) *ggml.Tensor {
	t.Helper()
	x, err := c.NewTensor(typ, ne...)
	require.NoError(t, err)
	return x
}

func TestOpenErrors(t *testing.T) {
	t.Setenv("GGML_LIB_DIR", "")
	_, err := ggml.Open(ggml.Options{})
	require.ErrorIs(t, err, ggml.ErrLibrary)
	_, err = ggml.Open(ggml.Options{LibDir: t.TempDir()})
	require.ErrorIs(t, err, ggml.ErrLibrary)
	open(t)
	_, err = ggml.Open(ggml.Options{LibDir: libDir, Backends: []string{filepath.Join(t.TempDir(), "libnone.so")}})
	require.ErrorIs(t, err, ggml.ErrLibrary)
}

func TestDevices(t *testing.T) {
	lib := open(t)
	names := map[string]bool{}
	for _, d := range lib.Devices() {
		names[d.Name] = true
	}
	require.True(t, names["CPU"] && names["WGPU0"], "devices: %v", lib.Devices())
	for _, name := range []string{"NOPE0", "", "WGPU\x000"} {
		_, err := lib.NewBackend(name)
		require.ErrorIs(t, err, ggml.ErrUnknownDevice, name)
	}
	b := backend(t, lib, "wgpu0") // case-insensitive, as ggml compares
	require.Equal(t, "WGPU0", b.Device().Name)
	require.Equal(t, ggml.DeviceGPU, b.Device().Type)
}

func TestShapeAndTypeErrors(t *testing.T) {
	lib := open(t)
	c := context(t, lib, 32)
	a := tensor(t, c, ggml.F32, 4, 3)
	b := tensor(t, c, ggml.F32, 3, 4)
	idx := tensor(t, c, ggml.I32, 2)
	_, err := c.Add(a, b)
	require.ErrorIs(t, err, ggml.ErrShape)
	_, err = c.MulMat(a, b)
	require.ErrorIs(t, err, ggml.ErrShape)
	_, err = c.MulMat(idx, idx)
	require.ErrorIs(t, err, ggml.ErrType)
	_, err = c.Rope(a, idx, ggml.RopeParams{NDims: 4})
	require.ErrorIs(t, err, ggml.ErrShape)
	_, err = c.GetRows(a, tensor(t, c, ggml.I32, 2, 2))
	require.ErrorIs(t, err, ggml.ErrShape)
	_, err = c.Reshape(a, 5, 2)
	require.ErrorIs(t, err, ggml.ErrShape)
	_, err = c.Permute(a, [4]int{0, 0, 1, 2})
	require.ErrorIs(t, err, ggml.ErrShape)
	_, err = c.RMSNorm(a, float32(math.NaN()))
	require.ErrorIs(t, err, ggml.ErrShape)
	tr, err := c.Transpose(a)
	require.NoError(t, err)
	_, err = c.MulMat(tr, tr)
	require.ErrorIs(t, err, ggml.ErrShape)
	_, err = c.SoftMaxMasked(a, b, 1)
	require.ErrorIs(t, err, ggml.ErrShape)
	for _, ne := range [][]int64{{}, {1, 2, 3, 4, 5}, {-1}, {33}, {math.MaxInt64 / 2, 4}} {
		_, err = c.NewTensor(ggml.Q8_0, ne...)
		require.ErrorIs(t, err, ggml.ErrShape, "%v", ne)
	}
	_, err = c.NewTensor(ggml.Type(999), 4)
	require.ErrorIs(t, err, ggml.ErrType)
	_, err = a.SetName(string(make([]byte, 64)))
	require.ErrorIs(t, err, ggml.ErrShape)

	other := context(t, lib, 4)
	_, err = c.Add(a, tensor(t, other, ggml.F32, 4, 3))
	require.ErrorIs(t, err, ggml.ErrContext)
	small := context(t, lib, 2)
	tensor(t, small, ggml.F32, 1)
	tensor(t, small, ggml.F32, 1)
	_, err = small.NewTensor(ggml.F32, 1)
	require.ErrorIs(t, err, ggml.ErrContext, "a full context is an error, not ggml's abort")
	_, err = lib.NewContext(0)
	require.ErrorIs(t, err, ggml.ErrContext)
}

func TestAllocationAndTransferErrors(t *testing.T) {
	lib := open(t)
	cpu := backend(t, lib, "CPU")
	dev := backend(t, lib, "WGPU0")
	c := context(t, lib, 8)
	a := tensor(t, c, ggml.F32, 4)
	idx := tensor(t, c, ggml.I32, 2)
	rows := tensor(t, c, ggml.F32, 4, 3)
	got, err := c.GetRows(rows, idx)
	require.NoError(t, err)
	g, err := c.NewGraph(got)
	require.NoError(t, err)
	require.ErrorIs(t, a.SetFloat32(make([]float32, 4)), ggml.ErrAlloc, "no memory before Allocate")
	require.ErrorIs(t, dev.Compute(g), ggml.ErrAlloc)
	require.NoError(t, c.Allocate(cpu))
	require.ErrorIs(t, c.Allocate(cpu), ggml.ErrAlloc)
	_, err = c.NewTensor(ggml.F32, 1)
	require.ErrorIs(t, err, ggml.ErrContext, "tensors after Allocate would have no memory")
	require.ErrorIs(t, a.SetFloat32(make([]float32, 3)), ggml.ErrShape)
	require.ErrorIs(t, a.SetInt32(make([]int32, 4)), ggml.ErrType)
	require.ErrorIs(t, a.SetBytes(make([]byte, 3)), ggml.ErrShape)
	require.ErrorIs(t, dev.Compute(g), ggml.ErrAlloc, "allocated on CPU, computed on WGPU0")
	require.NoError(t, rows.SetFloat32(make([]float32, 12)))
	require.NoError(t, idx.SetInt32([]int32{0, 3}))
	require.ErrorIs(t, cpu.Compute(g), ggml.ErrShape, "an index out of range is an error, not the CPU backend's abort")
	require.NoError(t, idx.SetInt32([]int32{0, 2}))
	require.NoError(t, cpu.Compute(g))
}

func TestClosedAndNil(t *testing.T) {
	lib := open(t)
	b, err := lib.NewBackend("CPU")
	require.NoError(t, err)
	c, err := lib.NewContext(4)
	require.NoError(t, err)
	a := tensor(t, c, ggml.F32, 4)
	s, err := c.Scale(a, 2)
	require.NoError(t, err)
	g, err := c.NewGraph(s)
	require.NoError(t, err)
	require.NoError(t, c.Allocate(b))
	require.NoError(t, b.Close())
	require.ErrorIs(t, b.Close(), ggml.ErrClosed)
	require.ErrorIs(t, b.Compute(g), ggml.ErrClosed)
	require.Equal(t, "", b.Name())
	require.NoError(t, c.Close())
	require.ErrorIs(t, c.Close(), ggml.ErrClosed)
	_, err = c.NewTensor(ggml.F32, 1)
	require.ErrorIs(t, err, ggml.ErrClosed)
	require.ErrorIs(t, a.SetFloat32(make([]float32, 4)), ggml.ErrClosed)
	_, err = s.Float32()
	require.ErrorIs(t, err, ggml.ErrClosed)
	require.Equal(t, 0, g.Nodes())

	var nilT *ggml.Tensor
	var nilC *ggml.Context
	var nilB *ggml.Backend
	c2 := context(t, lib, 4)
	_, err = c2.Add(nilT, nilT)
	require.ErrorIs(t, err, ggml.ErrNil)
	_, err = nilC.NewTensor(ggml.F32, 1)
	require.ErrorIs(t, err, ggml.ErrNil)
	require.ErrorIs(t, nilB.Compute(nil), ggml.ErrNil)
	require.ErrorIs(t, nilT.SetFloat32(nil), ggml.ErrNil)
	_, err = c2.NewGraph(nilT)
	require.ErrorIs(t, err, ggml.ErrNil)
	require.False(t, nilB.Supports(nilT))
}

// TestComputeMatchesCPU computes a small graph of every op of the package on WGPU0 and on
// the CPU and compares the results.
func TestComputeMatchesCPU(t *testing.T) {
	lib := open(t)
	var results [][]float32
	for _, device := range []string{"WGPU0", "CPU"} {
		b := backend(t, lib, device)
		c := context(t, lib, 40)
		x := tensor(t, c, ggml.F32, 16, 6)
		w := tensor(t, c, ggml.F16, 16, 8)
		pos := tensor(t, c, ggml.I32, 6)
		embd := tensor(t, c, ggml.F32, 8, 5)
		idx := tensor(t, c, ggml.I32, 6)
		var errs []error
		must := func(t *ggml.Tensor, err error) *ggml.Tensor { errs = append(errs, err); return t }
		h := must(c.MulMat(w, must(c.Norm(x, 1e-5))))                         // [8, 6]
		h = must(c.Div(must(c.Sub(h, must(c.GELU(h)))), must(c.Scale(h, 4)))) // element-wise
		r := must(c.Rope(must(c.Reshape(must(c.Mul(h, h)), 4, 2, 6)), pos, ggml.RopeParams{NDims: 4, Mode: ggml.RopeNeox}))
		r = must(c.Cont(must(c.Permute(r, [4]int{1, 0, 2, 3}))))
		out := must(c.Add(must(c.SoftMax(must(c.Reshape(r, 8, 6)))), must(c.GetRows(embd, idx))))
		require.NoError(t, errors.Join(errs...))
		g, err := c.NewGraph(out)
		require.NoError(t, err)
		require.NoError(t, c.Allocate(b))
		xs, ws := make([]float32, 96), make([]float32, 128)
		for i := range xs {
			xs[i] = float32(math.Sin(float64(i)))
		}
		for i := range ws {
			ws[i] = float32(math.Cos(float64(i) * 0.7))
		}
		require.NoError(t, x.SetFloat32(xs))
		require.NoError(t, w.SetFloat32(ws))
		require.NoError(t, pos.SetInt32([]int32{0, 1, 2, 3, 4, 5}))
		require.NoError(t, idx.SetInt32([]int32{4, 0, 2, 2, 1, 3}))
		require.NoError(t, embd.SetFloat32(xs[:40]))
		require.True(t, b.Supports(out))
		require.NoError(t, b.Compute(g))
		v, err := out.Float32()
		require.NoError(t, err)
		results = append(results, v)
	}
	require.Len(t, results[0], len(results[1]))
	for i := range results[1] {
		require.InDelta(t, results[1][i], results[0][i], 1e-3, "element %d", i)
	}
}
