package ops

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// swarDot16 computes the dot product of 16 weights q (0..15) and 16 activations x
// (-127..127) the way mul_mat_vec_q4.wgsl does: pairs (q[2i], q[2i+1]) in the 16-bit
// lanes of one word, the partners packed as x[2i+1] + x[2i] * 65536, 8 wrapping i32
// multiply-adds, then the upper half less the lower half's borrow.
func swarDot16(q [16]int32, x [16]int32) int32 {
	var acc int32
	for i := 0; i < 16; i += 2 {
		w := q[i] + q[i+1]<<16
		v := x[i+1] + x[i]*65536
		acc += w * v // wraps, as WGSL's i32 arithmetic
	}
	lo := (acc << 16) >> 16
	return (acc - lo) >> 16
}

func TestSwarDotExact(t *testing.T) {
	check := func(name string, q, x [16]int32) {
		t.Helper()
		var want int32
		for i := range q {
			want += q[i] * x[i]
		}
		if got := swarDot16(q, x); got != want {
			t.Fatalf("%s: q %v x %v: SWAR dot %d, want %d", name, q, x, got, want)
		}
	}
	var q, x [16]int32
	// extremes: all 15 against +-127 (the largest sums of either sign), alternating
	// signs, zero weights, and every lane at its bound one at a time
	for _, xv := range []int32{127, -127, 0, 1, -1} {
		for i := range q {
			q[i], x[i] = 15, xv
		}
		check("constant", q, x)
	}
	for i := range q {
		q[i], x[i] = 15, 127*(1-2*int32(i%2))
	}
	check("alternating", q, x)
	for i := range q {
		q[i], x[i] = 15, 127*(1-2*int32((i/2)%2))
	}
	check("alternating pairs", q, x)
	for i := range q {
		q[i], x[i] = 0, -127
	}
	check("zero weights", q, x)
	for l := 0; l < 16; l++ {
		for i := range q {
			q[i], x[i] = 0, 0
		}
		q[l], x[l] = 15, -127
		check("one lane", q, x)
		x[l^1] = 127
		check("one lane and its partner", q, x)
	}
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 200000; n++ {
		for i := range q {
			q[i] = r.Int31n(16)
			if n%2 == 0 {
				x[i] = r.Int31n(255) - 127
			} else {
				x[i] = 127 * (2*r.Int31n(2) - 1) // only the extremes
			}
		}
		check("random", q, x)
	}
}

// TestSwarShape checks the integer mat-vec's choice of shape: rows per workgroup by the
// product's rows (one row for the gate form of four quant words a group), a small
// workgroup for short rows, the overrides, and the workgroup storage bound on the partial
// sums.
func TestSwarShape(t *testing.T) {
	l := &Limits{MaxWorkgroupStorage: 32768, MaxGroupSize: 1024}
	for _, c := range []struct {
		m, tasks uint32
		rows, wg int
	}{
		{128256, 32, swarRows, swarWG}, // many rows
		{14336, 64, swarRows, swarWG},
		{4096, 224, swarRows, swarMaxWG}, // fewer, longer rows: more invocations
		{2048, 128, swarRows, 128},
		{4096, 64, swarRows, 64},
		{2048, 8, swarRows, swarWG},
	} {
		rows, wg := swarShape(c.m, c.tasks, 1, 1, 8, false, l)
		require.Equal(t, [2]int{c.rows, c.wg}, [2]int{rows, wg}, "%d rows of %d tasks", c.m, c.tasks)
	}
	for _, m := range []uint32{128256, 4096, 2048} { // the column quantized ahead
		rows, wg := swarShape(m, 64, 2, 1, 8, true, l)
		require.Equal(t, [2]int{swarXQRows, swarXQWG}, [2]int{rows, wg}, "%d rows, XQ", m)
		rows, wg = swarShape(m, 64, 2, 1, 4, true, l)
		require.Equal(t, [2]int{swarGateRowsSmallBlocks, swarXQWG}, [2]int{rows, wg}, "%d rows, the gate form of Q4_0", m)
	}
	// several columns: four rows for one matrix of four quant words a group, else two
	for _, c := range []struct{ mats, cols, wpg, rows int }{{1, 2, 4, 4}, {1, 8, 4, 4}, {1, 2, 8, 2}, {2, 4, 4, 2}, {1, 1, 4, 2}} {
		rows, wg := swarShape(14336, 64, c.mats, c.cols, c.wpg, true, l)
		require.Equal(t, [2]int{c.rows, swarXQWG}, [2]int{rows, wg}, "%+v", c)
	}
	rows, _ := swarShape(14336, 64, 1, 8, 4, true, &Limits{MaxWorkgroupStorage: 2048})
	require.Equal(t, 2, rows, "partial sums of 8 columns halved to fit")
	l.SwarRows, l.SwarWG = 4, 100 // a workgroup size that is no power of two is ignored
	rows, wg := swarShape(14336, 64, 2, 1, 8, true, l)
	require.Equal(t, [2]int{4, swarWG}, [2]int{rows, wg})
	l.SwarRows, l.SwarWG, l.MaxWorkgroupStorage = 64, 1024, 16384
	rows, wg = swarShape(14336, 64, 2, 1, 8, false, l)
	require.LessOrEqual(t, 4*2*rows*wg, 16384, "partial sums beyond the workgroup storage: %d x %d", rows, wg)
}

