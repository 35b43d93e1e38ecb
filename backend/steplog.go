package backend

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// EnvTimeline=1 records when a device's exported calls begin and end (graph computes
// and their queue submissions, buffer reads and writes, synchronizations) and logs, when
// a backend is freed, the host's timeline of a typical graph step: each event's median
// time from the step's compute, over the steps that made the most common sequence of
// events (a decode's tokens). It reads no GPU clock and changes no submission, so the
// step's time is the untimed one; put beside GGML_WGPU_PROFILE=1's GPU busy time of a
// graph, it says where the rest of a token goes: the library's calls, the host's own
// work between them, and the GPU's start after a submission.
const EnvTimeline = "GGML_WGPU_TIMELINE"

// stepEvent is one kind of timeline event.
type stepEvent uint8

const (
	evCompute stepEvent = iota
	evFound             // a cached plan matched the graph
	evSubmit            // a queue submission returned
	evComputeEnd
	evRead
	evReadEnd
	evWrite
	evWriteEnd
	evSync
	evSyncEnd
	evReadMapped // a read's staging buffer mapped, before its copy
	evKinds
)

var stepEventNames = [evKinds]string{"compute", "plan found", "submitted", "compute returns", "read", "read returns",
	"write", "write returns", "synchronize", "synchronize returns", "read mapped"}

// stepLogLimit bounds the events kept (9 bytes each).
const stepLogLimit = 1 << 20

// stepLog records a device's timeline events; a nil *stepLog records nothing.
type stepLog struct {
	mu    sync.Mutex
	start time.Time
	kinds []stepEvent
	at    []int64 // ns since start
}

func newStepLog() *stepLog { return &stepLog{start: time.Now()} }

// mark records event e now.
func (l *stepLog) mark(e stepEvent) {
	if l == nil {
		return
	}
	now := time.Since(l.start)
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.kinds) < stepLogLimit {
		l.kinds = append(l.kinds, e)
		l.at = append(l.at, int64(now))
	}
}

// summary describes the typical step: the most common sequence of events from one
// compute to the next, with each event's median time from the step's compute and the
// next compute's. It is empty when fewer than minSteps steps share a sequence.
func (l *stepLog) summary(minSteps int) string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var steps []stepSpan
	from := -1
	for i, k := range l.kinds {
		if k != evCompute {
			continue
		}
		if from >= 0 {
			steps = append(steps, stepSpan{from, i})
		}
		from = i
	}
	count := map[string][]stepSpan{}
	best := ""
	for _, s := range steps {
		key := string(l.kinds[s.from:s.to]) // stepEvent values as bytes
		count[key] = append(count[key], s)
		if len(count[key]) > len(count[best]) {
			best = key
		}
	}
	same := count[best]
	if len(same) < minSteps {
		return ""
	}
	n := len(best) + 1 // the events, then the next compute
	var b strings.Builder
	fmt.Fprintf(&b, "host timeline of a step (%d of %d steps alike; median µs from its compute):", len(same), len(steps))
	offsets := make([]float64, len(same))
	for j := range n {
		for q, s := range same {
			offsets[q] = float64(l.at[s.from+j]-l.at[s.from]) / 1e3
		}
		slices.Sort(offsets)
		name := "next compute"
		if j < len(best) {
			name = stepEventNames[best[j]]
		}
		fmt.Fprintf(&b, " %s %.1f;", name, offsets[len(offsets)/2])
	}
	return strings.TrimSuffix(b.String(), ";") + l.slowest(steps)
}

// stepSpan is a step's events [from, to) in a stepLog, to the next compute.
type stepSpan struct{ from, to int }

// slowestSteps is how many steps summary names for their longest stalls.
const slowestSteps = 3

// callEnds are the events that end a call of the library's: what follows one is the
// host's own time until its next call.
var callEnds = [evKinds]bool{evComputeEnd: true, evReadEnd: true, evWriteEnd: true, evSyncEnd: true}

// slowest names the steps with the longest stalls of the host's own, each the longest
// pause from the end of one of the library's calls to the next event, with the events
// around it: what the medians leave out (the host waiting on something once a run,
// llama building a graph anew), apart from the waits for the GPU inside the calls.
func (l *stepLog) slowest(steps []stepSpan) string {
	type stall struct {
		step, after int
		d           int64
	}
	var stalls []stall
	for i, s := range steps {
		worst := stall{step: i, after: -1}
		for j := s.from; j < s.to; j++ {
			if d := l.at[j+1] - l.at[j]; callEnds[l.kinds[j]] && d > worst.d {
				worst.after, worst.d = j, d
			}
		}
		if worst.after >= 0 {
			stalls = append(stalls, worst)
		}
	}
	slices.SortStableFunc(stalls, func(a, b stall) int { return cmp.Compare(b.d, a.d) })
	var b strings.Builder
	for _, w := range stalls[:min(slowestSteps, len(stalls))] {
		next := "next compute"
		if w.after+1 < steps[w.step].to {
			next = stepEventNames[l.kinds[w.after+1]]
		}
		if b.Len() == 0 {
			b.WriteString("; longest stalls of the host's own:")
		} else {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " step %d %.1f µs from %s to %s", w.step, float64(w.d)/1e3, stepEventNames[l.kinds[w.after]], next)
	}
	return b.String()
}
