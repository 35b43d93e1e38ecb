package ops

import (
	"fmt"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// TestMulMatBigTiles lowers products under three workgroup memory limits, checks the
// kernels chosen (the prompt kernel, split-K, or the 64 x 64 kernel where it is too small
// or the format's tables do not fit beside its slices) and compiles them.
func TestMulMatBigTiles(t *testing.T) {
	cache := newCompiler(t)
	mm := func(a, b *tensor.Tensor) *tensor.Tensor {
		return node(tensor.OpMulMat, f32(a.Ne[1], b.Ne[1]), nil, a, b)
	}
	nodes := map[string]*tensor.Tensor{
		"f16":         mm(contiguous(tensor.F16, 16, 2048), f32(16, 2048)),
		"f32 by elem": mm(f32(33, 2048), f32(33, 2048)),
		"q4_K":        mm(contiguous(tensor.Q4_K, 256, 2048), padded(256, 2048, 1)),
		"iq2_s":       mm(contiguous(tensor.IQ2_S, 256, 2048), f32(256, 2048)),
		"split":       mm(contiguous(tensor.F16, 2048, 2048), f32(2048, 512)),
		"few tiles":   mm(contiguous(tensor.F16, 256, 512), f32(256, 512)),
		"narrow":      mm(contiguous(tensor.F16, 2048, 4096), f32(2048, 64)),
		"40 columns":  mm(contiguous(tensor.F16, 2048, 4096), f32(2048, 40)),
	}
	for _, storage := range []int{16384, 32768, 49152} {
		// the direct quantized loads (the chunks of dequantized weights: TestMulMatBigDequant)
		l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: storage, DequantPromptOff: true}
		for name, n := range nodes {
			require.True(t, Supports(n, l))
			ds, err := Lower(n, l)
			require.NoError(t, err)
			var kernels []string
			for _, d := range ds {
				kernels = append(kernels, d.Spec.Kernel)
				require.Len(t, d.Tensors, len(d.Spec.Operands))
				_, err := cache.Pipeline(d.Spec)
				require.NoError(t, err, "%d %s: %s", storage, name, d.Spec.Key())
			}
			require.Same(t, n, ds[len(ds)-1].Tensors[len(ds[len(ds)-1].Tensors)-1], "the last dispatch stores the result")
			if kernels[0] == "mul_mat_big" {
				raw := name == "f16" || name == "split" || name == "narrow" || name == "40 columns"
				require.Equal(t, flag(raw), ds[0].Spec.Defines["RAW_A"], "%s: F16 words staged raw", name)
			}
			switch {
			case name == "split":
				require.Equal(t, []string{"mul_mat_big", "mul_mat_big_reduce"}, kernels)
				require.Equal(t, "0", ds[0].Spec.Defines["NARROW"])
				require.Equal(t, "4", ds[0].Spec.Defines["SPLITS"])
				require.Equal(t, "512", ds[0].Spec.Defines["KPER"])
				require.Equal(t, [3]uint32{16, 4, 4}, ds[0].Grid)
			case name == "narrow", name == "40 columns":
				// 64 columns: the narrow form, 32 x 1 tiles, K split in 8
				require.Equal(t, []string{"mul_mat_big", "mul_mat_big_reduce"}, kernels, "%d %s", storage, name)
				require.Equal(t, "1", ds[0].Spec.Defines["NARROW"])
				require.Equal(t, "64", ds[0].Spec.Defines["TN"])
				require.Equal(t, [3]uint32{32, 1, 8}, ds[0].Grid)
			case name == "few tiles":
				require.Equal(t, []string{"mul_mat"}, kernels, "%d %s: K too short to split", storage, name)
			case name == "iq2_s" && storage < 16384+8192:
				require.Equal(t, []string{"mul_mat"}, kernels, "16 KiB of slices and 8 KiB of grid do not fit")
			default:
				require.Equal(t, []string{"mul_mat_big"}, kernels, "%d %s", storage, name)
				require.Equal(t, [3]uint32{16, 16, 1}, ds[0].Grid)
			}
		}
	}
	require.Equal(t, uint32(1), bigSplits(mulMatParams{M: 512, N: 512, K: 256, Batches: 1}, 16, 0, &Limits{MaxBinding: 1 << 30}), "K too short to split")
	require.Equal(t, uint32(2), bigSplits(mulMatParams{M: 4096, N: 512, K: 8192, Batches: 1}, 128, 0, &Limits{MaxBinding: 1 << 30}))
	require.Equal(t, uint32(8), bigSplits(mulMatParams{M: 512, N: 512, K: 2048, Batches: 1}, 16, 0, &Limits{MaxBinding: 1 << 30}))
}

