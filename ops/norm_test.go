package ops

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// TestNormGroup checks the norm kernel's workgroups: rows up to normRegElems elements an
// invocation of the largest workgroup stay in registers, up to normMaxRegElems at the
// device's limit; longer rows take the loop form.
func TestNormGroup(t *testing.T) {
	big, small := &Limits{MaxGroupSize: 1024}, &Limits{MaxGroupSize: 256}
	for _, c := range []struct {
		n        int64
		l        *Limits
		wg, elem int
	}{
		{1, big, 64, 1},
		{7, big, 64, 1},
		{64, big, 64, 1},
		{65, big, 64, 2},
		{512, big, 64, 8},
		{513, big, 128, 5},
		{2048, big, 256, 8},
		{2049, big, 512, 5},
		{4096, big, 512, 8},
		{8192, big, 1024, 8},
		{16384, big, 1024, 16},
		{16385, big, 1024, 0},
		{2048, small, 256, 8},
		{4096, small, 256, 16},
		{4097, small, 256, 0},
		{2048, &Limits{}, 256, 8},
	} {
		wg, e := normGroup(c.n, c.l)
		require.Equal(t, [2]int{c.wg, c.elem}, [2]int{wg, e}, "row of %d, limit %d", c.n, c.l.MaxGroupSize)
	}
	for wg, g := range map[int]int{64: 8, 128: 8, 256: 16, 512: 16, 1024: 32} {
		require.Equal(t, g, normPartials(wg), "workgroup %d", wg)
	}
}

// TestNormKernelsCompile compiles every form of the norm kernel: each norm, alone, with
// the MUL and with the ADD too, in registers (one element an invocation and the most) and
// looping.
func TestNormKernelsCompile(t *testing.T) {
	cache := newCompiler(t)
	l := &Limits{MaxBinding: 1 << 27, MaxGroupsPerDim: 65535, MaxGroupSize: 256}
	for _, n := range []int64{7, 4096, 4097} {
		for _, op := range []tensor.Op{tensor.OpRMSNorm, tensor.OpNorm, tensor.OpL2Norm} {
			_, _, w, add, norm, mul := addNormMul(op, n, 2, []int64{n, 2}, []int64{n})
			forms := [][]Dispatch{normDispatch(nil, norm, nil, norm, nil, l)}
			if op != tensor.OpL2Norm {
				forms = append(forms, normDispatch(nil, norm, w, mul, nil, l), normDispatch(add, norm, w, mul, nil, l))
			}
			for _, ds := range forms {
				s := ds[0].Spec
				wg, e := normGroup(n, l)
				require.Equal(t, wg, s.Workgroup)
				require.Equal(t, map[bool]string{true: "1", false: "0"}[e > 0], s.Defines["REG"])
				_, err := cache.Pipeline(s)
				require.NoError(t, err, "%v of %d, %v", op, n, s.Defines)
			}
		}
	}
}
