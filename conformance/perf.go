package conformance

// Perf mode: op timings on one or more ggml devices side by side, after the method of the
// perf mode of ggml's tests/test-backend-ops.cpp. For each case and device:
//
//   - the inputs are created once in a no_alloc context; the op is then added to one graph
//     reps times, every repetition a separate node with its own output that reads the same
//     inputs (the weights of MUL_MAT and GET_ROWS are not duplicated);
//   - reps is chosen so that one graph moves PerfOptions.TargetBytes (or does
//     PerfOptions.TargetFlops for MUL_MAT), within [1, MaxReps] and the OutputCap on the
//     memory of the outputs;
//   - everything is allocated on the device, the leaves other than F32 ones (weights,
//     caches) in a buffer of their own and the rest with ggml_backend_alloc_ctx_tensors, as
//     in a model, and the leaves are filled once;
//   - a graph of one repetition is computed as a warm-up (it compiles the pipelines) and
//     gives the time of one op, from which reps is lowered so that one graph takes about
//     MaxGraphTime at most (slow devices: lavapipe; one submission must not run for seconds);
//   - the graph of reps repetitions is computed once as a warm-up, then
//     ggml_backend_graph_compute followed by ggml_backend_synchronize is timed until at least
//     MinRuns runs and MinTime have passed (or MaxTime, for slow devices);
//   - the result is µs per op (total time ÷ runs ÷ reps), the memory bandwidth (bytes read
//     and written by one op ÷ its time, in GB/s of 1e9 bytes) and, for MUL_MAT, TFLOP/s
//     (2·m·n·k per op).
//
// Cases that a device refuses (ggml_backend_dev_supports_op on any node of one repetition)
// are reported as unsupported on that device.

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// PerfCase is one op to time: a shape of a llama model's decode or prefill graph.
type PerfCase struct {
	// Name identifies the case in test-backend-ops style, e.g.
	// MUL_MAT(type_a=f16,type_b=f32,m=4096,n=512,k=4096).
	Name string
	// Op is the op family (e.g. "MUL_MAT"); -filter matches it too.
	Op string
	// Build creates the inputs in b once and returns rep, which adds one more repetition of
	// the op reading those inputs and returns its output.
	Build func(b *PerfBuilder) (rep func() ggml.Tensor)
	// Chain marks a repetition of several nodes (a pattern a backend may fuse): its bytes
	// and FLOP are the sums over its nodes, not those of its output node alone.
	Chain bool
}

// PerfBuilder is what a PerfCase's Build works with: the library, a no_alloc context and the
// value ranges of the index leaves.
type PerfBuilder struct {
	// L is the ggml library.
	L *ggml.Lib
	// Ctx is the no_alloc context of the case.
	Ctx ggml.Context

	idxMax map[ggml.Tensor]int64
	values map[ggml.Tensor]leafValues
}

// leafValues draws a leaf's values roughly normal (the sum of four uniforms, as the
// benchmark models' generator does) of deviation std; with flush, those smaller in
// magnitude than the smallest normal half (2^-14) become zero.
type leafValues struct {
	std   float32
	flush bool
}

// NewNormal is New with roughly normal values of deviation std (trained weights' scale);
// with flush, no value is below the smallest normal half in magnitude.
func (b *PerfBuilder) NewNormal(name string, t tensor.Type, std float32, flush bool, ne ...int64) ggml.Tensor {
	x := b.New(name, t, ne...)
	b.values[x] = leafValues{std, flush}
	return x
}

// New creates a named leaf of type t and shape ne (missing dimensions are 1), filled with
// values in [-1, 1).
func (b *PerfBuilder) New(name string, t tensor.Type, ne ...int64) ggml.Tensor {
	s := shape(ne...)
	x := b.L.NewTensor4D(b.Ctx, t, s[0], s[1], s[2], s[3])
	b.L.SetName(x, name)
	return x
}

// Index creates a named integer leaf (I32 or I64) of shape ne holding values in [0, max).
func (b *PerfBuilder) Index(name string, t tensor.Type, max int64, ne ...int64) ggml.Tensor {
	x := b.New(name, t, ne...)
	b.idxMax[x] = max
	return x
}

// PerfOptions says how long and how much each measurement runs.
type PerfOptions struct {
	// TargetBytes is the memory traffic one graph should move (ops without a FLOP count).
	TargetBytes uint64
	// TargetFlops is the work one graph should do (MUL_MAT).
	TargetFlops uint64
	// MaxReps bounds the repetitions of the op in one graph (also bounded by the graph size).
	MaxReps int
	// OutputCap bounds the memory of the outputs of all repetitions of one graph.
	OutputCap uint64
	// MinRuns and MinTime: the timed runs go on until both are reached...
	MinRuns int
	MinTime time.Duration
	// ...or until MaxTime has passed (0: no limit), for slow devices.
	MaxTime time.Duration
	// MaxGraphTime bounds the time of one graph: reps is lowered to fit the time of one op
	// measured in the warm-up (0: no bound).
	MaxGraphTime time.Duration
	// MaxOpFlops skips the cases whose single op does more work than this (0: no limit), e.g.
	// the prefill MUL_MATs on lavapipe.
	MaxOpFlops uint64
}

// DefaultPerfOptions returns the options of a normal perf run: up to 1 GiB of traffic or
// 100 GFLOP per graph, at most 200 repetitions and about 1 s, then at least 5 runs and 1 s
// (20 s at most).
func DefaultPerfOptions() PerfOptions {
	return PerfOptions{
		TargetBytes: 1 << 30,
		TargetFlops: 100e9,
		MaxReps:     200,
		OutputCap:   1 << 30,
		MinRuns:     5,
		MinTime:     time.Second,
		MaxTime:     20 * time.Second,
		// test-backend-ops' graphs take ~0.3-1 s on a GPU: 100 GFLOP, 32 GB.
		MaxGraphTime: time.Second,
	}
}

// QuickPerfOptions returns the options of a quick run (e.g. on lavapipe): 16 MiB or 1 GFLOP
// per graph, at most 16 repetitions and about 250 ms, one timed run after the warm-up unless
// it is very fast.
func QuickPerfOptions() PerfOptions {
	return PerfOptions{
		TargetBytes:  16 << 20,
		TargetFlops:  1e9,
		MaxReps:      16,
		OutputCap:    256 << 20,
		MinRuns:      1,
		MinTime:      50 * time.Millisecond,
		MaxTime:      time.Second,
		MaxGraphTime: 250 * time.Millisecond,
	}
}

