// Command wgpu-chart draws where the GPU time of traced graphs goes, as a PNG: one bar per
// op (or op and kernel) with its GPU µs per graph, its share of the graph's GPU time and
// its dispatches per graph, from a trace written with GGML_WGPU_PROFILE=<file> (of a
// decode run: several graphs, the first, the prompt's, skipped by default). With -perf, a
// perf sweep written by `wgpu-conformance -perf -perf-json FILE` with our device and a
// peer side by side adds, for every op the sweep measured, the peer's estimated time (ours
// scaled by the geometric mean of peer µs ÷ our µs over the op's cases) and which is faster.
//
// Usage:
//
//	go run ./conformance/cmd/wgpu-chart -trace trace.json [-perf perf.json] [-out chart.png]
//	    [-by kernel|op] [-skip N] [-top N] [-ours WGPU0] [-peer Vulkan0]
package main

import (
	"flag"
	"fmt"
	"image/png"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("wgpu-chart", flag.ContinueOnError)
	tracePath := fs.String("trace", "", "trace JSON written with GGML_WGPU_PROFILE=<file> (required)")
	perfPath := fs.String("perf", "", "perf sweep JSON of wgpu-conformance -perf -perf-json (optional)")
	out := fs.String("out", "chart.png", "PNG to write")
	by := fs.String("by", "kernel", "one bar per op and kernel (kernel) or per op (op)")
	skip := fs.Int("skip", 1, "graphs to leave out at the start (the prompt's); all are kept if none would remain")
	top := fs.Int("top", 24, "bars to draw; the rest are summed into one")
	ours := fs.String("ours", "", "our device in the perf sweep (default: its first)")
	peer := fs.String("peer", "", "the peer device in the perf sweep (default: its second)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *tracePath == "" || (*by != "kernel" && *by != "op") {
		fs.Usage()
		return 2
	}
	if err := chart(*tracePath, *perfPath, *out, *by == "kernel", *skip, *top, *ours, *peer); err != nil {
		fmt.Fprintln(os.Stderr, "wgpu-chart:", err)
		return 1
	}
	fmt.Println("wrote", *out)
	return 0
}

// chart reads the trace (and the perf sweep) and writes the PNG.
func chart(tracePath, perfPath, out string, byKernel bool, skip, top int, ours, peer string) error {
	s, err := readTrace(tracePath, skip, byKernel)
	if err != nil {
		return err
	}
	s.traceName = baseName(tracePath)
	s.keep(top)
	if perfPath != "" {
		if err := readPerf(perfPath, s, ours, peer); err != nil {
			return err
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := png.Encode(f, render(s)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
