package wgsl

import (
	"fmt"
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
	require.NotContains(t, src, "iq4_ints", "only the integer mat-vec's LEVELS form takes the levels as integers")

	// the integer mat-vec's LEVELS form: the levels as integers too (levelTables)
	levels := spec(Operand{Name: "src0", Type: IQ4_NL, Vec: true}, Operand{Name: "src1", Type: I32}, Operand{Name: "dst", Type: F32, Written: true})
	levels.Defines["LEVELS"] = "1"
	src, err = Source(levels)
	require.NoError(t, err)
	require.Contains(t, src, "if (lid == 0u) { iq4_levels_init(); iq4_ints_init(); }")
	require.Contains(t, src, "fn iq4_int(q: u32) -> i32 { return bitcast<i32>(iq4_ints[q]); }")

	src, err = Source(spec(Operand{Name: "src0", Type: Q4_0, Vec: true}, Operand{Name: "src1", Type: I32}, Operand{Name: "dst", Type: F32, Written: true}))
	require.NoError(t, err)
	require.Contains(t, src, "fn formats_init(lid: u32) {}")
	require.NotContains(t, src, "iq")

	_, err = Source(&Spec{Kernel: "norm", Workgroup: 64,
		Operands: []Operand{{Name: "src0", Type: IQ2_S, Vec: true}, {Name: "src1", Type: F32}, {Name: "dst", Type: F32, Written: true}}})
	require.Error(t, err, "a kernel that never fills the tables is refused")
}

// Every grid declared as vec4<u32> entries is in TableWords, read back whole from its
// literals, so that a spec with Tables copies every table its formats read.
func TestTableWordsHoldEveryGrid(t *testing.T) {
	want := 0
	seen := map[string]bool{}
	for _, tables := range formatTables {
		for _, line := range strings.Split(tables, "\n") {
			decl, ok := strings.CutPrefix(line, "var<workgroup> ")
			if !ok || !strings.Contains(decl, "array<vec4<u32>,") {
				continue
			}
			name := decl[:strings.IndexByte(decl, ':')]
			if seen[name] {
				continue
			}
			seen[name] = true
			at, ok := tableAt[name]
			require.True(t, ok, "table %s not gathered", name)
			require.Equal(t, arrayBytes(decl)/16, at.n, name)
			want += at.n
		}
	}
	require.Equal(t, 6, len(seen), "the IQ2, IQ3 and IQ1 grids")
	words := TableWords()
	require.Len(t, words, 4*want)
	// IQ2_XXS's first entry, as ggml's grid has it (iq2xxs_grid[0] = 0x0808080808080808).
	require.Equal(t, []uint32{0x08080808, 0x08080808}, words[4*tableAt["iq2xxs_grid"].at:][:2])
}

// With Tables, formats_init copies the bound tables with the whole workgroup and stores
// only the others (IQ4's levels) from literals; without it, invocation 0 stores them all.
func TestTablesBinding(t *testing.T) {
	spec := &Spec{Kernel: "get_rows", Defines: map[string]string{"QUANT": "1"}, Workgroup: 64,
		Operands: []Operand{{Name: "src0", Type: IQ2_S, Vec: true}, {Name: "up", Type: IQ4_XS, Vec: true},
			{Name: "src1", Type: I32}, {Name: "dst", Type: F32, Written: true}}}
	require.True(t, HasTables(spec))
	plain, err := Source(spec)
	require.NoError(t, err)
	require.True(t, strings.Contains(plain, "if (lid == 0u) { iq2s_grid_init(); iq4_levels_init(); }"))
	require.False(t, strings.Contains(plain, "> tables:"))
	require.Equal(t, 4, spec.Bindings())

	bound := *spec
	bound.Tables = true
	src, err := Source(&bound)
	require.NoError(t, err)
	at := tableAt["iq2s_grid"]
	require.True(t, strings.Contains(src, "@group(0) @binding(5) var<storage, read> tables: array<vec4<u32>>;"))
	require.True(t, strings.Contains(src, fmt.Sprintf("for (var i = lid; i < %du; i = i + 64u) { iq2s_grid[i] = tables[%du + i]; }", at.n, at.at)))
	require.True(t, strings.Contains(src, "if (lid == 0u) { iq4_levels_init(); }"))
	require.False(t, strings.Contains(src, "iq2s_grid_init();"))
	require.Equal(t, 5, bound.Bindings())
	require.Equal(t, uint32(1<<4), bound.ReadOnly(), "the tables are read-only")
	require.NotEqual(t, spec.Key(), bound.Key())

	q4 := &Spec{Kernel: "get_rows", Defines: map[string]string{"QUANT": "1"}, Workgroup: 64,
		Operands: []Operand{{Name: "src0", Type: IQ4_XS, Vec: true}, {Name: "src1", Type: I32}, {Name: "dst", Type: F32, Written: true}}}
	require.False(t, HasTables(q4), "IQ4's levels are stored from literals")
	q4.Tables = true
	_, err = Source(q4)
	require.Error(t, err, "a spec binding tables its formats do not have")
}
