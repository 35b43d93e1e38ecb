package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// TestFlashAttnReduceGroup checks the split reduction's register form: lanes of Dv
// invocations, about 256 invocations, more to hold at most faReduceElems splits an
// invocation; the loop form where that does not fit.
func TestFlashAttnReduceGroup(t *testing.T) {
	big, small := &Limits{MaxGroupSize: 1024}, &Limits{MaxGroupSize: 256}
	for _, c := range []struct {
		dv, splits       int
		l                *Limits
		wg, lanes, elems int
	}{
		{64, 32, big, 256, 4, 8},  // llama 1B decode: 8 KV heads x 32 splits
		{64, 4, big, 256, 4, 1},   // few splits
		{64, 2, big, 128, 2, 1},   // no more lanes than splits
		{128, 32, big, 512, 4, 8}, // more lanes for 8 splits an invocation
		{128, 32, small, 256, 2, 16},
		{128, 33, small, 0, 0, 0}, // 17 splits an invocation
		{72, 4, big, 216, 3, 2},   // lanes of a Dv that is no power of two
		{64, 128, big, 1024, 16, 8},
		{64, 256, big, 1024, 16, 16},
		{512, 32, big, 1024, 2, 16},
		{512, 33, big, 0, 0, 0},
		{512, 4, small, 0, 0, 0}, // columns beyond the workgroup
		{256, 1, big, 256, 1, 1},
	} {
		wg, lanes, elems := faReduceGroup(c.dv, c.splits, c.l)
		require.Equal(t, [3]int{c.wg, c.lanes, c.elems}, [3]int{wg, lanes, elems}, "Dv %d, %d splits, limit %d", c.dv, c.splits, c.l.MaxGroupSize)
	}
}

// TestFlashAttnReduceCompile compiles the split reduction in both forms, with and without
// sinks, and checks the form each decode takes.
func TestFlashAttnReduceCompile(t *testing.T) {
	cache := newCompiler(t)
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 32768, MaxGroupSize: 256}
	for _, c := range []struct {
		d, dv, nkv int64
		reg        string
	}{
		{64, 64, 4096, "1"},   // 32 splits, 4 lanes of 8
		{128, 128, 4096, "1"}, // 32 splits, 2 lanes of 16
		{576, 512, 4096, "0"}, // Dv beyond the workgroup limit
	} {
		for _, sinks := range []bool{false, true} {
			ds, err := Lower(flashAttnNode(c.d, c.dv, 1, 32, 8, c.nkv, tensor.F16, tensor.F16, true, sinks, 0, 0), l)
			require.NoError(t, err)
			require.Len(t, ds, 2)
			r := ds[1].Spec
			require.Equal(t, "flash_attn_reduce", r.Kernel)
			require.Equal(t, c.reg, r.Defines["REG"], "Dv %d", c.dv)
			_, err = cache.Pipeline(r)
			require.NoError(t, err, "Dv %d, sinks %v: %v", c.dv, sinks, r.Defines)
		}
	}
	// The forms of the conformance cases (faReduceCases) at a limit of 1024 invocations.
	big := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535, MaxWorkgroupStorage: 32768, MaxGroupSize: 1024}
	for _, c := range []struct {
		d, dv, nq, nh, nhkv, nkv int64
		splits                   uint32
		wg                       int
		e                        string
	}{
		{64, 64, 1, 32, 8, 1024, 32, 256, "8"},
		{64, 64, 2, 1, 1, 3000, 94, 768, "8"},
		{72, 72, 1, 1, 1, 700, 22, 216, "8"},
		{576, 512, 1, 4, 1, 1024, 32, 1024, "16"},
		{576, 512, 1, 4, 1, 1056, 33, 64, "0"},
	} {
		ds, err := Lower(flashAttnNode(c.d, c.dv, c.nq, c.nh, c.nhkv, c.nkv, tensor.F16, tensor.F16, true, false, 0, 0), big)
		require.NoError(t, err)
		require.Len(t, ds, 2)
		require.Equal(t, c.splits, ds[0].Params.(flashAttnParams).Splits, "Dv %d, KV %d", c.dv, c.nkv)
		require.Equal(t, c.wg, ds[1].Spec.Workgroup, "Dv %d, KV %d", c.dv, c.nkv)
		require.Equal(t, c.e, ds[1].Spec.Defines["E"], "Dv %d, KV %d", c.dv, c.nkv)
	}
}
