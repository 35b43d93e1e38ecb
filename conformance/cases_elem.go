package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The element-wise ops of one source, modelled on test-backend-ops' test_unary, test_xielu,
// test_sqr, test_sqrt, test_log, test_sin, test_cos, test_clamp, test_leaky_relu,
// test_fill and test_diag_mask_inf: every op for F32 and F16, contiguous, as a view of a
// wider tensor at an offset (rows, planes and batches apart), and in place.

// elemCases returns the cases of cases_elem*.go, in report order.
func elemCases() []*Case {
	var cs []*Case
	cs = append(cs, unaryOpCases()...)
	cs = append(cs, mathCases()...)
	cs = append(cs, gluOpCases()...)
	cs = append(cs, binaryF16Cases()...)
	cs = append(cs, layoutCases()...)
	cs = append(cs, intCases()...)
	return cs
}

// srcLayout is how the source of a one-source case is laid out.
type srcLayout int

const (
	layoutPlain   srcLayout = iota
	layoutView              // a view at an offset into a tensor larger in every dimension
	layoutInplace           // contiguous, the result computed in place (the _inplace form)
	layoutRows              // a view of the rows of a 3x wider tensor (ggml_is_contiguous_1)
)

var srcLayoutNames = [...]string{"", ",view", ",inplace", ",rows"}

// oneSrcSource creates the source of a one-source case of type t and shape ne.
func oneSrcSource(b *Builder, t tensor.Type, ne [4]int64, layout srcLayout) ggml.Tensor {
	switch layout {
	case layoutRows:
		x := b.New("a_base", t, 3*ne[0], ne[1], ne[2], ne[3])
		return b.View4D(x, ne, uint64(t.Size()))
	case layoutPlain, layoutInplace:
		return b.New("a", t, ne[:]...)
	}
	x := b.New("a_base", t, 3*ne[0]+1, ne[1]+1, 2*ne[2], ne[3])
	nb := x.Nb()
	return b.View4D(x, ne, nb[1]+nb[2]+uint64(t.Size()))
}

// oneSrcCase is a case of an op of one source: build applies the op to the source a.
func oneSrcCase(name, op string, t tensor.Type, ne [4]int64, layout srcLayout, init InitFunc, max float64,
	build func(b *Builder, a ggml.Tensor, inplace bool) ggml.Tensor) *Case {
	return &Case{Name: fmt.Sprintf("%s(%stype=%s,ne=%s%s)", op, name, t, fmtNe(ne), srcLayoutNames[layout]),
		Op: op, Types: t.String(), MaxNMSE: max, Init: init,
		Build: func(b *Builder) ggml.Tensor {
			return build(b, oneSrcSource(b, t, ne, layout), layout == layoutInplace)
		}}
}

// unaryOpCases covers every UNARY op but the GELU and SILU of cases.go's unaryCases,
// and XIELU with its parameters.
func unaryOpCases() []*Case {
	var cs []*Case
	for op := tensor.UnaryOp(0); op < tensor.UnaryOpCount; op++ {
		for _, t := range []tensor.Type{f32, f16} {
			init := Uniform(-150, 150)
			if t == f16 && (op == tensor.UnaryExp || op == tensor.UnaryExpM1) {
				init = Uniform(-10, 10) // finite in f16, as test-backend-ops
			}
			for _, v := range []struct {
				ne     [4]int64
				layout srcLayout
			}{{shape(128, 2, 2, 2), layoutPlain}, {shape(7, 5, 3, 2), layoutView}, {shape(33, 3), layoutInplace}} {
				name := fmt.Sprintf("op=%s,", op)
				family := "UNARY(" + op.String() + ")"
				build := func(b *Builder, a ggml.Tensor, inplace bool) ggml.Tensor {
					return b.L.Unary(b.Ctx, a, op, inplace)
				}
				if op == tensor.UnaryXIELU {
					switch v.layout {
					case layoutInplace:
						continue // ggml_xielu has no in-place form
					case layoutView:
						v.layout = layoutRows // the CPU backend's XIELU needs ggml_is_contiguous_1
					}
					build = func(b *Builder, a ggml.Tensor, _ bool) ggml.Tensor {
						return b.L.XIELU(b.Ctx, a, 0.8, 0.6, 0.5, -1e-6)
					}
				}
				cs = append(cs, oneSrcCase(name, family, t, v.ne, v.layout, init, DefaultThreshold(t == f16), build))
			}
		}
	}
	return cs
}

