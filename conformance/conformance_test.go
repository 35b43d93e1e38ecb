package conformance

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testConfig locates the repository root, the ggml libraries and build/libggml-wgpu.so.
func testConfig(t testing.TB) Config {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	root, err := FindRepoRoot(wd)
	require.NoError(t, err)
	cfg := DefaultConfig(root)
	if _, err := os.Stat(cfg.LibDir + "/libggml-base.so"); err != nil {
		t.Fatalf("ggml host libraries missing in %s: run scripts/setup.sh", cfg.LibDir)
	}
	return cfg
}

// openTestEnv opens the conformance environment on the built library, closed when the
// test ends.
func openTestEnv(t testing.TB) *Env {
	t.Helper()
	cfg := testConfig(t)
	if _, err := os.Stat(cfg.BackendPath); err != nil {
		t.Fatalf("%s not found: run scripts/build.sh first", cfg.BackendPath)
	}
	env, err := Open(cfg)
	require.NoError(t, err)
	t.Cleanup(env.Close)
	return env
}

// runSuite runs every case as a subtest and reports the table; it fails on any mismatch and
// on any required case that the device does not support.
func runSuite(t *testing.T, env *Env, cases []*Case) *Summary {
	t.Logf("device under test: %s (%s); %d cases", env.DeviceName, env.Description, len(cases))
	results := make([]Result, 0, len(cases))
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r := env.Runner.Run(c)
			results = append(results, r)
			switch r.Status {
			case Passed:
				t.Logf("NMSE %.3e (max %.0e, %d values)", r.NMSE, c.MaxNMSE, r.N)
			case Unsupported:
				if c.Optional {
					t.Skipf("unsupported (optional case): %s", r.Msg)
				}
				t.Errorf("unsupported required case: %s", r.Msg)
			default:
				t.Errorf("%s", r.Msg)
			}
		})
	}
	s := Summarize(results)
	t.Logf("\n%s", s.Table())
	if p := s.Problems(); len(p) > 0 {
		t.Errorf("%d problems:\n%s", len(p), strings.Join(p, "\n"))
	}
	return s
}

// TestConformance runs the suite on libggml-wgpu's device WGPU0 against the ggml CPU backend.
func TestConformance(t *testing.T) {
	runSuite(t, openTestEnv(t), Filter(Cases(), os.Getenv("GGML_WGPU_CONFORMANCE_FILTER")))
}

// specializedFilter selects the quick selection's cases that a decode step's graph holds:
// its products of one column, attention, norms, ropes, softmax, GLU, the cache stores and
// the fused graphs.
const specializedFilter = "n=1,|FLASH_ATTN_EXT|RMS_NORM|ROPE|GRAPH|SET_ROWS|SOFT_MAX|GLU|KV_STORE|SSM_|GATED_DELTA_NET|RWKV_WKV|GATED_LINEAR_ATTN"

// TestConformanceSpecialized runs the decode kernels of the quick selection
// (specializedFilter) in a child process whose library gives every dispatch a pipeline
// with its parameters built in (GGML_WGPU_SPECIALIZE=all, backend/specialize.go): every
// kernel must compile and compute that way too, as it does on a GPU's decode graphs.
func TestConformanceSpecialized(t *testing.T) {
	if !isChild(t) {
		out, err := runChild(t, t.Name(), "GGML_WGPU_SPECIALIZE=all")
		t.Logf("child process output:\n%s", indent(clip(out, 40)))
		require.NoError(t, err, "%s", crashSummary(out))
		require.Contains(t, out, "--- PASS: "+t.Name())
		return
	}
	require.Equal(t, "all", os.Getenv("GGML_WGPU_SPECIALIZE"))
	env := openTestEnv(t)
	cases, err := env.QuickCases(Filter(Filter(Cases(), specializedFilter), os.Getenv("GGML_WGPU_CONFORMANCE_FILTER")))
	require.NoError(t, err)
	require.Greater(t, len(cases), 300, "the decode kernels")
	runSuite(t, env, cases)
}

// TestHarnessSelf runs the suite with a second CPU backend as the device under test: it
// validates the harness (every case must build, run and agree exactly) without the library.
func TestHarnessSelf(t *testing.T) {
	cfg := testConfig(t)
	cfg.SelfTest = true
	env, err := Open(cfg)
	require.NoError(t, err)
	defer env.Close()
	s := runSuite(t, env, Cases())
	// The CPU against itself must be exact (same code, same inputs).
	for _, r := range s.Results {
		if r.Status == Passed && r.NMSE != 0 {
			t.Errorf("%s: CPU against CPU gives NMSE %g, want 0", r.Case.Name, r.NMSE)
		}
	}
}

// TestConformanceInputsApart runs the quick selection (every kernel pipeline of the suite)
// with each case's inputs in a buffer of their own, as a model's weights are, so that the
// library binds the operands its kernels only read there read-only (var<storage, read>):
// every kernel must compile and compute that way too.
func TestConformanceInputsApart(t *testing.T) {
	env := openTestEnv(t)
	cases, err := env.QuickCases(Filter(Cases(), os.Getenv("GGML_WGPU_CONFORMANCE_FILTER")))
	require.NoError(t, err)
	env.Runner.InputsApart = true
	runSuite(t, env, cases)
}
