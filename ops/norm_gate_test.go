package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// lowerNormFed checks that row applies to n under l and lowers it to two dispatches, the
// norm's quantizing its result (XQ) and the integer mat-vec's, which it returns.
func lowerNormFed(t *testing.T, row Fusion, n []*tensor.Tensor, l *Limits) []Dispatch {
	t.Helper()
	require.True(t, row.Applies(n, l))
	ds, err := row.Lower(n, l)
	require.NoError(t, err)
	require.Len(t, ds, 2)
	require.Equal(t, "norm", ds[0].Spec.Kernel)
	require.Equal(t, "1", ds[0].Spec.Defines["XQ"])
	require.Equal(t, "mul_mat_vec_q4", ds[1].Spec.Kernel)
	return ds
}

// TestAddNormGate checks the fusion row add+norm+mul+gate: where the gate takes the
// integer mat-vec's gate form, the norm's dispatch stores the quantized column the gate
// reads, in place of the gate's own quantizing dispatch; elsewhere the row stays out.
func TestAddNormGate(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, MaxGroupSize: 1024}
	row := addNormGateRow
	n := normGateNodes(tensor.Q4_0, 8192, 2048) // a 1B llama's feed-forward
	ds := lowerNormFed(t, row, n, l)
	require.Equal(t, "1", ds[1].Spec.Defines["GLU"])
	// the norm stores the sum, the weighted norm and the columns the gate reads
	unfused, err := lowerMatVecGLU(n[3:], l)
	require.NoError(t, err)
	require.Equal(t, []string{"mul_mat_vec_q4_act", "mul_mat_vec_q4"}, []string{unfused[0].Spec.Kernel, unfused[1].Spec.Kernel})
	xq := unfused[0].Tensors[1]
	require.True(t, IsScratch(xq))
	var stored []*tensor.Tensor
	for i, o := range ds[0].Spec.Operands {
		if o.Written {
			stored = append(stored, ds[0].Tensors[i])
		}
	}
	require.Len(t, stored, 3)
	require.Same(t, n[0], stored[0])
	require.Same(t, n[2], stored[1])
	require.Equal(t, xq.Loc, stored[2].Loc)
	require.Equal(t, xq.Extent(), stored[2].Extent())
	require.Contains(t, ds[1].Tensors, unfused[1].Tensors[2], "the gate reads the columns where the norm stores them")
	for _, ty := range []tensor.Type{tensor.Q4_1, tensor.Q4_K, tensor.MXFP4, tensor.IQ4_XS, tensor.Q5_K} {
		require.True(t, row.Applies(normGateNodes(ty, 8192, 2048), l), "%s", ty)
	}

	// a gate on the vectorised kernel (F16; Q8_0 but heads; Q4_0 of 2^24 weights in all)
	// or the Q6_K mat-vec keeps its rows
	for _, c := range []struct {
		ty   tensor.Type
		m, k int64
	}{{tensor.F16, 8192, 2048}, {tensor.Q8_0, 8192, 2048}, {tensor.Q4_0, 4096, 2048}, {tensor.Q6_K, 8192, 2048}} {
		require.False(t, row.Applies(normGateNodes(c.ty, c.m, c.k), l), "%s %d x %d", c.ty, c.m, c.k)
	}
	// the row and its exchange in workgroup memory: 4096 elements need more than 16 KiB
	require.False(t, row.Applies(normGateNodes(tensor.Q4_K, 14336, 4096), l))
	big := *l
	big.MaxWorkgroupStorage = 49152
	require.True(t, row.Applies(normGateNodes(tensor.Q4_K, 14336, 4096), &big))
	require.False(t, row.Applies(normGateNodes(tensor.Q4_K, 14336, 16384), &big))
	big.NormXQOff = true
	require.False(t, row.Applies(normGateNodes(tensor.Q4_K, 14336, 4096), &big))
	// products of another column than the MUL's result
	other := normGateNodes(tensor.Q4_0, 8192, 2048)
	x := f32(2048, 1)
	other[3].Src[1], other[4].Src[1] = x, x
	require.False(t, row.Applies(other, l))
}

