package conformance

import (
	"fmt"
	"strings"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The ops of vision and audio encoders (multimodal projectors): IM2COL and whole
// convolutions, the poolings, the direct convolutions, UPSCALE, ROLL and PAD_REFLECT_1D,
// in that order.
func encoderCases() []*Case {
	var cs []*Case
	cs = append(cs, im2colCases()...)
	cs = append(cs, poolCases()...)
	cs = append(cs, conv2dCases()...)
	cs = append(cs, upscaleCases()...)
	cs = append(cs, rollCases()...)
	return append(cs, padReflectCases()...)
}

// im2colCases are test_im2col's shapes (the convolutions of audio and vision encoders),
// some scaled down: 1-D and 2-D, F32 and F16 inputs and results, strides, padding and
// dilation, and an input that is a view with padded rows.
func im2colCases() []*Case {
	type ic struct {
		in, dst tensor.Type
		input   [4]int64
		kernel  [4]int64
		s, p, d [2]int32
		is2D    bool
	}
	one, zero := [2]int32{1, 0}, [2]int32{0, 0}
	var cs []*Case
	for _, c := range []ic{
		{f32, f32, shape(3000, 128), shape(3, 128, 1280), one, zero, one, false},
		{f32, f16, shape(3000, 128), shape(3, 128, 1280), one, zero, one, false},
		{f32, f32, shape(37, 5, 3), shape(4, 5), [2]int32{2, 0}, [2]int32{3, 0}, [2]int32{2, 0}, false},
		{f32, f32, shape(10, 10, 3, 1), shape(3, 3, 3, 1), [2]int32{1, 1}, [2]int32{0, 0}, [2]int32{1, 1}, true},
		{f32, f16, shape(10, 10, 3, 1), shape(3, 3, 3, 1), [2]int32{1, 1}, [2]int32{0, 0}, [2]int32{1, 1}, true},
		{f16, f16, shape(10, 10, 3, 1), shape(3, 3, 3, 1), [2]int32{1, 1}, [2]int32{0, 0}, [2]int32{1, 1}, true},
		{f32, f16, shape(12, 12, 2, 32), shape(3, 3, 2, 32), [2]int32{1, 1}, [2]int32{1, 1}, [2]int32{1, 1}, true},
		{f32, f16, shape(5, 5, 1, 32), shape(3, 4, 1, 32), [2]int32{1, 1}, [2]int32{0, 0}, [2]int32{1, 1}, true},
		{f32, f32, shape(2, 2, 1536, 729), shape(2, 2, 1536, 64), [2]int32{1, 1}, [2]int32{0, 0}, [2]int32{1, 1}, true},
		{f32, f16, shape(128, 128, 2, 1), shape(33, 34, 2, 1), [2]int32{1, 1}, [2]int32{1, 1}, [2]int32{1, 1}, true},
		{f32, f32, shape(224, 224, 3, 1), shape(14, 14, 3, 8), [2]int32{14, 14}, [2]int32{0, 0}, [2]int32{1, 1}, true},
		{f32, f32, shape(23, 19, 3, 2), shape(3, 5, 3, 1), [2]int32{2, 3}, [2]int32{2, 1}, [2]int32{2, 1}, true},
	} {
		cs = append(cs, im2colCase(c.in, c.dst, c.input, c.kernel, c.s, c.p, c.d, c.is2D, false))
	}
	cs = append(cs, im2colCase(f32, f32, shape(23, 19, 3, 2), shape(3, 5, 3, 1), [2]int32{2, 3}, [2]int32{2, 1}, [2]int32{2, 1}, true, true))
	// Whole convolutions as ggml builds them (IM2COL into F16, MUL_MAT of F16 by the F16
	// kernel, and for 2-D a permuted copy): a patch embedding, a padded 3 x 3, an audio
	// encoder's 1-D.
	for _, c := range []struct {
		input, kernel [4]int64
		s, p          int32
		is2D          bool
	}{
		{shape(56, 42, 3, 1), shape(14, 14, 3, 32), 14, 0, true},
		{shape(12, 12, 4, 2), shape(3, 3, 4, 8), 1, 1, true},
		{shape(300, 80), shape(3, 80, 64), 1, 1, false},
	} {
		c := c
		name := fmt.Sprintf("CONV(ne_input=%s,ne_kernel=%s,s=%d,p=%d,is_2D=%v)", fmtNe(c.input), fmtNe(c.kernel), c.s, c.p, c.is2D)
		cs = append(cs, &Case{Name: name, Op: "GRAPH", Types: "f32, f16 kernel", MaxNMSE: MulMatMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				x := b.New("input", f32, c.input[:]...)
				k := b.New("kernel", f16, c.kernel[:]...)
				if c.is2D {
					return b.L.Conv2D(b.Ctx, k, x, c.s, c.s, c.p, c.p, 1, 1)
				}
				return b.L.Conv1D(b.Ctx, k, x, c.s, c.p, 1)
			}})
	}
	return cs
}

