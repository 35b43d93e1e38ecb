package wgsl

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// iq_tables.go is what the generator reads back from the pinned ggml (scripts/setup.sh
// fetches it): regenerate with `go generate ./wgsl` when ggml changes.
func TestIQTablesAreGenerated(t *testing.T) {
	lib := filepath.Join("..", ".cache", "ggml", "lib")
	if _, err := os.Stat(filepath.Join(lib, "libggml-base.so")); err != nil {
		t.Fatalf("no ggml libraries in %s: run scripts/setup.sh", lib)
	}
	out := filepath.Join(t.TempDir(), "iq_tables.go")
	b, err := exec.Command("go", "run", "./internal/gengrids", "-lib", lib, "-out", out).CombinedOutput()
	require.NoError(t, err, "%s", b)
	want, err := os.ReadFile(out)
	require.NoError(t, err)
	got, err := os.ReadFile("iq_tables.go")
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "wgsl/iq_tables.go is stale: run go generate ./wgsl")
}

// A module gets each table line once, and formats_init fills exactly its workgroup tables.
func TestFormatTablesInModules(t *testing.T) {
	spec := func(ops ...Operand) *Spec {
		return &Spec{Kernel: "get_rows", Defines: map[string]string{"QUANT": "1"}, Workgroup: 64, Operands: ops}
	}
	src, err := Source(spec(Operand{Name: "src0", Type: IQ1_S, Vec: true}, Operand{Name: "up", Type: IQ1_M, Vec: true},
		Operand{Name: "src1", Type: I32}, Operand{Name: "dst", Type: F32, Written: true}))
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(src, "var<workgroup> iq1s_grid:"), "IQ1_S and IQ1_M share one table")
	require.Equal(t, 1, strings.Count(src, "fn iq1_values8("))
	require.Contains(t, src, "if (lid == 0u) { iq1s_grid_init(); }\n  workgroupBarrier();")

	src, err = Source(spec(Operand{Name: "src0", Type: IQ4_XS, Vec: true}, Operand{Name: "src1", Type: I32}, Operand{Name: "dst", Type: F32, Written: true}))
	require.NoError(t, err)
	require.Contains(t, src, "if (lid == 0u) { iq4_levels_init(); }", "IQ4 levels are a workgroup table")
	require.Contains(t, src, "var<workgroup> iq4_levels: array<u32, 16>;", "of words, read with one index (a vector component at a run-time index is slow on NVIDIA)")
	require.Contains(t, src, "return bitcast<f32>(iq4_levels[q]);")
	require.Equal(t, 1, strings.Count(src, "var<workgroup> iq"))

	src, err = Source(spec(Operand{Name: "src0", Type: Q4_0, Vec: true}, Operand{Name: "src1", Type: I32}, Operand{Name: "dst", Type: F32, Written: true}))
	require.NoError(t, err)
	require.Contains(t, src, "fn formats_init(lid: u32) {}")
	require.NotContains(t, src, "iq")

	_, err = Source(&Spec{Kernel: "norm", Workgroup: 64,
		Operands: []Operand{{Name: "src0", Type: IQ2_S, Vec: true}, {Name: "src1", Type: F32}, {Name: "dst", Type: F32, Written: true}}})
	require.Error(t, err, "a kernel that never fills the tables is refused")
}
