package sched

import (
	"fmt"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

func f32(ne0 int64) *tensor.Tensor {
	return &tensor.Tensor{Type: tensor.F32, Ne: [4]int64{ne0, 1, 1, 1}, Nb: [4]uint64{4, 4 * uint64(ne0), 4 * uint64(ne0), 4 * uint64(ne0)}}
}

func compute(t *tensor.Tensor, op tensor.Op, src ...*tensor.Tensor) *tensor.Tensor {
	t.Op, t.Flags = op, tensor.FlagCompute
	copy(t.Src[:], src)
	return t
}

func graph() []*tensor.Tensor {
	a, b := f32(8), f32(8)
	add := compute(f32(8), tensor.OpAdd, a, b)
	view := compute(f32(8), tensor.OpView, add)
	notCompute := compute(f32(8), tensor.OpMul, add, b)
	notCompute.Flags = 0
	empty := compute(&tensor.Tensor{Type: tensor.F32, Nb: [4]uint64{4, 4, 4, 4}}, tensor.OpAdd, a, b)
	nodes := []*tensor.Tensor{add, view, notCompute, empty}
	for i := 0; i < 5; i++ {
		nodes = append(nodes, compute(f32(8), tensor.OpMul, add, b))
	}
	return nodes
}

var limits = &ops.Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}

func TestBuildSkipsNoWork(t *testing.T) {
	p, err := Build(graph(), limits)
	require.NoError(t, err)
	require.Len(t, p.Steps, 6)
	require.Equal(t, 3, p.Skipped)
}

func TestCutMarksSubmissions(t *testing.T) {
	cuts := func(p *Plan) []int {
		var c []int
		for i, s := range p.Steps {
			if s.Submit {
				c = append(c, i)
			}
		}
		return c
	}
	p, err := Build(graph(), limits)
	require.NoError(t, err)
	p.Cut(4)
	require.Equal(t, []int{3}, cuts(p), "a submission after the first 4 dispatches; the executor submits the rest")
	p.Cut(0)
	for _, s := range p.Steps {
		require.True(t, s.Submit, "a batch of at most one dispatch")
	}
	long := &Plan{Steps: make([]Step, 200)}
	long.Cut(64)
	require.Equal(t, []int{3, 11, 27, 59, 123, 187}, cuts(long), "4, 8, 16, 32, then 64 per submission")
	long.Cut(2)
	require.Equal(t, []int{1, 3, 5}, cuts(long)[:3], "never more than perSubmit")
}

func TestUnsupportedNodeFailsBeforeWork(t *testing.T) {
	nodes := graph()
	bad := compute(f32(8), tensor.Op(74), nodes[0])
	_, err := Build(append(nodes, bad), limits)
	require.Error(t, err)
}

