package gpu

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGuard proves the validator on a real device, one class of bad input per case.
// Each case runs in a child process twice:
//
//   - checked: the exported call must return an error (or, for a no-op, nothing), wgpu-native
//     must not have seen the input (no uncaptured error), and the device must still work;
//   - raw (where the case has one): the same input through the package's unchecked path,
//     which must abort the child with wgpu-native's panic: what the check saves the host
//     process from.

// guardFixture is what each case starts from: the doubler pipeline (2 storage bindings),
// a 512-byte uniform buffer and two 4096-byte storage buffers.
type guardFixture struct {
	t    *testing.T
	ad   *Adapter
	d    *Device
	p    *Pipeline
	u    *Buffer
	a, b *Buffer
}

func newGuardFixture(t *testing.T) *guardFixture {
	ad := firstAdapter(t)
	d, err := ad.Open()
	require.NoError(t, err)
	t.Cleanup(d.Close)
	p, err := d.CreatePipeline("doubler", doubler, 2)
	require.NoError(t, err)
	f := &guardFixture{t: t, ad: ad, d: d, p: p}
	f.u = f.buffer(512, UsageUniform)
	f.a = f.buffer(4096, UsageStorage)
	f.b = f.buffer(4096, UsageStorage)
	return f
}

func (f *guardFixture) buffer(size uint64, usage uint32) *Buffer {
	b, err := f.d.CreateBuffer(size, usage)
	require.NoError(f.t, err)
	return b
}

// group creates a valid bind group over a and b.
func (f *guardFixture) group() *BindGroup {
	g, err := f.d.CreateBindGroup(f.p, f.u, 16, []Binding{{Buffer: f.a, Size: 4096}, {Buffer: f.b, Size: 4096}})
	require.NoError(f.t, err)
	return g
}

// stillWorks checks that the device took no bad input and still computes.
func (f *guardFixture) stillWorks() {
	t := f.t
	n, msg := f.d.Errors()
	require.Equal(t, 0, n, "wgpu-native saw the input: %s", msg)
	require.NoError(t, f.d.Lost())
	p, err := f.d.CreatePipeline("doubler", doubler, 2)
	require.NoError(t, err)
	u := f.buffer(512, UsageUniform)
	x := f.buffer(64, UsageStorage)
	y := f.buffer(64, UsageStorage)
	params := make([]byte, 512)
	params[0] = 16                        // n
	copy(params[4:], []byte{0, 0, 0, 64}) // scale 2.0
	require.NoError(t, f.d.Write(u, 0, params))
	in := bytes.Repeat([]byte{0, 0, 0x80, 0x3f}, 16) // 1.0
	require.NoError(t, f.d.Write(x, 0, in))
	g, err := f.d.CreateBindGroup(p, u, 16, []Binding{{Buffer: x, Size: 64}, {Buffer: y, Size: 64}})
	require.NoError(t, err)
	e := f.d.NewEncoder()
	require.NoError(t, e.Dispatch(p, g, 0, [3]uint32{1, 1, 1}))
	_, err = e.Submit()
	require.NoError(t, err)
	out := make([]byte, 64)
	require.NoError(t, f.d.Read(y, 0, out))
	require.Equal(t, bytes.Repeat([]byte{0, 0, 0, 0x40}, 16), out) // 2.0
}

// guardCase is one class of bad input.
type guardCase struct {
	name string
	// checked makes the validated call; it must fail with an error containing want (or
	// succeed when want is empty: a no-op that wgpu-native would not survive).
	checked func(f *guardFixture) error
	want    string
	// raw passes the same input through the unchecked path; nil where wgpu-native only
	// reports a validation error. panics is part of the message it aborts with.
	raw    func(f *guardFixture)
	panics string
}

