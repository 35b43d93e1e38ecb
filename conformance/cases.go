package conformance

import (
	"fmt"
	"math"
	"math/rand"
	"strings"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The families below are modelled on ggml's tests/test-backend-ops.cpp (test_bin_bcast,
// test_scale, test_norm, test_rms_norm, test_cpy, test_cont, test_dup, test_get_rows,
// test_set_rows, test_mul_mat, test_soft_max, test_rope, test_unary, test_glu,
// test_glu_split), kept small enough for lavapipe.

const (
	f32 = tensor.F32
	f16 = tensor.F16
)

// Cases returns the whole suite, in report order.
func Cases() []*Case {
	var cs []*Case
	cs = append(cs, binaryCases()...)
	cs = append(cs, scaleCases()...)
	cs = append(cs, normCases()...)
	cs = append(cs, copyCases()...)
	cs = append(cs, getRowsCases()...)
	cs = append(cs, setRowsCases()...)
	cs = append(cs, mulMatCases()...)
	cs = append(cs, mulMatBigCases()...)
	cs = append(cs, quantCases()...)
	cs = append(cs, softMaxCases()...)
	cs = append(cs, ropeCases()...)
	cs = append(cs, unaryCases()...)
	cs = append(cs, gluCases()...)
	cs = append(cs, graphCases()...)
	cs = append(cs, quantCopyCases()...)
	cs = append(cs, moeCases()...)
	cs = append(cs, bf16Cases()...)
	cs = append(cs, elemCases()...)
	cs = append(cs, faCases()...)
	cs = append(cs, faChainCases()...)
	cs = append(cs, kvStoreCases()...)
	cs = append(cs, addNormCases()...)
	cs = append(cs, matVecNormCases()...)
	cs = append(cs, halfCases()...)
	cs = append(cs, mulMatDequantCases()...)
	cs = append(cs, mmPairCases()...)
	cs = append(cs, qkvCases()...)
	cs = append(cs, normRegCases()...)
	cs = append(cs, faReduceCases()...)
	cs = append(cs, mulMatSwarCases()...)
	cs = append(cs, normGateCases()...)
	cs = append(cs, normQKVCases()...)
	cs = append(cs, faOutCases()...)
	cs = append(cs, normQKVRopeCases()...)
	cs = append(cs, multiRopeCases()...)
	cs = append(cs, ssmCases()...)
	cs = append(cs, gdnStoreCases()...)
	cs = append(cs, encoderCases()...)
	cs = append(cs, elemChainCases()...)
	cs = append(cs, elemChainUnfusedCases()...)
	cs = append(cs, normScaleCases()...)
	cs = append(cs, ssmConvActCases()...)
	return append(cs, placedCases(cs)...)
}

// placedCases are the fused patterns' cases (GRAPH, KV_STORE) again with their results
// placed by ggml-alloc (Case.Placed), as a model's compute buffer places them: a result
// over the memory of one no later node reads, which the fusions' guards must refuse or
// the kernels handle. Those already placed are not repeated.
func placedCases(cs []*Case) []*Case {
	var out []*Case
	for _, c := range cs {
		if (c.Op != "GRAPH" && c.Op != "KV_STORE") || c.Placed || !strings.HasSuffix(c.Name, ")") {
			continue
		}
		p := *c
		p.Name = strings.TrimSuffix(c.Name, ")") + ",placed)"
		p.Placed = true
		out = append(out, &p)
	}
	return out
}

// Filter returns the cases whose name or op family contains substr, or one of its
// alternatives separated by "|" (case-insensitive); an empty substr keeps all.
func Filter(cases []*Case, substr string) []*Case {
	return filterNamed(cases, substr, func(c *Case) (string, string) { return c.Name, c.Op })
}

// filterNamed returns the items whose name or op (named) contains substr, or one of its
// alternatives separated by "|" (case-insensitive); an empty substr keeps all.
func filterNamed[T any](items []T, substr string, named func(T) (name, op string)) []T {
	if substr == "" {
		return items
	}
	alts := strings.Split(strings.ToLower(substr), "|")
	var out []T
	for _, it := range items {
		name, op := named(it)
		for _, s := range alts {
			if strings.Contains(strings.ToLower(name), s) || strings.Contains(strings.ToLower(op), s) {
				out = append(out, it)
				break
			}
		}
	}
	return out
}

// mul4 multiplies two shapes element-wise.
func mul4(a, b [4]int64) [4]int64 {
	return [4]int64{a[0] * b[0], a[1] * b[1], a[2] * b[2], a[3] * b[3]}
}

// ---------------------------------------------------------------------------------------
// ADD, SUB, MUL, DIV

type binOp struct {
	name    string
	op      func(l *ggml.Lib, ctx ggml.Context, a, b ggml.Tensor) ggml.Tensor
	inplace func(l *ggml.Lib, ctx ggml.Context, a, b ggml.Tensor) ggml.Tensor
}

var binOps = []binOp{
	{"ADD", (*ggml.Lib).Add, (*ggml.Lib).AddInplace},
	{"SUB", (*ggml.Lib).Sub, (*ggml.Lib).SubInplace},
	{"MUL", (*ggml.Lib).Mul, (*ggml.Lib).MulInplace},
	{"DIV", (*ggml.Lib).Div, (*ggml.Lib).DivInplace},
}

// binVariant describes how the sources of a binary case are laid out.
type binVariant int

const (
	binPlain       binVariant = iota
	binPerm1                  // src1 permuted with {1,2,0,3}: non-contiguous, also in dim 0
	binPerm0                  // src0 permuted with {0,2,1,3}: non-contiguous rows
	binView0                  // src0 a view with offset and padded strides
	binView1                  // src1 a view with offset and padded strides
	binInplace                // ggml_*_inplace: the output aliases src0
	binInplaceView            // in place on a view with offset of a larger tensor
	binOverlap                // src0 and src1 overlapping views of one tensor
	binVariantCount
)

var binVariantNames = [...]string{"", ",perm1", ",perm0", ",view0", ",view1", ",inplace", ",inplace_view", ",overlap"}

func binaryCases() []*Case {
	type shp struct{ ne, nr [4]int64 }
	shapes := []shp{
		{shape(1), shape(1)},
		{shape(7), shape(1)},
		{shape(33), shape(1)},
		{shape(4097), shape(1)},
		{shape(16, 10), shape(1)},
		{shape(10, 5, 4, 3), shape(1)},
		{shape(10, 5, 4, 3), shape(2, 1, 1, 1)},
		{shape(10, 5, 4, 3), shape(1, 2, 1, 1)},
		{shape(10, 5, 4, 3), shape(1, 1, 2, 1)},
		{shape(10, 5, 4, 3), shape(1, 1, 1, 2)},
		{shape(10, 5, 4, 3), shape(1, 1, 2, 2)},
		{shape(10, 5, 4, 3), shape(1, 2, 2, 2)},
		{shape(10, 5, 4, 3), shape(2, 2, 2, 2)},
		{shape(16), shape(1, 3, 2, 2)},
		{shape(7), shape(1, 7, 3, 2)},
		{shape(1), shape(33, 2, 1, 1)},
		{shape(1, 5, 1, 3), shape(7, 1, 4, 1)},
		{shape(4097), shape(1, 2, 1, 1)},
	}
	type variant struct {
		v      binVariant
		ne, nr [4]int64
	}
	var all []variant
	for _, s := range shapes {
		all = append(all, variant{binPlain, s.ne, s.nr})
	}
	all = append(all,
		variant{binPerm1, shape(10, 5, 4, 3), shape(1)},
		variant{binPerm1, shape(10, 5, 4, 3), shape(1, 2, 1, 1)},
		variant{binPerm0, shape(10, 5, 4, 3), shape(1)},
		variant{binPerm0, shape(10, 1, 4, 1), shape(1, 5, 1, 3)},
		variant{binView0, shape(10, 5, 4, 3), shape(1)},
		variant{binView1, shape(10, 1, 4, 1), shape(1, 5, 1, 3)},
		variant{binInplace, shape(10, 5, 4, 3), shape(1)},
		variant{binInplace, shape(10, 1, 4, 1), shape(1, 5, 1, 3)},
		variant{binInplaceView, shape(33, 3, 2, 1), shape(1)},
		variant{binOverlap, shape(10, 5, 4, 3), shape(1)},
	)
	var cs []*Case
	for _, op := range binOps {
		for _, v := range all {
			cs = append(cs, binaryCase(op, v.v, v.ne, v.nr))
		}
	}
	return cs
}

func binaryCase(op binOp, v binVariant, ne, nr [4]int64) *Case {
	neA := mul4(ne, nr)
	name := fmt.Sprintf("%s(type=f32,ne=%s,nr=%s%s)", op.name, fmtNe(ne), fmtNe(nr), binVariantNames[v])
	c := &Case{Name: name, Op: op.name, Types: "f32", MaxNMSE: DefaultMaxNMSE}
	c.Build = func(b *Builder) ggml.Tensor {
		l, ctx := b.L, b.Ctx
		divisor := func(t ggml.Tensor) {
			if op.name == "DIV" {
				b.Init(t, AwayFromZero(0.5, 1.5))
			}
		}
		var a, y ggml.Tensor
		// src0
		switch v {
		case binPerm0:
			p := [4]int{0, 2, 1, 3}
			s := permuteShape(neA, p)
			a = b.Permute(b.New("a", f32, s[:]...), p)
		case binView0, binInplaceView:
			x := b.New("a_base", f32, neA[0]+3, neA[1]+1, neA[2], neA[3])
			nb := x.Nb()
			a = b.View4D(x, neA, nb[1]+2*4)
			if v == binInplaceView {
				b.Check(x)
			}
		case binOverlap:
			x := b.New("a", f32, neA[:]...)
			if op.name == "DIV" {
				b.Init(x, AwayFromZero(0.5, 1.5))
			}
			sub := neA
			sub[3] = 2 * (neA[3] / 3)
			a = b.View4D(x, sub, 0)
			y = b.View4D(x, sub, uint64(neA[3]/3)*x.Nb()[3])
			return op.op(l, ctx, a, y)
		default:
			a = b.New("a", f32, neA[:]...)
		}
		// src1
		switch v {
		case binPerm1:
			p := [4]int{1, 2, 0, 3}
			s := permuteShape(ne, p)
			t := b.New("b", f32, s[:]...)
			divisor(t)
			y = b.Permute(t, p)
		case binView1:
			t := b.New("b_base", f32, ne[0]+2, ne[1]+2, ne[2], ne[3])
			divisor(t)
			y = b.View4D(t, ne, t.Nb()[1]+1*4)
		default:
			y = b.New("b", f32, ne[:]...)
			divisor(y)
		}
		if v == binInplace || v == binInplaceView {
			return op.inplace(l, ctx, a, y)
		}
		return op.op(l, ctx, a, y)
	}
	return c
}

// ---------------------------------------------------------------------------------------
// SCALE

func scaleCases() []*Case {
	var cs []*Case
	shapes := [][4]int64{shape(1), shape(7), shape(33), shape(4097), shape(10, 5, 4, 3)}
	for _, ne := range shapes {
		for _, bias := range []bool{false, true} {
			cs = append(cs, scaleCase(ne, 2.5, bias, false, false))
		}
	}
	cs = append(cs,
		scaleCase(shape(10, 5, 4, 3), 0.125, false, true, false),
		scaleCase(shape(4097), -3, true, true, false),
		scaleCase(shape(33, 7), 0.75, true, false, true),
		scaleCase(shape(33, 7), 1.5, false, true, true),
	)
	return cs
}

func scaleCase(ne [4]int64, s float32, withBias, inplace, view bool) *Case {
	const bias = -0.625
	name := fmt.Sprintf("SCALE(type=f32,ne=%s,scale=%g", fmtNe(ne), s)
	if withBias {
		name += fmt.Sprintf(",bias=%g", float32(bias))
	}
	if inplace {
		name += ",inplace"
	}
	if view {
		name += ",view"
	}
	name += ")"
	return &Case{Name: name, Op: "SCALE", Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			var a ggml.Tensor
			if view {
				// A contiguous view at an offset inside a larger tensor.
				x := b.New("a_base", f32, ne[0]*ne[1]+11)
				a = l.View2D(ctx, x, ne[0], ne[1], uint64(ne[0])*4, 5*4)
				b.Check(x)
			} else {
				a = b.New("a", f32, ne[:]...)
			}
			switch {
			case withBias && inplace:
				return l.ScaleBiasInplace(ctx, a, s, bias)
			case withBias:
				return l.ScaleBias(ctx, a, s, bias)
			case inplace:
				return l.ScaleInplace(ctx, a, s)
			}
			return l.Scale(ctx, a, s)
		}}
}

