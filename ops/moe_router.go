package ops

import (
	"fmt"
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The router of a mixture of experts in one dispatch. llama picks each token's experts
// with a run of small nodes: probs = SOFT_MAX(logits); ARGSORT(probs) descending; a VIEW of
// its first n_used columns (the experts chosen); GET_ROWS of those experts' probabilities
// from a RESHAPE of probs; and, for the models that normalise the weights, a RESHAPE of
// them, their SUM_ROWS, its CLAMP and the DIV by it. That is four or six dependent
// dispatches a layer, for rows of a few hundred values; moe_router.wgsl computes all of
// them in one, a workgroup per token, storing the softmax, the sorted experts, the
// weights and their normalised values (the sum and its clamp stay in the kernel). The
// softmax takes soft_max.wgsl's workgroup size and its row reductions (soft_max_row.wgsl),
// and the sort sort.wgsl's order (ties by index; by rank for rows of few experts, else
// sort.wgsl's network, bitonic.wgsl), so the experts chosen are those of the unfused nodes.

// moeRouterParams are the parameters of moe_router.wgsl.
type moeRouterParams struct {
	A, P, S, W, N [4]uint32 // strides of the logits, probs, sorted experts, weights, normalised weights
	E, T, K       uint32    // experts, tokens, experts used
	Scale         float32   // SOFT_MAX's scale
	Lo, Hi        float32   // CLAMP's bounds
}

// moeRouterMaxExperts bounds the experts of a fused router: the softmax and the sort keep
// a row in workgroup memory (8 KiB at 1,024).
const moeRouterMaxExperts = 1024

// moeRouterRankWork bounds the comparisons an invocation makes to rank its experts (RANK:
// each expert's place the count of those before it, E per expert), where the bitonic
// network's stages, a barrier each, would cost more: 128 experts (64 invocations of two)
// take 256 comparisons where the network takes 28 stages.
const moeRouterRankWork = 512

// moeRouterRow is the router's row, with the normalisation (SUM_ROWS, CLAMP, DIV) when
// norm.
func moeRouterRow(norm bool) Fusion {
	ops := []OpSet{{tensor.OpSoftMax}, viewOps, {tensor.OpArgSort}, viewOps, {tensor.OpGetRows}}
	name := "soft_max+argsort+get_rows"
	var private []int
	if norm {
		ops = append(ops, viewOps, OpSet{tensor.OpSumRows}, OpSet{tensor.OpClamp}, OpSet{tensor.OpDiv})
		name += "+sum_rows+clamp+div"
		private = []int{6, 7}
	}
	return Fusion{
		Name:    name,
		Ops:     ops,
		Private: private,
		Guard:   guardMoERouter,
		Lower:   lowerMoERouter,
		Example: func() []*tensor.Tensor { return moeRouterExample(norm) },
	}
}

// moeRouter is a match's nodes: the SOFT_MAX, ARGSORT and GET_ROWS (the weights), and with
// the normalisation the DIV (nil without).
type moeRouter struct {
	softMax, argsort, weights, div *tensor.Tensor
}

// single reports whether the router is a single token's: its one workgroup reads every
// logit and stores the softmax before the barriers behind which it stores the rest, so
// those stores may lie over the logits and the softmax (guardMoERouter, lowerMoERouter).
func (r moeRouter) single() bool { return r.softMax.Ne[1] == 1 }

// moeRouterOf returns the router of a match, or false where its nodes are not linked as
// llama links them: the RESHAPE of probs to [1, E, T] over the same memory, the VIEW of the
// sorted experts' first K columns, GET_ROWS of the one by the other, and the weights'
// RESHAPE to [K, T] that SUM_ROWS and the DIV read (CLAMP's result the divisor).
func moeRouterOf(n []*tensor.Tensor) (r moeRouter, ok bool) {
	sm, p3, as, topk, gr := n[0], n[1], n[2], n[3], n[4]
	x := sm.Src[0]
	if x == nil || sm.Src[1] != nil || sm.Src[2] != nil || x.Type != tensor.F32 || sm.Type != tensor.F32 ||
		math.Float32frombits(uint32(sm.Params[1])) != 0 || x.Ne != sm.Ne || x.Ne[2] != 1 || x.Ne[3] != 1 ||
		x.Nb[0] != 4 || sm.Nb[0] != 4 || x.Ne[0] > moeRouterMaxExperts {
		return r, false
	}
	e, t := sm.Ne[0], sm.Ne[1]
	if p3.Src[0] != sm || p3.Ne != [4]int64{1, e, t, 1} || p3.Loc != sm.Loc || p3.Nb[1] != sm.Nb[0] || p3.Nb[2] != sm.Nb[1] {
		return r, false
	}
	if as.Op != tensor.OpArgSort || as.Src[0] != sm || as.Params[0] != 1 || as.Type != tensor.I32 || as.Ne != sm.Ne || as.Nb[0] != 4 {
		return r, false
	}
	k := topk.Ne[0]
	if topk.Src[0] != as || topk.Ne != [4]int64{k, t, 1, 1} || k < 1 || k > e || topk.Loc != as.Loc || topk.Nb[0] != 4 || topk.Nb[1] != as.Nb[1] {
		return r, false
	}
	if gr.Src[0] != p3 || gr.Src[1] != topk || gr.Type != tensor.F32 || gr.Ne != [4]int64{1, k, t, 1} {
		return r, false
	}
	r = moeRouter{softMax: sm, argsort: as, weights: gr}
	if len(n) == 5 {
		return r, true
	}
	wr, sum, cl, dv := n[5], n[6], n[7], n[8]
	if wr.Src[0] != gr || wr.Ne != [4]int64{k, t, 1, 1} || wr.Loc != gr.Loc || wr.Nb[0] != gr.Nb[1] || wr.Nb[1] != gr.Nb[2] ||
		sum.Src[0] != wr || sum.Type != tensor.F32 || sum.Ne != [4]int64{1, t, 1, 1} ||
		cl.Src[0] != sum || cl.Type != tensor.F32 || cl.Ne != sum.Ne ||
		dv.Src[0] != wr || dv.Src[1] != cl || dv.Type != tensor.F32 || dv.Ne != wr.Ne {
		return r, false
	}
	r.div = dv
	return r, true
}

// guardMoERouter admits a router whose nodes are each supported and whose results lie
// over no memory the kernel reads or stores from another invocation: none over the logits
// (the softmax in place over them, element for element, aside) or over each other (the
// normalised weights in place over the weights, element for element, aside). A single
// token's workgroup reads every logit and stores the softmax before the barriers that
// precede its other stores, so those may lie over the logits and the softmax there:
// ggml-alloc puts a decoding token's normalised weights inside its softmax, in place over
// its logits, both dead after the GET_ROWS.
func guardMoERouter(n []*tensor.Tensor, l *Limits) bool {
	r, ok := moeRouterOf(n)
	if !ok {
		return false
	}
	for _, t := range n {
		if !t.Op.IsView() && !Supports(t, l) {
			return false
		}
	}
	x := r.softMax.Src[0]
	outs := []*tensor.Tensor{r.softMax, r.argsort, r.weights}
	if r.div != nil {
		outs = append(outs, r.div)
	}
	for i, o := range outs {
		late := r.single() && o != r.softMax // stored behind the barriers
		if overlaps(o, x) && !(o == r.softMax && sameLayout(o, x)) && !late {
			return false
		}
		for _, p := range outs[:i] {
			inPlace := o == r.div && p == r.weights && o.Loc == p.Loc && o.Nb[0] == p.Nb[1] && o.Nb[1] == p.Nb[2]
			if overlaps(o, p) && !inPlace && !(late && p == r.softMax) {
				return false
			}
		}
	}
	return true
}

// lowerMoERouter lowers a router that guardMoERouter admitted as one dispatch of
// moe_router.wgsl.
func lowerMoERouter(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	r, ok := moeRouterOf(n)
	if !ok {
		return nil, fmt.Errorf("moe_router: not a router")
	}
	sm, x := r.softMax, r.softMax.Src[0]
	p := moeRouterParams{A: strides(x), P: strides(sm), S: strides(r.argsort), W: strides(r.weights),
		E: uint32(sm.Ne[0]), T: uint32(sm.Ne[1]), K: uint32(r.weights.Ne[1]),
		Scale: math.Float32frombits(uint32(sm.Params[0]))}
	ops := []wgslOperand{in("src0", x), out("probs", sm), out("sorted", r.argsort), out("weights", r.weights)}
	tensors := []*tensor.Tensor{x, sm, r.argsort, r.weights}
	if r.div != nil {
		cl := r.div.Src[1]
		p.N = strides(r.div)
		p.Lo, p.Hi = math.Float32frombits(uint32(cl.Params[0])), math.Float32frombits(uint32(cl.Params[1]))
		ops = append(ops, out("norm", r.div))
		tensors = append(tensors, r.div)
	}
	if r.single() {
		// the stores behind the barriers (the sorted experts, the weights, their
		// normalisation) may lie over the logits and the softmax
		for i := 2; i < len(ops); i++ {
			ops[i].Overlaps = true
		}
	}
	np := pow2Ceil(sm.Ne[0])
	wg := rowGroup(sm.Ne[0], l)
	rpt := (int(sm.Ne[0]) + wg - 1) / wg
	s := spec("moe_router", wg, p, map[string]string{"NP": fmt.Sprint(np), "NORM": flag(r.div != nil), "SHARED_ROW": "1",
		"RANK": flag(int(sm.Ne[0])*rpt <= moeRouterRankWork), "RPT": fmt.Sprint(rpt), "U": fmt.Sprint(min(np, 4))}, ops...)
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: grid1D(uint64(p.T), l)}}, nil
}

