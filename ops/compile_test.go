package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/backend/webgpu"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
	"github.com/stretchr/testify/require"
)

func f32(ne ...int64) *Tensor { return contiguous(F32, ne...) }

func contiguous(ty Type, ne ...int64) *Tensor {
	t := &Tensor{Type: ty, Ne: [4]int64{1, 1, 1, 1}}
	copy(t.Ne[:], ne)
	t.Nb[0] = t.TypeSize()
	for i := 1; i < 4; i++ {
		t.Nb[i] = t.Nb[i-1] * uint64(t.Ne[i-1])
	}
	return t
}

func node(op Op, dst *Tensor, params []int32, src ...*Tensor) *Tensor {
	dst.Op = op
	copy(dst.Params[:], params)
	copy(dst.Src[:], src)
	return dst
}

// variants lowers one node of every kernel variant the ops produce.
func variants() []*Tensor {
	idx := contiguous(I32, 3)
	rope := func(mode int32, ty Type, ff bool) *Tensor {
		a := contiguous(ty, 8, 2, 3)
		var f *Tensor
		if ff {
			f = f32(4)
		}
		return node(OpRope, contiguous(ty, 8, 2, 3), []int32{0, 8, mode, 0, 512, int32(f32bits(10000)), int32(f32bits(1)), 0, int32(f32bits(1)), int32(f32bits(32)), int32(f32bits(1))}, a, contiguous(I32, 3), f)
	}
	return []*Tensor{
		node(OpAdd, f32(4, 3), nil, f32(4, 3), f32(4)),
		node(OpSub, f32(4, 3), nil, f32(4, 3), f32(4)),
		node(OpMul, f32(4, 3), nil, f32(4, 3), f32(4)),
		node(OpDiv, f32(4, 3), nil, f32(4, 3), f32(4)),
		node(OpScale, f32(5), []int32{int32(f32bits(2))}, f32(5)),
		node(OpUnary, f32(5), []int32{UnarySILU}, f32(5)),
		node(OpUnary, f32(5), []int32{UnaryGELU}, f32(5)),
		node(OpCpy, contiguous(F16, 6), nil, f32(6), contiguous(F16, 6)),
		node(OpCont, f32(6), nil, contiguous(F16, 6)),
		node(OpCont, contiguous(F16, 6), nil, contiguous(F16, 6)),
		node(OpGetRows, f32(4, 3), nil, contiguous(F16, 4, 5), idx),
		node(OpGetRows, f32(4, 3), nil, f32(4, 5), idx),
		node(OpRMSNorm, f32(7, 2), []int32{int32(f32bits(1e-5))}, f32(7, 2)),
		node(OpNorm, f32(7, 2), []int32{int32(f32bits(1e-5))}, f32(7, 2)),
		node(OpSoftMax, f32(7, 2), []int32{int32(f32bits(1))}, f32(7, 2)),
		node(OpSoftMax, f32(7, 2), []int32{int32(f32bits(1))}, f32(7, 2), contiguous(F16, 7, 2)),
		node(OpGLU, f32(4, 2), []int32{GLUSwiGLU}, f32(8, 2)),
		node(OpGLU, f32(4, 2), []int32{GLUSwiGLU}, f32(4, 2), f32(4, 2)),
		node(OpMulMat, f32(3, 2), nil, contiguous(F16, 5, 3), f32(5, 2)),
		node(OpMulMat, f32(3, 9), nil, f32(5, 3), f32(5, 9)),
		node(OpMulMat, f32(3, 1), nil, contiguous(F16, 16, 3), f32(16, 1)),
		node(OpMulMat, f32(3, 4), nil, f32(16, 3), f32(16, 4)),
		node(OpMulMat, f32(3, 9), nil, contiguous(F16, 16, 3), f32(16, 9)),
		node(OpSetRows, contiguous(F16, 4, 6), nil, f32(4, 3), contiguous(I64, 3)),
		node(OpSetRows, f32(4, 6), nil, f32(4, 3), contiguous(I32, 3)),
		rope(RopeNormal, F32, false),
		rope(RopeNeox, F16, true),
	}
}

