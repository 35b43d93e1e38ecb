package ops

import (
	"slices"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The fusion table: runs of consecutive graph nodes that one lowering computes together.
// The lowering writes the last node's result and that of every other node of the match
// that needs work and is not at one of the row's Private positions (an intermediate result
// that later nodes or the host still read, such as llama's residual sum); a Private
// result is not written. The scheduler tries the rows in order at every node and takes the
// first that applies, so longer patterns come first; a new fusion is a new row (and its
// guard and lowering, next to the op family they build on).

// OpSet is the ops a node at one position of a fusion pattern may have.
type OpSet []tensor.Op

// Has reports whether op is in the set.
func (s OpSet) Has(op tensor.Op) bool { return slices.Contains(s, op) }

// Fusion is one row of the fusion table.
type Fusion struct {
	// Name identifies the row.
	Name string
	// Ops is the pattern: one set of ops per position, for consecutive nodes. A node that
	// is a view (PERMUTE, ...) needs no work of its own and counts as skipped; every other
	// node of a match must need work.
	Ops []OpSet
	// Private lists the positions whose results the fused kernel does not write: each must
	// be read by exactly one node, a later one of the match, and must not be a graph output.
	// Only the scheduler sees the whole graph, so it checks this. Every other position but
	// views is written (Written), so its result may be read by anything, later nodes
	// outside the match and the host included.
	Private []int
	// Consumes lists positions whose node may lie exactly over its first source while the
	// fused kernel does not write it (a private result): ggml-alloc places a ROPE in place
	// over a source it is the last reader of. The scheduler admits such a match only where
	// that source is produced in the graph and read by nothing else (through views too)
	// and is no graph output, so that no one reads the bytes the node would have replaced.
	Consumes []int
	// Links, where set, reports whether nodes whose ops match the pattern are linked as the
	// pattern means, before anything else is checked: rows whose patterns are broad (the
	// element-wise chains) then match only such nodes, and are not reported as refused
	// where their nodes merely follow each other.
	Links func(n []*tensor.Tensor) bool
	// Guard reports whether nodes whose ops match the pattern are safe to fuse: linked to
	// each other as the pattern means, each supported, and no result overlapping an input
	// that other invocations still read (ggml may place the result over the pattern's
	// freed inputs).
	Guard func(n []*tensor.Tensor, l *Limits) bool
	// Lower lowers nodes that passed Guard; its dispatches compute the last node and store
	// every result of Written(n), each bound as a written operand (the scheduler checks
	// that). An error means the guard admitted what the lowering cannot do.
	Lower func(n []*tensor.Tensor, l *Limits) ([]Dispatch, error)
	// Example returns nodes the row applies to; the compile test builds their kernels.
	Example func() []*tensor.Tensor
	// Sink lets the scheduler move the row's first node down, past a few nodes that do not
	// touch it, to just before the rest of a match (sched's sinking rule): for a node the
	// graph computes early, such as llama's ROPE of Q ahead of the K and V matmuls.
	Sink bool
}

// Applies reports whether the row's pattern matches nodes (as many as its positions) and
// its guard admits them: all that the nodes alone decide. The caller checks that the
// nodes need work and that the Private positions are private.
func (f *Fusion) Applies(n []*tensor.Tensor, l *Limits) bool {
	return f.Matches(n) && f.Guard(n, l)
}

// Matches reports whether the ops of nodes (as many as the row's positions) match the
// row's pattern and, where the row says how, are linked as it means, before its guard is
// asked.
func (f *Fusion) Matches(n []*tensor.Tensor) bool {
	if len(n) != len(f.Ops) {
		return false
	}
	for i, ops := range f.Ops {
		if !ops.Has(n[i].Op) {
			return false
		}
		if n[i].Op == tensor.OpMulMat && n[i].Src[1] != nil && n[i].Src[1].Type != tensor.F32 {
			return false // F16 activations take the plain kernels only (lowerMulMat)
		}
	}
	return f.Links == nil || f.Links(n)
}

// Written returns the results a lowering of the row writes, in pattern order: those of
// the nodes of n that are neither views nor at a Private position, the last node's always.
func (f *Fusion) Written(n []*tensor.Tensor) []*tensor.Tensor {
	var out []*tensor.Tensor
	for i, t := range n {
		if i == len(n)-1 || (!t.Op.IsView() && !slices.Contains(f.Private, i)) {
			out = append(out, t)
		}
	}
	return out
}

// Fusions returns the fusion table, in the order the rows are tried (longest first). The
// caller must not modify it.
func Fusions() []Fusion { return fusions }

var fusions = []Fusion{
	addNormQKVRopeRow,  // and the ROPEs of Q and K and the K and V stores
	mulMatMultiRopeRow, // Q, V and K on the vectorised mat-vec, the ROPEs and the stores
	addNormQKVRow,      // llama's l_out, attn_norm and Q, V, K projections
	gateTailRow,        // and the down product's column quantized by the gate
	addNormGateRow,     // llama's ffn_inp, ffn_norm and feed-forward gate
	ropeRopeSetRowsRowsRow,
	ropeSetRowsRowsRow,
	mulMatViewMulMatViewMulMatRow, // llama's Q, V and K projections
	gdnStoreRow,                   // a delta-net layer's final state into its cache
	ropeSetRowsRow,
	flashAttnMulMatRow, // llama's attention and its output product
	{
		// llama's kqv -> kqv_merged -> kqv_out: the matmul stores straight into the
		// contiguous result.
		Name:    "mul_mat+permute+cont",
		Ops:     []OpSet{{tensor.OpMulMat}, {tensor.OpPermute}, {tensor.OpCont}},
		Private: []int{0, 1},
		Guard:   guardMulMatPermuteCont,
		Lower:   lowerMulMatPermuteCont,
		Example: func() []*tensor.Tensor {
			// kqv [8, 3, 2] -> permute(0, 2, 1, 3) -> cont [8, 2, 3]
			kqv := node(tensor.OpMulMat, f32(8, 3, 2), nil, f32(16, 8, 2), f32(16, 3, 2))
			perm := &tensor.Tensor{Type: tensor.F32, Ne: [4]int64{8, 2, 3, 1}, Nb: [4]uint64{4, 96, 32, 192}}
			node(tensor.OpPermute, perm, []int32{0, 2, 1, 3}, kqv)
			return []*tensor.Tensor{kqv, perm, node(tensor.OpCont, f32(8, 2, 3), nil, perm)}
		},
	},
	{
		// llama's feed-forward gate and up mat-vecs (either order) and the SWIGLU of the two.
		Name:    "mul_mat+mul_mat+glu",
		Ops:     []OpSet{{tensor.OpMulMat}, {tensor.OpMulMat}, {tensor.OpGLU}},
		Private: []int{0, 1},
		Guard:   guardMatVecGLU,
		Lower:   lowerMatVecGLU,
		Example: func() []*tensor.Tensor {
			x := f32(64, 2)
			up := node(tensor.OpMulMat, f32(9, 2), nil, contiguous(tensor.F16, 64, 9), x)
			gate := node(tensor.OpMulMat, f32(9, 2), nil, contiguous(tensor.F16, 64, 9), x)
			return []*tensor.Tensor{up, gate, node(tensor.OpGLU, f32(9, 2), []int32{int32(tensor.GLUSwiGLU)}, gate, up)}
		},
	},
	// three MUL_MATs of one activation (before the pair rows: all three where they are)
	mulMatMulMatMulMatRow,
	mulMatViewMulMatRow,
	{
		// llama's residual sums and the norm after each (ffn_inp -> ffn_norm, l_out -> the
		// next layer's attn_norm): the sum is written (the next residual reads it), the
		// norm stays in the kernel, the MUL by the norm's weight is the result.
		Name:    "add+norm+mul",
		Ops:     []OpSet{{tensor.OpAdd}, {tensor.OpRMSNorm, tensor.OpNorm}, {tensor.OpMul}},
		Private: []int{1},
		Guard:   guardAddNormMul,
		Lower:   lowerAddNormMul,
		Example: func() []*tensor.Tensor {
			add := node(tensor.OpAdd, f32(7, 2), nil, f32(7, 2), f32(7))
			norm := node(tensor.OpRMSNorm, f32(7, 2), []int32{int32(f32bits(1e-5))}, add)
			return []*tensor.Tensor{add, norm, node(tensor.OpMul, f32(7, 2), nil, norm, f32(7))}
		},
	},
	{
		// llama's attn_norm and ffn_norm: the norm and the MUL by its weight.
		Name:    "norm+mul",
		Ops:     []OpSet{{tensor.OpRMSNorm, tensor.OpNorm}, {tensor.OpMul}},
		Private: []int{0},
		Guard:   guardNormMul,
		Lower:   lowerNormMul,
		Example: func() []*tensor.Tensor {
			norm := node(tensor.OpRMSNorm, f32(7, 2), []int32{int32(f32bits(1e-5))}, f32(7, 2))
			return []*tensor.Tensor{norm, node(tensor.OpMul, f32(7, 2), nil, norm, f32(7))}
		},
	},
	{
		// the L2 norms of delta-net layers' q and k (llama's build_gdn_l2_norm: RMS_NORM,
		// then SCALE by 1 / sqrt(n)): the norm stays in the kernel.
		Name:    "norm+scale",
		Ops:     []OpSet{{tensor.OpRMSNorm, tensor.OpNorm, tensor.OpL2Norm}, {tensor.OpScale}},
		Private: []int{0},
		Guard:   guardNormScale,
		Lower:   lowerNormScale,
		Example: func() []*tensor.Tensor {
			norm := node(tensor.OpRMSNorm, f32(7, 2), []int32{int32(f32bits(1e-5))}, f32(7, 2))
			return []*tensor.Tensor{norm, node(tensor.OpScale, f32(7, 2), []int32{int32(f32bits(0.125)), 0}, norm)}
		},
	},
	ssmConvActRow,
	mulMatMulMatRow,
}

func init() {
	// a mixture of experts' router, the chains of ADDs over its slots and the K and V
	// stores into caches of several streams, longest first, ahead of the rows no longer
	// than they
	rows := append([]Fusion{moeRouterRow(true), moeRouterRow(false)}, moeSumRows()...)
	rows = append(rows, streamsRow(ropeRopeSetRowsRowsRow), streamsRow(ropeSetRowsRowsRow), streamsRow(ropeSetRowsRow))
	slices.SortStableFunc(rows, func(a, b Fusion) int { return len(b.Ops) - len(a.Ops) })
	var table []Fusion
	for _, f := range fusions {
		for len(rows) > 0 && len(rows[0].Ops) >= len(f.Ops) {
			table, rows = append(table, rows[0]), rows[1:]
		}
		table = append(table, f)
	}
	fusions = append(table, rows...)
	// the element-wise chains last, so that every other row is tried first at a node
	fusions = append(fusions, elemChainRows()...)
}