// ---------------------------------------------------------------------------------------
// RMS_NORM, NORM

func normCases() []*Case {
	var cs []*Case
	for _, op := range []string{"RMS_NORM", "NORM"} {
		eps := float32(1e-6)
		if op == "NORM" {
			eps = 1e-5
		}
		for _, ne := range [][4]int64{shape(1, 3), shape(7, 3), shape(33, 3), shape(4097, 2), shape(64, 5, 4, 3)} {
			cs = append(cs, normCase(op, ne, eps, ""))
		}
		cs = append(cs,
			normCase(op, shape(33, 3), 1e-3, ""),
			normCase(op, shape(64, 5, 4, 3), 0, ""),
			normCase(op, shape(64, 5, 4, 3), eps, "perm"),
			normCase(op, shape(33, 5, 2, 1), eps, "view"),
			normCase(op, shape(7, 4, 3, 2), eps, "perm"),
		)
	}
	return append(cs, normMoreCases()...)
}

func normCase(op string, ne [4]int64, eps float32, variant string) *Case {
	name := fmt.Sprintf("%s(type=f32,ne=%s,eps=%g", op, fmtNe(ne), eps)
	if variant != "" {
		name += "," + variant
	}
	name += ")"
	return &Case{Name: name, Op: op, Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Init: Uniform(-10, 10),
		Build: func(b *Builder) ggml.Tensor {
			var a ggml.Tensor
			switch variant {
			case "perm":
				p := [4]int{0, 2, 1, 3}
				s := permuteShape(ne, p)
				a = b.Permute(b.New("a", f32, s[:]...), p)
			case "view":
				x := b.New("a_base", f32, ne[0]+7, ne[1]+1, ne[2], ne[3])
				a = b.View4D(x, ne, x.Nb()[1]+4*4)
			default:
				a = normLayout(b, ne, variant)
			}
			switch {
			case op == "NORM" && variant == "inplace":
				return b.L.NormInplace(b.Ctx, a, eps)
			case op == "NORM":
				return b.L.Norm(b.Ctx, a, eps)
			case op == "L2_NORM" && variant == "inplace":
				return b.L.L2NormInplace(b.Ctx, a, eps)
			case op == "L2_NORM":
				return b.L.L2Norm(b.Ctx, a, eps)
			case variant == "inplace":
				return b.L.RMSNormInplace(b.Ctx, a, eps)
			}
			return b.L.RMSNorm(b.Ctx, a, eps)
		}}
}

