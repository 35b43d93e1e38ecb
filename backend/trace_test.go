package backend

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ggml-wgpu/ggml-wgpu/exec"
	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/sched"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
	"github.com/stretchr/testify/require"
)

// traceFile is the part of a trace file the tests read.
type traceFile struct {
	DisplayTimeUnit string    `json:"displayTimeUnit"`
	OtherData       traceMeta `json:"otherData"`
	TraceEvents     []struct {
		Name string         `json:"name"`
		Cat  string         `json:"cat"`
		Ph   string         `json:"ph"`
		TS   float64        `json:"ts"`
		Dur  float64        `json:"dur"`
		Pid  int            `json:"pid"`
		Tid  int            `json:"tid"`
		Args map[string]any `json:"args"`
	} `json:"traceEvents"`
}

func readTrace(t *testing.T, path string) traceFile {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var f traceFile
	require.NoError(t, json.Unmarshal(raw, &f), "the trace is not valid JSON")
	return f
}

func f32Node(ne ...int64) *tensor.Tensor {
	n := &tensor.Tensor{Type: tensor.F32, Ne: [4]int64{1, 1, 1, 1}}
	copy(n.Ne[:], ne)
	n.Nb = [4]uint64{4, 4 * uint64(n.Ne[0]), 4 * uint64(n.Ne[0]*n.Ne[1]), 4 * uint64(n.Ne[0]*n.Ne[1]*n.Ne[2])}
	return n
}

// tracePlan is a plan of a MUL_MAT of two dispatches and a SILU.
func tracePlan() *sched.Plan {
	w, x := f32Node(64, 32), f32Node(64, 1)
	mm := f32Node(32, 1)
	mm.Op, mm.Name, mm.Src[0], mm.Src[1] = tensor.OpMulMat, "ffn_up-0", w, x
	act := f32Node(32, 1)
	act.Op, act.Name, act.Src[0] = tensor.OpUnary, "ffn_act-0", mm
	act.Params[0] = int32(tensor.UnarySILU)
	spec := &wgsl.Spec{Kernel: "mul_mat_vec", Defines: map[string]string{"ROWS": "4"},
		Operands: []wgsl.Operand{{Name: "src0", Type: wgsl.F32}, {Name: "dst", Type: wgsl.F32, Written: true}}}
	unary := &wgsl.Spec{Kernel: "unary"}
	return &sched.Plan{Steps: []sched.Step{
		{Node: mm, Dispatch: ops.Dispatch{Spec: spec}},
		{Node: mm, Dispatch: ops.Dispatch{Spec: spec}},
		{Node: act, Dispatch: ops.Dispatch{Spec: unary}},
	}}
}

