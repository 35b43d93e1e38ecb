package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// ---------------------------------------------------------------------------------------
// SET_ROWS: ggml_set_rows(ctx, dst, values, rows) writes row j of values (plane i2, i3) into
// row rows[j, i2 % rows.ne1, i3 % rows.ne2] of dst. The row indices of each index row are
// distinct (DistinctRows), so the result is deterministic. Every case compares the whole
// destination base tensor: the rows that are not written must keep their initial values.

// srSpec describes a SET_ROWS case in test_set_rows' terms: dst has shape
// [ne0, ne1, ne2*nr[0], ne3*nr[1]], values [ne0, r, ne2*nr[0], ne3*nr[1]] and the row
// indices [r, ne2, ne3] (broadcast nr times over dims 2 and 3).
type srSpec struct {
	src, dst, idx tensor.Type
	ne            [4]int64
	nr            [2]int64
	r             int64
	// variant: "" plain; "view": values and indices are views of the first r/2 rows of
	// larger tensors (test_set_rows' v); "dst_view": dst is a view with padded rows at an
	// offset inside a larger base; "kv_slice": dst is the second of two planes of a KV-cache
	// like base (a view with an offset of whole planes).
	variant string
}

func setRowsCases() []*Case {
	type shp struct {
		ne      [4]int64
		nr      [2]int64
		r       int64
		variant string
	}
	shapes := []shp{
		{shape(1, 8, 1, 3), [2]int64{1, 1}, 2, ""},   // single-element rows
		{shape(1, 96), [2]int64{1, 1}, 24, ""},       // llama's transposed V cache: 1-element rows
		{shape(256, 5), [2]int64{1, 1}, 1, ""},       // one token into a K cache
		{shape(64, 5, 2, 3), [2]int64{1, 1}, 3, ""},  //
		{shape(33, 11, 1, 2), [2]int64{2, 3}, 7, ""}, // indices broadcast over dims 2 and 3
		{shape(31, 3, 2, 1), [2]int64{2, 3}, 2, ""},  //
		{shape(33, 11, 1, 2), [2]int64{2, 3}, 6, "view"},
		{shape(31, 7, 2, 1), [2]int64{1, 1}, 4, "dst_view"},
		{shape(1, 64), [2]int64{1, 1}, 16, "dst_view"},
		{shape(64, 16, 2, 1), [2]int64{1, 1}, 5, "kv_slice"},
		{shape(1, 64), [2]int64{1, 1}, 16, "kv_slice"},
	}
	var cs []*Case
	for _, tp := range [][2]tensor.Type{{f32, f32}, {f32, f16}, {f16, f16}} {
		for _, idx := range []tensor.Type{tensor.I64, tensor.I32} {
			for _, s := range shapes {
				cs = append(cs, setRowsCase(srSpec{src: tp[0], dst: tp[1], idx: idx, ne: s.ne, nr: s.nr, r: s.r, variant: s.variant}))
			}
		}
	}
	return cs
}

func setRowsCase(s srSpec) *Case {
	name := fmt.Sprintf("SET_ROWS(type_src=%s,type_dst=%s,type_idx=%s,ne=%s,nr23=[%d,%d],r=%d",
		s.src, s.dst, s.idx, fmtNe(s.ne), s.nr[0], s.nr[1], s.r)
	if s.variant != "" {
		name += "," + s.variant
	}
	name += ")"
	return &Case{Name: name, Op: "SET_ROWS", Types: fmt.Sprintf("%s->%s[%s]", s.src, s.dst, s.idx),
		MaxNMSE: copyThreshold(s.src, s.dst),
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			ne0, ne1 := s.ne[0], s.ne[1]
			d2, d3 := s.ne[2]*s.nr[0], s.ne[3]*s.nr[1]
			dstNe := [4]int64{ne0, ne1, d2, d3}

			var dst ggml.Tensor
			switch s.variant {
			case "dst_view":
				pad := int64(5) // elements, or one block of a quantized dst
				if s.dst.Quantized() {
					pad = int64(s.dst.BlockElems())
				}
				base := b.New("dst_base", s.dst, ne0+pad, ne1+3, d2, d3)
				nb := base.Nb()
				dst = b.View4D(base, dstNe, 2*nb[1]+3*uint64(s.dst.Size()))
				b.Check(base)
			case "kv_slice":
				base := b.New("cache", s.dst, ne0, ne1, d2, 2*d3)
				nb := base.Nb()
				dst = b.View4D(base, dstNe, nb[3]*uint64(d3))
				b.Check(base)
			default:
				// The output is a view of the whole of dst.
				dst = b.New("dst", s.dst, dstNe[:]...)
			}

			vals := b.New("src", s.src, ne0, s.r, d2, d3)
			rows := b.New("row_idxs", s.idx, s.r, s.ne[2], s.ne[3])
			b.Init(rows, DistinctRows(int(ne1), int(s.r)))
			if s.variant == "view" {
				vnb, rnb := vals.Nb(), rows.Nb()
				vals = l.View4D(ctx, vals, ne0, s.r/2, d2, d3, vnb[1], vnb[2], vnb[3], 0)
				rows = l.View3D(ctx, rows, s.r/2, s.ne[2], s.ne[3], rnb[1], rnb[2], 0)
			}
			return l.SetRows(ctx, dst, vals, rows)
		}}
}
