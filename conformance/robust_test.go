package conformance

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The tests in this file feed WGPU0 bad or unusual input through ggml's public API and
// require a clean outcome: an error status, false from supports_op, a NULL allocation
// with a logged reason, or the data the CPU backend computes. Cases that could abort the
// process (a panic in wgpu-native, a driver crash) run in a child process (isolated), so an
// abort fails the case instead of the whole suite: a host like llama.cpp would have died.

// requireClean fails t unless res is a pass or a clean refusal by supports_op.
func requireClean(t *testing.T, res Result) {
	t.Helper()
	switch res.Status {
	case Passed:
		t.Logf("%s: pass, NMSE %.3g over %d values", res.Case.Name, res.NMSE, res.N)
	case Unsupported:
		t.Logf("%s: refused by supports_op (clean): %s", res.Case.Name, res.Msg)
	default:
		t.Errorf("%s: %s", res.Case.Name, res.Msg)
	}
}

// runIsolatedCases runs each case as a subtest in its own child process, against the CPU
// backend, and requires a clean result.
func runIsolatedCases(t *testing.T, cases []*Case) {
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			isolated(t, func(t *testing.T) {
				env, _, _, _ := openDevice(t)
				requireClean(t, env.Runner.Run(c))
			})
		})
	}
}

// TestSetRowsBroadcastEmpty covers the SET_ROWS reported to abort a host: F32 or F16 rows
// into an F32 destination of ne [33,5,1,1] with I64 (and I32) indices broadcast over dims
// 2 and 3 (destination [33,5,2,3]), with an empty index tensor and empty source (r = 0),
// with one and with five rows, and with zero-length rows (ne0 = 0); and the empty form into
// an F16 destination. wgpu-native panicked
// with "invalid size" in CreateBindGroup (a 0-byte binding) and aborted the process.
func TestSetRowsBroadcastEmpty(t *testing.T) {
	var cases []*Case
	for _, src := range []tensor.Type{f32, f16} {
		for _, idx := range []tensor.Type{tensor.I64, tensor.I32} {
			for _, r := range []int64{0, 1, 5} {
				cases = append(cases, setRowsCase(srSpec{src: src, dst: f32, idx: idx, ne: shape(33, 5, 1, 1), nr: [2]int64{2, 3}, r: r}))
			}
			cases = append(cases, setRowsCase(srSpec{src: src, dst: f32, idx: idx, ne: shape(0, 5, 1, 1), nr: [2]int64{2, 3}, r: 3}))
		}
	}
	cases = append(cases, setRowsCase(srSpec{src: f32, dst: f16, idx: tensor.I64, ne: shape(33, 5, 1, 1), nr: [2]int64{2, 3}, r: 0}))
	runIsolatedCases(t, cases)
}

// zeroCase is a Case whose tensors have a 0 in their shape.
func zeroCase(name string, maxNMSE float64, build func(b *Builder) ggml.Tensor) *Case {
	return &Case{Name: name, Op: "ZERO", Types: "f32", MaxNMSE: maxNMSE, Build: build}
}

// zeroSizeCases are graphs with empty tensors (a 0 in ne): they must compute what the CPU
// computes (nothing, or for GET_ROWS with zero-length rows, an empty result from a
// non-empty index tensor). ggml itself refuses MUL_MAT with k = 0 (its [0,m] source counts
// as transposed), so that form cannot be built.
func zeroSizeCases() []*Case {
	return []*Case{
		zeroCase("ADD(ne=[0,4,2])", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.Add(b.Ctx, b.New("a", f32, 0, 4, 2), b.New("b", f32, 0, 4, 2))
		}),
		zeroCase("MUL(ne=[8,0,3],b=[8,1,3])", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.Mul(b.Ctx, b.New("a", f32, 8, 0, 3), b.New("b", f32, 8, 1, 3))
		}),
		zeroCase("SCALE(ne=[0])", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.Scale(b.Ctx, b.New("a", f32, 0), 2)
		}),
		zeroCase("RMS_NORM(ne=[0,3])", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.RMSNorm(b.Ctx, b.New("a", f32, 0, 3), 1e-6)
		}),
		zeroCase("NORM(ne=[16,0])", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.Norm(b.Ctx, b.New("a", f32, 16, 0), 1e-5)
		}),
		zeroCase("SOFT_MAX(ne=[8,0])", SoftMaxMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.SoftMax(b.Ctx, b.New("a", f32, 8, 0))
		}),
		zeroCase("SOFT_MAX(ne=[0,4])", SoftMaxMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.SoftMax(b.Ctx, b.New("a", f32, 0, 4))
		}),
		zeroCase("MUL_MAT(f32,k=8,m=4,n=0)", MulMatMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.MulMat(b.Ctx, b.New("a", f32, 8, 4), b.New("b", f32, 8, 0))
		}),
		zeroCase("MUL_MAT(f32,k=8,m=0,n=3)", MulMatMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.MulMat(b.Ctx, b.New("a", f32, 8, 0), b.New("b", f32, 8, 3))
		}),
		zeroCase("GET_ROWS(ne=[8,5],n=0)", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.GetRows(b.Ctx, b.New("a", f32, 8, 5), b.Index("rows", 5, 0))
		}),
		zeroCase("GET_ROWS(ne=[0,5],n=3)", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.GetRows(b.Ctx, b.New("a", f32, 0, 5), b.Index("rows", 5, 3))
		}),
		zeroCase("CPY(f32->f16,ne=[0,3])", F16MaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.Cpy(b.Ctx, b.New("a", f32, 0, 3), b.New("dst", f16, 0, 3))
		}),
		zeroCase("CONT(permute([4,0,3]))", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.Cont(b.Ctx, b.Permute(b.New("a", f32, 4, 0, 3), [4]int{2, 0, 1, 3}))
		}),
		zeroCase("SILU(ne=[0,7])", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.SiLU(b.Ctx, b.New("a", f32, 0, 7))
		}),
		zeroCase("GELU(ne=[5,0])", GELUNarrowMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.GELU(b.Ctx, b.New("a", f32, 5, 0))
		}),
		zeroCase("SWIGLU(ne=[0,3])", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.SwiGLU(b.Ctx, b.New("a", f32, 0, 3))
		}),
		zeroCase("ROPE(ne=[64,2,0])", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			pos := b.New("pos", tensor.I32, 0)
			return b.L.RopeExt(b.Ctx, b.New("a", f32, 64, 2, 0), pos, 0, ggml.RopeExt{NDims: 64, Mode: tensor.RopeNeox,
				NCtxOrig: 512, FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1})
		}),
	}
}

