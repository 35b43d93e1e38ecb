package conformance

import (
	"fmt"
	"math"
	"math/rand"
	"strings"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// Mixture of experts, modelled on test-backend-ops' test_mul_mat_id: n_mats experts of
// m x k weights, n_used of them per token (distinct per token, as a router picks them),
// b holding one row per used slot or one row broadcast to all (b=1); where the experts
// average fewer than 4 (slot, token) pairs the mat-vec kernel takes them, else the routed
// prompt kernel (tokens such that an expert gets more
// pairs than one column tile, experts with rows of several row tiles, the 128-column
// tiles) and, past 1024 experts, the grouped tiled one (more pairs than one scan step);
// permuted activations, padded weight views and ids that are a view of a wider tensor.
// Every weight format, quantized by ggml's quantizer, with MUL_MAT's threshold.

type mmidSpec struct {
	ta                 tensor.Type
	mats, used         int64
	bcast              bool // b holds one row per token, broadcast to every slot
	m, n, k            int64
	permB, viewA, view bool // b permuted; as a padded view; ids a view of wider rows
}

// mulMatIDSwarCases are decode-sized MUL_MAT_IDs of the formats that the integer
// mat-vec's IDS form takes (ops.swarIDApplies): a gate's (one row of b a token, broadcast
// to eight slots) and a down product's (a row of b a slot) by one and two tokens.
func mulMatIDSwarCases() []*Case {
	var cs []*Case
	for _, ta := range []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q4_K} {
		cs = append(cs,
			mulMatIDCase(mmidSpec{ta: ta, mats: 16, used: 8, bcast: true, m: 40, n: 1, k: 2048}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 16, used: 8, m: 72, n: 2, k: 768}))
	}
	return cs
}

func mulMatIDCases() []*Case {
	var cs []*Case
	for _, ta := range []tensor.Type{f32, f16} {
		for _, k := range []int64{37, 64} {
			for _, n := range []int64{1, 3, 4, 9, 33} {
				cs = append(cs, mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, m: 70, n: n, k: k}))
				cs = append(cs, mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, bcast: true, m: 33, n: n, k: k}))
			}
		}
		cs = append(cs,
			mulMatIDCase(mmidSpec{ta: ta, mats: 2, used: 2, m: 17, n: 80, k: 32}), // two tiles per expert
			mulMatIDCase(mmidSpec{ta: ta, mats: 3, used: 2, m: 9, n: 200, k: 16}), // several scan steps
			mulMatIDCase(mmidSpec{ta: ta, mats: 8, used: 4, m: 16, n: 1, k: 64, permB: true}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 8, used: 4, m: 16, n: 12, k: 64, permB: true}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, m: 16, n: 2, k: 40, viewA: true, view: true}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, m: 16, n: 10, k: 40, viewA: true, view: true}),
			// the same by more tokens: the routed prompt kernel
			mulMatIDCase(mmidSpec{ta: ta, mats: 8, used: 4, m: 16, n: 70, k: 64, permB: true}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, m: 16, n: 70, k: 40, viewA: true, view: true}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 32, used: 4, m: 200, n: 100, k: 64}),            // two row tiles, sparse routes
			mulMatIDCase(mmidSpec{ta: ta, mats: 2, used: 2, bcast: true, m: 20, n: 130, k: 32}), // 128-column tiles
			// past 1024 experts: the grouped kernel
			mulMatIDCase(mmidSpec{ta: ta, mats: 1100, used: 2, m: 8, n: 70, k: 32}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 1100, used: 2, m: 8, n: 70, k: 40, permB: true}),
		)
	}
	// the routed prompt kernel on quantized experts, and the grouped one past 1024 experts
	for _, ta := range []tensor.Type{tensor.Q4_K, tensor.Q8_0, tensor.MXFP4, tensor.Q6_K, tensor.Q4_0} {
		cs = append(cs, mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, m: 17, n: 80, k: 256}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 16, used: 4, m: 150, n: 96, k: 256, permB: true}))
	}
	for _, ta := range []tensor.Type{tensor.Q4_0, tensor.Q4_K} {
		k := int64(ta.BlockElems())
		cs = append(cs, mulMatIDCase(mmidSpec{ta: ta, mats: 1100, used: 2, m: 8, n: 70, k: k}))
	}
	cs = append(cs, mulMatIDSwarCases()...)
	for _, ta := range quantTypes {
		k := max(int64(64), int64(ta.BlockElems())) // whole blocks
		for _, n := range []int64{1, 4, 9} {
			cs = append(cs, mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, m: 33, n: n, k: k}))
		}
		cs = append(cs,
			mulMatIDCase(mmidSpec{ta: ta, mats: 8, used: 2, bcast: true, m: 17, n: 3, k: 2 * k}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 8, used: 2, bcast: true, m: 17, n: 16, k: 2 * k}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 16, used: 2, m: 33, n: 80, k: k}), // sparse routes
			mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, m: 16, n: 1, k: k, viewA: true, permB: true}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, m: 16, n: 7, k: k, viewA: true, permB: true}),
		)
	}
	return cs
}