// TestKernelsCompile compiles every kernel variant on the first WebGPU adapter.
func TestKernelsCompile(t *testing.T) {
	in, err := webgpu.NewInstance()
	require.NoError(t, err)
	ads := in.Adapters()
	require.NotEmpty(t, ads, "no WebGPU adapter: run scripts/setup.sh (installs lavapipe)")
	dev, err := ads[0].Open()
	require.NoError(t, err)
	defer dev.Close()
	cache := wgsl.NewCache(dev)
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	norm := node(OpRMSNorm, f32(7, 2), []int32{int32(f32bits(1e-5))}, f32(7, 2))
	mul := node(OpMul, f32(7, 2), nil, norm, f32(7))
	fused, ok := LowerNormMul(norm, mul, l)
	require.True(t, ok)
	_, err = cache.Pipeline(fused[0].Spec)
	require.NoError(t, err)
	_, ok = LowerNormMul(norm, node(OpAdd, f32(7, 2), nil, norm, f32(7)), l)
	require.False(t, ok, "only MUL fuses")
	x := f32(64, 2)
	up := node(OpMulMat, f32(9, 2), nil, contiguous(F16, 64, 9), x)
	gate := node(OpMulMat, f32(9, 2), nil, contiguous(F16, 64, 9), x)
	glu := node(OpGLU, f32(9, 2), []int32{GLUSwiGLU}, gate, up)
	fusedGLU, ok := LowerMatVecGLU(up, gate, glu, l)
	require.True(t, ok)
	require.Len(t, fusedGLU[0].Tensors, 4)
	_, err = cache.Pipeline(fusedGLU[0].Spec)
	require.NoError(t, err)
	_, ok = LowerMatVecGLU(up, gate, node(OpGLU, f32(9, 2), []int32{GLUSwiGLU}, gate, f32(9, 2)), l)
	require.False(t, ok, "the GLU must read both products")
	for _, n := range []int64{7, 300, 4096} {
		lt := *l
		lt.MaxGroupSize = 1024
		for _, nd := range []*Tensor{
			node(OpRMSNorm, f32(n, 2), []int32{int32(f32bits(1e-5))}, f32(n, 2)),
			node(OpSoftMax, f32(n, 2), []int32{int32(f32bits(1))}, f32(n, 2), f32(n, 2)),
		} {
			ds, err := Lower(nd, &lt)
			require.NoError(t, err)
			require.Equal(t, rowGroup(n, &lt), ds[0].Spec.Workgroup)
			_, err = cache.Pipeline(ds[0].Spec)
			require.NoError(t, err, "row kernel with %d invocations", ds[0].Spec.Workgroup)
		}
	}
	require.Equal(t, 1024, rowGroup(4096, &Limits{MaxGroupSize: 1024}))
	require.Equal(t, 256, rowGroup(4096, &Limits{MaxGroupSize: 256}), "the device's limit bounds the workgroup")
	require.Equal(t, 64, rowGroup(7, &Limits{MaxGroupSize: 1024}))
	for _, shape := range [][2]int{{1, 64}, {2, 64}, {4, 64}, {4, 128}, {2, 256}} {
		lt := *l
		lt.MatVecRows, lt.MatVecWG = shape[0], shape[1]
		ds, err := Lower(node(OpMulMat, f32(9, 3), nil, contiguous(F16, 64, 9), f32(64, 3)), &lt)
		require.NoError(t, err)
		require.Equal(t, "mul_mat_vec8", ds[0].Spec.Kernel)
		_, err = cache.Pipeline(ds[0].Spec)
		require.NoError(t, err, "mat-vec %v", shape)
	}
	for _, n := range variants() {
		require.True(t, Supports(n, l), "supports %s", describe(n))
		ds, err := Lower(n, l)
		require.NoError(t, err)
		for _, d := range ds {
			_, err := cache.Pipeline(d.Spec)
			require.NoError(t, err, "%s", d.Spec.Key())
			require.Len(t, d.Tensors, len(d.Spec.Operands))
		}
	}
}

func TestSupportsRejects(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	q4 := &Tensor{Type: 2, Ne: [4]int64{32, 4, 1, 1}, Nb: [4]uint64{18, 18, 72, 72}}
	cases := map[string]*Tensor{
		"quantized matmul":      node(OpMulMat, f32(4, 2), nil, q4, f32(32, 2)),
		"f16 add":               node(OpAdd, contiguous(F16, 4), nil, contiguous(F16, 4), contiguous(F16, 4)),
		"non-repeatable src1":   node(OpAdd, f32(4, 3), nil, f32(4, 3), f32(3)),
		"unknown unary":         node(OpUnary, f32(4), []int32{0}, f32(4)),
		"softmax sinks":         node(OpSoftMax, f32(4, 2), nil, f32(4, 2), nil, f32(2)),
		"rope mrope":            node(OpRope, f32(8, 2, 3), []int32{0, 8, 8}, f32(8, 2, 3), contiguous(I32, 12)),
		"missing source":        node(OpMul, f32(4), nil, f32(4)),
		"too large for binding": node(OpScale, f32(1<<26), nil, f32(1<<26)),
		"unregistered op":       node(Op(74), f32(4), nil, f32(4)),
	}
	for name, n := range cases {
		require.False(t, Supports(n, l), name)
		_, err := Lower(n, l)
		require.Error(t, err, name)
	}
}
