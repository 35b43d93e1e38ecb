package conformance

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFAOutPlans plans the GRAPH(flash_attn+wo) cases under quickLimits and checks that each takes the fusion row
// flash_attn+view+mul_mat: the split attention, its reduction quantizing the rows (XQ=1)
// and the integer mat-vec reading them, with no dispatch that quantizes the column.
func TestFAOutPlans(t *testing.T) {
	env := openTestEnv(t)
	for _, c := range faOutCases() {
		keys, err := env.KernelsUnder(c, quickLimits)
		require.NoError(t, err, c.Name)
		var reduce, products int
		for _, k := range keys {
			switch {
			case strings.HasPrefix(k, "flash_attn;") && keyDefines(k, "SPLIT=1"):
			case strings.HasPrefix(k, "flash_attn_reduce;") && keyDefines(k, "XQ=1"):
				reduce++
			case strings.HasPrefix(k, "mul_mat_vec_q4;") && keyDefines(k, "XQ=1"):
				products++
			default:
				t.Fatalf("%s: %s besides the split attention, its reduction quantizing the column and the product: %v", c.Name, k, keys)
			}
		}
		require.True(t, reduce > 0 && products > 0, "%s: %v", c.Name, keys)
	}
}

// TestConformanceFAOut runs the GRAPH(flash_attn+wo) cases, and again with their results
// placed by ggml-alloc (placedCases).
func TestConformanceFAOut(t *testing.T) {
	isolated(t, func(t *testing.T) {
		cs := faOutCases()
		runSuite(t, openTestEnv(t), append(cs, placedCases(cs)...))
	})
}

// keyDefines reports whether the pipeline key k (kernel;DEFINES|operands...) has the
// define d ("NAME=value").
func keyDefines(k, d string) bool {
	defs, _, _ := strings.Cut(k, "|")
	return slices.Contains(strings.Split(defs, ";")[1:], d)
}