// mathCases covers SQR, SQRT, LOG, SIN, COS, CLAMP, LEAKY_RELU, FILL and DIAG_MASK_INF.
func mathCases() []*Case {
	type mathOp struct {
		op    string
		init  InitFunc
		max   float64
		types []tensor.Type
		build func(b *Builder, a ggml.Tensor, inplace bool) ggml.Tensor
	}
	math1 := func(name string) func(b *Builder, a ggml.Tensor, inplace bool) ggml.Tensor {
		return func(b *Builder, a ggml.Tensor, inplace bool) ggml.Tensor {
			if inplace {
				return b.L.Math1(b.Ctx, name+"_inplace", a)
			}
			return b.L.Math1(b.Ctx, name, a)
		}
	}
	both := []tensor.Type{f32, f16}
	ops := []mathOp{
		{"SQR", Uniform(-10, 10), 0, both, math1("sqr")},
		{"SQRT", Uniform(50, 100), 0, both, math1("sqrt")},
		{"LOG", Uniform(0.9, 1.1), 0, both, math1("log")},
		{"SIN", Uniform(-6.5, 6.5), 1e-3, both, math1("sin")},
		{"COS", Uniform(-6.5, 6.5), 1e-3, both, math1("cos")},
		{"CLAMP", Uniform(-1, 1), 0, both, func(b *Builder, a ggml.Tensor, inplace bool) ggml.Tensor {
			return b.L.Clamp(b.Ctx, a, -0.5, 0.5, inplace)
		}},
		{"LEAKY_RELU", Uniform(-1, 1), 0, both, func(b *Builder, a ggml.Tensor, inplace bool) ggml.Tensor {
			return b.L.LeakyReLU(b.Ctx, a, 0.1, inplace)
		}},
		{"FILL", nil, 0, both, func(b *Builder, a ggml.Tensor, inplace bool) ggml.Tensor {
			return b.L.Fill(b.Ctx, a, -2.7, inplace)
		}},
		{"DIAG_MASK_INF", nil, 0, []tensor.Type{f32}, func(b *Builder, a ggml.Tensor, inplace bool) ggml.Tensor {
			return b.L.DiagMaskInf(b.Ctx, a, 3, inplace)
		}},
	}
	var cs []*Case
	for _, m := range ops {
		for _, t := range m.types {
			max := m.max
			if max == 0 {
				max = DefaultThreshold(t == f16)
			}
			layouts := []srcLayout{layoutPlain, layoutView, layoutInplace}
			switch m.op {
			case "FILL", "DIAG_MASK_INF":
				layouts = []srcLayout{layoutPlain, layoutInplace} // ggml requires a contiguous source
			case "CLAMP", "LEAKY_RELU":
				// the CPU backend walks the rows of these as one run (ggml_is_contiguous_1)
				layouts = []srcLayout{layoutPlain, layoutRows, layoutInplace}
			}
			for _, l := range layouts {
				ne := shape(10, 5, 4, 3)
				if l == layoutView || l == layoutRows {
					ne = shape(7, 5, 3, 2)
				}
				cs = append(cs, oneSrcCase("", m.op, t, ne, l, m.init, max, m.build))
			}
		}
	}
	return cs
}

// gluOpCases covers every GLU op for F32 and F16 (SWIGLU_OAI: F32, as the CPU backend), in
// the fused form (swapped too, rows of a wider tensor too) and the split form, as
// test-backend-ops' test_glu and test_glu_split (SWIGLU_OAI with alpha 1.702, limit 7).
func gluOpCases() []*Case {
	var cs []*Case
	for op := tensor.GLUOp(0); op < tensor.GLUOpCount; op++ {
		types := []tensor.Type{f32, f16}
		if op == tensor.GLUSwiGLUOAI {
			types = types[:1]
		}
		for _, t := range types {
			for _, v := range []struct {
				form   string
				ne     [4]int64
				layout srcLayout
			}{
				{"fused", shape(33, 3, 2), layoutPlain},
				{"swapped", shape(7, 5, 3, 2), layoutRows},
				{"split", shape(64, 3, 2, 2), layoutPlain},
				{"split", shape(7, 5, 3, 2), layoutRows},
			} {
				cs = append(cs, gluOpCase(op, t, v.form, v.ne, v.layout))
			}
		}
	}
	return cs
}

// gluOpCase builds a GLU op producing rows of ne[0] outputs, on inputs from [-150,150]
// (SWIGLU_OAI and SWIGLU_CLAMP: [-10,10], around their limit).
func gluOpCase(op tensor.GLUOp, t tensor.Type, form string, ne [4]int64, layout srcLayout) *Case {
	init := Uniform(-150, 150)
	if op == tensor.GLUSwiGLUOAI || op == tensor.GLUSwiGLUClamp {
		init = Uniform(-10, 10)
	}
	name := fmt.Sprintf("GLU(op=%s,%s,type=%s,ne=%s%s)", op, form, t, fmtNe(ne), srcLayoutNames[layout])
	return &Case{Name: name, Op: "GLU(" + op.String() + ")", Types: t.String() + " " + form,
		MaxNMSE: DefaultThreshold(t == f16), Init: init,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			var a, g ggml.Tensor
			if form == "split" {
				a, g = oneSrcSource(b, t, ne, layout), oneSrcSource(b, t, ne, layout)
			} else {
				s := ne
				s[0] *= 2
				a = oneSrcSource(b, t, s, layout)
			}
			switch op {
			case tensor.GLUSwiGLUOAI:
				return l.SwiGLUOAI(ctx, a, g, 1.702, 7)
			case tensor.GLUSwiGLUClamp:
				return l.SwiGLUClamp(ctx, a, g, 7)
			}
			if form == "split" {
				return l.GLUSplit(ctx, a, g, op)
			}
			return l.GLU(ctx, a, op, form == "swapped")
		}}
}
