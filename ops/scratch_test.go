package ops

import (
	"fmt"

	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// TestPromptScratchWithinBudget lowers prompt products of quantized weights of 1B and 8B
// shapes (n = 512) and checks that every scratch operand (the dequantized chunk, the
// split-K partial sums) ends within ScratchBudget, that the chunks keep their default size
// (the same dispatches), and that only the products whose partial sums would pass the
// budget split K into fewer parts.
func TestPromptScratchWithinBudget(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 32768}
	for _, tc := range []struct {
		ty      tensor.Type
		m, k    int64
		chunks  int
		rows    uint32 // of the first chunk
		splits  string // "" without split-K
		without uint32 // the splits of the first chunk without the budget
	}{
		{tensor.Q4_K, 8192, 2048, 1, 8192, "", 1},   // 1B ffn_up: a 32 MiB chunk, enough tiles
		{tensor.Q4_K, 2048, 8192, 1, 2048, "4", 4},  // 1B ffn_down: 32 + 16 MiB
		{tensor.Q4_K, 4096, 4096, 1, 4096, "2", 2},  // 8B attn_q: 32 + 16 MiB
		{tensor.Q4_K, 14336, 4096, 4, 3584, "4", 4}, // 8B ffn_up: 28 + 28 MiB, the budget
		{tensor.Q6_K, 4096, 14336, 4, 1024, "8", 8}, // 8B ffn_down: 28 + 16 MiB
	} {
		name := fmt.Sprintf("%s m=%d k=%d", tc.ty, tc.m, tc.k)
		n := node(tensor.OpMulMat, f32(tc.m, 512), nil, contiguous(tc.ty, tc.k, tc.m), f32(tc.k, 512))
		ds, err := Lower(n, l)
		require.NoError(t, err, name)
		per := 2
		if tc.splits != "" {
			per = 3
		}
		require.Len(t, ds, tc.chunks*per, "%s: dispatches", name)
		require.Equal(t, tc.rows, ds[0].Params.(mulMatParams).M, "%s: chunk rows", name)
		require.Equal(t, tc.splits, ds[1].Spec.Defines["SPLITS"], name)
		var end uint64
		for _, d := range ds {
			for _, s := range d.Tensors {
				if IsScratch(s) {
					end = max(end, s.Loc.Addr+s.Extent())
				}
			}
		}
		require.LessOrEqual(t, end, uint64(ScratchBudget), "%s: scratch operands end at %d", name, end)
		pc := ds[1].Params.(mulMatParams)
		tiles := uint64((pc.M+matBigTile-1)/matBigTile) * uint64((pc.N+matBigTile-1)/matBigTile)
		require.Equal(t, tc.without, bigSplits(pc, tiles, 0, &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535}), "%s: without the chunk", name)
	}
}

// TestBigSplitsBudget: the partial sums end within ScratchBudget after partAt, and a
// partAt past the budget leaves K whole.
func TestBigSplitsBudget(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535}
	p := mulMatParams{M: 2048, N: 512, K: 8192, Batches: 1}
	require.Equal(t, uint32(4), bigSplits(p, 64, 0, l), "16 MiB of partial sums")
	require.Equal(t, uint32(4), bigSplits(p, 64, 32<<20, l), "after a 32 MiB chunk: 16 MiB")
	require.Equal(t, uint32(4), bigSplits(p, 64, ScratchBudget-16<<20, l), "ending at the budget")
	require.Equal(t, uint32(2), bigSplits(p, 64, ScratchBudget-16<<20+256, l), "past it: 8 MiB")
	require.Equal(t, uint32(1), bigSplits(p, 64, ScratchBudget, l), "no room")
	require.Equal(t, uint32(1), bigSplits(p, 64, 2*ScratchBudget, l), "a chunk beyond the budget")
	require.Equal(t, uint32(2), bigSplits(p, 64, 0, &Limits{MaxBinding: 12 << 20, MaxGroupsPerDim: 65535}), "a binding below the budget")
}
