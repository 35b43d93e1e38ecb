package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// SSM_SCAN (ggml_ssm_scan, the selective scan of Mamba and Mamba-2 layers): src0 s
// {d_state, dim, n_head, at least n} the states, src1 x {dim, n_head, T, n}, src2 dt
// {n_head, T, n}, src3 A {d_state or 1 (Mamba-2), n_head}, src4 B and src5 C {d_state,
// n_group, T, n}, src6 ids {n} (I32: the state of sequence s is s's row ids[s], clamped
// to the rows); op_params[0] K, the state snapshots kept. Per row (i, h) of sequence s,
// with g = h / (n_head / n_group), for each token t in turn, dt' = softplus(dt[h]):
//
//	state[c] = state[c] exp(dt' A[c or 0, h]) + B[c, g] x[i, h] dt'
//	y[i, h]  = sum_c state[c] C[c, g]
//
// dst (1-D) holds y {dim, n_head, T, n}, then the state after the last token of each
// sequence (its s's d_state dim n_head floats) and, for slot 0 < slot < min(K, T), the
// state after token T - 1 - slot at slot n + s. A row's d_state states are held lanes
// invocations a row (rowLanes), one reduction a token.

type ssmScanParams struct {
	S, X, DT, A, B, C [4]uint32 // strides of the states, x, dt, A, B, C
	State             uint32    // d_state
	Dim, Heads        uint32    // dim, n_head
	Tokens, Seqs      uint32    // T, n
	GroupHeads        uint32    // n_head / n_group
	Snapshots         uint32    // K
	AVec              uint32    // 1: A holds d_state values a head (Mamba)
	Blocks            uint32    // row blocks of a sequence: ceil(dim n_head / rows)
	StateRows         uint32    // the states' rows (src0's ne3): ids are clamped to them
}

func init() {
	describeFamily("SSM_SCAN", "F32; I32 ids", fmt.Sprintf("Mamba and Mamba-2 decay; states up to %d; groups; state snapshots", rowLanesMaxLen))
	register(tensor.OpSSMScan, family{supports: supportsSSMScan, lower: lowerSSMScan, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{ssmScanNode(16, 8, 4, 2, 3, 2, true, 1), ssmScanNode(64, 16, 4, 1, 2, 2, false, 2)}
	}})
}

// ssmScanNode is an example node: states of n elements, dim, heads, groups, t tokens,
// seqs sequences, A per element (Mamba) or per head, k snapshots.
func ssmScanNode(n, dim, heads, groups, t, seqs int64, avec bool, k int64) *tensor.Tensor {
	an := int64(1)
	if avec {
		an = n
	}
	x := f32(dim, heads, t, seqs)
	return node(tensor.OpSSMScan, f32(dim*heads*t*seqs+k*n*dim*heads*seqs), []int32{int32(k)},
		f32(n, dim, heads, seqs), x, f32(heads, t, seqs), f32(an, heads), f32(n, groups, t, seqs), f32(n, groups, t, seqs),
		contiguous(tensor.I32, seqs))
}

func supportsSSMScan(t *tensor.Tensor, _ *Limits) bool {
	s, x, dt, a, b, c, ids := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4], t.Src[5], t.Src[6]
	for _, v := range []*tensor.Tensor{s, x, dt, a, b, c} {
		if v == nil || v.Type != tensor.F32 || !elementAligned(v) {
			return false
		}
	}
	if ids == nil || ids.Type != tensor.I32 || !ids.Contiguous() || t.Type != tensor.F32 || !t.Contiguous() {
		return false
	}
	n, dim, heads, tokens, seqs := s.Ne[0], x.Ne[0], x.Ne[1], x.Ne[2], x.Ne[3]
	k := int64(t.Params[0])
	if n < 1 || n > rowLanesMaxLen || dim < 1 || heads < 1 || tokens < 1 || seqs < 1 || k < 1 {
		return false
	}
	// The CPU backend reads s, dt and A as contiguous and x, B and C rows as packed.
	if !s.Contiguous() || !dt.Contiguous() || !a.Contiguous() || x.Nb[0] != 4 || x.Nb[1] != uint64(4*dim) ||
		b.Nb[0] != 4 || b.Nb[1] != uint64(4*n) || c.Nb[0] != 4 || c.Nb[1] != uint64(4*n) {
		return false
	}
	groups := b.Ne[1]
	if s.Ne[1] != dim || s.Ne[2] != heads || s.Ne[3] < 1 || dt.Ne != [4]int64{heads, tokens, seqs, 1} ||
		a.Ne[1] != heads || (a.Ne[0] != 1 && a.Ne[0] != n) || a.Ne[2] != 1 || a.Ne[3] != 1 ||
		b.Ne != [4]int64{n, groups, tokens, seqs} || c.Ne != b.Ne || groups < 1 || heads%groups != 0 ||
		ids.Ne != [4]int64{seqs, 1, 1, 1} {
		return false
	}
	if a.Ne[0] != 1 && k != 1 {
		return false // as ggml_ssm_scan: Mamba's decay takes no snapshots
	}
	return t.Elems() == x.Elems()+k*n*dim*heads*seqs
}

func lowerSSMScan(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	s, x, dt, a, b, c, ids := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4], t.Src[5], t.Src[6]
	n := s.Ne[0]
	blocks, defs := rowLanesPlan(n, x.Ne[0]*x.Ne[1])
	p := ssmScanParams{
		S: strides(s), X: strides(x), DT: strides(dt), A: strides(a), B: strides(b), C: strides(c),
		State: uint32(n), Dim: uint32(x.Ne[0]), Heads: uint32(x.Ne[1]), Tokens: uint32(x.Ne[2]), Seqs: uint32(x.Ne[3]),
		GroupHeads: uint32(x.Ne[1] / b.Ne[1]), Snapshots: uint32(t.Params[0]), AVec: perElement(a.Ne[0], n), Blocks: uint32(blocks),
		StateRows: uint32(s.Ne[3]),
	}
	sp := spec("ssm_scan", rowLanesWG, p, defs, in("s", s), in("x", x), in("dt", dt), in("a", a), in("b", b), in("c", c), in("ids", ids), out("dst", t))
	return []Dispatch{{Spec: sp, Tensors: []*tensor.Tensor{s, x, dt, a, b, c, ids, t}, Params: p, Grid: grid1D(uint64(blocks)*uint64(x.Ne[3]), l)}}, nil
}
