package conformance

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// TestPerfSmoke runs the perf machinery on tiny cases on the CPU backend and on WGPU0 (when
// build/libggml-wgpu.so exists), with a device that does not exist among them: the missing
// device must be noted and left out, and every figure must be positive and finite. The perf
// suite itself is a benchmark, run with `wgpu-conformance -perf`, not by go test.
func TestPerfSmoke(t *testing.T) {
	cfg := testConfig(t)
	devices := []string{"CPU"}
	if _, err := os.Stat(cfg.BackendPath); err == nil {
		devices = append(devices, DefaultDevice)
	}
	devices = append(devices, "NoSuchDevice0")
	env, err := OpenPerf(PerfConfig{LibDir: cfg.LibDir, BackendPath: cfg.BackendPath, Devices: devices, Threads: 1})
	require.NoError(t, err)
	defer env.Close()
	require.Len(t, env.Devices, len(devices)-1)
	require.Contains(t, strings.Join(env.Notes, "\n"), "device NoSuchDevice0 not found")

	opts := QuickPerfOptions()
	opts.MinRuns, opts.MinTime, opts.MaxTime, opts.MaxReps = 2, 0, 0, 4
	// A chain's figures are its nodes' sums: two ADDs, each reading two and writing one.
	chain := &PerfCase{Name: "ADD(ADD(a,b),b)", Op: "ADD", Chain: true, Build: func(b *PerfBuilder) func() ggml.Tensor {
		x, y := b.New("a", f32, 64, 4), b.New("b", f32, 64, 4)
		return func() ggml.Tensor { return b.L.Add(b.Ctx, b.L.Add(b.Ctx, x, y), y) }
	}}
	// A dependent chain (perfChainAdd): each repetition one ADD of the previous result.
	cases := []*PerfCase{perfBinary("ADD", 64, 4, 4), perfMulMat(tensor.F16, 64, 32, 4), perfMulMat(tensor.Q4_0, 64, 32, 4), chain, perfChainAdd(64)}
	wantBytes := []uint64{3 * 64 * 4 * 4, 64*32*2 + 64*4*4 + 32*4*4, 64*32/32*18 + 64*4*4 + 32*4*4, 2 * 3 * 64 * 4 * 4, 3 * 64 * 4}
	wantFlops := []uint64{0, 2 * 64 * 32 * 4, 2 * 64 * 32 * 4, 0, 0}
	rep := env.Run(cases, opts, func(r PerfResult) { t.Log(r) })
	require.True(t, rep.OK())
	finite := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }
	for i, row := range rep.Results {
		require.Len(t, row, len(env.Devices))
		for _, r := range row {
			require.Equal(t, PerfOK, r.Status, r.String())
			require.GreaterOrEqual(t, r.Runs, 2)
			require.True(t, r.Reps >= 1 && r.Reps <= 4, "reps %d", r.Reps)
			require.Equal(t, wantBytes[i], r.Bytes, r.Case.Name)
			require.Equal(t, wantFlops[i], r.Flops, r.Case.Name)
			require.True(t, finite(r.US), "%s: %g µs", r, r.US)
			require.True(t, finite(r.GBps), "%s: %g GB/s", r, r.GBps)
			if r.Flops > 0 {
				require.True(t, finite(r.TFLOPS), "%s: %g TFLOP/s", r, r.TFLOPS)
			} else {
				require.Zero(t, r.TFLOPS)
			}
		}
	}
	table := rep.Table()
	t.Logf("\n%s", table)
	require.Contains(t, table, "| CPU µs |")
	require.Contains(t, table, "NoSuchDevice0")
	for _, c := range cases {
		require.Contains(t, table, c.Name)
	}
	if len(env.Devices) > 1 {
		require.Contains(t, table, "CPU/"+DefaultDevice)
	}

	// A case over MaxOpFlops is skipped, not measured.
	opts.MaxOpFlops = 1
	r := env.Measure(cases[1], env.Devices[0], opts)
	require.Equal(t, PerfSkipped, r.Status, r.String())
}

