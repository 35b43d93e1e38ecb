package gpu

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// bytesFrom returns n bytes counting from v.
func bytesFrom(v byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = v + byte(i)
	}
	return b
}

// written returns a storage buffer holding data, released when the test ends.
func written(t *testing.T, d *Device, data []byte) *Buffer {
	t.Helper()
	b, err := d.CreateBuffer(uint64(len(data)), UsageStorage)
	require.NoError(t, err)
	t.Cleanup(b.Release)
	require.NoError(t, d.Write(b, 0, data))
	return b
}

// A read made ahead serves a Read within its range without another submission; a queue
// write or a submission after it, or a read outside it, is read from the buffer instead.
func TestReadAhead(t *testing.T) {
	d := openFirst(t)
	b := written(t, d, bytesFrom(1, 256))

	ok, err := d.ReadAhead(b, 64, 128)
	require.NoError(t, err)
	require.True(t, ok)
	seq := d.Submitted()
	got := make([]byte, 32)
	require.NoError(t, d.Read(b, 96, got))
	require.Equal(t, bytesFrom(97, 32), got)
	require.Equal(t, seq, d.Submitted(), "served from the read made ahead")
	require.EqualValues(t, 1, d.ReadsTaken())
	require.NoError(t, d.Read(b, 96, got))
	require.Equal(t, seq+1, d.Submitted(), "a read made ahead serves one Read")

	// A write after it: the Read sees the write.
	_, err = d.ReadAhead(b, 0, 256)
	require.NoError(t, err)
	require.NoError(t, d.Write(b, 0, bytesFrom(50, 256)))
	require.NoError(t, d.Read(b, 0, got))
	require.Equal(t, bytesFrom(50, 32), got)

	// A submission after it (a clear): the Read sees it.
	_, err = d.ReadAhead(b, 0, 256)
	require.NoError(t, err)
	require.NoError(t, d.Clear(b, 0, 64))
	require.NoError(t, d.Read(b, 0, got))
	require.Equal(t, make([]byte, 32), got)

	// A write to another buffer changes nothing of it.
	_, err = d.ReadAhead(b, 0, 256)
	require.NoError(t, err)
	written(t, d, make([]byte, 64))
	seq = d.Submitted()
	require.NoError(t, d.Read(b, 64, got))
	require.Equal(t, bytesFrom(50+64, 32), got)
	require.Equal(t, seq, d.Submitted(), "served from the read made ahead")

	// A range outside it, or of another buffer, is read from the buffer.
	c := written(t, d, bytesFrom(9, 256))
	for _, r := range []struct {
		buf  *Buffer
		off  uint64
		want []byte
	}{{b, 224, bytesFrom(byte(50+224-256), 32)}, {c, 64, bytesFrom(9+64, 32)}} {
		_, err = d.ReadAhead(b, 64, 128)
		require.NoError(t, err)
		require.NoError(t, d.Read(r.buf, r.off, got))
		require.Equal(t, r.want, got)
	}

	// Reads made ahead and never read: the staging buffers alternate, and none is lost.
	for i := 0; i < 5; i++ {
		ok, err = d.ReadAhead(b, 0, 256)
		require.NoError(t, err)
		require.True(t, ok || i > 1)
		require.NoError(t, d.WaitIdle())
	}
	require.NoError(t, d.Read(b, 128, got))
	require.Equal(t, bytesFrom(50+128, 32), got)

	// Bad ranges are refused before wgpu-native sees them.
	_, err = d.ReadAhead(b, 0, 0)
	require.Error(t, err)
	_, err = d.ReadAhead(b, 128, 256)
	require.Error(t, err)
	_, err = d.ReadAhead(b, 2, 64)
	require.Error(t, err)
	require.EqualValues(t, 3, d.ReadsTaken(), "the first read, the one after another buffer's write, and the last")
}

