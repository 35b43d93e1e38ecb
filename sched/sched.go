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
	// Fused are the nodes of the fused pattern the step computes (Node is the last), nil
	// for a step of one node.
	Fused []*tensor.Tensor
	// Written are the results of Fused that the step's pattern stores (ops.Fusion.Written:
	// the last node's, and the intermediate results other nodes read), nil for a step of
	// one node.
	Written []*tensor.Tensor
}

// Plan is the ordered work of one graph.
type Plan struct {
	Steps []Step
	// Skipped counts nodes that needed no dispatch (a view inside a fused pattern too);
	// Fused counts fused patterns.
	Skipped, Fused int
	// Rows counts the fused patterns by fusion row name. Refused counts, by "row: reason",
	// the places where a row's ops matched the graph but the row was not taken: the graph
	// (a result it would keep private is read elsewhere, or lies over a live source) or the
	// row's guard (layouts, types, overlapping results, device limits) ruled it out. A
	// profile reports both, so that a fusion missing on one device can be told apart.
	Rows, Refused map[string]int
}

// refuse counts a row whose ops matched at some node but which was not taken, and why.
func (p *Plan) refuse(f *ops.Fusion, why string) {
	if p.Refused == nil {
		p.Refused = map[string]int{}
	}
	p.Refused[f.Name+": "+why]++
}

// reads is what the graph says of who reads each tensor.
type reads struct {
	// count is how many nodes read the tensor as a source.
	count map[*tensor.Tensor]int
	// last is the position of the last node that reads the tensor, directly or through
	// views of it (a view read later keeps its source's memory live).
	last map[*tensor.Tensor]int
}

// graphReads counts, for every tensor, the nodes that read it, and finds the last one.
func graphReads(nodes []*tensor.Tensor) reads {
	n := 2 * len(nodes) // about the tensors read: the nodes and the weights and inputs
	r := reads{count: make(map[*tensor.Tensor]int, n), last: make(map[*tensor.Tensor]int, n)}
	for i, n := range nodes {
		for _, s := range n.Src {
			if s != nil {
				r.count[s]++
				r.last[s] = i
			}
		}
	}
	// A view comes after its source: backwards, a chain of views hands its last read down.
	for i := len(nodes) - 1; i >= 0; i-- {
		if v := nodes[i]; v.Op.IsView() && v.Src[0] != nil {
			if l, ok := r.last[v]; ok && l > r.last[v.Src[0]] {
				r.last[v.Src[0]] = l
			}
		}
	}
	return r
}

// private reports whether n's result is an intermediate that exactly one node reads and
// the host does not want back, so a fused kernel need not write it.
func private(n *tensor.Tensor, r reads) bool {
	return r.count[n] == 1 && n.Flags&tensor.FlagOutput == 0
}

// Skip reports whether a node needs no work: not marked for computation, empty, or a view.
func Skip(n *tensor.Tensor) bool {
	return n.Flags&tensor.FlagCompute == 0 || n.Empty() || n.Op.IsView()
}