// TestZeroSizeGraphs computes graphs with empty tensors on WGPU0 and compares them with
// the CPU backend, each in a child process.
func TestZeroSizeGraphs(t *testing.T) {
	runIsolatedCases(t, zeroSizeCases())
}

// i32Bytes and i64Bytes encode index tensors.
func i32Bytes(v []int32) []byte {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(x))
	}
	return raw
}

func i64Bytes(v []int64) []byte {
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	return raw
}

// tensorBytes reads the ggml_nbytes of t.
func tensorBytes(l *ggml.Lib, t ggml.Tensor) []byte {
	raw := make([]byte, l.NBytes(t))
	l.TensorGet(t, raw, 0)
	return raw
}

// pattern returns n bytes of a recognisable, position-dependent pattern seeded by s.
func pattern(n int, s byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*131+7) ^ s
	}
	return p
}

// describeRow says what an F32 row holds compared with the rows of a source and the
// row's previous content.
func describeRow(row, before []float32, src [][]float32) string {
	if equalF32(row, before) {
		return "left unchanged"
	}
	allZero := true
	for _, v := range row {
		if v != 0 {
			allZero = false
		}
	}
	if allZero {
		return "zeros"
	}
	for k, s := range src {
		if equalF32(row, s) {
			return fmt.Sprintf("a copy of source row %d", k)
		}
	}
	return fmt.Sprintf("other data (first values %v)", row[:min(4, len(row))])
}

// equalF32 compares bit patterns.
func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// decodeF returns the F32 or F16 values of raw as float32.
func decodeF(l *ggml.Lib, typ tensor.Type, raw []byte) []float32 {
	if typ == f32 {
		return f32Values(raw)
	}
	h := make([]uint16, len(raw)/2)
	for i := range h {
		h[i] = uint16(raw[2*i]) | uint16(raw[2*i+1])<<8
	}
	return l.FP16ToFP32(h)
}

// encodeF returns the raw F32 or F16 bytes of v.
func encodeF(l *ggml.Lib, typ tensor.Type, v []float32) []byte {
	if typ == f32 {
		return f32Bytes(v)
	}
	h := l.FP32ToFP16(v)
	raw := make([]byte, 2*len(h))
	for i, x := range h {
		raw[2*i], raw[2*i+1] = byte(x), byte(x>>8)
	}
	return raw
}

// rowsOf splits values into rows of n.
func rowsOf(v []float32, n int) [][]float32 {
	var rows [][]float32
	for i := 0; i+n <= len(v); i += n {
		rows = append(rows, v[i:i+n])
	}
	return rows
}

// guarded is a no_alloc context whose tensors are allocated in one WGPU0 buffer in
// creation order, with sentinel tensors between them: the bytes of every tensor that the
// graph must not write are recorded after filling and compared after the compute.
type guarded struct {
	t     *testing.T
	l     *ggml.Lib
	ctx   ggml.Context
	keep  []ggml.Tensor
	sent  map[ggml.Tensor]bool
	saved map[ggml.Tensor][]byte
}

// newGuarded returns an empty guarded context, freed at the end of the test.
func newGuarded(t *testing.T, l *ggml.Lib) *guarded {
	return &guarded{t: t, l: l, ctx: newCtx(t, l), sent: map[ggml.Tensor]bool{}, saved: map[ggml.Tensor][]byte{}}
}

// sentinel adds a sentinel tensor (sentinelSize F32 elements, a multiple of every buffer
// alignment up to 1 KiB, so the next tensor follows it without a gap).
func (g *guarded) sentinel() ggml.Tensor {
	s := g.l.NewTensor1D(g.ctx, f32, sentinelSize)
	g.l.SetName(s, fmt.Sprintf("sentinel_%d", len(g.sent)))
	g.sent[s] = true
	g.keep = append(g.keep, s)
	return s
}

// protect marks t as a tensor the graph must leave unchanged.
func (g *guarded) protect(ts ...ggml.Tensor) { g.keep = append(g.keep, ts...) }

// record fills the sentinels with a pattern and records the bytes of every protected
// tensor; call it once the inputs are filled.
func (g *guarded) record() {
	for i, k := range g.keep {
		raw := tensorBytes(g.l, k)
		if g.sent[k] {
			raw = pattern(len(raw), byte(i))
			g.l.TensorSet(k, raw, 0)
		}
		g.saved[k] = raw
	}
}

// check fails the test for every protected tensor whose bytes changed, naming the first
// changed byte.
func (g *guarded) check() {
	g.t.Helper()
	for _, k := range g.keep {
		want := g.saved[k]
		got := tensorBytes(g.l, k)
		for j := range want {
			if got[j] != want[j] {
				g.t.Errorf("tensor %s (%d bytes) changed at byte %d: a write outside the destination", k.Name(), len(want), j)
				break
			}
		}
	}
}

// TestGetRowsOutOfRange gathers rows with indices outside the source (one past the end,
// negative, huge, and any index into an empty source) from F32 and F16 sources. The CPU
// backend asserts on such indices, so there is no reference: the in-range rows must be
// the source rows, nothing around the result may change, and what the library does with
// the out-of-range rows is logged.
func TestGetRowsOutOfRange(t *testing.T) {
	const ne0, ne1 = 64, 6
	sets := []struct {
		name string
		rows int64
		idx  []int32
	}{
		{"past_end", ne1, []int32{1, ne1, 0}},
		{"negative", ne1, []int32{2, -1, 5}},
		{"huge", ne1, []int32{3, 1 << 30, math.MaxInt32, math.MinInt32, 4}},
		{"offset_wraps", ne1, []int32{1 << 26, 2, 1<<26 + 3}},
		{"empty_source", 0, []int32{0, 1}},
	}
	for _, typ := range []tensor.Type{f32, f16} {
		for _, s := range sets {
			t.Run(typ.String()+"_"+s.name, func(t *testing.T) {
				isolated(t, func(t *testing.T) { getRowsOutOfRange(t, typ, ne0, s.rows, s.idx) })
			})
		}
	}
}

