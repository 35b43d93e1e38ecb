package conformance

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMulMatPairFuses plans every GRAPH(mul_mat_pair) case the way the library plans it
// (on the tensors ggml placed in a WGPU0 buffer) and checks where the fusion rows
// mul_mat+view+mul_mat and mul_mat+mul_mat applied: every mat-vec kernel planned stores
// two results (DSTB) where the case expects the fusion, none where it does not.
func TestMulMatPairFuses(t *testing.T) {
	env := openTestEnv(t)
	for _, c := range mmPairCases() {
		keys, err := env.Kernels(c)
		require.NoError(t, err, c.Name)
		require.NotEmpty(t, keys, "%s: unsupported", c.Name)
		var pair, single int
		for _, k := range keys {
			if !strings.HasPrefix(k, "mul_mat_vec8;") {
				continue
			}
			if strings.Contains(k, ";DSTB=1;") {
				pair++
			} else {
				single++
			}
		}
		if mmPairFused(c) {
			require.Positive(t, pair, "%s: fused mat-vec kernel planned: %v", c.Name, keys)
			require.Zero(t, single, "%s: separate mat-vec kernels planned: %v", c.Name, keys)
		} else {
			require.Zero(t, pair, "%s: fused mat-vec kernel planned: %v", c.Name, keys)
			require.Positive(t, single, "%s: separate mat-vec kernels planned: %v", c.Name, keys)
		}
	}
}