// ---------------------------------------------------------------------------------------
// CPY, CONT, DUP

func copyThreshold(src, dst tensor.Type) float64 {
	if src == dst {
		return ExactMaxNMSE
	}
	return DefaultThreshold(src == f16 || dst == f16)
}

func copyCases() []*Case {
	var cs []*Case
	pairs := [][2]tensor.Type{{f32, f32}, {f32, f16}, {f16, f32}, {f16, f16}}
	for _, tp := range pairs {
		for _, ne := range [][4]int64{shape(7), shape(33, 3), shape(4097), shape(10, 5, 4, 3)} {
			cs = append(cs, cpyCase(tp[0], tp[1], ne, "", [4]int{}))
		}
		for _, p := range [][4]int{{1, 0, 2, 3}, {0, 2, 1, 3}, {2, 3, 0, 1}} {
			cs = append(cs, cpyCase(tp[0], tp[1], shape(10, 5, 4, 3), "src_perm", p))
		}
		cs = append(cs,
			cpyCase(tp[0], tp[1], shape(10, 5, 4, 3), "dst_perm", [4]int{0, 2, 1, 3}),
			cpyCase(tp[0], tp[1], shape(33, 7), "dst_perm", [4]int{1, 0, 2, 3}),
			cpyCase(tp[0], tp[1], shape(10, 5, 3), "src_view", [4]int{}),
			cpyCase(tp[0], tp[1], shape(10, 5, 3), "dst_view", [4]int{}),
			cpyCase(tp[0], tp[1], shape(12, 5), "reshape", [4]int{}),
		)
	}
	for _, t := range []tensor.Type{f32, f16} {
		cs = append(cs,
			contCase("CONT", t, shape(33, 7), "transpose", [4]int{1, 0, 2, 3}),
			contCase("CONT", t, shape(10, 5, 4, 3), "perm", [4]int{0, 2, 1, 3}),
			contCase("CONT", t, shape(10, 5, 4, 3), "perm", [4]int{2, 0, 1, 3}),
			contCase("CONT", t, shape(10, 5, 3), "view", [4]int{}),
			contCase("DUP", t, shape(10, 5, 4, 3), "", [4]int{}),
			contCase("DUP", t, shape(10, 5, 4, 3), "perm", [4]int{0, 2, 1, 3}),
			contCase("DUP", t, shape(33, 7), "transpose", [4]int{1, 0, 2, 3}),
			contCase("DUP", t, shape(10, 5, 3), "view", [4]int{}),
		)
	}
	return cs
}

