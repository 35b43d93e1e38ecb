package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFilter: Filter and FilterPerf keep the cases whose name or op contains one of the
// "|"-separated alternatives, case-insensitively, and everything for an empty filter.
func TestFilter(t *testing.T) {
	cs := []*Case{{Name: "MUL_MAT(type_a=q4_K,m=8)", Op: "MUL_MAT"}, {Name: "GRAPH(ffn)", Op: "GRAPH"}, {Name: "ADD(x)", Op: "ADD"}}
	require.Len(t, Filter(cs, ""), 3)
	require.Equal(t, []*Case{cs[0]}, Filter(cs, "Q4_k"))
	require.Equal(t, []*Case{cs[1], cs[2]}, Filter(cs, "graph|add("))
	require.Empty(t, Filter(cs, "sub"))
	ps := []*PerfCase{{Name: "FLASH_ATTN_EXT(kv=512)", Op: "FLASH_ATTN_EXT"}, {Name: "MUL_MAT(m=14336,n=1,)", Op: "MUL_MAT"}}
	require.Equal(t, []*PerfCase{ps[1]}, FilterPerf(ps, "m=14336,n=1,"))
	require.Equal(t, ps, FilterPerf(ps, "flash|mul_mat"))
}
