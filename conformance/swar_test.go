package conformance

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSwarPlans plans every integer mat-vec case (mulMatSwarCases) with the kernel's size
// threshold at one weight, as TestConformanceSwar runs them, and checks that each takes
// the kernel: one dispatch, quantizing the activations it reads, or for the feed-forward
// cases its gate form (GLU) and for several columns its XQ form, after a dispatch that
// quantizes the columns.
func TestSwarPlans(t *testing.T) {
	env := openTestEnv(t)
	saved := quickLimits
	t.Cleanup(func() { quickLimits = saved })
	quickLimits = append(quickLimits[:0:0], saved...)
	for i := range quickLimits {
		quickLimits[i].SwarMin = 1
		quickLimits[i].Q6KOff = true // Q6_K single products take the Q6_K mat-vec otherwise
	}
	for _, c := range mulMatSwarCases() {
		keys, err := env.Kernels(c)
		require.NoError(t, err, c.Name)
		require.NotEmpty(t, keys, "%s: unsupported", c.Name)
		var swar, act, glu, other int
		for _, k := range keys {
			switch {
			case strings.HasPrefix(k, "mul_mat_vec_q4_act;"):
				act++
			case strings.HasPrefix(k, "mul_mat_vec_q4;"):
				swar++
				if strings.Contains(k, ";GLU=1;") {
					glu++
				}
			default:
				other++
			}
		}
		require.Positive(t, swar, "%s: %v", c.Name, keys)
		require.Zero(t, other, "%s: %v", c.Name, keys)
		switch {
		case strings.Contains(c.Name, "swiglu"):
			require.Equal(t, swar, glu, "%s: the gate form: %v", c.Name, keys)
			require.Equal(t, glu, act, "%s: one quantization per gate product: %v", c.Name, keys)
		case !strings.Contains(c.Name, ",n=1,") || strings.Contains(c.Name, ",m=8192,") && !strings.Contains(c.Name, "q6_K"):
			// several columns, and single products of many rows (ops.swarXQMinRows) but Q6_K's
			require.Zero(t, glu, "%s: %v", c.Name, keys)
			require.Equal(t, swar, act, "%s: the columns quantized first: %v", c.Name, keys)
		default:
			require.Zero(t, glu+act, "%s: %v", c.Name, keys)
		}
	}
}

// TestSwarIDPlans checks that the decode-sized MUL_MAT_IDs of the nibble formats
// (mulMatIDSwarCases) take the integer mat-vec's IDS form, one dispatch each.
func TestSwarIDPlans(t *testing.T) {
	env := openTestEnv(t)
	for _, c := range mulMatIDSwarCases() {
		keys, err := env.Kernels(c)
		require.NoError(t, err, c.Name)
		require.Len(t, keys, 1, "%s: %v", c.Name, keys)
		require.True(t, strings.HasPrefix(keys[0], "mul_mat_vec_q4;") && strings.Contains(keys[0], ";IDS=1;"), "%s: %v", c.Name, keys)
	}
}

// TestConformanceSwarXQ runs the integer mat-vec cases (mulMatSwarCases) with every single
// product on the kernel's XQ form (GGML_WGPU_SWAR_XQ=1), its column quantized by a
// dispatch of its own, as single products of many rows take it by default.
func TestConformanceSwarXQ(t *testing.T) {
	t.Setenv("GGML_WGPU_SWAR_MIN", "1") // inherited by the child process
	t.Setenv("GGML_WGPU_SWAR_XQ", "1")
	t.Setenv("GGML_WGPU_Q6K", "0")
	isolated(t, func(t *testing.T) {
		runSuite(t, openTestEnv(t), mulMatSwarCases())
	})
}

// TestConformanceSwar runs the integer mat-vec cases (mulMatSwarCases) in a child process
// whose library takes the kernel for products of any size (GGML_WGPU_SWAR_MIN=1, read at
// load time), Q6_K single products too (GGML_WGPU_Q6K=0: the Q6_K mat-vec off).
func TestConformanceSwar(t *testing.T) {
	t.Setenv("GGML_WGPU_SWAR_MIN", "1") // inherited by the child process
	t.Setenv("GGML_WGPU_Q6K", "0")
	isolated(t, func(t *testing.T) {
		runSuite(t, openTestEnv(t), mulMatSwarCases())
	})
}