// PerfStatus is the outcome of one case on one device.
type PerfStatus int

// The outcomes of a measurement.
const (
	// PerfOK: measured.
	PerfOK PerfStatus = iota
	// PerfUnsupported: the device's supports_op refused a node of the case.
	PerfUnsupported
	// PerfError: building, allocating or computing failed.
	PerfError
	// PerfSkipped: the op does more than PerfOptions.MaxOpFlops.
	PerfSkipped
)

// PerfResult is the measurement of one case on one device.
type PerfResult struct {
	// Case and Device say what was measured where.
	Case   *PerfCase
	Device string
	// Status says whether it was measured; Msg explains the other outcomes.
	Status PerfStatus
	Msg    string
	// Reps is the number of repetitions of the op in the graph, Runs the number of timed
	// graph computations, Elapsed their total time.
	Reps, Runs int
	Elapsed    time.Duration
	// Bytes is the memory traffic of one op (bytes read + written), Flops its floating
	// point operations (0 for ops other than MUL_MAT).
	Bytes, Flops uint64
	// US is the time per op in µs, GBps the bandwidth in GB/s (1e9 bytes), TFLOPS the
	// throughput in TFLOP/s (0 without Flops).
	US, GBps, TFLOPS float64
}

// ---------------------------------------------------------------------------------------
// The cases.

// llamaMatShapes are the (k, m) of the weights of llama models: 1B (2048, 8192 FFN, 512 KV),
// 7B/8B (4096, 14336 FFN), 70B-like (8192) and the 32000-token output head.
var llamaMatShapes = [][2]int64{
	{2048, 2048}, {2048, 512}, {2048, 8192}, {8192, 2048}, {2048, 32000},
	{4096, 4096}, {4096, 14336}, {14336, 4096},
}

// PerfCases returns the perf suite: the decode (n=1) and prefill (n=512) shapes of llama
// models.
func PerfCases() []*PerfCase {
	var cs []*PerfCase
	for _, n := range []int64{1, 512} {
		for _, km := range llamaMatShapes {
			cs = append(cs, perfMulMat(tensor.F16, km[0], km[1], n))
		}
	}
	// The weight formats at the 8B model's feed-forward shapes, decode to prefill.
	for _, ta := range perfWeightTypes {
		for _, km := range [][2]int64{{4096, 14336}, {14336, 4096}} {
			for _, n := range []int64{1, 2, 4, 8, 512} {
				if ta == tensor.F16 && (n == 1 || n == 512) {
					continue // above
				}
				cs = append(cs, perfMulMat(ta, km[0], km[1], n))
			}
		}
	}
	// Output heads (vocab 128256) of 1B and 8B models at one column: weights larger than a
	// large GPU's L2 cache, so every repetition streams them from memory as decode does.
	for _, ta := range perfWeightTypes {
		for _, k := range []int64{2048, 4096} {
			cs = append(cs, perfMulMat(ta, k, 128256, 1))
		}
	}
	// the heads of several sequences decoded together
	for _, ta := range []tensor.Type{tensor.Q4_0, tensor.Q4_K, tensor.Q6_K} {
		for _, k := range []int64{2048, 4096} {
			cs = append(cs, perfMulMat(ta, k, 128256, 8))
		}
	}
	// Decode and small-batch products as a model runs them: weights beyond the L2 cache.
	for _, ta := range perfWeightTypes {
		for _, km := range [][2]int64{{4096, 14336}, {14336, 4096}} {
			for _, n := range []int64{1, 2, 4, 8} {
				cs = append(cs, perfMulMatCold(ta, km[0], km[1], n))
			}
		}
	}
	for _, ta := range []tensor.Type{tensor.F16, tensor.Q4_0, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.Q8_0, tensor.MXFP4, tensor.IQ4_XS} {
		for _, km := range [][2]int64{{2048, 2048}, {2048, 512}, {8192, 2048}, {2048, 8192}, {4096, 4096}, {4096, 1024}} {
			cs = append(cs, perfMulMatCold(ta, km[0], km[1], 1))
		}
	}
	// Small batches of the 1B's products and the 8B's square ones (where several columns
	// take the integer mat-vec from: ops.swarApplies).
	for _, ta := range []tensor.Type{tensor.Q4_0, tensor.Q4_K, tensor.Q8_0} {
		for _, km := range [][2]int64{{2048, 2048}, {8192, 2048}, {2048, 8192}, {4096, 4096}} {
			for _, n := range []int64{2, 4, 8} {
				cs = append(cs, perfMulMatCold(ta, km[0], km[1], n))
			}
		}
	}
	// Short prompts and many sequences decoded together: n between the mat-vec's 8 and the
	// prompt kernel's 128 columns.
	for _, ta := range []tensor.Type{tensor.F16, tensor.Q4_0, tensor.Q4_K} {
		for _, n := range []int64{16, 32, 64} {
			cs = append(cs, perfMulMat(ta, 4096, 14336, n))
		}
	}
	// The formats with single-bit fields (a high bit joined to its low bits, hbits1024 in
	// common.wgsl, or signs), one column, weights beyond the L2 cache (Q5_K's in the sweep
	// of perfWeightTypes); Q5_0 and Q5_1 (the integer mat-vec's HBIT form) by 1, 2 and 4.
	for _, ta := range []tensor.Type{tensor.Q3_K, tensor.IQ2_XXS, tensor.IQ3_S} {
		cs = append(cs, perfMulMatCold(ta, 4096, 14336, 1))
	}
	for _, ta := range []tensor.Type{tensor.Q5_0, tensor.Q5_1} {
		for _, n := range []int64{1, 2, 4} {
			cs = append(cs, perfMulMatCold(ta, 4096, 14336, n))
		}
	}
	// The other formats read through workgroup lookup tables (wgsl.formatTables), one
	// column, weights beyond the L2 cache.
	for _, ta := range []tensor.Type{tensor.IQ1_S, tensor.IQ1_M, tensor.IQ2_XS, tensor.IQ2_S, tensor.IQ3_XXS, tensor.IQ4_NL} {
		cs = append(cs, perfMulMatCold(ta, 4096, 14336, 1))
	}
	// The other decode products of 1B and 8B models (Q, O, down) in the 4-bit formats.
	for _, ta := range []tensor.Type{tensor.Q4_0, tensor.Q4_K} {
		for _, km := range [][2]int64{{2048, 2048}, {8192, 2048}, {4096, 4096}} {
			cs = append(cs, perfMulMat(ta, km[0], km[1], 1))
		}
	}
	cs = append(cs,
		perfRMSNorm(4096, 1),
		perfRMSNorm(4096, 512),
		perfBinary("MUL", 4096, 512, 1),
		perfBinary("ADD", 4096, 512, 512),
		perfSoftMax(1024, 32),
		perfRopeNeox(128, 32, 512),
		perfSwiGLU(14336, 1),
		perfSwiGLU(14336, 512),
		perfCpy(4096, 512),
		perfCpy(4096, 32768), // 512 MiB read, 256 MiB written: the memory bandwidth
		perfSetRows(1024, 4096, 8),
		perfGetRows(4096, 512, 1),
		perfGetRows(4096, 32000, 1),
		perfGetRows(4096, 32000, 512),
	)
	// A prompt product over weights drawn as the benchmark models' are (deviation 0.02, a
	// few halves per thousand subnormal), and the same with those flushed to zero.
	cs = append(cs, perfMulMatNormal(tensor.F16, 2048, 8192, 442, false), perfMulMatNormal(tensor.F16, 2048, 8192, 442, true))
	// Mixture of experts: a 30B-A3B-like model's expert products (128 experts of 768 x 2048,
	// 8 used) in Q4_K and a gpt-oss-20b-like one's (32 of 2880 x 2880, 4 used) in MXFP4,
	// decode (the mat-vec) to prompts (the routed prompt kernel),
	// and the 30B-A3B-like down product (2048 x 768) by a prompt.
	for _, n := range []int64{4, 8, 16, 32, 64, 128, 256, 512} {
		cs = append(cs, perfMulMatID(tensor.Q4_K, 128, 8, 2048, 768, n), perfMulMatID(tensor.MXFP4, 32, 4, 2880, 2880, n))
	}
	// A decoding token's (one token's) gate or up product (a row of b for every slot) and
	// down product (a row of b a slot) of the 30B-A3B-like experts, and of the
	// gpt-oss-20b-like ones.
	cs = append(cs, perfMulMatIDBcast(tensor.Q4_K, 128, 8, 2048, 768), perfMulMatID(tensor.Q4_K, 128, 8, 768, 2048, 1),
		perfMulMatIDBcast(tensor.MXFP4, 32, 4, 2880, 2880), perfMulMatID(tensor.MXFP4, 32, 4, 2880, 2880, 1))
	cs = append(cs, perfMulMatID(tensor.Q4_K, 128, 8, 768, 2048, 512))
	// the same with every token routed within a pool of a few experts (2 x used), as a
	// model with random weights routes its tokens
	for _, n := range []int64{128, 512} {
		cs = append(cs, perfMulMatIDPool(tensor.Q4_K, 128, 8, 2048, 768, n, 16), perfMulMatIDPool(tensor.MXFP4, 32, 4, 2880, 2880, n, 8))
	}
	cs = append(cs, perfFlashAttnCases()...)
	cs = append(cs, perfChainCases()...)
	cs = append(cs, perfFFNGateCases()...)
	return cs
}

