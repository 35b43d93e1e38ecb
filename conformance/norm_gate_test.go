package conformance

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNormGatePlans plans the GRAPH(add+norm+gate) cases with the integer mat-vec's size
// threshold at one weight, as TestConformanceNormGate runs them, and 32 KiB of workgroup
// memory (at 256 invocations a workgroup, the 4096-element rows take the norm's loop over
// quant words twice), and checks that each
// takes the fusion row add+norm+mul+gate: the norm's dispatch quantizing its result
// (XQ=1), the gate form reading it, and no dispatch that quantizes the columns.
func TestNormGatePlans(t *testing.T) {
	env := openTestEnv(t)
	saved := quickLimits
	t.Cleanup(func() { quickLimits = saved })
	quickLimits = append(quickLimits[:0:0], saved...)
	for i := range quickLimits {
		quickLimits[i].SwarMin = 1
		quickLimits[i].MaxWorkgroupStorage = 32768 // a 4096-element row and its exchange
	}
	for _, c := range normGateCases() {
		keys, err := env.Kernels(c)
		require.NoError(t, err, c.Name)
		var norm, gate int
		for _, k := range keys {
			switch {
			case strings.HasPrefix(k, "norm;") && strings.Contains(k, ";XQ=1;"):
				norm++
			case strings.HasPrefix(k, "mul_mat_vec_q4;") && strings.Contains(k, ";GLU=1;"):
				gate++
			default:
				t.Fatalf("%s: %s besides the norm quantizing the column and the gate form: %v", c.Name, k, keys)
			}
		}
		require.True(t, norm > 0 && gate > 0, "%s: the norm quantizing the column, the gate form: %v", c.Name, keys)
	}
}

// TestConformanceNormGate runs the GRAPH(add+norm+gate) cases on the fused row (the
// integer mat-vec's threshold at one weight, GGML_WGPU_SWAR_MIN=1), and again with their
// results placed by ggml-alloc (placedCases).
func TestConformanceNormGate(t *testing.T) {
	t.Setenv("GGML_WGPU_SWAR_MIN", "1") // inherited by the child process
	isolated(t, func(t *testing.T) {
		cs := normGateCases()
		runSuite(t, openTestEnv(t), append(cs, placedCases(cs)...))
	})
}

// TestNormQKVPlans plans the GRAPH(add+norm+qkv) cases as TestNormGatePlans does and
// checks that each takes the fusion row add+norm+mul+qkv: the norm's dispatch quantizing
// its result and one dispatch of the integer mat-vec's MULTI form.
func TestNormQKVPlans(t *testing.T) {
	env := openTestEnv(t)
	saved := quickLimits
	t.Cleanup(func() { quickLimits = saved })
	quickLimits = append(quickLimits[:0:0], saved...)
	for i := range quickLimits {
		quickLimits[i].MaxWorkgroupStorage = 32768
	}
	for _, c := range normQKVCases() {
		keys, err := env.Kernels(c)
		require.NoError(t, err, c.Name)
		var norm, multi int
		for _, k := range keys {
			switch {
			case strings.HasPrefix(k, "norm;") && strings.Contains(k, ";XQ=1;"):
				norm++
			case strings.HasPrefix(k, "mul_mat_vec_q4;") && strings.Contains(k, ";MULTI=1;"):
				multi++
			default:
				t.Fatalf("%s: %s besides the norm quantizing the column and the MULTI form: %v", c.Name, k, keys)
			}
		}
		require.True(t, norm > 0 && multi > 0, "%s: the norm quantizing the column, the MULTI form: %v", c.Name, keys)
	}
}

// TestConformanceNormQKV runs the GRAPH(add+norm+qkv) cases, and again with their results
// placed by ggml-alloc (placedCases).
func TestConformanceNormQKV(t *testing.T) {
	isolated(t, func(t *testing.T) {
		cs := normQKVCases()
		runSuite(t, openTestEnv(t), append(cs, placedCases(cs)...))
	})
}
