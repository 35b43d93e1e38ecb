package backend

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ggml-wgpu/ggml-wgpu/exec"
	"github.com/ggml-wgpu/ggml-wgpu/sched"
)

// timedDispatches is how many dispatches of a graph the kernel timer measures: two
// timestamps each, and a query set holds at most 4096.
const timedDispatches = 2048

// kernelTimer measures every dispatch of a graph with GPU timestamps (GGML_WGPU_PROFILE=2 or a trace file)
// and sums the times per label.
type kernelTimer struct {
	t     *exec.Timer
	total map[string]*timing
	runs  int
	// last is what the last graph measured and collected the CPU time its read-back took
	// (the trace's records).
	last      exec.Timing
	collected exec.Interval
	// perPass: the timer times each submission's compute pass (GGML_WGPU_PROFILE=1), and
	// busy and span sum, over the graphs, the passes' GPU time and the time from the first
	// pass's start to the last one's end.
	perPass    bool
	busy, span uint64
	// graphs holds each graph's GPU time (busy, or the dispatches' sum), at most maxGraphs
	// of them: the GPU raises its clocks over the first graphs after it idled, which the
	// averages include and the median leaves out.
	graphs []uint64
	// gaps holds, for a pass timer, the GPU's idle time before each graph but the first:
	// from the previous graph's last pass's end (lastEnd, on the GPU's clock) to this one's
	// first pass's start, at most maxGraphs of them. A decode token's time beyond its GPU
	// time lies there: the host's notice of the GPU's end, the logits' read, llama's own
	// work, the next graph's inputs and its first submission.
	gaps    []uint64
	lastEnd uint64
	// begun is when the graph being run began its compute; firstSubmit, lastSubmit and
	// readBack sum, over the graphs of a pass timer, the CPU time from then until its first
	// and last queue submissions returned and until its GPU times were read back (which
	// waits for the GPU): where a graph's CPU time goes around the GPU's span; firstCall
	// sums the first submission's own call.
	begun                                        time.Time
	firstSubmit, lastSubmit, readBack, firstCall time.Duration
	hostRuns                                     int // the graphs those sum over: reused ones (begun set)
}

type timing struct {
	ns    uint64
	count int
}

// newPassTimer is newKernelTimer timing each submission's pass, the dispatches recorded
// as they are (GGML_WGPU_PROFILE=1): the GPU's time for a graph without slowing it.
func (d *Device) newPassTimer() (*kernelTimer, error) {
	return d.newTimer(true)
}

// newKernelTimer needs a device opened with timestamps (profile levels 1 and 2 do that).
func (d *Device) newKernelTimer() (*kernelTimer, error) {
	return d.newTimer(false)
}

// newTimer makes a kernel timer, or a pass timer when perPass.
func (d *Device) newTimer(perPass bool) (*kernelTimer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return nil, err
	}
	if !d.gpu.Timestamps() {
		return nil, fmt.Errorf("the adapter has no timestamp queries")
	}
	if perPass {
		t, err := exec.NewPassTimer(d.gpu, timedDispatches)
		if err != nil {
			return nil, err
		}
		return &kernelTimer{t: t, perPass: true}, nil
	}
	t, err := exec.NewTimer(d.gpu, timedDispatches)
	if err != nil {
		return nil, err
	}
	return &kernelTimer{t: t, total: map[string]*timing{}}, nil
}

func (d *Device) releaseTimer(k *kernelTimer) {
	d.mu.Lock()
	defer d.mu.Unlock()
	k.t.Release()
}

// collect adds up the times of the dispatches just run. Callers hold the device lock.
func (k *kernelTimer) collect(labels []string) error {
	start := time.Now()
	tm, err := k.t.Collect()
	k.last, k.collected = tm, exec.Interval{Start: start, End: time.Now()}
	if err != nil {
		return err
	}
	var graph uint64
	for _, s := range tm.Spans {
		graph += s.Duration()
	}
	if len(k.graphs) < maxGraphs {
		k.graphs = append(k.graphs, graph)
	}
	if k.perPass {
		if n := len(tm.Spans); n > 0 {
			k.busy += graph
			k.span += exec.Span{Start: tm.Spans[0].Start, End: tm.Spans[n-1].End}.Duration()
			if k.lastEnd > 0 && len(k.gaps) < maxGraphs {
				k.gaps = append(k.gaps, exec.Span{Start: k.lastEnd, End: tm.Spans[0].Start}.Duration())
			}
			k.lastEnd = tm.Spans[n-1].End
		}
		if n := len(tm.Submits); n > 0 && !k.begun.IsZero() {
			k.firstSubmit += tm.Submits[0].End.Sub(k.begun)
			k.firstCall += tm.Submits[0].End.Sub(tm.Submits[0].Start)
			k.lastSubmit += tm.Submits[n-1].End.Sub(k.begun)
			k.readBack += k.collected.End.Sub(k.begun)
			k.hostRuns++
		}
		k.runs++
		return nil
	}
	for i, s := range tm.Spans {
		v := s.Duration()
		tm := k.total[labels[i]]
		if tm == nil {
			tm = &timing{}
			k.total[labels[i]] = tm
		}
		tm.ns += v
		tm.count++
	}
	k.runs++
	return nil
}

