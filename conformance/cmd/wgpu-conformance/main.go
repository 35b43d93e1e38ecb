// Command wgpu-conformance runs the ggml-wgpu conformance suite: every case is computed on
// the ggml CPU backend and on the device under test (WGPU0 of build/libggml-wgpu.so by
// default) and compared with ggml's NMSE metric. It prints a table per op and type and exits
// 1 if any case fails or any required case is unsupported. -quick keeps, of the cases
// -filter selects, the first of every op family and types and the first to run each kernel
// pipeline the library plans (a tenth of the suite that still runs every shader; the
// Vulkan validation run, scripts/validation.sh, uses it).
//
// With -perf it measures instead the ops of llama models' decode and prefill graphs on one
// or more devices side by side (test-backend-ops' perf mode): µs per op, GB/s, and TFLOP/s
// for MUL_MAT, in one Markdown table with a column group per device and the throughput ratio
// of the first device to each other one. -device may be repeated, -load names further
// backend libraries (e.g. ggml's Vulkan backend) to load before the devices are looked up;
// a device that does not exist is reported and left out. -quick runs fewer repetitions,
// -max-gflop skips the heaviest MUL_MATs (on lavapipe a single op of the prefill shapes runs
// for seconds). -perf-json also writes the results as JSON (what wgpu-chart reads).
//
// Usage:
//
//	go run ./conformance/cmd/wgpu-conformance [-lib DIR] [-backend FILE] [-device NAME]
//	    [-filter SUBSTR] [-quick] [-v] [-self] [-list]
//	go run ./conformance/cmd/wgpu-conformance -perf [-device WGPU0 -device Vulkan0 ...]
//	    [-load .cache/ggml/peer/libggml-vulkan.so ...] [-filter SUBSTR] [-quick]
//	    [-max-gflop N] [-threads N] [-list] [-perf-json FILE]
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/ggml-wgpu/ggml-wgpu/conformance"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

func main() {
	os.Exit(run())
}

func run() int {
	root, err := conformance.FindRepoRoot(".")
	if err != nil {
		root = "."
	}
	def := conformance.DefaultConfig(root)
	var devices, loads stringList
	lib := flag.String("lib", def.LibDir, "directory of the ggml host libraries (libggml-base.so, libggml.v0.5.0.so, libggml-cpu-*.so)")
	backend := flag.String("backend", def.BackendPath, "path of libggml-wgpu.so")
	flag.Var(&devices, "device", "name of the device under test (default "+conformance.DefaultDevice+"); with -perf repeatable: the devices to compare, in column order")
	filter := flag.String("filter", "", "run only cases whose op or name contains this substring (case-insensitive)")
	verbose := flag.Bool("v", false, "print every case with its NMSE")
	self := flag.Bool("self", false, "self-test the harness: use a second CPU backend as the device under test")
	list := flag.Bool("list", false, "list the cases and exit")
	perf := flag.Bool("perf", false, "measure op performance (µs, GB/s, TFLOP/s) on the devices instead of checking conformance")
	flag.Var(&loads, "load", "with -perf: a further backend library (e.g. .cache/ggml/peer/libggml-vulkan.so) to load with ggml_backend_load; repeatable")
	quick := flag.Bool("quick", false, "with -perf: fewer repetitions and runs (for slow devices such as lavapipe); else: only the first case of every op family and types and the first case of every kernel pipeline (see conformance.Env.Quick)")
	threads := flag.Int("threads", 0, "with -perf: threads of CPU backends (0: all cores)")
	perfJSON := flag.String("perf-json", "", "with -perf: also write the results as JSON to this file (read by wgpu-chart)")
	maxGflop := flag.Float64("max-gflop", 0, "with -perf: skip the cases whose op does more GFLOP than this (0: no limit; e.g. 8 on lavapipe)")
	minTime := flag.Duration("min-time", 0, "with -perf: the least time of a case's timed runs on a device (0: 1s, or -quick's 50ms); shorter makes sweeps of many cases faster and their figures noisier")
	flag.Parse()
	if len(devices) == 0 {
		devices = stringList{conformance.DefaultDevice}
	}
	if *perf {
		opts := conformance.DefaultPerfOptions()
		if *quick {
			opts = conformance.QuickPerfOptions()
		}
		opts.MaxOpFlops = uint64(*maxGflop * 1e9)
		if *minTime > 0 {
			opts.MinTime = *minTime
			opts.MaxTime = max(opts.MaxTime, *minTime)
		}
		return runPerf(*lib, *backend, devices, loads, *filter, opts, *threads, *list, *perfJSON)
	}
	if len(devices) > 1 || len(loads) > 0 || *maxGflop != 0 || *minTime != 0 {
		fmt.Fprintln(os.Stderr, "several -device, -load, -max-gflop and -min-time apply to -perf only")
		return 2
	}

	cases := conformance.Filter(conformance.Cases(), *filter)
	if *list && !*quick {
		listCases(cases)
		return 0
	}
	if len(cases) == 0 {
		fmt.Fprintf(os.Stderr, "no case matches %q\n", *filter)
		return 2
	}
	if !*self {
		if _, err := os.Stat(*backend); err != nil {
			fmt.Fprintf(os.Stderr, "%s not found: run scripts/build.sh first (or pass -backend)\n", *backend)
			return 2
		}
	}
	env, err := conformance.Open(conformance.Config{LibDir: *lib, BackendPath: *backend, Device: devices[0], SelfTest: *self})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer env.Close()
	if *quick {
		// The selection plans each case on the device under test, so it needs the library.
		if cases, err = env.QuickCases(cases); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if *list {
			listCases(cases)
			return 0
		}
	}
	fmt.Printf("device under test: %s (%s), %d cases\n", env.DeviceName, env.Description, len(cases))
	s := env.RunAll(cases, func(r conformance.Result) {
		if *verbose || r.Status == conformance.Failed {
			line := fmt.Sprintf("%-11s %s", r.Status, r.Case.Name)
			if r.Status == conformance.Passed {
				line += fmt.Sprintf(" NMSE=%.3e", r.NMSE)
			} else {
				line += ": " + r.Msg
			}
			fmt.Println(line)
		}
	})
	fmt.Println()
	s.WriteTable(os.Stdout)
	if p := s.Problems(); len(p) > 0 {
		fmt.Printf("\n%d problems:\n", len(p))
		for _, line := range p {
			fmt.Println(line)
		}
		return 1
	}
	fmt.Println("\nOK")
	return 0
}

