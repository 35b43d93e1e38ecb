package conformance

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"slices"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// Status is the outcome of one case.
type Status int

// The outcomes of a case.
const (
	// Passed: the device computed the case within the threshold.
	Passed Status = iota
	// Failed: mismatch, NaN/inf mismatch, sentinel overwrite, compute error or panic.
	Failed
	// Unsupported: the device's supports_op refused a node of the case.
	Unsupported
)

// String returns "pass", "FAIL" or "unsupported".
func (s Status) String() string {
	switch s {
	case Passed:
		return "pass"
	case Failed:
		return "FAIL"
	case Unsupported:
		return "unsupported"
	}
	return fmt.Sprintf("status%d", int(s))
}

// Result is the outcome of running one Case.
type Result struct {
	// Case is the case that ran.
	Case *Case
	// Status says whether it passed, failed or was unsupported.
	Status Status
	// NMSE is the measured error (NaN when nothing was compared).
	NMSE float64
	// MaxAbs is the largest absolute difference between the two backends.
	MaxAbs float64
	// MaxAbsAt is the index of MaxAbs in the compared data (-1 if nothing was compared).
	MaxAbsAt int
	// N is the number of compared values.
	N int
	// Msg explains a failure or an unsupported op.
	Msg string
}

// Runner runs cases on a reference backend (the ggml CPU backend) and a backend under test.
type Runner struct {
	// L is the ggml library.
	L *ggml.Lib
	// Ref is the reference backend (CPU).
	Ref ggml.Backend
	// Test is the backend under test.
	Test ggml.Backend
	// Inspect, when set, is called with each case's graph on the backend under test, its
	// tensors allocated and filled, before it is computed (e.g. to check how the library
	// plans it).
	Inspect func(c *Case, g ggml.Graph)
	// InputsApart places every case's leaves (inputs, weights) in a buffer of their own on
	// both backends, apart from the buffer of the nodes, as a model's weights are: the
	// library then binds what a kernel only reads there read-only.
	InputsApart bool
}

// Run builds, computes and compares one case.
func (r *Runner) Run(c *Case) (res Result) {
	res = Result{Case: c, NMSE: math.NaN(), MaxAbsAt: -1}
	defer func() {
		if p := recover(); p != nil {
			res.Status = Failed
			res.Msg = fmt.Sprintf("panic: %v", p)
		}
	}()
	got, unsupported, err := r.eval(c, r.Test, true)
	if unsupported != "" {
		res.Status = Unsupported
		res.Msg = unsupported
		return res
	}
	if err != nil {
		res.Status = Failed
		res.Msg = "device under test: " + err.Error()
		return res
	}
	ref, unsupported, err := r.eval(c, r.Ref, true)
	if unsupported != "" {
		res.Status = Failed
		res.Msg = "reference backend does not support the case: " + unsupported
		return res
	}
	if err != nil {
		res.Status = Failed
		res.Msg = "reference backend: " + err.Error()
		return res
	}
	if c.UnorderedRows > 0 {
		sortRows(ref, c.UnorderedRows)
		sortRows(got, c.UnorderedRows)
	}
	res.N = len(ref)
	res.MaxAbs, res.MaxAbsAt = MaxAbsDiff(ref, got)
	nmse, err := NMSE(ref, got)
	res.NMSE = nmse
	switch {
	case err != nil:
		res.Status = Failed
		res.Msg = err.Error()
	case !(nmse <= c.MaxNMSE):
		res.Status = Failed
		res.Msg = fmt.Sprintf("NMSE %.3e > %.0e (max |diff| %.3e at %d: ref %g, got %g)",
			nmse, c.MaxNMSE, res.MaxAbs, res.MaxAbsAt, at(ref, res.MaxAbsAt), at(got, res.MaxAbsAt))
	default:
		res.Status = Passed
	}
	return res
}

// sortRows sorts each run of n consecutive values of v (a trailing partial run too).
func sortRows(v []float32, n int) {
	for i := 0; i < len(v); i += n {
		slices.Sort(v[i:min(i+n, len(v))])
	}
}

func at(v []float32, i int) float32 {
	if i < 0 || i >= len(v) {
		return float32(math.NaN())
	}
	return v[i]
}