// TestSwarGLUApplies checks that the gate form of one column counts both matrices'
// weights against the integer mat-vec's threshold, of several columns one matrix's.
func TestSwarGLUApplies(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535}
	gate := func(ty tensor.Type, m, k int64) bool {
		n := normGateNodes(ty, m, k)
		return swarGLUApplies(n[4].Src[0], n[3].Src[0], n[2], mulMatParamsOf(n[4]), l)
	}
	require.True(t, gate(tensor.Q4_0, 8192, 2048))  // 2 x 2^24 = swarMinSmallBlocks
	require.False(t, gate(tensor.Q4_0, 4096, 2048)) // 2 x 2^23
	require.True(t, gate(tensor.Q4_K, 4096, 2048))  // 2 x 2^23 = swarMinDefault
	require.False(t, gate(tensor.Q4_K, 2048, 2048))
	require.False(t, gate(tensor.F16, 8192, 2048))
	// several columns: one matrix's weights
	two := normGateNodes(tensor.Q4_0, 8192, 2048)
	p := mulMatParamsOf(two[4])
	p.N = 2
	require.False(t, swarGLUApplies(two[4].Src[0], two[3].Src[0], two[2], p, l))
	p.M = 16384
	require.True(t, swarGLUApplies(two[4].Src[0], two[3].Src[0], two[2], p, l))
}