// FilterPerf returns the cases whose name or op contains substr (case-insensitive); substr
// may list alternatives separated by "|".
func FilterPerf(cases []*PerfCase, substr string) []*PerfCase {
	return filterNamed(cases, substr, func(c *PerfCase) (string, string) { return c.Name, c.Op })
}

// perfMulMatID: experts weights [k, m, experts] of type ta, used of them per token, times
// activations [k, used, n] F32 into [m, used, n] F32; ids drawn at random.
func perfMulMatID(ta tensor.Type, experts, used, k, m, n int64) *PerfCase {
	return perfMulMatIDPool(ta, experts, used, k, m, n, experts)
}

// perfMulMatIDPool is perfMulMatID with ids drawn from the first pool experts only (named
// so where pool is not every expert).
func perfMulMatIDPool(ta tensor.Type, experts, used, k, m, n, pool int64) *PerfCase {
	return perfMulMatIDOf(ta, experts, used, k, m, n, pool, false)
}

// perfMulMatIDBcast is a MUL_MAT_ID of one token whose one row of activations b every
// slot reads (a feed-forward's gate or up product): experts [k, m, experts] of type ta,
// ids drawn from every expert.
func perfMulMatIDBcast(ta tensor.Type, experts, used, k, m int64) *PerfCase {
	return perfMulMatIDOf(ta, experts, used, k, m, 1, experts, true)
}

// perfMulMatIDOf builds the MUL_MAT_ID perf cases: activations [k, used, n], or [k, 1, n]
// read by every slot where bcast, ids from the first pool experts.
func perfMulMatIDOf(ta tensor.Type, experts, used, k, m, n, pool int64, bcast bool) *PerfCase {
	name := fmt.Sprintf("MUL_MAT_ID(type_a=%s,type_b=f32,n_mats=%d,n_used=%d,m=%d,n=%d,k=%d", ta, experts, used, m, n, k)
	if pool != experts {
		name += fmt.Sprintf(",pool=%d", pool)
	}
	rows := used
	if bcast {
		name += ",b=bcast"
		rows = 1
	}
	return &PerfCase{
		Name: name + ")",
		Op:   "MUL_MAT_ID",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			as := b.New("as", ta, k, m, experts)
			x := b.New("b", f32, k, rows, n)
			ids := b.Index("ids", tensor.I32, pool, used, n)
			return func() ggml.Tensor { return b.L.MulMatID(b.Ctx, as, x, ids) }
		},
	}
}

// perfWeightTypes are the weight formats of the MUL_MAT sweep.
var perfWeightTypes = []tensor.Type{tensor.F16, tensor.Q8_0, tensor.Q4_0, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.IQ4_XS, tensor.MXFP4}

// perfMulMat: weights [k, m] of type ta times activations [k, n] F32 into [m, n] F32.
func perfMulMat(ta tensor.Type, k, m, n int64) *PerfCase {
	return &PerfCase{
		Name: fmt.Sprintf("MUL_MAT(type_a=%s,type_b=f32,m=%d,n=%d,k=%d)", ta, m, n, k),
		Op:   "MUL_MAT",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			w := b.New("w", ta, k, m)
			x := b.New("x", f32, k, n)
			return func() ggml.Tensor { return b.L.MulMat(b.Ctx, w, x) }
		},
	}
}

