package backend

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// A kernel reading IQ weights binds the device's table buffer after its operands, one
// buffer made once and holding wgsl.TableWords; a kernel without tables, or one with no
// binding left, keeps its bindings (and stores its tables from literals).
func TestBindTables(t *testing.T) {
	d := firstDevice(t)
	_, err := d.open()
	require.NoError(t, err)
	d.mu.Lock()
	defer d.mu.Unlock()
	iq := &wgsl.Spec{Kernel: "get_rows", Workgroup: 64, Operands: []wgsl.Operand{
		{Name: "src0", Type: wgsl.IQ2_XXS, Vec: true}, {Name: "src1", Type: wgsl.I32}, {Name: "dst", Type: wgsl.F32, Written: true}}}
	bs := make([]gpu.Binding, 3)
	spec, got := d.bindTables(iq, bs)
	require.True(t, spec.Tables)
	require.False(t, iq.Tables, "the plan's spec is left as it was")
	require.Len(t, got, 4)
	tb := got[3]
	require.Same(t, d.tables, tb.Buffer)
	require.True(t, tb.ReadOnly)
	words := wgsl.TableWords()
	require.Equal(t, uint64(4*len(words)), tb.Size)
	data := make([]byte, tb.Size)
	require.NoError(t, d.gpu.Read(tb.Buffer, 0, data))
	for i, w := range words {
		require.Equal(t, w, binary.LittleEndian.Uint32(data[4*i:]), "word %d", i)
	}
	_, again := d.bindTables(iq, make([]gpu.Binding, 3))
	require.Same(t, tb.Buffer, again[3].Buffer, "one buffer per device")

	most := storageBindings(d.gpu)
	spec, got = d.bindTables(iq, make([]gpu.Binding, most))
	require.False(t, spec.Tables, "no binding left")
	require.Len(t, got, most)

	f32 := &wgsl.Spec{Kernel: "get_rows", Workgroup: 64, Operands: []wgsl.Operand{
		{Name: "src0", Type: wgsl.F32}, {Name: "src1", Type: wgsl.I32}, {Name: "dst", Type: wgsl.F32, Written: true}}}
	spec, got = d.bindTables(f32, make([]gpu.Binding, 3))
	require.Same(t, f32, spec)
	require.Len(t, got, 3)
}
