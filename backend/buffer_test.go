package backend

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

func firstDevice(t testing.TB) *Device {
	t.Helper()
	r := Default()
	require.NotEmpty(t, r.Devices, "no WebGPU device: run scripts/setup.sh (installs lavapipe)")
	require.Greater(t, r.Score(), 0)
	return r.Devices[0]
}

// TestBufferExactAtAnyOffset writes and reads ranges whose offsets and sizes are not
// multiples of 4 and checks that neighbouring bytes survive.
func TestBufferExactAtAnyOffset(t *testing.T) {
	d := firstDevice(t)
	const size = 1031
	b, err := d.Alloc(size)
	require.NoError(t, err)
	defer b.Free()
	shadow := make([]byte, size)
	rng := rand.New(rand.NewSource(1))
	rng.Read(shadow)
	require.NoError(t, b.Write(0, shadow))
	for i := 0; i < 200; i++ {
		off := uint64(rng.Intn(size))
		n := rng.Intn(size - int(off) + 1)
		data := make([]byte, n)
		rng.Read(data)
		require.NoError(t, b.Write(off, data))
		copy(shadow[off:], data)
		roff := uint64(rng.Intn(size))
		rn := rng.Intn(size - int(roff) + 1)
		got := make([]byte, rn)
		require.NoError(t, b.Read(roff, got))
		require.Equal(t, shadow[roff:roff+uint64(rn)], got, "read %d@%d after write %d@%d", rn, roff, n, off)
	}
	require.NoError(t, b.Memset(3, 10, 0xab))
	for i := 3; i < 13; i++ {
		shadow[i] = 0xab
	}
	require.NoError(t, b.Memset(100, 400, 0))
	clear(shadow[100:500])
	got := make([]byte, size)
	require.NoError(t, b.Read(0, got))
	require.Equal(t, shadow, got)
	require.NoError(t, b.Clear(7))
	require.NoError(t, b.Read(0, got))
	for _, v := range got {
		require.Equal(t, byte(7), v)
	}
	require.Error(t, b.Write(size-1, []byte{1, 2}), "write past the end")
	require.Error(t, b.Read(size, []byte{0}), "read past the end")
}

func TestBufferCopyAndLimits(t *testing.T) {
	d := firstDevice(t)
	a, err := d.Alloc(64)
	require.NoError(t, err)
	defer a.Free()
	c, err := d.Alloc(64)
	require.NoError(t, err)
	defer c.Free()
	src := []byte("0123456789abcdef0123456789abcdef")
	require.NoError(t, a.Write(0, src))
	ok, err := a.CopyTo(c, 4, 8, 16)
	require.NoError(t, err)
	require.True(t, ok)
	got := make([]byte, 16)
	require.NoError(t, c.Read(8, got))
	require.Equal(t, src[4:20], got)
	ok, err = a.CopyTo(c, 1, 8, 16)
	require.NoError(t, err)
	require.False(t, ok, "unaligned copies fall back to the host")

	free0, total := d.Memory()
	require.NotZero(t, total)
	require.LessOrEqual(t, free0, total)
	_, err = d.Alloc(1 << 50)
	require.Error(t, err, "an impossible allocation must fail with a reason")
	require.NotZero(t, d.Alignment())
	require.NotZero(t, d.MaxAlloc())
}
