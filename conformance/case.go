// Package conformance is the op-by-op NMSE suite of libggml-wgpu against the real ggml CPU
// backend: each Case builds a one-op graph twice (once per backend) in no_alloc contexts,
// both copies get the same deterministic inputs, and the outputs are compared with ggml's
// test-backend-ops metric (NMSE, see docs/ARCHITECTURE.md section 4). Sentinel tensors between the inputs
// catch writes outside a tensor.
//
// Run it with `go test ./conformance/` (TestConformance needs build/libggml-wgpu.so from
// scripts/build.sh and the ggml libraries from scripts/setup.sh; the environment variable
// GGML_WGPU_CONFORMANCE_FILTER restricts it to cases whose name or op contains a substring),
// or with the CLI `go run ./conformance/cmd/wgpu-conformance` (-filter, -v, -self, -list).
// TestHarnessSelf validates the harness with the CPU backend on both sides.
package conformance

import (
	"fmt"
	"math/rand"
	"strings"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// InitFunc produces n values for a leaf tensor, in the tensor's logical (contiguous) element
// order; the runner converts them to the tensor's type (F32, F16, I32 or I64, or quantizes
// them with ggml's quantizer).
type InitFunc func(r *rand.Rand, n int) []float32

// Uniform returns an InitFunc drawing uniformly from [lo, hi).
func Uniform(lo, hi float32) InitFunc {
	return func(r *rand.Rand, n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = lo + (hi-lo)*r.Float32()
		}
		return v
	}
}

// AwayFromZero returns an InitFunc drawing |x| uniformly from [lo, hi) with a random sign
// (for divisors).
func AwayFromZero(lo, hi float32) InitFunc {
	return func(r *rand.Rand, n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = lo + (hi-lo)*r.Float32()
			if r.Intn(2) == 0 {
				v[i] = -v[i]
			}
		}
		return v
	}
}

// Indices returns an InitFunc drawing integers uniformly from [0, max).
func Indices(max int64) InitFunc {
	return func(r *rand.Rand, n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.Int63n(max))
		}
		return v
	}
}

// DistinctRows returns an InitFunc for row-index tensors of SET_ROWS: every run of perRow
// consecutive values (one row of the index tensor) is a random selection of distinct
// integers from [0, numRows), so that no destination row is written twice and the result
// does not depend on the order of the writes.
func DistinctRows(numRows, perRow int) InitFunc {
	return func(r *rand.Rand, n int) []float32 {
		if perRow > numRows {
			panic(fmt.Sprintf("DistinctRows: %d distinct rows out of %d", perRow, numRows))
		}
		v := make([]float32, 0, n)
		for len(v) < n {
			for _, i := range r.Perm(numRows)[:perRow] {
				v = append(v, float32(i))
			}
		}
		return v[:n]
	}
}

// IntRange returns an InitFunc drawing integers uniformly from [lo, hi) (e.g. negative
// RoPE position deltas).
func IntRange(lo, hi int64) InitFunc {
	return func(r *rand.Rand, n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(lo + r.Int63n(hi-lo))
		}
		return v
	}
}

// Case is one conformance check: a graph that ends in the op under test.
type Case struct {
	// Name identifies the case uniquely, in test-backend-ops style: OP(type=...,ne=...).
	Name string
	// Op is the op family the case counts under in the report (e.g. "ADD", "UNARY(SILU)").
	Op string
	// Types labels the tensor types of the case in the report (e.g. "f32", "f16->f32").
	Types string
	// MaxNMSE is the largest acceptable NMSE against the CPU backend.
	MaxNMSE float64
	// Optional cases may be unsupported by the device under test without failing the suite.
	Optional bool
	// UnorderedRows, when positive, compares the output's rows of that many values as sets:
	// each row is sorted on both sides first (TOP_K leaves its indices in no particular order).
	UnorderedRows int
	// Init, when set, replaces the default initializer (uniform [-1,1]) of the case's F32 and
	// F16 leaves that have no initializer of their own (see Builder.Init).
	Init InitFunc
	// Placed cases have their computed tensors placed by ggml-alloc (ggml_gallocr), which
	// puts a result over the memory of one no later node reads, as in a model's compute
	// buffer; the leaves go in a buffer of their own, the output and the Check tensors are
	// kept as graph outputs. Fusions whose guards look at where results lie meet the
	// placements a model gives them there (the other cases give every tensor its own memory).
	Placed bool
	// Build creates the inputs in b's context and returns the output tensor.
	Build func(b *Builder) ggml.Tensor
	// RefBuild, when set, replaces Build on the CPU backend (the reference, and the device
	// under test in the self test) for an op the CPU backend cannot compute: it must create
	// the same leaves in the same order and compute the same values through ops it can
	// (e.g. CPY from a quantized type to F16 as a copy to F32, then to F16).
	RefBuild func(b *Builder) ggml.Tensor
}

