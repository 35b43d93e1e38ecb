package conformance

import (
	"fmt"
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// ---------------------------------------------------------------------------------------
// GRAPH(chain): element-wise chains, which the fusion rows "elementwise chain of 2" and
// "of 3" compute in one dispatch (ops/elem_chain.go): Qwen3.5's gates as its graph builds
// them (softplus(alpha + dt) * a; attn * sigmoid(cont_2d of a strided view of Q); x *
// silu(z)), in place over an input, every activation between a scale and a SUB of a
// repeated row or before a MUL by a full tensor, 4-D broadcasts; and the chains that must
// not fuse (an intermediate result read again or read back by the host, no activation),
// computed correctly all the same.

// chainAct is an activation of the sweep: how it is built, the inputs it is defined on,
// and its threshold (0: the default).
type chainAct struct {
	name  string
	init  InitFunc
	max   float64
	build func(b *Builder, a ggml.Tensor) ggml.Tensor
}

// chainActs are every UNARY op and SQR, SQRT, LOG, SIN, COS, CLAMP, LEAKY_RELU.
func chainActs() []chainAct {
	var acts []chainAct
	for op := tensor.UnaryOp(0); op < tensor.UnaryOpCount; op++ {
		a := chainAct{name: op.String(), init: Uniform(-3, 3), build: func(b *Builder, a ggml.Tensor) ggml.Tensor {
			return b.L.Unary(b.Ctx, a, op, false)
		}}
		switch op {
		case tensor.UnaryGELU, tensor.UnaryGELUQuick:
			a.max = GELUNarrowMaxNMSE
		case tensor.UnaryXIELU:
			a.build = func(b *Builder, a ggml.Tensor) ggml.Tensor { return b.L.XIELU(b.Ctx, a, 0.8, 0.6, 0.5, -1e-6) }
		}
		acts = append(acts, a)
	}
	math1 := func(name string) func(b *Builder, a ggml.Tensor) ggml.Tensor {
		return func(b *Builder, a ggml.Tensor) ggml.Tensor { return b.L.Math1(b.Ctx, name, a) }
	}
	return append(acts,
		chainAct{"SQR", Uniform(-3, 3), 0, math1("sqr")},
		chainAct{"SQRT", Uniform(50, 100), 0, math1("sqrt")},
		chainAct{"LOG", Uniform(0.9, 1.1), 0, math1("log")},
		chainAct{"SIN", Uniform(-6.5, 6.5), 1e-3, math1("sin")},
		chainAct{"COS", Uniform(-6.5, 6.5), 1e-3, math1("cos")},
		chainAct{"CLAMP", Uniform(-1, 1), 0, func(b *Builder, a ggml.Tensor) ggml.Tensor { return b.L.Clamp(b.Ctx, a, -0.5, 0.5, false) }},
		chainAct{"LEAKY_RELU", Uniform(-1, 1), 0, func(b *Builder, a ggml.Tensor) ggml.Tensor { return b.L.LeakyReLU(b.Ctx, a, 0.1, false) }},
	)
}

// chainCase is a GRAPH(chain,...) case of F32 tensors.
func chainCase(name string, init InitFunc, max float64, build func(b *Builder) ggml.Tensor) *Case {
	if max == 0 {
		max = DefaultMaxNMSE
	}
	return &Case{Name: "GRAPH(chain," + name + ")", Op: "GRAPH", Types: "f32", MaxNMSE: max, Init: init, Build: build}
}

// elemChainCases are the chains the rows fuse; elemChainUnfusedCases those they must not.
func elemChainCases() []*Case {
	var cs []*Case
	ne := shape(33, 3, 2)
	for _, act := range chainActs() {
		// w * act(a): the running value on the MUL's right
		cs = append(cs, chainCase(fmt.Sprintf("act=%s,form=mul_left,ne=%s", act.name, fmtNe(ne)), act.init, act.max, func(b *Builder) ggml.Tensor {
			a, w := b.New("a", f32, ne[:]...), b.New("w", f32, ne[:]...)
			return b.L.Mul(b.Ctx, w, act.build(b, a))
		}))
		// act(a * 0.5 + 0.25) - w, w a row repeated over the rest
		cs = append(cs, chainCase(fmt.Sprintf("act=%s,form=scale_sub_row,ne=%s", act.name, fmtNe(ne)), act.init, act.max, func(b *Builder) ggml.Tensor {
			a, w := b.New("a", f32, ne[:]...), b.New("w", f32, ne[0])
			return b.L.Sub(b.Ctx, act.build(b, b.L.ScaleBias(b.Ctx, a, 0.5, 0.25)), w)
		}))
	}
	for _, ntok := range []int64{1, 7} {
		// Qwen3.5's delta-net gate: softplus(alpha + dt) * a, dt and a per head
		cs = append(cs, chainCase(fmt.Sprintf("softplus_gate,heads=32,tokens=%d", ntok), nil, 0, func(b *Builder) ggml.Tensor {
			alpha, dt, a := b.New("alpha", f32, 32, ntok), b.New("dt", f32, 32), b.New("a", f32, 32)
			return b.L.Mul(b.Ctx, b.L.Unary(b.Ctx, b.L.Add(b.Ctx, alpha, dt), tensor.UnarySoftPlus, false), a)
		}))
		for _, inplace := range []bool{false, true} {
			// Qwen3.5's attention gate: the odd halves of Q's head pairs made contiguous,
			// then attn * sigmoid(gate)
			name := fmt.Sprintf("attn_gate,hd=64,heads=4,tokens=%d", ntok)
			if inplace {
				name += ",inplace"
			}
			cs = append(cs, chainCase(name, nil, 0, func(b *Builder) ggml.Tensor {
				const hd, nh = 64, 4
				q := b.New("q_full", f32, 2*hd*nh, ntok)
				attn := b.New("attn", f32, hd*nh, ntok)
				view := b.L.View3D(b.Ctx, q, hd, nh, ntok, 2*hd*4, 2*hd*nh*4, hd*4)
				gate := b.L.Unary(b.Ctx, b.L.Cont2D(b.Ctx, view, hd*nh, ntok), tensor.UnarySigmoid, inplace)
				if inplace {
					return b.L.MulInplace(b.Ctx, attn, gate)
				}
				return b.L.Mul(b.Ctx, attn, gate)
			}))
		}
		// Qwen3.5's output gate: norm * silu(z), per head rows
		cs = append(cs, chainCase(fmt.Sprintf("silu_gate,hd=64,heads=4,tokens=%d", ntok), nil, 0, func(b *Builder) ggml.Tensor {
			x, z := b.New("normalized", f32, 64, 4, ntok), b.New("z", f32, 64, 4, ntok)
			return b.L.Mul(b.Ctx, x, b.L.SiLU(b.Ctx, z))
		}))
	}
	// 4-D: a side repeated over dimensions 1 and 3, the running value on the left
	cs = append(cs, chainCase("broadcast4d,ne=[16,3,2,2]", nil, 0, func(b *Builder) ggml.Tensor {
		a, u, w := b.New("a", f32, 16, 3, 2, 2), b.New("u", f32, 16, 1, 2, 1), b.New("w", f32, 16, 3, 2, 2)
		return b.L.Div(b.Ctx, b.L.Unary(b.Ctx, b.L.Mul(b.Ctx, a, u), tensor.UnaryTanh, false), w)
	}))
	// the running value on the right of a SUB
	cs = append(cs, chainCase("sub_right,ne=[16,3,2,2]", nil, 0, func(b *Builder) ggml.Tensor {
		a, u, w := b.New("a", f32, 16, 3, 2, 2), b.New("u", f32, 16), b.New("w", f32, 16, 3, 2, 2)
		return b.L.Sub(b.Ctx, w, b.L.Unary(b.Ctx, b.L.Add(b.Ctx, a, u), tensor.UnaryExp, false))
	}))
	return cs
}

// normScaleCases are GRAPH(norm+scale): the L2 norms of delta-net layers' q and k as llama
// builds them (RMS_NORM with eps / n, SCALE by 1 / sqrt(n)), decode and prompt rows, a
// scale with a bias after NORM and L2_NORM, and the scale in place over the norm.
func normScaleCases() []*Case {
	var cs []*Case
	for _, ne := range [][4]int64{shape(128, 16, 1), shape(128, 16, 5), shape(4096, 3)} {
		cs = append(cs, &Case{Name: fmt.Sprintf("GRAPH(norm+scale,gdn_l2,ne=%s)", fmtNe(ne)), Op: "GRAPH", Types: "f32", MaxNMSE: DefaultMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				n := float32(ne[0])
				return b.L.Scale(b.Ctx, b.L.RMSNorm(b.Ctx, b.New("x", f32, ne[:]...), 1e-6/n), 1/float32(math.Sqrt(float64(n))))
			}})
	}
	ne := shape(64, 5, 2)
	cs = append(cs,
		&Case{Name: "GRAPH(norm+scale,norm,bias,ne=[64,5,2,1])", Op: "GRAPH", Types: "f32", MaxNMSE: DefaultMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				return b.L.ScaleBias(b.Ctx, b.L.Norm(b.Ctx, b.New("x", f32, ne[:]...), 1e-5), 0.7, -0.2)
			}},
		&Case{Name: "GRAPH(norm+scale,l2_norm,inplace,ne=[64,5,2,1])", Op: "GRAPH", Types: "f32", MaxNMSE: DefaultMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				return b.L.ScaleInplace(b.Ctx, b.L.L2Norm(b.Ctx, b.New("x", f32, ne[:]...), 1e-6), 1.5)
			}},
	)
	return cs
}

