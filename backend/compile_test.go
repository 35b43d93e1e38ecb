package backend

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
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