func mulMatIDCase(s mmidSpec) *Case {
	nb := s.used
	if s.bcast {
		nb = 1
	}
	name := fmt.Sprintf("MUL_MAT_ID(type_a=%s,type_b=f32,n_mats=%d,n_used=%d,b=%v,m=%d,n=%d,k=%d",
		s.ta, s.mats, s.used, s.bcast, s.m, s.n, s.k)
	for _, v := range []struct {
		on   bool
		name string
	}{{s.permB, ",perm_b"}, {s.viewA, ",view_a"}, {s.view, ",view_ids"}} {
		if v.on {
			name += v.name
		}
	}
	name += ")"
	return &Case{Name: name, Op: "MUL_MAT_ID", Types: s.ta.String() + " x f32", MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			var as ggml.Tensor
			if s.viewA {
				// rows padded by 2 blocks (6 elements unquantized), one row in
				pad := int64(6)
				if s.ta.Quantized() {
					pad = 2 * int64(s.ta.BlockElems())
				}
				x := b.New("as_base", s.ta, s.k+pad, s.m+1, s.mats)
				as = b.View4D(x, shape(s.k, s.m, s.mats), x.Nb()[1])
			} else {
				as = b.New("as", s.ta, s.k, s.m, s.mats)
			}
			var y ggml.Tensor
			if s.permB {
				y = b.Permute(b.New("b", f32, s.k, s.n, nb), [4]int{0, 2, 1, 3})
			} else {
				y = b.New("b", f32, s.k, nb, s.n)
			}
			var ids ggml.Tensor
			if s.view {
				x := b.New("ids_base", tensor.I32, s.used+3, s.n)
				b.Init(x, Indices(s.mats))
				ids = b.L.View2D(b.Ctx, x, s.used, s.n, x.Nb()[1], 4)
			} else {
				ids = b.New("ids", tensor.I32, s.used, s.n)
				b.Init(ids, DistinctRows(int(s.mats), int(s.used)))
			}
			return b.L.MulMatID(b.Ctx, as, y, ids)
		}}
}