// perfColdBytes is what the copies of a cold case's weights add up to at least: several
// times a large GPU's L2 cache (50 MiB on an H100 or H200), so that every repetition
// streams its weights from memory as a model's decode does (each layer has its own).
const perfColdBytes = 256 << 20

// perfMulMatCold is perfMulMat with the repetitions taking their weights in turn from
// enough copies to hold perfColdBytes ("weights=cold"): the repeated weights of perfMulMat
// stay in the L2 cache where they fit, a model's do not. Each copy has its own activations.
func perfMulMatCold(ta tensor.Type, k, m, n int64) *PerfCase {
	return &PerfCase{
		Name: fmt.Sprintf("MUL_MAT(type_a=%s,type_b=f32,m=%d,n=%d,k=%d,weights=cold)", ta, m, n, k),
		Op:   "MUL_MAT",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			copies := coldCopies(ta, k, m, 1)
			w := b.copies("w", ta, k, m, copies)
			// The activations have copies too: products of one activation by different
			// weights are what a backend may fuse (a layer's Q, K and V).
			x := b.copies("x", f32, k, n, copies)
			i := uint64(0)
			return func() ggml.Tensor {
				c := i % copies
				i++
				return b.L.MulMat(b.Ctx, w(c), x(c))
			}
		},
	}
}

// coldCopies returns how many copies of mats [k, m] matrices of type ta hold
// perfColdBytes.
func coldCopies(ta tensor.Type, k, m, mats int64) uint64 {
	return max(1, ceilDiv(perfColdBytes, max(rowBytes(ta, k)*uint64(m*mats), 1)))
}

// rowBytes returns the bytes of a row of k elements of type t (k a multiple of its block).
func rowBytes(t tensor.Type, k int64) uint64 {
	return uint64(k/int64(t.BlockElems())) * uint64(t.Size())
}

// copies creates one leaf of n copies of a [k, m] matrix of type t (filled once) and
// returns the view of copy c.
func (b *PerfBuilder) copies(name string, t tensor.Type, k, m int64, n uint64) func(c uint64) ggml.Tensor {
	row := rowBytes(t, k)
	all := b.New(name, t, k, m*int64(n))
	return func(c uint64) ggml.Tensor { return b.L.View2D(b.Ctx, all, k, m, row, c*row*uint64(m)) }
}

// perfMulMatNormal is perfMulMat with weights of deviation 0.02 (see leafValues).
func perfMulMatNormal(ta tensor.Type, k, m, n int64, flush bool) *PerfCase {
	name := "normal"
	if flush {
		name = "normal,flushed"
	}
	return &PerfCase{
		Name: fmt.Sprintf("MUL_MAT(type_a=%s,type_b=f32,m=%d,n=%d,k=%d,weights=%s)", ta, m, n, k, name),
		Op:   "MUL_MAT",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			w := b.NewNormal("w", ta, 0.02, flush, k, m)
			x := b.New("x", f32, k, n)
			return func() ggml.Tensor { return b.L.MulMat(b.Ctx, w, x) }
		},
	}
}

func perfRMSNorm(ne0, ne1 int64) *PerfCase {
	return &PerfCase{
		Name: fmt.Sprintf("RMS_NORM(type=f32,ne=%s)", fmtNe(shape(ne0, ne1))),
		Op:   "RMS_NORM",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			a := b.New("a", f32, ne0, ne1)
			return func() ggml.Tensor { return b.L.RMSNorm(b.Ctx, a, 1e-5) }
		},
	}
}

// perfBinary: a [ne0, ne1] op b [ne0, nb1] (broadcast along dim 1 when nb1 < ne1).
func perfBinary(op string, ne0, ne1, nb1 int64) *PerfCase {
	var f func(l *ggml.Lib, ctx ggml.Context, a, b ggml.Tensor) ggml.Tensor
	for _, o := range binOps {
		if o.name == op {
			f = o.op
		}
	}
	return &PerfCase{
		Name: fmt.Sprintf("%s(type=f32,ne=%s,ne_b=%s)", op, fmtNe(shape(ne0, ne1)), fmtNe(shape(ne0, nb1))),
		Op:   op,
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			x := b.New("a", f32, ne0, ne1)
			y := b.New("b", f32, ne0, nb1)
			return func() ggml.Tensor { return f(b.L, b.Ctx, x, y) }
		},
	}
}

// perfSoftMax: soft_max_ext of [ne0, ne1] with an F32 mask of the same shape and the scale
// of 128-wide heads.
func perfSoftMax(ne0, ne1 int64) *PerfCase {
	return &PerfCase{
		Name: fmt.Sprintf("SOFT_MAX(type=f32,ne=%s,mask=f32)", fmtNe(shape(ne0, ne1))),
		Op:   "SOFT_MAX",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			a := b.New("a", f32, ne0, ne1)
			mask := b.New("mask", f32, ne0, ne1)
			scale := float32(1 / math.Sqrt(128))
			return func() ggml.Tensor { return b.L.SoftMaxExt(b.Ctx, a, mask, scale, 0) }
		},
	}
}

// perfRopeNeox: NEOX RoPE of all head_dim dimensions of [head_dim, n_head, n_tokens].
func perfRopeNeox(hd, nh, nt int64) *PerfCase {
	return &PerfCase{
		Name: fmt.Sprintf("ROPE(type=f32,ne=%s,n_dims=%d,mode=neox)", fmtNe(shape(hd, nh, nt)), hd),
		Op:   "ROPE",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			a := b.New("a", f32, hd, nh, nt)
			pos := b.Index("pos", tensor.I32, 4096, nt)
			args := ropeExtArgs(int(hd), tensor.RopeNeox, ropePlain)
			return func() ggml.Tensor { return b.L.RopeExt(b.Ctx, a, pos, 0, args) }
		},
	}
}

// perfSwiGLU: silu(gate) * up with gate and up separate [ne0, ne1] tensors.
func perfSwiGLU(ne0, ne1 int64) *PerfCase {
	return &PerfCase{
		Name: fmt.Sprintf("GLU(type=f32,ne=%s,op=swiglu,split)", fmtNe(shape(ne0, ne1))),
		Op:   "GLU",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			g := b.New("gate", f32, ne0, ne1)
			u := b.New("up", f32, ne0, ne1)
			return func() ggml.Tensor { return b.L.SwiGLUSplit(b.Ctx, g, u) }
		},
	}
}