// SubmitReading puts the read made ahead into the submission of the work that writes
// its range: the copy sees that work, and the Read is served from it with no submission
// after; where both staging buffers still wait for their maps, the work goes alone.
func TestSubmitReading(t *testing.T) {
	d := openFirst(t)
	b := written(t, d, bytesFrom(1, 256))
	z := written(t, d, make([]byte, 64))
	clearCB := func() *CommandBuffer { // a command buffer that zeroes b's first 64 bytes
		e := d.NewEncoder()
		require.NoError(t, e.Copy(z, 0, b, 0, 64))
		c, err := e.Finish()
		require.NoError(t, err)
		return c
	}
	before := d.Submitted()
	seq, read, err := d.SubmitReading([]*CommandBuffer{clearCB()}, b, 0, 128)
	require.NoError(t, err)
	require.True(t, read)
	require.Equal(t, before+1, seq, "one submission: the work and the copy")
	got := make([]byte, 128)
	require.NoError(t, d.Read(b, 0, got))
	require.Equal(t, append(make([]byte, 64), bytesFrom(65, 64)...), got, "the copy ran after the work")
	require.Equal(t, seq, d.Submitted(), "served from the read made ahead")
	require.EqualValues(t, 1, d.ReadsTaken())

	// Both staging buffers waiting for their maps (reads made ahead, never read, the GPU
	// not polled since): the work is submitted alone.
	require.NoError(t, d.Write(b, 0, bytesFrom(1, 256)))
	n := 0
	for i := 0; i < 3; i++ {
		_, read, err = d.SubmitReading([]*CommandBuffer{clearCB()}, b, 64, 64)
		require.NoError(t, err)
		if read {
			n++
		}
	}
	require.GreaterOrEqual(t, n, 2, "two staging buffers")
	require.NoError(t, d.WaitIdle())
	require.NoError(t, d.Read(b, 0, got))
	require.Equal(t, append(make([]byte, 64), bytesFrom(65, 64)...), got, "every command buffer ran")

	// A range it refuses: the work still runs, alone.
	seq, read, err = d.SubmitReading([]*CommandBuffer{clearCB()}, b, 2, 64)
	require.NoError(t, err)
	require.False(t, read)
	require.Equal(t, d.Submitted(), seq)
}

// SubmitTogether refuses, submitting none, a list with a command buffer twice, a spent
// one or an empty list.
func TestSubmitTogetherRefusesBadLists(t *testing.T) {
	d := openFirst(t)
	finish := func() *CommandBuffer {
		c, err := d.NewEncoder().Finish()
		require.NoError(t, err)
		return c
	}
	_, err := d.SubmitTogether(nil)
	require.Error(t, err)
	c := finish()
	_, err = d.SubmitTogether([]*CommandBuffer{c, c})
	require.ErrorContains(t, err, "twice")
	_, err = d.SubmitTogether([]*CommandBuffer{c})
	require.Error(t, err, "dropped with the list it came in")
	a, b := finish(), finish()
	seq, err := d.SubmitTogether([]*CommandBuffer{a, b})
	require.NoError(t, err)
	require.Equal(t, d.Submitted(), seq)
	_, err = d.SubmitTogether([]*CommandBuffer{a})
	require.Error(t, err, "spent")
	require.NoError(t, d.WaitIdle())
}

// A read made ahead of a few sequences' logits (2 MiB and a word) is copied out of the
// mapped memory in pieces (copyParallel), at an offset within it.
func TestReadAheadLarge(t *testing.T) {
	d := openFirst(t)
	const n = 2<<20 + 4
	data := make([]byte, n+256)
	for i := range data {
		data[i] = byte(i*13 + i>>9)
	}
	b := written(t, d, data)
	mapped := 0
	d.OnMapped = func() { mapped++ }
	ok, err := d.ReadAhead(b, 256, n)
	require.NoError(t, err)
	require.True(t, ok)
	got := make([]byte, n-64)
	require.NoError(t, d.Read(b, 256+64, got))
	require.EqualValues(t, 1, d.ReadsTaken(), "served from the read made ahead")
	require.Equal(t, 1, mapped, "OnMapped called once, before the copy")
	require.Equal(t, data[256+64:], got)
}

func TestCopyParallel(t *testing.T) {
	for _, n := range []int{0, 1, copyPiece - 1, 2*copyPiece - 1, 2 * copyPiece, 2<<20 + 3, 3*copyParts*copyPiece + 4} {
		for _, skew := range []int{0, 1, 7} { // sources not on a word
			src := make([]byte, n+skew)
			for i := range src {
				src[i] = byte(i*7 + i>>11)
			}
			dst := make([]byte, n+1)
			dst[n] = 0xa5
			copyParallel(dst[:n], src[skew:])
			require.Equal(t, src[skew:], dst[:n], "%d bytes from %d", n, skew)
			require.Equal(t, byte(0xa5), dst[n], "%d bytes: nothing past the end", n)
		}
	}
}