// moeRouterExample is a router of 8 experts, 3 used, for 2 tokens, normalised when norm.
func moeRouterExample(norm bool) []*tensor.Tensor { return moeRouterTokens(norm, 2) }

// moeRouterTokens is moeRouterExample for t tokens.
func moeRouterTokens(norm bool, t int64) []*tensor.Tensor {
	x := f32(8, t)
	x.Loc = tensor.Loc{Buffer: 1}
	at := func(x *tensor.Tensor, b uint64) *tensor.Tensor { x.Loc = tensor.Loc{Buffer: b}; return x }
	sm := at(node(tensor.OpSoftMax, f32(8, t), []int32{int32(f32bits(1))}, x), 2)
	p3 := node(tensor.OpReshape, f32(1, 8, t), nil, sm)
	p3.Loc = sm.Loc
	as := at(node(tensor.OpArgSort, contiguous(tensor.I32, 8, t), []int32{1}, sm), 3)
	topk := node(tensor.OpView, contiguous(tensor.I32, 3, t), nil, as)
	topk.Nb[1], topk.Loc = as.Nb[1], as.Loc
	gr := at(node(tensor.OpGetRows, f32(1, 3, t), nil, p3, topk), 4)
	n := []*tensor.Tensor{sm, p3, as, topk, gr}
	if !norm {
		return n
	}
	wr := node(tensor.OpReshape, f32(3, t), nil, gr)
	wr.Loc = gr.Loc
	sum := at(node(tensor.OpSumRows, f32(1, t), nil, wr), 5)
	cl := at(node(tensor.OpClamp, f32(1, t), []int32{int32(f32bits(6.1e-5)), int32(f32bits(float32(math.Inf(1))))}, sum), 6)
	return append(n, wr, sum, cl, at(node(tensor.OpDiv, f32(3, t), nil, wr, cl), 7))
}