// perfCpy: F32 [ne0, ne1] into an F16 tensor of the same shape.
func perfCpy(ne0, ne1 int64) *PerfCase {
	return &PerfCase{
		Name: fmt.Sprintf("CPY(type_src=f32,type_dst=f16,ne=%s)", fmtNe(shape(ne0, ne1))),
		Op:   "CPY",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			src := b.New("src", f32, ne0, ne1)
			dst := b.New("dst", f16, ne0, ne1)
			return func() ggml.Tensor { return b.L.Cpy(b.Ctx, src, dst) }
		},
	}
}

// perfSetRows: one F32 row per plane [ne0, 1, ne2] into an F16 cache [ne0, rows, ne2] at I64
// row indices [1, ne2] (a KV-cache store of one token).
func perfSetRows(ne0, rows, ne2 int64) *PerfCase {
	return &PerfCase{
		Name: fmt.Sprintf("SET_ROWS(type_src=f32,type_dst=f16,type_idx=i64,ne=%s,dst=%s)",
			fmtNe(shape(ne0, 1, ne2)), fmtNe(shape(ne0, rows, ne2))),
		Op: "SET_ROWS",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			dst := b.New("cache", f16, ne0, rows, ne2)
			vals := b.New("src", f32, ne0, 1, ne2)
			idx := b.Index("row_idxs", tensor.I64, rows, 1, ne2)
			return func() ggml.Tensor { return b.L.SetRows(b.Ctx, dst, vals, idx) }
		},
	}
}

// perfGetRows: n rows of an F32 table [ne0, rows] at I32 indices: the rows of the tokens
// whose logits are wanted ([4096, 512], n=1) or a token embedding lookup ([4096, 32000]; its
// 500 MiB may exceed a device's largest storage binding).
func perfGetRows(ne0, rows, n int64) *PerfCase {
	return &PerfCase{
		Name: fmt.Sprintf("GET_ROWS(type=f32,ne=%s,n=%d)", fmtNe(shape(ne0, rows)), n),
		Op:   "GET_ROWS",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			table := b.New("table", f32, ne0, rows)
			idx := b.Index("idx", tensor.I32, rows, n)
			return func() ggml.Tensor { return b.L.GetRows(b.Ctx, table, idx) }
		},
	}
}

// opBytes is the memory traffic of one op: the bytes it reads and writes.
func opBytes(l *ggml.Lib, t ggml.Tensor) uint64 {
	elems := func(x ggml.Tensor) uint64 { return uint64(x.NElements()) }
	switch t.Op() {
	case tensor.OpCpy, tensor.OpDup, tensor.OpCont:
		// src[1] of CPY is the destination the output is a view of.
		return l.NBytes(t.Src(0)) + l.NBytes(t)
	case tensor.OpSetRows:
		// Reads the values and the indices, writes as many elements into the destination.
		return l.NBytes(t.Src(0)) + l.NBytes(t.Src(1)) + elems(t.Src(0))*uint64(t.Type().Size())
	case tensor.OpGetRows:
		// Reads the selected rows only.
		return elems(t)*uint64(t.Src(0).Type().Size()) + l.NBytes(t.Src(1)) + l.NBytes(t)
	}
	n := l.NBytes(t)
	for i := 0; i < 10; i++ {
		if s := t.Src(i); s != 0 {
			n += l.NBytes(s)
		}
	}
	return n
}

// opFlops is the floating point work of one op: 2·m·n·k for MUL_MAT, 0 for the others.
func opFlops(t ggml.Tensor) uint64 {
	if t.Op() != tensor.OpMulMat {
		return 0
	}
	return 2 * uint64(t.NElements()) * uint64(t.Src(0).Ne()[0])
}

// ---------------------------------------------------------------------------------------
// Devices.

// PerfConfig says which libraries to load and which devices to measure.
type PerfConfig struct {
	// LibDir is the directory of the ggml host libraries.
	LibDir string
	// BackendPath is libggml-wgpu.so ("" to not load it).
	BackendPath string
	// Loads are further backend libraries (e.g. libggml-vulkan.so) loaded with
	// ggml_backend_load before the devices are looked up.
	Loads []string
	// Devices are the device names to measure, in column order (case-insensitive).
	Devices []string
	// Threads is the number of threads of CPU backends (0: all cores).
	Threads int
}

// PerfDevice is one device being measured.
type PerfDevice struct {
	// Name and Description are ggml's.
	Name, Description string
	// Dev is the ggml device, Backend a backend on it.
	Dev     ggml.Device
	Backend ggml.Backend
}

// PerfEnv is a loaded ggml with backends on the devices to measure.
type PerfEnv struct {
	// L is the ggml library.
	L *ggml.Lib
	// Devices are the devices found, in the order asked for.
	Devices []*PerfDevice
	// Notes say what did not go as asked: libraries that failed to load, devices that do
	// not exist (their columns are left out).
	Notes []string
}

// loadedBackends are the backend libraries this process loaded with ggml_backend_load.
var loadedBackends = map[string]bool{}

// loadBackend loads the backend library at path once per process.
func loadBackend(l *ggml.Lib, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if loadedBackends[abs] {
		return nil
	}
	if _, err := os.Stat(abs); err != nil {
		return err
	}
	if l.BackendLoad(abs) == 0 {
		return fmt.Errorf("ggml_backend_load(%s) failed", abs)
	}
	loadedBackends[abs] = true
	return nil
}

