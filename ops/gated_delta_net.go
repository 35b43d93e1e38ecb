package ops

import (
	"fmt"
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// GATED_DELTA_NET (ggml_gated_delta_net, the recurrent layer of Qwen3.5, Qwen3-Next and
// Kimi Linear): src0 q, src1 k {S, Hq or Hk, T, n_q or n_k}, src2 v {S, H, T, n}, src3 g
// {1 or S (KDA), H, T, n}, src4 beta {1, H, T, n}, src5 state {S, S, H, n}; op_params[0]
// K, the state snapshots kept. Per head h and sequence s (q's and k's head h % Hq and
// sequence s / (n / n_q)), with M = the state transposed (row j of M is state[:, j]), for
// each token t in turn:
//
//	M[j][i] *= exp(g[i])  (or exp(g[0]))
//	delta[j] = (v[j] - M[j] . k) * beta
//	M[j][i] += k[i] * delta[j]
//	out[j]   = (M[j] . q) / sqrt(S)
//
// dst {S H, T n + K S n} holds out (element j + S (h + H (t + T s))) and then the state
// after token T - 1 - slot in snapshot slot slot < min(K, T) (element i + S (j + S (h + H
// s)) of slot slot's S S H n); slots of tokens before the batch are left as they are.
//
// Rows j are independent: a workgroup takes rowLanesWG / lanes of them for one (h, s),
// lanes invocations a row, each holding its row's elements lane, lane + lanes, ... (at most
// rowLanesMaxElems) in registers for the whole batch (rowLanes). Per token one reduction over a row's
// lanes gives M[j] . k, M[j] . q and k . q (after the decay), and out[j] is M[j] . q +
// delta[j] (k . q): the update's second product without a second reduction.

type gdnParams struct {
	Q, K, V, G, B, S [4]uint32 // strides of q, k, v, g, beta, state
	Size             uint32    // S
	Heads            uint32    // H
	Tokens           uint32    // T
	Seqs             uint32    // n
	Snapshots        uint32    // K
	QHeads, KHeads   uint32    // Hq, Hk (heads taken modulo)
	QSeqDiv, KSeqDiv uint32    // n / n_q, n / n_k (sequences divided)
	GVec             uint32    // 1: g holds S values a token (KDA)
	Blocks           uint32    // row blocks of a (h, s): ceil(S / rows)
	Scale            float32   // 1 / sqrt(S)
	CacheRow         uint32    // CACHE: elements from one sequence's state to the next in the cache
}

// gdnStoreRow is the fusion row GATED_DELTA_NET -> the VIEW of its final state, the VIEW
// of the states' cache -> CPY of the one into the other (llama's build_recurrent_attn
// without snapshots kept): the kernel stores the final state into the cache as well as into
// its result (CACHE), in place of the copy's dispatch.
var gdnStoreRow = Fusion{
	Name:    "gated_delta_net+cpy",
	Ops:     []OpSet{{tensor.OpGatedDeltaNet}, {tensor.OpView}, viewOps, {tensor.OpCpy}},
	Guard:   guardGDNStore,
	Lower:   lowerGDNStore,
	Example: func() []*tensor.Tensor { return gdnStoreNodes(16, 2, 1, 2) },
}

// gdnStoreNodes is an example of the row: state rows of s, h heads, t tokens, n sequences,
// the cache of 4 sequences' states.
func gdnStoreNodes(s, h, t, n int64) []*tensor.Tensor {
	gdn := gdnNode(s, h, t, n, h, 1, 1)
	out := uint64(s*h*t*n) * 4
	state := &tensor.Tensor{Type: tensor.F32, Ne: [4]int64{s, s, h, n}, Nb: [4]uint64{4, uint64(s) * 4, uint64(s*s) * 4, uint64(s*s*h) * 4}}
	node(tensor.OpView, state, []int32{int32(out), int32(out >> 32)}, gdn)
	cache := f32(s*s*h, 4)
	view := &tensor.Tensor{Type: tensor.F32, Ne: [4]int64{s * s * h, n, 1, 1}, Nb: cache.Nb}
	node(tensor.OpView, view, []int32{int32(cache.Nb[1]), 0}, cache)
	cpy := &tensor.Tensor{Type: tensor.F32, Ne: view.Ne, Nb: view.Nb}
	return []*tensor.Tensor{gdn, state, view, node(tensor.OpCpy, cpy, nil, state, view)}
}

// viewOffset returns the byte offset of a VIEW node into its source (op_params 0 and 1).
func viewOffset(v *tensor.Tensor) uint64 {
	return uint64(uint32(v.Params[0])) | uint64(uint32(v.Params[1]))<<32
}

// guardGDNStore admits the four nodes where the GATED_DELTA_NET keeps one snapshot, the
// first VIEW is exactly its final state (contiguous, after the outputs), the CPY copies
// that view into the second VIEW, F32 rows of one sequence's state each (any row stride),
// and the copy's memory overlaps none of the attention's inputs or its result.
func guardGDNStore(n []*tensor.Tensor, l *Limits) bool {
	gdn, st, cv, cp := n[0], n[1], n[2], n[3]
	if !Supports(gdn, l) || !Supports(cp, l) || gdn.Params[0] != 1 {
		return false
	}
	v := gdn.Src[2]
	size, heads, seqs := v.Ne[0], v.Ne[1], v.Ne[3]
	out := uint64(size*heads*v.Ne[2]*seqs) * 4
	if st.Src[0] != gdn || !st.Contiguous() || st.Type != tensor.F32 || st.Elems() != size*size*heads*seqs || viewOffset(st) != out {
		return false
	}
	if cp.Src[0] != st || cp.Src[1] != cv || cp.Type != tensor.F32 || cv.Type != tensor.F32 {
		return false
	}
	if cv.Ne != [4]int64{size * size * heads, seqs, 1, 1} || cv.Nb[0] != 4 || cv.Nb[1]%4 != 0 || cp.Ne != cv.Ne || cp.Nb != cv.Nb {
		return false
	}
	for _, r := range append(gdn.Src[:6:6], gdn) {
		if overlaps(cp, r) {
			return false
		}
	}
	return true
}

// lowerGDNStore lowers the four nodes as the attention's dispatch storing its final state
// into the copy's memory too.
func lowerGDNStore(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	ds, err := lowerGDN(n[0], l)
	if err != nil {
		return nil, err
	}
	cp := n[3]
	d := ds[0].withOutput("CACHE", "cache", cp)
	p := d.Params.(gdnParams)
	p.CacheRow = uint32(cp.Nb[1] / 4)
	d.Params = p
	return []Dispatch{d}, nil
}

func init() {
	describeFamily("GATED_DELTA_NET", "F32", fmt.Sprintf("state rows up to %d; scalar and per-element (KDA) gates; q and k heads broadcast; state snapshots; strided q, k, v rows", rowLanesMaxLen))
	register(tensor.OpGatedDeltaNet, family{supports: supportsGDN, lower: lowerGDN, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{
			gdnNode(16, 2, 3, 1, 1, 1, 1),
			gdnNode(40, 4, 2, 2, 2, 40, 3),
		}
	}})
}