// cpyCase copies a source of type src and logical shape ne into a destination of type dst.
func cpyCase(src, dst tensor.Type, ne [4]int64, variant string, p [4]int) *Case {
	name := fmt.Sprintf("CPY(type_src=%s,type_dst=%s,ne=%s", src, dst, fmtNe(ne))
	switch variant {
	case "src_perm", "dst_perm":
		name += fmt.Sprintf(",%s=%s", variant, fmtPerm(p))
	case "":
	default:
		name += "," + variant
	}
	name += ")"
	return &Case{Name: name, Op: "CPY", Types: src.String() + "->" + dst.String(),
		MaxNMSE: copyThreshold(src, dst),
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			var a, d ggml.Tensor
			switch variant {
			case "src_perm":
				s := permuteShape(ne, p)
				a = b.Permute(b.New("a", src, s[:]...), p)
			case "src_view":
				x := b.New("a_base", src, ne[0]+2, ne[1]+2, ne[2]+1, ne[3])
				a = b.View4D(x, ne, x.Nb()[1]+2*uint64(src.Size()))
			default:
				a = b.New("a", src, ne[:]...)
			}
			switch variant {
			case "dst_perm":
				s := permuteShape(ne, p)
				base := b.New("d", dst, s[:]...)
				d = b.Permute(base, p)
			case "dst_view":
				base := b.New("d_base", dst, ne[0]+6, ne[1]+3, ne[2], ne[3])
				d = b.View4D(base, ne, base.Nb()[1]*2+3*uint64(dst.Size()))
				b.Check(base)
			case "reshape":
				n := ne[0] * ne[1] * ne[2] * ne[3]
				d = b.New("d", dst, n/3, 3)
			default:
				d = b.New("d", dst, ne[:]...)
			}
			return l.Cpy(ctx, a, d)
		}}
}

// contCase covers CONT (of permuted, transposed and offset-view sources) and DUP.
func contCase(op string, t tensor.Type, ne [4]int64, variant string, p [4]int) *Case {
	name := fmt.Sprintf("%s(type=%s,ne=%s", op, t, fmtNe(ne))
	switch variant {
	case "perm", "transpose":
		name += ",perm=" + fmtPerm(p)
	case "":
	default:
		name += "," + variant
	}
	name += ")"
	return &Case{Name: name, Op: op, Types: t.String(), MaxNMSE: ExactMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			var a ggml.Tensor
			switch variant {
			case "transpose":
				s := permuteShape(ne, p)
				a = l.Transpose(ctx, b.New("a", t, s[:]...))
			case "perm":
				s := permuteShape(ne, p)
				a = b.Permute(b.New("a", t, s[:]...), p)
			case "view":
				x := b.New("a_base", t, ne[0]+5, ne[1]+1, ne[2], ne[3])
				a = b.View4D(x, ne, x.Nb()[1]+1*uint64(t.Size()))
			default:
				a = b.New("a", t, ne[:]...)
			}
			if op == "DUP" {
				return l.Dup(ctx, a)
			}
			return l.Cont(ctx, a)
		}}
}

// ---------------------------------------------------------------------------------------
// GET_ROWS

func getRowsCases() []*Case {
	type shp struct {
		src [4]int64 // [n_embd, rows, ne2, ne3]
		n   int64    // indices per batch
		v   bool     // source is a view with padded rows and an offset
	}
	shapes := []shp{
		{shape(10, 5), 3, false},
		{shape(1, 8), 5, false},
		{shape(33, 7), 9, false},
		{shape(4097, 3), 2, false},
		{shape(16, 5, 3), 4, false},
		{shape(16, 5, 3, 2), 4, false},
		{shape(7, 6, 2, 2), 1, false},
		{shape(16, 5), 3, true},
	}
	var cs []*Case
	for _, t := range []tensor.Type{f32, f16} {
		for _, s := range shapes {
			cs = append(cs, getRowsCase(t, s.src, s.n, s.v))
		}
	}
	return cs
}

func getRowsCase(t tensor.Type, src [4]int64, n int64, view bool) *Case {
	name := fmt.Sprintf("GET_ROWS(type=%s,ne=%s,n=%d", t, fmtNe(src), n)
	if view {
		name += ",view"
	}
	name += ")"
	return &Case{Name: name, Op: "GET_ROWS", Types: t.String() + "[i32]",
		MaxNMSE: DefaultThreshold(t == f16),
		Build: func(b *Builder) ggml.Tensor {
			var a ggml.Tensor
			if view {
				// rows padded by 4 elements (2 blocks when quantized), starting 3 elements
				// (2 blocks) into the second row
				pad, off := int64(4), 3*uint64(t.Size())
				if t.Quantized() {
					pad, off = 2*int64(t.BlockElems()), 2*uint64(t.Size())
				}
				x := b.New("a_base", t, src[0]+pad, src[1]+1, src[2], src[3])
				a = b.View4D(x, src, x.Nb()[1]+off)
			} else {
				a = b.New("a", t, src[:]...)
			}
			idx := b.Index("rows", src[1], n, src[2], src[3])
			return b.L.GetRows(b.Ctx, a, idx)
		}}
}

// ---------------------------------------------------------------------------------------
// MUL_MAT

type mmSpec struct {
	ta          tensor.Type
	tb          tensor.Type // src1's type (the zero value: F32)
	m, n, k     int64
	bs, nr      [2]int64
	per         [4]int // permutation applied to both sources (identity: none)
	perB        bool   // permute only src1 with {0,2,1,3}
	padA, padB  bool   // sources are views with padded rows (k_v style) and an offset
	description string
}

