package conformance

import (
	"strings"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// requireNormFed plans each of cs under quickLimits with set applied, and checks that
// every pipeline is the norm quantizing its result (XQ=1) or the integer mat-vec with
// define (its gate form, GLU=1, or MULTI=1), and that both are there; a case of mixed
// weight types (Types "a/b/c") has one pipeline more, its odd product's.
func requireNormFed(t *testing.T, cs []*Case, define string, set func(*ops.Limits)) {
	requirePlans(t, cs, limitsWith(set), []planKind{
		{kernel: "norm", define: "XQ=1", need: true},
		{kernel: "mul_mat_vec_q4", define: define, need: true},
	}, func(c *Case, k string) bool {
		return strings.Contains(c.Types, "/") && !strings.HasPrefix(k, "mul_mat_multi;") && !strings.HasPrefix(k, "mul_mat_vec_q4_act;")
	})
}

// TestNormGatePlans plans the GRAPH(add+norm+gate) cases with the integer mat-vec's size
// threshold at one weight, as TestConformanceNormGate runs them, and 32 KiB of workgroup
// memory (at 256 invocations a workgroup, the 4096-element rows take the norm's loop over
// quant words twice), and checks that each takes the fusion row add+norm+mul+gate: the
// norm's dispatch quantizing its result, the gate form reading it, and no dispatch that
// quantizes the columns.
func TestNormGatePlans(t *testing.T) {
	requireNormFed(t, normGateCases(), "GLU=1", func(l *ops.Limits) {
		l.SwarMin = 1
		l.MaxWorkgroupStorage = 32768 // a 4096-element row and its exchange
	})
}

// TestConformanceNormGate runs the GRAPH(add+norm+gate) cases on the fused row (the
// integer mat-vec's threshold at one weight, GGML_WGPU_SWAR_MIN=1), and again with their
// results placed by ggml-alloc (placedCases).
func TestConformanceNormGate(t *testing.T) {
	t.Setenv("GGML_WGPU_SWAR_MIN", "1") // inherited by the child process
	runPlaced(t, normGateCases)
}

// TestNormQKVPlans plans the GRAPH(add+norm+qkv) cases as TestNormGatePlans does (the
// size threshold at one weight, which the mixed formats' cases need) and checks that each
// takes the fusion row add+norm+mul+qkv: the norm's dispatch quantizing its result and
// one dispatch of the integer mat-vec's MULTI form (and the odd product's).
func TestNormQKVPlans(t *testing.T) {
	requireNormFed(t, normQKVCases(), "MULTI=1", func(l *ops.Limits) {
		l.SwarMin = 1
		l.QKVCols = 8 // the several-column cases: one column by default
		l.MaxWorkgroupStorage = 32768
	})
}

// TestConformanceNormQKV runs the GRAPH(add+norm+qkv) cases on the fused row (the size
// threshold at one weight, GGML_WGPU_SWAR_MIN=1), and again with their results placed by
// ggml-alloc (placedCases).
func TestConformanceNormQKV(t *testing.T) {
	t.Setenv("GGML_WGPU_SWAR_MIN", "1") // inherited by the child process
	t.Setenv("GGML_WGPU_QKV_COLS", "8") // the several-column cases: one column by default
	runPlaced(t, normQKVCases)
}

// TestNormQKVRopePlans plans the GRAPH(add+norm+qkv+rope+kv) cases under quickLimits with
// 32 KiB of workgroup memory (the 4096-element row) and checks that each takes the fusion
// row add+norm+mul+qkv+rope+set_rows: the norm's dispatch quantizing its result and the
// MULTI products rotating and storing (ROPE_KV=1), and no other dispatch.
func TestNormQKVRopePlans(t *testing.T) {
	requirePlans(t, normQKVRopeCases(), limitsWith(func(l *ops.Limits) { l.MaxWorkgroupStorage = 32768 }), []planKind{
		{kernel: "norm", define: "XQ=1", need: true},
		{kernel: "mul_mat_vec_q4", define: "ROPE_KV=1", need: true},
	}, nil)
}

// TestConformanceNormQKVRope runs the GRAPH(add+norm+qkv+rope+kv) cases, and again with
// their results placed by ggml-alloc (placedCases).
func TestConformanceNormQKVRope(t *testing.T) {
	runPlaced(t, normQKVRopeCases)
}

// TestMultiRopePlans plans the GRAPH(qkv+rope+kv) cases of the vectorised products under
// quickLimits and checks that each takes the fusion row
// mul_mat+view+mul_mat+view+mul_mat+rope+set_rows: the norm's dispatch and one of the
// vectorised products rotating and storing (ROPE_KV=1), and no other dispatch.
func TestMultiRopePlans(t *testing.T) {
	requirePlans(t, multiRopeCases(), quickLimits, []planKind{
		{kernel: "norm", need: true},
		{kernel: "mul_mat_multi", define: "ROPE_KV=1", need: true},
	}, nil)
}

// TestNormGateDownPlans plans the GRAPH(add+norm+gate+down) cases as TestNormGatePlans
// does and checks that each takes the fusion row add+norm+mul+gate+down: the norm's
// dispatch quantizing its result, the gate form quantizing the down product's column
// (TAIL), and no dispatch that quantizes columns of its own.
func TestNormGateDownPlans(t *testing.T) {
	requirePlans(t, normGateDownCases(), limitsWith(func(l *ops.Limits) {
		l.SwarMin = 1
		l.SwarRows = 2 // the Q4_0 and Q4_1 gate forms take one row a workgroup otherwise
		l.MaxWorkgroupStorage = 32768
	}), []planKind{
		{kernel: "norm", define: "XQ=1", need: true},
		{kernel: "mul_mat_vec_q4", define: "TAIL=1", need: true},
		{kernel: "mul_mat_vec_q4", define: "GLU=0", need: true}, // the down product on XQ
	}, nil)
}

// TestConformanceNormGateDown runs the GRAPH(add+norm+gate+down) cases on the fused row
// (the integer mat-vec's threshold at one weight, GGML_WGPU_SWAR_MIN=1, and two rows a
// workgroup, GGML_WGPU_SWAR_ROWS=2, which the row needs), and again with their results
// placed by ggml-alloc (placedCases).
func TestConformanceNormGateDown(t *testing.T) {
	t.Setenv("GGML_WGPU_SWAR_MIN", "1") // inherited by the child process
	t.Setenv("GGML_WGPU_SWAR_ROWS", "2")
	runPlaced(t, normGateDownCases)
}

// TestNormGateDownRefused checks that a gate form of one row a workgroup (Q4_0's by
// default) or of more than 4096 workgroups (an 8B's 14336 rows of Q4_K) leaves the down
// product to quantize its own column (ops' gateTailRows, gateTailMaxGroups), where two
// rows a workgroup of 8192 rows take the row; and that Limits.GateTailGroups and
// GateTailRows lift those bounds.
func TestNormGateDownRefused(t *testing.T) {
	env := openTestEnv(t)
	tailUnder := func(c *Case, rows, groups, least int) bool {
		keys, err := env.KernelsUnder(c, limitsWith(func(l *ops.Limits) {
			l.SwarMin, l.SwarRows, l.MaxWorkgroupStorage = 1, rows, 32768
			l.GateTailGroups, l.GateTailRows = groups, least
		}))
		require.NoError(t, err)
		return strings.Contains(strings.Join(keys, " "), ";TAIL=1;")
	}
	tail := func(c *Case, rows int) bool { return tailUnder(c, rows, 0, 0) }
	require.False(t, tail(normGateDownCase(tensor.Q4_0, 8192, 2048), 0), "one row a workgroup by default")
	require.True(t, tail(normGateDownCase(tensor.Q4_0, 8192, 2048), 2), "two rows a workgroup")
	require.False(t, tail(normGateDownCase(tensor.Q4_K, 14336, 256), 0), "7168 workgroups")
	require.True(t, tailUnder(normGateDownCase(tensor.Q4_K, 14336, 256), 0, 8192, 0), "7168 workgroups under a bound of 8192")
	require.False(t, tailUnder(normGateDownCase(tensor.Q4_0, 8192, 2048), 0, 0, 1), "8192 workgroups of one row: the bound of 4096 stays")
	require.True(t, tailUnder(normGateDownCase(tensor.Q4_0, 8192, 2048), 0, 8192, 1), "one row a workgroup admitted")
}
