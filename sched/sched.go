// Package sched turns a linearized ggml graph into an execution plan: it skips nodes that
// need no work, fuses patterns (the table in ops), lowers the rest into dispatches through
// ops, and cuts the dispatch stream into submissions so the GPU starts early. It knows
// nothing of WGSL text or GPU objects; the executor records the plan.
package sched

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// Step is one dispatch of the plan and the node it computes.
type Step struct {
	Node     *tensor.Tensor
	Dispatch ops.Dispatch
	// Submit ends a submission after this step.
	Submit bool
}

// Plan is the ordered work of one graph.
type Plan struct {
	Steps []Step
	// Skipped counts nodes that needed no dispatch; Fused counts fused pairs.
	Skipped, Fused int
}

// readCounts counts, for every tensor, how many nodes read it as a source.
func readCounts(nodes []*tensor.Tensor) map[*tensor.Tensor]int {
	r := map[*tensor.Tensor]int{}
	for _, n := range nodes {
		for _, s := range n.Src {
			if s != nil {
				r[s]++
			}
		}
	}
	return r
}

// private reports whether n's result is an intermediate that exactly one node reads and
// the host does not want back, so a fused kernel need not write it.
func private(n *tensor.Tensor, readers map[*tensor.Tensor]int) bool {
	return readers[n] == 1 && n.Flags&tensor.FlagOutput == 0
}

// Skip reports whether a node needs no work: not marked for computation, empty, or a view.
func Skip(n *tensor.Tensor) bool {
	return n.Flags&tensor.FlagCompute == 0 || n.Empty() || n.Op.IsView()
}

// Build lowers every node that needs work, fusing patterns where their intermediate
// result is read by nothing else. An unsupported node fails the whole plan before
// anything is submitted.
func Build(nodes []*tensor.Tensor, l *ops.Limits) (*Plan, error) {
	p := &Plan{}
	readers := readCounts(nodes)
	for i := 0; i < len(nodes); i++ {
		n := nodes[i]
		if Skip(n) {
			p.Skipped++
			continue
		}
		if i+2 < len(nodes) && private(n, readers) && private(nodes[i+1], readers) && nodes[i+1].Op == tensor.OpPermute && !Skip(nodes[i+2]) {
			if ds, ok := ops.LowerMulMatPermuteCont(n, nodes[i+1], nodes[i+2], l); ok {
				for _, d := range ds {
					p.Steps = append(p.Steps, Step{Node: nodes[i+2], Dispatch: d})
				}
				p.Fused++
				p.Skipped++
				i += 2
				continue
			}
		}
		if i+2 < len(nodes) && private(n, readers) && private(nodes[i+1], readers) && !Skip(nodes[i+1]) && !Skip(nodes[i+2]) {
			if ds, ok := ops.LowerMatVecGLU(n, nodes[i+1], nodes[i+2], l); ok {
				for _, d := range ds {
					p.Steps = append(p.Steps, Step{Node: nodes[i+2], Dispatch: d})
				}
				p.Fused++
				i += 2
				continue
			}
		}
		if i+1 < len(nodes) && private(n, readers) && !Skip(nodes[i+1]) {
			if ds, ok := ops.LowerNormMul(n, nodes[i+1], l); ok {
				for _, d := range ds {
					p.Steps = append(p.Steps, Step{Node: nodes[i+1], Dispatch: d})
				}
				p.Fused++
				i++
				continue
			}
		}
		ds, err := ops.Lower(n, l)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		for _, d := range ds {
			p.Steps = append(p.Steps, Step{Node: n, Dispatch: d})
		}
	}
	return p, nil
}

// Cut marks a submission boundary after every perSubmit steps (and never before the
// first), so the GPU starts on the first part of a graph while the rest is recorded.
func (p *Plan) Cut(perSubmit int) {
	if perSubmit <= 0 {
		perSubmit = 1
	}
	for i := range p.Steps {
		p.Steps[i].Submit = (i+1)%perSubmit == 0
	}
}