// TestSwarLowering checks which products take the integer mat-vec (one dispatch) and which
// keep the vectorised kernel: the size threshold and its override, the switch, several
// columns, other formats; and the fused gate form (the column's quantization into scratch
// memory, then the product), whose kernels it compiles.
func TestSwarLowering(t *testing.T) {
	// Q6_K single products take the Q6_K mat-vec unless it is off (TestQ6KLowering)
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 16384, Q6KOff: true}
	mm := func(q tensor.Type, m, k, n int64) *tensor.Tensor {
		return node(tensor.OpMulMat, f32(m, n), nil, contiguous(q, k, m), f32(k, n))
	}
	kernels := func(n *tensor.Tensor, l *Limits) []string { return loweredKernels(t, n, l) }
	swar := []string{"mul_mat_vec_q4"}
	xq := []string{"mul_mat_vec_q4_act", "mul_mat_vec_q4"}
	for _, q := range []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q4_K, tensor.Q5_0, tensor.Q5_1, tensor.Q5_K, tensor.Q6_K, tensor.MXFP4, tensor.IQ4_NL, tensor.IQ4_XS} {
		m := int64(4096) // 2^24 weights, 2^25 for the blocks of 32, 2^27 for Q6_K
		switch q {
		case tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.MXFP4, tensor.IQ4_NL, tensor.IQ4_XS:
			m = 8192
		case tensor.Q6_K:
			m = 32768
		}
		// single products of fewer than swarXQMinRows rows quantize their column in the kernel
		k := m * 4096 / 2048
		require.Equal(t, swar, kernels(mm(q, 2048, k, 1), l), "%s at the threshold", q)
		ds, err := Lower(mm(q, 2048, k, 1), l)
		require.NoError(t, err)
		five := q == tensor.Q5_K || q == tensor.Q5_0 || q == tensor.Q5_1
		coded := q == tensor.MXFP4 || q == tensor.IQ4_NL || q == tensor.IQ4_XS || five
		preload := q == tensor.Q4_0 || q == tensor.Q4_1 || coded && q != tensor.Q5_K // swarPreload: four words a group
		require.Equal(t, flag(preload), ds[0].Spec.Defines["PRELOAD"], "%s preloads its quant words", q)
		require.Equal(t, flag(q == tensor.MXFP4), ds[0].Spec.Defines["FP4"], "%s: E2M1 codes made integers", q)
		require.Equal(t, flag(q == tensor.IQ4_NL || q == tensor.IQ4_XS), ds[0].Spec.Defines["LEVELS"], "%s: levels looked up", q)
		require.Equal(t, flag(five), ds[0].Spec.Defines["HBIT"], "%s: fifth bits", q)
		require.Equal(t, flag(q == tensor.Q5_0 || q == tensor.Q5_1), ds[0].Spec.Defines["HWORD"], "%s: fifth bits in one word a block", q)
		require.Equal(t, []string{"mul_mat_vec8"}, kernels(mm(q, 2047, k, 1), l), "%s below the threshold", q)
		if q == tensor.Q6_K {
			require.Equal(t, swar, kernels(mm(q, m, 4096, 1), l), "%s keeps its in-kernel quantization", q)
		} else {
			// from swarXQMinRows rows the column is quantized ahead, as Limits.SwarXQ does for all
			ds, err := Lower(mm(q, m, 4096, 1), l)
			require.NoError(t, err)
			require.Len(t, ds, 2, "%s, %d rows", q, m)
			require.Equal(t, xq, []string{ds[0].Spec.Kernel, ds[1].Spec.Kernel})
			require.Equal(t, "1", ds[1].Spec.Defines["XQ"])
			require.Equal(t, fmt.Sprint(swarXQRows), ds[1].Spec.Defines["ROWS"])
			all := *l
			all.SwarXQ = true
			require.Equal(t, xq, kernels(mm(q, 2048, k, 1), &all), "%s, Limits.SwarXQ", q)
			rows := *l
			rows.SwarXQMinRows = int(m) + 1
			require.Equal(t, swar, kernels(mm(q, m, 4096, 1), &rows), "%s, Limits.SwarXQMinRows above its rows", q)
			rows.SwarXQMinRows = 2048
			require.Equal(t, xq, kernels(mm(q, 2048, k, 1), &rows), "%s, Limits.SwarXQMinRows at its rows", q)
		}
		if q == tensor.Q6_K {
			require.Equal(t, []string{"mul_mat_vec8"}, kernels(mm(q, m, 4096, 2), l), "%s, two columns", q)
			continue
		}
		if coded { // by at most swarCodedCols columns: MXFP4 2, IQ4 1
			most := int64(swarCodedCols(q))
			require.Equal(t, map[tensor.Type]int64{tensor.MXFP4: 2, tensor.Q5_K: 4, tensor.Q5_0: 2, tensor.Q5_1: 2, tensor.IQ4_NL: 1, tensor.IQ4_XS: 1}[q], most, "%s", q)
			if most > 1 {
				ds, err := Lower(mm(q, m, 4096, most), l)
				require.NoError(t, err)
				require.Equal(t, xq, []string{ds[0].Spec.Kernel, ds[1].Spec.Kernel}, "%s, %d columns", q, most)
				require.Equal(t, flag(five), ds[1].Spec.Defines["LANES"], "%s: words changed once for every column", q)
			}
			require.Equal(t, []string{"mul_mat_vec8"}, kernels(mm(q, m, 4096, most+1), l), "%s, more columns", q)
			continue
		}
		// several columns: quantized into scratch memory first, then the kernel's XQ form
		for _, n := range []int64{2, 5, 8} {
			ds, err := Lower(mm(q, m, 4096, n), l)
			require.NoError(t, err)
			require.Len(t, ds, 2, "%s, %d columns", q, n)
			require.Equal(t, "mul_mat_vec_q4_act", ds[0].Spec.Kernel)
			require.Equal(t, "mul_mat_vec_q4", ds[1].Spec.Kernel)
			require.Equal(t, "1", ds[1].Spec.Defines["XQ"])
			require.Equal(t, fmt.Sprint(n), ds[1].Spec.Defines["NCOLS"])
			require.Equal(t, "0", ds[1].Spec.Defines["PRELOAD"])
			wpg, rows := int64(8), swarXQRows // quant words a group: 4 for the blocks of 32
			if q == tensor.Q4_0 || q == tensor.Q4_1 || coded {
				wpg, rows = 4, swarColsRowsSmallBlocks
			}
			require.Equal(t, fmt.Sprint(rows), ds[1].Spec.Defines["ROWS"], "%s, %d columns", q, n)
			require.Equal(t, n*4096/(8*wpg)*(wpg+1)*4, ds[0].Tensors[1].Ne[0], "%s: every column's groups", q)
		}
		require.Equal(t, []string{"mul_mat_vec8"}, kernels(mm(q, m-1, 4096, 2), l), "%s, two columns below the threshold", q)
		// broadcast batches: the quantized columns must fit ScratchBudget (8 columns of 4096
		// elements take 80 or 72 KiB a batch)
		batched := func(batches int64) *tensor.Tensor {
			return node(tensor.OpMulMat, f32(1024, 8, batches), nil, contiguous(q, 4096, 1024), f32(4096, 8, batches))
		}
		require.Equal(t, []string{"mul_mat_vec_q4_act", "mul_mat_vec_q4"}, kernels(batched(512), l), "%s, 512 batches", q)
		require.Equal(t, []string{"mul_mat_vec8"}, kernels(batched(1024), l), "%s, 1024 batches: beyond the scratch budget", q)
		one := *l
		one.SwarCols = 1
		require.Equal(t, []string{"mul_mat_vec8"}, kernels(mm(q, m, 4096, 2), &one), "%s, several columns off", q)
		four := *l
		four.SwarCols = 4
		require.Equal(t, []string{"mul_mat_vec8"}, kernels(mm(q, m, 4096, 5), &four), "%s, beyond the cap", q)
		few := *l
		few.SwarColsMin = 1
		require.Equal(t, []string{"mul_mat_vec_q4_act", "mul_mat_vec_q4"}, kernels(mm(q, 3, 256, 2), &few), "%s, the several-column threshold's override", q)
		require.Equal(t, []string{"mul_mat_vec8"}, kernels(mm(q, 3, 256, 1), &few), "%s, one column keeps its threshold", q)
	}
	for _, ex := range append(matVecQ4Examples(), swarQ6KExample()) {
		want := swar
		if ex.Ne[1] > 1 || ex.Ne[0] >= swarXQMinRows && ex.Src[0].Type != tensor.Q6_K {
			want = xq
		}
		require.Equal(t, want, kernels(ex, l), "the compile test's example %s", ex.Src[0].Type)
	}
	require.Equal(t, []string{"mul_mat_vec8"}, kernels(mm(tensor.Q5_0, 4096, 4096, 1), l))
	// Q8_0: the output heads only (swarQ8MinRows), every product where the threshold is set
	require.Equal(t, xq, kernels(mm(tensor.Q8_0, swarQ8MinRows, 2048, 1), l), "a Q8_0 head")
	head, err := Lower(mm(tensor.Q8_0, swarQ8MinRows, 2048, 1), l)
	require.NoError(t, err)
	require.Equal(t, "1", head[1].Spec.Defines["BYTES"])
	require.Equal(t, []string{"mul_mat_vec8"}, kernels(mm(tensor.Q8_0, swarQ8MinRows-1, 2048, 1), l), "Q8_0 below a head")
	require.Equal(t, []string{"mul_mat_vec8"}, kernels(mm(tensor.Q8_0, swarQ8MinRows, 2048, 2), l), "Q8_0 by two columns")
	small := *l
	small.SwarMin = 1
	require.Equal(t, swar, kernels(mm(tensor.Q8_0, 3, 256, 1), &small), "Q8_0 with the threshold's override")
	require.Equal(t, swar, kernels(mm(tensor.Q4_K, 3, 256, 1), &small), "the threshold's override")
	off := *l
	off.SwarOff = true
	require.Equal(t, []string{"mul_mat_vec8"}, kernels(mm(tensor.Q4_K, 4096, 4096, 1), &off))
	require.Equal(t, []string{"mul_mat_vec8"}, kernels(mm(tensor.Q6_K, 4096, 4096, 1), &off))
	// Q6_K rows of an odd number of blocks start at either alignment: its form reads them
	q6 := mm(tensor.Q6_K, 16384, 49*256, 1)
	require.NotZero(t, q6.Src[0].Nb[1]%4)
	require.Equal(t, swar, kernels(q6, l))
	ds, err := Lower(q6, l)
	require.NoError(t, err)
	require.Equal(t, "1", ds[0].Spec.Defines["Q6K"])
	require.Equal(t, "0", ds[0].Spec.Defines["NIBBLES"])

	// the weights, the column, dst: no scratch memory
	ds, err = Lower(mm(tensor.Q4_K, 2048, 8192, 1), l)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	for _, x := range ds[0].Tensors {
		require.False(t, IsScratch(x))
	}

	cache := newCompiler(t)
	gluRow := fusion(t, "mul_mat+mul_mat+glu")
	for _, q := range []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q4_K, tensor.Q6_K} {
		x := f32(4096, 1)
		gate := node(tensor.OpMulMat, f32(32768, 1), nil, contiguous(q, 4096, 32768), x)
		up := node(tensor.OpMulMat, f32(32768, 1), nil, contiguous(q, 4096, 32768), x)
		glu := node(tensor.OpGLU, f32(32768, 1), []int32{int32(tensor.GLUSwiGLU)}, gate, up)
		n := []*tensor.Tensor{gate, up, glu}
		require.True(t, gluRow.Applies(n, l))
		ds, err := gluRow.Lower(n, l)
		require.NoError(t, err)
		require.Len(t, ds, 2, "one quantization of the column for both matrices")
		require.Equal(t, "mul_mat_vec_q4_act", ds[0].Spec.Kernel)
		require.Equal(t, "mul_mat_vec_q4", ds[1].Spec.Kernel)
		require.Equal(t, "1", ds[1].Spec.Defines["GLU"])
		require.Equal(t, "1", ds[1].Spec.Defines["XQ"])
		require.Equal(t, "0", ds[1].Spec.Defines["PRELOAD"], "the gate form does not preload")
		// the column (4096 elements) in groups of 8 words and 4 scales (32 or 64 elements)
		wpg := int64(8)
		if q == tensor.Q4_0 || q == tensor.Q4_1 {
			wpg = 4
		}
		xq := ds[0].Tensors[1]
		require.True(t, IsScratch(xq))
		require.Equal(t, tensor.I32, xq.Type)
		require.Equal(t, 4096/(8*wpg)*(wpg+1)*4, xq.Ne[0], "%s", q)
		require.Equal(t, []*tensor.Tensor{x, xq}, ds[0].Tensors)
		require.Equal(t, []*tensor.Tensor{gate.Src[0], up.Src[0], xq, glu}, ds[1].Tensors)
		for _, d := range ds {
			_, err = cache.Pipeline(d.Spec)
			require.NoError(t, err, "%s %s", q, d.Spec.Kernel)
		}
		if q != tensor.Q6_K {
			// several columns: the gate form up to swarGateMaxCols, the vectorised one beyond
			for cols, want := range map[int64]string{4: "mul_mat_vec_q4", 8: "mul_mat_vec8"} {
				x4 := f32(4096, cols)
				g4 := node(tensor.OpMulMat, f32(32768, cols), nil, contiguous(q, 4096, 32768), x4)
				u4 := node(tensor.OpMulMat, f32(32768, cols), nil, contiguous(q, 4096, 32768), x4)
				n4 := []*tensor.Tensor{g4, u4, node(tensor.OpGLU, f32(32768, cols), []int32{int32(tensor.GLUSwiGLU)}, g4, u4)}
				require.True(t, gluRow.Applies(n4, l))
				ds, err := gluRow.Lower(n4, l)
				require.NoError(t, err)
				last := ds[len(ds)-1]
				require.Equal(t, want, last.Spec.Kernel, "%s gate by %d columns", q, cols)
				if want == "mul_mat_vec_q4" {
					require.Equal(t, fmt.Sprint(cols), last.Spec.Defines["NCOLS"])
					require.Equal(t, fmt.Sprint(swarXQRows), last.Spec.Defines["ROWS"], "the gate form keeps two rows")
				}
			}
		}
		off := *l
		off.SwarOff = true
		ds, err = gluRow.Lower(n, &off)
		require.NoError(t, err)
		require.Len(t, ds, 1)
		require.Equal(t, "mul_mat_vec8", ds[0].Spec.Kernel)
	}
}