// OpenPerf loads ggml and its CPU backend, libggml-wgpu (BackendPath) and the Loads, and
// creates a backend on each device of cfg.Devices that exists. A device that does not exist
// is noted in Notes and skipped; it is an error only if none exists.
func OpenPerf(cfg PerfConfig) (*PerfEnv, error) {
	l, err := openLib(cfg.LibDir)
	if err != nil {
		return nil, err
	}
	e := &PerfEnv{L: l}
	cpu, err := l.LoadCPU()
	if err != nil {
		e.Notes = append(e.Notes, err.Error())
	} else {
		l.BackendFree(cpu)
	}
	// Through Env.Open or GGML_BACKEND_PATH the library may be loaded already.
	if cfg.BackendPath != "" && l.DevByName(DefaultDevice) == 0 {
		if err := loadBackend(l, cfg.BackendPath); err != nil {
			e.Notes = append(e.Notes, fmt.Sprintf("libggml-wgpu not loaded: %v", err))
		}
	}
	for _, p := range cfg.Loads {
		if err := loadBackend(l, p); err != nil {
			e.Notes = append(e.Notes, fmt.Sprintf("backend library not loaded: %v", err))
		}
	}
	threads := cfg.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	seen := map[ggml.Device]bool{}
	for _, name := range cfg.Devices {
		d := l.DevByName(name)
		if d == 0 {
			var names []string
			for i := 0; i < l.DevCount(); i++ {
				names = append(names, l.DevName(l.DevGet(i)))
			}
			e.Notes = append(e.Notes, fmt.Sprintf("device %s not found (devices: %s): left out",
				name, strings.Join(names, ", ")))
			continue
		}
		if seen[d] {
			continue
		}
		seen[d] = true
		be := l.DevInit(d)
		if be == 0 {
			e.Notes = append(e.Notes, fmt.Sprintf("device %s: ggml_backend_dev_init failed: left out", l.DevName(d)))
			continue
		}
		if l.DevType(d) == ggml.DevTypeCPU {
			l.SetNThreads(be, threads)
		}
		e.Devices = append(e.Devices, &PerfDevice{Name: l.DevName(d), Description: l.DevDescription(d), Dev: d, Backend: be})
	}
	if len(e.Devices) == 0 {
		return nil, fmt.Errorf("none of the devices %v is available:\n  %s", cfg.Devices, strings.Join(e.Notes, "\n  "))
	}
	return e, nil
}

// Close frees the backends (the libraries stay loaded).
func (e *PerfEnv) Close() {
	for _, d := range e.Devices {
		e.L.BackendFree(d.Backend)
	}
	e.Devices = nil
}

// ---------------------------------------------------------------------------------------
// Measuring.

// PerfReport holds the results of a perf run: Results[i][j] is case i on device j.
type PerfReport struct {
	Devices []string
	Cases   []*PerfCase
	Results [][]PerfResult
	// Notes are copied from the PerfEnv (missing devices, libraries not loaded).
	Notes []string
}

// Run measures every case on every device, case by case (the devices of a case one after the
// other), calling each (if not nil) after every measurement.
func (e *PerfEnv) Run(cases []*PerfCase, opts PerfOptions, each func(PerfResult)) *PerfReport {
	rep := &PerfReport{Cases: cases, Notes: e.Notes}
	for _, d := range e.Devices {
		rep.Devices = append(rep.Devices, d.Name)
	}
	for _, c := range cases {
		row := make([]PerfResult, len(e.Devices))
		for j, d := range e.Devices {
			row[j] = e.Measure(c, d, opts)
			if each != nil {
				each(row[j])
			}
		}
		rep.Results = append(rep.Results, row)
	}
	return rep
}

// maxGraphNodes is what the reps of one graph may use of ggml's default graph size (2048).
const maxGraphNodes = 2000

// Measure times case c on device d.
func (e *PerfEnv) Measure(c *PerfCase, d *PerfDevice, opts PerfOptions) (res PerfResult) {
	res = PerfResult{Case: c, Device: d.Name, Status: PerfError}
	defer func() {
		if p := recover(); p != nil {
			res.Status, res.Msg = PerfError, fmt.Sprintf("panic: %v", p)
		}
	}()
	l := e.L
	maxReps := max(opts.MaxReps, 1)
	// up to 16 tensors a repetition (a pattern a backend fuses, with its views)
	mem := l.TensorOverhead()*uint64(16*maxReps+64) + 2*l.GraphOverhead() + 1<<16
	ctx := l.Init(uintptr(mem), true)
	if ctx == 0 {
		res.Msg = "ggml_init failed"
		return res
	}
	defer l.Free(ctx)

	b := &PerfBuilder{L: l, Ctx: ctx, idxMax: map[ggml.Tensor]int64{}, values: map[ggml.Tensor]leafValues{}}
	repFn := c.Build(b)
	first := repFn()
	g := l.NewGraph(ctx)
	l.BuildForwardExpand(g, first)
	nodes := l.GraphNNodes(g)
	for i := 0; i < nodes; i++ {
		node := l.GraphNode(g, i)
		if node.Op().IsView() {
			continue
		}
		if !l.DevSupportsOp(d.Dev, node) {
			res.Status = PerfUnsupported
			res.Msg = fmt.Sprintf("supports_op(%s %s %s) = false", l.OpName(node.Op()), node.Type(), fmtNe(node.Ne()))
			return res
		}
	}

	res.Bytes, res.Flops = opBytes(l, first), opFlops(first)
	if c.Chain {
		res.Bytes, res.Flops = 0, 0
		for i := 0; i < nodes; i++ {
			if node := l.GraphNode(g, i); !node.Op().IsView() {
				res.Bytes += opBytes(l, node)
				res.Flops += opFlops(node)
			}
		}
	}
	if opts.MaxOpFlops > 0 && res.Flops > opts.MaxOpFlops {
		res.Status = PerfSkipped
		res.Msg = fmt.Sprintf("%s GFLOP per op > %s (-max-gflop)", fmtSig(float64(res.Flops)/1e9),
			fmtSig(float64(opts.MaxOpFlops)/1e9))
		return res
	}
	reps := 1
	if res.Flops > 0 {
		reps = int(ceilDiv(opts.TargetFlops, res.Flops))
	} else if res.Bytes > 0 {
		reps = int(ceilDiv(opts.TargetBytes, res.Bytes))
	}
	reps = min(reps, maxReps, maxGraphNodes/max(nodes, 1))
	if first.ViewSrc() == 0 && opts.OutputCap > 0 {
		// Every repetition has an output of its own.
		reps = min(reps, int(opts.OutputCap/max(l.NBytes(first), 1)))
	}
	reps = max(reps, 1)
	outs := []ggml.Tensor{first}
	for len(outs) < reps {
		outs = append(outs, repFn())
	}

	// The leaves other than F32 ones (weights, caches) in a buffer of their own, as a
	// model's are; F32 leaves (activations, as a model computes them) beside the outputs.
	// The library binds a dispatch's inputs read-only only where no output shares their
	// buffer (backend.readOnlyOperands): on an H200 an activation bound read-only took Q4_K
	// 14336 x 4096 at 8 columns from 86.0 to 77.5 µs, and changed one column within noise.
	in, err := allocInputsApart(l, ctx, d.Backend, func(t ggml.Tensor) bool { return t.Type() != tensor.F32 })
	if err != nil {
		res.Msg = err.Error()
		return res
	}
	if in != 0 {
		defer l.BufferFree(in)
	}
	buf, err := allocRest(l, ctx, d.Backend)
	if err != nil {
		res.Msg = err.Error()
		return res
	}
	if buf != 0 {
		defer l.BufferFree(buf)
	}
	made := map[fillKey][][]byte{}
	for i, t := range l.Tensors(ctx) {
		if t.Op() != tensor.OpNone || t.ViewSrc() != 0 || t.NElements() == 0 {
			continue
		}
		if err := fillLeaf(l, t, uint64(i), b.idxMax[t], b.values[t], made); err != nil {
			res.Msg = err.Error()
			return res
		}
	}

	compute := func(g ggml.Graph) (time.Duration, error) {
		t0 := time.Now()
		if st := l.GraphCompute(d.Backend, g); st != tensor.StatusSuccess {
			return 0, fmt.Errorf("ggml_backend_graph_compute returned status %d", st)
		}
		l.Synchronize(d.Backend)
		return time.Since(t0), nil
	}
	// Warm-up of one repetition (it compiles the pipelines); when its time would lower reps,
	// the time of one op is taken again, warm.
	one, err := compute(g)
	if err == nil && reps > 1 && opts.MaxGraphTime > 0 && one*time.Duration(reps) > opts.MaxGraphTime {
		var again time.Duration
		if again, err = compute(g); err == nil {
			one = min(one, again)
		}
	}
	if err != nil {
		res.Msg = err.Error()
		return res
	}
	if opts.MaxGraphTime > 0 && one > 0 {
		reps = max(1, min(reps, int(opts.MaxGraphTime/one)))
	}
	res.Reps = reps
	if reps > 1 {
		g = l.NewGraph(ctx)
		for _, o := range outs[:reps] {
			l.BuildForwardExpand(g, o)
		}
		if _, err := compute(g); err != nil { // warm-up of the whole graph
			res.Msg = err.Error()
			return res
		}
	}
	start := time.Now()
	for {
		dt, err := compute(g)
		if err != nil {
			res.Msg = err.Error()
			return res
		}
		res.Elapsed += dt
		res.Runs++
		if res.Runs >= opts.MinRuns && res.Elapsed >= opts.MinTime {
			break
		}
		if opts.MaxTime > 0 && time.Since(start) >= opts.MaxTime {
			break
		}
	}
	ops := float64(res.Runs) * float64(res.Reps)
	sec := res.Elapsed.Seconds()
	if sec <= 0 {
		sec = 1e-9 // a clock too coarse for the run: at least 1 ns
	}
	res.US = sec * 1e6 / ops
	res.GBps = float64(res.Bytes) * ops / sec / 1e9
	if res.Flops > 0 {
		res.TFLOPS = float64(res.Flops) * ops / sec / 1e12
	}
	res.Status = PerfOK
	return res
}

