package conformance

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAddNormFuses plans every GRAPH(add+norm) case the way the library plans it (on the
// tensors ggml placed in a WGPU0 buffer) and checks that the fusion row add+norm+mul
// applied: a norm kernel with ADD set and no norm kernel without it, except where the
// norm is stored over a sum that the residual reads again (there it must not apply).
func TestAddNormFuses(t *testing.T) {
	env := openTestEnv(t)
	for _, c := range addNormCases() {
		keys, err := env.Kernels(c)
		require.NoError(t, err, c.Name)
		require.NotEmpty(t, keys, "%s: unsupported", c.Name)
		var fused, apart bool
		for _, k := range keys {
			fused = fused || strings.HasPrefix(k, "norm;ADD=1;")
			apart = apart || strings.HasPrefix(k, "norm;ADD=0;")
		}
		want := addNormFused(c)
		require.Equal(t, want, fused, "%s: fused ADD+norm+MUL kernel planned: %v", c.Name, keys)
		require.Equal(t, !want, apart, "%s: separate norm kernel planned: %v", c.Name, keys)
	}
}
