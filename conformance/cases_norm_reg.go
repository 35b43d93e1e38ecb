package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
)

// ---------------------------------------------------------------------------------------
// The norm kernel's register form at its boundaries: rows that fill the workgroup's
// registers exactly (64 x 8, 256 x 8, 256 x 16 at a device limit of 256 invocations,
// 1024 x 16 at the largest workgroup), one element more (a larger workgroup, or the loop
// form past the last), rows shorter than the workgroup and odd lengths; decode (one row)
// and several rows; each norm alone, RMS_NORM and NORM times a weight, and the ADD before
// them.

// normRegSizes are the row lengths of the register-form cases.
var normRegSizes = []int64{5, 63, 512, 513, 2048, 2049, 3001, 4096, 4097, 16384, 16385}

// normRegCases are the register-form boundary cases.
func normRegCases() []*Case {
	var cs []*Case
	for i, n := range normRegSizes {
		rows, other := int64(1+2*(i%2)), int64(3-2*(i%2)) // decode and prompt rows alternately
		cs = append(cs,
			normCase("RMS_NORM", shape(n, rows), 1e-6, ""),
			normCase("NORM", shape(n, other), 1e-5, ""),
			normMulCase("rms_norm", shape(n, other)),
			addNormCase("rms_norm", shape(n, rows), shape(n, rows), shape(n), ""),
		)
	}
	for _, n := range []int64{63, 2049, 16385} {
		cs = append(cs, normCase("L2_NORM", shape(n, 2), 1e-6, ""))
	}
	for _, n := range []int64{5, 2048, 4097, 16384} {
		cs = append(cs, normMulCase("norm", shape(n, 2)))
	}
	cs = append(cs,
		addNormCase("norm", shape(2049, 2), shape(2049, 1), shape(2049), ""),
		addNormCase("rms_norm", shape(4096, 1), shape(4096, 1), shape(4096), addNormSumInPlace),
		addNormCase("rms_norm", shape(513, 3), shape(513, 3), shape(513), addNormMulInPlace),
	)
	return cs
}

// normMulCase is GRAPH(norm*w): RMS_NORM or NORM of x times a weight repeated over the
// rows, the pair the fusion row norm+mul computes in one dispatch.
func normMulCase(norm string, ne [4]int64) *Case {
	name := fmt.Sprintf("GRAPH(%s*w,ne=%s)", norm, fmtNe(ne))
	return &Case{Name: name, Op: "GRAPH", Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			x, w := b.New("x", f32, ne[:]...), b.New("w", f32, ne[0])
			if norm == "norm" {
				return l.Mul(ctx, l.Norm(ctx, x, 1e-5), w)
			}
			return l.Mul(ctx, l.RMSNorm(ctx, x, 1e-6), w)
		}}
}
