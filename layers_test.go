// Package ggmlwgpu_test checks the shape of the module: data flows one way, and no package
// imports one above it (docs/ARCHITECTURE.md draws the layers).
package ggmlwgpu_test

import (
	"encoding/json"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/ggml-wgpu/ggml-wgpu/"

// allowed lists, for every package of the library, the packages of ours it may import
// (non-test files). capi -> backend -> (sched -> ops -> wgsl) and (exec -> arena -> gpu);
// tensor, the graph model, is shared and imports nothing.
var allowed = map[string][]string{
	"capi":    {"backend", "tensor"},
	"backend": {"sched", "ops", "wgsl", "exec", "gpu", "tensor"},
	"sched":   {"ops", "tensor"},
	"ops":     {"wgsl", "tensor"},
	"wgsl":    {},
	"exec":    {"arena", "gpu"},
	"arena":   {"gpu"},
	"gpu":     {},
	"tensor":  {},
	// ggml, the Go binding for programs (purego, no cgo), loads the built library at run
	// time: it imports only the shared enums and layouts.
	"ggml": {"tensor"},
}

func TestImportsFlowDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	require.NoError(t, err)
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := map[string]bool{}
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		require.NoError(t, dec.Decode(&p))
		name := strings.TrimPrefix(p.ImportPath, module)
		ok, layered := allowed[name]
		if !layered {
			// Tools, tests and generators (conformance, include/abi, internal/...) may
			// import anything, but no library package may import them.
			continue
		}
		seen[name] = true
		var ours []string
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module) {
				ours = append(ours, strings.TrimPrefix(imp, module))
			}
		}
		sort.Strings(ours)
		for _, imp := range ours {
			require.Contains(t, ok, imp, "%s imports %s: an upward or sideways edge (see docs/ARCHITECTURE.md)", name, imp)
		}
	}
	for name := range allowed {
		require.True(t, seen[name], "package %s is gone: update the layer table", name)
	}
}
