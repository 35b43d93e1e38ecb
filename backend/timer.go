package backend

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/ggml-wgpu/ggml-wgpu/backend/webgpu"
	"github.com/ggml-wgpu/ggml-wgpu/sched"
)

// timedDispatches is how many dispatches of a graph the kernel timer measures.
const timedDispatches = 4096

// kernelTimer measures every dispatch of a graph with GPU timestamps (GGML_WGPU_PROFILE=2)
// and sums the times per label.
type kernelTimer struct {
	d     *Device
	qs    *webgpu.QuerySet
	buf   *webgpu.Buffer
	total map[string]*timing
	runs  int
}

type timing struct {
	ns    uint64
	count int
}

// newKernelTimer reopens nothing: the device must have been opened with timestamps.
func newKernelTimer(d *Device) (*kernelTimer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	g := d.gpu
	if !g.Timestamps() {
		return nil, fmt.Errorf("the adapter has no timestamp queries")
	}
	qs, err := g.CreateQuerySet(2 * timedDispatches)
	if err != nil {
		return nil, err
	}
	buf, err := g.CreateBuffer(16*timedDispatches, webgpu.UsageTimestamps)
	if err != nil {
		qs.Release()
		return nil, err
	}
	return &kernelTimer{d: d, qs: qs, buf: buf, total: map[string]*timing{}}, nil
}

func (k *kernelTimer) capacity() int { return timedDispatches }

// collect resolves the timestamps of the dispatches just submitted and adds them up.
// Callers hold the device lock.
func (k *kernelTimer) collect(labels []string) error {
	n := len(labels)
	if n == 0 {
		return nil
	}
	e := k.d.gpu.NewEncoder()
	e.Resolve(k.qs, 0, 2*n, k.buf, 0)
	if _, err := e.Submit(); err != nil {
		return err
	}
	raw := make([]byte, 16*n)
	if err := k.d.gpu.Read(k.buf, 0, raw); err != nil {
		return err
	}
	for i, l := range labels {
		t0, t1 := binary.LittleEndian.Uint64(raw[16*i:]), binary.LittleEndian.Uint64(raw[16*i+8:])
		tm := k.total[l]
		if tm == nil {
			tm = &timing{}
			k.total[l] = tm
		}
		if t1 > t0 {
			tm.ns += t1 - t0
		}
		tm.count++
	}
	k.runs++
	return nil
}

// report lists the labels by total time.
func (k *kernelTimer) report() string {
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
	return b.String()
}

func (k *kernelTimer) release() {
	k.qs.Release()
	k.buf.Release()
}

var layerSuffix = regexp.MustCompile(`-\d+$`)

// stepLabels names each step by its node (llama's layer suffix removed) and kernel.
func stepLabels(p *sched.Plan) []string {
	out := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = layerSuffix.ReplaceAllString(s.Node.Name, "") + " " + s.Dispatch.Spec.Kernel
	}
	return out
}