// ssmConvActCases are GRAPH(ssm_conv+act): the convolution of Mamba's and the delta-net
// layers' inputs and the activation after it (SILU, as llama builds them; others in
// place of it), decode and prompt, the windows a view.
func ssmConvActCases() []*Case {
	var cs []*Case
	for _, v := range []struct {
		tokens int64
		op     tensor.UnaryOp
		view   bool
	}{{1, tensor.UnarySILU, false}, {7, tensor.UnarySILU, true}, {3, tensor.UnaryGELUErf, false}, {2, tensor.UnarySoftPlus, true}} {
		cs = append(cs, &Case{Name: fmt.Sprintf("GRAPH(ssm_conv+act,act=%s,d_conv=4,d_inner=96,n_t=%d,view=%v)", v.op, v.tokens, v.view),
			Op: "GRAPH", Types: "f32", MaxNMSE: DefaultMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				const width, channels, seqs = 4, 96, 2
				var sx ggml.Tensor
				if v.view {
					x := b.New("sx", f32, width-1+v.tokens, channels+3, seqs)
					sx = b.View4D(x, shape(width-1+v.tokens, channels, seqs), uint64(width-1+v.tokens)*4)
				} else {
					sx = b.New("sx", f32, width-1+v.tokens, channels, seqs)
				}
				return b.L.Unary(b.Ctx, b.L.SSMConv(b.Ctx, sx, b.New("c", f32, width, channels)), v.op, false)
			}})
	}
	return cs
}

