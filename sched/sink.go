package sched

import (
	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// Sinking: a pre-pass of Build that reorders the graph so that more fusion rows match.
// llama computes ROPE Q right after Q's matmul, before the K and V matmuls, and ROPE K
// just before the K and V cache stores; the row "rope+rope+set_rows+set_rows" takes both
// ropes and the stores in one dispatch once ROPE Q stands right before ROPE K.
//
// The rule: a node that needs work and starts a fusion row marked Sink (ops.Fusion.Sink),
// and that no row takes where it stands (starting with it, or with a node before it),
// moves down past the next nodes (at most sinkLookAhead of them) to just before a node
// where the row then applies (fusable and ops.Fusion.Applies on the reordered graph). Moving node m past node b keeps the graph's
// meaning when (passes):
//   - b does not read m's result, directly or through views of it, and is no view of m
//     (a view of m, or a reader, must stay after m: m is only moved when they come after
//     its new place);
//   - b, when it does work, writes no memory that m reads (its result overlaps none of m's
//     sources) and none that m writes (ggml-alloc may have placed b's result over m's once
//     m's result was dead), and reads none that m writes (its sources overlap m's result).
//
// Data dependencies alone are not enough because ggml-alloc reuses memory. Build, which
// sees the graph placed, compares the bytes of the placed tensors, and never moves a node
// past one that touches a tensor without a place (the library is never handed one). In
// llama's graph as placed, V's matmul result lies over Q's matmul result (dead once ROPE
// Q has read it), so Build alone cannot move ROPE Q; Order, which the backend applies in
// graph_optimize before ggml places the graph, moves it while the memory is not yet placed
// (a view or in-place result is the memory of the tensor it lies in). m may be a graph
// output: the host reads it after the whole graph. The nodes after m's new place see it
// computed, as before.

// sinkLookAhead bounds how many nodes a node moves past.
const sinkLookAhead = 8

// Order returns nodes in the order the sinking rule gives them before ggml allocates their
// memory (the backend's graph_optimize): the memory is then placed in the new order, so
// only the memory that already exists matters. root returns the identity of the tensor whose
// memory t is (t itself, or the tensor a view or in-place result lies in); two tensors
// share memory when their roots are the same or their placed bytes intersect (the KV
// cache, weights). nodes itself is not modified.
func Order(nodes []*tensor.Tensor, l *ops.Limits, root func(t *tensor.Tensor) any) []*tensor.Tensor {
	return sink(nodes, l, func(a, b *tensor.Tensor) bool { return root(a) == root(b) || sharesMemory(a, b) })
}

// placedShare is what Build knows of placed tensors: those whose bytes intersect share
// memory, and one without a place (which the library is never handed) may share any.
func placedShare(a, b *tensor.Tensor) bool { return !placed(a) || !placed(b) || sharesMemory(a, b) }

// sink returns nodes with the sinking rule applied, share telling which tensors may share
// memory; nodes itself is not modified.
func sink(nodes []*tensor.Tensor, l *ops.Limits, share func(a, b *tensor.Tensor) bool) []*tensor.Tensor {
	fusions := ops.Fusions()
	moved := map[*tensor.Tensor]bool{}
	var readers *reads // graphReads(nodes) once needed, until nodes change
	readersOf := func() reads {
		if readers == nil {
			g := graphReads(nodes)
			readers = &g
		}
		return *readers
	}
	for i := 0; i < len(nodes); i++ {
		m := nodes[i]
		if Skip(m) || moved[m] || !sinkable(m, fusions) || takenAt(nodes, i, l, readersOf) {
			continue
		}
		for t := i + 1; t < len(nodes) && t <= i+sinkLookAhead; t++ {
			if !passes(m, nodes[t], share) {
				break
			}
			if t+1 == len(nodes) || !sinkPair(m, nodes[t+1], fusions) {
				continue // no Sink row starts with m and the node after its new place
			}
			order := make([]*tensor.Tensor, 0, len(nodes))
			order = append(append(append(append(order, nodes[:i]...), nodes[i+1:t+1]...), m), nodes[t+1:]...)
			if sinkFuses(order, t, fusions, l) {
				nodes, moved[m], readers = order, true, nil
				i-- // the node now at i is the next one
				break
			}
		}
	}
	return nodes
}

// sinkable reports whether a row marked Sink may start with m's op.
func sinkable(m *tensor.Tensor, fusions []ops.Fusion) bool {
	for r := range fusions {
		if fusions[r].Sink && fusions[r].Ops[0].Has(m.Op) {
			return true
		}
	}
	return false
}

// sinkPair reports whether a row marked Sink may start with m followed by next.
func sinkPair(m, next *tensor.Tensor, fusions []ops.Fusion) bool {
	for r := range fusions {
		f := &fusions[r]
		if f.Sink && len(f.Ops) > 1 && f.Ops[0].Has(m.Op) && f.Ops[1].Has(next.Op) {
			return true
		}
	}
	return false
}

// takenAt reports whether some row applies at a position j <= i of nodes as they stand
// whose match takes the node at i: one starting with it, or one starting before it (the
// row of Q, V and K with ROPE Q between them, ops/mul_mat_multi_rope.go). readers gives
// graphReads(nodes), computed once for every position: it costs the graph's size, and a
// graph of 838 nodes spent ~4 ms in Order computing it again at every node it asked about.
func takenAt(nodes []*tensor.Tensor, i int, l *ops.Limits, readers func() reads) bool {
	fusions := ops.Fusions()
	for r := range fusions {
		f := &fusions[r]
		for j := max(0, i-len(f.Ops)+1); j <= i; j++ {
			if j+len(f.Ops) > len(nodes) || !f.Applies(nodes[j:j+len(f.Ops)], l) {
				continue
			}
			if fusable(f, nodes[j:j+len(f.Ops)], j, readers()) {
				return true
			}
		}
	}
	return false
}

// sinkFuses reports whether a row marked Sink applies at position at of order, where a
// node has just been moved to.
func sinkFuses(order []*tensor.Tensor, at int, fusions []ops.Fusion, l *ops.Limits) bool {
	var readers *reads
	for r := range fusions {
		f := &fusions[r]
		if !f.Sink || at+len(f.Ops) > len(order) {
			continue
		}
		match := order[at : at+len(f.Ops)]
		if !f.Applies(match, l) {
			continue
		}
		if readers == nil {
			g := graphReads(order)
			readers = &g
		}
		if fusable(f, match, at, *readers) {
			return true
		}
	}
	return false
}

// passes reports whether node m may move down past node b (the sinking rule), share
// telling which tensors may share memory.
func passes(m, b *tensor.Tensor, share func(a, b *tensor.Tensor) bool) bool {
	if readsResult(b, m) {
		return false
	}
	if Skip(b) {
		return true // no work: neither reads nor writes memory
	}
	if share(b, m) {
		return false
	}
	for _, s := range m.Src {
		if s != nil && share(b, s) {
			return false
		}
	}
	for _, s := range b.Src {
		if s != nil && share(s, m) {
			return false
		}
	}
	return true
}

// readsResult reports whether b is a view of m or reads m's result directly or through
// views of it.
func readsResult(b, m *tensor.Tensor) bool {
	if b.Op.IsView() && b.IsViewOf(m) {
		return true
	}
	for _, s := range b.Src {
		if s.IsViewOf(m) {
			return true
		}
	}
	return false
}

// placed reports whether t has a place in memory, or holds no bytes.
func placed(t *tensor.Tensor) bool { return t.Loc.Buffer != 0 || t.Empty() }
