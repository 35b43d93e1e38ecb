package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
)

// ---------------------------------------------------------------------------------------
// The norms beyond normCases' RMS_NORM and NORM basics, as test-backend-ops' test_norm,
// test_rms_norm, test_l2_norm and test_group_norm build them: L2_NORM, the layouts
// "half" (a view of the first half of every dimension), "rows" (rows not contiguous:
// dims 0 and 1 of the source permuted) and "inplace", and GROUP_NORM.

func normMoreCases() []*Case {
	var cs []*Case
	for _, eps := range []float32{1e-12, 1e-6, 50} { // 50 exceeds the norm of the smaller rows
		for _, ne := range [][4]int64{shape(7, 3), shape(64, 5, 4, 3), shape(1025, 3, 2, 1)} {
			cs = append(cs, normCase("L2_NORM", ne, eps, ""))
		}
	}
	for _, op := range []string{"RMS_NORM", "NORM", "L2_NORM"} {
		cs = append(cs,
			normCase(op, shape(64, 6, 4, 2), 1e-6, "half"),
			normCase(op, shape(65, 5, 4, 3), 1e-6, "inplace"),
		)
		// ggml's CPU RMS_NORM requires contiguous rows
		if op != "RMS_NORM" {
			cs = append(cs, normCase(op, shape(64, 5, 4, 3), 1e-6, "rows"), normCase(op, shape(33, 7, 2, 1), 1e-6, "rows"))
		}
	}
	for _, g := range []struct {
		ne     [4]int64
		groups int
	}{
		{shape(16, 8, 40, 1), 32}, // 2 channels a group, 20 groups
		{shape(9, 9, 64, 1), 32},
		{shape(7, 5, 10, 2), 4}, // 3 channels a group, the last 1
		{shape(5, 3, 3, 1), 5},  // more groups than channels
		{shape(64, 64, 32, 1), 8},
	} {
		cs = append(cs, groupNormCase(g.ne, g.groups, 1e-6, ""))
	}
	cs = append(cs,
		groupNormCase(shape(7, 5, 10, 2), 4, 1e-3, "perm"),
		groupNormCase(shape(8, 6, 12, 2), 4, 1e-6, "view"),
		groupNormCase(shape(8, 6, 12, 2), 3, 1e-6, "inplace"),
	)
	return cs
}

// normLayout returns the source of a norm case of shape ne: a plain tensor, or a layout of
// normCase's variants "half", "rows" and "inplace" (the last a plain tensor).
func normLayout(b *Builder, ne [4]int64, variant string) ggml.Tensor {
	switch variant {
	case "half":
		x := b.New("a_base", f32, 2*ne[0], 2*ne[1], 2*ne[2], 2*ne[3])
		return b.View4D(x, ne, 0)
	case "rows":
		return b.Permute(b.New("a", f32, ne[1], ne[0], ne[2], ne[3]), [4]int{1, 0, 2, 3})
	}
	return b.New("a", f32, ne[:]...)
}

// groupNormCase is GROUP_NORM of groups groups over a source of shape ne; variant "perm"
// (dims 1 and 2 of the source permuted), "view" (rows padded, at an offset) or "inplace".
func groupNormCase(ne [4]int64, groups int, eps float32, variant string) *Case {
	name := fmt.Sprintf("GROUP_NORM(type=f32,ne=%s,num_groups=%d,eps=%g", fmtNe(ne), groups, eps)
	if variant != "" {
		name += "," + variant
	}
	name += ")"
	return &Case{Name: name, Op: "GROUP_NORM", Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Init: Uniform(-10, 10),
		Build: func(b *Builder) ggml.Tensor {
			var a ggml.Tensor
			switch variant {
			case "perm":
				a = b.Permute(b.New("a", f32, ne[0], ne[2], ne[1], ne[3]), [4]int{0, 2, 1, 3})
			case "view":
				x := b.New("a_base", f32, ne[0]+3, ne[1], ne[2]+1, ne[3])
				a = b.View4D(x, ne, 2*4)
			case "inplace":
				a = b.New("a", f32, ne[:]...)
				return b.L.GroupNormInplace(b.Ctx, a, groups, eps)
			default:
				a = b.New("a", f32, ne[:]...)
			}
			return b.L.GroupNorm(b.Ctx, a, groups, eps)
		}}
}
