package sched

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// contig is a contiguous tensor of type ty and shape ne.
func contig(ty tensor.Type, ne ...int64) *tensor.Tensor {
	t := &tensor.Tensor{Type: ty, Ne: [4]int64{1, 1, 1, 1}}
	copy(t.Ne[:], ne)
	nb := uint64(ty.Size())
	for i := range t.Nb {
		t.Nb[i] = nb
		nb *= uint64(t.Ne[i])
	}
	return t
}

// place puts t at byte addr of the compute buffer 1.
func place(t *tensor.Tensor, addr uint64) *tensor.Tensor {
	t.Loc = tensor.Loc{Buffer: 1, Addr: 1<<40 + addr}
	return t
}

// llamaLayer is the start of a llama attention layer in ggml's order, placed as ggml-alloc
// would: Q's matmul and its reshape, ROPE Q (in place over the matmul's result), V's
// matmul and reshape, K's matmul and reshape, then the row rope+set_rows+set_rows (ROPE K,
// its view, K's store, V's view, V's store). Results lie 4096 bytes apart, weights in a
// buffer of their own.
type llamaLayer struct {
	nodes                    []*tensor.Tensor
	qmm, qr, q, vmm, kmm, kr *tensor.Tensor
	x                        *tensor.Tensor // the matmuls' input
}

func newLlamaLayer(t *testing.T) llamaLayer {
	n := fusionExample(t, "rope+rope+set_rows+set_rows")
	q, k, kview, setK, vview, setV := n[0], n[1], n[2], n[3], n[4], n[5]
	x := place(contig(tensor.F32, 64, 3), 0)
	weight := func(rows int64, addr uint64) *tensor.Tensor {
		w := contig(tensor.F16, 64, rows)
		w.Loc = tensor.Loc{Buffer: 2, Addr: 1<<40 + addr}
		return w
	}
	matmul := func(rows int64, addr uint64) (mm, r *tensor.Tensor) {
		mm = place(compute(contig(tensor.F32, rows, 3), tensor.OpMulMat, weight(rows, addr), x), addr)
		r = place(compute(contig(tensor.F32, 8, rows/8, 3), tensor.OpReshape, mm), addr)
		return mm, r
	}
	qmm, qr := matmul(24, 4096)
	vmm, vr := matmul(16, 8192)
	// V's matmul reads an activation of its own, so that the matmuls do not fuse
	// (mul_mat+view+mul_mat+view+mul_mat and the pair rows) and the plans show the sinking
	// alone.
	vmm.Src[1] = place(contig(tensor.F32, 64, 3), 53248)
	kmm, kr := matmul(16, 12288)
	q.Src[0], vview.Src[0], k.Src[0] = qr, vr, kr
	place(q, 4096)
	place(k, 16384)
	place(kview, 16384)
	place(setK, 20480)
	place(setK.Src[2], 20480)
	place(vview, 8192)
	place(setV, 24576)
	place(setV.Src[2], 24576)
	place(setK.Src[1], 28672)
	place(setV.Src[1], 32768)
	place(k.Src[1], 36864)
	place(k.Src[2], 40960)
	return llamaLayer{
		nodes: []*tensor.Tensor{qmm, qr, q, vmm, vr, kmm, kr, k, kview, setK, vview, setV},
		qmm:   qmm, qr: qr, q: q, vmm: vmm, kmm: kmm, kr: kr, x: x,
	}
}

// fusedRows returns the fused steps' first nodes.
func fusedRows(p *Plan) []*tensor.Tensor {
	var first []*tensor.Tensor
	for _, s := range p.Steps {
		if s.Fused != nil {
			first = append(first, s.Fused[0])
		}
	}
	return first
}

func TestSinksRopeQToTheKVStore(t *testing.T) {
	l := newLlamaLayer(t)
	p, err := Build(l.nodes, limits)
	require.NoError(t, err)
	require.Equal(t, []*tensor.Tensor{l.q}, fusedRows(p), "ROPE Q joins the K and V store")
	require.Len(t, p.Steps, 4, "Q's, V's and K's matmuls, then the fused row")
	require.Same(t, l.qmm, p.Steps[0].Node)
	require.Same(t, l.vmm, p.Steps[1].Node)
	require.Same(t, l.kmm, p.Steps[2].Node)
	require.Len(t, p.Steps[3].Fused, 6)
	require.Equal(t, "rope_set_rows", p.Steps[3].Dispatch.Spec.Kernel)
	require.Contains(t, p.Steps[3].Written, l.q, "Q's result is stored")
	require.Same(t, l.q, l.nodes[2], "the caller's node list keeps its order")

	// Without a result placed, the scheduler cannot tell what memory ROPE Q touches.
	l = newLlamaLayer(t)
	l.q.Loc = tensor.Loc{}
	p, err = Build(l.nodes, limits)
	require.NoError(t, err)
	require.NotContains(t, fusedRows(p), l.q)
}