func elemChainUnfusedCases() []*Case {
	ne := shape(33, 3)
	return []*Case{
		// the softplus read back by the host too
		chainCase("unfused,softplus_output", nil, 0, func(b *Builder) ggml.Tensor {
			alpha, dt, a := b.New("alpha", f32, ne[:]...), b.New("dt", f32, ne[0]), b.New("a", f32, ne[0])
			sp := b.L.Unary(b.Ctx, b.L.Add(b.Ctx, alpha, dt), tensor.UnarySoftPlus, false)
			b.L.SetOutput(sp)
			b.Check(sp)
			return b.L.Mul(b.Ctx, sp, a)
		}),
		// the sigmoid read by a later node too
		chainCase("unfused,sigmoid_read_again", nil, 0, func(b *Builder) ggml.Tensor {
			x, g := b.New("x", f32, ne[:]...), b.New("g", f32, ne[:]...)
			s := b.L.Unary(b.Ctx, g, tensor.UnarySigmoid, false)
			return b.L.Add(b.Ctx, b.L.Mul(b.Ctx, x, s), s)
		}),
		// no activation: two binary ops stay apart
		chainCase("unfused,mul_div", nil, 0, func(b *Builder) ggml.Tensor {
			x, y, z := b.New("x", f32, ne[:]...), b.New("y", f32, ne[:]...), b.New("z", f32, ne[0])
			return b.L.Div(b.Ctx, b.L.Mul(b.Ctx, x, y), b.L.Add(b.Ctx, z, z))
		}),
	}
}
