package wgsl

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWorkgroupTableBytes(t *testing.T) {
	require.Equal(t, 0, WorkgroupTableBytes(F16))
	require.Equal(t, 0, WorkgroupTableBytes(Q4_K))
	require.Equal(t, 64, WorkgroupTableBytes(IQ4_XS), "4 vec4<u32> of levels")
	require.Equal(t, 512*16, WorkgroupTableBytes(IQ2_S))
	require.Equal(t, 40, arrayBytes("x: array<u32, 10>;"))
	require.Equal(t, 80, arrayBytes("x: array<vec2<f32>, 10>;"))
}
