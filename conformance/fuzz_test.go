package conformance

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// FuzzGraph builds a random small graph from the fuzz input and compares WGPU0 with the
// CPU backend by NMSE, with test-backend-ops' thresholds (the largest that applies to the
// graph's ops: MulMatMaxNMSE with a MUL_MAT, F16MaxNMSE/SoftMaxMaxNMSE with F16 tensors
// or SOFT_MAX, GELUNarrowMaxNMSE with GELU, DefaultMaxNMSE otherwise). The graph is a tree of up to graphDepth
// levels of ADD/SUB/MUL/DIV (broadcast, in place), SCALE, RMS_NORM, NORM, CPY/CONT (F32
// and F16), GET_ROWS, MUL_MAT (F32 and F16 weights, broadcast), SOFT_MAX (mask, scale,
// ALiBi), ROPE (NORMAL, NEOX, frequency factors, in place), SILU, GELU and SWIGLU (fused and
// split), whose operands are leaves or other nodes seen through views with offsets,
// permutations and transposes wherever the CPU backend accepts such a layout. A graph with
// a node WGPU0's supports_op refuses is skipped, not failed.
//
// Its seed corpus in testdata/fuzz/FuzzGraph runs with every `go test`; fuzz with
//
//	go test -run '^$' -fuzz FuzzGraph ./conformance
func FuzzGraph(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		env := fuzzEnv(t)
		desc := new(string)
		c := &Case{Name: fmt.Sprintf("FuzzGraph(%x)", data), Op: "FUZZ", Types: "mixed",
			Build: func(b *Builder) ggml.Tensor {
				g := &graphGen{b: b, in: data}
				out := g.build()
				*desc = strings.Join(g.desc, "; ")
				return out
			}}
		// The threshold depends on the ops: build once to learn them.
		c.MaxNMSE = fuzzThreshold(env.L, c)
		res := env.Runner.Run(c)
		switch res.Status {
		case Passed:
			t.Logf("pass, NMSE %.3g (max %.0g) over %d values: %s", res.NMSE, c.MaxNMSE, res.N, *desc)
		case Unsupported:
			t.Skipf("unsupported, skipped: %s (%s)", res.Msg, *desc)
		default:
			t.Errorf("%s\ngraph: %s", res.Msg, *desc)
		}
	})
}

var (
	fuzzOnce sync.Once
	fuzzE    *Env
	fuzzErr  error
)

// fuzzEnv opens the suite's environment once per process (fuzzing runs many inputs in
// each worker) and keeps it for the life of the process.
func fuzzEnv(t *testing.T) *Env {
	t.Helper()
	fuzzOnce.Do(func() { fuzzE, fuzzErr = Open(testConfig(t)) })
	if fuzzErr != nil {
		t.Fatal(fuzzErr)
	}
	return fuzzE
}

// fuzzThreshold builds c in a scratch context and returns the NMSE threshold of the ops
// and types its graph holds.
func fuzzThreshold(l *ggml.Lib, c *Case) float64 {
	ctx := l.Init(uintptr(l.TensorOverhead()*1024+l.GraphOverhead()+1<<16), true)
	defer l.Free(ctx)
	b := newBuilder(l, ctx)
	b.noSent = true
	out := c.Build(b)
	g := l.NewGraph(ctx)
	l.BuildForwardExpand(g, out)
	max := DefaultMaxNMSE
	for _, t := range l.Tensors(ctx) {
		switch {
		case t.Op() == tensor.OpMulMat:
			max = MulMatMaxNMSE
		case t.Type() == tensor.F16, t.Op() == tensor.OpSoftMax:
			max = maxf(max, F16MaxNMSE)
		case t.Op() == tensor.OpUnary && t.OpParamI32(0) == unaryGELU:
			max = maxf(max, GELUNarrowMaxNMSE)
		}
	}
	return max
}

// unaryGELU is GGML_UNARY_OP_GELU, op_params[0] of a GELU node.
const unaryGELU = 8

func maxf(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}

// graphDepth bounds the height of a generated graph.
const graphDepth = 3

// need is the layout an operand must have for the CPU backend (and ggml's constructors)
// to accept it.
type need int