// gdnNode is an example node: state rows of s, h heads (hk of q and k), t tokens, n
// sequences, gate width gw, k snapshots.
func gdnNode(s, h, t, n, hk, gw, k int64) *tensor.Tensor {
	qk := f32(s, hk, t, n)
	rows := t*n + k*s*n
	return node(tensor.OpGatedDeltaNet, f32(s*h, rows), []int32{int32(k)},
		qk, f32(s, hk, t, n), f32(s, h, t, n), f32(gw, h, t, n), f32(1, h, t, n), f32(s, s, h, n))
}

func supportsGDN(t *tensor.Tensor, _ *Limits) bool {
	q, k, v, g, beta, st := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4], t.Src[5]
	for _, x := range []*tensor.Tensor{q, k, v, g, beta, st} {
		if x == nil || x.Type != tensor.F32 || !elementAligned(x) {
			return false
		}
	}
	if t.Type != tensor.F32 || !t.Contiguous() || !g.Contiguous() || !beta.Contiguous() || !st.Contiguous() {
		return false
	}
	s, h, n, seqs := v.Ne[0], v.Ne[1], v.Ne[2], v.Ne[3]
	snaps := int64(t.Params[0])
	if s < 1 || s > rowLanesMaxLen || h < 1 || n < 1 || seqs < 1 || snaps < 1 {
		return false
	}
	for _, x := range []*tensor.Tensor{q, k} {
		if x.Ne[0] != s || x.Ne[1] < 1 || x.Ne[2] != n || x.Ne[3] < 1 || seqs%x.Ne[3] != 0 {
			return false
		}
	}
	if (g.Ne[0] != 1 && g.Ne[0] != s) || g.Ne[1] != h || g.Ne[2] != n || g.Ne[3] != seqs {
		return false
	}
	if beta.Ne != [4]int64{1, h, n, seqs} || st.Ne != [4]int64{s, s, h, seqs} {
		return false
	}
	return t.Ne == [4]int64{s * h, n*seqs + snaps*s*seqs, 1, 1}
}

func lowerGDN(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	q, k, v, g, beta, st := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4], t.Src[5]
	s := v.Ne[0]
	blocks, defs := rowLanesPlan(s, s)
	p := gdnParams{
		Q: strides(q), K: strides(k), V: strides(v), G: strides(g), B: strides(beta), S: strides(st),
		Size: uint32(s), Heads: uint32(v.Ne[1]), Tokens: uint32(v.Ne[2]), Seqs: uint32(v.Ne[3]),
		Snapshots: uint32(t.Params[0]), QHeads: uint32(q.Ne[1]), KHeads: uint32(k.Ne[1]),
		QSeqDiv: uint32(v.Ne[3] / q.Ne[3]), KSeqDiv: uint32(v.Ne[3] / k.Ne[3]), GVec: perElement(g.Ne[0], s),
		Blocks: uint32(blocks), Scale: float32(1 / math.Sqrt(float64(s))),
	}
	sp := spec("gated_delta_net", rowLanesWG, p, defs, in("q", q), in("k", k), in("v", v), in("g", g), in("beta", beta), in("state", st), out("dst", t))
	n := uint64(blocks) * uint64(v.Ne[1]) * uint64(v.Ne[3])
	return []Dispatch{{Spec: sp, Tensors: []*tensor.Tensor{q, k, v, g, beta, st, t}, Params: p, Grid: grid1D(n, l)}}, nil
}
