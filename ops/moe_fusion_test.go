package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The MoE rows refuse what they cannot compute as the unfused nodes would, and never fail
// on malformed nodes.
func TestMoEFusionGuards(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 32768}

	sum := moeSumRow(4, false)
	n := moeSumExample(4, false)
	require.True(t, sum.Applies(n, l))
	n = moeSumExample(4, false)
	n[2].Loc = tensor.Loc{Buffer: 1, Addr: 8} // the result over the experts
	require.False(t, sum.Applies(n, l), "result over the experts")
	n = moeSumExample(4, false)
	n[1].Src[1] = f32(6, 3) // not a slot view
	require.False(t, sum.Applies(n, l), "an added tensor that is no slot view")
	n = moeSumExample(4, false)
	n[1].Src[1].Loc.Addr += 4 // a view at another offset
	require.False(t, sum.Applies(n, l), "a view off its slot")
	n = moeSumExample(4, false)
	n[0].Src[0] = nil
	require.False(t, sum.Applies(n, l), "a missing source")

	weighted := moeWeightedSumRow(4)
	require.True(t, weighted.Applies(moeWeightedSumExample(4), l))
	n = moeWeightedSumExample(4)
	n[0].Src[1] = f32(2, 4, 3) // weights not broadcast over the rows
	require.False(t, weighted.Applies(n, l), "weights of another shape")
	n = moeWeightedSumExample(4)
	n[0].Src[0].Loc = tensor.Loc{Buffer: 1, Addr: 4} // the products over their source, shifted
	require.False(t, weighted.Applies(n, l), "products over the experts, not in place")
	n = moeWeightedSumExample(4)
	n[0].Src[0].Loc = n[0].Loc // in place
	require.True(t, weighted.Applies(n, l), "products in place over the experts")

	for _, norm := range []bool{true, false} {
		row := moeRouterRow(norm)
		require.True(t, row.Applies(moeRouterExample(norm), l))
		n := moeRouterExample(norm)
		n[2].Params[0] = 0 // ascending
		require.False(t, row.Applies(n, l), "an ascending sort")
		n = moeRouterExample(norm)
		n[0].Src[1] = f32(8, 2) // a mask
		require.False(t, row.Applies(n, l), "a masked softmax")
		n = moeRouterExample(norm)
		n[2].Loc = n[0].Src[0].Loc // the sorted experts over the logits
		require.False(t, row.Applies(n, l), "a result over the logits")
		n = moeRouterExample(norm)
		n[0].Src[0] = nil
		require.False(t, row.Applies(n, l), "a missing source")
		n = moeRouterExample(norm)
		n[4].Src[1] = contiguous(tensor.I32, 3, 2) // experts not from the sort
		require.False(t, row.Applies(n, l), "gathered by other indices")
	}
	row := moeRouterRow(true)
	n = moeRouterExample(true)
	n[8].Src[1] = f32(1, 2) // divided by something else than the clamp
	require.False(t, row.Applies(n, l), "divided by another tensor")

	// One token: the stores after the kernel's reads and the softmax's stores may lie over
	// the logits and the softmax (a decoding token's normalised weights do), the softmax's
	// stores, made as it reads, over the logits only in place.
	place := func(n []*tensor.Tensor, i int, at tensor.Loc) []*tensor.Tensor {
		n[i].Loc = at
		if i+1 < len(n) && n[i+1].Src[0] == n[i] && n[i+1].Op.IsView() {
			n[i+1].Loc = at // the softmax's reshape, the first experts' view, the weights' reshape
		}
		return n
	}
	shifted := func(t *tensor.Tensor) tensor.Loc { return tensor.Loc{Buffer: t.Loc.Buffer, Addr: t.Loc.Addr + 4} }
	for _, i := range []int{2, 4, 8} { // sorted experts, weights, normalised weights
		for _, tokens := range []int64{1, 2} {
			n = moeRouterTokens(true, tokens)
			require.Equal(t, tokens == 1, row.Applies(place(n, i, shifted(n[0].Src[0])), l), "result %d over the logits of %d tokens", i, tokens)
			n = moeRouterTokens(true, tokens)
			n = place(n, 0, n[0].Src[0].Loc) // the softmax in place
			require.True(t, row.Applies(n, l), "the softmax in place over the logits")
			require.Equal(t, tokens == 1, row.Applies(place(n, i, shifted(n[0])), l), "result %d over the softmax of %d tokens", i, tokens)
		}
	}
	n = moeRouterTokens(true, 1)
	n = place(n, 0, shifted(n[0].Src[0]))
	require.False(t, row.Applies(n, l), "a single token's softmax over its logits, not in place")
	n = moeRouterTokens(true, 1)
	n = place(n, 8, shifted(n[2])) // the normalised weights over the sorted experts
	require.False(t, row.Applies(n, l), "a single token's weights over its sorted experts")
}

// The routed prompt kernel is chosen only where its workgroup memory (the slice buffers
// and its tile word) fits the device's.
func TestMulMatIDBigStorage(t *testing.T) {
	kernels := func(storage int) []string {
		l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: storage}
		ds, err := lowerMulMatID(mulMatIDNode(contiguous(tensor.F16, 16, 3, 2), f32(16, 1, 300), 1), l)
		require.NoError(t, err)
		var names []string
		for _, d := range ds {
			names = append(names, d.Spec.Kernel)
		}
		return names
	}
	require.NotContains(t, kernels(matBigStorage), "mul_mat_id_big", "the tile word does not fit")
	require.Equal(t, []string{"mul_mat_id_map", "mul_mat_id_big"}, kernels(matBigStorage+idTileWordBytes))
}