func mulMatCases() []*Case {
	sizes := []int64{1, 7, 16, 33, 64, 129}
	var cs []*Case
	for _, ta := range []tensor.Type{f32, f16} {
		for i, m := range sizes {
			for j, n := range sizes {
				k := int64(48)
				if (i+j)%2 == 1 {
					k = 37
				}
				cs = append(cs, mulMatCase(mmSpec{ta: ta, m: m, n: n, k: k, bs: [2]int64{1, 1}, nr: [2]int64{1, 1}}))
			}
		}
		for _, k := range []int64{1, 2, 3, 8, 255, 256, 1025} {
			cs = append(cs, mulMatCase(mmSpec{ta: ta, m: 16, n: 7, k: k, bs: [2]int64{1, 1}, nr: [2]int64{1, 1}}))
		}
		// the mat-vec's two chunks a loop turn (5 columns and more, 4096 rows and more, rows
		// of 4096 elements and more), with a last chunk apart: of one element group (k =
		// 4104: 16 chunks of its 32 invocations and 8 elements) and of a whole chunk (4352)
		for _, k := range []int64{4104, 4352} {
			cs = append(cs, mulMatCase(mmSpec{ta: ta, m: 4100, n: 6, k: k, bs: [2]int64{1, 1}, nr: [2]int64{1, 1}}))
		}
		// k = 33 takes the element-wise kernels, k = 72 the vectorised ones (rows read 8
		// elements at a time) with a partial last K slice in the tiled kernel.
		for _, k := range []int64{33, 72} {
			for _, n := range []int64{1, 4, 16, 67} {
				for _, bn := range [][2][2]int64{{{3, 2}, {1, 1}}, {{3, 2}, {2, 1}}, {{3, 2}, {1, 2}}, {{3, 2}, {2, 2}}, {{1, 1}, {2, 3}}} {
					cs = append(cs, mulMatCase(mmSpec{ta: ta, m: 70, n: n, k: k, bs: bn[0], nr: bn[1]}))
				}
			}
		}
		for _, n := range []int64{1, 8} {
			for _, p := range [][4]int{{0, 2, 1, 3}, {0, 1, 3, 2}, {0, 3, 2, 1}} {
				cs = append(cs, mulMatCase(mmSpec{ta: ta, m: 16, n: n, k: 32, bs: [2]int64{2, 3}, nr: [2]int64{1, 1}, per: p}))
			}
		}
		cs = append(cs,
			mulMatCase(mmSpec{ta: ta, m: 33, n: 7, k: 64, bs: [2]int64{4, 1}, nr: [2]int64{1, 1}, perB: true}),
			mulMatCase(mmSpec{ta: ta, m: 16, n: 1, k: 64, bs: [2]int64{2, 1}, nr: [2]int64{2, 1}, perB: true}),
			mulMatCase(mmSpec{ta: ta, m: 33, n: 7, k: 40, bs: [2]int64{2, 1}, nr: [2]int64{1, 1}, padA: true}),
			mulMatCase(mmSpec{ta: ta, m: 16, n: 9, k: 40, bs: [2]int64{1, 1}, nr: [2]int64{1, 1}, padB: true}),
		)
	}
	// F16 activations (ggml_conv_2d: the input's columns by an F16 kernel), on the plain
	// mat-vec and tiled kernels: F16 weights (the CPU backend takes no others), broadcast
	// batches, permuted and padded activations, a patch embedding's shape.
	for _, ta := range []tensor.Type{f16} {
		for _, n := range []int64{1, 4, 67} {
			cs = append(cs, mulMatCase(mmSpec{ta: ta, tb: f16, m: 70, n: n, k: 72, bs: [2]int64{3, 2}, nr: [2]int64{2, 1}}),
				mulMatCase(mmSpec{ta: ta, tb: f16, m: 33, n: n, k: 33, bs: [2]int64{1, 1}, nr: [2]int64{1, 1}}))
		}
		cs = append(cs,
			mulMatCase(mmSpec{ta: ta, tb: f16, m: 16, n: 8, k: 32, bs: [2]int64{2, 3}, nr: [2]int64{1, 1}, per: [4]int{0, 2, 1, 3}}),
			mulMatCase(mmSpec{ta: ta, tb: f16, m: 33, n: 7, k: 64, bs: [2]int64{4, 1}, nr: [2]int64{1, 1}, perB: true}),
			mulMatCase(mmSpec{ta: ta, tb: f16, m: 16, n: 9, k: 40, bs: [2]int64{1, 1}, nr: [2]int64{1, 1}, padB: true}))
	}
	cs = append(cs, mulMatCase(mmSpec{ta: f16, tb: f16, m: 256, n: 64, k: 588, bs: [2]int64{1, 1}, nr: [2]int64{1, 1}}))
	// The large-tile kernel (prompts: at least 128 rows and columns and 256 tiles of 128 x
	// 128), partial tiles at both edges, vectorised and element-wise loads.
	big := [2]int64{8, 8}
	cs = append(cs,
		mulMatCase(mmSpec{ta: f16, m: 256, n: 130, k: 64, bs: big, nr: [2]int64{1, 1}}),
		mulMatCase(mmSpec{ta: f32, m: 250, n: 256, k: 40, bs: big, nr: [2]int64{2, 1}}),
		mulMatCase(mmSpec{ta: f16, m: 256, n: 129, k: 33, bs: big, nr: [2]int64{1, 1}}),
		mulMatCase(mmSpec{ta: tensor.Q4_0, m: 256, n: 256, k: 64, bs: big, nr: [2]int64{1, 1}, padB: true}),
		mulMatCase(mmSpec{ta: tensor.Q4_K, m: 129, n: 256, k: 256, bs: big, nr: [2]int64{1, 1}}),
	)
	return cs
}