// guardCases are the classes of input the validator keeps from wgpu-native.
var guardCases = []guardCase{
	{
		name: "zero-byte-binding",
		checked: func(f *guardFixture) error {
			_, err := f.d.CreateBindGroup(f.p, f.u, 16, []Binding{{Buffer: f.a, Size: 0}, {Buffer: f.b, Size: 64}})
			return err
		},
		want: "storage binding 0 is 0 bytes",
		raw: func(f *guardFixture) {
			f.d.createBindGroup(f.p, f.u, 16, []Binding{{Buffer: f.a, Size: 0}, {Buffer: f.b, Size: 64}})
		},
		panics: "invalid size",
	},
	{
		name: "unaligned-offset",
		checked: func(f *guardFixture) error {
			_, err := f.d.CreateBindGroup(f.p, f.u, 16, []Binding{{Buffer: f.a, Offset: 4, Size: 64}, {Buffer: f.b, Size: 64}})
			return err
		},
		want: "offset 4 is not aligned",
	},
	{
		name: "range-past-buffer-end",
		checked: func(f *guardFixture) error {
			_, err := f.d.CreateBindGroup(f.p, f.u, 16, []Binding{{Buffer: f.a, Size: 64}, {Buffer: f.b, Offset: 4064, Size: 64}})
			return err
		},
		want: "runs past the end",
	},
	{
		name: "range-over-binding-limit",
		checked: func(f *guardFixture) error {
			limit := f.d.lim.MaxStorageBufferBindingSize
			if limit > 256<<20 {
				// Not gigabytes for a test: hold the device to a smaller limit instead.
				limit = 1 << 20
				f.d.lim.MaxStorageBufferBindingSize = limit
			}
			big := f.buffer(limit+256, UsageStorage)
			_, err := f.d.CreateBindGroup(f.p, f.u, 16, []Binding{{Buffer: big, Size: limit + 32}, {Buffer: f.b, Size: 64}})
			big.Release()
			return err
		},
		want: "exceeds maxStorageBufferBindingSize",
	},
	{
		name: "workgroups-over-limit",
		checked: func(f *guardFixture) error {
			e := f.d.NewEncoder()
			defer e.Discard()
			return e.Dispatch(f.p, f.group(), 0, [3]uint32{f.d.Limits.MaxComputeWorkgroupsPerDim + 1, 1, 1})
		},
		want: "exceed the limit",
	},
	{
		name: "released-buffer-in-bind-group",
		checked: func(f *guardFixture) error {
			f.a.Release()
			_, err := f.d.CreateBindGroup(f.p, f.u, 16, []Binding{{Buffer: f.a, Size: 64}, {Buffer: f.b, Size: 64}})
			return err
		},
		want: "storage binding 0's buffer was already released",
		raw: func(f *guardFixture) {
			f.a.Release()
			f.d.createBindGroup(f.p, f.u, 16, []Binding{{Buffer: f.a, Size: 64}, {Buffer: f.b, Size: 64}})
		},
		panics: "invalid bind group entry",
	},
	{
		name: "partial-overlap",
		checked: func(f *guardFixture) error {
			_, err := f.d.CreateBindGroup(f.p, f.u, 16, []Binding{{Buffer: f.a, Size: 512}, {Buffer: f.a, Offset: 256, Size: 512}})
			return err
		},
		want: "partially overlap",
	},
	{
		// (Unchecked, wgpu-native reports this one when the pass ends: a validation error.)
		name: "buffer-released-after-bind-group",
		checked: func(f *guardFixture) error {
			g := f.group()
			f.a.Release()
			e := f.d.NewEncoder()
			defer e.Discard()
			return e.Dispatch(f.p, g, 0, [3]uint32{1, 1, 1})
		},
		want: "storage binding 0 was released",
	},
	{
		// The pass is still open: Submit drops it without ending it.
		name: "buffer-released-in-open-pass",
		checked: func(f *guardFixture) error {
			e := f.d.NewEncoder()
			require.NoError(f.t, e.Dispatch(f.p, f.group(), 0, [3]uint32{1, 1, 1}))
			f.a.Release()
			_, err := e.Submit()
			return err
		},
		want: "released after the dispatch was recorded",
	},
	{
		// The pass was ended (and validated) while the buffer lived: only the submission
		// can tell, and wgpu-native treats a failed submission as fatal.
		name: "buffer-released-after-pass",
		checked: func(f *guardFixture) error {
			e := f.d.NewEncoder()
			require.NoError(f.t, e.Dispatch(f.p, f.group(), 0, [3]uint32{1, 1, 1}))
			e.EndPass()
			f.a.Release()
			_, err := e.Submit()
			return err
		},
		want: "released after the dispatch was recorded",
		raw: func(f *guardFixture) {
			e := f.d.NewEncoder()
			require.NoError(f.t, e.Dispatch(f.p, f.group(), 0, [3]uint32{1, 1, 1}))
			e.EndPass()
			f.a.Release()
			e.submit()
		},
		panics: "wgpuQueueSubmit",
	},
	{
		name: "copy-buffer-released-before-submit",
		checked: func(f *guardFixture) error {
			e := f.d.NewEncoder()
			require.NoError(f.t, e.Copy(f.a, 0, f.b, 0, 64))
			f.a.Release()
			_, err := e.Submit()
			return err
		},
		want: "a buffer of a recorded copy or resolve was released",
		raw: func(f *guardFixture) {
			e := f.d.NewEncoder()
			require.NoError(f.t, e.Copy(f.a, 0, f.b, 0, 64))
			f.a.Release()
			e.submit()
		},
		panics: "wgpuQueueSubmit",
	},
	{
		name: "released-bind-group",
		checked: func(f *guardFixture) error {
			g := f.group()
			g.Release()
			e := f.d.NewEncoder()
			defer e.Discard()
			return e.Dispatch(f.p, g, 0, [3]uint32{1, 1, 1})
		},
		want: "bind group was already released",
		raw: func(f *guardFixture) {
			g := f.group()
			g.Release()
			e := f.d.NewEncoder()
			e.dispatch(f.p, g, 0, [3]uint32{1, 1, 1})
		},
		panics: "invalid bind group",
	},
	{
		name: "released-pipeline",
		checked: func(f *guardFixture) error {
			g := f.group()
			f.p.Release()
			e := f.d.NewEncoder()
			defer e.Discard()
			return e.Dispatch(f.p, g, 0, [3]uint32{1, 1, 1})
		},
		want: "pipeline was already released",
		raw: func(f *guardFixture) {
			g := f.group()
			f.p.Release()
			e := f.d.NewEncoder()
			e.dispatch(f.p, g, 0, [3]uint32{1, 1, 1})
		},
		panics: "invalid compute pipeline",
	},
	{
		name: "uniform-window-past-end",
		checked: func(f *guardFixture) error {
			e := f.d.NewEncoder()
			defer e.Discard()
			return e.Dispatch(f.p, f.group(), 512, [3]uint32{1, 1, 1})
		},
		want: "uniform window at 512",
	},
	{
		name: "binding-count",
		checked: func(f *guardFixture) error {
			_, err := f.d.CreateBindGroup(f.p, f.u, 16, []Binding{{Buffer: f.a, Size: 64}})
			return err
		},
		want: "has 2 storage bindings, got 1",
	},
	{
		name: "nil-pipeline",
		checked: func(f *guardFixture) error {
			_, err := f.d.CreateBindGroup(nil, f.u, 16, nil)
			return err
		},
		want: "pipeline is nil",
	},
	{
		name: "unknown-usage",
		checked: func(f *guardFixture) error {
			_, err := f.d.CreateBuffer(64, UsageStorage|0x10000)
			return err
		},
		want: "unknown bits",
		raw: func(f *guardFixture) {
			f.d.createBuffer(64, UsageStorage|0x10000)
		},
		panics: "invalid buffer usage",
	},
	{
		name: "zero-byte-buffer",
		checked: func(f *guardFixture) error {
			_, err := f.d.CreateBuffer(0, UsageStorage)
			return err
		},
		want: "buffer of 0 bytes",
	},
	{
		name: "write-to-released-buffer",
		checked: func(f *guardFixture) error {
			f.a.Release()
			return f.d.Write(f.a, 0, make([]byte, 16))
		},
		want: "write destination was already released",
		raw: func(f *guardFixture) {
			f.a.Release()
			f.d.write(f.a, 0, make([]byte, 16))
		},
		panics: "invalid buffer",
	},
	{
		name: "zero-byte-clear",
		checked: func(f *guardFixture) error {
			return f.d.Clear(f.a, 0, 0)
		},
		raw: func(f *guardFixture) {
			f.d.clear(f.a, 0, 0)
		},
		panics: "invalid size",
	},
	{
		name: "read-past-end",
		checked: func(f *guardFixture) error {
			return f.d.Read(f.a, 4000, make([]byte, 128))
		},
		want: "outside a buffer of 4096",
	},
	{
		// Unchecked, wgpu-native drops the copy with a validation error, and without the
		// error scope around it the readback would return stale bytes as if all was well.
		name: "read-without-copysrc",
		checked: func(f *guardFixture) error {
			return f.d.Read(f.u, 0, make([]byte, 16))
		},
		want: "needs CopySrc",
	},
	{
		name: "clear-without-copydst",
		checked: func(f *guardFixture) error {
			return f.d.Clear(f.buffer(256, UsageTimestamps), 0, 16)
		},
		want: "needs CopyDst",
	},
	{
		name: "copy-from-released-buffer",
		checked: func(f *guardFixture) error {
			f.a.Release()
			e := f.d.NewEncoder()
			defer e.Discard()
			return e.Copy(f.a, 0, f.b, 0, 64)
		},
		want: "copy source was already released",
	},
	{
		name: "empty-shader",
		checked: func(f *guardFixture) error {
			_, err := f.d.CreatePipeline("empty", "", 2)
			return err
		},
		want: "empty shader source",
	},
	{
		name: "storage-count-over-limit",
		checked: func(f *guardFixture) error {
			_, err := f.d.CreatePipeline("wide", doubler, 16)
			return err
		},
		want: "16 storage bindings",
	},
	{
		name: "query-set-count",
		checked: func(f *guardFixture) error {
			d, err := f.ad.OpenWithTimestamps()
			require.NoError(f.t, err)
			defer d.Close()
			if !d.Timestamps() {
				return checkQueryCount(5000) // the adapter has no timestamps: the rule alone
			}
			_, err = d.CreateQuerySet(0)
			require.ErrorContains(f.t, err, "0 queries")
			_, err = d.CreateQuerySet(5000)
			return err
		},
		want: "5000 queries",
	},
	{
		name: "foreign-buffer",
		checked: func(f *guardFixture) error {
			d, err := f.ad.Open()
			require.NoError(f.t, err)
			defer d.Close()
			other, err := d.CreateBuffer(64, UsageStorage)
			require.NoError(f.t, err)
			defer other.Release()
			_, err = f.d.CreateBindGroup(f.p, f.u, 16, []Binding{{Buffer: other, Size: 64}, {Buffer: f.b, Size: 64}})
			return err
		},
		want: "belongs to another device",
	},
}

