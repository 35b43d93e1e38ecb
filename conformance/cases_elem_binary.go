package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// ADD, SUB, MUL, DIV with F16 operands (test-backend-ops' test_bin_bcast for F16: all F16,
// and F16 with F32 src1), ADD_CAST (F16 + F32 into F32) and ADD1 (test_add1).

func binaryF16Cases() []*Case {
	type shp struct {
		ne, nr [4]int64
		v      binVariant
	}
	shapes := []shp{
		{shape(33), shape(1), binPlain},
		{shape(10, 5, 4, 3), shape(2, 2, 2, 2), binPlain},
		{shape(16, 1, 3), shape(1, 7, 1, 2), binPlain},
		{shape(10, 5, 4, 3), shape(1, 2, 1, 1), binPerm0},
		{shape(10, 5, 4, 3), shape(1), binInplace},
	}
	var cs []*Case
	for _, op := range binOps {
		for _, src1 := range []tensor.Type{f16, f32} {
			for _, s := range shapes {
				cs = append(cs, binaryTypedCase(op, f16, src1, f16, s.v, s.ne, s.nr))
			}
		}
	}
	for _, s := range shapes {
		if s.nr[0] == 1 && s.v != binInplace { // ggml_add_cast repeats whole rows only
			cs = append(cs, binaryTypedCase(binOps[0], f16, f32, f32, s.v, s.ne, s.nr))
		}
	}
	for _, t := range [][2]tensor.Type{{f32, f32}, {f16, f16}, {f16, f32}} {
		for _, inplace := range []bool{false, true} {
			cs = append(cs, add1Case(t[0], t[1], shape(10, 5, 4, 3), inplace))
		}
	}
	return cs
}

// binaryTypedCase is a binary case of src0 type ta, src1 type tb and result type td (an
// ADD into another type than src0's is ggml_add_cast).
func binaryTypedCase(op binOp, ta, tb, td tensor.Type, v binVariant, ne, nr [4]int64) *Case {
	neA := mul4(ne, nr)
	types := fmt.Sprintf("%s,%s,%s", ta, tb, td)
	name := fmt.Sprintf("%s(type=%s,ne=%s,nr=%s%s)", op.name, types, fmtNe(ne), fmtNe(nr), binVariantNames[v])
	return &Case{Name: name, Op: op.name, Types: types, MaxNMSE: DefaultThreshold(true),
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			var a ggml.Tensor
			if v == binPerm0 {
				p := [4]int{0, 2, 1, 3}
				s := permuteShape(neA, p)
				a = b.Permute(b.New("a", ta, s[:]...), p)
			} else {
				a = b.New("a", ta, neA[:]...)
			}
			y := b.New("b", tb, ne[:]...)
			if op.name == "DIV" {
				b.Init(y, AwayFromZero(0.5, 1.5))
			}
			switch {
			case td != ta:
				return l.AddCast(ctx, a, y, td)
			case v == binInplace:
				return op.inplace(l, ctx, a, y)
			}
			return op.op(l, ctx, a, y)
		}}
}

// add1Case adds a scalar of type tb to a tensor of type ta.
func add1Case(ta, tb tensor.Type, ne [4]int64, inplace bool) *Case {
	name := fmt.Sprintf("ADD1(type=%s,%s,ne=%s", ta, tb, fmtNe(ne))
	if inplace {
		name += ",inplace"
	}
	return &Case{Name: name + ")", Op: "ADD1", Types: ta.String() + "," + tb.String(),
		MaxNMSE: DefaultThreshold(ta == f16 || tb == f16),
		Build: func(b *Builder) ggml.Tensor {
			return b.L.Add1(b.Ctx, b.New("a", ta, ne[:]...), b.New("b", tb, 1), inplace)
		}}
}
