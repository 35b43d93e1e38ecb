package ops

import (
	"fmt"
	"slices"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The sum over a mixture of experts' slots. llama's feed-forward of experts ends by adding
// the n_used slots of its weighted expert outputs, experts [n_embd, n_used, n_tokens]:
// a view of each slot's rows (ggml_view_2d at slot i's offset, rows n_tokens apart), then
// a chain of n_used - 1 ADDs, moe_out = v0 + v1, then + v2, and so on; the views all come
// first or each before its ADD. The chain is as many dependent dispatches; its fusion
// (moe_sum.wgsl) is one, adding the slots in the chain's order. Where the MUL that weights
// the experts' outputs comes right before the views (llama's graph), the weighted rows
// take it too: the kernel multiplies each slot by its weight, stores the products (the
// views read them) and adds them up.

// moeSumParams are the parameters of moe_sum.wgsl.
type moeSumParams struct {
	Ne, A, D [4]uint32 // dst shape (n_embd, n_tokens); the summed tensor's (or the MUL's src0's) strides; dst strides
	N, Slots uint32    // dst elements; slots added
	B, X     [4]uint32 // with the MUL: the weights' and the products' strides
	XSlots   uint32    // with the MUL: the products' slots (all stored)
}

// moeSumMaxSlots is the most slots of the fused chains: llama's MoE models use 2 to 10
// experts a token (a chain of one ADD, for 2, needs no fusion).
const moeSumMaxSlots = 10

// moeSumRows returns the fusion rows of chains of 3 to moeSumMaxSlots slots, with the
// views first (only ADDs in the match) and between the ADDs, longest first.
func moeSumRows() []Fusion {
	var rows []Fusion
	for k := moeSumMaxSlots; k >= 3; k-- {
		rows = append(rows, moeSumRow(k, true), moeSumRow(k, false), moeWeightedSumRow(k))
	}
	slices.SortStableFunc(rows, func(a, b Fusion) int { return len(b.Ops) - len(a.Ops) })
	return rows
}

// moeSumRow is the row of a chain of k slots, each view but the first two between the
// ADDs when interleaved.
func moeSumRow(k int, interleaved bool) Fusion {
	ops := []OpSet{{tensor.OpAdd}}
	var private []int
	for j := 1; j < k-1; j++ {
		private = append(private, len(ops)-1)
		if interleaved {
			ops = append(ops, OpSet{tensor.OpView})
		}
		ops = append(ops, OpSet{tensor.OpAdd})
	}
	name := fmt.Sprintf("moe_sum(%d)", k)
	if interleaved {
		name = fmt.Sprintf("moe_sum(%d,views between)", k)
	}
	return Fusion{
		Name:    name,
		Ops:     ops,
		Private: private,
		Guard:   guardMoESum,
		Lower:   lowerMoESum,
		Example: func() []*tensor.Tensor { return moeSumExample(k, interleaved) },
	}
}

// moeWeightedSumRow is the row of the MUL that weights k slots, their views (all first)
// and their chain of ADDs.
func moeWeightedSumRow(k int) Fusion {
	ops := []OpSet{{tensor.OpMul}}
	for range k {
		ops = append(ops, OpSet{tensor.OpView})
	}
	var private []int
	for j := 0; j < k-1; j++ {
		if j > 0 {
			private = append(private, len(ops)-1)
		}
		ops = append(ops, OpSet{tensor.OpAdd})
	}
	return Fusion{
		Name:    fmt.Sprintf("mul+moe_sum(%d)", k),
		Ops:     ops,
		Private: private,
		Guard:   guardMoESum,
		Lower:   lowerMoESum,
		Example: func() []*tensor.Tensor { return moeWeightedSumExample(k) },
	}
}

// moeSumMul returns the MUL that weights the experts of a match (its first node), or nil.
func moeSumMul(n []*tensor.Tensor) *tensor.Tensor {
	if n[0].Op == tensor.OpMul {
		return n[0]
	}
	return nil
}

// moeSumChain returns the ADDs of a match and the experts tensor x whose slot views they
// add (nil where the match is not such a chain).
func moeSumChain(n []*tensor.Tensor) (adds []*tensor.Tensor, x *tensor.Tensor) {
	for _, t := range n {
		if t.Op == tensor.OpAdd {
			adds = append(adds, t)
		}
	}
	views := []*tensor.Tensor{adds[0].Src[0], adds[0].Src[1]}
	for j := 1; j < len(adds); j++ {
		if adds[j].Src[0] != adds[j-1] {
			return nil, nil
		}
		views = append(views, adds[j].Src[1])
	}
	if slices.Contains(views, nil) {
		return nil, nil
	}
	x = views[0].Src[0]
	if x == nil || x.Type != tensor.F32 || x.Ne[3] != 1 || x.Ne[1] < int64(len(views)) || x.Loc.Buffer == 0 {
		return nil, nil
	}
	for i, v := range views {
		if v.Op != tensor.OpView || v.Src[0] != x || v.Type != tensor.F32 ||
			v.Ne != [4]int64{x.Ne[0], x.Ne[2], 1, 1} || v.Nb[0] != x.Nb[0] || v.Nb[1] != x.Nb[2] ||
			v.Loc.Buffer != x.Loc.Buffer || v.Loc.Addr != x.Loc.Addr+uint64(i)*x.Nb[1] {
			return nil, nil
		}
	}
	return adds, x
}

// guardMoESum admits a chain of ADDs over the slot views of one F32 experts tensor (each
// ADD the previous one plus the next slot, of the views' shape), whose result does not lie
// over the experts.
//
// With the MUL (the match's first node) the experts must be that MUL's result, of its
// src0's shape times weights [1, slots, tokens], over neither the weights nor, but in
// place, its src0; the sum over none of the three.
func guardMoESum(n []*tensor.Tensor, l *Limits) bool {
	adds, x := moeSumChain(n)
	if x == nil {
		return false
	}
	for _, a := range adds {
		if a.Type != tensor.F32 || a.Ne != adds[0].Src[0].Ne || !Supports(a, l) {
			return false
		}
	}
	last := adds[len(adds)-1]
	if m := moeSumMul(n); m != nil {
		e, w := m.Src[0], m.Src[1]
		if m != x || e == nil || w == nil || e.Type != tensor.F32 || w.Type != tensor.F32 || e.Ne != x.Ne ||
			w.Ne != [4]int64{1, x.Ne[1], x.Ne[2], 1} || !Supports(m, l) || !elementAligned(e) || !elementAligned(w) ||
			overlaps(x, w) || (overlaps(x, e) && !sameLayout(x, e)) || overlaps(last, e) || overlaps(last, w) {
			return false
		}
	}
	return !overlaps(last, x) && elementAligned(x) && elementAligned(last)
}

// lowerMoESum lowers a chain that guardMoESum admitted as one dispatch of moe_sum.wgsl.
func lowerMoESum(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	adds, x := moeSumChain(n)
	if x == nil {
		return nil, fmt.Errorf("moe_sum: not a chain over slot views")
	}
	last := adds[len(adds)-1]
	p := moeSumParams{Ne: [4]uint32{uint32(last.Ne[0]), uint32(last.Ne[1]), 1, 1}, A: strides(x), D: strides(last),
		N: uint32(last.Ne[0] * last.Ne[1]), Slots: uint32(len(adds) + 1)}
	grid := grid1D((uint64(p.N)+255)/256, l)
	if m := moeSumMul(n); m != nil {
		e, w := m.Src[0], m.Src[1]
		p.A, p.B, p.X, p.XSlots = strides(e), strides(w), strides(x), uint32(x.Ne[1])
		s := spec("moe_sum", 256, p, map[string]string{"MUL": "1"}, in("src0", e), in("src1", w), out("x", x), out("dst", last))
		return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{e, w, x, last}, Params: p, Grid: grid}}, nil
	}
	s := spec("moe_sum", 256, p, map[string]string{"MUL": "0"}, in("src0", x), out("dst", last))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{x, last}, Params: p, Grid: grid}}, nil
}

