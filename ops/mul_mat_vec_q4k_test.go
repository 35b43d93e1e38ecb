package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// Single Q4_K products on the quantized column (the integer mat-vec's XQ form) of up to
// q4kWideMaxRows rows take the mat-vec with 16-byte weight loads, where the device's
// storage alignment and the weights' address allow its 16-byte words; the output heads,
// several columns, misaligned weights and Limits.Q4KWideOff keep the integer mat-vec.
func TestQ4KWide(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 16384, StorageAlign: 256}
	mm := func(m, k, n int64, addr uint64) *tensor.Tensor {
		w := contiguous(tensor.Q4_K, k, m)
		w.Loc.Addr = addr
		return node(tensor.OpMulMat, f32(m, n), nil, w, f32(k, n))
	}
	lower := func(n *tensor.Tensor, l *Limits) []Dispatch {
		ds, err := Lower(n, l)
		require.NoError(t, err)
		return ds
	}
	kernels := func(ds []Dispatch) []string {
		var ks []string
		for _, d := range ds {
			ks = append(ks, d.Spec.Kernel)
		}
		return ks
	}
	wide := []string{"mul_mat_vec_q4_act", "mul_mat_vec_q4k"}
	old := []string{"mul_mat_vec_q4_act", "mul_mat_vec_q4"}

	ds := lower(mm(4096, 14336, 1, 4096), l)
	require.Equal(t, wide, kernels(ds), "a down product")
	s := ds[1].Spec
	require.Equal(t, q4kWideWG, s.Workgroup)
	require.Equal(t, "2", s.Defines["ROWS"])
	require.True(t, s.Operands[0].Vec16, "weights read as 16-byte words")
	require.Equal(t, []string{"src0", "xq", "dst"}, []string{s.Operands[0].Name, s.Operands[1].Name, s.Operands[2].Name})
	require.Equal(t, uint32(2048), ds[1].Grid[0]*ds[1].Grid[1]*ds[1].Grid[2], "two rows a workgroup")
	require.Equal(t, wide, kernels(lower(mm(q4kWideMaxRows, 4096, 1, 0), l)), "at the row bound")

	require.Equal(t, old, kernels(lower(mm(q4kWideMaxRows+256, 4096, 1, 0), l)), "beyond it: the output heads")
	require.Equal(t, old, kernels(lower(mm(4096, 4096, 2, 0), l)), "two columns")
	require.Equal(t, old, kernels(lower(mm(4096, 4096, 1, 8), l)), "weights not on 16 bytes")
	for _, align := range []uint32{0, 8} {
		a := *l
		a.StorageAlign = align
		require.Equal(t, old, kernels(lower(mm(4096, 4096, 1, 0), &a)), "storage alignment %d", align)
	}
	off := *l
	off.Q4KWideOff = true
	require.Equal(t, old, kernels(lower(mm(4096, 4096, 1, 0), &off)), "Limits.Q4KWideOff")
	other := node(tensor.OpMulMat, f32(4096, 1), nil, contiguous(tensor.Q4_0, 8192, 4096), f32(8192, 1))
	require.Equal(t, old, kernels(lower(other, l)), "Q4_0")

	cache := newCompiler(t)
	_, err := cache.Pipeline(s)
	require.NoError(t, err, "the kernel compiles")
}