func TestGuard(t *testing.T) {
	mode := childMode()
	for _, c := range guardCases {
		t.Run(c.name, func(t *testing.T) {
			switch mode {
			case "guard-checked":
				f := newGuardFixture(t)
				err := c.checked(f)
				if c.want == "" {
					require.NoError(t, err)
				} else {
					require.ErrorContains(t, err, c.want)
				}
				f.stillWorks()
				t.Log("GUARD-CHECKED-OK")
				return
			case "guard-raw":
				c.raw(newGuardFixture(t))
				t.Log("GUARD-RAW-RETURNED")
				return
			case "":
			default:
				t.Skip("a child for another test")
			}
			pattern := "^TestGuard$/^" + c.name + "$"
			out, code := runChild(t, pattern, "guard-checked")
			if code != 0 || !strings.Contains(out, "GUARD-CHECKED-OK") {
				t.Fatalf("the checked call did not return cleanly (exit %d):\n%s", code, out)
			}
			if c.raw == nil {
				return
			}
			out, code = runChild(t, pattern, "guard-raw")
			if code == 0 || strings.Contains(out, "GUARD-RAW-RETURNED") {
				t.Fatalf("the unchecked call was expected to abort the process, it did not (exit %d):\n%s", code, out)
			}
			if !strings.Contains(out, c.panics) {
				t.Fatalf("the unchecked call aborted (exit %d) without the expected %q:\n%s", code, c.panics, out)
			}
		})
	}
}