// TestAddNormQKV checks the fusion row add+norm+mul+qkv: the norm's dispatch stores the
// quantized column, and one MULTI dispatch of the integer mat-vec computes the three
// products, each product's workgroups after the previous one's.
func TestAddNormQKV(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, MaxGroupSize: 1024}
	row := addNormQKVRow
	q4 := [3]tensor.Type{tensor.Q4_0, tensor.Q4_0, tensor.Q4_0}
	n := normQKVNodes(q4, 2048, 512, 2048) // a 1B llama's
	ds := lowerNormFed(t, row, n, l)
	m := ds[1]
	require.Equal(t, "1", m.Spec.Defines["MULTI"])
	require.Equal(t, "3", m.Spec.Defines["PRODUCTS"])
	xq := ds[0].Tensors[len(ds[0].Tensors)-1]
	require.True(t, IsScratch(xq))
	require.Equal(t, []*tensor.Tensor{n[3].Src[0], n[5].Src[0], n[7].Src[0], xq, n[3], n[5], n[7]}, m.Tensors)
	p := m.Params.(swarMultiParams)
	rows := uint32(2)
	require.Equal(t, [4]uint32{2048, 512, 512, 0}, p.Ms)
	require.Equal(t, [4]uint32{0, 2048 / rows, 2560 / rows, 3072 / rows}, p.Start)
	require.Equal(t, uint32(3072/rows), m.Grid[0]*m.Grid[1]*m.Grid[2])
	for _, ty := range []tensor.Type{tensor.Q4_K, tensor.Q5_K, tensor.MXFP4, tensor.IQ4_XS} {
		require.True(t, row.Applies(normQKVNodes([3]tensor.Type{ty, ty, ty}, 2048, 512, 2048), l), "%s", ty)
	}
	// a product of another format (a Q4_K_M's Q6_K V) takes its own kernel on the norm's
	// result, its dispatch placed so that the last node's comes last, where the other two
	// products hold normQKVSplitMin weights (an 8B llama's; a 1B's stay out)
	require.False(t, row.Applies(normQKVNodes([3]tensor.Type{tensor.Q4_K, tensor.Q6_K, tensor.Q4_K}, 2048, 512, 2048), l))
	big := *l
	big.MaxWorkgroupStorage = 49152 // an 8B's row of 4096
	require.False(t, row.Applies(normQKVNodes([3]tensor.Type{tensor.Q6_K, tensor.Q4_K, tensor.Q4_K}, 4096, 1024, 4096), &big), "K and V alone")
	small := *l
	small.SwarMin = 1
	require.True(t, row.Applies(normQKVNodes([3]tensor.Type{tensor.Q4_K, tensor.Q6_K, tensor.Q4_K}, 2048, 512, 2048), &small), "SwarMin sets the threshold")
	for _, tc := range []struct {
		ts      [3]tensor.Type
		kernels []string
	}{
		{[3]tensor.Type{tensor.Q4_K, tensor.Q6_K, tensor.Q4_K}, []string{"norm", "mul_mat_vec_q6k", "mul_mat_vec_q4"}},
		{[3]tensor.Type{tensor.Q4_K, tensor.Q4_K, tensor.Q6_K}, []string{"norm", "mul_mat_vec_q4", "mul_mat_vec_q6k"}},
	} {
		mixed := normQKVNodes(tc.ts, 4096, 1024, 4096)
		require.True(t, row.Applies(mixed, &big), "%v", tc.ts)
		ds, err := row.Lower(mixed, &big)
		require.NoError(t, err)
		var kernels []string
		for _, d := range ds {
			kernels = append(kernels, d.Spec.Kernel)
		}
		require.Equal(t, tc.kernels, kernels, "%v", tc.ts)
		multi, own := ds[2], ds[1]
		if multi.Spec.Kernel != "mul_mat_vec_q4" {
			multi, own = ds[1], ds[2]
		}
		require.Equal(t, "2", multi.Spec.Defines["PRODUCTS"])
		require.Equal(t, tensor.Q6_K, own.Tensors[0].Type)
		require.Same(t, mixed[2], own.Tensors[1], "the odd product reads the norm's stored result")
		require.Same(t, mixed[len(mixed)-1], ds[2].Tensors[len(ds[2].Tensors)-1], "the last node's dispatch comes last")
	}
	// other formats, three formats, the switch
	for _, ts := range [][3]tensor.Type{{tensor.F16, tensor.F16, tensor.F16}, {tensor.Q8_0, tensor.Q8_0, tensor.Q8_0},
		{tensor.Q6_K, tensor.Q6_K, tensor.Q6_K}, {tensor.Q4_K, tensor.Q6_K, tensor.Q5_K}, {tensor.Q4_K, tensor.Q8_0, tensor.Q8_0}} {
		require.False(t, row.Applies(normQKVNodes(ts, 2048, 512, 2048), l), "%v", ts)
	}
	for _, set := range []func(*Limits){func(o *Limits) { o.SwarOff = true }, func(o *Limits) { o.NormXQOff = true }} {
		off := *l
		set(&off)
		require.False(t, row.Applies(n, &off))
	}
	// a product of another column
	other := normQKVNodes(q4, 2048, 512, 2048)
	other[7].Src[1] = f32(2048, 1)
	require.False(t, row.Applies(other, l))
}