// TestMulMatBigSplitPermuteCont: with split-K, the mul_mat+permute+cont fusion stores
// through the reduction, at the permuted strides.
func TestMulMatBigSplitPermuteCont(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 49152}
	n := kqvMerged(tensor.F16, 128, 256, 2048)
	kqv, perm, cont := n[0], n[1], n[2]
	f := fusion(t, "mul_mat+permute+cont")
	require.True(t, f.Applies(n, l))
	ds, err := f.Lower(n, l)
	require.NoError(t, err)
	require.Len(t, ds, 2)
	require.Equal(t, "mul_mat_big_reduce", ds[1].Spec.Kernel)
	require.Same(t, cont, ds[1].Tensors[1])
	require.True(t, IsScratch(ds[0].Tensors[2]))
	want, ok := permutedStrides(kqv, perm)
	require.True(t, ok)
	require.Equal(t, want, ds[1].Params.(mulMatParams).D)
}

// TestMulMatVecSplit: products of 9 to matVecSplitMaxCols columns take mat-vecs of up to
// eight columns over views of src1's and dst's columns; more take the prompt kernel, and
// the fusions ending in a product keep one lowering that stores the node itself.
func TestMulMatVecSplit(t *testing.T) {
	cache := newCompiler(t)
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 16384}
	a, b := contiguous(tensor.F16, 2048, 4096), f32(2048, 20)
	b.Loc.Addr = 4096
	n := node(tensor.OpMulMat, f32(4096, 20), nil, a, b)
	n.Loc.Addr = 1 << 20
	ds, err := Lower(n, l)
	require.NoError(t, err)
	require.Len(t, ds, 3)
	for i, c := range []int64{8, 8, 4} {
		d := ds[i]
		require.Equal(t, "mul_mat_vec8", d.Spec.Kernel)
		require.Equal(t, fmt.Sprint(c), d.Spec.Defines["NCOLS"])
		require.Same(t, a, d.Tensors[0], "the weights themselves")
		src1, dst := d.Tensors[1], d.Tensors[2]
		require.Equal(t, c, src1.Ne[1])
		require.Equal(t, b.Loc.Addr+uint64(8*i)*b.Nb[1], src1.Loc.Addr, "src1's columns from %d", 8*i)
		require.Equal(t, b.Nb, src1.Nb)
		require.Equal(t, c, dst.Ne[1])
		require.Equal(t, n.Loc.Addr+uint64(8*i)*n.Nb[1], dst.Loc.Addr, "dst's columns from %d", 8*i)
		_, err := cache.Pipeline(d.Spec)
		require.NoError(t, err)
	}
	wide := node(tensor.OpMulMat, f32(4096, matVecSplitMaxCols+1), nil, a, f32(2048, matVecSplitMaxCols+1))
	ds, err = Lower(wide, l)
	require.NoError(t, err)
	require.Equal(t, "mul_mat_big", ds[0].Spec.Kernel)
	// mul_mat+permute+cont by 20 columns: the product stores the CONT's result directly
	fused := kqvMerged(tensor.F16, 128, 20, 2048)
	f := fusion(t, "mul_mat+permute+cont")
	require.True(t, f.Applies(fused, l))
	ds, err = f.Lower(fused, l)
	require.NoError(t, err)
	last := ds[len(ds)-1].Tensors
	require.Same(t, fused[2], last[len(last)-1])
}

// kqvMerged builds llama's kqv -> kqv_merged -> kqv_out over two heads: kqv [m, n, 2]
// (weights of type ta, K k) -> permute(0, 2, 1, 3) -> cont [m, 2, n].
func kqvMerged(ta tensor.Type, m, n, k int64) []*tensor.Tensor {
	kqv := node(tensor.OpMulMat, f32(m, n, 2), nil, contiguous(ta, k, m, 2), f32(k, n, 2))
	perm := &tensor.Tensor{Type: tensor.F32, Ne: [4]int64{m, 2, n, 1}, Nb: [4]uint64{4, 4 * uint64(m*n), 4 * uint64(m), 4 * uint64(m*n) * 2}}
	node(tensor.OpPermute, perm, []int32{0, 2, 1, 3}, kqv)
	return []*tensor.Tensor{kqv, perm, node(tensor.OpCont, f32(m, 2, n), nil, perm)}
}