func getRowsOutOfRange(t *testing.T, typ tensor.Type, ne0, ne1 int64, idx []int32) {
	_, l, be, _ := openDevice(t)
	g := newGuarded(t, l)
	g.sentinel()
	src := l.NewTensor2D(g.ctx, typ, ne0, ne1)
	l.SetName(src, "src")
	g.sentinel()
	ix := l.NewTensor1D(g.ctx, tensor.I32, int64(len(idx)))
	l.SetName(ix, "idx")
	g.sentinel()
	out := l.GetRows(g.ctx, src, ix)
	l.SetName(out, "out")
	g.sentinel()
	g.protect(src, ix)
	gr := allocGraph(t, l, be, g.ctx, out)

	srcVals := Uniform(-1, 1)(newRand(1), int(ne0*ne1))
	l.TensorSet(src, encodeF(l, typ, srcVals), 0)
	srcVals = decodeF(l, typ, encodeF(l, typ, srcVals))
	l.TensorSet(ix, i32Bytes(idx), 0)
	before := make([]float32, ne0*int64(len(idx)))
	for i := range before {
		before[i] = 1000 + float32(i)
	}
	l.TensorSet(out, f32Bytes(before), 0)
	g.record()

	st := l.GraphCompute(be, gr)
	l.Synchronize(be)
	g.check()
	if st != tensor.StatusSuccess {
		t.Logf("graph_compute refused the out-of-range indices: status %d", st)
		return
	}
	got := rowsOf(f32Values(tensorBytes(l, out)), int(ne0))
	srcRows := rowsOf(srcVals, int(ne0))
	bef := rowsOf(before, int(ne0))
	for i, r := range idx {
		if r >= 0 && int64(r) < ne1 {
			if !equalF32(got[i], srcRows[r]) {
				t.Errorf("row %d (index %d, in range): %s, want source row %d", i, r, describeRow(got[i], bef[i], srcRows), r)
			}
			continue
		}
		t.Logf("row %d, index %d out of [0,%d): %s", i, r, ne1, describeRow(got[i], bef[i], srcRows))
	}
}

// newRand returns a deterministic random source.
func newRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }

// TestSetRowsOutOfRange scatters rows to indices outside the destination (one past the
// end, negative, beyond the guard rows, beyond the buffer, the extremes of I32 and I64)
// into F32 and F16 destinations that are views in the middle of a larger tensor: the
// guard rows around the view, the sentinels around that tensor, the source and the
// indices must keep every byte; the in-range rows must be written, the rows no index
// names must keep their values, and an out-of-range row must be dropped (logged) or the
// compute refused: landing on a valid row (e.g. an I64 index read modulo 2^32) silently
// corrupts data a host keeps there, such as its KV cache.
func TestSetRowsOutOfRange(t *testing.T) {
	const ne0, ne1 = 64, 5
	sets := []struct {
		name string
		idx  []int64
		i64  bool
	}{
		{"past_end", []int64{0, ne1, 2}, false},
		{"negative", []int64{1, -1, 3}, false},
		{"beyond_guard", []int64{4, ne1 + 2, 1 << 20}, false},
		{"i32_extremes", []int64{2, math.MaxInt32, math.MinInt32, 0}, false},
		// 2^26 rows of 64 elements are 2^32 elements: an offset computed in 32 bits wraps
		// around to row 0 (and 2^26+3 to row 3).
		{"i32_offset_wraps", []int64{1 << 26, 2, 1<<26 + 3}, false},
		{"i64_extremes", []int64{0, 1 << 40, math.MaxInt64, math.MinInt64, 3}, true},
		{"i64_past_end", []int64{4, ne1, -2, 1}, true},
		{"i64_high_bits", []int64{1<<32 + 1, 3, 1<<33 + 4}, true},
	}
	for _, typ := range []tensor.Type{f32, f16} {
		for _, s := range sets {
			t.Run(typ.String()+"_"+s.name, func(t *testing.T) {
				isolated(t, func(t *testing.T) { setRowsOutOfRange(t, typ, ne0, ne1, s.idx, s.i64) })
			})
		}
	}
}