// moeSumCases are llama's sum over a mixture of experts' slots: the weighted experts
// [n_embd, slots, tokens] (a MUL by the routing weights, its result compared too) or plain
// ones, a view of each slot's rows and a chain of ADDs over them, the views all first or
// each before its ADD (the backend fuses chains of 3 to 10 slots into one dispatch, with
// the MUL where the views follow it, ops/moe_sum.go); 2 slots stay ADDs, 12 fuse their
// first 10.
func moeSumCases() []*Case {
	var cs []*Case
	for _, c := range []struct {
		slots, embd, tokens int64
		first, weighted     bool
	}{{2, 64, 3, true, true}, {3, 64, 1, true, true}, {4, 33, 5, false, true}, {8, 64, 7, true, true}, {8, 128, 2, false, true},
		{10, 16, 4, false, true}, {12, 16, 3, true, true}, {4, 32, 3, true, false}, {6, 16, 2, false, false}} {
		order := "between"
		if c.first {
			order = "first"
		}
		name := fmt.Sprintf("GRAPH(moe_sum,slots=%d,views=%s,weighted=%v,ne=[%d,%d])", c.slots, order, c.weighted, c.embd, c.tokens)
		cs = append(cs, &Case{Name: name, Op: "GRAPH", Types: "f32", MaxNMSE: DefaultMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				l, ctx := b.L, b.Ctx
				experts := b.New("experts", f32, c.embd, c.slots, c.tokens)
				if c.weighted {
					experts = l.Mul(ctx, experts, b.New("weights", f32, 1, c.slots, c.tokens))
					b.Check(experts)
				}
				views := make([]ggml.Tensor, c.slots)
				for i := range views {
					views[i] = l.View2D(ctx, experts, c.embd, c.tokens, experts.Nb()[2], uint64(i)*experts.Nb()[1])
					if c.first {
						b.Expand(views[i])
					}
				}
				sum := views[0]
				for _, v := range views[1:] {
					sum = l.Add(ctx, sum, v)
				}
				return sum
			}})
	}
	return cs
}

// moeRouterCases are llama's router of a mixture of experts: SOFT_MAX of the logits, their
// ARGSORT descending, a VIEW of the first k experts, GET_ROWS of their probabilities and,
// with norm, the weights divided by their sum clamped (SUM_ROWS, CLAMP, DIV), every
// result compared (the backend fuses the run into one dispatch, ops/moe_router.go).
func moeRouterCases() []*Case {
	var cs []*Case
	for _, c := range []struct {
		experts, used, tokens int64
		norm                  bool
		gate                  bool // the logits a product of the router's weights, as llama's
	}{{8, 2, 1, true, false}, {8, 2, 5, false, false}, {128, 8, 7, true, false}, {60, 4, 33, true, false},
		{32, 4, 3, false, false}, {256, 8, 2, true, false}, {128, 8, 1, true, true}, {32, 4, 1, true, true}, {64, 6, 4, true, true}} {
		name := fmt.Sprintf("GRAPH(moe_router,experts=%d,used=%d,tokens=%d,norm=%v)", c.experts, c.used, c.tokens, c.norm)
		if c.gate {
			// placed by ggml-alloc: a token's normalised weights go inside its softmax, in
			// place over its logits (both dead after the GET_ROWS), which the fused kernel's
			// one workgroup reads and stores before it stores them
			name = strings.Replace(name, ")", ",gate)", 1)
		}
		cs = append(cs, &Case{Name: name, Op: "GRAPH", Types: "f32", MaxNMSE: DefaultMaxNMSE, Placed: c.gate,
			Build: func(b *Builder) ggml.Tensor {
				l, ctx := b.L, b.Ctx
				logits := b.New("logits", f32, c.experts, c.tokens)
				if c.gate {
					logits = l.MulMat(ctx, b.New("gate_inp", f32, 64, c.experts), b.New("x", f32, 64, c.tokens))
				}
				r := moeRouterGraph(l, ctx, logits, c.used, c.norm)
				b.Check(r.sorted)
				if !c.gate { // checked, they would be kept as outputs
					b.Check(r.probs)
					if c.norm {
						b.Check(r.weights)
					}
				}
				return r.out
			}})
	}
	return cs
}

// moeRouter is the nodes of llama's router that moeRouterGraph builds.
type moeRouter struct {
	probs, sorted, weights ggml.Tensor // SOFT_MAX, ARGSORT, GET_ROWS of the chosen
	out                    ggml.Tensor // the weights, normalised with norm
}

