package conformance

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestActivationRowPlans plans the GRAPH(norm+scale) and GRAPH(ssm_conv+act) cases
// under quickLimits and checks that each is one dispatch of the norm or the convolution,
// the second node computed in it.
func TestActivationRowPlans(t *testing.T) {
	requirePlans(t, normScaleCases(), quickLimits, []planKind{{kernel: "norm", define: "SCALE=1", need: true}}, nil)
	requirePlans(t, ssmConvActCases(), quickLimits, []planKind{{kernel: "ssm_conv", need: true}}, nil)
}

// TestGDNStorePlans plans the GRAPH(gdn+cpy) cases under quickLimits and checks that each
// is one dispatch: the attention storing its final state into the cache (CACHE=1), no copy
// of its own.
func TestGDNStorePlans(t *testing.T) {
	requirePlans(t, gdnStoreCases(), quickLimits, []planKind{{kernel: "gated_delta_net", define: "CACHE=1", need: true}}, nil)
}

// TestElemChainPlans plans the GRAPH(chain) cases under quickLimits and checks that each
// chain the rows take is one element-wise chain dispatch and nothing else, and that the
// chains they must leave alone (an intermediate read again, no activation) take none.
func TestElemChainPlans(t *testing.T) {
	requirePlans(t, elemChainCases(), quickLimits, []planKind{{kernel: "elem_chain", need: true}}, nil)
	env := openTestEnv(t)
	for _, c := range elemChainUnfusedCases() {
		if !strings.Contains(c.Name, "read_again") && !strings.Contains(c.Name, "mul_div") {
			continue
		}
		keys, err := env.KernelsUnder(c, quickLimits)
		require.NoError(t, err, c.Name)
		require.NotEmpty(t, keys, c.Name)
		for _, k := range keys {
			require.False(t, strings.HasPrefix(k, "elem_chain;"), "%s: %s", c.Name, k)
		}
	}
}
