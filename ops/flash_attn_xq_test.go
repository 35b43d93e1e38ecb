package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// TestFlashAttnMulMat checks the fusion row flash_attn+view+mul_mat: where the attention
// splits and its output product takes the integer mat-vec on XQ, the reduction stores
// the quantized column the product reads, after the partial results in scratch memory,
// in place of the product's own quantizing dispatch; elsewhere the row stays out.
func TestFlashAttnMulMat(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, MaxGroupSize: 1024, MaxWorkgroupStorage: 49152}
	row := flashAttnMulMatRow
	n := flashAttnMulMatNodes(tensor.Q4_K, 128, 32, 8, 4096, 256) // an 8B llama's
	require.True(t, row.Applies(n, l))
	ds, err := row.Lower(n, l)
	require.NoError(t, err)
	require.Len(t, ds, 3)
	require.Equal(t, []string{"flash_attn", "flash_attn_reduce", "mul_mat_vec_q4"}, []string{ds[0].Spec.Kernel, ds[1].Spec.Kernel, ds[2].Spec.Kernel})
	red := ds[1]
	require.Equal(t, "1", red.Spec.Defines["XQ"])
	require.Equal(t, "1", red.Spec.Defines["REG"])
	require.Equal(t, "128", red.Spec.Defines["YS"])
	part := ds[0].Tensors[len(ds[0].Tensors)-1]
	xq := red.Tensors[len(red.Tensors)-1]
	require.True(t, IsScratch(part) && IsScratch(xq))
	require.Same(t, part, red.Tensors[0])
	require.Equal(t, scratchEnd(part), xq.Loc.Addr, "the column lies after the partial results")
	require.Equal(t, "xq", red.Spec.Operands[len(red.Spec.Operands)-1].Name)
	for _, d := range ds {
		for _, tt := range d.Tensors {
			require.NotSame(t, n[0], tt, "the attention's result is neither stored nor read")
		}
	}
	// the product's dispatch as unfused, reading the reduction's column
	unfused, err := lowerMulMat(n[2], l)
	require.NoError(t, err)
	require.Len(t, unfused, 2)
	require.Equal(t, unfused[1].Spec.Key(), ds[2].Spec.Key())
	require.Equal(t, int64(4096/64*9*4), xq.Ne[0], "64 groups of 9 vectors of 4 words")
	require.Equal(t, xq.Ne, unfused[0].Tensors[1].Ne)
	for i, tt := range unfused[1].Tensors {
		if tt == unfused[0].Tensors[1] {
			require.Same(t, xq, ds[2].Tensors[i])
		} else {
			require.Same(t, tt, ds[2].Tensors[i])
		}
	}
	for _, ty := range []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q5_K, tensor.MXFP4, tensor.IQ4_NL, tensor.IQ4_XS} {
		require.True(t, row.Applies(flashAttnMulMatNodes(ty, 128, 32, 8, 4096, 256), l), "%s", ty)
	}
	// products below the integer mat-vec's thresholds (Q4_0 4096 x 4096, a 1B llama's Q4_K
	// 2048 x 2048), their column quantized for free
	require.True(t, row.Applies(flashAttnMulMatNodes(tensor.Q4_K, 64, 32, 8, 2048, 256), l))
	require.True(t, row.Applies(flashAttnMulMatNodes(tensor.Q4_0, 128, 32, 8, 4096, 256), l))
	// Q6_K, Q8_0 and F16 weights; an attention that does not split (32 positions); heads
	// of half a Q4_K group; the switch
	for _, bad := range [][]*tensor.Tensor{
		flashAttnMulMatNodes(tensor.Q6_K, 128, 32, 8, 4096, 256),
		flashAttnMulMatNodes(tensor.Q8_0, 128, 32, 8, 4096, 256),
		flashAttnMulMatNodes(tensor.F16, 128, 32, 8, 4096, 256),
		flashAttnMulMatNodes(tensor.Q4_K, 128, 32, 8, 4096, 32),
		flashAttnMulMatNodes(tensor.Q4_K, 32, 128, 8, 4096, 256),
	} {
		require.False(t, row.Applies(bad, l), "%s %v", bad[2].Src[0].Type, bad[0].Ne)
	}
	off := *l
	off.FAXQOff = true
	require.False(t, row.Applies(n, &off))
	// the reduction's workgroup memory: 256 invocations (two lanes of 128), the row and
	// the exchange take 5,648 bytes
	tight := *l
	tight.MaxWorkgroupStorage = 5647
	require.False(t, row.Applies(n, &tight))
	tight.MaxWorkgroupStorage = 5648
	require.True(t, row.Applies(n, &tight))
	// the prompt's attention (16 queries: the tiled kernel)
	prompt := flashAttnMulMatNodes(tensor.Q4_K, 128, 32, 8, 4096, 256)
	fa := flashAttnNode(128, 128, 16, 32, 8, 256, tensor.F16, tensor.F16, true, false, 0, 0)
	prompt[0], prompt[1].Src[0] = fa, fa
	prompt[1].Ne[1], prompt[2].Ne[1] = 16, 16
	require.False(t, row.Applies(prompt, l))
	// a product of another column
	other := flashAttnMulMatNodes(tensor.Q4_K, 128, 32, 8, 4096, 256)
	other[2].Src[1] = f32(4096, 1)
	require.False(t, row.Applies(other, l))
}