func mulMatCase(s mmSpec) *Case {
	ident := [4]int{0, 1, 2, 3}
	name := fmt.Sprintf("MUL_MAT(type_a=%s,type_b=%s,m=%d,n=%d,k=%d,bs=[%d,%d],nr=[%d,%d]",
		s.ta, s.tb, s.m, s.n, s.k, s.bs[0], s.bs[1], s.nr[0], s.nr[1])
	if s.per != ident && s.per != [4]int{} {
		name += ",per=" + fmtPerm(s.per)
	}
	if s.perB {
		name += ",perm_b=[0,2,1,3]"
	}
	if s.padA {
		name += ",view_a"
	}
	if s.padB {
		name += ",view_b"
	}
	name += ")"
	return &Case{Name: name, Op: "MUL_MAT", Types: s.ta.String() + " x " + s.tb.String(), MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			neA := [4]int64{s.k, s.m, s.bs[0], s.bs[1]}
			neB := [4]int64{s.k, s.n, s.bs[0] * s.nr[0], s.bs[1] * s.nr[1]}
			var a, y ggml.Tensor
			switch {
			case s.per != ident && s.per != [4]int{}:
				pa, pb := permuteShape(neA, s.per), permuteShape(neB, s.per)
				a = b.Permute(b.New("a", s.ta, pa[:]...), s.per)
				y = b.Permute(b.New("b", s.tb, pb[:]...), s.per)
			default:
				if s.padA {
					// rows padded by 6 elements (2 blocks when quantized), starting 2
					// elements (blocks) into the second row
					pad := int64(6)
					if s.ta.Quantized() {
						pad = 2 * int64(s.ta.BlockElems())
					}
					x := b.New("a_base", s.ta, s.k+pad, s.m+1, neA[2], neA[3])
					a = b.View4D(x, neA, x.Nb()[1]+2*uint64(s.ta.Size()))
				} else {
					a = b.New("a", s.ta, neA[:]...)
				}
				switch {
				case s.perB:
					p := [4]int{0, 2, 1, 3}
					pb := permuteShape(neB, p)
					y = b.Permute(b.New("b", s.tb, pb[:]...), p)
				case s.padB:
					x := b.New("b_base", s.tb, s.k+3, s.n+2, neB[2], neB[3])
					y = b.View4D(x, neB, x.Nb()[1]*2+uint64(s.tb.Size()))
				default:
					y = b.New("b", s.tb, neB[:]...)
				}
			}
			return b.L.MulMat(b.Ctx, a, y)
		}}
}

// ---------------------------------------------------------------------------------------
// SOFT_MAX

type smSpec struct {
	ne       [4]int64
	ext      bool        // use ggml_soft_max_ext (else ggml_soft_max)
	mask     tensor.Type // mask type when hasMask
	hasMask  bool
	maskNe   [4]int64 // mask shape (rows may exceed ne[1]; dims 2,3 may broadcast)
	causal   bool     // mask holds 0 / -inf in a causal pattern
	scale    float32
	maxBias  float32
	variants string
}

func softMaxCases() []*Case {
	var cs []*Case
	for _, ne := range [][4]int64{shape(1, 1), shape(7, 3), shape(33, 5), shape(4097, 2), shape(16, 5, 4, 3)} {
		cs = append(cs, softMaxCase(smSpec{ne: ne, scale: 1}))
	}
	cs = append(cs,
		softMaxCase(smSpec{ne: shape(33, 5), ext: true, scale: 0.5}),
		softMaxCase(smSpec{ne: shape(64, 7, 2, 1), ext: true, scale: 0.125}),
	)
	for _, mt := range []tensor.Type{f32, f16} {
		cs = append(cs,
			softMaxCase(smSpec{ne: shape(33, 5), ext: true, hasMask: true, mask: mt, maskNe: shape(33, 5), scale: 1}),
			softMaxCase(smSpec{ne: shape(64, 7, 4, 3), ext: true, hasMask: true, mask: mt, maskNe: shape(64, 7, 4, 3), scale: 0.125}),
			softMaxCase(smSpec{ne: shape(64, 7, 4, 3), ext: true, hasMask: true, mask: mt, maskNe: shape(64, 7, 1, 1), scale: 0.125}),
			softMaxCase(smSpec{ne: shape(32, 5, 4, 2), ext: true, hasMask: true, mask: mt, maskNe: shape(32, 5, 2, 1), scale: 0.5}),
			softMaxCase(smSpec{ne: shape(32, 5, 2, 1), ext: true, hasMask: true, mask: mt, maskNe: shape(32, 8, 1, 1), scale: 1}),
			softMaxCase(smSpec{ne: shape(16, 16, 4, 1), ext: true, hasMask: true, mask: mt, maskNe: shape(16, 16, 1, 1), causal: true, scale: 0.25}),
			softMaxCase(smSpec{ne: shape(4097, 2), ext: true, hasMask: true, mask: mt, maskNe: shape(4097, 2), scale: 1}),
		)
	}
	return cs
}

func softMaxCase(s smSpec) *Case {
	name := fmt.Sprintf("SOFT_MAX(type=f32,ne=%s", fmtNe(s.ne))
	types := "f32"
	if s.hasMask {
		name += fmt.Sprintf(",mask=%s%s", s.mask, fmtNe(s.maskNe))
		types = "f32, mask " + s.mask.String()
		if s.causal {
			name += ",causal"
		}
	}
	if s.ext {
		name += fmt.Sprintf(",scale=%g,max_bias=%g", s.scale, s.maxBias)
	}
	name += ")"
	return &Case{Name: name, Op: "SOFT_MAX", Types: types, MaxNMSE: SoftMaxMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			a := b.New("a", f32, s.ne[:]...)
			if !s.ext {
				return b.L.SoftMax(b.Ctx, a)
			}
			var mask ggml.Tensor
			if s.hasMask {
				mask = b.New("mask", s.mask, s.maskNe[:]...)
				if s.causal {
					b.Init(mask, causalMask(s.maskNe[0], s.maskNe[1], 0))
				}
			}
			return b.L.SoftMaxExt(b.Ctx, a, mask, s.scale, s.maxBias)
		}}
}

// causalMask fills [n_kv, rows, ...] masks: 0 where kv <= row + past, -inf elsewhere (row
// 0 always sees past+1 positions, so no row is fully masked).
func causalMask(nkv, rows, past int64) InitFunc {
	return func(_ *rand.Rand, n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			kv := int64(i) % nkv
			q := (int64(i) / nkv) % rows
			if kv > q+past {
				v[i] = float32(math.Inf(-1))
			}
		}
		return v
	}
}

// ---------------------------------------------------------------------------------------
// UNARY (SILU, GELU)

// GELUNarrowMaxNMSE is the threshold of GELU on inputs in [-1,1]: there the CPU backend
// looks GELU up in an F16 table (GGML_GELU_FP16), which alone is ~9e-8 away from the exact
// function, so a correct device would sit at the default threshold. test-backend-ops allows
// GELU 5e-7 for the same reason in its fused-unary cases.
const GELUNarrowMaxNMSE = 5e-7

