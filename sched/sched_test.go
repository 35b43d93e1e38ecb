package sched

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/stretchr/testify/require"
)

func f32(ne0 int64) *ops.Tensor {
	return &ops.Tensor{Type: ops.F32, Ne: [4]int64{ne0, 1, 1, 1}, Nb: [4]uint64{4, 4 * uint64(ne0), 4 * uint64(ne0), 4 * uint64(ne0)}}
}

func compute(t *ops.Tensor, op ops.Op, src ...*ops.Tensor) *ops.Tensor {
	t.Op, t.Flags = op, ops.FlagCompute
	copy(t.Src[:], src)
	return t
}

type recorder struct {
	launched, submits []int // dispatch count at each event
	n                 int
	fullAt            int // Launch returns ErrBatchFull once when n == fullAt
	fail              error
}

func (r *recorder) Launch(int) error {
	if r.fail != nil {
		return r.fail
	}
	if r.n == r.fullAt && r.fullAt > 0 {
		r.fullAt = 0
		return ErrBatchFull
	}
	r.n++
	r.launched = append(r.launched, r.n)
	return nil
}

func (r *recorder) Submit() error { r.submits = append(r.submits, r.n); return nil }

func graph() []*ops.Tensor {
	a, b := f32(8), f32(8)
	add := compute(f32(8), ops.OpAdd, a, b)
	view := compute(f32(8), ops.OpView, add)
	notCompute := compute(f32(8), ops.OpMul, add, b)
	notCompute.Flags = 0
	empty := compute(&ops.Tensor{Type: ops.F32, Nb: [4]uint64{4, 4, 4, 4}}, ops.OpAdd, a, b)
	nodes := []*ops.Tensor{add, view, notCompute, empty}
	for i := 0; i < 5; i++ {
		nodes = append(nodes, compute(f32(8), ops.OpMul, add, b))
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

func TestRunCutsSubmissions(t *testing.T) {
	p, err := Build(graph(), limits)
	require.NoError(t, err)
	r := &recorder{}
	require.NoError(t, p.Run(r, 4))
	require.Equal(t, []int{4, 6}, r.submits, "a submission every 4 dispatches and one for the rest")

	r = &recorder{fullAt: 2}
	require.NoError(t, p.Run(r, 4))
	require.Equal(t, []int{2, 6}, r.submits, "a full batch is submitted early and the dispatch retried")
	require.Len(t, r.launched, 6)
}

func TestUnsupportedNodeFailsBeforeWork(t *testing.T) {
	nodes := graph()
	bad := compute(f32(8), ops.Op(74), nodes[0])
	_, err := Build(append(nodes, bad), limits)
	require.Error(t, err)

	p, err := Build(graph(), limits)
	require.NoError(t, err)
	boom := errors.New("boom")
	require.ErrorIs(t, p.Run(&recorder{fail: boom}, 4), boom)
}

func TestFusesNormMulOnlyWhenPrivate(t *testing.T) {
	x, w := f32(8), f32(8)
	norm := compute(f32(8), ops.OpRMSNorm, x)
	mul := compute(f32(8), ops.OpMul, norm, w)
	p, err := Build([]*ops.Tensor{norm, mul}, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
	require.Len(t, p.Steps, 1)
	require.Same(t, mul, p.Steps[0].Node)

	// A second reader of the norm keeps it unfused.
	other := compute(f32(8), ops.OpAdd, norm, w)
	p, err = Build([]*ops.Tensor{norm, mul, other}, limits)
	require.NoError(t, err)
	require.Zero(t, p.Fused)
	require.Len(t, p.Steps, 3)

	// So does a norm the host reads back.
	norm.Flags |= ops.FlagOutput
	p, err = Build([]*ops.Tensor{norm, mul}, limits)
	require.NoError(t, err)
	require.Zero(t, p.Fused)
}

func TestFusesGateUpGLU(t *testing.T) {
	x := &ops.Tensor{Type: ops.F32, Ne: [4]int64{64, 1, 1, 1}, Nb: [4]uint64{4, 256, 256, 256}}
	w := func() *ops.Tensor {
		return &ops.Tensor{Type: ops.F16, Ne: [4]int64{64, 16, 1, 1}, Nb: [4]uint64{2, 128, 2048, 2048}}
	}
	up := compute(f32(16), ops.OpMulMat, w(), x)
	gate := compute(f32(16), ops.OpMulMat, w(), x)
	glu := compute(f32(16), ops.OpGLU, gate, up)
	glu.Params[0] = ops.GLUSwiGLU
	p, err := Build([]*ops.Tensor{up, gate, glu}, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
	require.Len(t, p.Steps, 1)
	require.Equal(t, "mul_mat_vec8", p.Steps[0].Dispatch.Spec.Kernel)

	// A result over x (which every workgroup reads) keeps them apart too.
	x.Loc = ops.Loc{Buffer: 1, Addr: 1 << 40}
	glu.Loc = ops.Loc{Buffer: 1, Addr: 1<<40 + 64}
	p, err = Build([]*ops.Tensor{up, gate, glu}, limits)
	require.NoError(t, err)
	require.Zero(t, p.Fused)
	glu.Loc = ops.Loc{Buffer: 1, Addr: 1<<40 + 4096}
	p, err = Build([]*ops.Tensor{up, gate, glu}, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)

	// The host reading the gate back keeps the three apart.
	gate.Flags |= ops.FlagOutput
	p, err = Build([]*ops.Tensor{up, gate, glu}, limits)
	require.NoError(t, err)
	require.Zero(t, p.Fused)
	require.Len(t, p.Steps, 3)
}

func TestNoFusionOverAnInputItMayClobber(t *testing.T) {
	at := func(t *ops.Tensor, addr uint64) *ops.Tensor { t.Loc = ops.Loc{Buffer: 1, Addr: 1<<40 + addr}; return t }
	x, w := at(f32(8), 0), at(f32(8), 4096)
	norm := at(compute(f32(8), ops.OpRMSNorm, x), 8192)
	// The MUL's result starts 8 bytes into x: a fused kernel would overwrite elements of
	// x that other invocations still read.
	mul := at(compute(f32(8), ops.OpMul, norm, w), 8)
	p, err := Build([]*ops.Tensor{norm, mul}, limits)
	require.NoError(t, err)
	require.Zero(t, p.Fused)
	// Exactly in place of x is safe: each element is read before it is written.
	mul = at(compute(f32(8), ops.OpMul, norm, w), 0)
	p, err = Build([]*ops.Tensor{norm, mul}, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
}

func TestFusesMulMatPermuteCont(t *testing.T) {
	// kqv [hd=8, n_q=3, n_head=2] -> permute(0, 2, 1, 3) -> cont [8, 2, 3]
	v := &ops.Tensor{Type: ops.F32, Ne: [4]int64{16, 8, 2, 1}, Nb: [4]uint64{4, 64, 512, 1024}}
	kq := &ops.Tensor{Type: ops.F32, Ne: [4]int64{16, 3, 2, 1}, Nb: [4]uint64{4, 64, 192, 384}}
	kqv := compute(&ops.Tensor{Type: ops.F32, Ne: [4]int64{8, 3, 2, 1}, Nb: [4]uint64{4, 32, 96, 192}}, ops.OpMulMat, v, kq)
	perm := compute(&ops.Tensor{Type: ops.F32, Ne: [4]int64{8, 2, 3, 1}, Nb: [4]uint64{4, 96, 32, 192}}, ops.OpPermute, kqv)
	perm.Params = [16]int32{0, 2, 1, 3}
	cont := compute(&ops.Tensor{Type: ops.F32, Ne: [4]int64{8, 2, 3, 1}, Nb: [4]uint64{4, 32, 64, 192}}, ops.OpCont, perm)
	p, err := Build([]*ops.Tensor{kqv, perm, cont}, limits)
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
	require.Len(t, p.Steps, 1)
	d := p.Steps[0].Dispatch
	require.Same(t, cont, d.Tensors[len(d.Tensors)-1])
	// kqv element (i0, i1, i2) lands at cont element (i0, i2, i1): strides 1, 16, 8.
	require.Contains(t, fmt.Sprintf("%+v", d.Params), "D0:1 D1:16 D2:8 D3:48")
}
