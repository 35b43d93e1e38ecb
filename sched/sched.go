// Package sched turns a linearized ggml graph into an execution plan: it skips nodes that
// need no work, lowers the rest into dispatches through ops, and cuts the dispatch stream
// into submissions so the GPU starts early. It knows nothing of WGSL or GPU objects: a
// Launcher encodes and submits.
package sched

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/ops"
)

// Step is one dispatch of the plan and the node it computes.
type Step struct {
	Node     *ops.Tensor
	Dispatch ops.Dispatch
}

// Plan is the ordered work of one graph.
type Plan struct {
	Steps []Step
	// Skipped counts nodes that needed no dispatch; Fused counts fused pairs.
	Skipped, Fused int
}

// readCounts counts, for every tensor, how many nodes read it as a source.
func readCounts(nodes []*ops.Tensor) map[*ops.Tensor]int {
	r := map[*ops.Tensor]int{}
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
func private(n *ops.Tensor, readers map[*ops.Tensor]int) bool {
	return readers[n] == 1 && n.Flags&ops.FlagOutput == 0
}

// Skip reports whether a node needs no work: not marked for computation, empty, or a view.
func Skip(n *ops.Tensor) bool {
	return n.Flags&ops.FlagCompute == 0 || n.Empty() || n.Op.IsView()
}

// Build lowers every node that needs work, fusing patterns where their intermediate
// result is read by nothing else. An unsupported node fails the whole plan before
// anything is submitted.
func Build(nodes []*ops.Tensor, l *ops.Limits) (*Plan, error) {
	p := &Plan{}
	readers := readCounts(nodes)
	for i := 0; i < len(nodes); i++ {
		n := nodes[i]
		if Skip(n) {
			p.Skipped++
			continue
		}
		if i+2 < len(nodes) && private(n, readers) && private(nodes[i+1], readers) && nodes[i+1].Op == ops.OpPermute && !Skip(nodes[i+2]) {
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

// Launcher records dispatches into the open submission and submits it.
type Launcher interface {
	// Launch records the dispatch of step i. It returns ErrBatchFull when the open
	// submission cannot take more (its parameter slots ran out); the plan then submits and
	// retries.
	Launch(i int) error
	// Submit sends the open submission to the GPU without waiting for it.
	Submit() error
}

// ErrBatchFull is returned by Launch when the open submission is full.
var ErrBatchFull = fmt.Errorf("sched: submission full")

// Run records the plan's steps, submitting every perSubmit dispatches and at the end.
func (p *Plan) Run(l Launcher, perSubmit int) error {
	if perSubmit <= 0 {
		perSubmit = 1
	}
	n := 0
	for i := range p.Steps {
		err := l.Launch(i)
		if err == ErrBatchFull {
			if err = l.Submit(); err == nil {
				n = 0
				err = l.Launch(i)
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p.Steps[i].Node.Name, err)
		}
		if n++; n == perSubmit {
			if err := l.Submit(); err != nil {
				return err
			}
			n = 0
		}
	}
	if n > 0 {
		return l.Submit()
	}
	return nil
}