// Build lowers every node that needs work, fusing patterns (the rows of ops.Fusions) where
// their intermediate results are read by nothing else, after moving nodes down where that
// lets a row marked Sink match (sink.go). An unsupported node fails the whole plan before
// anything is submitted.
func Build(nodes []*tensor.Tensor, l *ops.Limits) (*Plan, error) {
	p := &Plan{}
	nodes = sink(nodes, l, placedShare)
	readers := graphReads(nodes)
	for i := 0; i < len(nodes); i++ {
		n := nodes[i]
		if Skip(n) {
			p.Skipped++
			continue
		}
		k, err := p.fuse(nodes, i, readers, l)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		if k > 0 {
			i += k - 1
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

// fuse lowers the first fusion row that applies to the nodes starting at nodes[i] and
// returns how many nodes it covered (0: none applies). The dispatches compute the last
// node and store every result the row does not keep private (ops.Fusion.Written), so
// later nodes and the host read them as if each node had run; the nodes of the match that
// need no work (views) count as skipped.
func (p *Plan) fuse(nodes []*tensor.Tensor, i int, readers reads, l *ops.Limits) (int, error) {
	fusions := ops.Fusions()
	for r := range fusions {
		f := &fusions[r]
		if i+len(f.Ops) > len(nodes) {
			continue
		}
		match := nodes[i : i+len(f.Ops)]
		if !f.Matches(match) {
			continue
		}
		if why := unfusable(f, match, i, readers); why != "" {
			p.refuse(f, why)
			continue
		}
		if !f.Guard(match, l) {
			p.refuse(f, "guard")
			continue
		}
		ds, err := f.Lower(match, l)
		if err != nil {
			return 0, fmt.Errorf("fusion %s: %w", f.Name, err)
		}
		written := f.Written(match)
		for _, t := range written {
			if !writes(ds, t) {
				return 0, fmt.Errorf("fusion %s: the lowering does not store %s's result", f.Name, t.Op)
			}
		}
		last := match[len(match)-1]
		for _, d := range ds {
			p.Steps = append(p.Steps, Step{Node: last, Dispatch: d, Fused: match, Written: written})
		}
		p.Fused++
		if p.Rows == nil {
			p.Rows = map[string]int{}
		}
		p.Rows[f.Name]++
		for _, n := range match {
			if Skip(n) {
				p.Skipped++
			}
		}
		return len(match), nil
	}
	return 0, nil
}

// fusable checks what only the graph tells about a candidate match: every node but views
// needs work, and the result of each of the row's private positions is private, read by a
// later node of the match (so by nothing outside it), and not in place of a source that
// later nodes still read.
func fusable(f *ops.Fusion, match []*tensor.Tensor, at int, readers reads) bool {
	return unfusable(f, match, at, readers) == ""
}

// unfusable is fusable's answer with its reason: "" where the match is fusable.
func unfusable(f *ops.Fusion, match []*tensor.Tensor, at int, readers reads) string {
	for _, n := range match {
		if Skip(n) && !n.Op.IsView() {
			return "a node needs no work"
		}
	}
	for _, k := range f.Private {
		switch {
		case !private(match[k], readers):
			return fmt.Sprintf("%s's result is read outside the match", match[k].Op)
		case !readBy(match[k], match[k+1:]):
			return fmt.Sprintf("%s's result is not read by the match", match[k].Op)
		case overwritesLive(match[k], match, at+len(match)-1, readers):
			return fmt.Sprintf("%s's result lies over a live source", match[k].Op)
		}
	}
	for _, k := range f.Consumes {
		n := match[k]
		if s := n.Src[0]; s != nil && sharesMemory(n, s) && !soleReader(s, readers) {
			return fmt.Sprintf("%s lies over a source read elsewhere", n.Op)
		}
	}
	return ""
}

// soleReader reports whether the one node that reads s is all that reads its memory: s is
// computed in the graph (not a weight or an input), no graph output, read by one node,
// and, if it is a view, so is every tensor down to the one whose memory it is.
func soleReader(s *tensor.Tensor, readers reads) bool {
	for {
		if s.Op == tensor.OpNone || readers.count[s] != 1 || s.Flags&tensor.FlagOutput != 0 {
			return false
		}
		if !s.Op.IsView() {
			return true
		}
		if s = s.Src[0]; s == nil {
			return false
		}
	}
}

// overwritesLive reports whether the private result r shares memory with a source of the
// match that is still live after it (the match ends at node position end): read by a
// later node, or a graph output. ggml stores r there (an in-place node, such as
// ggml_rms_norm_inplace over a sum that is read again); the fused kernel does not, so the
// later readers would see other values. Only sources can be aliased so: ggml-alloc places
// a result over memory that is dead (a source whose last reader it is, or a freed tensor),
// and an explicit in-place node over its own source; a fusion may keep a result private
// over dead memory.
func overwritesLive(r *tensor.Tensor, match []*tensor.Tensor, end int, readers reads) bool {
	for _, n := range match {
		for _, s := range n.Src {
			if s == nil || s == r || !sharesMemory(r, s) {
				continue
			}
			if readers.last[s] > end || s.Flags&tensor.FlagOutput != 0 {
				return true
			}
		}
	}
	return false
}

// sharesMemory reports whether the bytes of two placed tensors intersect.
func sharesMemory(a, b *tensor.Tensor) bool {
	if a.Loc.Buffer == 0 || a.Loc.Buffer != b.Loc.Buffer || a.Empty() || b.Empty() {
		return false
	}
	return a.Loc.Addr < b.Loc.Addr+b.Extent() && b.Loc.Addr < a.Loc.Addr+a.Extent()
}

// writes reports whether one of the dispatches binds t as a written operand.
func writes(ds []ops.Dispatch, t *tensor.Tensor) bool {
	for _, d := range ds {
		for j, o := range d.Spec.Operands {
			if o.Written && j < len(d.Tensors) && d.Tensors[j] == t {
				return true
			}
		}
	}
	return false
}

// readBy reports whether one of the nodes reads t.
func readBy(t *tensor.Tensor, nodes []*tensor.Tensor) bool {
	for _, n := range nodes {
		for _, s := range n.Src {
			if s == t {
				return true
			}
		}
	}
	return false
}

// firstSubmit is the steps of a graph's first submission; each next one doubles, up to
// Cut's perSubmit. The GPU is idle until the first arrives: on an H100 a 1B model's
// decode graph (164 dispatches, ~0.65 ms to record) went from 393 to 410-428 tokens/s
// when the first of its 64-dispatch submissions became 4, 8, 16, 32, 64.
const firstSubmit = 4

// Cut marks submission boundaries (never before the first step), so the GPU starts on
// the first part of a graph while the rest is recorded: after firstSubmit steps, then
// after twice as many more, and so on up to perSubmit steps per submission.
func (p *Plan) Cut(perSubmit int) {
	if perSubmit <= 0 {
		perSubmit = 1
	}
	n := min(firstSubmit, perSubmit)
	next := n
	for i := range p.Steps {
		p.Steps[i].Submit = i+1 == next
		if p.Steps[i].Submit {
			n = min(2*n, perSubmit)
			next += n
		}
	}
}
