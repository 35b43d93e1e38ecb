package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// perfFFNGateCases are llama's feed-forward gate as a decode runs it, the largest share of
// a decode token: the gate and up projections of one activation and their SWIGLU
// (silu(gate) * up), with weights beyond the L2 cache (copies, as in perfMulMatCold). A
// backend may run the three nodes as one (ours does, ggml-vulkan runs two mat-vecs and
// the GLU); the figures are per repetition of all three.
func perfFFNGateCases() []*PerfCase {
	var cs []*PerfCase
	for _, ta := range []tensor.Type{tensor.F16, tensor.Q4_0, tensor.Q4_K, tensor.Q6_K, tensor.Q8_0} {
		for _, km := range [][2]int64{{2048, 8192}, {4096, 14336}} {
			cs = append(cs, perfFFNGate(ta, km[0], km[1], 1))
		}
	}
	for _, n := range []int64{2, 4, 8} {
		cs = append(cs, perfFFNGate(tensor.Q4_K, 4096, 14336, n))
	}
	// the 1B's gate by several sequences
	for _, n := range []int64{4, 8} {
		cs = append(cs, perfFFNGate(tensor.Q4_0, 2048, 8192, n))
	}
	return cs
}

// perfFFNGate: SWIGLU(W_gate x, W_up x) for weights [k, m] of type ta and activations
// [k, n], each repetition on its own copy of the weights and activations.
func perfFFNGate(ta tensor.Type, k, m, n int64) *PerfCase {
	return &PerfCase{
		Name:  fmt.Sprintf("FFN_GATE(type_a=%s,type_b=f32,m=%d,n=%d,k=%d,weights=cold)", ta, m, n, k),
		Op:    "FFN_GATE",
		Chain: true,
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			// The weights' copies are leaves of their own, as a model's are: views would
			// sit between the two products in the graph's order (the activations' views
			// come before both).
			copies := coldCopies(ta, k, m, 2)
			x := b.copies("x", f32, k, n, copies)
			var gate, up []ggml.Tensor
			i := uint64(0)
			return func() ggml.Tensor {
				c := i % copies
				i++
				if c == uint64(len(gate)) {
					gate = append(gate, b.New(fmt.Sprint("gate", c), ta, k, m))
					up = append(up, b.New(fmt.Sprint("up", c), ta, k, m))
				}
				xc := x(c)
				return b.L.SwiGLUSplit(b.Ctx, b.L.MulMat(b.Ctx, gate[c], xc), b.L.MulMat(b.Ctx, up[c], xc))
			}
		},
	}
}
