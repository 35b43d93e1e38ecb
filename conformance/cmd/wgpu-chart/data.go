package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/ggml-wgpu/ggml-wgpu/conformance"
)

// traceJSON is what the chart reads of a trace written with GGML_WGPU_PROFILE=<file>.
type traceJSON struct {
	OtherData struct {
		GPUTimes []string `json:"gpu_times"`
		Notes    []string `json:"notes"`
	} `json:"otherData"`
	TraceEvents []struct {
		Name string  `json:"name"`
		Cat  string  `json:"cat"`
		Ph   string  `json:"ph"`
		Dur  float64 `json:"dur"`
		Args struct {
			Graph  *int   `json:"graph"`
			Kernel string `json:"kernel"`
		} `json:"args"`
	} `json:"traceEvents"`
}

// row is one bar of the chart: an op (or op and kernel) of the traced graphs.
type row struct {
	label, op string
	us        float64 // GPU µs per graph
	share     float64 // of the graphs' GPU time
	calls     float64 // dispatches per graph
	// ratio is the peer's µs ÷ ours over the perf sweep's cases of the op (geometric mean;
	// above 1: we are faster); cases counts them (0: the sweep has no such op).
	ratio float64
	cases int
}

// summary is the chart's data.
type summary struct {
	rows          []row
	graphs, total int     // graphs charted, graphs in the trace
	first         int     // index of the first charted graph
	gpuUS, cpuUS  float64 // per charted graph: GPU time of the dispatches, CPU compute time
	dispatches    float64 // per charted graph
	ours, peer    string  // devices of the perf sweep ("" without one)
	traceName     string
	notes         []string
}

// readTrace sums the trace's GPU dispatches per group (op, or op and kernel when byKernel)
// over its graphs from index skip on (all of them if skip leaves none).
func readTrace(path string, skip int, byKernel bool) (*summary, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tr traceJSON
	if err := json.Unmarshal(raw, &tr); err != nil {
		return nil, fmt.Errorf("%s: not a trace: %w", path, err)
	}
	graphs := map[int]bool{}
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" && e.Cat == "gpu" && e.Args.Graph != nil {
			graphs[*e.Args.Graph] = true
		}
	}
	if len(graphs) == 0 {
		return nil, fmt.Errorf("%s: no GPU dispatch events (%s)", path, strings.Join(tr.OtherData.GPUTimes, "; "))
	}
	ids := make([]int, 0, len(graphs))
	for g := range graphs {
		ids = append(ids, g)
	}
	sort.Ints(ids)
	if skip >= len(ids) {
		skip = 0
	}
	first := ids[skip]
	s := &summary{graphs: len(ids) - skip, total: len(ids), first: first, notes: tr.OtherData.Notes}
	n := float64(s.graphs)
	byLabel := map[string]*row{}
	for _, e := range tr.TraceEvents {
		if e.Ph != "X" || e.Args.Graph == nil || *e.Args.Graph < first {
			continue
		}
		if e.Cat == "cpu" && e.Name == "compute" {
			s.cpuUS += e.Dur / n
		}
		if e.Cat != "gpu" {
			continue
		}
		label := e.Name
		if byKernel {
			label += " " + e.Args.Kernel
		}
		r := byLabel[label]
		if r == nil {
			r = &row{label: label, op: e.Name}
			byLabel[label] = r
		}
		r.us += e.Dur / n
		r.calls += 1 / n
		s.gpuUS += e.Dur / n
		s.dispatches += 1 / n
	}
	for _, r := range byLabel {
		r.share = r.us / math.Max(s.gpuUS, 1e-9)
		s.rows = append(s.rows, *r)
	}
	sort.Slice(s.rows, func(i, j int) bool {
		if s.rows[i].us != s.rows[j].us {
			return s.rows[i].us > s.rows[j].us
		}
		return s.rows[i].label < s.rows[j].label
	})
	return s, nil
}

// keep leaves the top rows and sums the others into one.
func (s *summary) keep(top int) {
	if top <= 0 || len(s.rows) <= top {
		return
	}
	other := row{label: fmt.Sprintf("%d others", len(s.rows)-top+1)}
	for _, r := range s.rows[top-1:] {
		other.us += r.us
		other.share += r.share
		other.calls += r.calls
	}
	s.rows = append(s.rows[:top-1], other)
}

// glueOp finds the op a GLU or UNARY perf case runs (its name's op=...).
var glueOp = regexp.MustCompile(`op=([a-z_0-9]+)`)

// perfOp is the op name of a perf case as traces name ops (SWIGLU for a GLU case of
// op=swiglu).
func perfOp(c conformance.PerfJSONCase) string {
	if c.Op == "GLU" || c.Op == "UNARY" {
		if m := glueOp.FindStringSubmatch(c.Name); m != nil {
			return strings.ToUpper(m[1])
		}
	}
	return c.Op
}

// readPerf compares, per op, the peer's time with ours over the perf sweep's cases that
// both measured, and sets the rows' ratio. ours and peer default to the sweep's first and
// second devices.
func readPerf(path string, s *summary, ours, peer string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var p conformance.PerfJSON
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("%s: not a perf report: %w", path, err)
	}
	if ours == "" && len(p.Devices) > 0 {
		ours = p.Devices[0]
	}
	if peer == "" && len(p.Devices) > 1 {
		peer = p.Devices[1]
	}
	oi, pi := index(p.Devices, ours), index(p.Devices, peer)
	if oi < 0 || pi < 0 || oi == pi {
		return fmt.Errorf("%s: devices %v: need %q and a peer %q", path, p.Devices, ours, peer)
	}
	logSum, count := map[string]float64{}, map[string]int{}
	for _, c := range p.Cases {
		if len(c.Results) != len(p.Devices) {
			continue
		}
		a, b := c.Results[oi], c.Results[pi]
		if a.Status != "ok" || b.Status != "ok" || a.US <= 0 || b.US <= 0 {
			continue
		}
		op := perfOp(c)
		logSum[op] += math.Log(b.US / a.US)
		count[op]++
	}
	for i := range s.rows {
		r := &s.rows[i]
		if n := count[r.op]; n > 0 {
			r.ratio, r.cases = math.Exp(logSum[r.op]/float64(n)), n
		}
	}
	s.ours, s.peer = ours, peer
	return nil
}

func index(list []string, v string) int {
	for i, x := range list {
		if strings.EqualFold(x, v) {
			return i
		}
	}
	return -1
}
