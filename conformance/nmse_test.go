package conformance

import (
	"math"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNMSE(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())

	v, err := NMSE([]float32{1, 2, 3}, []float32{1, 2, 3})
	require.NoError(t, err)
	assert.Equal(t, 0.0, v)

	v, err = NMSE([]float32{1, 0}, []float32{1.1, 0})
	require.NoError(t, err)
	assert.InDelta(t, 0.01, v, 1e-7)

	_, err = NMSE([]float32{1, nan}, []float32{1, nan})
	assert.ErrorContains(t, err, "NaN")
	_, err = NMSE([]float32{1, 2}, []float32{1, nan})
	assert.ErrorContains(t, err, "NaN")

	v, err = NMSE([]float32{inf, 2}, []float32{inf, 2})
	require.NoError(t, err)
	assert.Equal(t, 0.0, v)
	_, err = NMSE([]float32{inf, 2}, []float32{-inf, 2})
	assert.ErrorContains(t, err, "sign")
	_, err = NMSE([]float32{inf, 2}, []float32{3, 2})
	assert.ErrorContains(t, err, "inf mismatch")
	_, err = NMSE([]float32{math.MaxFloat32}, []float32{inf})
	assert.NoError(t, err)

	v, err = NMSE([]float32{0, 0}, []float32{0, 0})
	require.NoError(t, err)
	assert.Equal(t, 0.0, v)
	v, err = NMSE([]float32{0, 0}, []float32{0, 1e-3})
	require.NoError(t, err)
	assert.True(t, math.IsInf(v, 1))

	_, err = NMSE([]float32{1}, []float32{1, 2})
	assert.Error(t, err)
}

func TestCaseNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Cases() {
		require.False(t, seen[c.Name], "duplicate case name %s", c.Name)
		seen[c.Name] = true
		require.NotNil(t, c.Build, c.Name)
		require.NotEmpty(t, c.Op, c.Name)
	}
}

func TestPermuteShape(t *testing.T) {
	// ggml_permute puts source axis i at position p[i].
	assert.Equal(t, [4]int64{5, 4, 10, 3}, permuteShape([4]int64{10, 5, 4, 3}, [4]int{1, 2, 0, 3}))
	assert.Equal(t, [4]int64{10, 4, 5, 3}, permuteShape([4]int64{10, 5, 4, 3}, [4]int{0, 2, 1, 3}))
}

// TestHarnessDetectsMismatch checks that the runner fails cases whose two builds disagree:
// Run builds the device-under-test side first, so the first Build call plays a faulty device.
func TestHarnessDetectsMismatch(t *testing.T) {
	cfg := testConfig(t)
	cfg.SelfTest = true
	env, err := Open(cfg)
	require.NoError(t, err)
	defer env.Close()

	calls := 0
	wrongScale := &Case{Name: "SCALE(wrong)", Op: "SCALE", Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			calls++
			s := float32(2)
			if calls == 1 {
				s = 2.002
			}
			return b.L.Scale(b.Ctx, b.New("a", f32, 33, 3), s)
		}}
	r := env.Runner.Run(wrongScale)
	assert.Equal(t, Failed, r.Status)
	assert.InDelta(t, 1e-6, r.NMSE, 1e-7)
	assert.Contains(t, r.Msg, "NMSE")

	calls = 0
	nanDiv := &Case{Name: "DIV(nan)", Op: "DIV", Types: "f32", MaxNMSE: DefaultMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			calls++
			x, y := b.New("a", f32, 7), b.New("b", f32, 7)
			if calls == 1 {
				b.Init(x, Uniform(0, 0))
				b.Init(y, Uniform(0, 0))
			}
			return b.L.Div(b.Ctx, x, y)
		}}
	r = env.Runner.Run(nanDiv)
	assert.Equal(t, Failed, r.Status)
	assert.Contains(t, r.Msg, "NaN")

	calls = 0
	viewCheck := &Case{Name: "CPY(check)", Op: "CPY", Types: "f32->f32", MaxNMSE: ExactMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			calls++
			d := b.New("d", f32, 16)
			if calls == 1 {
				b.Init(d, Uniform(5, 6)) // the part of d outside the view differs
			}
			b.Check(d)
			return b.L.Cpy(b.Ctx, b.New("a", f32, 8), b.L.View1D(b.Ctx, d, 8, 16))
		}}
	r = env.Runner.Run(viewCheck)
	assert.Equal(t, Failed, r.Status)
	assert.Equal(t, 8+16, r.N)

	s := Summarize([]Result{r, {Case: &Case{Name: "x", Op: "CPY", Types: "f32->f32", Optional: true}, Status: Unsupported}})
	assert.False(t, s.OK())
	assert.Len(t, s.Problems(), 1)
}