// TestNilAndReleased calls every method with nil and released objects in this process:
// each must return an error (or do nothing), never crash.
func TestNilAndReleased(t *testing.T) {
	var nd *Device
	_, err := nd.CreateBuffer(64, UsageStorage)
	require.ErrorContains(t, err, "nil device")
	require.Error(t, nd.Write(nil, 0, []byte{1, 2, 3, 4}))
	require.Error(t, nd.Clear(nil, 0, 4))
	require.Error(t, nd.Read(nil, 0, make([]byte, 4)))
	require.Error(t, nd.Wait(1))
	require.Error(t, nd.WaitIdle())
	_, err = nd.CreatePipeline("x", doubler, 2)
	require.Error(t, err)
	_, err = nd.CreateBindGroup(nil, nil, 16, nil)
	require.Error(t, err)
	_, err = nd.CreateQuerySet(2)
	require.Error(t, err)
	require.NoError(t, nd.Lost())
	require.False(t, nd.Timestamps())
	require.Zero(t, nd.Completed())
	require.Zero(t, nd.Submitted())
	nd.Close()
	_, err = nd.NewEncoder().Submit()
	require.Error(t, err)

	var ne *Encoder
	require.Error(t, ne.Dispatch(nil, nil, 0, [3]uint32{1, 1, 1}))
	require.Error(t, ne.DispatchTimed(nil, 0, nil, nil, 0, [3]uint32{1, 1, 1}))
	require.Error(t, ne.Copy(nil, 0, nil, 0, 4))
	require.Error(t, ne.Resolve(nil, 0, 2, nil, 0))
	_, err = ne.Submit()
	require.Error(t, err)
	ne.EndPass()
	ne.Discard()
	(*Buffer)(nil).Release()
	(*BindGroup)(nil).Release()
	(*Pipeline)(nil).Release()
	(*QuerySet)(nil).Release()
	require.False(t, (*Buffer)(nil).Alive())
	_, err = (*Adapter)(nil).Open()
	require.Error(t, err)
	require.Nil(t, (*Instance)(nil).Adapters())

	d := openFirst(t)
	p, err := d.CreatePipeline("doubler", doubler, 2)
	require.NoError(t, err)
	u, err := d.CreateBuffer(512, UsageUniform)
	require.NoError(t, err)
	a, err := d.CreateBuffer(64, UsageStorage)
	require.NoError(t, err)
	a.Release()
	a.Release() // twice is fine
	require.ErrorContains(t, d.Write(a, 0, make([]byte, 4)), "released")
	require.ErrorContains(t, d.Clear(a, 0, 4), "released")
	require.ErrorContains(t, d.Read(a, 0, make([]byte, 4)), "released")
	require.ErrorContains(t, d.Write(nil, 0, make([]byte, 4)), "nil")
	_, err = d.CreateBindGroup(p, nil, 16, []Binding{{Buffer: u, Size: 64}, {Buffer: u, Size: 64}})
	require.ErrorContains(t, err, "uniform buffer is nil")
	e := d.NewEncoder()
	require.ErrorContains(t, e.Dispatch(nil, nil, 0, [3]uint32{1, 1, 1}), "nil")
	require.ErrorContains(t, e.Copy(a, 0, u, 0, 4), "released")
	_, err = e.Submit()
	require.NoError(t, err) // nothing recorded: an empty submission
	_, err = e.Submit()
	require.ErrorContains(t, err, "already submitted")
	require.ErrorContains(t, e.Dispatch(p, nil, 0, [3]uint32{1, 1, 1}), "already submitted")
	require.ErrorContains(t, d.Wait(d.Submitted()+1), "only")
	require.NoError(t, d.Lost())
	n, msg := d.Errors()
	require.Equal(t, 0, n, msg)

	d.Close()
	d.Close() // twice is fine
	_, err = d.CreateBuffer(64, UsageStorage)
	require.ErrorContains(t, err, "closed")
	require.ErrorContains(t, d.WaitIdle(), "closed")
	_, err = d.NewEncoder().Submit()
	require.ErrorContains(t, err, "closed")
	u.Release()
	p.Release()
}