func TestTraceRecordsGraphs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	bt := newBackendTrace(path, "WGPU9", nil)
	plan := tracePlan()
	c := &compiled{steps: make([]exec.Step, len(plan.Steps)), trace: traceSteps(plan)}

	t0 := time.Now()
	k := &kernelTimer{}
	run := func() error {
		sub := time.Now()
		k.last = exec.Timing{
			Spans:   []exec.Span{{Start: 1000, End: 3000}, {Start: 5000, End: 6000}, {Start: 7000, End: 7500}},
			Submits: []exec.Interval{{Start: sub, End: sub.Add(10 * time.Microsecond)}},
		}
		k.collected = exec.Interval{Start: sub.Add(20 * time.Microsecond), End: sub.Add(40 * time.Microsecond)}
		return nil
	}
	for range 2 {
		require.NoError(t, bt.compute(t0, false, c, k, run))
		bt.wait(time.Now())
	}
	require.EqualError(t, bt.compute(time.Now(), true, c, nil, func() error { return errors.New("lost") }), "lost")
	require.NoError(t, bt.t.flush())

	f := readTrace(t, path)
	require.Equal(t, "ns", f.DisplayTimeUnit)
	require.Equal(t, []string{"WGPU9 backend 1: GPU timestamp queries"}, f.OtherData.GPUTimes)
	names := map[string]int{}
	var gpu []int
	for i, e := range f.TraceEvents {
		require.Equal(t, 1, e.Pid)
		if e.Ph == "M" {
			names["M:"+e.Name]++
			continue
		}
		require.Equal(t, "X", e.Ph)
		require.GreaterOrEqual(t, e.Dur, 0.0)
		names[e.Name]++
		if e.Cat == "gpu" {
			gpu = append(gpu, i)
		}
	}
	require.Equal(t, 2, names["M:thread_name"])
	require.Equal(t, 1, names["M:process_name"])
	require.Equal(t, 3, names["compute"])
	require.Equal(t, 2, names["build"])
	require.Equal(t, 1, names["lookup"])
	require.Equal(t, 2, names["submit"])
	require.Equal(t, 2, names["wait"])
	require.Equal(t, 4, names["MUL_MAT"])
	require.Equal(t, 2, names["SILU"])
	require.Len(t, gpu, 6)

	// Graph 0's dispatches: anchored at its submission's end, GPU offsets kept.
	first := f.TraceEvents[gpu[0]]
	require.Equal(t, "MUL_MAT", first.Name)
	require.InDelta(t, 2.0, first.Dur, 1e-9)
	require.InDelta(t, 4.0, f.TraceEvents[gpu[1]].TS-first.TS, 1e-6)
	require.InDelta(t, 6.0, f.TraceEvents[gpu[2]].TS-first.TS, 1e-6)
	a := first.Args
	require.Equal(t, float64(0), a["graph"])
	require.Equal(t, "ffn_up-0", a["node"])
	require.Equal(t, "mul_mat_vec", a["kernel"])
	require.Equal(t, "ROWS=4 src0:f32 dst:f32", a["variant"])
	require.Equal(t, "1/2", a["dispatch"])
	require.Equal(t, float64(2*64*32), a["flop"])
	require.Equal(t, float64(4*(64*32+64+32)), a["bytes"])
	require.Equal(t, []any{float64(32), float64(1), float64(1), float64(1)}, a["shapes"].(map[string]any)["dst"].(map[string]any)["ne"])
	require.Equal(t, float64(0), f.TraceEvents[gpu[1]].Args["flop"], "a node's cost goes with its first dispatch")
	require.Equal(t, float64(1), f.TraceEvents[gpu[3]].Args["graph"])
}

func TestTraceWithoutGPUTimesAndCapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	bt := newBackendTrace(path, "WGPU9", errors.New("the adapter has no timestamp queries"))
	bt.t.limit = 5
	plan := tracePlan()
	c := &compiled{steps: make([]exec.Step, len(plan.Steps)), trace: traceSteps(plan)}
	for range 3 {
		require.NoError(t, bt.compute(time.Now(), true, c, nil, func() error { return nil }))
	}
	require.NoError(t, bt.t.flush())
	f := readTrace(t, path)
	require.Contains(t, f.OtherData.GPUTimes[0], "GPU times unavailable: the adapter has no timestamp queries")
	require.Equal(t, 5, f.OtherData.Events)
	require.Equal(t, uint64(4), f.OtherData.DroppedEvents)
	require.Contains(t, f.OtherData.Notes[0], "truncated")
	for _, e := range f.TraceEvents {
		require.NotEqual(t, "gpu", e.Cat)
	}
}

func TestProfileSetting(t *testing.T) {
	for v, want := range map[string]struct {
		level int
		path  string
	}{"": {0, ""}, "1": {1, ""}, "2": {2, ""}, " out.json ": {2, "out.json"}, "trace": {2, "trace"}} {
		t.Setenv(EnvProfile, v)
		level, path := profileSetting()
		require.Equal(t, want.level, level, v)
		require.Equal(t, want.path, path, v)
	}
}

func TestTraceNamesFusedSteps(t *testing.T) {
	x, w := f32Node(64, 2), f32Node(64)
	norm := f32Node(64, 2)
	norm.Op, norm.Src[0] = tensor.OpRMSNorm, x
	mul := f32Node(64, 2)
	mul.Op, mul.Name, mul.Src[0], mul.Src[1] = tensor.OpMul, "attn_norm-0", norm, w
	plan := &sched.Plan{Steps: []sched.Step{{Node: mul, Dispatch: ops.Dispatch{Spec: &wgsl.Spec{Kernel: "norm"}}, Fused: []*tensor.Tensor{norm, mul}}}}
	st := traceSteps(plan)
	require.Equal(t, "RMS_NORM+MUL", st[0].name)
	var a map[string]any
	require.NoError(t, json.Unmarshal([]byte("{"+st[0].args+"}"), &a))
	require.Equal(t, float64(4*(128+64+128)), a["bytes"])
	require.Equal(t, "attn_norm-0", a["node"])
}
