package conformance

import (
	"encoding/json"
	"io"
)

// PerfJSON is a perf report in machine-readable form (wgpu-conformance -perf-json): what
// the chart tool (conformance/cmd/wgpu-chart) reads to compare our device with a peer.
type PerfJSON struct {
	// Devices are the measured devices in column order.
	Devices []string `json:"devices"`
	// Cases are the cases in order, each with one result per device.
	Cases []PerfJSONCase `json:"cases"`
	// Notes are the run's notes (missing devices, libraries not loaded).
	Notes []string `json:"notes"`
}

// PerfJSONCase is one case of a PerfJSON.
type PerfJSONCase struct {
	// Name and Op are the case's (PerfCase).
	Name string `json:"name"`
	Op   string `json:"op"`
	// Results are the case's results, in the order of PerfJSON.Devices.
	Results []PerfJSONResult `json:"results"`
}

// PerfJSONResult is one measurement of a PerfJSON: the figures of a PerfResult.
type PerfJSONResult struct {
	Device string `json:"device"`
	// Status is "ok", "unsupported", "error" or "skipped"; Msg says why when not ok.
	Status string `json:"status"`
	Msg    string `json:"msg,omitempty"`
	// US is µs per op, GBps and TFLOPS its throughput, Bytes and Flops its work.
	US     float64 `json:"us"`
	GBps   float64 `json:"gbps"`
	TFLOPS float64 `json:"tflops"`
	Bytes  uint64  `json:"bytes"`
	Flops  uint64  `json:"flops"`
	Reps   int     `json:"reps"`
	Runs   int     `json:"runs"`
}

// JSON returns the report as a PerfJSON.
func (p *PerfReport) JSON() PerfJSON {
	out := PerfJSON{Devices: p.Devices, Notes: p.Notes}
	for i, c := range p.Cases {
		jc := PerfJSONCase{Name: c.Name, Op: c.Op}
		for _, r := range p.Results[i] {
			jc.Results = append(jc.Results, PerfJSONResult{Device: r.Device, Status: r.Status.String(), Msg: r.Msg,
				US: r.US, GBps: r.GBps, TFLOPS: r.TFLOPS, Bytes: r.Bytes, Flops: r.Flops, Reps: r.Reps, Runs: r.Runs})
		}
		out.Cases = append(out.Cases, jc)
	}
	return out
}

// WriteJSON writes the report as indented PerfJSON.
func (p *PerfReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(p.JSON())
}

// String returns the status as PerfJSON writes it.
func (s PerfStatus) String() string {
	switch s {
	case PerfOK:
		return "ok"
	case PerfUnsupported:
		return "unsupported"
	case PerfSkipped:
		return "skipped"
	}
	return "error"
}