// swarDotQ6 computes the dot product of 8 Q6_K weights u (their stored 6 bits, 0..63:
// weight u - 32) and 8 activations x (-127..127) the way mul_mat_vec_q4.wgsl's Q6K form
// does: pairs (u[2i], u[2i+1]) combined in one word less 0x00200020, which is the signed
// pair (u0 - 32) + (u1 - 32) * 65536, the partners packed as x[2i+1] + x[2i] * 65536, 4
// wrapping i32 multiply-adds, then the upper half less the lower half's borrow.
func swarDotQ6(u [8]int32, x [8]int32) int32 {
	var acc int32
	for i := 0; i < 8; i += 2 {
		w := int32(uint32(u[i])|uint32(u[i+1])<<16) - 0x00200020
		v := x[i+1] + x[i]*65536
		acc += w * v // wraps, as WGSL's i32 arithmetic
	}
	lo := (acc << 16) >> 16
	return (acc - lo) >> 16
}

// TestSwarDotQ6Exact checks the signed lanes' SWAR dot at Q6_K's bounds: 4 multiply-adds
// of two products each add at most 4 * 2 * 32 * 127 = 32512 < 2^15 to the dot's magnitude.
func TestSwarDotQ6Exact(t *testing.T) {
	check := func(name string, u, x [8]int32) {
		t.Helper()
		var want int32
		for i := range u {
			want += (u[i] - 32) * x[i]
		}
		if got := swarDotQ6(u, x); got != want {
			t.Fatalf("%s: u %v x %v: SWAR dot %d, want %d", name, u, x, got, want)
		}
	}
	var u, x [8]int32
	// all -32 and all 31 weights against +-127 (the largest sums of either sign: -32 * -127
	// * 8 = 32512), alternating signs, zero weights, every lane at its bound one at a time
	for _, uv := range []int32{0, 63, 32} {
		for _, xv := range []int32{127, -127, 0, 1, -1} {
			for i := range u {
				u[i], x[i] = uv, xv
			}
			check("constant", u, x)
		}
		for i := range u {
			u[i], x[i] = uv, 127*(1-2*int32(i%2))
		}
		check("alternating", u, x)
		for i := range u {
			u[i], x[i] = uv, 127*(1-2*int32((i/2)%2))
		}
		check("alternating pairs", u, x)
	}
	for l := 0; l < 8; l++ {
		for _, uv := range []int32{0, 63} {
			for i := range u {
				u[i], x[i] = 32, 0
			}
			u[l], x[l] = uv, -127
			check("one lane", u, x)
			x[l^1] = 127
			check("one lane and its partner", u, x)
		}
	}
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 200000; n++ {
		for i := range u {
			if n%3 == 2 {
				u[i] = 63 * r.Int31n(2) // only the extremes
			} else {
				u[i] = r.Int31n(64)
			}
			if n%2 == 0 {
				x[i] = r.Int31n(255) - 127
			} else {
				x[i] = 127 * (2*r.Int31n(2) - 1)
			}
		}
		check("random", u, x)
	}
}

