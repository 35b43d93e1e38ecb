package conformance

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNMSE(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())

	v, err := NMSE([]float32{1, 2, 3}, []float32{1, 2, 3})
	require.NoError(t, err)
	assert.Equal(t, 0.0, v)

	v, err = NMSE([]float32{1, 0}, []float32{1.1, 0})
	require.NoError(t, err)
	assert.InDelta(t, 0.01, v, 1e-7)

	_, err = NMSE([]float32{1, nan}, []float32{1, nan})
	assert.ErrorContains(t, err, "NaN")
	_, err = NMSE([]float32{1, 2}, []float32{1, nan})
	assert.ErrorContains(t, err, "NaN")

	v, err = NMSE([]float32{inf, 2}, []float32{inf, 2})
	require.NoError(t, err)
	assert.Equal(t, 0.0, v)
	_, err = NMSE([]float32{inf, 2}, []float32{-inf, 2})
	assert.ErrorContains(t, err, "sign")
	_, err = NMSE([]float32{inf, 2}, []float32{3, 2})
	assert.ErrorContains(t, err, "inf mismatch")
	_, err = NMSE([]float32{math.MaxFloat32}, []float32{inf})
	assert.NoError(t, err)

	v, err = NMSE([]float32{0, 0}, []float32{0, 0})
	require.NoError(t, err)
	assert.Equal(t, 0.0, v)
	v, err = NMSE([]float32{0, 0}, []float32{0, 1e-3})
	require.NoError(t, err)
	assert.True(t, math.IsInf(v, 1))

	_, err = NMSE([]float32{1}, []float32{1, 2})
	assert.Error(t, err)
}

func TestCaseNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Cases() {
		require.False(t, seen[c.Name], "duplicate case name %s", c.Name)
		seen[c.Name] = true
		require.NotNil(t, c.Build, c.Name)
		require.NotEmpty(t, c.Op, c.Name)
	}
}

func TestPermuteShape(t *testing.T) {
	// ggml_permute puts source axis i at position p[i].
	assert.Equal(t, [4]int64{5, 4, 10, 3}, permuteShape([4]int64{10, 5, 4, 3}, [4]int{1, 2, 0, 3}))
	assert.Equal(t, [4]int64{10, 4, 5, 3}, permuteShape([4]int64{10, 5, 4, 3}, [4]int{0, 2, 1, 3}))
}