// seed derives the deterministic random seed of leaf number i of a case.
func seed(name string, i int) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return int64(h.Sum64() + uint64(i)*0x9E3779B97F4A7C15)
}

// eval builds c in a fresh no_alloc context, allocates it on backend be, fills the leaves,
// computes, and returns the output (followed by the Check tensors) as float32. When
// checkSupport is set and be's device refuses a node, it returns a non-empty unsupported
// message instead.
func (r *Runner) eval(c *Case, be ggml.Backend, checkSupport bool) (out []float32, unsupported string, err error) {
	l := r.L
	mem := l.TensorOverhead()*1024 + l.GraphOverhead() + 1<<16
	ctx := l.Init(uintptr(mem), true)
	if ctx == 0 {
		return nil, "", fmt.Errorf("ggml_init failed")
	}
	defer l.Free(ctx)

	b := newBuilder(l, ctx)
	b.addSentinel()
	res := r.build(c, be)(b)
	if res == 0 {
		return nil, "", fmt.Errorf("case built no output tensor")
	}
	l.SetName(res, "out")
	b.addSentinel()

	g := l.NewGraph(ctx)
	for _, x := range b.roots {
		l.BuildForwardExpand(g, x)
	}
	l.BuildForwardExpand(g, res)

	if checkSupport {
		dev := l.BackendDevice(be)
		for i, n := 0, l.GraphNNodes(g); i < n; i++ {
			node := l.GraphNode(g, i)
			if node.Op().IsView() {
				continue
			}
			if !l.DevSupportsOp(dev, node) {
				return nil, fmt.Sprintf("%s: supports_op(%s %s %s) = false", l.DevName(dev),
					l.OpName(node.Op()), node.Type(), fmtNe(node.Ne())), nil
			}
		}
	}

	if c.Placed {
		l.SetOutput(res)
		for _, t := range b.checks {
			l.SetOutput(t)
		}
	}
	if r.InputsApart || c.Placed {
		in, err := allocInputsApart(l, ctx, be, nil)
		if err != nil {
			return nil, "", err
		}
		if in != 0 {
			defer l.BufferFree(in)
		}
	}
	if c.Placed {
		a := l.NewGallocr(l.DevBufferType(l.BackendDevice(be)))
		if a == 0 {
			return nil, "", fmt.Errorf("ggml_gallocr_new failed")
		}
		defer l.GallocrFree(a)
		if !l.GallocrAllocGraph(a, g) {
			return nil, "", fmt.Errorf("ggml_gallocr_alloc_graph failed")
		}
		// views that are no node of the graph
		if err := initViews(l, ctx, func(ggml.Tensor) bool { return true }); err != nil {
			return nil, "", err
		}
	}
	buf, err := allocRest(l, ctx, be)
	if err != nil {
		return nil, "", err
	}
	if buf != 0 {
		defer l.BufferFree(buf)
	}

	// Fill every leaf (inputs, copy destinations, sentinels) with deterministic data.
	sentinelData := map[ggml.Tensor][]byte{}
	isSentinel := map[ggml.Tensor]bool{}
	for _, s := range b.sentinels {
		isSentinel[s] = true
	}
	for i, t := range l.Tensors(ctx) {
		if t.Op() != tensor.OpNone || t.ViewSrc() != 0 || t.NElements() == 0 {
			continue
		}
		rng := rand.New(rand.NewSource(seed(c.Name, i)))
		f := b.inits[t]
		if f == nil {
			switch {
			case t.Type() == tensor.I32 || t.Type() == tensor.I64:
				f = Indices(10)
			case c.Init != nil && !isSentinel[t]:
				f = c.Init
			default:
				f = Uniform(-1, 1)
			}
		}
		vals := f(rng, int(t.NElements()))
		raw, err := r.encode(t.Type(), vals, t.Ne()[0])
		if err != nil {
			return nil, "", fmt.Errorf("initializing %s: %w", t.Name(), err)
		}
		if patch := b.patches[t]; patch != nil {
			patch(raw)
		}
		l.TensorSet(t, raw, 0)
		if isSentinel[t] {
			sentinelData[t] = raw
		}
	}

	if r.Inspect != nil && be == r.Test {
		r.Inspect(c, g)
	}
	if st := l.GraphCompute(be, g); st != tensor.StatusSuccess {
		return nil, "", fmt.Errorf("ggml_backend_graph_compute returned status %d", st)
	}
	l.Synchronize(be)

	for _, s := range b.sentinels {
		want := sentinelData[s]
		got := make([]byte, len(want))
		l.TensorGet(s, got, 0)
		for j := range want {
			if got[j] != want[j] {
				return nil, "", fmt.Errorf("sentinel %s overwritten at byte %d (a write outside a tensor)", s.Name(), j)
			}
		}
	}

	out, err = r.read(res)
	if err != nil {
		return nil, "", err
	}
	for _, t := range b.checks {
		v, err := r.read(t)
		if err != nil {
			return nil, "", err
		}
		out = append(out, v...)
	}
	return out, "", nil
}