// TestQ6KLowering checks which products take the Q6_K mat-vec (mul_mat_vec_q6k.go) and its
// shapes: every Q6_K product of one column in 16-byte vectors, whatever its size, unless
// turned off or its blocks start on odd bytes; of several columns, those that the integer
// mat-vec does not take (q6kSwarCols; turned off here but where named).
func TestQ6KLowering(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 16384, Q6KSwarCols: 1}
	mm := func(m, k, n int64) *tensor.Tensor {
		return node(tensor.OpMulMat, f32(m, n), nil, contiguous(tensor.Q6_K, k, m), f32(k, n))
	}
	lower := func(n *tensor.Tensor, l *Limits) Dispatch {
		ds, err := Lower(n, l)
		require.NoError(t, err)
		require.Len(t, ds, 1)
		return ds[0]
	}
	for _, c := range []struct {
		m, k     int64
		rows, wg int
	}{{3, 256, 1, 64}, {2048, 8192, 1, 128}, {4096, 4096, 2, 32}, {4096, 14336, 2, 32}, {14336, 4096, 2, 32}, {65535, 2048, 2, 32}, {128256, 2048, 2, 32}, {128256, 4096, 2, 32}} {
		l := l
		if c.m >= q6kXQMinRows {
			// the heads take the integer mat-vec on XQ unless the threshold is raised
			ds, err := Lower(mm(c.m, c.k, 1), l)
			require.NoError(t, err)
			require.Len(t, ds, 2, "%d x %d", c.m, c.k)
			require.Equal(t, []string{"mul_mat_vec_q4_act", "mul_mat_vec_q4"}, []string{ds[0].Spec.Kernel, ds[1].Spec.Kernel})
			require.Equal(t, "1", ds[1].Spec.Defines["Q6K"])
			require.Equal(t, "1", ds[1].Spec.Defines["XQ"])
			require.Equal(t, fmt.Sprint(q6kXQRows), ds[1].Spec.Defines["ROWS"])
			raised := *l
			raised.Q6KXQMinRows = int(c.m) + 1
			l = &raised
		}
		d := lower(mm(c.m, c.k, 1), l)
		require.Equal(t, "mul_mat_vec_q6k", d.Spec.Kernel, "%d x %d", c.m, c.k)
		require.Equal(t, fmt.Sprint(c.rows), d.Spec.Defines["ROWS"], "%d x %d", c.m, c.k)
		require.Equal(t, c.wg, d.Spec.Workgroup, "%d x %d", c.m, c.k)
		require.Equal(t, uint32((c.m+int64(c.rows)-1)/int64(c.rows)), d.Grid[0]*max(d.Grid[1], 1)*max(d.Grid[2], 1), "%d x %d: a workgroup per %d rows", c.m, c.k, c.rows)
	}
	for _, ex := range matVecQ6KExamples() {
		require.Contains(t, []string{"mul_mat_vec_q6k", "mul_mat_vec_q6k_cols"}, lower(ex, l).Spec.Kernel, "the compile test's example")
	}
	tuned := *l
	tuned.Q6KRows, tuned.Q6KWG = 4, 256
	d := lower(mm(4096, 4096, 1), &tuned)
	require.Equal(t, "4", d.Spec.Defines["ROWS"])
	require.Equal(t, 256, d.Spec.Workgroup)
	tuned.Q6KRows = 16
	d = lower(mm(4096, 4096, 2), &tuned)
	require.Equal(t, "8", d.Spec.Defines["ROWS"], "rows halved until the sums fit the workgroup memory")
	require.Equal(t, "16", d.Spec.Defines["ACC"])
	two := lower(mm(4096, 4096, 2), l)
	require.Equal(t, "mul_mat_vec_q6k_cols", two.Spec.Kernel, "two columns")
	require.Equal(t, "2", two.Spec.Defines["NCOLS"])
	require.Equal(t, "4", two.Spec.Defines["ACC"], "two rows by two columns")
	// columns, held at a time (q6kHold), rows and invocations a workgroup
	for _, c := range []struct {
		m, n     int64
		hold     string
		rows, wg int
	}{{4096, 3, "0", 2, 64}, {4096, 4, "1", 2, 64}, {4096, 8, "4", 2, 64}, {2048, 8, "4", 1, 64}, {128256, 8, "4", 2, 64}} {
		d := lower(mm(c.m, 4096, c.n), l)
		require.Equal(t, "mul_mat_vec_q6k_cols", d.Spec.Kernel, "%d columns", c.n)
		require.Equal(t, fmt.Sprint(c.n), d.Spec.Defines["NCOLS"])
		require.Equal(t, c.hold, d.Spec.Defines["HOLD"], "%d x %d columns", c.m, c.n)
		require.Equal(t, fmt.Sprint(c.rows), d.Spec.Defines["ROWS"], "%d x %d columns", c.m, c.n)
		require.Equal(t, c.wg, d.Spec.Workgroup, "%d x %d columns", c.m, c.n)
	}
	held := *l
	held.Q6KHold = -1
	require.Equal(t, "0", lower(mm(4096, 4096, 8), &held).Spec.Defines["HOLD"], "every column's activations first")
	held.Q6KHold = 3
	require.Equal(t, "3", lower(mm(4096, 4096, 8), &held).Spec.Defines["HOLD"])
	require.Equal(t, "2", lower(mm(4096, 4096, 2), &held).Spec.Defines["HOLD"], "at most the columns")
	require.Equal(t, "4", lower(mm(128256, 4096, 2), l).Spec.Defines["ROWS"], "by 2 columns, four")
	nine, err := Lower(mm(4096, 4096, 9), l)
	require.NoError(t, err)
	require.Equal(t, []string{"mul_mat_vec_q6k_cols", "mul_mat_vec_q6k"}, []string{nine[0].Spec.Kernel, nine[1].Spec.Kernel}, "nine columns: 8 and 1")
	many, err := Lower(mm(4096, 4096, matVecSplitMaxCols+1), l)
	require.NoError(t, err)
	for _, d := range many {
		require.NotContains(t, d.Spec.Kernel, "mul_mat_vec", "%d columns: no mat-vec", matVecSplitMaxCols+1)
	}
	one := *l
	one.Q6KCols = 1
	require.Equal(t, "mul_mat_vec8", lower(mm(4096, 4096, 2), &one).Spec.Kernel, "one column only")
	// q6kSwarCols: products of 3 to 8 columns from 2^24 weights on the integer mat-vec's
	// Q6K form, after the columns' quantization; Limits.Q6KSwarCols and Q6KSwarMinCols
	// move the bounds
	kernels := func(n *tensor.Tensor, l *Limits) []string { return loweredKernels(t, n, l) }
	swar := *l
	swar.Q6KSwarCols = 0
	for _, n := range []int64{3, 4, 8} {
		d := kernels(mm(4096, 4096, n), &swar)
		require.Equal(t, []string{"mul_mat_vec_q4_act", "mul_mat_vec_q4"}, d, "%d columns on SWAR", n)
	}
	cols, err := Lower(mm(4096, 4096, 4), &swar)
	require.NoError(t, err)
	require.Equal(t, "1", cols[1].Spec.Defines["COLS"])
	require.Equal(t, "1", cols[1].Spec.Defines["Q6K"])
	require.Equal(t, "2", cols[1].Spec.Defines["ROWS"])
	require.Equal(t, "16", cols[1].Spec.Defines["LW"], "two rows' lanes")
	require.Equal(t, []string{"mul_mat_vec_q6k_cols"}, kernels(mm(4096, 4096, 2), &swar), "two columns")
	require.Equal(t, []string{"mul_mat_vec_q6k"}, kernels(mm(4096, 4096, 1), &swar), "one column")
	require.Equal(t, []string{"mul_mat_vec_q6k_cols"}, kernels(mm(1024, 4096, 4), &swar), "below 2^24 weights")
	swar.Q6KSwarCols, swar.Q6KSwarMinCols = 4, 2
	require.Equal(t, []string{"mul_mat_vec_q4_act", "mul_mat_vec_q4"}, kernels(mm(4096, 4096, 2), &swar), "from Q6KSwarMinCols")
	require.Equal(t, []string{"mul_mat_vec_q6k_cols"}, kernels(mm(4096, 4096, 5), &swar), "beyond Q6KSwarCols")
	off := *l
	off.Q6KOff = true
	require.Equal(t, "mul_mat_vec8", lower(mm(4096, 4096, 1), &off).Spec.Kernel, "turned off")
	odd := mm(64, 256, 1)
	odd.Src[0].Loc.Addr = 1
	require.NotEqual(t, "mul_mat_vec_q6k", lower(odd, l).Spec.Kernel, "blocks on odd bytes")
	strided := node(tensor.OpMulMat, f32(64, 1), nil, contiguous(tensor.Q6_K, 256, 64), padded(256, 1, 1))
	require.NotEqual(t, "mul_mat_vec_q6k", lower(strided, l).Spec.Kernel, "a column not in 16-byte vectors")
}