func unaryCases() []*Case {
	var cs []*Case
	for _, op := range []string{"SILU", "GELU"} {
		for _, ne := range [][4]int64{shape(1), shape(7), shape(33), shape(4097), shape(10, 5, 4, 3), shape(128, 2, 2, 2)} {
			cs = append(cs, unaryCase(op, f32, ne, false, false))
		}
		cs = append(cs,
			unaryCase(op, f32, shape(10, 5, 4, 3), true, false),
			unaryCase(op, f32, shape(33), false, true),
			unaryCase(op, f32, shape(10, 5, 4, 3), true, true),
			unaryCase(op, f16, shape(7), false, false),
			unaryCase(op, f16, shape(10, 5, 4, 3), false, false),
			unaryCase(op, f16, shape(10, 5, 4, 3), true, false),
		)
	}
	return cs
}

// unaryCase applies SILU or GELU; view makes the source a view of a 3x wider tensor (rows not
// adjacent). Inputs are drawn from [-150,150] as test-backend-ops does (overflow, NaNs), or
// from [-1,1] when narrow. F16 cases are optional.
func unaryCase(op string, t tensor.Type, ne [4]int64, view, narrow bool) *Case {
	name := fmt.Sprintf("UNARY(op=%s,type=%s,ne=%s", op, t, fmtNe(ne))
	if view {
		name += ",view"
	}
	init := Uniform(-150, 150)
	if narrow {
		name += ",range=1"
		init = Uniform(-1, 1)
	}
	name += ")"
	max := DefaultThreshold(t == f16)
	if op == "GELU" && narrow {
		max = GELUNarrowMaxNMSE
	}
	return &Case{Name: name, Op: "UNARY(" + op + ")", Types: t.String(),
		MaxNMSE: max, Optional: t == f16, Init: init,
		Build: func(b *Builder) ggml.Tensor {
			var a ggml.Tensor
			if view {
				x := b.New("a_base", t, 3*ne[0], ne[1], ne[2], ne[3])
				a = b.View4D(x, ne, 0)
			} else {
				a = b.New("a", t, ne[:]...)
			}
			if op == "GELU" {
				return b.L.GELU(b.Ctx, a)
			}
			return b.L.SiLU(b.Ctx, a)
		}}
}

// ---------------------------------------------------------------------------------------
// GLU (SWIGLU)

func gluCases() []*Case {
	var cs []*Case
	for _, split := range []bool{false, true} {
		for _, ne := range [][4]int64{shape(1, 3), shape(7, 3), shape(33, 3), shape(4097, 1), shape(64, 2, 2, 2)} {
			cs = append(cs, gluCase(f32, ne, split, false, false))
		}
		cs = append(cs,
			gluCase(f32, shape(64, 2, 2, 2), split, true, false),
			gluCase(f32, shape(33, 3), split, false, true),
			gluCase(f32, shape(64, 2, 2, 2), split, true, true),
			gluCase(f16, shape(64, 2, 2, 2), split, false, false),
		)
	}
	return cs
}

// gluCase builds SWIGLU producing rows of ne[0] outputs: the fused form reads rows of
// 2*ne[0] (gate first), the split form two tensors of shape ne. Inputs come from
// [-150,150] as in test-backend-ops, or [-1,1] when narrow. F16 cases are optional.
func gluCase(t tensor.Type, ne [4]int64, split, view, narrow bool) *Case {
	form := "fused"
	if split {
		form = "split"
	}
	name := fmt.Sprintf("GLU(op=SWIGLU,%s,type=%s,ne=%s", form, t, fmtNe(ne))
	if view {
		name += ",view"
	}
	init := Uniform(-150, 150)
	if narrow {
		name += ",range=1"
		init = Uniform(-1, 1)
	}
	name += ")"
	return &Case{Name: name, Op: "GLU(SWIGLU)", Types: t.String() + " " + form,
		MaxNMSE: DefaultThreshold(t == f16), Optional: t == f16, Init: init,
		Build: func(b *Builder) ggml.Tensor {
			src := func(nm string, s [4]int64) ggml.Tensor {
				if view {
					x := b.New(nm+"_base", t, 3*s[0], s[1], s[2], s[3])
					return b.View4D(x, s, 0)
				}
				return b.New(nm, t, s[:]...)
			}
			if split {
				return b.L.SwiGLUSplit(b.Ctx, src("a", ne), src("b", ne))
			}
			s := ne
			s[0] *= 2
			return b.L.SwiGLU(b.Ctx, src("a", s))
		}}
}

// ---------------------------------------------------------------------------------------
// GRAPH: short multi-op graphs in the patterns of a llama decode step, for what a backend
// does across nodes (fusion, hazards between dispatches, in-place chains, shared inputs).

