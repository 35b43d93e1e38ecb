package conformance

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-wgpu/ggml-wgpu/ops"
)

// The checks the fusion rows' conformance tests share: what a row's plan holds, and its
// cases run as they are and placed by ggml-alloc.

// planKind is a pipeline a fused row's plan may hold: its kernel, a define it has ("" for
// any) and whether each case's plan must hold one.
type planKind struct {
	kernel, define string
	need           bool
}

// requirePlans plans each of cs under limits and checks that every pipeline is of one of
// kinds, and that each kind marked need is there; odd, where not nil, admits one pipeline
// more where it reports true (a case's odd product's).
func requirePlans(t *testing.T, cs []*Case, limits []ops.Limits, kinds []planKind, odd func(c *Case, key string) bool) {
	t.Helper()
	env := openTestEnv(t)
	for _, c := range cs {
		keys, err := env.KernelsUnder(c, limits)
		require.NoError(t, err, c.Name)
		found := make([]bool, len(kinds))
		extra := false
	keys:
		for _, k := range keys {
			for i, kd := range kinds {
				if strings.HasPrefix(k, kd.kernel+";") && (kd.define == "" || keyDefines(k, kd.define)) {
					found[i] = true
					continue keys
				}
			}
			if odd != nil && !extra && odd(c, k) {
				extra = true
				continue
			}
			t.Fatalf("%s: %s besides %v: %v", c.Name, k, kinds, keys)
		}
		for i, kd := range kinds {
			require.True(t, found[i] || !kd.need, "%s: no %s with %s: %v", c.Name, kd.kernel, kd.define, keys)
		}
	}
}

// limitsWith returns quickLimits with set applied to each.
func limitsWith(set func(*ops.Limits)) []ops.Limits {
	limits := slices.Clone(quickLimits)
	for i := range limits {
		set(&limits[i])
	}
	return limits
}

// runPlaced runs cs, and again with their results placed by ggml-alloc (placedCases), in
// a child process (isolated), which inherits the test's environment.
func runPlaced(t *testing.T, cs func() []*Case) {
	t.Helper()
	isolated(t, func(t *testing.T) {
		c := cs()
		runSuite(t, openTestEnv(t), append(c, placedCases(c)...))
	})
}

// keyDefines reports whether the pipeline key k (kernel;DEFINES|operands...) has the
// define d ("NAME=value").
func keyDefines(k, d string) bool {
	defs, _, _ := strings.Cut(k, "|")
	return slices.Contains(strings.Split(defs, ";")[1:], d)
}