func setRowsOutOfRange(t *testing.T, typ tensor.Type, ne0, ne1 int64, idx []int64, i64 bool) {
	const guard = 2 // rows of the base before and after the destination view
	_, l, be, _ := openDevice(t)
	g := newGuarded(t, l)
	g.sentinel()
	base := l.NewTensor2D(g.ctx, typ, ne0, ne1+2*guard)
	l.SetName(base, "dst_base")
	g.sentinel()
	src := l.NewTensor2D(g.ctx, f32, ne0, int64(len(idx)))
	l.SetName(src, "src")
	g.sentinel()
	it := tensor.I32
	if i64 {
		it = tensor.I64
	}
	ix := l.NewTensor1D(g.ctx, it, int64(len(idx)))
	l.SetName(ix, "idx")
	g.sentinel()
	nb1 := base.Nb()[1]
	dst := l.View2D(g.ctx, base, ne0, ne1, nb1, guard*nb1)
	out := l.SetRows(g.ctx, dst, src, ix)
	g.protect(src, ix)
	gr := allocGraph(t, l, be, g.ctx, out)

	srcVals := Uniform(-1, 1)(newRand(2), int(ne0)*len(idx))
	l.TensorSet(src, f32Bytes(srcVals), 0)
	if i64 {
		l.TensorSet(ix, i64Bytes(idx), 0)
	} else {
		v := make([]int32, len(idx))
		for i, x := range idx {
			v[i] = int32(x)
		}
		l.TensorSet(ix, i32Bytes(v), 0)
	}
	baseVals := Uniform(5, 6)(newRand(3), int(ne0*(ne1+2*guard)))
	l.TensorSet(base, encodeF(l, typ, baseVals), 0)
	baseVals = decodeF(l, typ, encodeF(l, typ, baseVals))
	g.record()

	st := l.GraphCompute(be, gr)
	l.Synchronize(be)
	g.check()
	got := rowsOf(decodeF(l, typ, tensorBytes(l, base)), int(ne0))
	bef := rowsOf(baseVals, int(ne0))
	want := rowsOf(decodeF(l, typ, encodeF(l, typ, srcVals)), int(ne0))
	for r := 0; r < guard; r++ {
		for _, k := range []int{r, int(ne1) + guard + r} {
			if !equalF32(got[k], bef[k]) {
				t.Errorf("guard row %d of the base (outside the destination view) was written: %s", k, describeRow(got[k], bef[k], want))
			}
		}
	}
	if st != tensor.StatusSuccess {
		t.Logf("graph_compute refused the out-of-range indices: status %d", st)
		return
	}
	target := map[int64]int{}
	for j, r := range idx {
		if r >= 0 && r < ne1 {
			target[r] = j
		}
	}
	// Where each source row ended up, for the log and to name aliasing.
	landed := map[int][]int64{}
	for r := int64(0); r < ne1; r++ {
		for j := range want {
			if equalF32(got[int(r)+guard], want[j]) {
				landed[j] = append(landed[j], r)
			}
		}
	}
	for r := int64(0); r < ne1; r++ {
		k := int(r) + guard
		j, targeted := target[r]
		switch {
		case targeted && equalF32(got[k], want[j]):
		case !targeted && equalF32(got[k], bef[k]):
		default:
			t.Errorf("destination row %d (targeted by source row %d: %v) holds %s", r, j, targeted, describeRow(got[k], bef[k], want))
		}
	}
	for j, r := range idx {
		if r >= 0 && r < ne1 {
			continue
		}
		if rows := landed[j]; len(rows) > 0 {
			t.Errorf("source row %d, index %d out of [0,%d), was written onto destination row(s) %v (low 32 bits %d): an out-of-range index overwrote a valid row", j, r, ne1, rows, uint32(r))
		} else {
			t.Logf("source row %d, index %d out of [0,%d): in no destination row (dropped, or overwritten by a later row; nothing outside the destination changed)", j, r, ne1)
		}
	}
}

// specials returns an InitFunc for tensors with rows of ne0 elements: uniform values in
// [-1, 1) with, by row (shifted by shift), a NaN, a +Inf, a -Inf, both infinities, a row of
// -Inf only (a fully masked attention row), FLT_MAX (which overflows when scaled), and
// two plain rows.
func specials(ne0, shift int) InitFunc {
	return func(r *rand.Rand, n int) []float32 {
		v := Uniform(-1, 1)(r, n)
		nan, inf, ninf := float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
		for row := 0; row*ne0 < n; row++ {
			x := v[row*ne0 : min((row+1)*ne0, n)]
			switch (row + shift) % 8 {
			case 0:
				x[3%len(x)] = nan
			case 1:
				x[5%len(x)] = inf
			case 2:
				x[1%len(x)] = ninf
			case 3:
				x[0], x[2%len(x)] = inf, ninf
			case 4:
				for i := range x {
					x[i] = ninf
				}
			case 5:
				x[0] = math.MaxFloat32
			}
		}
		return v
	}
}

// fpClass names the class of a float: NaN, +Inf, -Inf or finite.
func fpClass(x float32) string {
	switch {
	case x != x:
		return "NaN"
	case math.IsInf(float64(x), 1):
		return "+Inf"
	case math.IsInf(float64(x), -1):
		return "-Inf"
	}
	return "finite"
}

// compareSpecial compares results that may hold NaN and infinities: every position must
// have the same class (NaN, +Inf, -Inf, finite) on both sides, and the finite values must
// agree within maxNMSE. Mismatches are reported per row of ne0 values (the first eight
// rows), with the classes each side produced there. It also returns the counts of each
// class in the reference.
func compareSpecial(ref, got []float32, ne0 int, maxNMSE float64) (problems []string, counts map[string]int) {
	counts = map[string]int{}
	if len(ref) != len(got) {
		return []string{fmt.Sprintf("length %d, reference %d", len(got), len(ref))}, counts
	}
	rowClasses := func(v []float32) string {
		c := map[string]int{}
		for _, x := range v {
			c[fpClass(x)]++
		}
		return fmt.Sprint(c)
	}
	var fr, fg []float32
	bad := 0
	for r := 0; r*ne0 < len(ref); r++ {
		lo, hi := r*ne0, min((r+1)*ne0, len(ref))
		var first = -1
		for i := lo; i < hi; i++ {
			cr, cg := fpClass(ref[i]), fpClass(got[i])
			counts[cr]++
			if cr != cg {
				if first < 0 {
					first = i
				}
				continue
			}
			if cr == "finite" {
				fr, fg = append(fr, ref[i]), append(fg, got[i])
			}
		}
		if first >= 0 {
			if bad < 8 {
				problems = append(problems, fmt.Sprintf("row %d: CPU %s, WGPU0 %s (first at index %d: CPU %v, WGPU0 %v)",
					r, rowClasses(ref[lo:hi]), rowClasses(got[lo:hi]), first, ref[first], got[first]))
			}
			bad++
		}
	}
	if bad > 8 {
		problems = append(problems, fmt.Sprintf("... %d rows differ in all", bad))
	}
	if nmse, err := NMSE(fr, fg); err != nil || !(nmse <= maxNMSE) {
		problems = append(problems, fmt.Sprintf("finite values: NMSE %.3g > %.0g (%v)", nmse, maxNMSE, err))
	}
	return problems, counts
}

// nanInfRow is the row length of the NaN/Inf cases' inputs; results are compared and
// reported in groups of this many values.
const nanInfRow = 16

