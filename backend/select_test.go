package backend

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/stretchr/testify/require"
)

func TestSelectAdapters(t *testing.T) {
	lvp := gpu.AdapterInfo{Device: "llvmpipe (LLVM 15.0.6, 256 bits)", Type: gpu.CPU}
	nv := gpu.AdapterInfo{Device: "NVIDIA H200", Type: gpu.DiscreteGPU}
	igpu := gpu.AdapterInfo{Device: "Intel UHD", Type: gpu.IntegratedGPU}

	require.Equal(t, []int{0}, selectAdapters([]gpu.AdapterInfo{lvp}, "", false), "software only when nothing else")
	require.Equal(t, []int{1}, selectAdapters([]gpu.AdapterInfo{lvp, nv}, "", false), "lavapipe hidden beside a GPU")
	require.Equal(t, []int{1, 0}, selectAdapters([]gpu.AdapterInfo{lvp, nv}, "", true))
	require.Equal(t, []int{2, 1}, selectAdapters([]gpu.AdapterInfo{lvp, igpu, nv}, "", false), "discrete first")
	require.Equal(t, []int{0}, selectAdapters([]gpu.AdapterInfo{lvp, nv}, "llvm", false))
	require.Equal(t, []int{1, 0}, selectAdapters([]gpu.AdapterInfo{lvp, nv}, "1, 0, 0, 9", false))
	require.Empty(t, selectAdapters([]gpu.AdapterInfo{lvp, nv}, "radeon", false))
}

func TestUnmatchedSelections(t *testing.T) {
	lvp := gpu.AdapterInfo{Device: "llvmpipe (LLVM 15.0.6, 256 bits)", Type: gpu.CPU}
	nv := gpu.AdapterInfo{Device: "NVIDIA H200", Type: gpu.DiscreteGPU}
	infos := []gpu.AdapterInfo{lvp, nv}
	require.Empty(t, unmatchedSelections(infos, ""))
	require.Empty(t, unmatchedSelections(infos, "0, nvidia"))
	require.Equal(t, []string{"radeon", "9"}, unmatchedSelections(infos, "radeon, 0,9,"))
	require.Equal(t, []string{"nvidia"}, unmatchedSelections(infos[:1], "nvidia"))
	require.Equal(t, `0 "llvmpipe (LLVM 15.0.6, 256 bits)", 1 "NVIDIA H200"`, adapterList(infos))
	require.Equal(t, `0 "llvmpipe"`, adapterList([]gpu.AdapterInfo{{Device: "0x0", Description: "llvmpipe"}}), "the description first")
	require.Equal(t, "none", adapterList(nil))
}
