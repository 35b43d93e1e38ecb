package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// qkvStoreNodes is kvStoreNodes after the ROPE of Q (ropeRopeSetRowsExample's Q): Q's
// source at 40960, its result at 45056.
func qkvStoreNodes() []*tensor.Tensor {
	n := kvStoreNodes()
	k := n[0]
	q := node(tensor.OpRope, f32(8, 3, 3), k.Params[:], f32(8, 3, 3), k.Src[1], k.Src[2])
	at(q.Src[0], 40960)
	at(q, 45056)
	return append([]*tensor.Tensor{q}, n...)
}

func TestRopeRopeSetRowsGuards(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535}
	row := ropeRopeSetRowsRowsRow
	require.True(t, row.Applies(qkvStoreNodes(), l))
	inPlace := qkvStoreNodes()
	at(inPlace[0], 40960)
	require.True(t, row.Applies(inPlace, l), "ROPE Q in place over its source (ggml-alloc places it so)")
	ds, err := row.Lower(inPlace, l)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	p := ds[0].Params.(ropeSetRowsParams)
	require.Equal(t, uint32(24), p.KN)
	require.Equal(t, uint32(24+48), p.QAt, "Q's pair slots after K's pairs and V's elements")
	require.Equal(t, uint32(24+48+36), p.N)
	require.Equal(t, uint32(3), p.QHeads)
	require.Equal(t, []*tensor.Tensor{inPlace[0]}, row.Written(inPlace)[:1], "Q's result is written")

	refused := map[string]func(n []*tensor.Tensor){
		"other mode":           func(n []*tensor.Tensor) { n[0].Params[2] = tensor.RopeNormal },
		"other freq base":      func(n []*tensor.Tensor) { n[0].Params[5] = int32(f32bits(500000)) },
		"other positions":      func(n []*tensor.Tensor) { n[0].Src[1] = contiguous(tensor.I32, 3) },
		"no frequency factors": func(n []*tensor.Tensor) { n[0].Src[2] = nil },
		"other head size": func(n []*tensor.Tensor) {
			n[0] = node(tensor.OpRope, f32(16, 3, 3), n[1].Params[:], f32(16, 3, 3), n[1].Src[1], n[1].Src[2])
		},
		"Q result strided":       func(n []*tensor.Tensor) { n[0].Nb[2] *= 2; n[0].Nb[3] *= 2 },
		"Q partly over source":   func(n []*tensor.Tensor) { at(n[0], 40960+64) },
		"Q over K's source":      func(n []*tensor.Tensor) { at(n[0], 0) },
		"Q over V's values":      func(n []*tensor.Tensor) { at(n[0], 24576) },
		"Q over the K cache":     func(n []*tensor.Tensor) { at(n[0], 8192) },
		"Q over the positions":   func(n []*tensor.Tensor) { at(n[0], 33280-64) },
		"V cache over Q's input": func(n []*tensor.Tensor) { at(n[0].Src[0], 16384) },
		"K roped from Q": func(n []*tensor.Tensor) {
			n[1].Src[0] = n[0]
		},
		"V stores Q": func(n []*tensor.Tensor) {
			v := node(tensor.OpView, f32(8, 2, 3), nil, n[0])
			n[4].Src[0] = v
		},
	}
	for name, spoil := range refused {
		n := qkvStoreNodes()
		spoil(n)
		require.False(t, row.Applies(n, l), name)
	}
	// Ten storage bindings: a device that allows fewer keeps ROPE Q apart.
	lt := *l
	lt.MaxStorageBuffers = 8
	require.False(t, row.Applies(qkvStoreNodes(), &lt))
	lt.MaxStorageBuffers = 10
	require.True(t, row.Applies(qkvStoreNodes(), &lt))
}
