// Command wgpu-conformance runs the ggml-wgpu conformance suite: every case is computed on
// the ggml CPU backend and on the device under test (WGPU0 of build/libggml-wgpu.so by
// default) and compared with ggml's NMSE metric. It prints a table per op and type and exits
// 1 if any case fails or any required case is unsupported.
//
// Usage:
//
//	go run ./conformance/cmd/wgpu-conformance [-lib DIR] [-backend FILE] [-device NAME]
//	    [-filter SUBSTR] [-v] [-self]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ggml-wgpu/ggml-wgpu/conformance"
)

func main() {
	os.Exit(run())
}

func run() int {
	root, err := conformance.FindRepoRoot(".")
	if err != nil {
		root = "."
	}
	def := conformance.DefaultConfig(root)
	lib := flag.String("lib", def.LibDir, "directory of the ggml host libraries (libggml-base.so, libggml.v0.5.0.so, libggml-cpu-*.so)")
	backend := flag.String("backend", def.BackendPath, "path of libggml-wgpu.so")
	device := flag.String("device", conformance.DefaultDevice, "name of the device under test")
	filter := flag.String("filter", "", "run only cases whose op or name contains this substring (case-insensitive)")
	verbose := flag.Bool("v", false, "print every case with its NMSE")
	self := flag.Bool("self", false, "self-test the harness: use a second CPU backend as the device under test")
	list := flag.Bool("list", false, "list the cases and exit")
	flag.Parse()

	cases := conformance.Filter(conformance.Cases(), *filter)
	if *list {
		for _, c := range cases {
			fmt.Printf("%-12s %-16s %s\n", c.Op, c.Types, c.Name)
		}
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
	env, err := conformance.Open(conformance.Config{LibDir: *lib, BackendPath: *backend, Device: *device, SelfTest: *self})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer env.Close()
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