const (
	// anyLayout: any strides (CPY and CONT sources, a binary op's src1 of src0's shape).
	anyLayout need = iota
	// rowsContiguous: nb[0] is the element size (binary src0, norms, MUL_MAT, GET_ROWS,
	// ROPE).
	rowsContiguous
	// contiguous1: rows contiguous and dims 2, 3 packed after dim 1 (SILU, GELU, SWIGLU).
	contiguous1
	// contiguous: fully contiguous (SCALE, SOFT_MAX).
	contiguous
)

// graphGen turns fuzz bytes into a graph: every decision reads the next byte (0 once the
// input is exhausted: the plain choice, and always a leaf, so generation terminates).
type graphGen struct {
	b    *Builder
	in   []byte
	pos  int
	n    int
	desc []string
}

// pick returns a number in [0, n) from the next input byte.
func (g *graphGen) pick(n int) int {
	if g.pos >= len(g.in) || n <= 1 {
		g.pos++
		return 0
	}
	v := int(g.in[g.pos]) % n
	g.pos++
	return v
}

// choose returns one of vals, picked by the next input byte.
func choose[T any](g *graphGen, vals ...T) T { return vals[g.pick(len(vals))] }

// name returns a fresh tensor name with prefix p.
func (g *graphGen) name(p string) string {
	g.n++
	return fmt.Sprintf("%s%d", p, g.n)
}

// note records a step of the graph's description.
func (g *graphGen) note(format string, args ...any) {
	g.desc = append(g.desc, fmt.Sprintf(format, args...))
}

// build generates the graph and returns its output node.
func (g *graphGen) build() ggml.Tensor {
	ne := [4]int64{
		choose[int64](g, 1, 2, 3, 4, 7, 8, 16, 31, 32, 33, 64, 96, 128),
		choose[int64](g, 1, 2, 3, 5, 8),
		choose[int64](g, 1, 2, 3),
		choose[int64](g, 1, 2),
	}
	depth := 1 + g.pick(graphDepth)
	out := g.node(ne, f32, depth)
	g.note("out %s %s", out.Type(), fmtNe(out.Ne()))
	return out
}

// leaf creates an input tensor of shape ne and type t.
func (g *graphGen) leaf(ne [4]int64, t tensor.Type) ggml.Tensor {
	x := g.b.New(g.name("x"), t, ne[:]...)
	return x
}

// value returns a tensor of logical shape ne and type t whose layout satisfies nd: a leaf
// or (depth permitting) a node, possibly seen through a view at an offset inside a larger
// tensor and a permutation.
func (g *graphGen) value(ne [4]int64, t tensor.Type, nd need, depth int) ggml.Tensor {
	// The layout: 0 plain, 1 view (padded, at an offset), 2 permuted, 3 view then permuted.
	layout := g.pick(4)
	var perm [4]int
	switch nd {
	case contiguous1, contiguous:
		layout &= 1 // views only, of the kind that keeps the layout
	case rowsContiguous:
		perm = choose(g, [4]int{0, 1, 2, 3}, [4]int{0, 2, 1, 3}, [4]int{0, 1, 3, 2}, [4]int{0, 3, 2, 1}, [4]int{0, 2, 3, 1})
	default:
		perm = choose(g, [4]int{1, 0, 2, 3}, [4]int{0, 2, 1, 3}, [4]int{2, 0, 1, 3}, [4]int{3, 2, 1, 0}, [4]int{1, 2, 3, 0}, [4]int{0, 1, 3, 2})
	}
	inner := ne
	if layout >= 2 {
		inner = permuteShape(ne, perm)
	}
	base, pad, off := inner, [4]int64{}, [4]int64{}
	if layout&1 == 1 {
		switch nd {
		case contiguous:
			pad[3] = int64(1 + g.pick(2)) // whole planes around: still contiguous
		case contiguous1:
			pad[0] = int64(1 + g.pick(5)) // padded rows
		default:
			for i := range pad {
				pad[i] = int64(g.pick(3))
			}
		}
		for i := range pad {
			base[i] += pad[i]
			off[i] = int64(g.pick(int(pad[i]) + 1))
		}
	}
	var x ggml.Tensor
	if depth > 0 && g.pick(4) != 0 {
		x = g.node(base, t, depth-1)
		if !packed(x) {
			// In-place ops and copies keep their destination's layout: make it plain, so
			// that the view and permutation below give the layout nd asks for.
			x = g.b.L.Cont(g.b.Ctx, x)
			g.note("CONT %s", fmtNe(base))
		}
	} else {
		x = g.leaf(base, t)
	}
	if layout&1 == 1 {
		nb := x.Nb()
		o := uint64(off[0])*nb[0] + uint64(off[1])*nb[1] + uint64(off[2])*nb[2] + uint64(off[3])*nb[3]
		x = g.b.View4D(x, inner, o)
		g.note("view %s at %s of %s", fmtNe(inner), fmtNe(off), fmtNe(base))
	}
	if layout >= 2 && perm != [4]int{0, 1, 2, 3} {
		x = g.b.Permute(x, perm)
		g.note("permute %s -> %s", fmtPerm(perm), fmtNe(ne))
	}
	return x
}

