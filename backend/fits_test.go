package backend

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/stretchr/testify/require"
)

// TestFitsMemoryOverride: under GGML_WGPU_MEMORY_MB a buffer beyond what is left of the
// cap is refused with a message naming the sizes, and the device reports the cap.
func TestFitsMemoryOverride(t *testing.T) {
	d := newDevice(0, &gpu.Adapter{Info: gpu.AdapterInfo{Device: "llvmpipe", Type: gpu.CPU}})
	t.Setenv(EnvMemory, "")
	require.NoError(t, d.fits(1<<40), "without the override a software adapter has no cap")

	t.Setenv(EnvMemory, "4")
	d.allocated = 3 << 20
	require.NoError(t, d.fits(1<<20))
	err := d.fits(2 << 20)
	require.Error(t, err)
	require.Equal(t, "WGPU0: a buffer of 2.00 MiB does not fit: 1.00 MiB of the 4.00 MiB that GGML_WGPU_MEMORY_MB allows are free (3.00 MiB allocated)", err.Error())
	require.Error(t, d.fits(1<<63), "no overflow")
	free, total := d.Memory()
	require.Equal(t, uint64(4<<20), total)
	require.Equal(t, uint64(1<<20), free)

	t.Setenv(EnvMemory, "junk")
	require.Zero(t, memoryOverride())
}