// moeRouterGraph builds llama's router over logits [experts, tokens]: SOFT_MAX, ARGSORT
// descending, a VIEW of the first used experts, GET_ROWS of their probabilities and, with
// norm, those divided by their sum clamped (SUM_ROWS, CLAMP, DIV).
func moeRouterGraph(l *ggml.Lib, ctx ggml.Context, logits ggml.Tensor, used int64, norm bool) moeRouter {
	ne := logits.Ne()
	experts, tokens := ne[0], ne[1]
	var r moeRouter
	r.probs = l.SoftMax(ctx, logits)
	r.sorted = l.Argsort(ctx, r.probs, ggml.SortDesc)
	chosen := l.View2D(ctx, r.sorted, used, tokens, r.sorted.Nb()[1], 0)
	r.weights = l.GetRows(ctx, l.Reshape4D(ctx, r.probs, 1, experts, tokens, 1), chosen)
	r.out = r.weights
	if norm {
		w := l.Reshape4D(ctx, r.weights, used, tokens, 1, 1)
		r.out = l.Div(ctx, w, l.Clamp(ctx, l.SumRows(ctx, w), 6.103515625e-5, float32(math.Inf(1)), false))
	}
	return r
}

// moeCases are the mixture-of-experts and reduction families, in report order.
func moeCases() []*Case {
	var cs []*Case
	cs = append(cs, mulMatIDCases()...)
	cs = append(cs, moeSumCases()...)
	cs = append(cs, moeRouterCases()...)
	cs = append(cs, addIDCases()...)
	cs = append(cs, sortCases()...)
	cs = append(cs, reduceCases()...)
	cs = append(cs, softMaxSinksCases()...)
	return cs
}

// DistinctValues returns an InitFunc that fills every run of perRow consecutive values (one
// row) with a shuffle of 0..perRow-1, as test-backend-ops fills ARGSORT and TOP_K inputs:
// no ties, so the sorted order is unique.
func DistinctValues(perRow int) InitFunc {
	return func(r *rand.Rand, n int) []float32 {
		v := make([]float32, 0, n)
		for len(v) < n {
			for _, i := range r.Perm(perRow) {
				v = append(v, float32(i))
			}
		}
		return v[:n]
	}
}

// ADD_ID, as test_add_id: a [n_embd, n_used, n_token] plus the bias row of each slot's
// expert, from b [n_embd, n_experts]; a as a padded view too.
func addIDCases() []*Case {
	var cs []*Case
	for _, s := range []struct {
		embd, experts, used, tokens int64
		view                        bool
	}{
		{1, 4, 1, 1, false}, {7, 4, 2, 3, false}, {64, 8, 2, 5, false}, {129, 16, 4, 33, false}, {33, 8, 2, 7, true},
	} {
		name := fmt.Sprintf("ADD_ID(type_a=f32,type_b=f32,n_embd=%d,n_experts=%d,n_experts_used=%d,n_token=%d", s.embd, s.experts, s.used, s.tokens)
		if s.view {
			name += ",view_a"
		}
		name += ")"
		cs = append(cs, &Case{Name: name, Op: "ADD_ID", Types: "f32", MaxNMSE: DefaultMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				var a ggml.Tensor
				if s.view {
					x := b.New("a_base", f32, s.embd+5, s.used, s.tokens)
					a = b.View4D(x, shape(s.embd, s.used, s.tokens), 8)
				} else {
					a = b.New("a", f32, s.embd, s.used, s.tokens)
				}
				bias := b.New("b", f32, s.embd, s.experts)
				ids := b.New("ids", tensor.I32, s.used, s.tokens)
				b.Init(ids, DistinctRows(int(s.experts), int(s.used)))
				return b.L.AddID(b.Ctx, a, bias, ids)
			}})
	}
	return cs
}

