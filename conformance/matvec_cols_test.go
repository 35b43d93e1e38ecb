package conformance

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// matVecColsCases are MUL_MAT cases of 2 to 8 columns (the vectorised mat-vec kernel's
// several-column forms), the first four of every weight format in the suite, and the
// suite's fusions of several columns.
func matVecColsCases() []*Case {
	var cs []*Case
	perType := map[string]int{}
	for _, c := range Cases() {
		if c.Op != "MUL_MAT" && c.Op != "GRAPH" {
			continue
		}
		for _, n := range []string{",n=2,", ",n=3,", ",n=4,", ",n=5,", ",n=7,", ",n=8,"} {
			if strings.Contains(c.Name, n) && (c.Op == "GRAPH" || perType[c.Types] < 4) {
				perType[c.Types]++
				cs = append(cs, c)
				break
			}
		}
	}
	return cs
}

// TestConformanceMatVecCols runs matVecColsCases in child processes with the vectorised
// mat-vec at the shapes matVecColsShape picks for large products, 4 rows of 32 and of 128
// invocations (GGML_WGPU_MATVEC_ROWS, GGML_WGPU_MATVEC_WG), which the suite's small
// products do not take by themselves (4 rows of 64 differ from 128 in the workgroup size
// alone, which the small products' shapes cover).
func TestConformanceMatVecCols(t *testing.T) {
	cs := matVecColsCases()
	require.GreaterOrEqual(t, len(cs), 100)
	for _, shape := range [][2]string{{"4", "32"}, {"4", "128"}} {
		t.Run("rows="+shape[0]+",wg="+shape[1], func(t *testing.T) {
			t.Setenv("GGML_WGPU_MATVEC_ROWS", shape[0])
			t.Setenv("GGML_WGPU_MATVEC_WG", shape[1])
			isolated(t, func(t *testing.T) {
				runSuite(t, openTestEnv(t), cs)
			})
		})
	}
}
