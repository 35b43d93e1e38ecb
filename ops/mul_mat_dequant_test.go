package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// TestDequantChunkRows: whole tiles within the limit, at least one tile, even chunks.
func TestDequantChunkRows(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30}
	rows, ok := dequantChunkRows(14336, 2*4096, l)
	require.True(t, ok)
	require.Equal(t, uint32(3584), rows, "32 MiB: 4096 rows at most, four chunks of 3584")
	rows, _ = dequantChunkRows(4096, 2*14336, l)
	require.Equal(t, uint32(1024), rows, "1170 rows at most: 1152, four chunks of 1024")
	rows, _ = dequantChunkRows(300, 2*4096, l)
	require.Equal(t, uint32(300), rows, "one chunk")
	rows, _ = dequantChunkRows(1000, 2*4096, &Limits{MaxBinding: 1 << 30, DequantChunkBytes: 1})
	require.Equal(t, uint32(128), rows, "one tile at least")
	rows, _ = dequantChunkRows(1000, 2*4096, &Limits{MaxBinding: 1 << 20, DequantChunkBytes: 1 << 30})
	require.Equal(t, uint32(128), rows, "within one binding")
	_, ok = dequantChunkRows(1000, 2*4096, &Limits{MaxBinding: 1 << 16})
	require.False(t, ok, "a tile of rows exceeds the binding")
}