// streams turns l's caches into caches of several streams, as llama's graph has them for
// several sequences: each store writes into a RESHAPE of its cache, a node before it.
func streams(l *llamaLayer) {
	var nodes []*tensor.Tensor
	for _, n := range l.nodes {
		if n.Op == tensor.OpSetRows {
			c := n.Src[2]
			r := compute(contig(c.Type, c.Ne[0], c.Ne[1]), tensor.OpReshape, c)
			r.Loc = c.Loc
			n.Src[2] = r
			nodes = append(nodes, r)
		}
		nodes = append(nodes, n)
	}
	l.nodes = nodes
}

func TestSinksRopeQToTheKVStoreOfStreams(t *testing.T) {
	l := newLlamaLayer(t)
	streams(&l)
	p, err := Build(l.nodes, limits)
	require.NoError(t, err)
	require.Equal(t, []*tensor.Tensor{l.q}, fusedRows(p), "ROPE Q joins the K and V store")
	require.Len(t, p.Steps, 4, "Q's, V's and K's matmuls, then the fused row")
	require.Len(t, p.Steps[3].Fused, 8, "the caches' reshapes inside the row")
	require.Equal(t, "rope_set_rows", p.Steps[3].Dispatch.Spec.Kernel)
	require.Contains(t, p.Steps[3].Written, l.q, "Q's result is stored")
}

func TestSinkingRefusesUnsafeMoves(t *testing.T) {
	refused := map[string]func(l *llamaLayer){
		// a node in between reads the roped Q, or views it
		"reader between": func(l *llamaLayer) {
			add := place(compute(contig(tensor.F32, 8, 3, 3), tensor.OpAdd, l.q, l.q), 49152)
			l.nodes = insert(l.nodes, 4, add)
		},
		"view between": func(l *llamaLayer) {
			v := place(compute(contig(tensor.F32, 24, 3), tensor.OpReshape, l.q), 4096)
			l.nodes = insert(l.nodes, 4, v)
		},
		// V's matmul writes ROPE Q's source (ROPE Q not in place)
		"writes a source": func(l *llamaLayer) {
			place(l.q, 45056)
			place(l.vmm, 4096)
		},
		// K's matmul result over the positions ROPE Q reads
		"writes the positions": func(l *llamaLayer) { place(l.kmm, 36864) },
		// V's matmul placed over ROPE Q's result
		"overlaps the result": func(l *llamaLayer) {
			place(l.vmm, 4096+32)
		},
		// K's matmul reads memory that ROPE Q writes
		"reads the result's memory": func(l *llamaLayer) {
			l.kmm.Src[1] = place(contig(tensor.F32, 64, 3), 4096)
		},
		// five more nodes push ROPE K beyond the look-ahead
		"beyond the look-ahead": func(l *llamaLayer) {
			for i := 0; i < 5; i++ {
				l.nodes = insert(l.nodes, 5, place(compute(contig(tensor.F32, 64, 3), tensor.OpAdd, l.x, l.x), 65536+4096*uint64(i)))
			}
		},
	}
	for name, spoil := range refused {
		t.Run(name, func(t *testing.T) {
			l := newLlamaLayer(t)
			spoil(&l)
			p, err := Build(l.nodes, limits)
			require.NoError(t, err)
			require.NotContains(t, fusedRows(p), l.q)
			require.Equal(t, 1, p.Fused, "K's rope still fuses with the stores")
		})
	}
	// Four more nodes keep ROPE K within the look-ahead (eight nodes to pass).
	l := newLlamaLayer(t)
	for i := 0; i < 4; i++ {
		l.nodes = insert(l.nodes, 5, place(compute(contig(tensor.F32, 64, 3), tensor.OpAdd, l.x, l.x), 65536+4096*uint64(i)))
	}
	p, err := Build(l.nodes, limits)
	require.NoError(t, err)
	require.Equal(t, []*tensor.Tensor{l.q}, fusedRows(p))
	// A reader of the roped Q after the store does not stop it.
	l = newLlamaLayer(t)
	l.nodes = append(l.nodes, place(compute(contig(tensor.F32, 8, 3, 3), tensor.OpAdd, l.q, l.q), 49152))
	p, err = Build(l.nodes, limits)
	require.NoError(t, err)
	require.Equal(t, []*tensor.Tensor{l.q}, fusedRows(p))
}

