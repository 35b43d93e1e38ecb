package gpu

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// firstAdapter returns the first WebGPU adapter.
func firstAdapter(t testing.TB) *Adapter {
	t.Helper()
	in, err := NewInstance()
	require.NoError(t, err)
	ads := in.Adapters()
	if len(ads) == 0 {
		t.Fatal("no WebGPU adapter: install mesa-vulkan-drivers (scripts/setup.sh)")
	}
	return ads[0]
}

// openFirst opens the first adapter's device, closed when the test ends.
func openFirst(t testing.TB) *Device {
	t.Helper()
	d, err := firstAdapter(t).Open()
	require.NoError(t, err)
	t.Cleanup(d.Close)
	return d
}

func TestWriteReadRoundTrip(t *testing.T) {
	d := openFirst(t)
	b, err := d.CreateBuffer(1<<20, UsageStorage)
	require.NoError(t, err)
	defer b.Release()
	src := make([]byte, 4096)
	for i := range src {
		src[i] = byte(i * 7)
	}
	require.NoError(t, d.Write(b, 1024, src))
	got := make([]byte, len(src))
	require.NoError(t, d.Read(b, 1024, got))
	require.Equal(t, src, got)
	require.NoError(t, d.Clear(b, 1024, 16))
	require.NoError(t, d.Read(b, 1024, got[:16]))
	require.Equal(t, make([]byte, 16), got[:16])
}

const doubler = `
struct P { n: u32, scale: f32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> b: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
	if (id.x < p.n) { b[id.x] = a[id.x] * p.scale; }
}`

func TestDispatch(t *testing.T) {
	d := openFirst(t)
	p, err := d.CreatePipeline("doubler", doubler, 2)
	require.NoError(t, err)
	u, err := d.CreateBuffer(512, UsageUniform)
	require.NoError(t, err)
	a, _ := d.CreateBuffer(400, UsageStorage)
	b, _ := d.CreateBuffer(400, UsageStorage)
	in := make([]byte, 400)
	for i := 0; i < 100; i++ {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(float32(i)))
	}
	require.NoError(t, d.Write(a, 0, in))
	params := make([]byte, 512)
	binary.LittleEndian.PutUint32(params[256:], 100)
	binary.LittleEndian.PutUint32(params[260:], math.Float32bits(3))
	require.NoError(t, d.Write(u, 0, params))
	// The same buffer bound twice (a and b alias) must be accepted too.
	g, err := d.CreateBindGroup(p, u, 16, []Binding{{Buffer: a, Size: 400}, {Buffer: b, Size: 400}})
	require.NoError(t, err)
	e := d.NewEncoder()
	require.NoError(t, e.Dispatch(p, g, 256, [3]uint32{2, 1, 1}))
	seq, err := e.Submit()
	require.NoError(t, err)
	require.NoError(t, d.Wait(seq))
	out := make([]byte, 400)
	require.NoError(t, d.Read(b, 0, out))
	for i := 0; i < 100; i++ {
		require.Equal(t, float32(3*i), math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])))
	}
	g2, err := d.CreateBindGroup(p, u, 16, []Binding{{Buffer: a, Size: 400}, {Buffer: a, Size: 400}})
	require.NoError(t, err)
	e = d.NewEncoder()
	require.NoError(t, e.Dispatch(p, g2, 256, [3]uint32{2, 1, 1}))
	_, err = e.Submit()
	require.NoError(t, err)
	require.NoError(t, d.Read(a, 0, out))
	require.Equal(t, float32(3*99), math.Float32frombits(binary.LittleEndian.Uint32(out[4*99:])))
	_, err = d.CreatePipeline("bad", "fn main( {", 2)
	require.Error(t, err)
	n, _ := d.Errors()
	require.Equal(t, 0, n)
}

// TestMayOverlap binds two partially overlapping ranges of one buffer: rejected by
// default, accepted when a binding says the kernel is written for it or both are
// read-only.
func TestMayOverlap(t *testing.T) {
	d := openFirst(t)
	p, err := d.CreatePipeline("doubler", doubler, 2)
	require.NoError(t, err)
	u, err := d.CreateBuffer(256, UsageUniform)
	require.NoError(t, err)
	a, err := d.CreateBuffer(1024, UsageStorage)
	require.NoError(t, err)
	_, err = d.CreateBindGroup(p, u, 16, []Binding{{Buffer: a, Size: 512}, {Buffer: a, Offset: 256, Size: 512}})
	require.ErrorContains(t, err, "partially overlap")
	g, err := d.CreateBindGroup(p, u, 16, []Binding{{Buffer: a, Size: 512}, {Buffer: a, Offset: 256, Size: 512, MayOverlap: true}})
	require.NoError(t, err)
	g.Release()
	_, err = d.CreateBindGroup(p, u, 16, []Binding{{Buffer: a, Size: 512, ReadOnly: true}, {Buffer: a, Offset: 256, Size: 512}})
	require.ErrorContains(t, err, "partially overlap")
	g, err = d.CreateBindGroup(p, u, 16, []Binding{{Buffer: a, Size: 512, ReadOnly: true}, {Buffer: a, Offset: 256, Size: 512, ReadOnly: true}})
	require.NoError(t, err)
	g.Release()
	n, msg := d.Errors()
	require.Equal(t, 0, n, msg)
}

func TestLiveBytes(t *testing.T) {
	d := openFirst(t)
	before := d.LiveBytes()
	a, err := d.CreateBuffer(1000, UsageStorage)
	require.NoError(t, err)
	b, err := d.CreateBuffer(6, UsageStorage) // rounded up to 8
	require.NoError(t, err)
	require.Equal(t, before+1000+8, d.LiveBytes())
	a.Release()
	a.Release() // a second release changes nothing
	require.Equal(t, before+8, d.LiveBytes())
	b.Release()
	require.Equal(t, before, d.LiveBytes())
}

// TestReadbackBufferSize: the readback buffer is sized to the reads, 1 MiB for small
// ones, grown to a power of two up to 4 MiB, through which a longer read goes in chunks
// and comes back whole.
func TestReadbackBufferSize(t *testing.T) {
	require.Equal(t, uint64(1<<20), stagingSize(4, 1<<40))
	require.Equal(t, uint64(1<<20), stagingSize(128256*4, 1<<40), "a decode's logits")
	require.Equal(t, uint64(2<<20), stagingSize(1<<20+4, 1<<40))
	require.Equal(t, uint64(4<<20), stagingSize(64<<20, 1<<40), "longer reads go in chunks")
	require.Equal(t, uint64(1<<16), stagingSize(64<<20, 1<<16), "within the buffer limit")

	d := openFirst(t)
	const n = 6<<20 + 12 // two chunks and a bit
	b, err := d.CreateBuffer(n, UsageStorage|usageCopySrc|usageCopyDst)
	require.NoError(t, err)
	defer b.Release()
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i * 7 % 251)
	}
	require.NoError(t, d.Write(b, 0, src))
	before := d.LiveBytes()
	small := make([]byte, 16)
	require.NoError(t, d.Read(b, 0, small))
	require.Equal(t, src[:16], small)
	staged := d.LiveBytes() - before // the first read creates the readback buffer
	require.LessOrEqual(t, staged, uint64(1<<20))
	all := make([]byte, n)
	require.NoError(t, d.Read(b, 0, all))
	require.Equal(t, src, all)
	require.Equal(t, before+4<<20, d.LiveBytes(), "grown to 4 MiB, the 1 MiB one released")
}
