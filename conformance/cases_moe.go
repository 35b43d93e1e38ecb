package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// Mixture of experts, modelled on test-backend-ops' test_mul_mat_id: n_mats experts of
// m x k weights, n_used of them per token (distinct per token, as a router picks them),
// b holding one row per used slot or one row broadcast to all (b=1); few tokens take the
// mat-vec kernel, more the grouped tiled one (tokens such that an expert gets more rows
// than one tile and ids more pairs than one scan step); permuted activations, padded
// weight views and ids that are a view of a wider tensor. Every weight format, quantized
// by ggml's quantizer, with MUL_MAT's threshold.

type mmidSpec struct {
	ta                 tensor.Type
	mats, used         int64
	bcast              bool // b holds one row per token, broadcast to every slot
	m, n, k            int64
	permB, viewA, view bool // b permuted; as a padded view; ids a view of wider rows
}

func mulMatIDCases() []*Case {
	var cs []*Case
	for _, ta := range []tensor.Type{f32, f16} {
		for _, k := range []int64{37, 64} {
			for _, n := range []int64{1, 3, 4, 9, 33} {
				cs = append(cs, mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, m: 70, n: n, k: k}))
				cs = append(cs, mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, bcast: true, m: 33, n: n, k: k}))
			}
		}
		cs = append(cs,
			mulMatIDCase(mmidSpec{ta: ta, mats: 2, used: 2, m: 17, n: 80, k: 32}),  // two tiles per expert
			mulMatIDCase(mmidSpec{ta: ta, mats: 3, used: 2, m: 9, n: 200, k: 16}),  // several scan steps
			mulMatIDCase(mmidSpec{ta: ta, mats: 8, used: 4, m: 16, n: 1, k: 64, permB: true}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 8, used: 4, m: 16, n: 12, k: 64, permB: true}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, m: 16, n: 2, k: 40, viewA: true, view: true}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, m: 16, n: 10, k: 40, viewA: true, view: true}),
		)
	}
	for _, ta := range quantTypes {
		k := int64(64)
		if ta.BlockElems() == 256 {
			k = 256
		}
		for _, n := range []int64{1, 4, 9} {
			cs = append(cs, mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, m: 33, n: n, k: k}))
		}
		cs = append(cs,
			mulMatIDCase(mmidSpec{ta: ta, mats: 8, used: 2, bcast: true, m: 17, n: 3, k: 2 * k}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 8, used: 2, bcast: true, m: 17, n: 16, k: 2 * k}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, m: 16, n: 1, k: k, viewA: true, permB: true}),
			mulMatIDCase(mmidSpec{ta: ta, mats: 4, used: 2, m: 16, n: 7, k: k, viewA: true, permB: true}),
		)
	}
	return cs
}

func mulMatIDCase(s mmidSpec) *Case {
	nb := s.used
	if s.bcast {
		nb = 1
	}
	name := fmt.Sprintf("MUL_MAT_ID(type_a=%s,type_b=f32,n_mats=%d,n_used=%d,b=%v,m=%d,n=%d,k=%d",
		s.ta, s.mats, s.used, s.bcast, s.m, s.n, s.k)
	for _, v := range []struct {
		on   bool
		name string
	}{{s.permB, ",perm_b"}, {s.viewA, ",view_a"}, {s.view, ",view_ids"}} {
		if v.on {
			name += v.name
		}
	}
	name += ")"
	return &Case{Name: name, Op: "MUL_MAT_ID", Types: s.ta.String() + " x f32", MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			var as ggml.Tensor
			if s.viewA {
				// rows padded by 2 blocks (6 elements unquantized), one row in
				pad := int64(6)
				if s.ta.Quantized() {
					pad = 2 * int64(s.ta.BlockElems())
				}
				x := b.New("as_base", s.ta, s.k+pad, s.m+1, s.mats)
				as = b.View4D(x, shape(s.k, s.m, s.mats), x.Nb()[1])
			} else {
				as = b.New("as", s.ta, s.k, s.m, s.mats)
			}
			var y ggml.Tensor
			if s.permB {
				y = b.Permute(b.New("b", f32, s.k, s.n, nb), [4]int{0, 2, 1, 3})
			} else {
				y = b.New("b", f32, s.k, nb, s.n)
			}
			var ids ggml.Tensor
			if s.view {
				x := b.New("ids_base", tensor.I32, s.used+3, s.n)
				b.Init(x, Indices(s.mats))
				ids = b.L.View2D(b.Ctx, x, s.used, s.n, x.Nb()[1], 4)
			} else {
				ids = b.New("ids", tensor.I32, s.used, s.n)
				b.Init(ids, DistinctRows(int(s.mats), int(s.used)))
			}
			return b.L.MulMatID(b.Ctx, as, y, ids)
		}}
}

// moeCases are the mixture-of-experts and reduction families, in report order.
func moeCases() []*Case {
	var cs []*Case
	cs = append(cs, mulMatIDCases()...)
	return cs
}
