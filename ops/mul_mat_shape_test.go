package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// TestMatVecRowsQ4: a one-column product of fewer than 4096 rows takes one row per
// workgroup, two for Q4_0 and Q4_1 weights (unless Limits.MatVecRows says otherwise).
func TestMatVecRowsQ4(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, SwarOff: true}
	rows := func(ty tensor.Type, m int64, l *Limits) string {
		n := node(tensor.OpMulMat, f32(m, 1), nil, contiguous(ty, 2048, m), f32(2048, 1))
		ds, err := Lower(n, l)
		require.NoError(t, err)
		require.Len(t, ds, 1)
		require.Equal(t, "mul_mat_vec8", ds[0].Spec.Kernel)
		return ds[0].Spec.Defines["ROWS"]
	}
	for _, ty := range []tensor.Type{tensor.Q4_0, tensor.Q4_1} {
		require.Equal(t, "2", rows(ty, 2048, l), ty.String())
	}
	for _, ty := range []tensor.Type{tensor.Q4_K, tensor.Q8_0, tensor.F16} {
		require.Equal(t, "1", rows(ty, 2048, l), ty.String())
	}
	require.Equal(t, "2", rows(tensor.Q4_K, 8192, l), "from 4096 rows: the shape's two")
	over := *l
	over.MatVecRows = 1
	require.Equal(t, "1", rows(tensor.Q4_0, 2048, &over), "the override wins")
}

// TestMatVecTwo: the vectorised mat-vec takes two chunks of a row a loop turn (TWO) for
// one matrix read eight elements at a time, in matVecColsShape's 4 rows by 32 invocations
// (5 columns and more, 4096 rows and more), with rows of matVecTwoMinK elements and more.
func TestMatVecTwo(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535}
	two := func(ty tensor.Type, m, k, n int64, l *Limits) string {
		ds, err := Lower(node(tensor.OpMulMat, f32(m, n), nil, contiguous(ty, k, m), f32(k, n)), l)
		require.NoError(t, err)
		require.Len(t, ds, 1)
		require.Equal(t, "mul_mat_vec8", ds[0].Spec.Kernel)
		return ds[0].Spec.Defines["TWO"]
	}
	require.Equal(t, "1", two(tensor.F16, 4096, 4096, 8, l))
	require.Equal(t, "1", two(tensor.F32, 14336, 4096, 5, l))
	require.Equal(t, "0", two(tensor.F16, 4096, 4096, 4, l), "fewer columns")
	require.Equal(t, "0", two(tensor.F16, 2048, 8192, 8, l), "fewer rows")
	require.Equal(t, "0", two(tensor.F16, 4096, 2048, 8, l), "shorter rows")
	require.Equal(t, "0", two(tensor.Q4_0, 4096, 4096, 8, &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, SwarOff: true}), "weights by units")
	over := *l
	over.MatVecRows = 4
	require.Equal(t, "0", two(tensor.F16, 4096, 4096, 8, &over), "a shape of the overrides")
}