// nanInfCases are the ops whose NaN and infinity propagation must match the CPU backend.
func nanInfCases() []*Case {
	const ne0, rows = nanInfRow, 8
	in := func(b *Builder, name string, shift int, ne ...int64) ggml.Tensor {
		x := b.New(name, f32, ne...)
		b.Init(x, specials(int(ne[0]), shift))
		return x
	}
	mk := func(name string, maxNMSE float64, build func(b *Builder) ggml.Tensor) *Case {
		return &Case{Name: name, Op: "NAN_INF", Types: "f32", MaxNMSE: maxNMSE, Build: build}
	}
	return []*Case{
		mk("ADD", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.Add(b.Ctx, in(b, "a", 0, ne0, rows), in(b, "b", 3, ne0, rows))
		}),
		mk("ADD(broadcast)", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.Add(b.Ctx, in(b, "a", 0, ne0, rows), in(b, "b", 1, ne0, 1))
		}),
		mk("MUL", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.Mul(b.Ctx, in(b, "a", 0, ne0, rows), in(b, "b", 5, ne0, rows))
		}),
		mk("SCALE", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.Scale(b.Ctx, in(b, "a", 0, ne0, rows), 2.5)
		}),
		mk("SCALE(0)", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.Scale(b.Ctx, in(b, "a", 0, ne0, rows), 0)
		}),
		mk("RMS_NORM", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.RMSNorm(b.Ctx, in(b, "a", 0, ne0, rows), 1e-6)
		}),
		mk("SOFT_MAX", SoftMaxMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.SoftMax(b.Ctx, in(b, "a", 0, ne0, rows))
		}),
		mk("SOFT_MAX(ext,mask)", SoftMaxMaxNMSE, func(b *Builder) ggml.Tensor {
			mask := b.New("mask", f32, ne0, rows)
			b.Init(mask, causalMask(ne0, rows, 2))
			return b.L.SoftMaxExt(b.Ctx, in(b, "a", 0, ne0, rows), mask, 0.5, 0)
		}),
		mk("MUL_MAT(special weight)", MulMatMaxNMSE, func(b *Builder) ggml.Tensor {
			x := b.New("x", f32, ne0, 4)
			return b.L.MulMat(b.Ctx, in(b, "w", 0, ne0, rows), x)
		}),
		mk("MUL_MAT(special activations)", MulMatMaxNMSE, func(b *Builder) ggml.Tensor {
			w := b.New("w", f32, ne0, 5)
			return b.L.MulMat(b.Ctx, w, in(b, "x", 0, ne0, rows))
		}),
		mk("MUL_MAT(both,tiled)", MulMatMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.MulMat(b.Ctx, in(b, "w", 2, ne0, 3*rows), in(b, "x", 0, ne0, 2*rows))
		}),
		mk("SILU", DefaultMaxNMSE, func(b *Builder) ggml.Tensor {
			return b.L.SiLU(b.Ctx, in(b, "a", 0, ne0, rows))
		}),
	}
}

// TestNaNInfPropagation computes ADD, MUL, SCALE, RMS_NORM, SOFT_MAX, MUL_MAT and SILU on
// inputs holding NaN, infinities and FLT_MAX, on WGPU0 and on the CPU backend: NaN and
// infinities (with their signs) must appear at the same positions, and the finite values
// must agree within the op's threshold.
func TestNaNInfPropagation(t *testing.T) {
	env, _, _, _ := openDevice(t)
	r := env.Runner
	for _, c := range nanInfCases() {
		t.Run(c.Name, func(t *testing.T) {
			got, unsupported, err := r.eval(c, r.Test, true)
			if unsupported != "" {
				t.Fatalf("unsupported: %s", unsupported)
			}
			if err != nil {
				t.Fatalf("WGPU0: %v", err)
			}
			ref, _, err := r.eval(c, r.Ref, false)
			if err != nil {
				t.Fatalf("CPU: %v", err)
			}
			problems, counts := compareSpecial(ref, got, nanInfRow, c.MaxNMSE)
			t.Logf("CPU result classes: %v", counts)
			for _, p := range problems {
				t.Errorf("%s: %s", c.Name, p)
			}
		})
	}
}

// pastBuffer builds, on WGPU0, a 64-element F32 tensor alone in its own buffer and a
// strided view of it, ne [4,8] with rows 64 bytes apart: ggml accepts the view (its
// elements would fit contiguously) but its last row ends 208 bytes past the buffer. It
// returns the base, the view and the buffer's bytes as filled.
func pastBuffer(t *testing.T, l *ggml.Lib, be ggml.Backend) (base, view ggml.Tensor, data []byte) {
	t.Helper()
	ctx := newCtx(t, l)
	base = l.NewTensor1D(ctx, f32, 64)
	l.SetName(base, "base")
	view = l.View2D(ctx, base, 4, 8, 64, 0)
	l.SetName(view, "strided_view")
	buf := l.AllocCtxTensors(ctx, be)
	if buf == 0 {
		t.Fatal("ggml_backend_alloc_ctx_tensors failed")
	}
	t.Cleanup(func() { l.BufferFree(buf) })
	if end := 7*64 + 16; uint64(end) <= l.BufferSize(buf) {
		t.Fatalf("test setup: the view ends at byte %d, inside the %d-byte buffer", end, l.BufferSize(buf))
	}
	data = pattern(256, 0x5a)
	l.TensorSet(base, data, 0)
	return base, view, data
}