// TestMatVecColsShape checks the vectorised mat-vec's shape for several columns
// (matVecColsShape) from 4096 rows: 4 rows by 32 invocations from 5 columns, by 128 at
// two columns and for quantized weights at three and four, by 64 for unquantized weights
// at three and four; matVecShape's for fewer rows or with a tuning override.
func TestMatVecColsShape(t *testing.T) {
	// the 4-bit formats' and Q6_K's several columns take their own kernels unless they take one only
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 16384, SwarCols: 1, Q6KCols: 1}
	mm := func(ty tensor.Type, m, k, n int64) *tensor.Tensor {
		return node(tensor.OpMulMat, f32(m, n), nil, contiguous(ty, k, m), f32(k, n))
	}
	for _, c := range []struct {
		ty       tensor.Type
		m, n     int64
		rows, wg int
	}{
		{tensor.F16, 14336, 2, 4, 128}, {tensor.F16, 14336, 3, 4, 64}, {tensor.F16, 14336, 4, 4, 64}, {tensor.F16, 14336, 8, 4, 32},
		{tensor.Q4_K, 14336, 2, 4, 128}, {tensor.Q4_K, 14336, 4, 4, 128}, {tensor.Q4_K, 14336, 5, 4, 32},
		{tensor.Q8_0, 8192, 8, 4, 32}, {tensor.Q6_K, 14336, 3, 4, 128}, {tensor.BF16, 4096, 4, 4, 64},
		{tensor.F16, 4096, 2, 4, 128}, {tensor.Q4_K, 4096, 4, 4, 128}, {tensor.Q4_K, 4096, 8, 4, 32},
		{tensor.F16, 2048, 8, 1, 64}, {tensor.Q8_0, 2048, 4, 1, 64},
	} {
		ds, err := Lower(mm(c.ty, c.m, 4096, c.n), l)
		require.NoError(t, err)
		require.Len(t, ds, 1)
		d := ds[0]
		require.Equal(t, "mul_mat_vec8", d.Spec.Kernel)
		require.Equal(t, fmt.Sprint(c.rows), d.Spec.Defines["ROWS"], "%s %d rows, %d columns", c.ty, c.m, c.n)
		require.Equal(t, c.wg, d.Spec.Workgroup, "%s %d rows, %d columns", c.ty, c.m, c.n)
		require.Equal(t, uint32((c.m+int64(c.rows)-1)/int64(c.rows)), d.Grid[0]*max(d.Grid[1], 1)*max(d.Grid[2], 1))
	}
	tuned := *l
	tuned.MatVecWG = 128
	ds, err := Lower(mm(tensor.F16, 14336, 4096, 4), &tuned)
	require.NoError(t, err)
	require.Equal(t, 128, ds[0].Spec.Workgroup, "an override keeps the former shape")
}