func graphCases() []*Case {
	g := func(name string, max float64, build func(b *Builder) ggml.Tensor) *Case {
		return &Case{Name: "GRAPH(" + name + ")", Op: "GRAPH", Types: "mixed", MaxNMSE: max, Build: build}
	}
	return []*Case{
		g("rms_norm*w,ne=[64,3]", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			x, w := b.New("x", f32, 64, 3), b.New("w", f32, 64)
			return l.Mul(ctx, l.RMSNorm(ctx, x, 1e-6), w)
		}),
		g("rms_norm*w+b,ne=[33,4,2]", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			x, w, y := b.New("x", f32, 33, 4, 2), b.New("w", f32, 33), b.New("b", f32, 33, 4, 2)
			return l.Add(ctx, l.Mul(ctx, l.RMSNorm(ctx, x, 1e-5), w), y)
		}),
		g("add_chain,nf=4,ne=[16,5,3]", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			out := b.New("a", f32, 16, 5, 3)
			for i := 0; i < 4; i++ {
				out = l.Add(ctx, out, b.New(fmt.Sprintf("b%d", i), f32, 16, 5, 1))
			}
			return out
		}),
		g("inplace_chain,ne=[33,7]", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			x := b.New("x", f32, 33, 7)
			y, z := b.New("y", f32, 33), b.New("z", f32, 33, 7)
			b.Init(z, AwayFromZero(0.5, 1.5))
			t := l.AddInplace(ctx, x, y)
			t = l.MulInplace(ctx, t, z)
			t = l.ScaleInplace(ctx, t, 0.5)
			return l.DivInplace(ctx, t, z)
		}),
		g("x+scale(x),inplace,ne=[4097]", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			x := b.New("x", f32, 4097)
			return l.AddInplace(ctx, x, l.Scale(ctx, x, 3))
		}),
		g("shared_input,ne=[64,4]", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			x := b.New("x", f32, 64, 4)
			return l.Sub(ctx, l.Mul(ctx, l.SiLU(ctx, x), x), l.Norm(ctx, x, 1e-5))
		}),
		g("mul_mat+bias,m=33,n=5,k=64", MulMatMaxNMSE, func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			w, x, bias := b.New("w", f16, 64, 33), b.New("x", f32, 64, 5), b.New("bias", f32, 33)
			return l.Add(ctx, l.MulMat(ctx, w, x), bias)
		}),
		g("ffn_swiglu,m=48,n=3,k=32", MulMatMaxNMSE, func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			x := b.New("x", f32, 32, 3)
			gate, up, down := b.New("w_gate", f16, 32, 48), b.New("w_up", f16, 32, 48), b.New("w_down", f16, 48, 32)
			h := l.SwiGLUSplit(ctx, l.MulMat(ctx, gate, x), l.MulMat(ctx, up, x))
			return l.Add(ctx, l.MulMat(ctx, down, h), x)
		}),
		g("get_rows+rms_norm,ne=[64,10],n=4", DefaultThreshold(true), func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			emb := b.New("tok_embd", f16, 64, 10)
			ids := b.Index("ids", 10, 4)
			return l.RMSNorm(ctx, l.GetRows(ctx, emb, ids), 1e-6)
		}),
		g("rope+set_rows(k_cache),hd=32,n_head_kv=2,n_tok=3", DefaultThreshold(true), func(b *Builder) ggml.Tensor {
			// llama's K path: rope the K heads of a fused QKV tensor, then store them into
			// rows of an F16 K cache through I64 cell indices (the whole cache is compared).
			l, ctx := b.L, b.Ctx
			const hd, nq, nkv, nTok, kvSize = 32, 4, 2, 3, 10
			qkv := b.New("qkv", f32, hd*(nq+2*nkv), nTok)
			k := l.View3D(ctx, qkv, hd, nkv, nTok, hd*4, qkv.Nb()[1], hd*nq*4)
			pos := b.Index("pos", 1000, nTok)
			k = l.RopeExt(ctx, k, pos, 0, ropeExtArgs(hd, tensor.RopeNeox, ropePlain))
			cache := b.New("k_cache", f16, hd*nkv, kvSize)
			idx := b.New("k_idxs", tensor.I64, nTok)
			b.Init(idx, DistinctRows(kvSize, nTok))
			return l.SetRows(ctx, cache, l.Reshape4D(ctx, k, hd*nkv, nTok, 1, 1), idx)
		}),
		attentionCase(16, 4, 2, 7, false),
		attentionCase(16, 1, 4, 9, false),
		attentionCase(32, 5, 2, 8, true),
	}
}

// attentionCase is llama's attention without flash attention: Q f32 permuted, K and V f16
// caches read through strided views, KQ = mul_mat(K, Q), soft_max_ext with an F16 causal
// mask and scale, KQV = mul_mat(V, KQ), permute back and cont. vTrans stores V transposed
// (as llama does without flash attention) instead of permuting a [hd, heads, kv] cache.
func attentionCase(hd, nTok, nHead, nKV int64, vTrans bool) *Case {
	name := fmt.Sprintf("GRAPH(attention,hd=%d,n_tok=%d,n_head=%d,n_kv=%d,v_trans=%v)", hd, nTok, nHead, nKV, vTrans)
	return &Case{Name: name, Op: "GRAPH", Types: "mixed", MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			const kvSize = 16 // cache rows; only the first nKV are attended
			q := b.New("q", f32, hd, nHead, nTok)
			kc := b.New("k_cache", f16, hd*nHead, kvSize)
			kcNb := kc.Nb()
			// K view: [hd, n_kv, n_head] with head stride hd elements inside each cache row.
			k := l.View3D(ctx, kc, hd, nKV, nHead, kcNb[1], uint64(hd)*2, 0)
			qp := b.Permute(q, [4]int{0, 2, 1, 3}) // [hd, n_tok, n_head]
			kq := l.MulMat(ctx, k, qp)             // [n_kv, n_tok, n_head]
			rows := nTok + (8-nTok%8)%8            // llama pads the mask rows
			mask := b.New("kq_mask", f16, nKV, rows)
			b.Init(mask, causalMask(nKV, rows, nKV-nTok))
			kq = l.SoftMaxExt(ctx, kq, mask, float32(1/math.Sqrt(float64(hd))), 0)
			var v ggml.Tensor
			if vTrans {
				// V cache transposed: [kvSize, hd*n_head]; view [n_kv, hd, n_head].
				vc := b.New("v_cache", f16, kvSize, hd*nHead)
				nb := vc.Nb()
				v = l.View3D(ctx, vc, nKV, hd, nHead, nb[1], nb[1]*uint64(hd), 0)
			} else {
				vc := b.New("v_cache", f16, hd*nHead, kvSize)
				nb := vc.Nb()
				vv := l.View3D(ctx, vc, hd, nKV, nHead, nb[1], uint64(hd)*2, 0) // [hd, n_kv, n_head]
				v = l.Cont(ctx, l.Transpose(ctx, vv))                           // [n_kv, hd, n_head]
			}
			kqv := l.MulMat(ctx, v, kq)             // [hd, n_tok, n_head]
			o := b.Permute(kqv, [4]int{0, 2, 1, 3}) // [hd, n_head, n_tok]
			return l.Cont(ctx, o)
		}}
}
