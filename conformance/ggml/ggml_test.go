package ggml

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
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
	require.Equal(t, "ADD", l.OpName(tensor.OpAdd))
	require.Equal(t, "f16", l.TypeName(tensor.F16))

	ctx := l.Init(1<<20, true)
	require.NotZero(t, ctx)
	defer l.Free(ctx)
	a := l.NewTensor2D(ctx, tensor.F32, 3, 2)
	b := l.NewTensor1D(ctx, tensor.F32, 3)
	out := l.Scale(ctx, l.Add(ctx, a, b), 2)
	require.Equal(t, tensor.OpScale, out.Op())
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
	require.Equal(t, tensor.StatusSuccess, l.GraphCompute(cpu, g))
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

// TestOpParams checks that the bindings with many scalar arguments (ggml_rope_ext and
// ggml_rope_multi: ints and floats split between registers and the stack) pass them where
// ggml expects them, by reading the op params back (docs/ARCHITECTURE.md section 3).
func TestOpParams(t *testing.T) {
	l, err := Open(libDir(t))
	require.NoError(t, err)
	ctx := l.Init(1<<20, true)
	require.NotZero(t, ctx)
	defer l.Free(ctx)
	a := l.NewTensor3D(ctx, tensor.F32, 64, 4, 3)
	pos := l.NewTensor1D(ctx, tensor.I32, 3)
	ff := l.NewTensor1D(ctx, tensor.F32, 16)
	p := RopeExt{NDims: 32, Mode: tensor.RopeNeox, NCtxOrig: 512, FreqBase: 1e6, FreqScale: 0.5,
		ExtFactor: 1, AttnFactor: 1.2, BetaFast: 32, BetaSlow: 1}
	for _, inplace := range []bool{false, true} {
		var r Tensor
		if inplace {
			r = l.RopeExtInplace(ctx, a, pos, ff, p)
			require.Equal(t, a, r.ViewSrc())
		} else {
			r = l.RopeExt(ctx, a, pos, ff, p)
		}
		require.Equal(t, tensor.OpRope, r.Op())
		require.Equal(t, [4]int64{64, 4, 3, 1}, r.Ne())
		require.Equal(t, a, r.Src(0))
		require.Equal(t, pos, r.Src(1))
		require.Equal(t, ff, r.Src(2))
		require.Equal(t, int32(32), r.OpParamI32(1))
		require.Equal(t, int32(tensor.RopeNeox), r.OpParamI32(2))
		require.Equal(t, int32(512), r.OpParamI32(4))
		for i, want := range []float32{1e6, 0.5, 1, 1.2, 32, 1} {
			require.Equal(t, want, r.OpParamF32(5+i), "op_params[%d]", 5+i)
		}
	}
	r := l.RopeInplace(ctx, a, pos, 64, tensor.RopeNormal)
	require.Equal(t, tensor.OpRope, r.Op())
	require.Equal(t, int32(64), r.OpParamI32(1))
	require.Equal(t, float32(10000), r.OpParamF32(5))

	mpos := l.NewTensor1D(ctx, tensor.I32, 12)
	m := l.RopeMulti(ctx, a, mpos, 0, [4]int32{10, 11, 11, 0}, RopeExt{NDims: 64, Mode: tensor.RopeMrope,
		FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1})
	require.Equal(t, tensor.OpRope, m.Op())
	require.Equal(t, int32(tensor.RopeMrope), m.OpParamI32(2))
	for i, want := range []int32{10, 11, 11, 0} {
		require.Equal(t, want, m.OpParamI32(11+i), "section %d", i)
	}

	dst := l.NewTensor2D(ctx, tensor.F16, 16, 10)
	vals := l.NewTensor2D(ctx, tensor.F32, 16, 3)
	rows := l.NewTensor1D(ctx, tensor.I64, 3)
	s := l.SetRows(ctx, dst, vals, rows)
	require.Equal(t, tensor.OpSetRows, s.Op())
	require.Equal(t, tensor.F16, s.Type())
	require.Equal(t, dst, s.ViewSrc())
	require.Equal(t, vals, s.Src(0))
	require.Equal(t, rows, s.Src(1))
	require.Equal(t, dst, s.Src(2))
	require.Equal(t, tensor.OpSin, l.Sin(ctx, vals).Op())
	require.Equal(t, "ROPE", l.OpName(tensor.OpRope))
	require.Equal(t, "SET_ROWS", l.OpName(tensor.OpSetRows))
	require.Equal(t, "q4_0", l.TypeName(tensor.Q4_0))
	require.Equal(t, "i64", l.TypeName(tensor.I64))
}
