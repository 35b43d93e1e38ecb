package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// CONCAT, REPEAT, PAD, ACC and ARANGE, modelled on test-backend-ops' test_concat,
// test_repeat, test_pad, test_pad_ext, test_acc and test_arange.

func layoutCases() []*Case {
	var cs []*Case
	for _, t := range []tensor.Type{f32, f16, tensor.I32} {
		for dim := 0; dim < 4; dim++ {
			cs = append(cs, concatCase(t, dim, false))
		}
		if t != tensor.I32 {
			cs = append(cs, concatCase(t, 0, true), concatCase(t, 2, true))
		}
		for _, nr := range [][4]int64{shape(2, 1, 1, 1), shape(1, 2, 1, 1), shape(1, 1, 3, 1), shape(2, 2, 2, 2)} {
			cs = append(cs, repeatCase(t, shape(7, 3, 2, 3), nr, false))
		}
		if t != tensor.I32 {
			cs = append(cs, repeatCase(t, shape(7, 3, 2, 2), shape(2, 2, 1, 2), true))
		}
	}
	cs = append(cs,
		padCase(shape(7, 5, 3, 2), [8]int32{0, 3, 0, 2, 0, 1, 0, 0}, false, false),
		padCase(shape(7, 5, 3, 2), [8]int32{2, 1, 1, 2, 0, 1, 1, 1}, false, false),
		padCase(shape(7, 5, 3, 2), [8]int32{2, 1, 1, 2, 0, 1, 1, 1}, false, true),
		padCase(shape(7, 5, 3, 2), [8]int32{3, 2, 2, 1, 1, 0, 0, 1}, true, false),
		padCase(shape(7, 5, 3, 2), [8]int32{3, 2, 2, 1, 1, 0, 0, 1}, true, true),
		accCase(shape(256, 17, 1, 1), shape(256, 16, 1, 1), 0, false),
		accCase(shape(7, 5, 3, 2), shape(4, 3, 2, 2), 1*4+1*7*4, false),
		accCase(shape(7, 5, 3, 2), shape(4, 3, 2, 1), 2*4+7*5*4, true),
		arangeCase(0, 10, 1),
		arangeCase(-3.5, 97.25, 0.75),
	)
	return cs
}

// layoutSource creates a leaf of type t and shape ne, or (view) a view at an offset into a
// tensor wider in dims 0 and 1; I32 leaves hold integers from [-1000, 1000).
func layoutSource(b *Builder, name string, t tensor.Type, ne [4]int64, view bool) ggml.Tensor {
	x := b.New(name, t, ne[:]...)
	if view {
		x = b.New(name+"_base", t, ne[0]+3, ne[1]+1, ne[2], ne[3])
	}
	if t == tensor.I32 {
		b.Init(x, IntRange(-1000, 1000))
	}
	if view {
		nb := x.Nb()
		return b.View4D(x, ne, nb[1]+uint64(t.Size()))
	}
	return x
}

func concatCase(t tensor.Type, dim int, view bool) *Case {
	ne := shape(7, 3, 2, 3)
	nb := ne
	nb[dim] = 4
	name := fmt.Sprintf("CONCAT(type=%s,ne_a=%s,ne_b=%s,dim=%d", t, fmtNe(ne), fmtNe(nb), dim)
	if view {
		name += ",view"
	}
	return &Case{Name: name + ")", Op: "CONCAT", Types: t.String(), MaxNMSE: DefaultThreshold(t == f16),
		Build: func(b *Builder) ggml.Tensor {
			return b.L.Concat(b.Ctx, layoutSource(b, "a", t, ne, false), layoutSource(b, "b", t, nb, view), dim)
		}}
}