// TestViewPastBuffer uses a view that reaches past the end of its buffer as the source
// of a CONT, as the destination of a CPY, and through tensor_set/tensor_get: the library
// must refuse (a failed compute, a logged error) without touching memory outside the
// buffer; the buffer's own bytes must stay as they were.
func TestViewPastBuffer(t *testing.T) {
	t.Run("read", func(t *testing.T) {
		isolated(t, func(t *testing.T) {
			_, l, be, _ := openDevice(t)
			base, view, data := pastBuffer(t, l, be)
			ctx := newCtx(t, l)
			g := allocGraph(t, l, be, ctx, l.Cont(ctx, view))
			requireRefused(t, l, be, g, fmt.Sprintf("CONT of a view reaching %d bytes past its buffer computed successfully: the library read outside the buffer", 7*64+16-256))
			if got := tensorBytes(l, base); !bytes.Equal(got, data) {
				t.Error("the base tensor changed")
			}
		})
	})
	t.Run("write", func(t *testing.T) {
		isolated(t, func(t *testing.T) {
			_, l, be, _ := openDevice(t)
			base, view, data := pastBuffer(t, l, be)
			ctx := newCtx(t, l)
			src := l.NewTensor2D(ctx, f32, 4, 8)
			g := allocGraph(t, l, be, ctx, l.Cpy(ctx, src, view))
			l.TensorSet(src, f32Bytes(Uniform(-1, 1)(newRand(4), 32)), 0)
			requireRefused(t, l, be, g, "CPY into a view reaching past its buffer computed successfully: the library wrote outside the buffer")
			if got := tensorBytes(l, base); !bytes.Equal(got, data) {
				t.Error("the buffer changed although the compute should have been refused")
			}
		})
	})
	t.Run("set_get", func(t *testing.T) {
		isolated(t, func(t *testing.T) {
			_, l, be, _ := openDevice(t)
			base, view, data := pastBuffer(t, l, be)
			n := l.NBytes(view)
			log := captureStderr(t, func() { l.TensorSet(view, pattern(int(n), 0x33), 0) })
			if !strings.Contains(log, "ggml-wgpu") {
				t.Errorf("tensor_set of %d bytes through the view: no error logged (stderr: %q)", n, log)
			}
			if got := tensorBytes(l, base); !bytes.Equal(got, data) {
				t.Error("a refused tensor_set changed the buffer")
			}
			dst := pattern(int(n), 0x44)
			log = captureStderr(t, func() { l.TensorGet(view, dst, 0) })
			if !strings.Contains(log, "ggml-wgpu") {
				t.Errorf("tensor_get of %d bytes through the view: no error logged (stderr: %q)", n, log)
			}
			if bytes.Equal(dst, pattern(int(n), 0x44)) {
				t.Logf("tensor_get past the buffer left the destination untouched")
			} else {
				t.Logf("tensor_get past the buffer wrote into the destination")
			}
		})
	})
}

// TestSetGetOddRanges writes and reads a WGPU0 buffer of an odd size byte-exactly through
// ggml_backend_tensor_set/get/memset on I8 tensors placed at the buffer's start and at
// its very end: unaligned offsets, odd lengths, single bytes, the last bytes of the
// buffer. A host-side model of the buffer must match every read and the final contents.
func TestSetGetOddRanges(t *testing.T) {
	_, l, _, dev := openDevice(t)
	buft := l.DevBufferType(dev)
	for _, size := range []uint64{1, 3, 7, 1001, 4099} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			buf := l.BuftAllocBuffer(buft, size)
			if buf == 0 {
				t.Fatalf("allocating %d bytes failed", size)
			}
			defer l.BufferFree(buf)
			ctx := newCtx(t, l)
			whole := l.NewTensor1D(ctx, tensor.I8, int64(size))
			tailN := min(size, 7)
			tail := l.NewTensor1D(ctx, tensor.I8, int64(tailN))
			base := l.BufferBase(buf)
			if st := l.TensorAlloc(buf, whole, base); st != tensor.StatusSuccess {
				t.Fatalf("ggml_backend_tensor_alloc: status %d", st)
			}
			if st := l.TensorAlloc(buf, tail, base+uintptr(size-tailN)); st != tensor.StatusSuccess {
				t.Fatalf("ggml_backend_tensor_alloc at the end: status %d", st)
			}
			model := pattern(int(size), 0x11)
			l.TensorSet(whole, model, 0)
			r := newRand(int64(size))
			ops := 0
			check := func(what string, off, n uint64) {
				t.Helper()
				got := make([]byte, n)
				l.TensorGet(whole, got, off)
				if !bytes.Equal(got, model[off:off+n]) {
					t.Fatalf("after %s: bytes [%d,%d) differ from the model", what, off, off+n)
				}
			}
			// Ranges touching the end of the buffer, through both tensors.
			for n := uint64(1); n <= tailN; n++ {
				off := size - n
				data := pattern(int(n), byte(n))
				l.TensorSet(whole, data, off)
				copy(model[off:], data)
				check(fmt.Sprintf("set of %d bytes at the end", n), 0, size)
				got := make([]byte, n)
				l.TensorGet(tail, got, tailN-n)
				if !bytes.Equal(got, model[off:]) {
					t.Fatalf("get of the last %d bytes through the tail tensor differs", n)
				}
				data = pattern(int(n), byte(n)^0xff)
				l.TensorSet(tail, data, tailN-n)
				copy(model[off:], data)
				check(fmt.Sprintf("set of the last %d bytes through the tail tensor", n), 0, size)
				ops += 3
			}
			// Random unaligned ranges, sets, gets and memsets.
			for i := 0; i < 200; i++ {
				off := uint64(r.Int63n(int64(size)))
				n := 1 + uint64(r.Int63n(int64(min(size-off, 67))))
				switch r.Intn(3) {
				case 0:
					data := pattern(int(n), byte(i))
					l.TensorSet(whole, data, off)
					copy(model[off:], data)
				case 1:
					v := byte(r.Intn(256))
					l.TensorMemset(whole, v, off, n)
					for j := off; j < off+n; j++ {
						model[j] = v
					}
				}
				check(fmt.Sprintf("operation %d at [%d,%d)", i, off, off+n), off, n)
				ops++
			}
			check("all operations", 0, size)
			l.BufferClear(buf, 0xa5)
			for j := range model {
				model[j] = 0xa5
			}
			check("buffer clear", 0, size)
			t.Logf("%d-byte buffer: %d operations byte-exact", size, ops+1)
		})
	}
}