// TestAddNormQKVCols checks the row add+norm+mul+qkv by several columns (tokens decoded
// together): one column by default; with Limits.QKVCols up to normQKVCols (at most the
// integer mat-vec's columns, fewer for the coded formats), the MULTI form taking every
// column (NCOLS) in a single product's rows, the norm quantizing each column; never the
// ROPE_KV form.
func TestAddNormQKVCols(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, MaxGroupSize: 1024, MaxWorkgroupStorage: 49152}
	row := addNormQKVRow
	q4k := [3]tensor.Type{tensor.Q4_K, tensor.Q4_K, tensor.Q4_K}
	n := normQKVColNodes(q4k, 4096, 1024, 4096, 4) // an 8B llama's, four sequences
	require.False(t, row.Applies(n, l), "one column by default")
	require.True(t, row.Applies(normQKVColNodes(q4k, 4096, 1024, 4096, 1), l))
	l.QKVCols = 8
	ds := lowerNormFed(t, row, n, l)
	m := ds[1]
	require.Equal(t, "1", m.Spec.Defines["MULTI"])
	require.Equal(t, "4", m.Spec.Defines["NCOLS"])
	require.Equal(t, "2", m.Spec.Defines["ROWS"], "Q4_K: two rows, as on XQ")
	require.Equal(t, "8", m.Spec.Defines["ACC"])
	require.Equal(t, uint32(6144/2), m.Grid[0]*m.Grid[1]*m.Grid[2])
	xq := ds[0].Tensors[len(ds[0].Tensors)-1]
	require.Equal(t, int64(4*(4096/64)*9*4), xq.Elems(), "four columns of 64 groups (of 64 elements) of 9 vectors of 4 words")
	q40 := normQKVColNodes([3]tensor.Type{tensor.Q4_0, tensor.Q4_0, tensor.Q4_0}, 2048, 512, 2048, 8)
	require.Equal(t, "4", lowerNormFed(t, row, q40, l)[1].Spec.Defines["ROWS"], "Q4_0 by several columns: four rows")
	for _, c := range []struct {
		ty   tensor.Type
		most int64
	}{{tensor.Q4_0, 8}, {tensor.Q4_K, 8}, {tensor.Q5_K, 4}, {tensor.MXFP4, 2}, {tensor.Q5_0, 2}, {tensor.IQ4_XS, 1}} {
		ts := [3]tensor.Type{c.ty, c.ty, c.ty}
		require.True(t, row.Applies(normQKVColNodes(ts, 2048, 512, 2048, c.most), l), "%s by %d", c.ty, c.most)
		require.False(t, row.Applies(normQKVColNodes(ts, 2048, 512, 2048, c.most+1), l), "%s by %d", c.ty, c.most+1)
	}
	three := *l
	three.QKVCols = 3
	require.False(t, row.Applies(n, &three), "three columns at most")
	require.True(t, row.Applies(normQKVColNodes(q4k, 4096, 1024, 4096, 3), &three))
	// a Q4_K_M's Q6_K V by four columns: its own several-column kernel
	mixed := normQKVColNodes([3]tensor.Type{tensor.Q4_K, tensor.Q6_K, tensor.Q4_K}, 4096, 1024, 4096, 4)
	require.True(t, row.Applies(mixed, l))
	ds, err := row.Lower(mixed, l)
	require.NoError(t, err)
	require.Equal(t, []string{"norm", "mul_mat_vec_q6k_cols", "mul_mat_vec_q4"}, []string{ds[0].Spec.Kernel, ds[1].Spec.Kernel, ds[2].Spec.Kernel})
	require.Equal(t, "4", ds[2].Spec.Defines["NCOLS"])
	// where the integer mat-vec would take that V by itself (q6kSwarCols, from SwarMin
	// weights), after a quantizing dispatch of its own into the scratch memory that holds
	// the norm's column, it stays on the Q6_K mat-vec in the row
	small := *l
	small.SwarMin = 1
	v := multiProducts(mixed[3:])[1]
	require.Equal(t, tensor.Q6_K, v.Src[0].Type)
	alone, err := Lower(v, &small)
	require.NoError(t, err)
	require.Equal(t, "mul_mat_vec_q4_act", alone[0].Spec.Kernel, "the V alone")
	require.True(t, row.Applies(mixed, &small))
	ds, err = row.Lower(mixed, &small)
	require.NoError(t, err)
	require.Len(t, ds, 3)
	require.Equal(t, "mul_mat_vec_q6k_cols", ds[1].Spec.Kernel)
	// the rope row takes one token only
	rope := normQKVRopeNodes(tensor.Q4_0, 64, 32, 8, 2048, 16)
	require.True(t, addNormQKVRopeRow.Applies(rope, l))
	for _, i := range []int{3, 5, 7} {
		rope[i].Ne[1] = 2
	}
	require.False(t, addNormQKVRopeRow.Applies(rope, l))
}