// listCases prints one line per case: op family, types, name.
func listCases(cases []*conformance.Case) {
	for _, c := range cases {
		fmt.Printf("%-12s %-16s %s\n", c.Op, c.Types, c.Name)
	}
}

// runPerf is the -perf mode: it prints a progress line per measurement on stderr and the
// table on stdout; it exits 1 if a measurement failed, 2 if nothing could run.
func runPerf(lib, backend string, devices, loads []string, filter string, opts conformance.PerfOptions, threads int, list bool, jsonPath string) int {
	cases := conformance.FilterPerf(conformance.PerfCases(), filter)
	if list {
		for _, c := range cases {
			fmt.Printf("%-10s %s\n", c.Op, c.Name)
		}
		return 0
	}
	if len(cases) == 0 {
		fmt.Fprintf(os.Stderr, "no perf case matches %q\n", filter)
		return 2
	}
	if _, err := os.Stat(backend); err != nil {
		fmt.Fprintf(os.Stderr, "warning: %s not found (run scripts/build.sh or pass -backend): WGPU devices will be missing\n", backend)
		backend = ""
	}
	env, err := conformance.OpenPerf(conformance.PerfConfig{LibDir: lib, BackendPath: backend, Loads: loads,
		Devices: devices, Threads: threads})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer env.Close()
	for _, n := range env.Notes {
		fmt.Fprintln(os.Stderr, "warning: "+n)
	}
	for _, d := range env.Devices {
		fmt.Printf("device %s: %s\n", d.Name, d.Description)
	}
	fmt.Printf("%d perf cases\n", len(cases))
	rep := env.Run(cases, opts, func(r conformance.PerfResult) {
		fmt.Fprintln(os.Stderr, r.String())
	})
	fmt.Println()
	rep.WriteTable(os.Stdout)
	if jsonPath != "" {
		if err := writePerfJSON(rep, jsonPath); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if !rep.OK() {
		return 1
	}
	return 0
}

// writePerfJSON writes the perf report as JSON to path.
func writePerfJSON(rep *conformance.PerfReport, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := rep.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
