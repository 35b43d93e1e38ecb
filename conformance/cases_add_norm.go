package conformance

import (
	"fmt"
	"strings"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
)

// ---------------------------------------------------------------------------------------
// GRAPH(add+norm): llama's residual sum followed by the next norm and its weight,
// sum = ADD(attn_out, inpSA), out = MUL(RMS_NORM(sum), w), with the sum read again after
// the norm (the next residual, sum + out) or read back by the host (a graph output), as
// the fusion row add+norm+mul computes them in one dispatch. Decode (one row) and prompt
// shapes, rows that are not a multiple of the workgroup, src1 of the ADD and the weight
// repeated over the rows, and the in-place forms ggml builds: the sum over attn_out
// (ggml_add_inplace), the result over the norm (ggml_mul_inplace), and the norm over the
// sum (ggml_rms_norm_inplace), which the backend must not fuse while the residual reads
// the sum (in ggml the norm replaces it there) but may where nothing reads the sum again
// (llama's last sum before output_norm, normalised in place by ggml-alloc).

// addNormVariants are the forms addNormCase builds besides the plain one.
const (
	addNormSumInPlace  = "sum_inplace"  // the sum stored over attn_out
	addNormMulInPlace  = "mul_inplace"  // the result stored over the norm
	addNormNormInPlace = "norm_inplace" // the norm stored over the sum: not fused
	addNormLastNorm    = "last_norm"    // the norm stored over the sum, not read again
	addNormSumOutput   = "sum_output"   // the sum is a graph output, not read again
)

// addNormCase builds the pattern with attn_out of shape ne, inpSA of shape bNe (repeated
// over attn_out) and the weight of shape wNe; norm is "rms_norm" or "norm".
func addNormCase(norm string, ne, bNe, wNe [4]int64, variant string) *Case {
	name := fmt.Sprintf("GRAPH(add+%s*w,ne=%s,b=%s,w=%s", norm, fmtNe(ne), fmtNe(bNe), fmtNe(wNe))
	if variant != "" {
		name += "," + variant
	}
	name += ")"
	return &Case{Name: name, Op: "GRAPH", Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			attn := b.New("attn_out", f32, ne[:]...)
			inp := b.New("inpSA", f32, bNe[:]...)
			w := b.New("norm_w", f32, wNe[:]...)
			var sum ggml.Tensor
			if variant == addNormSumInPlace {
				sum = l.AddInplace(ctx, attn, inp)
			} else {
				sum = l.Add(ctx, attn, inp)
			}
			return addNormRest(b, sum, w, norm, 1e-6, variant)
		}}
}

// addNormRest builds what follows llama's residual sum in the GRAPH(add+norm) forms:
// the norm of sum (norm "rms_norm", with epsilon rmsEps, or "norm"; in place over the sum
// for the norm_inplace and last_norm forms), its MUL by w (in place for mul_inplace), and
// what reads them: the sum as a graph output (sum_output), nothing more (last_norm), else
// the next residual, ADD(result, sum).
func addNormRest(b *Builder, sum, w ggml.Tensor, norm string, rmsEps float32, variant string) ggml.Tensor {
	l, ctx := b.L, b.Ctx
	var n ggml.Tensor
	switch {
	case norm == "norm":
		n = l.Norm(ctx, sum, 1e-5)
	case variant == addNormNormInPlace || variant == addNormLastNorm:
		n = l.RMSNormInplace(ctx, sum, rmsEps)
	default:
		n = l.RMSNorm(ctx, sum, rmsEps)
	}
	var out ggml.Tensor
	if variant == addNormMulInPlace {
		out = l.MulInplace(ctx, n, w)
	} else {
		out = l.Mul(ctx, n, w)
	}
	switch variant {
	case addNormSumOutput:
		l.SetOutput(sum)
		b.Check(sum)
		return out
	case addNormLastNorm:
		return out
	}
	return l.Add(ctx, out, sum)
}

// addNormCases are the GRAPH(add+norm) cases.
func addNormCases() []*Case {
	s := shape
	return []*Case{
		addNormCase("rms_norm", s(300), s(300), s(300), ""),          // decode
		addNormCase("rms_norm", s(300, 7), s(300, 7), s(300), ""),    // prompt
		addNormCase("rms_norm", s(4097, 2), s(4097, 2), s(4097), ""), // the largest workgroup, one element over
		addNormCase("rms_norm", s(33, 4, 3), s(33, 1, 3), s(33, 4), ""),
		addNormCase("rms_norm", s(64, 5), s(1, 5), s(64), ""),
		addNormCase("norm", s(65, 4), s(65, 4), s(65), ""),
		addNormCase("rms_norm", s(300, 5), s(300, 5), s(300), addNormSumInPlace),
		addNormCase("rms_norm", s(129, 3), s(129), s(129), addNormSumInPlace),
		addNormCase("rms_norm", s(33, 2), s(33, 2), s(33), addNormMulInPlace),
		addNormCase("rms_norm", s(129, 3), s(129, 3), s(129), addNormSumOutput),
		addNormCase("rms_norm", s(300), s(300), s(300), addNormSumOutput),
		addNormCase("rms_norm", s(33, 3), s(33, 3), s(33), addNormNormInPlace),
		addNormCase("rms_norm", s(300), s(300), s(300), addNormLastNorm),
	}
}

// addNormFused reports whether the backend is expected to fuse the ADD of an addNormCase
// with its norm.
func addNormFused(c *Case) bool { return !strings.HasSuffix(c.Name, ","+addNormNormInPlace+")") }
