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
	// Skipped counts nodes that needed no dispatch.
	Skipped int
}

// Skip reports whether a node needs no work: not marked for computation, empty, or a view.
func Skip(n *ops.Tensor) bool {
	return n.Flags&ops.FlagCompute == 0 || n.Empty() || n.Op.IsView()
}

// Build lowers every node that needs work. An unsupported node fails the whole plan
// before anything is submitted.
func Build(nodes []*ops.Tensor, l *ops.Limits) (*Plan, error) {
	p := &Plan{}
	for i, n := range nodes {
		if Skip(n) {
			p.Skipped++
			continue
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
