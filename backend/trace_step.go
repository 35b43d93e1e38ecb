package backend

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/sched"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// traceStep is what a trace says of one dispatch of a compiled plan, made once per plan.
type traceStep struct {
	// name is the node's op (its unary or GLU op for those), e.g. MUL_MAT, SILU; a fused
	// pattern's ops joined by "+", e.g. RMS_NORM+MUL.
	name string
	args string // JSON members of the event's arguments after the graph index
}

// traceOperand is a tensor as a trace's arguments show it.
type traceOperand struct {
	Type string   `json:"type"`
	Ne   [4]int64 `json:"ne"`
}

// traceStepArgs are a dispatch's arguments. Bytes and FLOP are the node's (ops.Cost, or
// ops.CostFused for a fused pattern),
// carried by its first dispatch; Dispatch says which of the node's dispatches this is.
type traceStepArgs struct {
	Node     string                  `json:"node"`
	Kernel   string                  `json:"kernel"`
	Variant  string                  `json:"variant"`
	Dispatch string                  `json:"dispatch"`
	Grid     [3]uint32               `json:"grid"`
	Shapes   map[string]traceOperand `json:"shapes"`
	Bytes    uint64                  `json:"bytes"`
	Flop     uint64                  `json:"flop"`
}

// traceSteps describes every step of a plan for the trace.
func traceSteps(p *sched.Plan) []*traceStep {
	out := make([]*traceStep, len(p.Steps))
	for i := 0; i < len(p.Steps); {
		j := i + 1
		for j < len(p.Steps) && p.Steps[j].Node == p.Steps[i].Node {
			j++
		}
		st := &p.Steps[i]
		bytes, flop := ops.Cost(st.Node)
		name := opName(st.Node)
		if st.Fused != nil {
			bytes, flop = ops.CostFused(st.Fused, st.Written)
			name = fusedName(st.Fused)
		}
		for k := i; k < j; k++ {
			a := stepArgs(&p.Steps[k])
			a.Dispatch = fmt.Sprintf("%d/%d", k-i+1, j-i)
			if k == i {
				a.Bytes, a.Flop = bytes, flop
			}
			raw, err := json.Marshal(a)
			if err != nil { // only plain strings and numbers: cannot happen
				raw = []byte(`{}`)
			}
			// The object's members without its braces, to follow the graph index.
			out[k] = &traceStep{name: name, args: string(raw[1 : len(raw)-1])}
		}
		i = j
	}
	return out
}

func stepArgs(s *sched.Step) traceStepArgs {
	n, sp := s.Node, s.Dispatch.Spec
	a := traceStepArgs{Node: n.Name, Kernel: sp.Kernel, Grid: s.Dispatch.Grid, Shapes: map[string]traceOperand{}}
	var v []string
	keys := make([]string, 0, len(sp.Defines))
	for k := range sp.Defines {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v = append(v, k+"="+sp.Defines[k])
	}
	for _, o := range sp.Operands {
		v = append(v, o.Name+":"+o.Type.String())
	}
	a.Variant = strings.Join(v, " ")
	a.Shapes["dst"] = traceOperand{n.Type.String(), n.Ne}
	for i, src := range n.Src {
		if src != nil {
			a.Shapes[fmt.Sprintf("src%d", i)] = traceOperand{src.Type.String(), src.Ne}
		}
	}
	return a
}

// fusedName names a fused pattern by the ops of its nodes that do work, e.g. RMS_NORM+MUL.
func fusedName(nodes []*tensor.Tensor) string {
	var names []string
	for _, n := range nodes {
		if !n.Op.IsView() && n.Op != tensor.OpNone {
			names = append(names, opName(n))
		}
	}
	return strings.Join(names, "+")
}

// opName is ggml's op description: the op, or the unary or GLU op of those nodes.
func opName(n *tensor.Tensor) string {
	switch n.Op {
	case tensor.OpUnary:
		return tensor.UnaryOp(n.Params[0]).String()
	case tensor.OpGLU:
		return tensor.GLUOp(n.Params[0]).String()
	}
	return n.Op.String()
}