// node returns a computed tensor of shape ne and type t (F32 or F16); in-place ops and
// copies have their destination's layout, the others a contiguous one.
func (g *graphGen) node(ne [4]int64, t tensor.Type, depth int) ggml.Tensor {
	l, ctx := g.b.L, g.b.Ctx
	if t == f16 {
		// F16 values come from copies: CPY (F32 or F16 source) into an F16 tensor, or CONT.
		return g.copyTo(ne, f16, depth)
	}
	switch op := g.pick(15); op {
	case 0, 1, 2, 3: // binary
		names := []string{"ADD", "SUB", "MUL", "DIV"}
		bne := ne
		for i := range bne {
			if g.pick(3) == 0 {
				bne[i] = 1
			}
		}
		a := g.value(ne, f32, rowsContiguous, depth)
		var b ggml.Tensor
		switch {
		case op == 3: // divisors stay away from zero
			b = g.leaf(bne, f32)
			g.b.Init(b, AwayFromZero(0.5, 2))
		case bne == ne:
			b = g.value(bne, f32, anyLayout, depth)
		default:
			b = g.value(bne, f32, rowsContiguous, depth)
		}
		inplace := g.pick(3) == 2
		g.note("%s%s %s by %s", names[op], map[bool]string{true: "_inplace"}[inplace], fmtNe(ne), fmtNe(bne))
		if inplace {
			return binOps[op].inplace(l, ctx, a, b)
		}
		return binOps[op].op(l, ctx, a, b)
	case 4: // SCALE
		a := g.value(ne, f32, contiguous, depth)
		s, bias := choose[float32](g, 2.5, -0.5, 0.125), choose[float32](g, 0, 0, 0.75)
		g.note("SCALE %s s=%g b=%g", fmtNe(ne), s, bias)
		if bias != 0 {
			return l.ScaleBias(ctx, a, s, bias)
		}
		return l.Scale(ctx, a, s)
	case 5, 6: // RMS_NORM, NORM
		a := g.value(ne, f32, rowsContiguous, depth)
		if op == 5 {
			g.note("RMS_NORM %s", fmtNe(ne))
			return l.RMSNorm(ctx, a, 1e-6)
		}
		g.note("NORM %s", fmtNe(ne))
		return l.Norm(ctx, a, 1e-5)
	case 7: // CONT or CPY to F32
		return g.copyTo(ne, f32, depth)
	case 8: // GET_ROWS
		rows := int64(1 + g.pick(9))
		src := g.value([4]int64{ne[0], rows, ne[2], ne[3]}, choose(g, f32, f16), rowsContiguous, depth)
		idx := g.b.Index(g.name("rows"), rows, ne[1], ne[2], ne[3])
		g.note("GET_ROWS %s from %s rows", fmtNe(ne), src.Type())
		return l.GetRows(ctx, src, idx)
	case 9: // MUL_MAT
		k := choose[int64](g, 1, 3, 8, 16, 32, 33, 64, 128)
		a2, a3 := divisor(g, ne[2]), divisor(g, ne[3])
		wt := choose(g, f32, f16)
		a := g.value([4]int64{k, ne[0], a2, a3}, wt, rowsContiguous, depth)
		b := g.value([4]int64{k, ne[1], ne[2], ne[3]}, f32, rowsContiguous, depth)
		if a.Nb()[0] > a.Nb()[1] {
			a = l.Cont(ctx, a) // ggml refuses a transposed src0
		}
		g.note("MUL_MAT %s %s x %s", wt, fmtNe(a.Ne()), fmtNe(b.Ne()))
		return l.MulMat(ctx, a, b)
	case 10: // SOFT_MAX
		a := g.value(ne, f32, contiguous, depth)
		var mask ggml.Tensor
		scale, maxBias := choose[float32](g, 1, 0.5, 0.125), float32(0)
		if g.pick(2) == 0 {
			mne := [4]int64{ne[0], ne[1] + int64(g.pick(3)), divisor(g, ne[2]), divisor(g, ne[3])}
			mt := choose(g, f32, f16)
			mask = g.leaf(mne, mt)
			if g.pick(2) == 0 {
				g.b.Init(mask, causalMask(mne[0], mne[1], int64(g.pick(3))))
			}
			maxBias = choose[float32](g, 0, 8)
			g.note("SOFT_MAX %s mask %s %s scale=%g max_bias=%g", fmtNe(ne), mt, fmtNe(mne), scale, maxBias)
		} else {
			g.note("SOFT_MAX %s scale=%g", fmtNe(ne), scale)
		}
		return l.SoftMaxExt(ctx, a, mask, scale, maxBias)
	case 11: // ROPE
		if ne[0]%2 != 0 {
			return g.node(ne, t, depth) // rows must hold whole pairs
		}
		a := g.value(ne, f32, rowsContiguous, depth)
		pos := g.b.Index(g.name("pos"), 1000, ne[2])
		nd := int(ne[0]) - 2*g.pick(int(ne[0])/2)
		mode := choose(g, tensor.RopeNormal, tensor.RopeNeox)
		p := choose(g, ropePlain, ropeAll)
		var freq ggml.Tensor
		if p.ff {
			freq = g.leaf([4]int64{int64(max(nd/2, 1)), 1, 1, 1}, f32)
			g.b.Init(freq, Uniform(0.9, 1.1))
		}
		inplace := g.pick(3) == 2
		g.note("ROPE %s n_dims=%d mode=%d ff=%v inplace=%v", fmtNe(ne), nd, mode, p.ff, inplace)
		if inplace {
			return l.RopeExtInplace(ctx, a, pos, freq, ropeExtArgs(nd, mode, p))
		}
		return l.RopeExt(ctx, a, pos, freq, ropeExtArgs(nd, mode, p))
	case 12, 13: // SILU, GELU
		a := g.value(ne, f32, contiguous1, depth)
		if op == 12 {
			g.note("SILU %s", fmtNe(ne))
			return l.SiLU(ctx, a)
		}
		g.note("GELU %s", fmtNe(ne))
		return l.GELU(ctx, a)
	default: // SWIGLU
		if g.pick(2) == 0 {
			a := g.value([4]int64{2 * ne[0], ne[1], ne[2], ne[3]}, f32, contiguous1, depth)
			g.note("SWIGLU fused %s", fmtNe(ne))
			return l.SwiGLU(ctx, a)
		}
		a := g.value(ne, f32, contiguous1, depth)
		b := g.value(ne, f32, contiguous1, depth)
		g.note("SWIGLU split %s", fmtNe(ne))
		return l.SwiGLUSplit(ctx, a, b)
	}
}

