package main

import (
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadTraceAndPerf(t *testing.T) {
	s, err := readTrace("testdata/trace.json", 1, true)
	require.NoError(t, err)
	require.Equal(t, 2, s.graphs, "the prompt's graph is skipped")
	require.Equal(t, 3, s.total)
	require.Equal(t, 1, s.first)
	want := []struct {
		label string
		us    float64
		calls float64
	}{
		{"MUL_MAT mul_mat_vec8", 420, 2}, {"MUL_MAT mul_mat_vec", 60, 1}, {"FLASH_ATTN_EXT flash_attn", 40, 1},
		{"RMS_NORM+MUL norm", 12, 1}, {"SWIGLU glu", 9, 1}, {"ROPE rope", 8, 1}, {"ADD binary", 5, 1},
	}
	require.Len(t, s.rows, len(want))
	for i, w := range want {
		require.Equal(t, w.label, s.rows[i].label)
		require.InDelta(t, w.us, s.rows[i].us, 1e-9, w.label)
		require.InDelta(t, w.calls, s.rows[i].calls, 1e-9, w.label)
	}
	require.InDelta(t, 554, s.gpuUS, 1e-9)
	require.InDelta(t, 420.0/554, s.rows[0].share, 1e-9)
	require.InDelta(t, 900, s.cpuUS, 1e-9)

	require.NoError(t, readPerf("testdata/perf.json", s, "", ""))
	require.Equal(t, "WGPU0", s.ours)
	require.Equal(t, "Vulkan0", s.peer)
	require.InDelta(t, math.Sqrt(0.5*0.25), s.rows[0].ratio, 1e-9, "geometric mean of Vulkan0/WGPU0 over MUL_MAT cases")
	require.Equal(t, 2, s.rows[0].cases)
	require.Equal(t, 1, s.rows[4].cases, "GLU op=swiglu matches SWIGLU")
	require.InDelta(t, 1.5, s.rows[4].ratio, 1e-9)
	require.Zero(t, s.rows[5].cases, "ROPE is unsupported on the peer")
	require.Zero(t, s.rows[2].cases, "no FLASH_ATTN_EXT case in the sweep")

	// By op, every graph kept when skip leaves none; the tail summed into one bar.
	s, err = readTrace("testdata/trace.json", 5, false)
	require.NoError(t, err)
	require.Equal(t, 3, s.graphs)
	require.Equal(t, "MUL_MAT", s.rows[0].label)
	s.keep(3)
	require.Len(t, s.rows, 3)
	require.Equal(t, "4 others", s.rows[2].label, "six ops: two bars and the other four")
}

func TestChartDrawsBars(t *testing.T) {
	out := filepath.Join(t.TempDir(), "chart.png")
	require.Equal(t, 0, run([]string{"-trace", "testdata/trace.json", "-perf", "testdata/perf.json", "-out", out}))
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.Equal(t, image.Rect(0, 0, chartWidth, chartHeight(7)), img.Bounds())

	count := func(r image.Rectangle, c [3]uint32) int {
		n := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				cr, cg, cb, _ := img.At(x, y).RGBA()
				if [3]uint32{cr >> 8, cg >> 8, cb >> 8} == c {
					n++
				}
			}
		}
		return n
	}
	bars := image.Rect(barX0, headerH, barX1+1, headerH+7*rowH)
	ours := count(bars, [3]uint32{uint32(oursColor.R), uint32(oursColor.G), uint32(oursColor.B)})
	peer := count(bars, [3]uint32{uint32(peerColor.R), uint32(peerColor.G), uint32(peerColor.B)})
	// The largest bar spans the axis (420 us of a 500 us axis) at 12 px high.
	require.Greater(t, ours, 12*(barX1-barX0)*420/500-50, "our bars are missing")
	require.Positive(t, peer, "the peer's bars are missing")
	labels := count(image.Rect(margin, headerH, barX0, headerH+7*rowH), [3]uint32{uint32(ink.R), uint32(ink.G), uint32(ink.B)})
	require.Greater(t, labels, 200, "the op names are missing")
}

func TestChartErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "cpu-only.json")
	require.NoError(t, os.WriteFile(empty, []byte(`{"otherData":{"gpu_times":["WGPU0 backend 1: GPU times unavailable: no timestamps"]},
		"traceEvents":[{"name":"compute","cat":"cpu","ph":"X","ts":0,"dur":5,"args":{"graph":0}}]}`), 0o644))
	_, err := readTrace(empty, 1, true)
	require.ErrorContains(t, err, "GPU times unavailable")
	require.Equal(t, 1, run([]string{"-trace", empty, "-out", filepath.Join(dir, "x.png")}))
	require.Equal(t, 2, run([]string{"-out", filepath.Join(dir, "x.png")}), "-trace is required")
	s, err := readTrace("testdata/trace.json", 1, true)
	require.NoError(t, err)
	require.Error(t, readPerf("testdata/perf.json", s, "WGPU0", "NoSuchDevice"))
}