// TestAllocEdges allocates through WGPU0's buffer type: 0 bytes gives ggml's dummy buffer
// (ggml never asks the backend: size 0, NULL base) that can be freed; more than the
// device's memory, more than it can address, and SIZE_MAX return NULL with a logged
// reason; and the buffer type still works afterwards.
func TestAllocEdges(t *testing.T) {
	isolated(t, func(t *testing.T) {
		_, l, _, dev := openDevice(t)
		buft := l.DevBufferType(dev)
		zero := l.BuftAllocBuffer(buft, 0)
		if zero == 0 {
			t.Fatal("ggml_backend_buft_alloc_buffer(0) returned NULL; ggml's rule is a zero-size buffer")
		}
		if sz := l.BufferSize(zero); sz != 0 {
			t.Errorf("zero-size buffer reports %d bytes", sz)
		}
		if base := l.BufferBase(zero); base != 0 {
			t.Errorf("zero-size buffer has base %#x, ggml returns NULL", base)
		}
		l.BufferFree(zero)

		_, total := l.DevMemory(dev)
		for _, size := range []uint64{total + 1, 2 * total, 1 << 40, 1 << 50, math.MaxUint64} {
			var buf ggml.Buffer
			log := captureStderr(t, func() { buf = l.BuftAllocBuffer(buft, size) })
			if buf != 0 {
				t.Errorf("allocating %d bytes (device total %d) returned a buffer of %d bytes", size, total, l.BufferSize(buf))
				l.BufferFree(buf)
				continue
			}
			if !strings.Contains(log, "ggml-wgpu") {
				t.Errorf("allocating %d bytes returned NULL without a logged reason (stderr: %q)", size, log)
			}
			t.Logf("%d bytes: NULL; %s", size, strings.TrimSpace(log))
		}
		maxSize := l.BuftMaxSize(buft)
		var buf ggml.Buffer
		log := captureStderr(t, func() { buf = l.BuftAllocBuffer(buft, maxSize+1) })
		if buf == 0 {
			if !strings.Contains(log, "ggml-wgpu") {
				t.Errorf("allocating max size + 1 (%d bytes) returned NULL without a logged reason", maxSize+1)
			}
			t.Logf("max size + 1 = %d bytes: NULL; %s", maxSize+1, strings.TrimSpace(log))
		} else {
			if l.BufferSize(buf) < maxSize+1 {
				t.Errorf("allocating %d bytes gave a buffer of %d", maxSize+1, l.BufferSize(buf))
			}
			t.Logf("max size + 1 = %d bytes: allocated (a buffer may exceed the largest tensor)", maxSize+1)
			l.BufferFree(buf)
		}
		ok := l.BuftAllocBuffer(buft, 1<<20)
		if ok == 0 {
			t.Fatal("a 1 MiB allocation failed after the refused ones")
		}
		l.BufferFree(ok)
	})
}

// TestUnsupportedMidGraph computes graphs where a node WGPU0 does not implement sits
// between supported ones (a MUL_MAT of Q8_K weights, ggml's activation type, a BICUBIC UPSCALE,
// an MROPE's ROPE_BACK) after an ADD whose result
// it reads: supports_op must answer false for that node, graph_compute must return
// GGML_STATUS_FAILED with a logged reason, nothing may have run (the ADD's result keeps
// the bytes it held: the library fails before submitting), and a supported graph on the
// same backend must then compute correctly.
func TestUnsupportedMidGraph(t *testing.T) {
	type build func(l *ggml.Lib, ctx ggml.Context, a ggml.Tensor) (bad ggml.Tensor, leaves []ggml.Tensor)
	cases := []struct {
		name string
		ne   [4]int64
		bad  build
	}{
		{"MUL_MAT_q8_K", shape(256, 4), func(l *ggml.Lib, ctx ggml.Context, a ggml.Tensor) (ggml.Tensor, []ggml.Tensor) {
			w := l.NewTensor2D(ctx, tensor.Q8_K, 256, 8)
			return l.MulMat(ctx, w, a), []ggml.Tensor{w}
		}},
		{"UPSCALE_bicubic", shape(32, 4), func(l *ggml.Lib, ctx ggml.Context, a ggml.Tensor) (ggml.Tensor, []ggml.Tensor) {
			return l.Interpolate(ctx, a, 64, 8, 1, 1, scaleBicubic), nil
		}},
		{"ROPE_BACK_mrope", shape(48, 2, 3), func(l *ggml.Lib, ctx ggml.Context, a ggml.Tensor) (ggml.Tensor, []ggml.Tensor) {
			pos := l.NewTensor1D(ctx, tensor.I32, 4*3)
			sec := [4]int32{8, 8, 8, 0}
			return l.RopeMultiBack(ctx, a, pos, 0, sec, ropeExtArgs(48, tensor.RopeMrope, ropePlain)), []ggml.Tensor{pos}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			isolated(t, func(t *testing.T) {
				_, l, be, dev := openDevice(t)
				ctx := newCtx(t, l)
				x := l.NewTensor4D(ctx, f32, c.ne[0], c.ne[1], c.ne[2], c.ne[3])
				y := l.NewTensor4D(ctx, f32, c.ne[0], c.ne[1], c.ne[2], c.ne[3])
				sum := l.Add(ctx, x, y)
				bad, leaves := c.bad(l, ctx, sum)
				out := l.Scale(ctx, bad, 2)
				if !l.DevSupportsOp(dev, sum) {
					t.Fatal("supports_op(ADD f32) = false")
				}
				if l.DevSupportsOp(dev, bad) {
					t.Fatalf("supports_op(%s %s) = true for a node the library does not implement", l.OpName(bad.Op()), bad.Type())
				}
				g := allocGraph(t, l, be, ctx, out)
				n := int(x.NElements())
				xs, ys := Uniform(-1, 1)(newRand(5), n), Uniform(-1, 1)(newRand(6), n)
				l.TensorSet(x, f32Bytes(xs), 0)
				l.TensorSet(y, f32Bytes(ys), 0)
				for _, lf := range leaves {
					l.TensorSet(lf, make([]byte, l.NBytes(lf)), 0)
				}
				marker := pattern(int(l.NBytes(sum)), 0x77)
				l.TensorSet(sum, marker, 0)
				var st tensor.Status
				log := captureStderr(t, func() { st = l.GraphCompute(be, g); l.Synchronize(be) })
				if st != tensor.StatusFailed {
					t.Errorf("graph_compute returned %d, want GGML_STATUS_FAILED (%d)", st, tensor.StatusFailed)
				}
				if !strings.Contains(log, "ggml-wgpu") {
					t.Errorf("no reason logged (stderr: %q)", log)
				}
				t.Logf("logged: %s", strings.TrimSpace(log))
				if !bytes.Equal(tensorBytes(l, sum), marker) {
					t.Error("the ADD before the unsupported node ran although the graph failed")
				}

				ctx2 := newCtx(t, l)
				x2 := l.NewTensor1D(ctx2, f32, int64(n))
				out2 := l.Scale(ctx2, l.Add(ctx2, x2, x2), 0.5)
				g2 := allocGraph(t, l, be, ctx2, out2)
				l.TensorSet(x2, f32Bytes(xs), 0)
				if st := l.GraphCompute(be, g2); st != tensor.StatusSuccess {
					t.Fatalf("supported graph after the failed one: status %d", st)
				}
				l.Synchronize(be)
				if got := f32Values(tensorBytes(l, out2)); !equalF32(got, xs) {
					t.Error("supported graph after the failed one computed wrong values")
				}
			})
		})
	}
}