// TestQ6KPairs checks which Q6_K mat-vecs take blocks a pair at a time (PAIRS): rows of an
// even count of blocks starting on a word, from q6kPairsMin weights (Limits can lower the
// threshold or turn pairs off), the gate form when both matrices qualify.
func TestQ6KPairs(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 16384}
	mm := func(m, k int64) *tensor.Tensor {
		return node(tensor.OpMulMat, f32(m, 1), nil, contiguous(tensor.Q6_K, k, m), f32(k, 1))
	}
	pairs := func(n *tensor.Tensor, l *Limits) string {
		ds, err := Lower(n, l)
		require.NoError(t, err)
		require.Len(t, ds, 1)
		require.Contains(t, ds[0].Spec.Kernel, "mul_mat_vec_q6k")
		return ds[0].Spec.Defines["PAIRS"]
	}
	require.Equal(t, "1", pairs(mm(14336, 4096), l))
	require.Equal(t, "1", pairs(mm(4096, 4096), l), "2^24 weights")
	require.Equal(t, "0", pairs(mm(2048, 2048), l), "below the threshold")
	require.Equal(t, "0", pairs(mm(4096, 256*63), l), "an odd count of blocks")
	moved := mm(14336, 4096)
	moved.Src[0].Loc.Addr = 2
	require.Equal(t, "0", pairs(moved, l), "rows two bytes past a word")
	low := *l
	low.Q6KPairsMin = 1
	require.Equal(t, "1", pairs(mm(3, 512), &low), "the threshold lowered")
	require.Equal(t, "0", pairs(mm(3, 256), &low), "one block a row")
	two := node(tensor.OpMulMat, f32(14336, 2), nil, contiguous(tensor.Q6_K, 4096, 14336), f32(4096, 2))
	require.Equal(t, "1", pairs(two, l), "two columns")
	off := *l
	off.Q6KPairsOff = true
	require.Equal(t, "0", pairs(mm(14336, 4096), &off), "turned off")
}

// TestSwarGateCols: the integer mat-vec's gate form changes the coded formats' words for
// every column, so it takes them by two columns at most (IQ4's by one).
func TestSwarGateCols(t *testing.T) {
	for ty, want := range map[tensor.Type]uint32{tensor.Q4_0: swarGateMaxCols, tensor.Q4_K: swarGateMaxCols,
		tensor.Q5_K: 2, tensor.Q5_0: 2, tensor.Q5_1: 2, tensor.MXFP4: 2, tensor.IQ4_NL: 1, tensor.IQ4_XS: 1} {
		require.Equal(t, want, swarGateCols(ty), "%s", ty)
	}
}

// loweredKernels returns the kernels of the dispatches that n lowers to under l.
func loweredKernels(t *testing.T, n *tensor.Tensor, l *Limits) []string {
	ds, err := Lower(n, l)
	require.NoError(t, err)
	var ks []string
	for _, d := range ds {
		ks = append(ks, d.Spec.Kernel)
	}
	return ks
}