func im2colCase(in, dst tensor.Type, input, kernel [4]int64, s, p, d [2]int32, is2D, view bool) *Case {
	name := fmt.Sprintf("IM2COL(type_input=%s,dst_type=%s,ne_input=%s,ne_kernel=%s,s=%v,p=%v,d=%v,is_2D=%v",
		in, dst, fmtNe(input), fmtNe(kernel), s, p, d, is2D)
	if view {
		name += ",view"
	}
	name += ")"
	max := DefaultMaxNMSE
	if dst == f16 || in == f16 {
		max = F16MaxNMSE
	}
	return &Case{Name: name, Op: "IM2COL", Types: fmt.Sprintf("%s->%s", in, dst), MaxNMSE: max,
		Build: func(b *Builder) ggml.Tensor {
			var x ggml.Tensor
			if view { // the input's channels in planes of padded rows: only the plane stride grows
				base := b.New("input_base", in, input[0], input[1]+2, input[2], input[3])
				x = b.View4D(base, input, 0)
			} else {
				x = b.New("input", in, input[:]...)
			}
			k := b.New("kernel", f16, kernel[:]...)
			return b.L.Im2col(b.Ctx, k, x, s[0], s[1], p[0], p[1], d[0], d[1], is2D, dst)
		}}
}

// poolCases are test_pool2d's and test_pool1d's: MAX and AVG, every kernel, stride and
// padding of their lists (windows wholly in the padding among them), and F16 inputs.
func poolCases() []*Case {
	var cs []*Case
	pool := func(name string, ty tensor.Type, ne [4]int64, build func(b *Builder, x ggml.Tensor) ggml.Tensor) {
		cs = append(cs, &Case{Name: name, Op: strings.SplitN(name, "(", 2)[0], Types: ty.String() + "->f32", MaxNMSE: DefaultMaxNMSE,
			Build: func(b *Builder) ggml.Tensor { return build(b, b.New("input", ty, ne[:]...)) }})
	}
	for _, op := range []int32{1, 0} {
		for _, k := range [][2]int32{{1, 1}, {1, 3}, {3, 1}, {3, 3}} {
			for _, st := range [][2]int32{{1, 1}, {1, 2}, {2, 1}, {2, 2}} {
				for _, pd := range [][2]int32{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
					k, st, pd := k, st, pd
					name := fmt.Sprintf("POOL_2D(pool_type=%d,type_input=f32,ne_input=[10,10,3,1],k=%v,s=%v,p=%v)", op, k, st, pd)
					op := op
					pool(name, f32, shape(10, 10, 3, 1), func(b *Builder, x ggml.Tensor) ggml.Tensor {
						return b.L.Pool2D(b.Ctx, x, op, k[0], k[1], st[0], st[1], float32(pd[0]), float32(pd[1]))
					})
				}
			}
		}
		for k := int32(1); k <= 3; k++ {
			for st := int32(1); st <= 3; st++ {
				for pd := int32(0); pd <= 3; pd++ {
					for _, ne := range [][4]int64{shape(10, 3, 2, 1), shape(11, 1, 3, 2), shape(128, 2, 1, 3)} {
						k, st, pd, op := k, st, pd, op
						name := fmt.Sprintf("POOL_1D(pool_type=%d,type_input=f32,ne_input=%s,k0=%d,s0=%d,p0=%d)", op, fmtNe(ne), k, st, pd)
						pool(name, f32, ne, func(b *Builder, x ggml.Tensor) ggml.Tensor { return b.L.Pool1D(b.Ctx, x, op, k, st, pd) })
					}
				}
			}
		}
		op := op
		pool(fmt.Sprintf("POOL_2D(pool_type=%d,type_input=f16,ne_input=[64,64,8,2],k=[4,4],s=[4,4],p=[0,0])", op), f16, shape(64, 64, 8, 2),
			func(b *Builder, x ggml.Tensor) ggml.Tensor { return b.L.Pool2D(b.Ctx, x, op, 4, 4, 4, 4, 0, 0) })
		pool(fmt.Sprintf("POOL_1D(pool_type=%d,type_input=f16,ne_input=[50,4,3,1],k0=3,s0=2,p0=1)", op), f16, shape(50, 4, 3, 1),
			func(b *Builder, x ggml.Tensor) ggml.Tensor { return b.L.Pool1D(b.Ctx, x, op, 3, 2, 1) })
	}
	return cs
}