// packed reports whether x has the plain strides of a new tensor, dims of size 1 included
// (ggml's ggml_is_padded_1d, which SCALE asserts, looks at those too).
func packed(x ggml.Tensor) bool {
	ne, nb := x.Ne(), x.Nb()
	next := uint64(x.Type().Size())
	for i := 0; i < 4; i++ {
		if nb[i] != next {
			return false
		}
		next *= uint64(ne[i])
	}
	return true
}

// divisor returns a divisor of n (1 or n itself when n is prime).
func divisor(g *graphGen, n int64) int64 {
	var ds []int64
	for d := int64(1); d <= n; d++ {
		if n%d == 0 {
			ds = append(ds, d)
		}
	}
	return choose(g, ds...)
}

// copyTo returns a tensor of type t made by a copy: CONT of a t value, or CPY of an F32 or
// F16 value into a t leaf.
func (g *graphGen) copyTo(ne [4]int64, t tensor.Type, depth int) ggml.Tensor {
	l, ctx := g.b.L, g.b.Ctx
	if g.pick(2) == 0 {
		x := g.value(ne, t, anyLayout, depth)
		g.note("CONT %s %s", t, fmtNe(ne))
		return l.Cont(ctx, x)
	}
	src := g.value(ne, choose(g, f32, f16), anyLayout, depth)
	g.note("CPY %s -> %s %s", src.Type(), t, fmtNe(ne))
	return l.Cpy(ctx, src, g.leaf(ne, t))
}