func TestPerfCases(t *testing.T) {
	cs := PerfCases()
	names := map[string]bool{}
	for _, c := range cs {
		require.False(t, names[c.Name], "duplicate perf case %s", c.Name)
		names[c.Name] = true
	}
	// 8 F16 shapes at n = 1 and 512; 2 shapes x n = 2, 4, 8 in F16; 2 shapes x 5 n in 7
	// formats; 2 output heads at n = 1 in 8 and at n = 8 in 3; 3 more decode shapes in 2; a prompt product
	// over normal weights, twice; cold weights: 2 shapes x n = 1, 2, 4, 8 in 8 formats and
	// 6 more decode shapes in 8, 4 shapes x n = 2, 4, 8 in 3, one in the 3 other formats with
	// single-bit fields and n = 1, 2, 4 in Q5_0 and Q5_1, and one in the 6 other formats
	// with lookup tables. 6 square
	// mat-vec chains. 3 short-prompt sizes in 3 formats. MUL_MAT_ID (the filter matches it
	// too): 8 token counts in 2 formats, a down product, 2 counts in 2 formats routed within
	// a pool of experts, a decoding token's gate and down products in 2 formats.
	require.Len(t, FilterPerf(cs, "MUL_MAT"), 16+6+70+16+6+6+2+64+48+36+3+6+6+6+9+25)
	require.Len(t, FilterPerf(cs, "n=512,k=4096"), 2+7)
	require.Len(t, FilterPerf(cs, "weights=cold"), 64+48+36+3+6+15+6+6)
	require.Len(t, FilterPerf(cs, "type_a=q5_K"), 10+2+8+6)
	require.Len(t, FilterPerf(cs, "type_a=q4_K"), 15+8+6+12+5+2+3+11+2+2)
	require.Len(t, FilterPerf(cs, "type_a=q4_K|type_a=q4_0"), 30+28+7+24+4+6+11+2+2+4, "alternatives")
	// the feed-forward gate: 2 shapes in 5 formats, Q4_K's 8B shape at n = 2, 4, 8 and Q4_0's 1B shape at n = 4, 8
	require.Len(t, FilterPerf(cs, "FFN_GATE"), 10+3+2)
	require.Len(t, FilterPerf(cs, "m=128256,"), 16+6)
	require.Len(t, FilterPerf(cs, "MUL_MAT_ID"), 25)
	// attention: 4 of the 8B's head, 3 prompts (one of a 1B's head), 3 short decodes, 7
	// decoding chains
	require.Len(t, FilterPerf(cs, "FLASH_ATTN_EXT"), 4+3+3+7)
	require.Len(t, FilterPerf(cs, "nb=1,"), 2+3+7)
	// chains: the floor, a norm, 3 formats x 2 square mat-vecs, 7 decoding attentions, 2
	// routers
	require.Len(t, FilterPerf(cs, ",chain)"), 4+6+7+2)
	require.Len(t, FilterPerf(cs, "GRAPH(moe_router"), 2)
}

// TestPerfColdCopies builds a cold-weight case (perfMulMatCold) and checks that its
// repetitions take their weights and activations from successive copies of one leaf,
// perfColdBytes of weights in all, and start over after the last copy.
func TestPerfColdCopies(t *testing.T) {
	cfg := testConfig(t)
	env, err := OpenPerf(PerfConfig{LibDir: cfg.LibDir, BackendPath: cfg.BackendPath, Devices: []string{"CPU"}, Threads: 1})
	require.NoError(t, err)
	defer env.Close()
	l := env.L
	ctx := l.Init(1<<20, true)
	require.NotZero(t, ctx)
	defer l.Free(ctx)
	b := &PerfBuilder{L: l, Ctx: ctx, idxMax: map[ggml.Tensor]int64{}, values: map[ggml.Tensor]leafValues{}}
	const k, m, n = 4096, 14336, 2
	matBytes := uint64(m * k / 32 * 18) // Q4_0
	copies := int((perfColdBytes + matBytes - 1) / matBytes)
	require.Equal(t, 9, copies) // 33 MB each: 9 hold 256 MiB
	rep := perfMulMatCold(tensor.Q4_0, k, m, n).Build(b)
	var w, x ggml.Tensor
	for i := 0; i <= copies; i++ {
		out := rep()
		vw, vx := out.Src(0), out.Src(1)
		require.Equal(t, [4]int64{k, m, 1, 1}, vw.Ne())
		require.Equal(t, [4]int64{k, n, 1, 1}, vx.Ne())
		if i == 0 {
			w, x = vw.ViewSrc(), vx.ViewSrc()
			require.Equal(t, [4]int64{k, m * int64(copies), 1, 1}, w.Ne(), "one leaf of the weights' copies")
		}
		require.Equal(t, w, vw.ViewSrc())
		require.Equal(t, x, vx.ViewSrc())
		c := uint64(i % copies)
		require.Equal(t, c*matBytes, vw.ViewOffs(), "repetition %d", i)
		require.Equal(t, c*k*n*4, vx.ViewOffs(), "repetition %d", i)
	}
}