// Copies from several goroutines at once take turns on the pool, each whole: a worker
// late for one copy takes nothing of the next.
func TestCopyParallelConcurrent(t *testing.T) {
	const goroutines, copies = 4, 150
	errs := make(chan error, goroutines)
	for g := range goroutines {
		go func() {
			for c := range copies {
				n := copyPiece*(1+(g*copies+c)%12) + c
				src := make([]byte, n)
				for i := range src {
					src[i] = byte(i + g*31 + c*7)
				}
				dst := make([]byte, n)
				copyParallel(dst, src)
				if !bytes.Equal(src, dst) {
					errs <- fmt.Errorf("goroutine %d, copy %d of %d bytes differs", g, c, n)
					return
				}
			}
			errs <- nil
		}()
	}
	for range goroutines {
		require.NoError(t, <-errs)
	}
}

// A wait whose end makes a read ahead ready wakes the copy pool before it ends (SetPrewake),
// by the last such wait's length: here a copy of 64 MiB on the GPU before each read ahead
// of 1 MiB, waits of about the same length, and the pool woken a tenth of the way through
// all but the first (lavapipe's waits vary, by half and more).
// With no worker threads (one CPU) there is nothing to wake, and no prewake is counted.
func TestPrewake(t *testing.T) {
	d := openFirst(t)
	const big, n = 64 << 20, 1 << 20
	src, err := d.CreateBuffer(big, UsageStorage)
	require.NoError(t, err)
	defer src.Release()
	dst, err := d.CreateBuffer(big, UsageStorage)
	require.NoError(t, err)
	defer dst.Release()
	data := bytesFrom(3, n)
	require.NoError(t, d.Write(src, 0, data))
	before := copyPrewakes()
	var waits []time.Duration
	for i := range 12 {
		e := d.NewEncoder()
		require.NoError(t, e.Copy(src, 0, dst, 0, big))
		_, err := e.Submit()
		require.NoError(t, err)
		ok, err := d.ReadAhead(dst, 0, n)
		require.NoError(t, err)
		require.True(t, ok)
		start := time.Now()
		require.NoError(t, d.WaitIdle())
		waits = append(waits, time.Since(start))
		got := make([]byte, n)
		require.NoError(t, d.Read(dst, 0, got))
		require.Equal(t, data, got, "read %d", i)
		d.SetPrewake(d.prewake.last*9/10, 5*time.Millisecond) // the next wait: a tenth of the way
	}
	t.Logf("%d copy workers, %d prewakes, waits %v", copyThreads(), copyPrewakes()-before, waits)
	if copyThreads() == 0 {
		require.Zero(t, copyPrewakes()-before, "no workers to wake; waits %v", waits)
	} else {
		require.Positive(t, copyPrewakes()-before, "%d workers; waits %v", copyThreads(), waits)
	}
	d.SetPrewake(0, 0)
}

// BenchmarkReadAhead reports the time a Read takes to serve 4 MiB (eight sequences' logits
// of a 128256-token vocabulary) from a read made ahead, its map done, after a 2 ms idle
// like a decode step's (the copy pool's threads asleep), and checks the bytes:
// go test -run - -bench ReadAhead ./gpu. On the H100 machine: 120.6-129.5 µs a read, three
// runs of 200, the map's wait included (the copy alone took 193-224 µs on goroutines).
func BenchmarkReadAhead(b *testing.B) {
	d := openFirst(b)
	const n = 4 << 20
	data := bytesFrom(9, n)
	buf, err := d.CreateBuffer(n, UsageStorage)
	require.NoError(b, err)
	defer buf.Release()
	require.NoError(b, d.Write(buf, 0, data))
	got := make([]byte, n)
	var took time.Duration
	for range b.N {
		ok, err := d.ReadAhead(buf, 0, n)
		require.NoError(b, err)
		require.True(b, ok)
		require.NoError(b, d.WaitIdle())
		time.Sleep(2 * time.Millisecond)
		start := time.Now()
		require.NoError(b, d.Read(buf, 0, got))
		took += time.Since(start)
	}
	require.EqualValues(b, b.N, d.ReadsTaken(), "every read served from its read ahead")
	require.Equal(b, data, got)
	b.ReportMetric(float64(took.Microseconds())/float64(b.N), "µs/read")
}