// upscaleCases are UPSCALE as test_upscale and test_interpolate build it, where the
// device takes it (NEAREST by whole factors; BILINEAR over dims 0 and 1): up and down,
// ALIGN_CORNERS, rows and columns of one element, a transposed source.
func upscaleCases() []*Case {
	var cs []*Case
	for _, u := range []struct {
		in, out [4]int64
		mode    uint32
		perm    bool
	}{
		{shape(64, 48, 3, 2), shape(128, 96, 3, 2), 0, false},
		{shape(3, 2, 2, 1), shape(9, 4, 4, 2), 0, false},
		{shape(64, 48, 3, 2), shape(128, 96, 3, 2), 1, false},
		{shape(2, 5, 7, 11), shape(5, 7, 7, 11), 1, false},
		{shape(5, 7, 11, 13), shape(2, 5, 11, 13), 1, false},
		{shape(2, 5, 7, 11), shape(5, 7, 7, 11), 1 | 1<<8, false},
		{shape(1, 4, 3, 2), shape(2, 8, 3, 2), 1 | 1<<8, false},
		{shape(4, 1, 3, 2), shape(1, 1, 3, 2), 1 | 1<<8, false},
		{shape(27, 27, 16, 1), shape(32, 32, 16, 1), 1, true},
	} {
		u := u
		name := fmt.Sprintf("UPSCALE(ne=%s,ne_out=%s,mode=%#x,perm=%v)", fmtNe(u.in), fmtNe(u.out), u.mode, u.perm)
		cs = append(cs, &Case{Name: name, Op: "UPSCALE", Types: "f32", MaxNMSE: DefaultMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				a := b.New("a", f32, u.in[:]...)
				if u.perm {
					a = b.Permute(b.New("a", f32, u.in[1], u.in[0], u.in[2], u.in[3]), [4]int{1, 0, 2, 3})
				}
				return b.L.Interpolate(b.Ctx, a, u.out[0], u.out[1], u.out[2], u.out[3], u.mode)
			}})
	}
	return cs
}

// rollCases are ROLL as test_roll: shifts both ways in every dimension, on a permuted
// source too.
func rollCases() []*Case {
	var cs []*Case
	for _, r := range []struct {
		s    [4]int32
		perm bool
	}{{[4]int32{3, -2, 1, -1}, false}, {[4]int32{3, -2, 1, -1}, true}, {[4]int32{-9, 4, -3, 2}, false}, {[4]int32{0, 0, 0, 0}, false}} {
		r := r
		name := fmt.Sprintf("ROLL(shift=%v,permute=%v)", r.s, r.perm)
		cs = append(cs, &Case{Name: name, Op: "ROLL", Types: "f32", MaxNMSE: DefaultMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				a := b.New("a", f32, 10, 5, 4, 3)
				if r.perm { // dims 1 and 2 swapped: rows not contiguous
					a = b.Permute(b.New("a", f32, 10, 4, 5, 3), [4]int{0, 2, 1, 3})
				}
				return b.L.Roll(b.Ctx, a, r.s[0], r.s[1], r.s[2], r.s[3])
			}})
	}
	return cs
}

