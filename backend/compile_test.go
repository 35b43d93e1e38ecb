package backend

import (
	"encoding/binary"
	"math"
	"regexp"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
	"github.com/stretchr/testify/require"
)

// TestReadOnlyOperands: an operand the kernel only reads is bound read-only exactly when no
// written operand of the dispatch binds its buffer, and the plan's spec is left as it was.
func TestReadOnlyOperands(t *testing.T) {
	weights, compute := &gpu.Buffer{}, &gpu.Buffer{}
	spec := &wgsl.Spec{Kernel: "k", Operands: []wgsl.Operand{
		{Name: "src0", Type: wgsl.Q4_K}, {Name: "src1", Type: wgsl.F32}, {Name: "dst", Type: wgsl.F32, Written: true}}}
	ro := func(s *wgsl.Spec) []bool {
		var out []bool
		for _, o := range s.Operands {
			out = append(out, o.ReadOnly)
		}
		return out
	}

	// a model's mat-vec: weights apart, the activation beside the output
	got := readOnlyOperands(spec, []gpu.Binding{{Buffer: weights}, {Buffer: compute}, {Buffer: compute}})
	require.Equal(t, []bool{true, false, false}, ro(got))
	require.Equal(t, uint32(1), got.ReadOnly())
	require.Equal(t, []bool{false, false, false}, ro(spec), "the plan's spec is not changed")

	// everything in one buffer: nothing read-only, the same spec
	require.Same(t, spec, readOnlyOperands(spec, []gpu.Binding{{Buffer: compute}, {Buffer: compute}, {Buffer: compute}}))

	// both inputs apart, even sharing their buffer
	got = readOnlyOperands(spec, []gpu.Binding{{Buffer: weights}, {Buffer: weights}, {Buffer: compute}})
	require.Equal(t, []bool{true, true, false}, ro(got))

	// the output in the weights' buffer (a copy into a cache, say): only the other input
	got = readOnlyOperands(spec, []gpu.Binding{{Buffer: weights}, {Buffer: compute}, {Buffer: weights}})
	require.Equal(t, []bool{false, true, false}, ro(got))
}

// TestAblate: with EnvAblate's pattern over the profile's names (stepLabel), a matching
// dispatch runs one workgroup (the first rows of a mat-vec are computed, the last left as
// they were) and other graphs are untouched; an empty or invalid pattern ablates nothing.
func TestAblate(t *testing.T) {
	ablatePattern := func(v string) *regexp.Regexp { return profilePattern(EnvAblate, v, "run one workgroup") }
	require.Nil(t, ablatePattern(""))
	require.Nil(t, ablatePattern("mul_mat_vec["), "not a regular expression: ignored")
	require.True(t, ablatePattern("^mm mul_mat").MatchString("mm mul_mat_vec8"))
	// patterns name dispatches as the profile lists them: llama's layer suffix removed
	require.Equal(t, "ffn_out mul_mat_vec_q6k", stepLabel("ffn_out-17", "mul_mat_vec_q6k"))
	require.True(t, ablatePattern("^ffn_out mul_mat_vec_q6k$").MatchString(stepLabel("ffn_out-3", "mul_mat_vec_q6k")))
	require.Equal(t, "node_12 flash_attn", stepLabel("node_12", "flash_attn"), "no layer suffix")

	d := firstDevice(t)
	setAblate := patternSetter(d, &d.ablate, EnvAblate, "run one workgroup")
	defer setAblate("")
	got, g, n := profiledMulMat(t, d, setAblate)
	require.Equal(t, 1, n)
	first := math.Float32frombits(binary.LittleEndian.Uint32(got))
	last := math.Float32frombits(binary.LittleEndian.Uint32(got[len(got)-4:]))
	require.InDelta(t, g.want[0], first, 1e-3*(1+math.Abs(g.want[0])), "the one workgroup's rows")
	require.NotZero(t, g.want[len(g.want)-1])
	require.Zero(t, last, "the rows of the workgroups left out are not written")
}

// TestSkip: with EnvSkip's pattern, a matching dispatch is left out of the graph (its
// result keeps what its memory held), and other graphs are untouched.
func TestSkip(t *testing.T) {
	d := firstDevice(t)
	setSkip := patternSetter(d, &d.skip, EnvSkip, "are left out")
	defer setSkip("")
	got, g, n := profiledMulMat(t, d, setSkip)
	require.NotZero(t, g.want[0])
	require.Equal(t, make([]byte, len(got)), got, "nothing written")
	require.Zero(t, n, "no dispatch")
}

// patternSetter returns a function that sets *field, one of d's profiling patterns, to
// the pattern of env's value v.
func patternSetter(d *Device, field **regexp.Regexp, env, what string) func(v string) {
	return func(v string) {
		d.mu.Lock()
		defer d.mu.Unlock()
		*field = profilePattern(env, v, what)
	}
}

// profiledMulMat runs a mat-vec graph (node "mm") with set's pattern "^mm " and returns
// its result, written over zeros, the graph and the dispatches that ran; it then checks
// that a pattern that matches nothing ("^other ") leaves the product whole.
func profiledMulMat(t *testing.T, d *Device, set func(string)) ([]byte, *mulMatGraph, int) {
	t.Helper()
	set("^mm ")
	b, err := NewBackend(d)
	require.NoError(t, err)
	defer b.Close()
	g := newMulMatGraph(t, d, 4096, 1, 64, 3)
	off := g.dst.Loc.Addr - g.buf.Base()
	require.NoError(t, g.buf.Memset(off, g.dst.Extent(), 0))
	require.NoError(t, b.Compute([]byte("profiled"), func() []*tensor.Tensor { return []*tensor.Tensor{g.dst} }))
	require.NoError(t, b.Synchronize())
	got := make([]byte, g.dst.Extent())
	require.NoError(t, g.buf.Read(off, got))
	dispatches := b.Stats().Dispatches

	set("^other ")
	c, err := NewBackend(d)
	require.NoError(t, err)
	defer c.Close()
	g.compute(t, c, "whole") // a pattern that matches nothing: the product is right
	return got, g, dispatches
}

// A graph recorded ahead goes in one command buffer after its first part on a GPU, in
// command buffers of the batch on a CPU driver, or of GGML_WGPU_RECORD_BATCH's.
func TestRecordingBatch(t *testing.T) {
	gpu := &Backend{Dev: &Device{}, batch: defaultBatch}
	require.Equal(t, 149, gpu.recordingBatch(149))
	require.Equal(t, 1, gpu.recordingBatch(0))
	cpu := &Backend{Dev: &Device{software: true}, batch: defaultBatch}
	require.Equal(t, defaultBatch, cpu.recordingBatch(149))
	set := &Backend{Dev: &Device{}, batch: defaultBatch, recordBatch: 32}
	require.Equal(t, 32, set.recordingBatch(149))
}
