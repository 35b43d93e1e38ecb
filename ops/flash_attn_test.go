package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// TestFlashAttnSupports checks that supports_op refuses what the kernels do not compute.
func TestFlashAttnSupports(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 32768}
	ok := func() *tensor.Tensor {
		return flashAttnNode(64, 64, 3, 8, 2, 100, tensor.F16, tensor.F16, true, true, 0, 0)
	}
	require.True(t, Supports(ok(), l))
	reject := map[string]func(n *tensor.Tensor){
		"precision F16": func(n *tensor.Tensor) { n.Params[3] = 20 },
		"head size 36": func(n *tensor.Tensor) {
			*n = *flashAttnNode(36, 36, 3, 8, 2, 100, tensor.F16, tensor.F16, true, false, 0, 0)
		},
		"unread K type": func(n *tensor.Tensor) { n.Src[1] = contiguous(tensor.IQ4_XS, 256, 100, 2) },
		"F32 mask":      func(n *tensor.Tensor) { n.Src[3] = f32(100, 8) },
		"short mask":    func(n *tensor.Tensor) { n.Src[3] = contiguous(tensor.F16, 99, 8) },
		"heads not grouped": func(n *tensor.Tensor) {
			n.Src[1], n.Src[2] = contiguous(tensor.F16, 64, 100, 3), contiguous(tensor.F16, 64, 100, 3)
		},
		"V heads differ":       func(n *tensor.Tensor) { n.Src[2] = contiguous(tensor.F16, 64, 100, 1) },
		"F16 sinks":            func(n *tensor.Tensor) { n.Src[4] = contiguous(tensor.F16, 8) },
		"ALiBi without mask":   func(n *tensor.Tensor) { n.Src[3], n.Params[1] = nil, int32(f32bits(8)) },
		"F16 result":           func(n *tensor.Tensor) { n.Type = tensor.F16 },
		"K elements apart":     func(n *tensor.Tensor) { n.Src[1].Nb[0] = 4 },
		"quantized rows apart": func(n *tensor.Tensor) { n.Src[1] = contiguous(tensor.Q8_0, 64, 100, 2); n.Src[1].Nb[1] = 70 },
	}
	for name, f := range reject {
		n := ok()
		f(n)
		require.False(t, Supports(n, l), name)
		_, err := Lower(n, l)
		require.Error(t, err, name)
	}
	// D 576 / Dv 512 fits 16 KiB of workgroup memory only with fewer rows per workgroup.
	require.Equal(t, 4, faRows(576, 512, 8, &Limits{MaxWorkgroupStorage: 16384}))
	require.Equal(t, 8, faRows(576, 512, 16, &Limits{MaxWorkgroupStorage: 32768}))
}

