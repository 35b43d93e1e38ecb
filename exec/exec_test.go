package exec

import (
	"encoding/binary"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/stretchr/testify/require"
)

// stamp writes p.value at index p.index of out.
const stamp = `
struct P { index: u32, value: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn main() { out[p.index] = p.value; }
`

func device(t *testing.T) *gpu.Device {
	t.Helper()
	in, err := gpu.NewInstance()
	require.NoError(t, err)
	ads := in.Adapters()
	require.NotEmpty(t, ads, "no WebGPU adapter: run scripts/setup.sh (installs lavapipe)")
	d, err := ads[0].Open()
	require.NoError(t, err)
	t.Cleanup(d.Close)
	return d
}

func params(index, value uint32) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint32(b, index)
	binary.LittleEndian.PutUint32(b[4:], value)
	return b
}

// More steps than the arena has slots: the executor submits when the open batch is full
// and carries on; every step's parameters arrive intact.
func TestRunSplitsFullBatches(t *testing.T) {
	d := device(t)
	e, err := New(d, 2, 256)
	require.NoError(t, err)
	defer e.Close()
	compiles := 0
	src := func() (string, error) { compiles++; return stamp, nil }
	p, err := e.Pipeline("stamp", "stamp", gpu.Layout{Storage: 1}, src)
	require.NoError(t, err)
	p2, err := e.Pipeline("stamp", "stamp", gpu.Layout{Storage: 1}, src)
	require.NoError(t, err)
	require.Same(t, p, p2)
	require.Equal(t, 1, compiles, "a pipeline is compiled once per key")

	out, err := d.CreateBuffer(64, gpu.UsageStorage)
	require.NoError(t, err)
	defer out.Release()
	var steps []Step
	for i := uint32(0); i < 7; i++ {
		steps = append(steps, Step{Pipeline: p, Bindings: []gpu.Binding{{Buffer: out, Offset: 0, Size: 64}},
			Params: params(i, 100+i), Grid: [3]uint32{1, 1, 1}, Submit: i == 2})
	}
	require.NoError(t, e.Run(steps, nil))
	require.NoError(t, d.WaitIdle())
	got := make([]byte, 28)
	require.NoError(t, d.Read(out, 0, got))
	for i := uint32(0); i < 7; i++ {
		require.Equal(t, 100+i, binary.LittleEndian.Uint32(got[4*i:]), "step %d", i)
	}
	require.Len(t, e.groups, 1, "one bind group serves every step")

	// A step whose buffer was freed fails cleanly; so do oversized parameters.
	e.Forget(out)
	require.Empty(t, e.groups)
	// Steps that remembered a released group find a new one.
	require.NoError(t, e.Run(steps, nil))
	require.Len(t, e.groups, 1)
	e.Forget(out)
	gone, err := d.CreateBuffer(64, gpu.UsageStorage)
	require.NoError(t, err)
	gone.Release()
	bad := []Step{{Pipeline: p, Bindings: []gpu.Binding{{Buffer: gone, Size: 64}}, Params: params(0, 1), Grid: [3]uint32{1, 1, 1}}}
	require.ErrorContains(t, e.Run(bad, nil), "freed")
	big := []Step{{Pipeline: p, Bindings: []gpu.Binding{{Buffer: out, Size: 64}}, Params: make([]byte, 300), Grid: [3]uint32{1, 1, 1}}}
	require.ErrorContains(t, e.Run(big, nil), "slot")

	// A source that fails to compile keeps failing without another compile.
	bads := 0
	_, err = e.Pipeline("broken", "broken", gpu.Layout{Storage: 1}, func() (string, error) { bads++; return "fn main( {", nil })
	require.Error(t, err)
	_, err = e.Pipeline("broken", "broken", gpu.Layout{Storage: 1}, func() (string, error) { bads++; return "fn main( {", nil })
	require.Error(t, err)
	require.Equal(t, 1, bads)
	require.Equal(t, 1, e.Pipelines())
}

// copyOut copies src[p.index] to out[p.index], src bound read-only.
const copyOut = `
struct P { index: u32, value: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn main() { out[p.index] = src[p.index] + p.value; }
`

// A pipeline with a read-only binding gets bind groups of its own layout, also for ranges
// that a pipeline with read_write bindings binds too, and reads what the other wrote.
func TestReadOnlyLayout(t *testing.T) {
	d := device(t)
	e, err := New(d, 8, 256)
	require.NoError(t, err)
	defer e.Close()
	two := `
struct P { index: u32, value: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn main() { src[p.index] = p.value; }
`
	w, err := e.Pipeline("write", "write", gpu.Layout{Storage: 2}, func() (string, error) { return two, nil })
	require.NoError(t, err)
	r, err := e.Pipeline("copy", "copy", gpu.Layout{Storage: 2, ReadOnly: 1}, func() (string, error) { return copyOut, nil })
	require.NoError(t, err)
	require.Equal(t, uint32(1), r.ReadOnly)
	a, err := d.CreateBuffer(64, gpu.UsageStorage)
	require.NoError(t, err)
	defer a.Release()
	b, err := d.CreateBuffer(64, gpu.UsageStorage)
	require.NoError(t, err)
	defer b.Release()
	bind := []gpu.Binding{{Buffer: a, Size: 64}, {Buffer: b, Size: 64}}
	require.NoError(t, e.Run([]Step{
		{Pipeline: w, Bindings: bind, Params: params(3, 40), Grid: [3]uint32{1, 1, 1}},
		{Pipeline: r, Bindings: bind, Params: params(3, 2), Grid: [3]uint32{1, 1, 1}},
	}, nil))
	require.NoError(t, d.WaitIdle())
	got := make([]byte, 16)
	require.NoError(t, d.Read(b, 0, got))
	require.Equal(t, uint32(42), binary.LittleEndian.Uint32(got[12:]))
	require.Len(t, e.groups, 2, "one bind group per layout")

	// the read-only binding sharing a buffer with a written one is refused before wgpu
	shared := []gpu.Binding{{Buffer: a, Size: 32}, {Buffer: a, Offset: 32, Size: 32}}
	require.ErrorContains(t, e.Run([]Step{{Pipeline: r, Bindings: shared, Params: params(0, 1), Grid: [3]uint32{1, 1, 1}}}, nil),
		"read-only and binding 1 read_write")
}
