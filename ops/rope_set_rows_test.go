package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// at places t at byte addr of buffer 1.
func at(t *tensor.Tensor, addr uint64) *tensor.Tensor {
	t.Loc = tensor.Loc{Buffer: 1, Addr: 1<<40 + addr}
	return t
}

// kvStoreNodes is llama's K and V store (ropeSetRowsExample) placed in one buffer: K's
// source at 0, the roped K and its view at 4096, the caches at 8192 and 16384, V's source
// at 24576, the indices at 32768 and 33024, positions at 33280, frequency factors at 33536.
func kvStoreNodes() []*tensor.Tensor {
	n := ropeSetRowsExample(true)
	rope, view, k, vview, v := n[0], n[1], n[2], n[3], n[4]
	at(rope.Src[0], 0)
	at(rope, 4096)
	at(view, 4096)
	at(k, 8192)
	at(k.Src[2], 8192)
	at(v, 16384)
	at(v.Src[2], 16384)
	at(vview, 24576)
	at(vview.Src[0], 24576)
	at(k.Src[1], 32768)
	at(v.Src[1], 33024)
	at(rope.Src[1], 33280)
	at(rope.Src[2], 33536)
	return n
}

func TestRopeSetRowsGuards(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	require.True(t, ropeSetRowsRowsRow.Applies(kvStoreNodes(), l))
	require.True(t, ropeSetRowsRow.Applies(kvStoreNodes()[:3], l))
	for mode, ty := range map[int32]tensor.Type{tensor.RopeNormal: tensor.F16, tensor.RopeImrope: tensor.F32, tensor.RopeVision: tensor.F32} {
		n := kvStoreNodes()
		rope := ropeExample(mode, ty, false)
		rope.Loc, rope.Src[0].Loc = n[0].Loc, n[0].Src[0].Loc
		n[0], n[1].Src[0], n[1].Type = rope, rope, ty
		n[1].Nb = contiguous(ty, 16, 3).Nb
		require.True(t, ropeSetRowsRowsRow.Applies(n, l), "mode %d %s", mode, ty)
		ds, err := ropeSetRowsRowsRow.Lower(n, l)
		require.NoError(t, err)
		require.Len(t, ds, 1)
		require.Equal(t, uint32(24+48), ds[0].Params.(ropeSetRowsParams).N, "K's pair slots, then V's elements")
	}

	refused := map[string]func(n []*tensor.Tensor){
		"BF16 V cache":         func(n []*tensor.Tensor) { n[4].Type, n[4].Nb = tensor.BF16, contiguous(tensor.BF16, 16, 6).Nb },
		"view at an offset":    func(n []*tensor.Tensor) { at(n[1], 4096+64) },
		"view of part of K":    func(n []*tensor.Tensor) { n[1].Ne[1] = 2 },
		"roped K strided":      func(n []*tensor.Tensor) { n[0].Nb[2] *= 2; n[0].Nb[3] *= 2 },
		"values not the view":  func(n []*tensor.Tensor) { n[2].Src[0] = f32(16, 3) },
		"rope over part of K":  func(n []*tensor.Tensor) { at(n[0].Src[0], 4096+64) },
		"K cache over K":       func(n []*tensor.Tensor) { at(n[2], 64) },
		"K cache over indices": func(n []*tensor.Tensor) { at(n[2], 32768-64) },
		"K cache over V":       func(n []*tensor.Tensor) { at(n[3], 8192+32) },
		"caches overlap":       func(n []*tensor.Tensor) { at(n[4], 8192+64) },
		"V cache over positions": func(n []*tensor.Tensor) {
			at(n[4], 33280-64)
		},
		"V stores K's result": func(n []*tensor.Tensor) { n[3].Src[0] = n[2] },
		"V into K's result":   func(n []*tensor.Tensor) { n[4].Src[2] = n[2] },
		"V values not its view": func(n []*tensor.Tensor) {
			n[4].Src[0] = f32(16, 3)
		},
		"V rows in planes": func(n []*tensor.Tensor) {
			n[3].Ne, n[3].Nb = [4]int64{16, 1, 3, 1}, f32(16, 1, 3).Nb
			n[4].Ne, n[4].Nb = [4]int64{16, 6, 3, 1}, f32(16, 6, 3).Nb
			n[4].Src[1].Ne, n[4].Src[1].Nb = [4]int64{1, 3, 1, 1}, contiguous(tensor.I32, 1, 3).Nb
		},
	}
	for name, spoil := range refused {
		n := kvStoreNodes()
		spoil(n)
		require.False(t, ropeSetRowsRowsRow.Applies(n, l), name)
	}
	// A quantized cache takes the unfused path (SET_ROWS quantizes whole rows of blocks).
	rope := ropeNode(tensor.F32, 16, 16, tensor.RopeNeox, [4]int32{}, 0, 3, 0)
	view := node(tensor.OpView, f32(32, 3), nil, rope)
	q := node(tensor.OpSetRows, contiguous(tensor.Q8_0, 32, 6), nil, view, contiguous(tensor.I64, 3))
	require.True(t, Supports(q, l))
	require.False(t, ropeSetRowsRow.Applies([]*tensor.Tensor{rope, view, q}, l))
	q.Type, q.Nb = tensor.F16, contiguous(tensor.F16, 32, 6).Nb
	require.True(t, ropeSetRowsRow.Applies([]*tensor.Tensor{rope, view, q}, l))

	// A rope exactly over its source (ggml-alloc's in-place placement) is the scheduler's
	// to judge: the rows name it in Consumes.
	n0 := kvStoreNodes()
	at(n0[0].Src[0], 4096)
	require.True(t, ropeSetRowsRowsRow.Applies(n0, l), "in-place rope")
	require.Equal(t, []int{0}, ropeSetRowsRowsRow.Consumes)
	require.Equal(t, []int{1}, ropeRopeSetRowsRowsRow.Consumes)

	// The K store alone still fuses when only V's store is refused.
	n := kvStoreNodes()
	n[4].Src[2] = n[2]
	require.True(t, ropeSetRowsRow.Applies(n[:3], l))
}

// streamsNodes is kvStoreNodes with each store's destination a RESHAPE of its cache, a
// node before the store: llama's caches of several streams.
func streamsNodes() []*tensor.Tensor { return streamsDests(kvStoreNodes()) }

func TestStreamsRow(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	row := streamsRow(ropeSetRowsRowsRow)
	n := streamsNodes()
	require.Len(t, row.Ops, 7)
	require.Equal(t, []int{0, 1}, row.Private, "the rope and its view")
	require.Equal(t, []*tensor.Tensor{n[3], n[6]}, row.Written(n), "both stores, not the reshapes")
	require.True(t, row.Applies(n, l))
	ds, err := row.Lower(n, l)
	require.NoError(t, err)
	base, err := ropeSetRowsRowsRow.Lower(kvStoreNodes(), l)
	require.NoError(t, err)
	require.Equal(t, base[0].Params, ds[0].Params, "the store of one stream's nodes")
	require.Equal(t, base[0].Spec, ds[0].Spec)

	n[6].Src[2] = n[2] // V's store into K's reshape
	require.False(t, row.Applies(n, l), "a reshape that is not the store's destination")
	n = streamsNodes()
	n[0].Ne[0]++ // what the single-stream row refuses
	require.False(t, row.Applies(n, l))
}
