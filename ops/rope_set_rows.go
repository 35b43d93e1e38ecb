package ops

import (
	"slices"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// llama's K into the KV cache: ROPE of K [head_dim, n_head_kv, n_tokens], a view of the
// roped K as rows [n_embd_k_gqa, n_tokens], and SET_ROWS of those rows into the cache
// [n_embd_k_gqa, kv_size] at the cells of an I64 (or I32) index tensor; with flash
// attention, the SET_ROWS of V's rows into the V cache follows (after its own view), and
// one dispatch does both. The roped K is never written: each invocation rotates one pair
// (rope_math.wgsl, every mode ROPE lowers) and stores the two values straight into their
// cache row; the invocations after K's pairs store one V element each.

// ropeSetRowsParams are the fused kernel's parameters: ROPE's (whose D strides are those
// of the contiguous roped K, so that an element's offset under D is its index in the rows
// SET_ROWS reads), then the two stores.
type ropeSetRowsParams struct {
	ropeParams
	// K is K's store: the row length of the rows SET_ROWS reads, the index tensor's stride,
	// the cache's strides along a row and across rows (in elements).
	K [4]uint32
	// V is V's store: the row length, the values' strides along a row and across rows,
	// the index tensor's stride; VD the V cache's strides along a row and across rows.
	V, VD [4]uint32
	// KN is the pair slots of K (the invocations that store K; ropeParams.N counts all);
	// KRows and VRows the caches' rows (an index outside them stores nothing).
	KN, KRows, VRows uint32
	// When the kernel ropes Q too (Q_ROPE): QHeads is Q's heads (Q's other dimensions are
	// K's, its result contiguous), QA its source's strides, QAt its first invocation (after
	// K's and V's). The parameters and ten operand offsets fill the 256-byte slot.
	QHeads uint32
	QA     [4]uint32
	QAt    uint32
}

// ropeSetRowsRow is the fusion row of ROPE, a view of it and the SET_ROWS that stores it.
var ropeSetRowsRow = Fusion{
	Name:     "rope+set_rows",
	Ops:      []OpSet{{tensor.OpRope}, {tensor.OpView, tensor.OpReshape}, {tensor.OpSetRows}},
	Private:  []int{0, 1},
	Consumes: []int{0},
	Guard:    guardRopeSetRows,
	Lower:    lowerRopeSetRows,
	Example:  func() []*tensor.Tensor { return ropeSetRowsExample(false) },
}

// ropeSetRowsRowsRow adds the SET_ROWS of V (after its view) to ropeSetRowsRow. The K
// store's result (position 2) is not private: the fused kernel writes it.
var ropeSetRowsRowsRow = Fusion{
	Name: "rope+set_rows+set_rows",
	Ops: []OpSet{{tensor.OpRope}, {tensor.OpView, tensor.OpReshape}, {tensor.OpSetRows},
		{tensor.OpView, tensor.OpReshape}, {tensor.OpSetRows}},
	Private:  []int{0, 1},
	Consumes: []int{0},
	Guard:    guardRopeSetRowsRows,
	Lower:    lowerRopeSetRows,
	Example:  func() []*tensor.Tensor { return ropeSetRowsExample(true) },
}

// ropeSetRowsExample is llama's K (and V) store for head_dim 8, 2 KV heads, 3 tokens, an
// F16 cache of 6 cells: NEOX with frequency factors, I64 indices; withV adds V's store
// (F32 values into an F32 cache, I32 indices).
func ropeSetRowsExample(withV bool) []*tensor.Tensor {
	rope := ropeExample(tensor.RopeNeox, tensor.F32, true)
	view := node(tensor.OpView, f32(16, 3), nil, rope)
	k := node(tensor.OpSetRows, contiguous(tensor.F16, 16, 6), nil, view, contiguous(tensor.I64, 3), contiguous(tensor.F16, 16, 6))
	n := []*tensor.Tensor{rope, view, k}
	if withV {
		vcur := f32(8, 2, 3)
		vview := node(tensor.OpView, f32(16, 3), nil, vcur)
		v := node(tensor.OpSetRows, f32(16, 6), nil, vview, contiguous(tensor.I32, 3), f32(16, 6))
		n = append(n, vview, v)
	}
	return n
}

// ropeSetRowsStore reports whether SET_ROWS node s is one the fused kernel stores: into an
// F32 or F16 cache (quantized caches take the unfused path), rows of one 2-D tensor into
// rows of a 2-D destination, one index per row.
func ropeSetRowsStore(s *tensor.Tensor, l *Limits) bool {
	a, idx := s.Src[0], s.Src[1]
	if !Supports(s, l) || (s.Type != tensor.F32 && s.Type != tensor.F16) {
		return false
	}
	return a.Ne[2] == 1 && a.Ne[3] == 1 && s.Ne[2] == 1 && s.Ne[3] == 1 && idx.Ne[1] == 1 && idx.Ne[2] == 1 && idx.Ne[3] == 1
}

// guardRopeSetRows admits ROPE -> view -> SET_ROWS: the view the whole contiguous roped
// tensor (same memory, same element order) and the only source of the SET_ROWS values, and
// a cache that overlaps nothing the kernel reads.
func guardRopeSetRows(n []*tensor.Tensor, l *Limits) bool {
	rope, view, k := n[0], n[1], n[2]
	// An in-place ROPE's result is its source: unfused, later readers of the source would
	// see it roped. One exactly over its source is admitted (the rows' Consumes): the
	// scheduler checks that nothing else reads that source (a hybrid's K, normed per head,
	// whose norm's result ggml-alloc gives the ROPE).
	if !Supports(rope, l) || !rope.Contiguous() || view.Src[0] != rope || k.Src[0] != view {
		return false
	}
	if overlaps(rope, rope.Src[0]) && !exactlyOver(rope, rope.Src[0]) {
		return false
	}
	if view.Type != rope.Type || !view.Contiguous() || view.Loc != rope.Loc || view.Elems() != rope.Elems() {
		return false
	}
	if !ropeSetRowsStore(k, l) {
		return false
	}
	for _, r := range []*tensor.Tensor{rope.Src[0], rope.Src[1], rope.Src[2], k.Src[1]} {
		if r != nil && overlaps(k, r) {
			return false
		}
	}
	return true
}

// guardRopeSetRowsRows admits guardRopeSetRows' nodes followed by V's view and store: V
// reads none of the first three results (its values, indices and cache base are not
// among them) and neither cache overlaps what the other store reads or writes.
func guardRopeSetRowsRows(n []*tensor.Tensor, l *Limits) bool {
	if !guardRopeSetRows(n[:3], l) {
		return false
	}
	rope, k, vview, v := n[0], n[2], n[3], n[4]
	if v.Src[0] != vview || !ropeSetRowsStore(v, l) {
		return false
	}
	for _, s := range []*tensor.Tensor{vview.Src[0], v.Src[1], v.Src[2]} {
		for _, m := range n[:3] {
			if s == m {
				return false
			}
		}
	}
	for _, r := range []*tensor.Tensor{k, rope.Src[0], rope.Src[1], rope.Src[2], k.Src[1], vview, v.Src[1]} {
		if r != nil && overlaps(v, r) {
			return false
		}
	}
	for _, r := range []*tensor.Tensor{vview, v.Src[1]} {
		if overlaps(k, r) {
			return false
		}
	}
	return true
}

// lowerRopeSetRows lowers either row as one dispatch that writes the K cache (and the V
// cache): ropeParams.N invocations, K's pair slots first.
func lowerRopeSetRows(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	return lowerKVStore(nil, n, l), nil
}

// lowerKVStore lowers K's store n (ROPE, view, SET_ROWS, and V's view and SET_ROWS if n has
// five nodes) and, when q is not nil, the ROPE of Q with K's rotation parameters: one
// dispatch, K's pair slots, then V's elements, then Q's pair slots.
func lowerKVStore(q *tensor.Tensor, n []*tensor.Tensor, l *Limits) []Dispatch {
	rope, k := n[0], n[2]
	rp, defs, operands, tensors := ropeSetup(rope)
	kd := strides(k)
	p := ropeSetRowsParams{
		ropeParams: rp,
		K:          [4]uint32{uint32(k.Src[0].Ne[0]), strides(k.Src[1])[0], kd[0], kd[1]},
		KN:         rp.N, KRows: uint32(k.Ne[1]),
	}
	defs["V_STORE"], defs["Q_ROPE"] = "0", "0"
	operands = append(operands, in("kidx", k.Src[1]))
	tensors = append(tensors, k.Src[1])
	if len(n) == 5 {
		v := n[4]
		va, vd := strides(v.Src[0]), strides(v)
		p.V = [4]uint32{uint32(v.Src[0].Ne[0]), va[0], va[1], strides(v.Src[1])[0]}
		p.VD = [4]uint32{vd[0], vd[1], 0, 0}
		p.VRows = uint32(v.Ne[1])
		p.N += uint32(v.Src[0].Elems())
		defs["V_STORE"] = "1"
		operands = append(operands, in("vsrc", v.Src[0]), in("vidx", v.Src[1]))
		tensors = append(tensors, v.Src[0], v.Src[1])
	}
	p.QAt = p.N
	if q != nil {
		p.QHeads, p.QA = uint32(q.Ne[1]), strides(q.Src[0])
		p.N += uint32(q.Elems() / 2)
		defs["Q_ROPE"] = "1"
		operands = append(operands, in("qsrc", q.Src[0]), out("qdst", q))
		tensors = append(tensors, q.Src[0], q)
	}
	operands = append(operands, out("kdst", k))
	tensors = append(tensors, k)
	if len(n) == 5 {
		operands = append(operands, out("vdst", n[4]))
		tensors = append(tensors, n[4])
	}
	s := spec("rope_set_rows", wgElementwise, p, defs, operands...)
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: gridElems(int64(p.N), l)}}
}