func repeatCase(t tensor.Type, ne, nr [4]int64, view bool) *Case {
	name := fmt.Sprintf("REPEAT(type=%s,ne=%s,nr=%s", t, fmtNe(ne), fmtNe(nr))
	if view {
		name += ",view"
	}
	return &Case{Name: name + ")", Op: "REPEAT", Types: t.String(), MaxNMSE: DefaultThreshold(t == f16),
		Build: func(b *Builder) ggml.Tensor {
			r := mul4(ne, nr)
			shapeOf := b.New("shape", t, r[:]...)
			return b.L.Repeat(b.Ctx, layoutSource(b, "a", t, ne, view), shapeOf)
		}}
}

func padCase(ne [4]int64, p [8]int32, circular, view bool) *Case {
	name := fmt.Sprintf("PAD(type=f32,ne=%s,pad=%v", fmtNe(ne), p)
	if circular {
		name += ",circular"
	}
	if view {
		name += ",view"
	}
	return &Case{Name: name + ")", Op: "PAD", Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			return b.L.PadExt(b.Ctx, layoutSource(b, "a", f32, ne, view), p, circular)
		}}
}

// accCase adds b to the view of a with a's strides at the byte offset off.
func accCase(ne, neB [4]int64, off uint64, inplace bool) *Case {
	name := fmt.Sprintf("ACC(type=f32,ne_a=%s,ne_b=%s,offset=%d", fmtNe(ne), fmtNe(neB), off)
	if inplace {
		name += ",inplace"
	}
	return &Case{Name: name + ")", Op: "ACC", Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			a := b.New("a", f32, ne[:]...)
			nb := a.Nb()
			return b.L.Acc(b.Ctx, a, b.New("b", f32, neB[:]...), nb[1], nb[2], nb[3], off, inplace)
		}}
}

func arangeCase(start, stop, step float32) *Case {
	return &Case{Name: fmt.Sprintf("ARANGE(start=%g,stop=%g,step=%g)", start, stop, step), Op: "ARANGE",
		Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Build: func(b *Builder) ggml.Tensor { return b.L.Arange(b.Ctx, start, stop, step) }}
}

// intCases covers GET_ROWS of I32 rows (test_get_rows with I32) and copies from and into
// I32 (CPY F32 -> I32 truncates, I32 -> F32, I32 -> I32, CONT of a permuted I32 tensor).
func intCases() []*Case {
	i32 := tensor.I32
	cs := []*Case{
		{Name: "GET_ROWS(type=i32,n=5,m=7,r=4,b=2)", Op: "GET_ROWS", Types: "i32", MaxNMSE: ExactMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				a := layoutSource(b, "a", i32, shape(5, 7, 2), false)
				return b.L.GetRows(b.Ctx, a, b.Index("rows", 7, 4, 2))
			}},
	}
	for _, c := range [][2]tensor.Type{{f32, i32}, {i32, f32}, {i32, i32}} {
		for _, perm := range []bool{false, true} {
			src, dst := c[0], c[1]
			name := fmt.Sprintf("CPY(type_src=%s,type_dst=%s,ne=[7,5,3,2]", src, dst)
			if perm {
				name += ",permute=[0,2,1,3]"
			}
			cs = append(cs, &Case{Name: name + ")", Op: "CPY", Types: src.String() + "->" + dst.String(),
				MaxNMSE: ExactMaxNMSE, Init: Uniform(-100, 100),
				Build: func(b *Builder) ggml.Tensor {
					ne := shape(7, 5, 3, 2)
					a := layoutSource(b, "a", src, ne, false)
					if perm {
						a = b.Permute(a, [4]int{0, 2, 1, 3})
					}
					s := a.Ne()
					return b.L.Cpy(b.Ctx, a, b.New("dst", dst, s[:]...))
				}})
		}
	}
	cs = append(cs, &Case{Name: "CONT(type=i32,ne=[7,5,3,2],permute=[1,0,2,3])", Op: "CONT", Types: "i32",
		MaxNMSE: ExactMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			return b.L.Cont(b.Ctx, b.Permute(layoutSource(b, "a", i32, shape(7, 5, 3, 2), false), [4]int{1, 0, 2, 3}))
		}})
	return cs
}
