package ggml

import (
	"math"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// Quantize passes an importance matrix exactly where ggml requires one (ggml would abort
// otherwise), and Dequantize reads blocks back with ggml's own routine.
func TestQuantizeIQ(t *testing.T) {
	l, err := Open(libDir(t))
	require.NoError(t, err)
	need, err := l.RequiresImatrix(tensor.IQ2_XXS)
	require.NoError(t, err)
	require.True(t, need)
	need, err = l.RequiresImatrix(tensor.IQ4_XS)
	require.NoError(t, err)
	require.False(t, need)

	src := make([]float32, 2*256)
	for i := range src {
		src[i] = float32(math.Sin(float64(i) * 0.37))
	}
	for _, typ := range []tensor.Type{tensor.Q8_0, tensor.IQ4_XS, tensor.IQ2_XXS} {
		q, err := l.Quantize(typ, src, 256)
		require.NoError(t, err)
		require.Len(t, q, len(src)/typ.BlockElems()*typ.Size())
		y, err := l.Dequantize(typ, q)
		require.NoError(t, err)
		require.Len(t, y, len(src))
		var num, den float64
		for i := range src {
			d := float64(y[i] - src[i])
			num += d * d
			den += float64(src[i]) * float64(src[i])
		}
		require.Less(t, num/den, 0.1, "%s dequantizes near its source", typ)
	}
	_, err = l.Dequantize(tensor.IQ4_XS, make([]byte, 100))
	require.Error(t, err, "not whole blocks")
}