// Builder is what a Case's Build function works with: the library and a no_alloc context,
// plus bookkeeping for initializers, extra checked tensors and sentinels.
type Builder struct {
	// L is the ggml library.
	L *ggml.Lib
	// Ctx is the no_alloc context the case builds in.
	Ctx ggml.Context

	inits     map[ggml.Tensor]InitFunc
	patches   map[ggml.Tensor]func(raw []byte)
	checks    []ggml.Tensor
	roots     []ggml.Tensor
	sentinels []ggml.Tensor
	noSent    bool
}

// sentinelSize is the number of F32 elements of each sentinel tensor placed after the
// inputs, to catch writes past the end of a tensor (as test-backend-ops does).
const sentinelSize = 256

func newBuilder(l *ggml.Lib, ctx ggml.Context) *Builder {
	return &Builder{L: l, Ctx: ctx, inits: map[ggml.Tensor]InitFunc{}, patches: map[ggml.Tensor]func([]byte){}}
}

func (b *Builder) addSentinel() {
	if b.noSent {
		return
	}
	s := b.L.NewTensor1D(b.Ctx, tensor.F32, sentinelSize)
	b.L.SetName(s, fmt.Sprintf("sentinel_%d", len(b.sentinels)))
	b.sentinels = append(b.sentinels, s)
}

// New creates a named 4-D leaf tensor of type t with shape ne (missing dimensions are 1),
// followed by a sentinel.
func (b *Builder) New(name string, t tensor.Type, ne ...int64) ggml.Tensor {
	s := shape(ne...)
	x := b.L.NewTensor4D(b.Ctx, t, s[0], s[1], s[2], s[3])
	b.L.SetName(x, name)
	b.addSentinel()
	return x
}

// Index creates a named I32 leaf tensor of shape ne holding values in [0, max).
func (b *Builder) Index(name string, max int64, ne ...int64) ggml.Tensor {
	x := b.New(name, tensor.I32, ne...)
	b.inits[x] = Indices(max)
	return x
}

// Init sets the initializer of the leaf tensor x.
func (b *Builder) Init(x ggml.Tensor, f InitFunc) { b.inits[x] = f }

// Patch sets a function that changes the leaf tensor x's bytes after its initializer's
// values are encoded (quantized blocks included) and before they are written to the
// backend: bytes no encoder writes, such as a block's scale set to NaN.
func (b *Builder) Patch(x ggml.Tensor, f func(raw []byte)) { b.patches[x] = f }

// Check adds x to the tensors compared between the backends, after the output (e.g. the
// whole destination of a copy into a view, to see that nothing outside the view changed).
func (b *Builder) Check(x ggml.Tensor) { b.checks = append(b.checks, x) }

// Expand adds x's computation to the graph before the output's (ggml_build_forward_expand
// in the order of the calls): for results nothing downstream reads, such as a SET_ROWS into
// a cache beside another one (Check compares them).
func (b *Builder) Expand(x ggml.Tensor) { b.roots = append(b.roots, x) }

// Permute is ggml_permute on the builder's context.
func (b *Builder) Permute(x ggml.Tensor, p [4]int) ggml.Tensor {
	return b.L.Permute(b.Ctx, x, p[0], p[1], p[2], p[3])
}

// View4D is ggml_view_4d on the builder's context, with x's strides and a byte offset.
func (b *Builder) View4D(x ggml.Tensor, ne [4]int64, offset uint64) ggml.Tensor {
	nb := x.Nb()
	return b.L.View4D(b.Ctx, x, ne[0], ne[1], ne[2], ne[3], nb[1], nb[2], nb[3], offset)
}

// shape pads ne with ones to 4 dimensions.
func shape(ne ...int64) [4]int64 {
	s := [4]int64{1, 1, 1, 1}
	copy(s[:], ne)
	return s
}

// fmtNe formats a shape as [a,b,c,d].
func fmtNe(ne [4]int64) string {
	parts := make([]string, 4)
	for i, v := range ne {
		parts[i] = fmt.Sprint(v)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// fmtPerm formats a permutation as [a,b,c,d].
func fmtPerm(p [4]int) string {
	return fmt.Sprintf("[%d,%d,%d,%d]", p[0], p[1], p[2], p[3])
}

// permuteShape returns the shape a tensor must be created with so that ggml_permute(x, p)
// has shape ne: source axis i goes to position p[i], so created[i] = ne[p[i]].
func permuteShape(ne [4]int64, p [4]int) [4]int64 {
	var s [4]int64
	for i := 0; i < 4; i++ {
		s[i] = ne[p[i]]
	}
	return s
}
