package backend

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/backend/webgpu"
	"github.com/stretchr/testify/require"
)

func TestSelectAdapters(t *testing.T) {
	lvp := webgpu.AdapterInfo{Device: "llvmpipe (LLVM 15.0.6, 256 bits)", Type: webgpu.CPU}
	nv := webgpu.AdapterInfo{Device: "NVIDIA H200", Type: webgpu.DiscreteGPU}
	igpu := webgpu.AdapterInfo{Device: "Intel UHD", Type: webgpu.IntegratedGPU}

	require.Equal(t, []int{0}, selectAdapters([]webgpu.AdapterInfo{lvp}, "", false), "software only when nothing else")
	require.Equal(t, []int{1}, selectAdapters([]webgpu.AdapterInfo{lvp, nv}, "", false), "lavapipe hidden beside a GPU")
	require.Equal(t, []int{1, 0}, selectAdapters([]webgpu.AdapterInfo{lvp, nv}, "", true))
	require.Equal(t, []int{2, 1}, selectAdapters([]webgpu.AdapterInfo{lvp, igpu, nv}, "", false), "discrete first")
	require.Equal(t, []int{0}, selectAdapters([]webgpu.AdapterInfo{lvp, nv}, "llvm", false))
	require.Equal(t, []int{1, 0}, selectAdapters([]webgpu.AdapterInfo{lvp, nv}, "1, 0, 0, 9", false))
	require.Empty(t, selectAdapters([]webgpu.AdapterInfo{lvp, nv}, "radeon", false))
}
