package backend

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// traceClock explains, in the file, how GPU events are placed on the CPU's time axis.
const traceClock = "ts/dur in µs on the CPU clock from the first backend's start; " +
	"a graph's GPU dispatches start at the end of its first queue submission, offset by " +
	"their GPU timestamps from its first dispatch (GPU and CPU clocks are not correlated); " +
	"GPU times need GGML_WGPU_PROFILE's timing, which gives every dispatch a compute pass " +
	"of its own and waits for the GPU after every graph"

// traceMeta is the file's otherData: what the trace holds and what it leaves out.
type traceMeta struct {
	Producer          string   `json:"producer"`
	Clock             string   `json:"clock"`
	GPUTimes          []string `json:"gpu_times"`
	Events            int      `json:"events"`
	EventLimit        int      `json:"event_limit"`
	DroppedEvents     uint64   `json:"dropped_events"`
	UntimedDispatches uint64   `json:"untimed_dispatches"`
	Notes             []string `json:"notes"`
}

// write prints the trace as one JSON object. Callers hold mu.
func (t *tracer) write(out io.Writer) error {
	w := bufio.NewWriterSize(out, 1<<16)
	notes := append([]string{}, t.notes...)
	if t.dropped > 0 {
		notes = append(notes, fmt.Sprintf("truncated: the trace keeps its first %d events; %d later ones were dropped", t.limit, t.dropped))
	}
	if t.untimed > 0 {
		notes = append(notes, fmt.Sprintf("%d dispatches beyond the first %d of a graph were not timed", t.untimed, timedDispatches))
	}
	meta, err := json.Marshal(traceMeta{Producer: "ggml-wgpu", Clock: traceClock, GPUTimes: t.gpuTimes,
		Events: len(t.events), EventLimit: t.limit, DroppedEvents: t.dropped, UntimedDispatches: t.untimed, Notes: notes})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "{\"displayTimeUnit\":\"ns\",\"otherData\":%s,\"traceEvents\":[\n", meta)
	label := "GPU times from timestamp queries"
	if len(t.notes) > 0 || t.dropped > 0 {
		label = "see otherData for notes"
	}
	fmt.Fprintf(w, `{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"ggml-wgpu"}},`+"\n")
	fmt.Fprintf(w, `{"name":"process_labels","ph":"M","pid":1,"tid":0,"args":{"labels":%s}}`, quote(label))
	for i, name := range t.threads {
		fmt.Fprintf(w, ",\n"+`{"name":"thread_name","ph":"M","pid":1,"tid":%d,"args":{"name":%s}}`, i+1, quote(name))
		fmt.Fprintf(w, ",\n"+`{"name":"thread_sort_index","ph":"M","pid":1,"tid":%d,"args":{"sort_index":%d}}`, i+1, i+1)
	}
	num := make([]byte, 0, 32)
	for i := range t.events {
		e := &t.events[i]
		cat := "cpu"
		if e.step != nil {
			cat = "gpu"
		}
		w.WriteString(",\n{\"name\":")
		w.WriteString(quote(e.name))
		w.WriteString(`,"cat":"` + cat + `","ph":"X","pid":1,"tid":`)
		w.Write(strconv.AppendInt(num[:0], int64(e.tid), 10))
		w.WriteString(`,"ts":`)
		w.Write(strconv.AppendFloat(num[:0], e.ts, 'f', 3, 64))
		w.WriteString(`,"dur":`)
		w.Write(strconv.AppendFloat(num[:0], max(e.dur, 0), 'f', 3, 64))
		w.WriteString(`,"args":{"graph":`)
		w.Write(strconv.AppendInt(num[:0], int64(e.graph), 10))
		for _, extra := range []string{e.args, stepArgsOf(e)} {
			if extra != "" {
				w.WriteString(",")
				w.WriteString(extra)
			}
		}
		w.WriteString("}}")
	}
	w.WriteString("\n]}\n")
	return w.Flush()
}

func stepArgsOf(e *traceEvent) string {
	if e.step == nil {
		return ""
	}
	return e.step.args
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		return `""`
	}
	return string(b)
}
