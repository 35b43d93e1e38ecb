package conformance

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPerfJSON writes a report of two devices as JSON and reads it back.
func TestPerfJSON(t *testing.T) {
	c := &PerfCase{Name: "MUL_MAT(type_a=f16,type_b=f32,m=32,n=1,k=64)", Op: "MUL_MAT"}
	rep := &PerfReport{Devices: []string{"WGPU0", "Vulkan0"}, Cases: []*PerfCase{c}, Notes: []string{"a note"},
		Results: [][]PerfResult{{
			{Case: c, Device: "WGPU0", Status: PerfOK, US: 12.5, GBps: 3, TFLOPS: 0.5, Bytes: 100, Flops: 4096, Reps: 2, Runs: 5},
			{Case: c, Device: "Vulkan0", Status: PerfUnsupported, Msg: "refused"},
		}}}
	var b bytes.Buffer
	require.NoError(t, rep.WriteJSON(&b))
	var got PerfJSON
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	require.Equal(t, rep.JSON(), got)
	require.Equal(t, []string{"WGPU0", "Vulkan0"}, got.Devices)
	require.Len(t, got.Cases, 1)
	require.Equal(t, "MUL_MAT", got.Cases[0].Op)
	r := got.Cases[0].Results
	require.Equal(t, PerfJSONResult{Device: "WGPU0", Status: "ok", US: 12.5, GBps: 3, TFLOPS: 0.5, Bytes: 100, Flops: 4096, Reps: 2, Runs: 5}, r[0])
	require.Equal(t, "unsupported", r[1].Status)
	require.Equal(t, "refused", r[1].Msg)
}