// TestMulMatBigWaves: with the device's multiprocessors known (132, an H100's), the prompt
// kernel splits K and chunks dequantized weights by bigWaves (two workgroups a
// multiprocessor, one alone slower), and without them (or with BigGroups set) by the
// workgroup count rule.
func TestMulMatBigWaves(t *testing.T) {
	require.InDelta(t, 2.0, bigWaves(448, 1, 132), 1e-9, "four a multiprocessor")
	require.InDelta(t, (3+bigAlone)/2, bigWaves(448, 2, 132), 1e-9, "seven of half K")
	require.InDelta(t, bigAlone, bigWaves(128, 1, 132), 1e-9, "one alone")
	require.InDelta(t, 0.5, bigWaves(128, 2, 132), 1e-9)

	mm := func(a, b *tensor.Tensor) *tensor.Tensor {
		return node(tensor.OpMulMat, f32(a.Ne[1], b.Ne[1]), nil, a, b)
	}
	// grids returns the kernels of the lowered product and the grids of its prompt kernels.
	grids := func(n *tensor.Tensor, l *Limits) (kernels []string, gs [][3]uint32) {
		ds, err := Lower(n, l)
		require.NoError(t, err)
		for _, d := range ds {
			kernels = append(kernels, d.Spec.Kernel)
			if d.Spec.Kernel == "mul_mat_big" {
				gs = append(gs, d.Grid)
			}
		}
		return kernels, gs
	}
	waves := &Limits{MaxBinding: 1 << 31, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 49152, ComputeUnits: 132}
	count := *waves
	count.ComputeUnits = 0
	override := *waves
	override.BigGroups = matBigGroups
	big, reduce, deq := "mul_mat_big", "mul_mat_big_reduce", "mul_mat_dequant"
	repeat := func(n int, s ...string) (out []string) {
		for range n {
			out = append(out, s...)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		n       *tensor.Tensor
		l       *Limits
		kernels []string
		grid    [3]uint32 // of every prompt kernel
		chunks  int
	}{
		// 448 tiles: K in two parts (the partial sums' scratch memory allows no more)
		{"f16 14336 waves", mm(contiguous(tensor.F16, 4096, 14336), f32(4096, 512)), waves, []string{big, reduce}, [3]uint32{112, 4, 2}, 1},
		{"f16 14336 count", mm(contiguous(tensor.F16, 4096, 14336), f32(4096, 512)), &count, []string{big}, [3]uint32{112, 4, 1}, 1},
		{"f16 14336 override", mm(contiguous(tensor.F16, 4096, 14336), f32(4096, 512)), &override, []string{big}, [3]uint32{112, 4, 1}, 1},
		// 128 tiles: two parts, as by the count (one alone a multiprocessor is slower)
		{"f16 4096 waves", mm(contiguous(tensor.F16, 4096, 4096), f32(4096, 512)), waves, []string{big, reduce}, [3]uint32{32, 4, 2}, 1},
		{"f16 4096 count", mm(contiguous(tensor.F16, 4096, 4096), f32(4096, 512)), &count, []string{big, reduce}, [3]uint32{32, 4, 2}, 1},
		// the narrow form (64 columns) keeps the count rule: K in four parts, 448 workgroups
		{"f16 narrow waves", mm(contiguous(tensor.F16, 4096, 14336), f32(4096, 64)), waves, []string{big, reduce}, [3]uint32{112, 1, 4}, 1},
		// 256 tiles: two waves of pairs, no split either way
		{"f16 8192 waves", mm(contiguous(tensor.F16, 2048, 8192), f32(2048, 512)), waves, []string{big}, [3]uint32{64, 4, 1}, 1},
		// dequantized chunks: 7 of 2048 rows, K in four parts (256 workgroups each), where
		// the count takes 4 of 3584 rows (448 workgroups each)
		{"q4_K 14336 waves", mm(contiguous(tensor.Q4_K, 4096, 14336), f32(4096, 512)), waves, repeat(7, deq, big, reduce), [3]uint32{16, 4, 4}, 7},
		{"q4_K 14336 count", mm(contiguous(tensor.Q4_K, 4096, 14336), f32(4096, 512)), &count, repeat(4, deq, big, reduce), [3]uint32{28, 4, 4}, 4},
	} {
		kernels, gs := grids(tc.n, tc.l)
		require.Equal(t, tc.kernels, kernels, tc.name)
		require.Len(t, gs, tc.chunks, tc.name)
		for _, g := range gs {
			require.Equal(t, tc.grid, g, tc.name)
		}
	}
}
