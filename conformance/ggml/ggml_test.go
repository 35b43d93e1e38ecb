package ggml

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// libDir locates .cache/ggml/lib from the repository root above the working directory.
func libDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, ".cache", "ggml", "lib")
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "go.mod not found above the working directory")
		dir = parent
	}
}

// TestCPUSmoke checks the binding end to end on the CPU backend: a small add computed by ggml.
func TestCPUSmoke(t *testing.T) {
	l, err := Open(libDir(t))
	require.NoError(t, err)
	cpu, err := l.LoadCPU()
	require.NoError(t, err)
	defer l.BackendFree(cpu)
	require.Equal(t, "ADD", l.OpName(OpAdd))
	require.Equal(t, "f16", l.TypeName(TypeF16))

	ctx := l.Init(1<<20, true)
	require.NotZero(t, ctx)
	defer l.Free(ctx)
	a := l.NewTensor2D(ctx, TypeF32, 3, 2)
	b := l.NewTensor1D(ctx, TypeF32, 3)
	out := l.Scale(ctx, l.Add(ctx, a, b), 2)
	require.Equal(t, OpScale, out.Op())
	require.Equal(t, [4]int64{3, 2, 1, 1}, out.Ne())
	require.Equal(t, float32(2), out.OpParamF32(0))
	require.Equal(t, a, out.Src(0).Src(0))
	g := l.NewGraph(ctx)
	l.BuildForwardExpand(g, out)
	require.Equal(t, 2, l.GraphNNodes(g))
	buf := l.AllocCtxTensors(ctx, cpu)
	require.NotZero(t, buf)
	defer l.BufferFree(buf)
	put := func(t Tensor, v ...float32) {
		raw := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
		}
		l.TensorSet(t, raw, 0)
	}
	put(a, 1, 2, 3, 4, 5, 6)
	put(b, 10, 20, 30)
	require.Equal(t, StatusSuccess, l.GraphCompute(cpu, g))
	raw := make([]byte, 24)
	l.TensorGet(out, raw, 0)
	var got []float32
	for i := 0; i < 6; i++ {
		got = append(got, math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
	}
	require.Equal(t, []float32{22, 44, 66, 28, 50, 72}, got)
	h := l.FP32ToFP16([]float32{1, -2.5, 0.333})
	require.Equal(t, uint16(0x3c00), h[0])
	back := l.FP16ToFP32(h)
	require.InDelta(t, 0.333, back[2], 1e-3)
}