// TestFlashAttnPaths checks the choice of path: split KV (two dispatches through scratch
// memory) for few queries, one dispatch for prompts.
func TestFlashAttnPaths(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 32768}
	ds, err := Lower(flashAttnNode(128, 128, 1, 32, 8, 4096, tensor.F16, tensor.F16, true, false, 0, 0), l)
	require.NoError(t, err)
	require.Len(t, ds, 2)
	p := ds[0].Params.(flashAttnParams)
	require.Greater(t, p.Splits, uint32(1))
	require.True(t, IsScratch(ds[0].Tensors[len(ds[0].Tensors)-1]))
	require.Same(t, ds[0].Tensors[len(ds[0].Tensors)-1], ds[1].Tensors[0])
	require.Equal(t, "flash_attn_reduce", ds[1].Spec.Kernel)
	require.Equal(t, uint32(32), p.Splits) // faTargetGroups: 8 KV heads x 32 splits of 4 tiles
	require.Equal(t, uint32(4*faTile), p.Chunk)
	require.Equal(t, "1", ds[0].Spec.Defines["VT"])    // V tiles staged in workgroup memory,
	require.Equal(t, "4", ds[0].Spec.Defines["VP"])    // four groups of eight elements a thread,
	require.Equal(t, "1", ds[0].Spec.Defines["OPT"])   // four rows x 32 groups of four columns over 128 threads,
	require.Equal(t, "1", ds[0].Spec.Defines["RAW_V"]) // loaded ahead as F16 words
	// the comparison knobs: one query row a workgroup (32 row groups, 8 splits to reach
	// the target), and a target of 1024 workgroups (8 KV heads x 128 splits of one tile)
	rows1 := *l
	rows1.FADecodeRows = 1
	ds, err = Lower(flashAttnNode(128, 128, 1, 32, 8, 4096, tensor.F16, tensor.F16, true, false, 0, 0), &rows1)
	require.NoError(t, err)
	require.Equal(t, "1", ds[0].Spec.Defines["R"])
	require.Equal(t, uint32(8), ds[0].Params.(flashAttnParams).Splits)
	wide := *l
	wide.FATargetGroups = 1024
	ds, err = Lower(flashAttnNode(128, 128, 1, 32, 8, 4096, tensor.F16, tensor.F16, true, false, 0, 0), &wide)
	require.NoError(t, err)
	require.Equal(t, uint32(128), ds[0].Params.(flashAttnParams).Splits)
	// where the tile does not fit, V rows are loaded as they are accumulated
	small := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 16384}
	ds, err = Lower(flashAttnNode(128, 128, 1, 32, 8, 4096, tensor.F16, tensor.F16, true, false, 0, 0), small)
	require.NoError(t, err)
	require.Equal(t, "0", ds[0].Spec.Defines["VT"])
	ds, err = Lower(flashAttnNode(256, 256, 1, 32, 8, 4096, tensor.F16, tensor.F16, true, false, 0, 0), l)
	require.NoError(t, err)
	require.Equal(t, "0", ds[0].Spec.Defines["VT"], "heads of more than 128 columns")
	prompt := flashAttnNode(128, 128, 512, 32, 8, 512, tensor.F16, tensor.F16, true, false, 0, 0)
	ds, err = Lower(prompt, l)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, "flash_attn_tile", ds[0].Spec.Kernel)
	require.Equal(t, 64, ds[0].Spec.Workgroup)
	require.Equal(t, "1", ds[0].Spec.Defines["PRE"])   // loads ahead
	require.Equal(t, uint32(2048/16*8), ds[0].Grid[0]) // 512 queries x 4 heads per KV head, 16 rows per workgroup
	require.Equal(t, "1", ds[0].Spec.Defines["RAW_K"]) // F16 words staged raw
	require.Equal(t, "1", ds[0].Spec.Defines["RAW_V"])
	ds, err = Lower(flashAttnNode(128, 128, 512, 32, 8, 512, tensor.Q8_0, tensor.F16, true, false, 0, 0), l)
	require.NoError(t, err)
	require.Equal(t, "flash_attn_tile", ds[0].Spec.Kernel)
	require.Equal(t, "0", ds[0].Spec.Defines["RAW_K"], "a quantized K is dequantized as it is loaded")
	require.Equal(t, "1", ds[0].Spec.Defines["RAW_V"])
	// Few queries over a long sequence: split over workgroups, the reduction combines.
	ds, err = Lower(flashAttnNode(128, 128, 16, 32, 8, 4096, tensor.F16, tensor.F16, true, true, 0, 0), l)
	require.NoError(t, err)
	require.Len(t, ds, 2)
	require.Equal(t, "flash_attn_tile", ds[0].Spec.Kernel)
	require.Equal(t, "1", ds[0].Spec.Defines["SPLIT"])
	require.Equal(t, uint32(8), ds[0].Params.(flashAttnParams).Splits) // 32 row tiles x 8 splits of 8 tiles
	require.Equal(t, "flash_attn_reduce", ds[1].Spec.Kernel)
	// Head sizes whose Q rows leave the tiled kernel no room (576/512): flash_attn.wgsl
	// takes the prompt, 16 rows per workgroup.
	ds, err = Lower(flashAttnNode(576, 512, 64, 16, 1, 256, tensor.F16, tensor.F16, true, false, 0, 0), l)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, "flash_attn", ds[0].Spec.Kernel)
	require.Equal(t, "8", ds[0].Spec.Defines["R"])
}

// TestFlashAttnTiles checks the prompt kernel's shapes chosen from the workgroup memory
// limit, and that they fit it.
func TestFlashAttnTiles(t *testing.T) {
	lim := func(kib int) *Limits { return &Limits{MaxWorkgroupStorage: kib << 10, MaxGroupSize: 1024} }
	for _, c := range []struct {
		d, dv int64
		kib   int
		want  faTiles
	}{
		{128, 128, 48, faTiles{br: 32, bc: 64, dc: 64, vc: 32, nv: 2}}, // an H100
		{128, 128, 32, faTiles{br: 16, bc: 64, dc: 64, vc: 32, nv: 2}},
		{64, 64, 32, faTiles{br: 32, bc: 64, dc: 32, vc: 32, nv: 1}},
		{80, 80, 32, faTiles{br: 32, bc: 64, dc: 40, vc: 32, nv: 2}},
		{256, 256, 48, faTiles{br: 16, bc: 64, dc: 64, vc: 16, nv: 4}},
		{64, 64, 16, faTiles{br: 16, bc: 32, dc: 64, vc: 32, nv: 2}},
	} {
		tl, ok := faPromptTiles(c.d, c.dv, lim(c.kib))
		require.True(t, ok, "%d/%d at %d KiB", c.d, c.dv, c.kib)
		require.Equal(t, c.want, tl, "%d/%d at %d KiB", c.d, c.dv, c.kib)
		kvb := max(tl.dc*tl.bc, tl.vc*int(c.dv))
		require.LessOrEqual(t, faTileStorage(int(c.d), tl.br, tl.bc, tl.wg(), kvb), c.kib<<10)
		require.Zero(t, int(c.d)%tl.dc)
	}
	// D 576 / Dv 512 (MLA) leaves no room: the previous kernel takes it.
	_, ok := faPromptTiles(576, 512, lim(48))
	require.False(t, ok)
}