// insert returns nodes with n inserted at position at.
func insert(nodes []*tensor.Tensor, at int, n *tensor.Tensor) []*tensor.Tensor {
	return append(nodes[:at:at], append([]*tensor.Tensor{n}, nodes[at:]...)...)
}

// unplaced clears the place of every node and source of l (ggml places the graph after
// graph_optimize), but the caches and weights, which exist before.
func unplaced(l llamaLayer) {
	keep := map[*tensor.Tensor]bool{}
	for _, n := range l.nodes {
		if n.Op == tensor.OpSetRows {
			keep[n], keep[n.Src[2]] = true, true
		}
		if n.Op == tensor.OpMulMat {
			keep[n.Src[0]] = true
		}
	}
	for _, n := range l.nodes {
		for _, t := range append([]*tensor.Tensor{n}, n.Src[:]...) {
			if t != nil && !keep[t] {
				t.Loc = tensor.Loc{}
			}
		}
	}
}

// rootOf is the memory a tensor is before ggml places the graph: a view's is its source's.
func rootOf(t *tensor.Tensor) any {
	for t.Op.IsView() && t.Src[0] != nil {
		t = t.Src[0]
	}
	return t
}

func TestOrderSinksBeforePlacement(t *testing.T) {
	l := newLlamaLayer(t)
	unplaced(l)
	order := Order(l.nodes, limits, rootOf)
	require.Len(t, order, len(l.nodes))
	require.Equal(t, []*tensor.Tensor{l.qmm, l.qr, l.vmm, l.nodes[4], l.kmm, l.kr, l.q}, order[:7], "ROPE Q moves to just before ROPE K")
	require.Equal(t, l.nodes[7:], order[7:])
	require.Same(t, l.q, l.nodes[2], "the caller's node list keeps its order")

	// A node in between that writes into ROPE Q's source (in place: a view of it) keeps it.
	l = newLlamaLayer(t)
	unplaced(l)
	scale := compute(contig(tensor.F32, 24, 3), tensor.OpScale, l.qmm)
	inPlace := compute(contig(tensor.F32, 24, 3), tensor.OpView, l.qmm)
	scale.Src[0] = inPlace
	root := func(t *tensor.Tensor) any {
		if t == scale {
			return l.qmm // ggml_scale_inplace: a view of its source
		}
		return rootOf(t)
	}
	nodes := insert(l.nodes, 3, scale)
	require.Equal(t, nodes, Order(nodes, limits, root))
	require.NotEqual(t, nodes, Order(nodes, limits, rootOf), "reading ROPE Q's source does not keep it")
	// So does one that writes the positions ROPE Q reads (placed or not).
	l = newLlamaLayer(t)
	unplaced(l)
	pos := l.q.Src[1]
	write := compute(contig(tensor.I32, 3), tensor.OpScale, l.x)
	root = func(t *tensor.Tensor) any {
		if t == write {
			return pos // written into the positions, as an in-place op would
		}
		return rootOf(t)
	}
	nodes = insert(l.nodes, 5, write)
	require.Equal(t, nodes, Order(nodes, limits, root))
	require.NotEqual(t, nodes, Order(nodes, limits, rootOf), "the same node writing memory of its own lets ROPE Q pass")
}

// With one activation for the three matmuls, they fuse as well once ROPE Q has moved
// down: a llama layer's attention inputs take two dispatches.
func TestSinksRopeQWithFusedQKV(t *testing.T) {
	l := newLlamaLayer(t)
	l.vmm.Src[1] = l.x
	p, err := Build(l.nodes, limits)
	require.NoError(t, err)
	require.Equal(t, []*tensor.Tensor{l.qmm, l.q}, fusedRows(p))
	require.Len(t, p.Steps, 2, "Q's, V's and K's matmuls in one, then the fused row")
	require.Same(t, l.kmm, p.Steps[0].Node)
	require.Equal(t, "mul_mat_multi", p.Steps[0].Dispatch.Spec.Kernel)
	require.Equal(t, []*tensor.Tensor{l.qmm, l.vmm, l.kmm}, p.Steps[0].Written)
	require.Equal(t, "rope_set_rows", p.Steps[1].Dispatch.Spec.Kernel)
}
