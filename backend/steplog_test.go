package backend

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStepLogSummary: the typical step is the most common sequence of events from one
// compute to the next, each event at its median time from the step's compute; a nil log
// records nothing and too few alike steps give no summary.
func TestStepLogSummary(t *testing.T) {
	var none *stepLog
	none.mark(evCompute)
	require.Empty(t, none.summary(1))

	l := newStepLog()
	at := int64(0)
	add := func(e stepEvent, dt int64) {
		at += dt
		l.kinds = append(l.kinds, e)
		l.at = append(l.at, at)
	}
	for i := range 9 {
		add(evCompute, 1000)
		add(evFound, int64(10_000+1000*i)) // 10..18 µs after the compute: upper median of the 8 alike: 15
		add(evSubmit, 5000)
		add(evComputeEnd, 1000)
		if i == 4 { // one step unlike the others
			add(evWrite, 1000)
			add(evWriteEnd, 1000)
		}
		add(evRead, 2000)
		add(evReadEnd, 3000)
	}
	add(evCompute, 1000)
	s := l.summary(8)
	require.True(t, strings.HasPrefix(s, "host timeline of a step (8 of 9 steps alike"), s)
	require.Contains(t, s, "plan found 15.0; submitted 20.0; compute returns 21.0; read 23.0; read returns 26.0; next compute 27.0")
	// the host's own time: from compute returns to read (2 µs) and from read returns to the
	// next compute (1 µs, 500 in the last step)
	require.True(t, strings.HasSuffix(s, "; longest stalls of the host's own: step 0 2.0 µs from compute returns to read, "+
		"step 1 2.0 µs from compute returns to read, step 2 2.0 µs from compute returns to read"), s)
	require.Empty(t, l.summary(9))

	// A stall between a read's end and the next compute (llama's own work) is named so.
	add(evRead, 2000)
	add(evReadEnd, 3000)
	add(evCompute, 500_000)
	require.Contains(t, l.summary(8), "longest stalls of the host's own: step 9 500.0 µs from read returns to next compute, step 0 2.0")
}
