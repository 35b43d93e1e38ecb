package conformance

import (
	"fmt"
	"sort"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/sched"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The quick selection: a small subset of the suite that still runs every kernel the whole
// suite runs. A case is kept when it is the first of its op family and types, or when it
// plans a pipeline (a wgsl.Spec key: kernel, variant defines, operand formats, parameter
// struct, workgroup size) that no earlier case plans. Each case is planned the way the
// library plans it (sched.Build on the graph read back from ggml, with the tensors placed
// in a buffer of the device under test), without computing anything. Tools that exercise
// the kernels rather than their numerics (the Vulkan validation run) use it: it keeps
// every shader module and every dispatch shape of the suite at a fraction of the cases.

// quickLimits are the device limits the cases are planned under. The library asks the
// adapter for its own limits; a kernel's variant can depend on them (the workgroup size of
// row reductions), so the keys of both common maxima are collected: 1024 invocations per
// workgroup (lavapipe, desktop GPUs) and WebGPU's default 256. maxStorageBufferBindingSize
// is lavapipe's 128 MiB, far above any case.
var quickLimits = []ops.Limits{
	{MaxBinding: 128 << 20, MaxGroupsPerDim: 65535, MaxGroupSize: 1024},
	{MaxBinding: 128 << 20, MaxGroupsPerDim: 65535, MaxGroupSize: 256},
}

// Pick is a case of the quick selection and why it was kept.
type Pick struct {
	Case *Case
	// Family is set when the case is the first of its op family and types.
	Family bool
	// Keys are the pipelines the case adds to the selection (sorted).
	Keys []string
}

// Quick returns the quick selection of cases, in suite order. A case the device does not
// support (or that fails to plan) counts only for its family.
func (e *Env) Quick(cases []*Case) ([]Pick, error) {
	families := map[string]bool{}
	seen := map[string]bool{}
	var picks []Pick
	for _, c := range cases {
		keys, err := e.Kernels(c)
		if err != nil {
			return nil, fmt.Errorf("planning %s: %w", c.Name, err)
		}
		p := Pick{Case: c}
		if fam := c.Op + " " + c.Types; !families[fam] {
			families[fam] = true
			p.Family = true
		}
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				p.Keys = append(p.Keys, k)
			}
		}
		if p.Family || len(p.Keys) > 0 {
			picks = append(picks, p)
		}
	}
	return picks, nil
}

// QuickCases returns the cases of Quick's selection.
func (e *Env) QuickCases(cases []*Case) ([]*Case, error) {
	picks, err := e.Quick(cases)
	if err != nil {
		return nil, err
	}
	out := make([]*Case, len(picks))
	for i, p := range picks {
		out[i] = p.Case
	}
	return out, nil
}

// Kernels returns the pipeline keys the library would dispatch for case c (sorted, without
// repeats), planned under each of quickLimits. It builds the case as Runner.eval does (the
// same tensors and sentinels, so the same placement) and allocates it on the device under
// test, but fills and computes nothing. An unsupported case has no keys.
func (e *Env) Kernels(c *Case) (keys []string, err error) {
	return e.KernelsUnder(c, quickLimits)
}

// KernelsUnder is Kernels planned under each of the given limits.
func (e *Env) KernelsUnder(c *Case, limits []ops.Limits) (keys []string, err error) {
	defer func() {
		if p := recover(); p != nil {
			keys, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	l := e.L
	ctx := l.Init(uintptr(l.TensorOverhead()*1024+l.GraphOverhead()+1<<16), true)
	if ctx == 0 {
		return nil, fmt.Errorf("ggml_init failed")
	}
	defer l.Free(ctx)
	b := newBuilder(l, ctx)
	b.addSentinel()
	res := c.Build(b)
	if res == 0 {
		return nil, fmt.Errorf("case built no output tensor")
	}
	l.SetName(res, "out")
	b.addSentinel()
	g := l.NewGraph(ctx)
	for _, x := range b.roots {
		l.BuildForwardExpand(g, x)
	}
	l.BuildForwardExpand(g, res)

	dev := l.BackendDevice(e.Runner.Test)
	n := l.GraphNNodes(g)
	for i := 0; i < n; i++ {
		if node := l.GraphNode(g, i); !node.Op().IsView() && !l.DevSupportsOp(dev, node) {
			return nil, nil
		}
	}
	buf := l.AllocCtxTensors(ctx, e.Runner.Test)
	if buf == 0 {
		return nil, fmt.Errorf("ggml_backend_alloc_ctx_tensors failed")
	}
	defer l.BufferFree(buf)

	r := tensorReader{}
	nodes := make([]*tensor.Tensor, n)
	for i := range nodes {
		nodes[i] = r.read(l.GraphNode(g, i))
	}
	set := map[string]bool{}
	for i := range limits {
		plan, err := sched.Build(nodes, &limits[i])
		if err != nil {
			return nil, err
		}
		for _, s := range plan.Steps {
			set[s.Dispatch.Spec.Key()] = true
		}
	}
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}

// tensorReader converts ggml tensors into the library's graph model as the library's C
// boundary does: every field lowering reads, sources recursively, one value per tensor.
// The location is the tensor's buffer (its view source's for a view) and data address.
type tensorReader map[ggml.Tensor]*tensor.Tensor

func (r tensorReader) read(t ggml.Tensor) *tensor.Tensor {
	if t == 0 {
		return nil
	}
	if g, ok := r[t]; ok {
		return g
	}
	g := &tensor.Tensor{Type: t.Type(), Ne: t.Ne(), Nb: t.Nb(), Op: t.Op(), Flags: tensor.Flag(t.Flags()), Name: t.Name()}
	r[t] = g
	for i := range g.Params {
		g.Params[i] = t.OpParamI32(i)
	}
	buf := t.Buffer()
	if v := t.ViewSrc(); v != 0 {
		buf = v.Buffer()
	}
	if buf != 0 && t.Data() != 0 {
		g.Loc = tensor.Loc{Buffer: uint64(buf), Addr: uint64(t.Data())}
	}
	for i := range g.Src {
		g.Src[i] = r.read(t.Src(i))
	}
	return g
}
