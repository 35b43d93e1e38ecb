package ops

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
	"github.com/stretchr/testify/require"
)

// registered returns the registered ops in order.
func registered() []tensor.Op {
	ops := make([]tensor.Op, 0, len(families))
	for op := range families {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	return ops
}

// fusion returns the fusion row of the given name.
func fusion(t *testing.T, name string) *Fusion {
	for i, f := range Fusions() {
		if f.Name == name {
			return &Fusions()[i]
		}
	}
	t.Fatalf("no fusion %q", name)
	return nil
}

// compiler compiles a spec's WGSL on a device.
type compiler struct{ dev *gpu.Device }

// Pipeline compiles s, and s again with every operand it does not write read-only (as the
// backend binds a model's weights), returning the first.
func (c compiler) Pipeline(s *wgsl.Spec) (*gpu.Pipeline, error) {
	p, err := c.compile(s)
	if err != nil {
		return nil, err
	}
	ro := *s
	ro.Operands = slices.Clone(s.Operands)
	for i := range ro.Operands {
		ro.Operands[i].ReadOnly = !ro.Operands[i].Written
	}
	q, err := c.compile(&ro)
	if err != nil {
		p.Release()
		return nil, fmt.Errorf("read-only operands: %w", err)
	}
	q.Release()
	return p, nil
}

func (c compiler) compile(s *wgsl.Spec) (*gpu.Pipeline, error) {
	src, err := wgsl.Source(s)
	if err != nil {
		return nil, err
	}
	return c.dev.CreatePipelineLayout(s.Kernel, src, gpu.Layout{Storage: s.Bindings(), ReadOnly: s.ReadOnly()})
}

// newCompiler opens the first WebGPU adapter's device for compiling kernels, closed when
// the test ends.
func newCompiler(t *testing.T) compiler {
	t.Helper()
	in, err := gpu.NewInstance()
	require.NoError(t, err)
	ads := in.Adapters()
	require.NotEmpty(t, ads, "no WebGPU adapter: run scripts/setup.sh (installs lavapipe)")
	dev, err := ads[0].Open()
	require.NoError(t, err)
	t.Cleanup(dev.Close)
	return compiler{dev}
}

// TestKernelsCompile compiles every kernel variant on the first WebGPU adapter.
func TestKernelsCompile(t *testing.T) {
	cache := newCompiler(t)
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	normMul := fusion(t, "norm+mul")
	norm := node(tensor.OpRMSNorm, f32(7, 2), []int32{int32(f32bits(1e-5))}, f32(7, 2))
	mul := node(tensor.OpMul, f32(7, 2), nil, norm, f32(7))
	require.True(t, normMul.Applies([]*tensor.Tensor{norm, mul}, l))
	fused, err := normMul.Lower([]*tensor.Tensor{norm, mul}, l)
	require.NoError(t, err)
	_, err = cache.Pipeline(fused[0].Spec)
	require.NoError(t, err)
	require.False(t, normMul.Applies([]*tensor.Tensor{norm, node(tensor.OpAdd, f32(7, 2), nil, norm, f32(7))}, l), "only MUL fuses")
	gluRow := fusion(t, "mul_mat+mul_mat+glu")
	x := f32(64, 2)
	up := node(tensor.OpMulMat, f32(9, 2), nil, contiguous(tensor.F16, 64, 9), x)
	gate := node(tensor.OpMulMat, f32(9, 2), nil, contiguous(tensor.F16, 64, 9), x)
	glu := node(tensor.OpGLU, f32(9, 2), []int32{int32(tensor.GLUSwiGLU)}, gate, up)
	require.True(t, gluRow.Applies([]*tensor.Tensor{up, gate, glu}, l))
	fusedGLU, err := gluRow.Lower([]*tensor.Tensor{up, gate, glu}, l)
	require.NoError(t, err)
	require.Len(t, fusedGLU[0].Tensors, 4)
	_, err = cache.Pipeline(fusedGLU[0].Spec)
	require.NoError(t, err)
	qx := f32(64, 2)
	qup := node(tensor.OpMulMat, f32(9, 2), nil, contiguous(tensor.Q5_1, 64, 9), qx)
	qgate := node(tensor.OpMulMat, f32(9, 2), nil, contiguous(tensor.Q5_1, 64, 9), qx)
	qglu := node(tensor.OpGLU, f32(9, 2), []int32{int32(tensor.GLUSwiGLU)}, qgate, qup)
	require.True(t, gluRow.Applies([]*tensor.Tensor{qup, qgate, qglu}, l), "quantized weights fuse too")
	fusedQ, err := gluRow.Lower([]*tensor.Tensor{qup, qgate, qglu}, l)
	require.NoError(t, err)
	_, err = cache.Pipeline(fusedQ[0].Spec)
	require.NoError(t, err)
	for _, m := range []int64{9, 8192} {
		q6x := f32(512, 1)
		q6up := node(tensor.OpMulMat, f32(m, 1), nil, contiguous(tensor.Q6_K, 512, m), q6x)
		q6gate := node(tensor.OpMulMat, f32(m, 1), nil, contiguous(tensor.Q6_K, 512, m), q6x)
		q6glu := node(tensor.OpGLU, f32(m, 1), []int32{int32(tensor.GLUSwiGLU)}, q6gate, q6up)
		fusedQ6, err := gluRow.Lower([]*tensor.Tensor{q6up, q6gate, q6glu}, l)
		require.NoError(t, err)
		require.Equal(t, "mul_mat_vec_q6k", fusedQ6[0].Spec.Kernel, "Q6_K gates take the Q6_K mat-vec's gate form")
		require.Equal(t, "1", fusedQ6[0].Spec.Defines["GLU"])
		require.Equal(t, "1", fusedQ6[0].Spec.Defines["ROWS"], "one row of each matrix a workgroup")
		require.Equal(t, []*tensor.Tensor{q6gate.Src[0], q6up.Src[0], q6x, q6glu}, fusedQ6[0].Tensors)
		_, err = cache.Pipeline(fusedQ6[0].Spec)
		require.NoError(t, err)
		off := *l
		off.Q6KOff = true
		fusedQ6, err = gluRow.Lower([]*tensor.Tensor{q6up, q6gate, q6glu}, &off)
		require.NoError(t, err)
		require.NotEqual(t, "mul_mat_vec_q6k", fusedQ6[len(fusedQ6)-1].Spec.Kernel, "turned off")
	}
	require.False(t, gluRow.Applies([]*tensor.Tensor{up, gate, node(tensor.OpGLU, f32(9, 2), []int32{int32(tensor.GLUSwiGLU)}, gate, f32(9, 2))}, l), "the GLU must read both products")
	for _, n := range []int64{7, 300, 4096} {
		lt := *l
		lt.MaxGroupSize = 1024
		for _, nd := range []*tensor.Tensor{
			node(tensor.OpRMSNorm, f32(n, 2), []int32{int32(f32bits(1e-5))}, f32(n, 2)),
			node(tensor.OpSoftMax, f32(n, 2), []int32{int32(f32bits(1))}, f32(n, 2), f32(n, 2)),
		} {
			ds, err := Lower(nd, &lt)
			require.NoError(t, err)
			want := rowGroup(n, &lt)
			if nd.Op == tensor.OpRMSNorm {
				want, _ = normGroup(n, &lt)
			}
			require.Equal(t, want, ds[0].Spec.Workgroup)
			_, err = cache.Pipeline(ds[0].Spec)
			require.NoError(t, err, "row kernel with %d invocations", ds[0].Spec.Workgroup)
		}
	}
	require.Equal(t, 1024, rowGroup(4096, &Limits{MaxGroupSize: 1024}))
	require.Equal(t, 256, rowGroup(4096, &Limits{MaxGroupSize: 256}), "the device's limit bounds the workgroup")
	require.Equal(t, 64, rowGroup(7, &Limits{MaxGroupSize: 1024}))
	for _, shape := range [][2]int{{1, 64}, {2, 64}, {4, 64}, {4, 128}, {2, 256}, {4, 256}} {
		for _, n := range []int64{3, 8} {
			lt := *l
			lt.MatVecRows, lt.MatVecWG = shape[0], shape[1]
			ds, err := Lower(node(tensor.OpMulMat, f32(9, n), nil, contiguous(tensor.F16, 64, 9), f32(64, n)), &lt)
			require.NoError(t, err)
			require.Equal(t, "mul_mat_vec8", ds[0].Spec.Kernel)
			_, err = cache.Pipeline(ds[0].Spec)
			require.NoError(t, err, "mat-vec %v, %d columns", shape, n)
		}
	}
	// Every registered op's examples, which cover its kernel variants.
	for _, op := range registered() {
		f := families[op]
		require.NotNil(t, f.examples, "op %d registers no examples", op)
		ex := f.examples()
		require.NotEmpty(t, ex, "op %d registers no examples", op)
		for _, n := range ex {
			require.Equal(t, op, n.Op, "an example of op %d", op)
			require.True(t, Supports(n, l), "supports %s", describe(n))
			ds, err := Lower(n, l)
			require.NoError(t, err)
			require.NotEmpty(t, ds)
			for _, d := range ds {
				_, err := cache.Pipeline(d.Spec)
				require.NoError(t, err, "%s", d.Spec.Key())
				require.Len(t, d.Tensors, len(d.Spec.Operands))
			}
		}
	}
	// The integer mat-vec's single-matrix Q6_K form, which the Q6_K mat-vec takes the place
	// of unless it is off.
	q6kOff := *l
	q6kOff.Q6KOff = true
	ds, err := Lower(swarQ6KExample(), &q6kOff)
	require.NoError(t, err)
	require.Equal(t, "mul_mat_vec_q4", ds[0].Spec.Kernel)
	_, err = cache.Pipeline(ds[0].Spec)
	require.NoError(t, err)
	// Q6_K by several columns on the integer mat-vec's Q6K form (q6kSwarCols).
	for _, n := range []int64{3, 8} {
		ds, err = Lower(node(tensor.OpMulMat, f32(8192, n), nil, contiguous(tensor.Q6_K, 4096, 8192), f32(4096, n)), l)
		require.NoError(t, err)
		require.Len(t, ds, 2)
		require.Equal(t, "1", ds[1].Spec.Defines["COLS"])
		for _, d := range ds {
			_, err = cache.Pipeline(d.Spec)
			require.NoError(t, err, "%s", d.Spec.Key())
		}
	}
	// The output heads' form: Q6K on XQ.
	ds, err = Lower(q6kHeadExample(), l)
	require.NoError(t, err)
	require.Len(t, ds, 2)
	for _, d := range ds {
		_, err = cache.Pipeline(d.Spec)
		require.NoError(t, err, "%s", d.Spec.Key())
	}
	// Every fusion row's example; longer patterns are tried first, and the element-wise
	// chains (the rows with a Links check) after all the others.
	for i, f := range Fusions() {
		if i > 0 {
			prev := Fusions()[i-1]
			if (f.Links == nil) == (prev.Links == nil) {
				require.LessOrEqual(t, len(f.Ops), len(prev.Ops), "fusion %s: longer patterns first", f.Name)
			} else {
				require.NotNil(t, f.Links, "fusion %s: after the element-wise chains", f.Name)
			}
		}
		for _, k := range f.Private {
			require.Less(t, k, len(f.Ops)-1, "fusion %s: the last node's result is written", f.Name)
		}
		require.NotNil(t, f.Example, "fusion %s has no example", f.Name)
		ex := f.Example()
		require.True(t, f.Applies(ex, l), "fusion %s applies to its example", f.Name)
		ds, err := f.Lower(ex, l)
		require.NoError(t, err, f.Name)
		require.NotEmpty(t, ds)
		for _, d := range ds {
			_, err := cache.Pipeline(d.Spec)
			require.NoError(t, err, "%s: %s", f.Name, d.Spec.Key())
			require.Len(t, d.Tensors, len(d.Spec.Operands))
		}
		last := ds[len(ds)-1]
		require.Same(t, ex[len(ex)-1], last.Tensors[len(last.Tensors)-1], "fusion %s computes its last node last", f.Name)
		for _, w := range f.Written(ex) {
			stored := false
			for _, d := range ds {
				for j, o := range d.Spec.Operands {
					stored = stored || (o.Written && d.Tensors[j] == w)
				}
			}
			require.True(t, stored, "fusion %s stores the result of its %s", f.Name, w.Op)
		}
	}
}

func TestSupportsRejects(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	unread := contiguous(tensor.Q8_K, 256, 4) // an activation type, never read as weights
	iq2sPart := contiguous(tensor.IQ2_S, 256, 4)
	iq2sPart.Ne[0] = 128 // half a block per row
	iq4nl := contiguous(tensor.IQ4_NL, 64, 4)
	iq4nl.Nb[1] = 40 // rows not at whole blocks
	iq1mNb := contiguous(tensor.IQ1_M, 256, 4)
	iq1mNb.Nb[0] = 64 // not the block's bytes
	q4kPart := contiguous(tensor.Q4_K, 256, 4)
	q4kPart.Ne[0] = 128 // half a block per row
	q4kApart := contiguous(tensor.Q4_K, 256, 4)
	q4kApart.Nb[1] = 72 // rows not at whole blocks
	q6kNb := contiguous(tensor.Q6_K, 256, 4)
	q6kNb.Nb[0] = 212 // not the block's bytes
	q4 := contiguous(tensor.Q4_0, 64, 4)
	q4.Nb[1] = 40 // rows not at whole blocks
	q4t := contiguous(tensor.Q4_0, 64, 4)
	q4t.Ne, q4t.Nb = [4]int64{4, 64, 1, 1}, [4]uint64{36, 18, 72 * 4, 72 * 4} // transposed
	cases := map[string]*tensor.Tensor{
		"unread type matmul":         node(tensor.OpMulMat, f32(4, 2), nil, unread, f32(256, 2)),
		"unread type get_rows":       node(tensor.OpGetRows, f32(256, 2), nil, unread, contiguous(tensor.I32, 2)),
		"iq part block":              node(tensor.OpMulMat, f32(4, 2), nil, iq2sPart, f32(128, 2)),
		"iq rows apart":              node(tensor.OpGetRows, f32(64, 2), nil, iq4nl, contiguous(tensor.I32, 2)),
		"iq block bytes":             node(tensor.OpMulMat, f32(4, 2), nil, iq1mNb, f32(256, 2)),
		"k-quant part block":         node(tensor.OpMulMat, f32(4, 2), nil, q4kPart, f32(128, 2)),
		"k-quant rows apart":         node(tensor.OpGetRows, f32(256, 2), nil, q4kApart, contiguous(tensor.I32, 2)),
		"k-quant block bytes":        node(tensor.OpMulMat, f32(4, 2), nil, q6kNb, f32(256, 2)),
		"quantized rows apart":       node(tensor.OpMulMat, f32(4, 2), nil, q4, f32(64, 2)),
		"quantized get_rows":         node(tensor.OpGetRows, f32(64, 2), nil, q4, contiguous(tensor.I32, 2)),
		"quantized transposed":       node(tensor.OpMulMat, f32(64, 2), nil, q4t, f32(4, 2)),
		"quantized src1":             node(tensor.OpMulMat, f32(4, 2), nil, f32(64, 4), contiguous(tensor.Q8_0, 64, 2)),
		"quantized result":           node(tensor.OpGetRows, contiguous(tensor.Q8_0, 64, 2), nil, contiguous(tensor.Q8_0, 64, 4), contiguous(tensor.I32, 2)),
		"f32 add into f16":           node(tensor.OpAdd, contiguous(tensor.F16, 4), nil, f32(4), f32(4)),
		"f32 add of f16":             node(tensor.OpAdd, f32(4), nil, f32(4), contiguous(tensor.F16, 4)),
		"add1 of a vector":           node(tensor.OpAdd1, f32(4), nil, f32(4), f32(4)),
		"non-repeatable src1":        node(tensor.OpAdd, f32(4, 3), nil, f32(4, 3), f32(3)),
		"unknown unary":              node(tensor.OpUnary, f32(4), []int32{int32(tensor.UnaryOpCount)}, f32(4)),
		"f16 scale":                  node(tensor.OpScale, contiguous(tensor.F16, 4), nil, contiguous(tensor.F16, 4)),
		"unary type change":          node(tensor.OpUnary, f32(4), []int32{int32(tensor.UnaryAbs)}, contiguous(tensor.F16, 4)),
		"softmax sinks not per head": node(tensor.OpSoftMax, f32(4, 2), nil, f32(4, 2), nil, f32(2)),
		"softmax f16 sinks":          node(tensor.OpSoftMax, f32(4, 2, 2), nil, f32(4, 2, 2), nil, contiguous(tensor.F16, 2)),
		"mul_mat_id unread type":     node(tensor.OpMulMatID, f32(4, 2, 3), nil, contiguous(tensor.Q8_K, 256, 4, 8), f32(256, 2, 3), contiguous(tensor.I32, 2, 3)),
		"mul_mat_id i64 ids":         node(tensor.OpMulMatID, f32(4, 2, 3), nil, f32(64, 4, 8), f32(64, 2, 3), contiguous(tensor.I64, 2, 3)),
		"mul_mat_id 4d experts":      node(tensor.OpMulMatID, f32(4, 2, 3), nil, f32(64, 4, 8, 2), f32(64, 2, 3), contiguous(tensor.I32, 2, 3)),
		"argsort row too long":       node(tensor.OpArgSort, contiguous(tensor.I32, 4097), nil, f32(4097)),
		"argsort f16":                node(tensor.OpArgSort, contiguous(tensor.I32, 7), nil, contiguous(tensor.F16, 7)),
		"argsort order":              node(tensor.OpArgSort, contiguous(tensor.I32, 7), []int32{2}, f32(7)),
		"sum_rows f16":               node(tensor.OpSumRows, contiguous(tensor.F16, 1, 3), nil, contiguous(tensor.F16, 7, 3)),
		"argmax 3d":                  node(tensor.OpArgMax, contiguous(tensor.I32, 3), nil, f32(7, 3, 2)),
		"sum too large":              node(tensor.OpSum, f32(1), nil, f32(4096, 4097)),
		"add_id f16":                 node(tensor.OpAddID, contiguous(tensor.F16, 5, 2), nil, contiguous(tensor.F16, 5, 2), f32(5, 4), contiguous(tensor.I32, 2)),
		"rope mrope":                 node(tensor.OpRope, f32(8, 2, 3), []int32{0, 8, 8}, f32(8, 2, 3), contiguous(tensor.I32, 12)),
		"missing source":             node(tensor.OpMul, f32(4), nil, f32(4)),
		"too large for binding":      node(tensor.OpScale, f32(1<<26), nil, f32(1<<26)),
		"unregistered op":            node(tensor.OpFlashAttnBack, f32(4), nil, f32(4)),
	}
	for name, n := range cases {
		require.False(t, Supports(n, l), name)
		_, err := Lower(n, l)
		require.Error(t, err, name)
	}
}

func TestQuantTypes(t *testing.T) {
	require.Equal(t, []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.Q8_0, tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K,
		tensor.IQ2_XXS, tensor.IQ2_XS, tensor.IQ3_XXS, tensor.IQ1_S, tensor.IQ4_NL, tensor.IQ3_S, tensor.IQ2_S, tensor.IQ4_XS, tensor.IQ1_M,
		tensor.TQ1_0, tensor.TQ2_0, tensor.MXFP4, tensor.NVFP4, tensor.Q1_0, tensor.Q2_0}, quantTypes)
	for _, q := range quantTypes {
		f, ok := format(q)
		require.True(t, ok)
		require.Equal(t, q.String(), f.String())
		require.Equal(t, q.Size(), f.BlockBytes(), "%s block bytes", q)
		require.Equal(t, q.BlockElems(), f.BlockElems(), "%s block elements", q)
	}
	_, ok := format(tensor.Q8_K)
	require.False(t, ok)
}
