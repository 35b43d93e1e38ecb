package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// The chart's layout in pixels: a header (title, what was charted, legend), one row per
// op, the axis below. Text is basicfont's 7x13 (ASCII: "us" stands for µs).
const (
	chartWidth = 1200
	margin     = 16
	headerH    = 88
	rowH       = 24
	footerH    = 64
	barX0      = 290 // the bars' zero
	barX1      = 800 // the axis' maximum
	valueX     = 810 // the value column
	peerX      = 968 // the comparison column
	glyphW     = 7
)

// Colors of the chart.
var (
	white     = color.RGBA{255, 255, 255, 255}
	stripe    = color.RGBA{244, 245, 248, 255}
	ink       = color.RGBA{20, 20, 28, 255}
	grey      = color.RGBA{120, 120, 130, 255}
	gridColor = color.RGBA{215, 218, 225, 255}
	oursColor = color.RGBA{46, 110, 200, 255}
	peerColor = color.RGBA{232, 140, 40, 255}
)

// chartHeight is the height of a chart of n rows.
func chartHeight(n int) int { return headerH + n*rowH + footerH }

// render draws the summary.
func render(s *summary) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, chartWidth, chartHeight(len(s.rows))))
	draw.Draw(img, img.Bounds(), image.NewUniform(white), image.Point{}, draw.Src)

	title := "Where a graph's GPU time goes: " + s.traceName
	bold(img, margin, 20, clip(title, (chartWidth-2*margin)/glyphW), ink)
	last := s.first + s.graphs - 1
	what := fmt.Sprintf("graphs %d..%d of %d traced", s.first, last, s.total)
	if s.graphs < s.total {
		what += fmt.Sprintf(" (the first %d skipped: prompt)", s.total-s.graphs)
	}
	text(img, margin, 38, fmt.Sprintf("%s | %.0f dispatches/graph | GPU %s us/graph (dispatches only) | CPU compute %s us/graph",
		what, s.dispatches, num(s.gpuUS), num(s.cpuUS)), grey)
	text(img, margin, 54, "Dispatch times from GPU timestamps (each dispatch in a pass of its own: launch gaps not counted).", grey)
	box(img, margin, 64, 12, 10, oursColor)
	text(img, margin+18, 74, "ours: GPU us per graph, share of the graph's GPU time, xN dispatches per graph", ink)
	if s.peer != "" {
		box(img, 620, 64, 12, 10, peerColor)
		text(img, 638, 74, clip(fmt.Sprintf("%s estimated: ours x (%s us / %s us) of the op's perf cases",
			s.peer, s.peer, s.ours), (chartWidth-638-margin)/glyphW), ink)
	}

	maxUS := 0.0
	for _, r := range s.rows {
		maxUS = math.Max(maxUS, r.us)
		if r.cases > 0 {
			maxUS = math.Max(maxUS, r.us*r.ratio)
		}
	}
	step := niceStep(maxUS)
	top := math.Max(step, math.Ceil(maxUS/step)*step)
	x := func(us float64) int { return barX0 + int(math.Round(math.Min(us/top, 1)*float64(barX1-barX0))) }

	bottom := headerH + len(s.rows)*rowH
	for i := range s.rows {
		if i%2 == 1 {
			box(img, 0, headerH+i*rowH, chartWidth, rowH, stripe)
		}
	}
	for i := 0; float64(i)*step <= top+step/2; i++ {
		v := float64(i) * step
		box(img, x(v), headerH-4, 1, bottom-headerH+8, gridColor)
		label := strconv.FormatFloat(v, 'f', -1, 64)
		text(img, x(v)-len(label)*glyphW/2, bottom+18, label, ink)
	}
	for i, r := range s.rows {
		y := headerH + i*rowH
		text(img, margin, y+15, clip(r.label, (barX0-margin-8)/glyphW), ink)
		box(img, barX0, y+3, max(x(r.us)-barX0, 1), 12, oursColor)
		text(img, valueX, y+15, fmt.Sprintf("%s us %4.1f%% x%s", num(r.us), 100*r.share, strconv.FormatFloat(math.Round(r.calls*10)/10, 'f', -1, 64)), ink)
		switch {
		case s.peer == "":
		case r.cases == 0:
			text(img, peerX, y+15, "no perf case", grey)
		default:
			box(img, barX0, y+16, max(x(r.us*r.ratio)-barX0, 1), 5, peerColor)
			faster, by := s.ours, r.ratio
			if by < 1 {
				faster, by = s.peer, 1/by
			}
			text(img, peerX, y+15, clip(fmt.Sprintf("%s %.2fx faster (%d)", faster, by, r.cases), (chartWidth-peerX-4)/glyphW), ink)
		}
	}
	box(img, barX0, bottom+2, barX1-barX0+1, 1, ink)
	axis := "GPU us per graph (sum of the row's dispatches)"
	text(img, (barX0+barX1)/2-len(axis)*glyphW/2, bottom+36, axis, ink)
	if len(s.notes) > 0 {
		text(img, margin, bottom+54, clip("trace notes: "+strings.Join(s.notes, "; "), (chartWidth-2*margin)/glyphW), grey)
	}
	return img
}

// niceStep is a grid step of 1, 2 or 5 times a power of ten giving about five lines up to v.
func niceStep(v float64) float64 {
	if v <= 0 {
		return 1
	}
	raw := v / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// num formats a non-negative figure with about four significant digits.
func num(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	case v >= 10:
		return fmt.Sprintf("%.2f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	case v == 0:
		return "0"
	}
	return fmt.Sprintf("%.3g", v)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:max(n-3, 0)] + "..."
}

func box(img *image.RGBA, x, y, w, h int, c color.Color) {
	draw.Draw(img, image.Rect(x, y, x+w, y+h), image.NewUniform(c), image.Point{}, draw.Src)
}

// text draws s with its baseline at y.
func text(img *image.RGBA, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// bold draws s twice, a pixel apart.
func bold(img *image.RGBA, x, y int, s string, c color.Color) {
	text(img, x, y, s, c)
	text(img, x+1, y, s, c)
}

// baseName is the file name of path, for the title.
func baseName(path string) string { return filepath.Base(path) }
