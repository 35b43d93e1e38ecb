package backend

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The graphs' spread names their median, the first graph's time and the largest, in µs:
// a GPU whose clocks rise over the first graphs makes the first the largest.
func TestGraphSpread(t *testing.T) {
	k := &kernelTimer{}
	require.Equal(t, "no graph timed", k.graphSpread())
	k.graphs = []uint64{7_500_000, 2_100_000, 2_200_000, 2_150_000, 2_180_000} // ns
	require.Contains(t, k.graphSpread(), "per graph: median 2180.0 µs, first 7500.0, largest 7500.0, over 5 graphs")
	require.Equal(t, uint64(7_500_000), k.graphs[0], "the times kept in their order")
}

// The GPU's idle time between graphs: a pass timer's gaps from one graph's last pass's end
// to the next one's first start, their median and mean in µs.
func TestIdleSpread(t *testing.T) {
	k := &kernelTimer{perPass: true}
	require.Equal(t, "no gap between graphs timed", k.idleSpread())
	k.gaps = []uint64{300_000, 280_000, 1_000_000, 290_000} // ns
	require.Contains(t, k.idleSpread(), "GPU idle between graphs: median 300.0 µs, mean 467.5, over 4 gaps")
	require.Contains(t, k.idleSpread(), "; 90th percentile 1000.0, largest 1000.0; 1 gaps over twice the median, 1000.0 µs in all (gaps 2)")
	require.Contains(t, k.passReport(), "; GPU idle between graphs: median 300.0 µs")
	k.gaps = []uint64{100, 700, 100, 700, 100, 700, 100}
	require.Contains(t, k.idleSpread(), "median 0.1 µs, mean 0.4, over 7 gaps; 90th percentile 0.7, largest 0.7; 3 gaps over twice the median, 2.1 µs in all (gaps 1, 3, 5)")
}