// ARGSORT and TOP_K, as test_argsort and test_top_k (distinct values per row); TOP_K's
// rows compare as sets. Sources with padded rows too (ggml's CPU reads row i at i * nb[1],
// so rows must stay evenly spaced).
func sortCases() []*Case {
	var cs []*Case
	for _, ne := range [][4]int64{shape(1), shape(7, 3), shape(16, 10, 3), shape(33, 5, 2, 2), shape(300, 3), shape(1024, 2), shape(1025), shape(4096, 2)} {
		for _, order := range []ggml.SortOrder{ggml.SortAsc, ggml.SortDesc} {
			cs = append(cs, sortCase(ne, order, 0, false))
		}
	}
	cs = append(cs, sortCase(shape(33, 5, 2), ggml.SortDesc, 0, true), sortCase(shape(33, 5, 2), ggml.SortAsc, 0, true))
	for _, s := range []struct {
		ne [4]int64
		k  int
	}{{shape(16, 10, 3), 4}, {shape(7, 5), 1}, {shape(33, 4), 33}, {shape(300, 3), 32}, {shape(4096, 2), 40}, {shape(256, 9), 8}} {
		cs = append(cs, sortCase(s.ne, 0, s.k, false))
	}
	cs = append(cs, sortCase(shape(33, 5, 2), 0, 6, true))
	return cs
}

// sortCase is ARGSORT of order, or TOP_K when k > 0; with view, the source's rows are
// padded by 3 elements, at an offset.
func sortCase(ne [4]int64, order ggml.SortOrder, k int, view bool) *Case {
	op, name := "ARGSORT", fmt.Sprintf("ARGSORT(type=f32,ne=%s,order=%d", fmtNe(ne), order)
	if k > 0 {
		op, name = "TOP_K", fmt.Sprintf("TOP_K(type=f32,ne=%s,k=%d", fmtNe(ne), k)
	}
	if view {
		name += ",view"
	}
	name += ")"
	c := &Case{Name: name, Op: op, Types: "f32", MaxNMSE: 0, Init: DistinctValues(int(ne[0])),
		Build: func(b *Builder) ggml.Tensor {
			var a ggml.Tensor
			if view {
				x := b.New("a_base", f32, ne[0]+3, ne[1], ne[2], ne[3])
				b.Init(x, DistinctValues(int(ne[0]+3)))
				a = b.View4D(x, ne, 8)
			} else {
				a = b.New("a", f32, ne[:]...)
			}
			if k > 0 {
				return b.L.TopK(b.Ctx, a, k)
			}
			return b.L.Argsort(b.Ctx, a, order)
		}}
	if k > 0 {
		c.UnorderedRows = k
	}
	return c
}

// SUM, SUM_ROWS, MEAN, ARGMAX and CUMSUM, as test_sum, test_sum_rows, test_mean,
// test_argmax and test_cumsum: odd shapes, long rows, permuted and padded sources.
func reduceCases() []*Case {
	type red struct {
		op    string
		build func(l *ggml.Lib, ctx ggml.Context, a ggml.Tensor) ggml.Tensor
	}
	reds := []red{
		{"SUM", (*ggml.Lib).Sum}, {"SUM_ROWS", (*ggml.Lib).SumRows}, {"MEAN", (*ggml.Lib).Mean}, {"CUMSUM", (*ggml.Lib).Cumsum},
	}
	var cs []*Case
	for _, r := range reds {
		for _, ne := range [][4]int64{shape(1), shape(7, 3), shape(10, 5, 4, 3), shape(300, 3), shape(4097, 2), shape(33, 1, 1, 5)} {
			cs = append(cs, reduceCase(r.op, f32, ne, false, false, r.build))
		}
		cs = append(cs, reduceCase(r.op, f32, shape(10, 5, 4, 3), true, false, r.build), reduceCase(r.op, f32, shape(33, 7), false, true, r.build))
	}
	cs = append(cs, reduceCase("SUM", f16, shape(7, 3), false, false, (*ggml.Lib).Sum),
		reduceCase("SUM", f16, shape(300, 5, 2), true, false, (*ggml.Lib).Sum))
	for _, ne := range [][4]int64{shape(1), shape(7, 3), shape(100, 10), shape(1025, 5), shape(4097, 2)} {
		cs = append(cs, reduceCase("ARGMAX", f32, ne, false, false, (*ggml.Lib).Argmax))
	}
	cs = append(cs, reduceCase("ARGMAX", f32, shape(33, 7), false, true, (*ggml.Lib).Argmax))
	return cs
}