// conv2dCases are a sample of test_conv_2d's and test_conv_2d_dw's: F32 and F16 kernels,
// the channel-first (CWHN) layouts ggml permutes into (depthwise: the CPU backend takes
// no others), strides, padding and dilation, kernels and inputs of one element.
func conv2dCases() []*Case {
	type cv struct {
		input, kernel          [4]int64
		s0, s1, p0, p1, d0, d1 int32
		dw                     bool
	}
	var list []cv
	for _, c := range [][4]int64{{19, 4, 4, 3}, {23, 5, 8, 3}, {16, 3, 16, 8}} { // input size, kernel size, channels in, out
		list = append(list, cv{input: shape(c[0], c[0], c[2], 2), kernel: shape(c[1], c[1], c[2], c[3]), s0: 1, s1: 1, d0: 1, d1: 1})
	}
	list = append(list,
		cv{input: shape(141, 133, 25, 2), kernel: shape(3, 11, 25, 12), s0: 3, s1: 5, p0: 5, p1: 2, d0: 2, d1: 4},
		cv{input: shape(1, 133, 1, 2), kernel: shape(1, 2, 1, 12), s0: 1, s1: 5, p0: 5, p1: 5, d0: 2, d1: 4},
		cv{input: shape(141, 1, 25, 2), kernel: shape(11, 1, 25, 1), s0: 3, s1: 5, p0: 5, p1: 5, d0: 2, d1: 4},
		cv{input: shape(19, 17, 8, 2), kernel: shape(3, 3, 8, 65), s0: 1, s1: 1, p0: 1, p1: 1, d0: 1, d1: 1},
		cv{input: shape(19, 17, 16, 3), kernel: shape(3, 3, 16, 33), s0: 2, s1: 3, p0: 4, p1: 2, d0: 2, d1: 1},
		cv{input: shape(13, 11, 16, 3), kernel: shape(1, 1, 16, 33), s0: 1, s1: 1, d0: 1, d1: 1},
		cv{input: shape(17, 34, 9, 1), kernel: shape(3, 3, 1, 9), s0: 1, s1: 1, d0: 1, d1: 1, dw: true},
		cv{input: shape(32, 8, 64, 1), kernel: shape(3, 3, 1, 64), s0: 2, s1: 2, p0: 1, p1: 1, d0: 1, d1: 1, dw: true},
		cv{input: shape(20, 21, 6, 2), kernel: shape(5, 3, 1, 6), s0: 1, s1: 2, p0: 2, p1: 1, d0: 2, d1: 2, dw: true},
	)
	var cs []*Case
	for _, c := range list {
		for _, kt := range []tensor.Type{f32, f16} {
			for _, cwhn := range []bool{false, true} {
				if (c.dw && kt == f16) || (!c.dw && cwhn) {
					continue // test_conv_2d_dw's kernels are F32; the CPU takes CWHN depthwise only
				}
				c, kt, cwhn := c, kt, cwhn
				op := "CONV_2D"
				if c.dw {
					op = "CONV_2D_DW"
				}
				name := fmt.Sprintf("%s(ne_input=%s,ne_kernel=%s,type_kernel=%s,s=[%d,%d],p=[%d,%d],d=[%d,%d],cwhn=%v)",
					op, fmtNe(c.input), fmtNe(c.kernel), kt, c.s0, c.s1, c.p0, c.p1, c.d0, c.d1, cwhn)
				cs = append(cs, &Case{Name: name, Op: op, Types: "f32, " + kt.String() + " kernel", MaxNMSE: MulMatMaxNMSE,
					Build: func(b *Builder) ggml.Tensor {
						x := b.New("input", f32, c.input[:]...)
						k := b.New("kernel", kt, c.kernel[:]...)
						if cwhn { // channels innermost in memory, permuted back to the same shapes
							x = b.Permute(b.L.Cont(b.Ctx, b.Permute(x, [4]int{1, 2, 0, 3})), [4]int{2, 0, 1, 3})
							k = b.Permute(b.L.Cont(b.Ctx, b.Permute(k, [4]int{2, 3, 1, 0})), [4]int{3, 2, 0, 1})
						}
						if c.dw {
							return b.L.Conv2DDW(b.Ctx, k, x, c.s0, c.s1, c.p0, c.p1, c.d0, c.d1)
						}
						return b.L.Conv2DDirect(b.Ctx, k, x, c.s0, c.s1, c.p0, c.p1, c.d0, c.d1)
					}})
			}
		}
	}
	return cs
}

// padReflectCases are PAD_REFLECT_1D as test_pad_reflect_1d (its default 512 x 34 by 10
// and 9, whisper's 3000-frame rows of 80 and 384), no padding, the most ggml allows
// (ne00 - 1 on each side) and rows of planes. ggml takes contiguous sources only.
func padReflectCases() []*Case {
	var cs []*Case
	for _, r := range []struct {
		ne     [4]int64
		p0, p1 int
	}{
		{[4]int64{512, 34, 1, 1}, 10, 9}, {[4]int64{3000, 80, 1, 1}, 10, 9},
		{[4]int64{3000, 384, 1, 1}, 10, 9}, {[4]int64{16, 3, 1, 1}, 0, 0},
		{[4]int64{16, 3, 1, 1}, 15, 15}, {[4]int64{9, 4, 3, 2}, 4, 7},
	} {
		r := r
		name := fmt.Sprintf("PAD_REFLECT_1D(ne=%v,p0=%d,p1=%d)", r.ne, r.p0, r.p1)
		cs = append(cs, &Case{Name: name, Op: "PAD_REFLECT_1D", Types: "f32", MaxNMSE: DefaultMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				return b.L.PadReflect1D(b.Ctx, b.New("a", f32, r.ne[0], r.ne[1], r.ne[2], r.ne[3]), r.p0, r.p1)
			}})
	}
	return cs
}
