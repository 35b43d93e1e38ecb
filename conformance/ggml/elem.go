package ggml

import (
	"sync"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// This file binds the element-wise and shape ops beyond the suite's core set (every
// UNARY and GLU op, the math ops of one source, CLAMP, LEAKY_RELU, FILL, DIAG_MASK_INF,
// ADD1, ADD_CAST, ACC, CONCAT, REPEAT, PAD, ARANGE), lazily as extra.go does.

type elemFuncs struct {
	once sync.Once
	err  error

	unary, unaryInplace   func(Context, Tensor, int32) Tensor
	math1                 map[string]func(Context, Tensor) Tensor
	xielu                 func(Context, Tensor, float32, float32, float32, float32) Tensor
	glu                   func(Context, Tensor, int32, bool) Tensor
	gluSplit              func(Context, Tensor, Tensor, int32) Tensor
	swigluOAI             func(Context, Tensor, Tensor, float32, float32) Tensor
	swigluClamp           func(Context, Tensor, Tensor, float32) Tensor
	clamp, clampInplace   func(Context, Tensor, float32, float32) Tensor
	leakyReLU             func(Context, Tensor, float32, bool) Tensor
	fill, fillInplace     func(Context, Tensor, float32) Tensor
	diagMask, diagMaskInp func(Context, Tensor, int32) Tensor
	add1, add1Inplace     func(Context, Tensor, Tensor) Tensor
	addCast               func(Context, Tensor, Tensor, int32) Tensor
	acc, accInplace       func(Context, Tensor, Tensor, uintptr, uintptr, uintptr, uintptr) Tensor
	concat                func(Context, Tensor, Tensor, int32) Tensor
	repeat                func(Context, Tensor, Tensor) Tensor
	padExt, padExtCirc    func(Context, Tensor, int32, int32, int32, int32, int32, int32, int32, int32) Tensor
	arange                func(Context, float32, float32, float32) Tensor
	padReflect1D          func(Context, Tensor, int32, int32) Tensor
}

var elems sync.Map // *Lib -> *elemFuncs

// math1Names are the ops of one source without parameters that Math1 applies, by the
// name of their ggml function (ggml_NAME and ggml_NAME_inplace).
var math1Names = []string{"sqr", "sqrt", "log", "sin", "cos", "sqr_inplace", "sqrt_inplace", "log_inplace", "sin_inplace", "cos_inplace"}

// el returns l's element-wise functions, binding them on the first call; it panics
// naming the first missing symbol when ggml lacks one.
func (l *Lib) el() *elemFuncs {
	v, _ := elems.LoadOrStore(l, &elemFuncs{})
	e := v.(*elemFuncs)
	e.once.Do(func() {
		reg := func(fptr any, name string) {
			if err := l.bindSym(fptr, name); err != nil && e.err == nil {
				e.err = err
			}
		}
		reg(&e.unary, "ggml_unary")
		reg(&e.unaryInplace, "ggml_unary_inplace")
		e.math1 = map[string]func(Context, Tensor) Tensor{}
		for _, n := range math1Names {
			var f func(Context, Tensor) Tensor
			reg(&f, "ggml_"+n)
			e.math1[n] = f
		}
		reg(&e.xielu, "ggml_xielu")
		reg(&e.glu, "ggml_glu")
		reg(&e.gluSplit, "ggml_glu_split")
		reg(&e.swigluOAI, "ggml_swiglu_oai")
		reg(&e.swigluClamp, "ggml_swiglu_clamp")
		reg(&e.clamp, "ggml_clamp")
		reg(&e.clampInplace, "ggml_clamp_inplace")
		reg(&e.leakyReLU, "ggml_leaky_relu")
		reg(&e.fill, "ggml_fill")
		reg(&e.fillInplace, "ggml_fill_inplace")
		reg(&e.diagMask, "ggml_diag_mask_inf")
		reg(&e.diagMaskInp, "ggml_diag_mask_inf_inplace")
		reg(&e.add1, "ggml_add1")
		reg(&e.add1Inplace, "ggml_add1_inplace")
		reg(&e.addCast, "ggml_add_cast")
		reg(&e.acc, "ggml_acc")
		reg(&e.accInplace, "ggml_acc_inplace")
		reg(&e.concat, "ggml_concat")
		reg(&e.repeat, "ggml_repeat")
		reg(&e.padExt, "ggml_pad_ext")
		reg(&e.padExtCirc, "ggml_pad_ext_circular")
		reg(&e.arange, "ggml_arange")
		reg(&e.padReflect1D, "ggml_pad_reflect_1d")
	})
	if e.err != nil {
		panic(e.err)
	}
	return e
}

// Unary applies a UNARY op (ggml_unary, or ggml_unary_inplace).
func (l *Lib) Unary(ctx Context, a Tensor, op tensor.UnaryOp, inplace bool) Tensor {
	if inplace {
		return l.el().unaryInplace(ctx, a, int32(op))
	}
	return l.el().unary(ctx, a, int32(op))
}

// Math1 applies ggml_NAME for NAME one of sqr, sqrt, log, sin, cos, each optionally
// followed by _inplace.
func (l *Lib) Math1(ctx Context, name string, a Tensor) Tensor {
	f, ok := l.el().math1[name]
	if !ok {
		panic("ggml: no function ggml_" + name)
	}
	return f(ctx, a)
}

// XIELU applies ggml_xielu.
func (l *Lib) XIELU(ctx Context, a Tensor, alphaN, alphaP, beta, eps float32) Tensor {
	return l.el().xielu(ctx, a, alphaN, alphaP, beta, eps)
}

// GLU applies a gated linear unit to the halves of a's rows (ggml_glu).
func (l *Lib) GLU(ctx Context, a Tensor, op tensor.GLUOp, swapped bool) Tensor {
	return l.el().glu(ctx, a, int32(op), swapped)
}

// GLUSplit applies a gated linear unit with the gate a and the value b (ggml_glu_split).
func (l *Lib) GLUSplit(ctx Context, a, b Tensor, op tensor.GLUOp) Tensor {
	return l.el().gluSplit(ctx, a, b, int32(op))
}

// SwiGLUOAI is ggml_swiglu_oai (b may be 0: the halves of a's rows).
func (l *Lib) SwiGLUOAI(ctx Context, a, b Tensor, alpha, limit float32) Tensor {
	return l.el().swigluOAI(ctx, a, b, alpha, limit)
}

// SwiGLUClamp is ggml_swiglu_clamp (b may be 0: the halves of a's rows).
func (l *Lib) SwiGLUClamp(ctx Context, a, b Tensor, limit float32) Tensor {
	return l.el().swigluClamp(ctx, a, b, limit)
}

// Clamp is ggml_clamp (or ggml_clamp_inplace).
func (l *Lib) Clamp(ctx Context, a Tensor, min, max float32, inplace bool) Tensor {
	if inplace {
		return l.el().clampInplace(ctx, a, min, max)
	}
	return l.el().clamp(ctx, a, min, max)
}

// LeakyReLU is ggml_leaky_relu.
func (l *Lib) LeakyReLU(ctx Context, a Tensor, slope float32, inplace bool) Tensor {
	return l.el().leakyReLU(ctx, a, slope, inplace)
}

// Fill is ggml_fill (or ggml_fill_inplace).
func (l *Lib) Fill(ctx Context, a Tensor, c float32, inplace bool) Tensor {
	if inplace {
		return l.el().fillInplace(ctx, a, c)
	}
	return l.el().fill(ctx, a, c)
}

// DiagMaskInf is ggml_diag_mask_inf (or ggml_diag_mask_inf_inplace).
func (l *Lib) DiagMaskInf(ctx Context, a Tensor, nPast int, inplace bool) Tensor {
	if inplace {
		return l.el().diagMaskInp(ctx, a, int32(nPast))
	}
	return l.el().diagMask(ctx, a, int32(nPast))
}

// Add1 is ggml_add1 (or ggml_add1_inplace): a plus the scalar b.
func (l *Lib) Add1(ctx Context, a, b Tensor, inplace bool) Tensor {
	if inplace {
		return l.el().add1Inplace(ctx, a, b)
	}
	return l.el().add1(ctx, a, b)
}

// AddCast is ggml_add_cast: a + b with a result of type t.
func (l *Lib) AddCast(ctx Context, a, b Tensor, t tensor.Type) Tensor {
	return l.el().addCast(ctx, a, b, int32(t))
}

// Acc is ggml_acc (or ggml_acc_inplace): a copy of a with b added to its view (nb1, nb2,
// nb3, offset).
func (l *Lib) Acc(ctx Context, a, b Tensor, nb1, nb2, nb3, offset uint64, inplace bool) Tensor {
	f := l.el().acc
	if inplace {
		f = l.el().accInplace
	}
	return f(ctx, a, b, uintptr(nb1), uintptr(nb2), uintptr(nb3), uintptr(offset))
}

// Concat is ggml_concat along dimension dim.
func (l *Lib) Concat(ctx Context, a, b Tensor, dim int) Tensor {
	return l.el().concat(ctx, a, b, int32(dim))
}

// Repeat is ggml_repeat: a repeated to b's shape.
func (l *Lib) Repeat(ctx Context, a, b Tensor) Tensor { return l.el().repeat(ctx, a, b) }

// PadExt is ggml_pad_ext (or ggml_pad_ext_circular): p holds the left and right padding
// of each dimension (lp0, rp0, lp1, rp1, ...).
func (l *Lib) PadExt(ctx Context, a Tensor, p [8]int32, circular bool) Tensor {
	f := l.el().padExt
	if circular {
		f = l.el().padExtCirc
	}
	return f(ctx, a, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7])
}

// Arange is ggml_arange.
func (l *Lib) Arange(ctx Context, start, stop, step float32) Tensor {
	return l.el().arange(ctx, start, stop, step)
}

// PadReflect1D is ggml_pad_reflect_1d (p0, p1 reflected elements before and after each
// row). The library does not implement it: tests use it as an unsupported node.
func (l *Lib) PadReflect1D(ctx Context, a Tensor, p0, p1 int) Tensor {
	return l.el().padReflect1D(ctx, a, int32(p0), int32(p1))
}