// maxGraphs bounds the graphs whose GPU times a timer keeps for its median.
const maxGraphs = 1 << 20

// graphSpread says how the graphs' GPU times spread: their median, first and largest.
func (k *kernelTimer) graphSpread() string {
	if len(k.graphs) == 0 {
		return "no graph timed"
	}
	g := slices.Clone(k.graphs)
	slices.Sort(g)
	return fmt.Sprintf("per graph: median %.1f µs, first %.1f, largest %.1f, over %d graphs (a GPU raises its clocks over the first graphs after it idled)",
		float64(g[len(g)/2])/1e3, float64(k.graphs[0])/1e3, float64(g[len(g)-1])/1e3, len(g))
}

// idleSpread says how long the GPU idled between graphs: the median, the mean, the 90th
// percentile and the largest of the gaps (see kernelTimer.gaps), and the gaps longer than
// twice the median, with what they add up to and where the first of them fell (gap i lies
// before graph i + 1): a token's time whose mean lies far above its median comes from a
// few long gaps (a stall every so many tokens) or from every other one.
func (k *kernelTimer) idleSpread() string {
	if len(k.gaps) == 0 {
		return "no gap between graphs timed"
	}
	g := slices.Clone(k.gaps)
	slices.Sort(g)
	var sum uint64
	for _, v := range g {
		sum += v
	}
	median := g[len(g)/2]
	var long []string
	var longSum uint64
	count := 0
	for i, v := range k.gaps {
		if v > 2*median {
			count++
			longSum += v
			if len(long) < maxLongGaps {
				long = append(long, fmt.Sprint(i))
			}
		}
	}
	where := ""
	if count > 0 {
		where = fmt.Sprintf(" (gaps %s", strings.Join(long, ", "))
		if count > len(long) {
			where += ", ..."
		}
		where += ")"
	}
	return fmt.Sprintf("GPU idle between graphs: median %.1f µs, mean %.1f, over %d gaps; 90th percentile %.1f, largest %.1f; "+
		"%d gaps over twice the median, %.1f µs in all%s (from a graph's last pass's end to the next one's first start: the host's work between them, the profile's read-back of the GPU times included)",
		float64(median)/1e3, float64(sum)/1e3/float64(len(g)), len(g), float64(g[len(g)*9/10])/1e3, float64(g[len(g)-1])/1e3,
		count, float64(longSum)/1e3, where)
}

// maxLongGaps bounds the long gaps idleSpread names.
const maxLongGaps = 12

// passReport says what a pass timer measured per graph.
func (k *kernelTimer) passReport() string {
	n := float64(max(k.runs, 1))
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(max(k.hostRuns, 1)) }
	return fmt.Sprintf("GPU %.1f µs/graph busy in its passes, %.1f µs/graph from the first pass's start to the last one's end; "+
		"CPU from a reused graph's compute to its first submission %.1f µs/graph (the submission's call %.1f), to its last %.1f, to the GPU's times read back %.1f; busy %s; %s",
		float64(k.busy)/1e3/n, float64(k.span)/1e3/n, us(k.firstSubmit), us(k.firstCall), us(k.lastSubmit), us(k.readBack), k.graphSpread(), k.idleSpread())
}

// report lists the labels by total time (a pass timer: passReport).
func (k *kernelTimer) report() string {
	if k.perPass {
		return k.passReport()
	}
	type row struct {
		label string
		t     *timing
	}
	var rows []row
	var all uint64
	for l, t := range k.total {
		rows = append(rows, row{l, t})
		all += t.ns
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].t.ns > rows[j].t.ns })
	var b strings.Builder
	fmt.Fprintf(&b, "%-40s %10s %12s %8s\n", "node / kernel", "calls", "µs/graph", "share")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-40s %10d %12.1f %7.1f%%\n", r.label, r.t.count, float64(r.t.ns)/1e3/float64(max(k.runs, 1)), 100*float64(r.t.ns)/float64(max(all, 1)))
	}
	fmt.Fprintf(&b, "%-40s %10s %12.1f\n", "total (dispatches only)", "", float64(all)/1e3/float64(max(k.runs, 1)))
	fmt.Fprintf(&b, "dispatches' sum %s\n", k.graphSpread())
	return b.String()
}

var layerSuffix = regexp.MustCompile(`-\d+$`)

// stepLabel names a dispatch by its node (llama's layer suffix removed) and kernel, as
// the profile lists it and EnvAblate matches it.
func stepLabel(node, kernel string) string {
	return layerSuffix.ReplaceAllString(node, "") + " " + kernel
}

// stepLabels names each step of p (stepLabel).
func stepLabels(p *sched.Plan) []string {
	out := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = stepLabel(s.Node.Name, s.Dispatch.Spec.Kernel)
	}
	return out
}