func ceilDiv(a, b uint64) uint64 {
	if b == 0 {
		return 1
	}
	return (a + b - 1) / b
}

// fillChunk is the number of elements fillLeaf writes at a time.
const fillChunk = 1 << 20

// fillDistinct is the chunks of a leaf filled with distinct values; later chunks repeat
// them (quantizing hundreds of MiB of weights with ggml's quantizers took minutes).
const fillDistinct = 8

// fillKey says which big leaves fillLeaf fills alike: those of one type, row length and
// value draw.
type fillKey struct {
	typ    tensor.Type
	row    int64
	idxMax int64
	lv     leafValues
}

// fillLeaf writes deterministic data into the contiguous leaf t: values in [-1, 1) for F32,
// F16 and the quantized types (quantized by ggml's own quantizer, whole rows at a time),
// integers in [0, idxMax) for I32 and I64 (idxMax 0: 10). Big leaves of one kind share
// their first chunks through cache.
func fillLeaf(l *ggml.Lib, t ggml.Tensor, seed uint64, idxMax int64, lv leafValues, cache map[fillKey][][]byte) error {
	typ := t.Type()
	es := typ.Size()
	if es == 0 || !t.IsContiguous() {
		return fmt.Errorf("cannot fill leaf %s of type %s", t.Name(), typ)
	}
	if idxMax <= 0 {
		idxMax = 10
	}
	x := seed*0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D // xorshift64 state, never 0
	n := t.NElements()
	// Chunks of whole rows, so that quantized rows are quantized whole.
	row := t.Ne()[0]
	chunk := max(1, fillChunk/row) * row
	be := int64(max(1, typ.BlockElems()))
	next := func() float32 { // uniform in [-1, 1)
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return float32(x>>40)/float32(1<<23) - 1
	}
	vals := make([]float32, 0, chunk)
	var raw []byte
	// The first fillDistinct whole chunks, repeated after them; a big leaf (fillDistinct
	// chunks or more) repeats those of the first big leaf of its kind (cache), so that many
	// copies of a weight cost one quantization.
	key := fillKey{typ, row, idxMax, lv}
	big := n >= fillDistinct*chunk
	made := cache[key]
	if !big {
		made = nil
	}
	for off := int64(0); off < n; off += chunk {
		cnt := min(n-off, chunk)
		if c := off / chunk; c < int64(len(made)) || c >= fillDistinct && cnt == chunk {
			l.TensorSet(t, made[c%fillDistinct], uint64(off/be)*uint64(es))
			continue
		}
		vals = vals[:cnt]
		raw = raw[:0]
		for i := range vals {
			if typ == tensor.I32 || typ == tensor.I64 {
				vals[i] = float32((uint64(off+int64(i))*7919 + seed) % uint64(idxMax))
				continue
			}
			if lv.std == 0 {
				vals[i] = next()
				continue
			}
			v := (next() + next() + next() + next()) / 2 * lv.std * 1.7320508
			if lv.flush && math.Abs(float64(v)) < 1.0/16384 {
				v = 0
			}
			vals[i] = v
		}
		switch typ {
		case tensor.F32:
			for _, v := range vals {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
			}
		case tensor.F16:
			for _, h := range l.FP32ToFP16(vals) {
				raw = binary.LittleEndian.AppendUint16(raw, h)
			}
		case tensor.I32:
			for _, v := range vals {
				raw = binary.LittleEndian.AppendUint32(raw, uint32(int32(v)))
			}
		case tensor.I64:
			for _, v := range vals {
				raw = binary.LittleEndian.AppendUint64(raw, uint64(int64(v)))
			}
		default:
			if !typ.Quantized() {
				return fmt.Errorf("cannot fill leaf %s of type %s", t.Name(), typ)
			}
			q, err := l.Quantize(typ, vals, int(row))
			if err != nil {
				return fmt.Errorf("fill leaf %s: %w", t.Name(), err)
			}
			raw = q
		}
		l.TensorSet(t, raw, uint64(off/be)*uint64(es))
		if len(made) < fillDistinct && cnt == chunk {
			made = append(made, append([]byte(nil), raw...))
		}
	}
	if big && cache[key] == nil {
		cache[key] = made
	}
	return nil
}