// TestMulMatBigDequant lowers prompt products of quantized weights into chunks (F16 rows
// dequantized to scratch memory, then the prompt kernel, split-K where a chunk has few
// tiles), checks the chunks' rows, that the split-K partial sums lie after the chunk in
// scratch memory, that the switch keeps the direct loads, and compiles the kernels.
func TestMulMatBigDequant(t *testing.T) {
	cache := newCompiler(t)
	mm := func(a, b *tensor.Tensor) *tensor.Tensor {
		return node(tensor.OpMulMat, f32(a.Ne[1], b.Ne[1], b.Ne[2], b.Ne[3]), nil, a, b)
	}
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 49152}
	for _, tc := range []struct {
		name   string
		n      *tensor.Tensor
		chunk  uint64
		rows   []uint32
		splits bool
	}{
		{"q4_K one chunk", mm(contiguous(tensor.Q4_K, 256, 2048), f32(256, 2048)), 0, []uint32{2048}, false},
		{"q8_0 chunks", mm(contiguous(tensor.Q8_0, 256, 2048), padded(256, 2048, 1)), 256 << 10, []uint32{512, 512, 512, 512}, false},
		{"iq4_xs split", mm(contiguous(tensor.IQ4_XS, 2048, 384), f32(2048, 256)), 0, []uint32{384}, true},
		{"q4_0 chunks split", mm(contiguous(tensor.Q4_0, 2048, 300), f32(2048, 256)), 512 << 10, []uint32{128, 128, 44}, true},
		{"q6_K batched", mm(contiguous(tensor.Q6_K, 1024, 256, 2), f32(1024, 128, 4)), 512 << 10, []uint32{128, 128}, true},
	} {
		lc := *l
		lc.DequantChunkBytes = tc.chunk
		require.True(t, Supports(tc.n, &lc), tc.name)
		ds, err := Lower(tc.n, &lc)
		require.NoError(t, err, tc.name)
		var rows []uint32
		for i := 0; i < len(ds); {
			d := ds[i]
			require.Equal(t, "mul_mat_dequant", d.Spec.Kernel, tc.name)
			chunk := d.Tensors[1]
			require.True(t, IsScratch(chunk))
			require.Equal(t, tensor.F16, chunk.Type)
			p := d.Params.(mulMatParams)
			require.Equal(t, uint32(chunk.Ne[1]), p.M)
			require.Equal(t, uint32(len(rows))*rows0(rows), p.Row0, "%s: chunks follow each other", tc.name)
			rows = append(rows, p.M)
			big := ds[i+1]
			require.Equal(t, "mul_mat_big", big.Spec.Kernel)
			require.Same(t, chunk, big.Tensors[0], "the prompt kernel reads the chunk")
			require.Equal(t, "1", big.Spec.Defines["RAW_A"], "%s: the chunk's F16 words staged raw", tc.name)
			require.Equal(t, p.Row0, big.Params.(mulMatParams).Row0)
			require.Equal(t, strides(chunk), big.Params.(mulMatParams).A)
			i += 2
			if _, split := big.Spec.Defines["SPLITK"]; split {
				require.True(t, tc.splits, tc.name)
				part := big.Tensors[2]
				require.True(t, IsScratch(part))
				require.GreaterOrEqual(t, part.Loc.Addr, chunk.Loc.Addr+chunk.Extent(), "%s: partial sums after the chunk", tc.name)
				require.Zero(t, part.Loc.Addr%scratchAlign)
				require.Equal(t, "mul_mat_big_reduce", ds[i].Spec.Kernel)
				require.Same(t, tc.n, ds[i].Tensors[1])
				i++
			} else {
				require.False(t, tc.splits, tc.name)
				require.Same(t, tc.n, big.Tensors[2])
			}
		}
		require.Equal(t, tc.rows, rows, tc.name)
		for _, d := range ds {
			require.Len(t, d.Tensors, len(d.Spec.Operands))
			_, err := cache.Pipeline(d.Spec)
			require.NoError(t, err, "%s: %s", tc.name, d.Spec.Key())
		}
		lc.DequantPromptOff = true
		ds, err = Lower(tc.n, &lc)
		require.NoError(t, err)
		require.Equal(t, "mul_mat_big", ds[0].Spec.Kernel, "%s: the switch keeps the direct loads", tc.name)
		require.Equal(t, mustFormat(tc.n.Src[0]), ds[0].Spec.Operands[0].Type)
	}
	// A chunk that takes half the binding leaves the partial sums the other half: four
	// splits where eight would fit a binding of their own.
	small := &Limits{MaxBinding: 4 << 20, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 49152, DequantChunkBytes: 1 << 30}
	ds, err := Lower(mm(contiguous(tensor.Q4_0, 2048, 512), f32(2048, 256)), small)
	require.NoError(t, err)
	require.Len(t, ds, 3)
	require.Equal(t, "4", ds[1].Spec.Defines["SPLITS"])
	part := ds[1].Tensors[2]
	require.Equal(t, uint64(2<<20), part.Loc.Addr)
	require.LessOrEqual(t, part.Loc.Addr+part.Extent(), small.MaxBinding)
	require.Equal(t, uint32(8), bigSplits(ds[1].Params.(mulMatParams), 8, 0, small), "without the chunk")
	// Every quantized format the prompt kernel takes is dequantized into chunks.
	for _, q := range quantTypes {
		ds, err := Lower(mm(contiguous(q, 256, 2048), f32(256, 2048)), l)
		require.NoError(t, err)
		require.Equal(t, "mul_mat_dequant", ds[0].Spec.Kernel, "%s", q)
		_, err = cache.Pipeline(ds[0].Spec)
		require.NoError(t, err, "%s", q)
	}
	// Mat-vec and the 64 x 64 kernel are untouched.
	for _, n := range []*tensor.Tensor{mm(contiguous(tensor.Q4_K, 256, 2048), f32(256, 8)), mm(contiguous(tensor.Q4_K, 256, 256), f32(256, 64))} {
		ds, err := Lower(n, l)
		require.NoError(t, err)
		require.Len(t, ds, 1)
		require.NotEqual(t, "mul_mat_dequant", ds[0].Spec.Kernel)
	}
}

// rows0 is the rows of the chunks before the last of rows (all of equal size).
func rows0(rows []uint32) uint32 {
	if len(rows) == 0 {
		return 0
	}
	return rows[0]
}

// TestMulMatDequantPermuteCont: with chunks (and split-K), the mul_mat+permute+cont fusion
// stores every chunk's rows through the permuted strides into the CONT's result.
func TestMulMatDequantPermuteCont(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 49152, DequantChunkBytes: 1 << 19}
	n := kqvMerged(tensor.Q8_0, 256, 256, 1024) // Q8_0 weights, K 1024
	kqv, perm, cont := n[0], n[1], n[2]
	f := fusion(t, "mul_mat+permute+cont")
	require.True(t, f.Applies(n, l))
	ds, err := f.Lower(n, l)
	require.NoError(t, err)
	want, ok := permutedStrides(kqv, perm)
	require.True(t, ok)
	stores := 0
	for _, d := range ds {
		require.Equal(t, want, d.Params.(mulMatParams).D)
		last := d.Tensors[len(d.Tensors)-1]
		require.NotSame(t, kqv, last, "nothing stores the unfused result")
		if last == cont {
			stores++
		}
	}
	require.Equal(t, 2, stores, "two chunks of 128 rows store their rows")
}