func TestFusesNormMulOnlyWhenPrivate(t *testing.T) {
	x, w := f32(8), f32(8)
	norm := compute(f32(8), tensor.OpRMSNorm, x)
	mul := compute(f32(8), tensor.OpMul, norm, w)
	p, err := Build([]*tensor.Tensor{norm, mul}, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
	require.Len(t, p.Steps, 1)
	require.Same(t, mul, p.Steps[0].Node)
	require.Equal(t, map[string]int{"norm+mul": 1}, p.Rows)
	require.Empty(t, p.Refused)

	// A second reader of the norm keeps it unfused, and the plan says why.
	other := compute(f32(8), tensor.OpAdd, norm, w)
	p, err = Build([]*tensor.Tensor{norm, mul, other}, limits)
	require.NoError(t, err)
	require.Zero(t, p.Fused)
	require.Len(t, p.Steps, 3)
	require.Empty(t, p.Rows)
	require.Equal(t, map[string]int{"norm+mul: RMS_NORM's result is read outside the match": 1}, p.Refused)

	// So does a norm the host reads back.
	norm.Flags |= tensor.FlagOutput
	p, err = Build([]*tensor.Tensor{norm, mul}, limits)
	require.NoError(t, err)
	require.Zero(t, p.Fused)
}

func TestFusesGateUpGLU(t *testing.T) {
	x := &tensor.Tensor{Type: tensor.F32, Ne: [4]int64{64, 1, 1, 1}, Nb: [4]uint64{4, 256, 256, 256}}
	w := func() *tensor.Tensor {
		return &tensor.Tensor{Type: tensor.F16, Ne: [4]int64{64, 16, 1, 1}, Nb: [4]uint64{2, 128, 2048, 2048}}
	}
	up := compute(f32(16), tensor.OpMulMat, w(), x)
	gate := compute(f32(16), tensor.OpMulMat, w(), x)
	glu := compute(f32(16), tensor.OpGLU, gate, up)
	glu.Params[0] = int32(tensor.GLUSwiGLU)
	p, err := Build([]*tensor.Tensor{up, gate, glu}, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
	require.Len(t, p.Steps, 1)
	require.Equal(t, "mul_mat_vec8", p.Steps[0].Dispatch.Spec.Kernel)

	// A result over x (which every workgroup reads) keeps the GLU apart too (gate and up
	// still share a dispatch: mul_mat+mul_mat).
	x.Loc = tensor.Loc{Buffer: 1, Addr: 1 << 40}
	glu.Loc = tensor.Loc{Buffer: 1, Addr: 1<<40 + 64}
	p, err = Build([]*tensor.Tensor{up, gate, glu}, limits)
	require.NoError(t, err)
	require.Equal(t, []*tensor.Tensor{up, gate}, p.Steps[0].Fused)
	require.Len(t, p.Steps, 2)
	glu.Loc = tensor.Loc{Buffer: 1, Addr: 1<<40 + 4096}
	p, err = Build([]*tensor.Tensor{up, gate, glu}, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)

	// The host reading the gate back keeps the GLU apart (gate and up still share a
	// dispatch that writes both).
	gate.Flags |= tensor.FlagOutput
	p, err = Build([]*tensor.Tensor{up, gate, glu}, limits)
	require.NoError(t, err)
	require.Equal(t, []*tensor.Tensor{up, gate}, p.Steps[0].Written)
	require.Len(t, p.Steps, 2)
}

func TestNoFusionOverAnInputItMayClobber(t *testing.T) {
	at := func(t *tensor.Tensor, addr uint64) *tensor.Tensor {
		t.Loc = tensor.Loc{Buffer: 1, Addr: 1<<40 + addr}
		return t
	}
	x, w := at(f32(8), 0), at(f32(8), 4096)
	norm := at(compute(f32(8), tensor.OpRMSNorm, x), 8192)
	// The MUL's result starts 8 bytes into x: a fused kernel would overwrite elements of
	// x that other invocations still read.
	mul := at(compute(f32(8), tensor.OpMul, norm, w), 8)
	p, err := Build([]*tensor.Tensor{norm, mul}, limits)
	require.NoError(t, err)
	require.Zero(t, p.Fused)
	require.Equal(t, map[string]int{"norm+mul: guard": 1}, p.Refused)
	// Exactly in place of x is safe: each element is read before it is written.
	mul = at(compute(f32(8), tensor.OpMul, norm, w), 0)
	p, err = Build([]*tensor.Tensor{norm, mul}, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
}

func TestFusesMulMatPermuteCont(t *testing.T) {
	// kqv [hd=8, n_q=3, n_head=2] -> permute(0, 2, 1, 3) -> cont [8, 2, 3]
	v := &tensor.Tensor{Type: tensor.F32, Ne: [4]int64{16, 8, 2, 1}, Nb: [4]uint64{4, 64, 512, 1024}}
	kq := &tensor.Tensor{Type: tensor.F32, Ne: [4]int64{16, 3, 2, 1}, Nb: [4]uint64{4, 64, 192, 384}}
	kqv := compute(&tensor.Tensor{Type: tensor.F32, Ne: [4]int64{8, 3, 2, 1}, Nb: [4]uint64{4, 32, 96, 192}}, tensor.OpMulMat, v, kq)
	perm := compute(&tensor.Tensor{Type: tensor.F32, Ne: [4]int64{8, 2, 3, 1}, Nb: [4]uint64{4, 96, 32, 192}}, tensor.OpPermute, kqv)
	perm.Params = [16]int32{0, 2, 1, 3}
	cont := compute(&tensor.Tensor{Type: tensor.F32, Ne: [4]int64{8, 2, 3, 1}, Nb: [4]uint64{4, 32, 64, 192}}, tensor.OpCont, perm)
	p, err := Build([]*tensor.Tensor{kqv, perm, cont}, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
	require.Equal(t, 1, p.Skipped, "the PERMUTE needs no work of its own")
	require.Len(t, p.Steps, 1)
	d := p.Steps[0].Dispatch
	require.Same(t, cont, d.Tensors[len(d.Tensors)-1])
	// kqv element (i0, i1, i2) lands at cont element (i0, i2, i1): strides 1, 16, 8.
	require.Contains(t, fmt.Sprintf("%+v", d.Params), "D:[1 16 8 48]")
}

// residual is llama's residual pattern over rows of 8: sum = a + b, out = rms_norm(sum) * w,
// next = out + sum (the sum read again after the norm).
func residual() (add, norm, mul, next *tensor.Tensor) {
	a, b, w := f32(8), f32(8), f32(8)
	add = compute(f32(8), tensor.OpAdd, a, b)
	norm = compute(f32(8), tensor.OpRMSNorm, add)
	mul = compute(f32(8), tensor.OpMul, norm, w)
	next = compute(f32(8), tensor.OpAdd, mul, add)
	return
}

func TestFusesAddNormMulWritingTheSum(t *testing.T) {
	add, norm, mul, next := residual()
	p, err := Build([]*tensor.Tensor{add, norm, mul, next}, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
	require.Len(t, p.Steps, 2, "the triple in one dispatch, then the second ADD")
	s := p.Steps[0]
	require.Same(t, mul, s.Node)
	require.Equal(t, []*tensor.Tensor{add, norm, mul}, s.Fused)
	require.Equal(t, []*tensor.Tensor{add, mul}, s.Written, "the sum is stored for the second ADD; the norm is not")
	require.Contains(t, s.Dispatch.Tensors, add)
	require.NotContains(t, s.Dispatch.Tensors, norm)
	require.Same(t, next, p.Steps[1].Node)

	// The sum as a graph output (the host reads it back) fuses the same way.
	add.Flags |= tensor.FlagOutput
	p, err = Build([]*tensor.Tensor{add, norm, mul}, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
	require.Equal(t, []*tensor.Tensor{add, mul}, p.Steps[0].Written)

	// A second reader of the norm keeps the norm's result: neither fusion applies.
	other := compute(f32(8), tensor.OpAdd, norm, add)
	p, err = Build([]*tensor.Tensor{add, norm, mul, other}, limits)
	require.NoError(t, err)
	require.Zero(t, p.Fused)
	require.Len(t, p.Steps, 4)

	// A norm stored over the sum (in place) while a later node reads the sum must be
	// stored: ggml leaves the norm where the second ADD reads. Neither fusion applies.
	add, norm, mul, next = residual()
	add.Loc = tensor.Loc{Buffer: 1, Addr: 1 << 40}
	norm.Loc = add.Loc
	mul.Loc = tensor.Loc{Buffer: 1, Addr: 1<<40 + 4096}
	p, err = Build([]*tensor.Tensor{add, norm, mul, next}, limits)
	require.NoError(t, err)
	require.Zero(t, p.Fused)
	require.Len(t, p.Steps, 4)
	// Where nothing reads the sum afterwards (llama's last sum before output_norm, which
	// ggml-alloc normalises in place), the triple fuses.
	p, err = Build([]*tensor.Tensor{add, norm, mul}, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
	require.Len(t, p.Steps, 1)
	// Unless the host reads the sum back.
	add.Flags |= tensor.FlagOutput
	p, err = Build([]*tensor.Tensor{add, norm, mul}, limits)
	require.NoError(t, err)
	require.Zero(t, p.Fused)
}

func TestNoNormMulFusionOverALiveInput(t *testing.T) {
	// rms_norm_inplace(x) * w with x read again later: ggml leaves the norm in x.
	x, w := f32(8), f32(8)
	x.Loc = tensor.Loc{Buffer: 1, Addr: 1 << 40}
	norm := compute(f32(8), tensor.OpRMSNorm, x)
	norm.Loc = x.Loc
	mul := compute(f32(8), tensor.OpMul, norm, w)
	later := compute(f32(8), tensor.OpAdd, mul, x)
	p, err := Build([]*tensor.Tensor{norm, mul, later}, limits)
	require.NoError(t, err)
	require.Zero(t, p.Fused)
	p, err = Build([]*tensor.Tensor{norm, mul}, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused, "x read by nothing else: the norm may stay in the kernel")
}

func TestPrivateResultOverADeadSource(t *testing.T) {
	// llama's layer after the first: the norm of ffn_inp = attn_out + l_out goes where
	// ggml-alloc freed l_out, which attn_norm read before (and nothing reads after).
	at := func(t *tensor.Tensor, addr uint64) *tensor.Tensor {
		t.Loc = tensor.Loc{Buffer: 1, Addr: 1<<40 + addr}
		return t
	}
	lOut, attnOut, w := at(f32(8), 0), at(f32(8), 4096), at(f32(8), 8192)
	attnNorm := at(compute(f32(8), tensor.OpRMSNorm, lOut), 12288)
	add := at(compute(f32(8), tensor.OpAdd, attnOut, lOut), 4096) // in place of attn_out
	norm := at(compute(f32(8), tensor.OpRMSNorm, add), 0)         // over l_out
	mul := at(compute(f32(8), tensor.OpMul, norm, w), 16384)
	next := compute(f32(8), tensor.OpAdd, mul, add)
	p, err := Build([]*tensor.Tensor{attnNorm, add, norm, mul, next}, limits)
	require.NoError(t, err)
	require.Len(t, p.Steps, 3)
	require.Equal(t, []*tensor.Tensor{add, norm, mul}, p.Steps[1].Fused)

	// A view of l_out read after the triple keeps l_out, a source of the triple, live: the
	// triple must store the norm, so it does not apply.
	view := compute(f32(8), tensor.OpView, lOut)
	later := compute(f32(8), tensor.OpAdd, next, view)
	p, err = Build([]*tensor.Tensor{attnNorm, view, add, norm, mul, next, later}, limits)
	require.NoError(t, err)
	for _, s := range p.Steps {
		require.NotContains(t, s.Fused, add)
	}
}

// fusionExample returns the example nodes of the named fusion row, marked for computation.
func fusionExample(t *testing.T, name string) []*tensor.Tensor {
	for _, f := range ops.Fusions() {
		if f.Name == name {
			n := f.Example()
			for _, x := range n {
				x.Flags |= tensor.FlagCompute
			}
			return n
		}
	}
	t.Fatalf("no fusion %q", name)
	return nil
}

func TestFusesRopeSetRowsWritingBothCaches(t *testing.T) {
	n := fusionExample(t, "rope+set_rows+set_rows")
	p, err := Build(n, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
	require.Equal(t, 2, p.Skipped, "the two views need no work")
	require.Len(t, p.Steps, 1)
	d := p.Steps[0].Dispatch
	var written []*tensor.Tensor
	for i, o := range d.Spec.Operands {
		if o.Written {
			written = append(written, d.Tensors[i])
		}
	}
	require.Equal(t, []*tensor.Tensor{n[2], n[4]}, written, "both caches are written, nothing else")

	// A second reader of K's view keeps the rope apart from both stores; V's store is then
	// no longer next to a rope and runs on its own.
	other := compute(&tensor.Tensor{Type: tensor.F32, Ne: n[1].Ne, Nb: n[1].Nb}, tensor.OpAdd, n[1], n[1])
	p, err = Build(append(n, other), limits)
	require.NoError(t, err)
	require.Zero(t, p.Fused)
	require.Len(t, p.Steps, 4)

	// The host reading the roped K back keeps it apart too.
	n = fusionExample(t, "rope+set_rows+set_rows")
	n[0].Flags |= tensor.FlagOutput
	p, err = Build(n, limits)
	require.NoError(t, err)
	require.Zero(t, p.Fused)

	// The host may read the K cache's SET_ROWS result: the fused kernel writes it.
	n = fusionExample(t, "rope+set_rows+set_rows")
	n[2].Flags |= tensor.FlagOutput
	p, err = Build(n, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
}

// A ROPE that ggml-alloc placed exactly over its source (a hybrid's K, normed per head)
// fuses with the K and V stores only where nothing but the ROPE reads that source, through
// views too: the fused kernel leaves the source's bytes unroped, which the unfused ROPE
// would have replaced.
func TestFusesInPlaceRopeOnlyOverASoleReadSource(t *testing.T) {
	place := func(t *tensor.Tensor) *tensor.Tensor {
		t.Loc = tensor.Loc{Buffer: 1, Addr: 1 << 40}
		return t
	}
	// build returns the store's nodes with K's source produced by an RMS_NORM (through a
	// RESHAPE when viewed) and the rope placed exactly over it, and that norm.
	build := func(viewed bool) ([]*tensor.Tensor, *tensor.Tensor) {
		n := fusionExample(t, "rope+set_rows+set_rows")
		rope := n[0]
		src := rope.Src[0]
		x := &tensor.Tensor{Type: src.Type, Ne: src.Ne, Nb: src.Nb}
		norm := place(compute(&tensor.Tensor{Type: src.Type, Ne: src.Ne, Nb: src.Nb}, tensor.OpRMSNorm, x))
		pre := []*tensor.Tensor{norm}
		rope.Src[0] = norm
		if viewed {
			v := place(compute(&tensor.Tensor{Type: src.Type, Ne: src.Ne, Nb: src.Nb}, tensor.OpReshape, norm))
			rope.Src[0] = v
			pre = append(pre, v)
		}
		place(rope)
		place(n[1]) // the view of the roped K: the rope's bytes
		return append(pre, n...), norm
	}
	for _, viewed := range []bool{false, true} {
		n, _ := build(viewed)
		p, err := Build(n, limits)
		require.NoError(t, err)
		require.Equal(t, 1, p.Fused, "viewed %v: the norm's result is read by the rope alone", viewed)

		// A later reader of the norm's result would see it roped: the rope stays apart.
		n, norm := build(viewed)
		later := compute(&tensor.Tensor{Type: norm.Type, Ne: norm.Ne, Nb: norm.Nb}, tensor.OpAdd, norm, norm)
		p, err = Build(append(n, later), limits)
		require.NoError(t, err)
		require.Zero(t, p.Fused, "viewed %v: the norm's result read again", viewed)

		// So would the host, reading it back.
		n, norm = build(viewed)
		norm.Flags |= tensor.FlagOutput
		p, err = Build(n, limits)
		require.NoError(t, err)
		require.Zero(t, p.Fused, "viewed %v: the norm's result a graph output", viewed)
	}

	// A rope in place over a tensor the graph does not compute (an input) stays apart.
	n := fusionExample(t, "rope+set_rows+set_rows")
	place(n[0].Src[0])
	place(n[0])
	place(n[1])
	p, err := Build(n, limits)
	require.NoError(t, err)
	require.Zero(t, p.Fused)
}