// requireRefused computes g on be and requires GGML_STATUS_FAILED with a reason logged by
// the library; ifDone says what a success would mean.
func requireRefused(t *testing.T, l *ggml.Lib, be ggml.Backend, g ggml.Graph, ifDone string) {
	t.Helper()
	var st tensor.Status
	log := captureStderr(t, func() { st = l.GraphCompute(be, g); l.Synchronize(be) })
	if st == tensor.StatusSuccess {
		t.Error(ifDone)
	}
	if !strings.Contains(log, "ggml-wgpu") {
		t.Errorf("no reason logged for the failed compute (stderr: %q)", log)
	}
	t.Logf("status %d; logged: %s", st, strings.TrimSpace(log))
}

// allocGraph builds the graph of out and allocates ctx's tensors in a buffer of be, freed
// when the test ends.
func allocGraph(t *testing.T, l *ggml.Lib, be ggml.Backend, ctx ggml.Context, out ggml.Tensor) ggml.Graph {
	t.Helper()
	g := l.NewGraph(ctx)
	l.BuildForwardExpand(g, out)
	buf := l.AllocCtxTensors(ctx, be)
	if buf == 0 {
		t.Fatal("ggml_backend_alloc_ctx_tensors failed")
	}
	t.Cleanup(func() { l.BufferFree(buf) })
	return g
}

// TestMulMatIDOutOfRange runs decode-sized MUL_MAT_IDs (one and two tokens, the mat-vec
// kernels: the vectorised one of F16 experts, the integer one of Q4_K) whose ids name
// experts outside the matrix (one past the last, negative, the extremes of I32). The CPU
// backend asserts on such ids, so there is no reference: the compute must not write
// outside its result (sentinels around every tensor), the pairs with valid ids must
// equal the same product with the bad ids replaced by a valid one, and what the other
// pairs hold is logged.
func TestMulMatIDOutOfRange(t *testing.T) {
	const experts, used = 4, 4
	bad := []int32{experts, -1, math.MaxInt32, math.MinInt32}
	for _, typ := range []tensor.Type{f16, tensor.Q4_K} {
		for _, tokens := range []int64{1, 2} {
			t.Run(fmt.Sprintf("%s_tokens_%d", typ, tokens), func(t *testing.T) {
				ids := make([]int32, used*tokens)
				for i := range ids {
					ids[i] = int32(i % experts)
					if i%2 == 1 {
						ids[i] = bad[(i/2)%len(bad)]
					}
				}
				isolated(t, func(t *testing.T) { mulMatIDOutOfRange(t, typ, experts, tokens, ids) })
			})
		}
	}
}

func mulMatIDOutOfRange(t *testing.T, typ tensor.Type, experts, tokens int64, ids []int32) {
	const k, m = 512, 40
	used := int64(len(ids)) / tokens
	_, l, be, _ := openDevice(t)
	g := newGuarded(t, l)
	g.sentinel()
	as := l.NewTensor3D(g.ctx, typ, k, m, experts)
	l.SetName(as, "as")
	g.sentinel()
	x := l.NewTensor3D(g.ctx, f32, k, 1, tokens)
	l.SetName(x, "b")
	g.sentinel()
	ix := l.NewTensor2D(g.ctx, tensor.I32, used, tokens)
	l.SetName(ix, "ids")
	g.sentinel()
	out := l.MulMatID(g.ctx, as, x, ix)
	l.SetName(out, "out")
	g.sentinel()
	g.protect(as, x, ix)
	gr := allocGraph(t, l, be, g.ctx, out)

	w := Uniform(-1, 1)(newRand(2), int(k*m*experts))
	var raw []byte
	if typ == f16 {
		raw = encodeF(l, typ, w)
	} else {
		var err error
		if raw, err = l.Quantize(typ, w, k); err != nil {
			t.Fatal(err)
		}
	}
	l.TensorSet(as, raw, 0)
	l.TensorSet(x, f32Bytes(Uniform(-1, 1)(newRand(3), int(k*tokens))), 0)
	run := func(ids []int32) ([]float32, tensor.Status) {
		l.TensorSet(ix, i32Bytes(ids), 0)
		l.TensorSet(out, f32Bytes(make([]float32, m*used*tokens)), 0)
		g.record()
		st := l.GraphCompute(be, gr)
		l.Synchronize(be)
		g.check()
		return f32Values(tensorBytes(l, out)), st
	}
	got, st := run(ids)
	if st != tensor.StatusSuccess {
		t.Logf("graph_compute refused the out-of-range ids: status %d", st)
		return
	}
	valid := make([]int32, len(ids))
	for i, e := range ids {
		valid[i] = e
		if e < 0 || int64(e) >= experts {
			valid[i] = 0
		}
	}
	want, st := run(valid)
	if st != tensor.StatusSuccess {
		t.Fatalf("graph_compute with valid ids: status %d", st)
	}
	for i, e := range ids {
		row, ref := got[i*m:(i+1)*m], want[i*m:(i+1)*m]
		if e >= 0 && int64(e) < experts {
			if !equalF32(row, ref) {
				t.Errorf("pair %d (expert %d, valid): %v, want %v", i, e, row[:4], ref[:4])
			}
			continue
		}
		finite := true
		for _, v := range row {
			finite = finite && !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
		}
		t.Logf("pair %d, expert %d out of [0,%d): finite %v, first values %v", i, e, experts, finite, row[:4])
	}
}
