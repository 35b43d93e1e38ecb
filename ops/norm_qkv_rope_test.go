package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// TestAddNormQKVRope checks the fusion row add+norm+mul+qkv+rope+set_rows: the norm's
// dispatch and one MULTI dispatch in the ROPE_KV form, which stores ROPE Q's result and
// both caches; elsewhere the row stays out.
func TestAddNormQKVRope(t *testing.T) {
	l := &Limits{MaxBinding: 1 << 30, MaxGroupsPerDim: 65535, MaxGroupSize: 1024}
	row := addNormQKVRopeRow
	n := normQKVRopeNodes(tensor.Q4_0, 64, 32, 8, 2048, 16) // a 1B llama's
	require.Len(t, n, len(row.Ops))
	require.True(t, row.Applies(n, l))
	ds, err := row.Lower(n, l)
	require.NoError(t, err)
	require.Len(t, ds, 2)
	require.Equal(t, "norm", ds[0].Spec.Kernel)
	m := ds[1]
	require.Equal(t, "mul_mat_vec_q4", m.Spec.Kernel)
	require.Equal(t, "1", m.Spec.Defines["ROPE_KV"])
	require.Equal(t, "1", m.Spec.Defines["NORMAL"])
	// the products in the graph's order Q, V, K: roles Q 0, K 2, V 1
	require.Equal(t, []string{"0", "2", "1"}, []string{m.Spec.Defines["ROLE_Q"], m.Spec.Defines["ROLE_K"], m.Spec.Defines["ROLE_V"]})
	rq, rk, kset, vset := n[9], n[10], n[12], n[14]
	xq := ds[0].Tensors[len(ds[0].Tensors)-1]
	require.Equal(t, []*tensor.Tensor{n[3].Src[0], n[5].Src[0], n[7].Src[0], xq, rq, rk.Src[1], kset.Src[1], vset.Src[1], kset, vset}, m.Tensors)
	p := m.Params.(ropeKVParams)
	require.Equal(t, uint32(64), p.HeadD)
	require.Equal(t, [4]uint32{1, 512, 16, 0}, p.Db, "K cache: strides along and across rows, rows")
	require.Equal(t, [4]uint32{1, 512, 16, 0}, p.Dc)
	require.Equal(t, uint32(32), p.NRot)
	for _, ty := range []tensor.Type{tensor.Q4_1, tensor.Q4_K, tensor.Q5_0, tensor.Q5_K} {
		require.True(t, row.Applies(normQKVRopeNodes(ty, 64, 32, 8, 2048, 16), l), "%s", ty)
	}
	// formats with lookup tables; NEOX; part of the head rotated; frequency factors (an
	// eleventh binding); a V store of another tensor; rows a workgroup other than two; too
	// few bindings; the switches
	refuse := map[string][]*tensor.Tensor{"iq4_xs": normQKVRopeNodes(tensor.IQ4_XS, 64, 32, 8, 2048, 16)}
	neox := normQKVRopeNodes(tensor.Q4_0, 64, 32, 8, 2048, 16)
	neox[9].Params[2], neox[10].Params[2] = tensor.RopeNeox, tensor.RopeNeox
	refuse["neox"] = neox
	part := normQKVRopeNodes(tensor.Q4_0, 64, 32, 8, 2048, 16)
	part[9].Params[1], part[10].Params[1] = 32, 32
	refuse["part"] = part
	ff := normQKVRopeNodes(tensor.Q4_0, 64, 32, 8, 2048, 16)
	ff[9].Src[2] = f32(32)
	ff[10].Src[2] = ff[9].Src[2]
	refuse["frequency factors"] = ff
	other := normQKVRopeNodes(tensor.Q4_0, 64, 32, 8, 2048, 16)
	other[13].Src[0] = f32(512, 1)
	refuse["v of another"] = other
	for name, bad := range refuse {
		require.False(t, row.Applies(bad, l), name)
	}
	for name, set := range map[string]func(*Limits){
		"rows":     func(o *Limits) { o.SwarRows = 1 },
		"bindings": func(o *Limits) { o.MaxStorageBuffers = 9 },
		"norm":     func(o *Limits) { o.NormXQOff = true },
		"switch":   func(o *Limits) { o.RopeKVOff = true },
	} {
		o := *l
		set(&o)
		require.False(t, row.Applies(n, &o), name)
	}
	fits := *l
	fits.MaxStorageBuffers = 10
	require.True(t, row.Applies(n, &fits))
}
