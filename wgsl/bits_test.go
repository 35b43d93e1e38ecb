package wgsl

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSingleBitsBySelect checks that no format's routine nor common.wgsl turns a single
// bit into a float through the mantissa trick (uf, uf4 of a value masked to one bit),
// which the NVIDIA compiler folded wrongly (see bits4 in common.wgsl): they go through
// bits4, which selects 0.0 or 1.0, or into the byte of their low bits (hbits1024).
func TestSingleBitsBySelect(t *testing.T) {
	oneBit := regexp.MustCompile(`uf4?\([^;]*(ux4\([^;]*, 1u\)|& (vec4<u32>\()?1u\)?\))`)
	common, err := kernels.ReadFile("kernels/common.wgsl")
	require.NoError(t, err)
	sources := map[string]string{"common.wgsl": string(common)}
	for f, q := range quantFormats {
		sources[f.String()] = q.accessors("src0", 1, true)
	}
	for name, src := range sources {
		require.Empty(t, oneBit.FindAllString(src, -1), name)
	}
	require.Regexp(t, `fn bits4\(h: u32\) -> vec4<f32> \{ return select\(`, string(common))
	// the pattern finds the form that failed
	require.NotEmpty(t, oneBit.FindString("16.0 * uf4(ux4(NAME_bytes4(h), j, 1u), 0.0)"))
	require.NotEmpty(t, oneBit.FindString("return uf4((vec4<u32>(h) >> vec4<u32>(0u, 1u, 2u, 3u)) & vec4<u32>(1u), 0.0);"))
}
