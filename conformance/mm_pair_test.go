package conformance

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// matVecKernels counts the mat-vec kernels among a case's planned pipeline keys: those of
// mul_mat_multi.wgsl by their product count, and the single mat-vec kernel's.
func matVecKernels(keys []string) (multi map[int]int, single int) {
	multi = map[int]int{}
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, "mul_mat_vec8;"):
			single++
		case strings.HasPrefix(k, "mul_mat_multi;"):
			for p := 2; p <= 3; p++ {
				if strings.Contains(k, ";PRODUCTS="+string(rune('0'+p))+";") {
					multi[p]++
				}
			}
		}
	}
	return multi, single
}

// requireFused plans a case the way the library plans it (on the tensors ggml placed in a
// WGPU0 buffer) and checks that the MUL_MATs of one activation were fused in one mat-vec
// dispatch of products MUL_MATs (none: 0), and that a single mat-vec kernel was planned
// only where alone is set (a MUL_MAT left out of the fusion).
func requireFused(t *testing.T, env *Env, c *Case, products int, alone bool) {
	keys, err := env.Kernels(c)
	require.NoError(t, err, c.Name)
	require.NotEmpty(t, keys, "%s: unsupported", c.Name)
	multi, single := matVecKernels(keys)
	for p := 2; p <= 3; p++ {
		if p == products {
			require.Positive(t, multi[p], "%s: a fused mat-vec kernel of %d products planned: %v", c.Name, p, keys)
		} else {
			require.Zero(t, multi[p], "%s: no fused mat-vec kernel of %d products planned: %v", c.Name, p, keys)
		}
	}
	if alone {
		require.Positive(t, single, "%s: a separate mat-vec kernel planned: %v", c.Name, keys)
	} else {
		require.Zero(t, single, "%s: no separate mat-vec kernel planned: %v", c.Name, keys)
	}
}

// TestMulMatPairFuses checks where the fusion rows mul_mat+view+mul_mat and
// mul_mat+mul_mat applied to the GRAPH(mul_mat_pair) cases: one dispatch of two products
// where the case expects the fusion, separate mat-vec kernels where it does not.
func TestMulMatPairFuses(t *testing.T) {
	env := openTestEnv(t)
	for _, c := range mmPairCases() {
		if mmPairFused(c) {
			requireFused(t, env, c, 2, false)
		} else {
			requireFused(t, env, c, 0, true)
		}
	}
}

// TestMulMatQKVFuses checks that the GRAPH(mul_mat_qkv) cases computed llama's three
// projections in one dispatch of three products, and that where the third reads the
// first's result the first two were fused and the third computed apart.
func TestMulMatQKVFuses(t *testing.T) {
	env := openTestEnv(t)
	for _, c := range qkvCases() {
		p := qkvFusedProducts(c)
		requireFused(t, env, c, p, p < 3)
	}
}