// llama's caches of several streams (sequences decoded side by side, each in cells of its
// own): each store writes into a RESHAPE of its cache, [n_embd_gqa, kv_size x streams],
// which stands between the values' view and the SET_ROWS (whose src[2], the destination,
// it is). llama's single-stream graph has no such node.

// streamsRow returns store row r for caches of several streams: its pattern with a view
// position (the destination) before each SET_ROWS position. Its guard admits nodes whose
// views there are their stores' destinations and whose other nodes r's guard admits;
// its lowering is r's of those other nodes. The destinations need no work.
func streamsRow(r Fusion) Fusion {
	var ops []OpSet
	var dests []int                  // the destinations' positions
	moved := make([]int, len(r.Ops)) // r's positions in the new pattern
	for i, s := range r.Ops {
		if s.Has(tensor.OpSetRows) {
			dests = append(dests, len(ops))
			ops = append(ops, OpSet{tensor.OpReshape, tensor.OpView})
		}
		moved[i] = len(ops)
		ops = append(ops, s)
	}
	private := make([]int, len(r.Private))
	for i, p := range r.Private {
		private[i] = moved[p]
	}
	consumes := make([]int, len(r.Consumes))
	for i, p := range r.Consumes {
		consumes[i] = moved[p]
	}
	rest := func(n []*tensor.Tensor) []*tensor.Tensor {
		out := make([]*tensor.Tensor, 0, len(r.Ops))
		for i, t := range n {
			if !slices.Contains(dests, i) {
				out = append(out, t)
			}
		}
		return out
	}
	return Fusion{
		Name:     r.Name + " (streams)",
		Ops:      ops,
		Private:  private,
		Consumes: consumes,
		Guard: func(n []*tensor.Tensor, l *Limits) bool {
			for _, d := range dests {
				if n[d+1].Src[2] != n[d] {
					return false
				}
			}
			return r.Guard(rest(n), l)
		},
		Lower:   func(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) { return r.Lower(rest(n), l) },
		Example: func() []*tensor.Tensor { return streamsDests(r.Example()) },
		Sink:    r.Sink,
	}
}

// streamsDests returns store nodes with a RESHAPE of each SET_ROWS' destination (src[2])
// before it, in its place and the store's destination: the stores of streamsRow. The
// SET_ROWS nodes are modified.
func streamsDests(nodes []*tensor.Tensor) []*tensor.Tensor {
	var n []*tensor.Tensor
	for _, t := range nodes {
		if t.Op == tensor.OpSetRows {
			c := t.Src[2]
			dest := node(tensor.OpReshape, &tensor.Tensor{Type: c.Type, Ne: c.Ne, Nb: c.Nb, Loc: c.Loc}, nil, c)
			t.Src[2] = dest
			n = append(n, dest)
		}
		n = append(n, t)
	}
	return n
}