// moeSumExample is a chain over k slots of experts [6, k, 3] (in a buffer of its own),
// the views between the ADDs when interleaved.
func moeSumExample(k int, interleaved bool) []*tensor.Tensor {
	x := f32(6, int64(k), 3)
	x.Loc = tensor.Loc{Buffer: 1}
	view := func(i int) *tensor.Tensor {
		v := node(tensor.OpView, f32(6, 3), nil, x)
		v.Nb[1] = x.Nb[2]
		v.Loc = tensor.Loc{Buffer: 1, Addr: uint64(i) * x.Nb[1]}
		return v
	}
	sum := node(tensor.OpAdd, f32(6, 3), nil, view(0), view(1))
	n := []*tensor.Tensor{sum}
	for i := 2; i < k; i++ {
		v := view(i)
		if interleaved {
			n = append(n, v)
		}
		sum = node(tensor.OpAdd, f32(6, 3), nil, sum, v)
		n = append(n, sum)
	}
	return n
}

// moeWeightedSumExample is the MUL of experts [6, k, 3] by weights [1, k, 3], the views
// of its k slots and their chain of ADDs.
func moeWeightedSumExample(k int) []*tensor.Tensor {
	chain := moeSumExample(k, false)
	x := chain[0].Src[0].Src[0]
	m := node(tensor.OpMul, x, nil, f32(6, int64(k), 3), f32(1, int64(k), 3))
	n := []*tensor.Tensor{m}
	for i := 0; i < k; i++ {
		v := chain[0].Src[1]
		switch {
		case i == 0:
			v = chain[0].Src[0]
		case i > 1:
			v = chain[i-1].Src[1]
		}
		n = append(n, v)
	}
	return append(n, chain...)
}
