package conformance

import (
	"fmt"
	"math"
)

// Thresholds of the normalized mean squared error, as ggml's test-backend-ops sets them
// (docs/ARCHITECTURE.md section 4).
const (
	// DefaultMaxNMSE applies to every op without a specific threshold.
	DefaultMaxNMSE = 1e-7
	// F16MaxNMSE replaces DefaultMaxNMSE for cases that involve F16 tensors.
	F16MaxNMSE = 1e-6
	// MulMatMaxNMSE applies to MUL_MAT.
	MulMatMaxNMSE = 5e-4
	// SoftMaxMaxNMSE applies to SOFT_MAX.
	SoftMaxMaxNMSE = 1e-6
	// ExactMaxNMSE applies to exact copies (same source and destination type).
	ExactMaxNMSE = 0
)

// DefaultThreshold returns DefaultMaxNMSE, or F16MaxNMSE when the case involves F16.
func DefaultThreshold(involvesF16 bool) float64 {
	if involvesF16 {
		return F16MaxNMSE
	}
	return DefaultMaxNMSE
}

// isInfOrMax reports whether f is an infinity or ±FLT_MAX (ggml treats both as infinite).
func isInfOrMax(f float32) bool {
	return math.IsInf(float64(f), 0) || f == math.MaxFloat32 || f == -math.MaxFloat32
}

// NMSE returns sum((ref-got)^2)/sum(ref^2), with ref the CPU (reference) result.
//
// It returns an error when the lengths differ, when either side has a NaN anywhere, or when
// an infinity (or ±FLT_MAX) on one side is not matched by one of the same sign at the same
// index on the other side. Matched infinities are left out of both sums. When sum(ref^2) is 0
// the result is 0 if the two sides agree exactly and +Inf otherwise.
func NMSE(ref, got []float32) (float64, error) {
	if len(ref) != len(got) {
		return math.Inf(1), fmt.Errorf("length mismatch: reference has %d values, result %d", len(ref), len(got))
	}
	var num, den float64
	for i := range ref {
		a, b := ref[i], got[i]
		if a != a || b != b {
			return math.Inf(1), fmt.Errorf("NaN at index %d (reference %g, result %g)", i, a, b)
		}
		ia, ib := isInfOrMax(a), isInfOrMax(b)
		if ia || ib {
			if !(ia && ib) {
				return math.Inf(1), fmt.Errorf("inf mismatch at index %d (reference %g, result %g)", i, a, b)
			}
			if math.Signbit(float64(a)) != math.Signbit(float64(b)) {
				return math.Inf(1), fmt.Errorf("inf sign mismatch at index %d (reference %g, result %g)", i, a, b)
			}
			continue
		}
		d := float64(a) - float64(b)
		num += d * d
		den += float64(a) * float64(a)
	}
	if den == 0 {
		if num == 0 {
			return 0, nil
		}
		return math.Inf(1), nil
	}
	return num / den, nil
}

// MaxAbsDiff returns the largest |ref[i]-got[i]| over finite pairs and its index (-1 if none).
func MaxAbsDiff(ref, got []float32) (float64, int) {
	best, at := 0.0, -1
	for i := range ref {
		if i >= len(got) {
			break
		}
		d := math.Abs(float64(ref[i]) - float64(got[i]))
		if d != d || math.IsInf(d, 0) {
			continue
		}
		if at < 0 || d > best {
			best, at = d, i
		}
	}
	return best, at
}