// ---------------------------------------------------------------------------------------
// Report.

// String returns one line for a progress log.
func (r PerfResult) String() string {
	switch r.Status {
	case PerfUnsupported:
		return fmt.Sprintf("%-8s %s: unsupported: %s", r.Device, r.Case.Name, r.Msg)
	case PerfError:
		return fmt.Sprintf("%-8s %s: ERROR: %s", r.Device, r.Case.Name, r.Msg)
	case PerfSkipped:
		return fmt.Sprintf("%-8s %s: skipped: %s", r.Device, r.Case.Name, r.Msg)
	}
	return fmt.Sprintf("%-8s %s: %d reps x %d runs, %s us/op, %s", r.Device, r.Case.Name, r.Reps, r.Runs,
		fmtSig(r.US), r.rate())
}

// rate formats TFLOP/s for MUL_MAT and GB/s for the other ops.
func (r PerfResult) rate() string {
	if r.Flops > 0 {
		return fmtSig(r.TFLOPS) + " TFLOP/s"
	}
	return fmtSig(r.GBps) + " GB/s"
}

// fmtSig formats v with about 3 significant digits (no exponent for usual magnitudes).
func fmtSig(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Sprint(v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	case a >= 0.001 || a == 0:
		return fmt.Sprintf("%.3g", v)
	}
	return fmt.Sprintf("%.2e", v)
}

// WriteTable prints the results as a Markdown table, one row per case and one column group
// (µs per op, GB/s or TFLOP/s) per device, then the ratio of the first device's throughput to
// each other device's, followed by a legend and the notes (missing devices, unsupported cases,
// errors).
func (p *PerfReport) WriteTable(w io.Writer) {
	header := []string{"case"}
	for _, d := range p.Devices {
		header = append(header, d+" µs", d+" GB/s or TFLOP/s")
	}
	for _, d := range p.Devices[min(1, len(p.Devices)):] {
		header = append(header, p.Devices[0]+"/"+d)
	}
	rows := [][]string{header}
	var notes []string
	for i, c := range p.Cases {
		row := []string{c.Name}
		for _, r := range p.Results[i] {
			switch r.Status {
			case PerfOK:
				row = append(row, fmtSig(r.US), r.rate())
			case PerfUnsupported:
				row = append(row, "unsupported", "-")
				notes = append(notes, r.String())
			case PerfSkipped:
				row = append(row, "skipped", "-")
			default:
				row = append(row, "error", "-")
				notes = append(notes, r.String())
			}
		}
		for j := 1; j < len(p.Results[i]); j++ {
			a, b := p.Results[i][0], p.Results[i][j]
			if a.Status == PerfOK && b.Status == PerfOK {
				row = append(row, fmtSig(b.US/a.US))
			} else {
				row = append(row, "-")
			}
		}
		rows = append(rows, row)
	}
	// Geometric means of the ratios over the cases measured on both devices.
	if len(p.Devices) > 1 {
		row := []string{"geometric mean"}
		for range p.Devices {
			row = append(row, "", "")
		}
		for j := 1; j < len(p.Devices); j++ {
			sum, n := 0.0, 0
			for i := range p.Cases {
				a, b := p.Results[i][0], p.Results[i][j]
				if a.Status == PerfOK && b.Status == PerfOK {
					sum += math.Log(b.US / a.US)
					n++
				}
			}
			if n > 0 {
				row = append(row, fmtSig(math.Exp(sum/float64(n))))
			} else {
				row = append(row, "-")
			}
		}
		rows = append(rows, row)
	}
	writeMarkdown(w, rows)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "µs: time per op; GB/s: bytes read + written per op ÷ time (1 GB = 1e9 B); TFLOP/s: 2·m·n·k per op ÷ time (MUL_MAT).")
	if len(p.Devices) > 1 {
		fmt.Fprintf(w, "%s/X: X's µs ÷ %s's µs, the throughput of %s relative to X (above 1: %s is faster).\n",
			p.Devices[0], p.Devices[0], p.Devices[0], p.Devices[0])
	}
	for _, n := range append(append([]string{}, p.Notes...), notes...) {
		fmt.Fprintln(w, "note: "+n)
	}
}

// Table returns WriteTable's output as a string.
func (p *PerfReport) Table() string {
	var b strings.Builder
	p.WriteTable(&b)
	return b.String()
}

// OK reports whether no measurement failed (unsupported cases are not failures).
func (p *PerfReport) OK() bool {
	for _, row := range p.Results {
		for _, r := range row {
			if r.Status == PerfError {
				return false
			}
		}
	}
	return true
}

// writeMarkdown prints rows (the first is the header) as a Markdown table with padded
// columns: the first column left-aligned, the others right-aligned.
func writeMarkdown(w io.Writer, rows [][]string) {
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	pad := func(s string, n int, left bool) string {
		sp := strings.Repeat(" ", n-len([]rune(s)))
		if left {
			return s + sp
		}
		return sp + s
	}
	line := func(r []string) {
		var b strings.Builder
		b.WriteString("|")
		for i := range width {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			b.WriteString(" " + pad(c, width[i], i == 0) + " |")
		}
		fmt.Fprintln(w, b.String())
	}
	line(rows[0])
	var sep strings.Builder
	sep.WriteString("|")
	for i, n := range width {
		if i == 0 {
			sep.WriteString(" " + strings.Repeat("-", n) + " |")
		} else {
			sep.WriteString(" " + strings.Repeat("-", n-1) + ": |")
		}
	}
	fmt.Fprintln(w, sep.String())
	for _, r := range rows[1:] {
		line(r)
	}
}