// reduceCase applies build to a source of type ty and shape ne: with perm, a permutation
// ({0,2,1,3}: rows not contiguous); with view, rows padded by 3 elements at an offset.
func reduceCase(op string, ty tensor.Type, ne [4]int64, perm, view bool, build func(*ggml.Lib, ggml.Context, ggml.Tensor) ggml.Tensor) *Case {
	name := fmt.Sprintf("%s(type=%s,ne=%s", op, ty, fmtNe(ne))
	if perm {
		name += ",perm=[0,2,1,3]"
	}
	if view {
		name += ",view"
	}
	name += ")"
	max := DefaultMaxNMSE
	if ty == f16 {
		max = F16MaxNMSE
	}
	return &Case{Name: name, Op: op, Types: ty.String(), MaxNMSE: max,
		Build: func(b *Builder) ggml.Tensor {
			var a ggml.Tensor
			switch {
			case perm:
				p := [4]int{0, 2, 1, 3}
				pa := permuteShape(ne, p)
				a = b.Permute(b.New("a", ty, pa[:]...), p)
			case view:
				x := b.New("a_base", ty, ne[0]+3, ne[1], ne[2], ne[3])
				a = b.View4D(x, ne, uint64(2*ty.Size()))
			default:
				a = b.New("a", ty, ne[:]...)
			}
			return build(b.L, b.Ctx, a)
		}}
}

// SOFT_MAX with sinks, as test_soft_max with sinks: one sink logit per head (dim 2), with
// and without a mask (F32, F16), ALiBi, broadcast masks.
func softMaxSinksCases() []*Case {
	var cs []*Case
	for _, s := range []struct {
		ne, maskNe [4]int64
		mask       tensor.Type
		scale, mb  float32
	}{
		{shape(7, 3, 4), [4]int64{}, f32, 1, 0},
		{shape(33, 5, 4, 1), shape(33, 5), f16, 0.125, 0},
		{shape(64, 7, 4, 3), shape(64, 7, 4, 3), f32, 0.5, 0},
		{shape(32, 5, 8, 1), shape(32, 8, 1, 1), f16, 1, 8},
		{shape(4097, 2, 2), shape(4097, 2), f32, 1, 0},
	} {
		name := fmt.Sprintf("SOFT_MAX(type=f32,ne=%s", fmtNe(s.ne))
		types := "f32, sinks"
		if s.maskNe != ([4]int64{}) {
			name += fmt.Sprintf(",mask=%s%s", s.mask, fmtNe(s.maskNe))
			types = "f32, mask " + s.mask.String() + ", sinks"
		}
		name += fmt.Sprintf(",scale=%g,max_bias=%g,sinks)", s.scale, s.mb)
		cs = append(cs, &Case{Name: name, Op: "SOFT_MAX", Types: types, MaxNMSE: SoftMaxMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				a := b.New("a", f32, s.ne[:]...)
				var mask ggml.Tensor
				if s.maskNe != ([4]int64{}) {
					mask = b.New("mask", s.mask, s.maskNe[:]...)
				}
				sinks := b.New("sinks", f32, s.ne[2])
				b.Init(sinks, Uniform(-2, 2))
				out := b.L.SoftMaxExt(b.Ctx, a, mask, s.scale, s.mb)
				b.L.SoftMaxAddSinks(out, sinks)
				return out
			}})
	}
	return cs
}
