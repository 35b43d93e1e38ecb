package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRopeQJoinsKVStore generates with flash attention on WGPU0 and reads the trace: the
// backend's graph_optimize moves every layer's ROPE Q next to ROPE K before ggml places the
// graph, so no ROPE runs on its own and every K and V store is one dispatch with both
// ropes (rope+rope+set_rows+set_rows).
func TestRopeQJoinsKVStore(t *testing.T) {
	root := repoRoot(t)
	model := tinyModel(t, root)
	exe, libDir := buildGenerate(t, root)
	trace := filepath.Join(t.TempDir(), "trace.json")
	t.Setenv("GGML_WGPU_PROFILE", trace)
	run(t, root, exe, "-L", libDir, "-m", model, "-p", "Once upon a time", "-n", "3", "-d", "WGPU0", "--fa", "on")
	raw, err := os.ReadFile(trace)
	require.NoError(t, err)
	var doc struct {
		TraceEvents []struct {
			Name string         `json:"name"`
			Ph   string         `json:"ph"`
			Tid  int            `json:"tid"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	stores := 0
	for _, e := range doc.TraceEvents {
		if e.Tid != 2 || e.Ph != "X" {
			continue
		}
		// ggml splits this model's graphs (attention runs on the CPU): the graphs on WGPU0
		// that store K and V do it in the fused row, ROPE Q included
		require.NotEqual(t, "ROPE", e.Name, "graph %v: a ROPE on its own", e.Args["graph"])
		if strings.Contains(e.Name, "SET_ROWS") {
			require.Equal(t, "ROPE+ROPE+SET_ROWS+SET_ROWS", e.Name, "graph %v", e.Args["graph"])
			stores++
		}
	}
	require.Positive(t, stores, "no K and V store on WGPU0")
}
