package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRopeQJoinsKVStore generates with flash attention on WGPU0 and reads the trace: no
// ROPE runs on its own and every K and V store is one dispatch with both ropes. This F16
// model's Q, V and K of one decoded token take the vectorised products, which rotate and
// store in their own dispatch in llama's order (mul_mat+view+rope+mul_mat+view+mul_mat+view+rope+set_rows);
// the integer formats' graph_optimize moves ROPE Q next to ROPE K before ggml places the
// graph (rope+rope+set_rows+set_rows, or the products' row add+norm+mul+qkv+rope+set_rows).
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
	// the prompt's several tokens keep the rope row; a decoded token's store is its products'
	const withProducts = "MUL_MAT+ROPE+MUL_MAT+MUL_MAT+ROPE+SET_ROWS+SET_ROWS"
	stores, decodes := 0, 0
	for _, e := range doc.TraceEvents {
		if e.Tid != 2 || e.Ph != "X" {
			continue
		}
		// ggml splits this model's graphs (attention runs on the CPU): the graphs on WGPU0
		// that store K and V do it in the fused row, ROPE Q included
		require.NotEqual(t, "ROPE", e.Name, "graph %v: a ROPE on its own", e.Args["graph"])
		if strings.Contains(e.Name, "SET_ROWS") {
			require.Contains(t, []string{"ROPE+ROPE+SET_ROWS+SET_ROWS", withProducts}, e.Name, "graph %v", e.Args["graph"])
			stores++
			if e.Name == withProducts {
				decodes++
			}
		}
	}
	require.Positive(t, stores, "no K and V store on WGPU0")
	require.Positive(t, decodes, "no decode step's store with its products")
}
