package backend

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// A kernel with wgsl.Spec.Counters binds the device's counters after its bindings: one
// zeroed buffer of wgsl.CounterSlots u32s, made once, read-write; a kernel without them
// keeps its bindings, and one with no binding left fails.
func TestBindCounters(t *testing.T) {
	d := firstDevice(t)
	_, err := d.open()
	require.NoError(t, err)
	d.mu.Lock()
	defer d.mu.Unlock()
	spec := &wgsl.Spec{Kernel: "binary", Counters: true}
	got, err := d.bindCounters(spec, make([]gpu.Binding, 3))
	require.NoError(t, err)
	require.Len(t, got, 4)
	c := got[3]
	require.Same(t, d.counters, c.Buffer)
	require.False(t, c.ReadOnly)
	require.Equal(t, uint64(4*wgsl.CounterSlots), c.Size)
	data := make([]byte, c.Size)
	require.NoError(t, d.gpu.Read(c.Buffer, 0, data))
	require.Equal(t, make([]byte, c.Size), data, "zeroed")
	again, err := d.bindCounters(spec, make([]gpu.Binding, 2))
	require.NoError(t, err)
	require.Same(t, c.Buffer, again[2].Buffer, "one buffer per device")

	_, err = d.bindCounters(spec, make([]gpu.Binding, storageBindings(d.gpu)))
	require.ErrorContains(t, err, "counters")

	plain := &wgsl.Spec{Kernel: "binary"}
	got, err = d.bindCounters(plain, make([]gpu.Binding, 3))
	require.NoError(t, err)
	require.Len(t, got, 3)
}
