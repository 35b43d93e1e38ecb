package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// RWKV_WKV6, GATED_LINEAR_ATTN and RWKV_WKV7 (ggml_rwkv_wkv6, ggml_gated_linear_attn,
// ggml_rwkv_wkv7: the recurrent layers of RWKV-6, RWKV-7 and their Qwen-based
// variants): per head h, a state S {S_size x S_size}, element (i, j) at i S_size + j,
// and T tokens in n sequences of T / n tokens each, the first from the sequence's row of
// the state operand {S_size S_size H, n}. Every operand {S_size, H, T} and the state are
// contiguous. Per token, with the token's vectors over i or j:
//
//	WKV6 (k, v, r, tf {S_size, H}, td): out[j] = sum_i r[i] (S[i][j] + tf[i] k[i] v[j]);
//	    S[i][j] = S[i][j] td[i] + k[i] v[j]
//	GLA (k, v, q, g; op_params[0] scale): S[i][j] = S[i][j] g[i] + k[i] v[j];
//	    out[j] = sum_i S[i][j] q[i] scale
//	WKV7 (r, w, k, v, a, b): sa = sum_j a[j] S[i][j]; S[i][j] = S[i][j] w[j] + v[i] k[j] +
//	    sa b[j]; out[i] = sum_j S[i][j] r[j]
//
// dst {S_size H, T + S_size n} holds out (token t's at row t) and then each sequence's
// last state. The kernel (wkv.wgsl) holds a state's rows as the other recurrent kernels do
// (rowLanes): the output's index is the row (j for WKV6 and GLA, i for WKV7), the summed
// one the lanes' elements, and one reduction a token gives every sum it needs (out is
// taken apart into sums over the state before the update).

type wkvParams struct {
	Size, Heads, Tokens, Seqs uint32
	RowStride, ElemStride     uint32 // a row's and its elements' strides within a head's state
	Blocks                    uint32 // row blocks of a head: ceil(S_size / rows)
	Scale                     float32
}

// wkvForms names each op's kernel form and operands, in source order.
var wkvForms = map[tensor.Op]struct {
	form     string
	operands []string
}{
	tensor.OpRWKVWKV6:        {"WKV6", []string{"k", "v", "r", "tf", "td", "state"}},
	tensor.OpGatedLinearAttn: {"GLA", []string{"k", "v", "q", "g", "state"}},
	tensor.OpRWKVWKV7:        {"WKV7", []string{"r", "w", "k", "v", "a", "b", "state"}},
}

func init() {
	describeFamily("RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7", "F32",
		fmt.Sprintf("contiguous operands; heads of up to %d", rowLanesMaxLen))
	for op, f := range wkvForms {
		n := len(f.operands)
		register(op, family{supports: supportsWKV, lower: lowerWKV, examples: func() []*tensor.Tensor {
			return []*tensor.Tensor{wkvNode(op, n, 16, 2, 6, 2), wkvNode(op, n, 64, 3, 2, 1)}
		}})
	}
}

// wkvNode is an example node of op with n operands: heads of s, h heads, t tokens in
// seqs sequences.
func wkvNode(op tensor.Op, n int, s, h, t, seqs int64) *tensor.Tensor {
	srcs := make([]*tensor.Tensor, n)
	for i := range srcs {
		srcs[i] = f32(s, h, t)
	}
	if op == tensor.OpRWKVWKV6 {
		srcs[3] = f32(s, h) // tf
	}
	srcs[n-1] = f32(s*s*h, seqs)
	var params []int32
	if op == tensor.OpGatedLinearAttn {
		params = []int32{int32(f32bits(0.125))}
	}
	return node(op, f32(s*h, t+s*seqs), params, srcs...)
}

func supportsWKV(t *tensor.Tensor, _ *Limits) bool {
	f := wkvForms[t.Op]
	n := len(f.operands)
	for i := 0; i < n; i++ {
		if s := t.Src[i]; s == nil || s.Type != tensor.F32 || !s.Contiguous() {
			return false
		}
	}
	if t.Type != tensor.F32 || !t.Contiguous() {
		return false
	}
	st := t.Src[n-1]
	ref := t.Src[0]
	s, h, tokens, seqs := ref.Ne[0], ref.Ne[1], ref.Ne[2], st.Ne[1]
	if s < 1 || s > rowLanesMaxLen || h < 1 || tokens < 1 || seqs < 1 || tokens%seqs != 0 || ref.Ne[3] != 1 {
		return false
	}
	for i := 0; i < n-1; i++ {
		want := [4]int64{s, h, tokens, 1}
		if t.Op == tensor.OpRWKVWKV6 && i == 3 {
			want = [4]int64{s, h, 1, 1} // tf
		}
		if t.Src[i].Ne != want {
			return false
		}
	}
	return st.Ne == [4]int64{s * s * h, seqs, 1, 1} && t.Ne == [4]int64{s * h, tokens + s*seqs, 1, 1}
}

func lowerWKV(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	f := wkvForms[t.Op]
	n := len(f.operands)
	st, ref := t.Src[n-1], t.Src[0]
	s := ref.Ne[0]
	blocks, defs := rowLanesPlan(s, s)
	defs[f.form] = "1" // the other forms' #if read an absent name as false
	p := wkvParams{Size: uint32(s), Heads: uint32(ref.Ne[1]), Tokens: uint32(ref.Ne[2]), Seqs: uint32(st.Ne[1]),
		RowStride: 1, ElemStride: uint32(s), Blocks: uint32(blocks)}
	if t.Op == tensor.OpRWKVWKV7 {
		p.RowStride, p.ElemStride = uint32(s), 1
	}
	if t.Op == tensor.OpGatedLinearAttn {
		p.Scale = t.ParamF32(0)
	}
	ops := make([]wgslOperand, 0, n+1)
	ts := make([]*tensor.Tensor, 0, n+1)
	for i, name := range f.operands {
		ops = append(ops, in(name, t.Src[i]))
		ts = append(ts, t.Src[i])
	}
	ops = append(ops, out("dst", t))
	ts = append(ts, t)
	sp := spec("wkv", rowLanesWG, p, defs, ops...)
	return []Dispatch{{Spec: sp, Tensors: ts, Params: p, Grid: grid1D(uint64(blocks)*uint64(ref.Ne[1])*uint64(st.Ne[1]), l)}}, nil
}