// encode converts values to the raw bytes of a contiguous tensor of type t with rows of
// ne0 elements; a quantized type is quantized by ggml itself (so the blocks are valid).
func (r *Runner) encode(t tensor.Type, vals []float32, ne0 int64) ([]byte, error) {
	if t.Quantized() {
		return r.L.Quantize(t, vals, int(ne0))
	}
	switch t {
	case tensor.F32:
		raw := make([]byte, 4*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
		}
		return raw, nil
	case tensor.F16, tensor.BF16:
		var h []uint16
		if t == tensor.F16 {
			h = r.L.FP32ToFP16(vals)
		} else {
			h = r.L.FP32ToBF16(vals)
		}
		raw := make([]byte, 2*len(h))
		for i, v := range h {
			binary.LittleEndian.PutUint16(raw[2*i:], v)
		}
		return raw, nil
	case tensor.I32:
		raw := make([]byte, 4*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint32(raw[4*i:], uint32(int32(v)))
		}
		return raw, nil
	case tensor.I64:
		raw := make([]byte, 8*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint64(raw[8*i:], uint64(int64(v)))
		}
		return raw, nil
	}
	return nil, fmt.Errorf("unsupported leaf type %s", t)
}

// read returns the elements of t (any strides) as float32 in logical order.
func (r *Runner) read(t ggml.Tensor) ([]float32, error) {
	typ := t.Type()
	if typ.Quantized() {
		return r.readQuant(t)
	}
	es := uint64(typ.Size())
	if es == 0 {
		return nil, fmt.Errorf("cannot read tensor of type %d", typ)
	}
	ne, nb := t.Ne(), t.Nb()
	n := t.NElements()
	if n == 0 {
		return nil, nil
	}
	span := r.L.NBytes(t)
	raw := make([]byte, span)
	r.L.TensorGet(t, raw, 0)
	out := make([]float32, 0, n)
	var halves []uint16
	for i3 := int64(0); i3 < ne[3]; i3++ {
		for i2 := int64(0); i2 < ne[2]; i2++ {
			for i1 := int64(0); i1 < ne[1]; i1++ {
				for i0 := int64(0); i0 < ne[0]; i0++ {
					off := uint64(i0)*nb[0] + uint64(i1)*nb[1] + uint64(i2)*nb[2] + uint64(i3)*nb[3]
					if off+es > span {
						return nil, fmt.Errorf("tensor %s: element offset %d beyond ggml_nbytes %d", t.Name(), off, span)
					}
					switch typ {
					case tensor.F32:
						out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(raw[off:])))
					case tensor.I32:
						out = append(out, float32(int32(binary.LittleEndian.Uint32(raw[off:]))))
					case tensor.I64:
						out = append(out, float32(int64(binary.LittleEndian.Uint64(raw[off:]))))
					case tensor.F16, tensor.BF16:
						halves = append(halves, binary.LittleEndian.Uint16(raw[off:]))
					}
				}
			}
		}
	}
	switch typ {
	case tensor.F16:
		out = r.L.FP16ToFP32(halves)
	case tensor.BF16:
		out = r.L.BF16ToFP32(halves)
	}
	return out, nil
}
