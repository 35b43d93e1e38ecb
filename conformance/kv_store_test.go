package conformance

import (
	"strings"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/sched"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// graphTensors reads the nodes of a ggml graph as the library sees them (capi's reader):
// types, shapes, strides, ops, params, flags, sources, and the place of each tensor's data
// (its buffer, a view's that of the tensor it views, and its address).
func graphTensors(l *ggml.Lib, g ggml.Graph) []*tensor.Tensor {
	seen := map[ggml.Tensor]*tensor.Tensor{}
	var read func(t ggml.Tensor) *tensor.Tensor
	read = func(t ggml.Tensor) *tensor.Tensor {
		if t == 0 {
			return nil
		}
		if r, ok := seen[t]; ok {
			return r
		}
		r := &tensor.Tensor{Type: t.Type(), Ne: t.Ne(), Nb: t.Nb(), Op: t.Op(), Flags: tensor.Flag(t.Flags()), Name: t.Name()}
		seen[t] = r
		for i := range r.Params {
			r.Params[i] = t.OpParamI32(i)
		}
		buf := t.Buffer()
		if v := t.ViewSrc(); v != 0 {
			buf = v.Buffer()
		}
		if buf != 0 && t.Data() != 0 {
			r.Loc = tensor.Loc{Buffer: uint64(buf), Addr: uint64(t.Data())}
		}
		for i := range r.Src {
			r.Src[i] = read(t.Src(i))
		}
		return r
	}
	nodes := make([]*tensor.Tensor, l.GraphNNodes(g))
	for i := range nodes {
		nodes[i] = read(l.GraphNode(g, i))
	}
	return nodes
}

// fusedOps names a fused step's pattern by the ops of its nodes that do work, e.g.
// ROPE+SET_ROWS+SET_ROWS.
func fusedOps(l *ggml.Lib, nodes []*tensor.Tensor) string {
	var names []string
	for _, n := range nodes {
		if !n.Op.IsView() {
			names = append(names, l.OpName(n.Op))
		}
	}
	return strings.Join(names, "+")
}

// TestKVStoreFuses runs the KV_STORE cases on WGPU0 and plans each case's graph (as
// allocated on the device) with the library's scheduler: the K store must be fused with
// its rope (and V's store beside it where the case says so), no ROPE left on its own, and
// the results must match the CPU backend.
func TestKVStoreFuses(t *testing.T) {
	env := openTestEnv(t)
	want := map[string]string{"rope+set_rows": "ROPE+SET_ROWS", "rope+set_rows+set_rows": "ROPE+SET_ROWS+SET_ROWS",
		"rope+rope+set_rows+set_rows": "ROPE+ROPE+SET_ROWS+SET_ROWS"}
	limits := &ops.Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	for _, s := range kvStoreSpecs() {
		c := kvStoreCase(s)
		t.Run(c.Name, func(t *testing.T) {
			var plan *sched.Plan
			var planErr error
			env.Runner.Inspect = func(_ *Case, g ggml.Graph) {
				plan, planErr = sched.Build(graphTensors(env.L, g), limits)
			}
			defer func() { env.Runner.Inspect = nil }()
			r := env.Runner.Run(c)
			require.Equal(t, Passed, r.Status, r.Msg)
			require.NoError(t, planErr)
			require.NotNil(t, plan, "the graph was not inspected")
			var fused []string
			for _, st := range plan.Steps {
				require.NotEqual(t, tensor.OpRope, st.Node.Op, "a ROPE left unfused")
				// (V's and K's matmuls may pair up as well: only the rope rows count here)
				if st.Fused != nil && st.Fused[0].Op == tensor.OpRope {
					fused = append(fused, fusedOps(env.L, st.Fused))
				}
			}
			require.Equal(t, []string{want[s.fused]}, fused)
		})
	}
}
