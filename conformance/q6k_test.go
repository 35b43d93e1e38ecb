package conformance

import (
	"strings"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// q6kCases are the Q6_K products of one column of mulMatSwarQ6Cases: rows of 1, 8, 16 and
// 49 blocks (rows at either alignment, and loop turns that the row ends part way),
// broadcast batches, activations over six orders of magnitude with a zero block, weights
// and activations at their extremes, and 8192 rows; products of 2 to 8 columns (rows of
// 1 to 49 blocks, broadcast batches, permuted columns, 4096 rows and more:
// mul_mat_vec_q6k_cols.wgsl); and llama's
// feed-forward gate in Q6_K (the kernel's gate form) in two sizes of one column and one of
// two, which TestConformanceQ6K's shapes also run at 2 and 4 rows a workgroup.
func q6kCases() []*Case {
	var cs []*Case
	for _, c := range mulMatSwarQ6Cases() {
		if c.Op == "MUL_MAT" {
			cs = append(cs, c)
		}
	}
	one := [2]int64{1, 1}
	for _, k := range []int64{256, 512, 2048, 12544} {
		cs = append(cs, mulMatCase(mmSpec{ta: tensor.Q6_K, m: 13, n: 2, k: k, bs: one, nr: one}))
	}
	cs = append(cs, mulMatCase(mmSpec{ta: tensor.Q6_K, m: 9, n: 2, k: 1024, bs: [2]int64{2, 3}, nr: [2]int64{2, 1}}))
	for _, n := range []int64{3, 4, 8} {
		cs = append(cs, mulMatCase(mmSpec{ta: tensor.Q6_K, m: 13, n: n, k: 512 * n, bs: one, nr: one}))
	}
	// three and four columns of long rows (a down projection by several sequences)
	cs = append(cs, mulMatCase(mmSpec{ta: tensor.Q6_K, m: 13, n: 4, k: 8192, bs: one, nr: one}),
		mulMatCase(mmSpec{ta: tensor.Q6_K, m: 6, n: 3, k: 12544, bs: [2]int64{2, 1}, nr: one}))
	cs = append(cs, mulMatCase(mmSpec{ta: tensor.Q6_K, m: 7, n: 5, k: 12544, bs: one, nr: one}),
		mulMatCase(mmSpec{ta: tensor.Q6_K, m: 9, n: 4, k: 1024, bs: [2]int64{2, 3}, nr: [2]int64{2, 1}}),
		mulMatCase(mmSpec{ta: tensor.Q6_K, m: 11, n: 3, k: 512, bs: [2]int64{4, 1}, nr: one, perB: true}))
	// products of 4096 rows and more by four and eight columns, the last workgroup's rows
	// part way
	cs = append(cs, mulMatCase(mmSpec{ta: tensor.Q6_K, m: 4096, n: 4, k: 512, bs: one, nr: one}),
		mulMatCase(mmSpec{ta: tensor.Q6_K, m: 4102, n: 8, k: 256, bs: one, nr: one}))
	return append(cs, swarGLUCase(tensor.Q6_K, 12, 2048, 1), swarGLUCase(tensor.Q6_K, 4099, 512, 1), swarGLUCase(tensor.Q6_K, 12, 2048, 2))
}

// TestQ6KPlans checks that every case of q6kCases takes the Q6_K mat-vec, one dispatch
// (its one-column or its several-column kernel).
func TestQ6KPlans(t *testing.T) {
	env := openTestEnv(t)
	cs := q6kCases()
	require.GreaterOrEqual(t, len(cs), 7)
	for _, c := range cs {
		keys, err := env.Kernels(c)
		require.NoError(t, err, c.Name)
		require.Len(t, keys, 1, "%s: %v", c.Name, keys)
		require.True(t, strings.HasPrefix(keys[0], "mul_mat_vec_q6k;") || strings.HasPrefix(keys[0], "mul_mat_vec_q6k_cols;"), "%s: %v", c.Name, keys)
	}
}

// TestConformanceQ6K runs q6kCases against the CPU backend with the Q6_K mat-vec's
// default shapes and, in child processes, with blocks a pair at a time for products of
// any size (GGML_WGPU_Q6K_PAIRS_MIN=1: the rows of an even count of blocks take them; the
// defaults take them from 2^24 weights only), alone and with 4 rows of 128 invocations and
// 2 rows of 256 (GGML_WGPU_Q6K_ROWS, GGML_WGPU_Q6K_WG: more blocks a loop turn than short
// rows hold, rows that do not fill a workgroup's); and with the several-column kernel
// holding every column's activations first (GGML_WGPU_Q6K_HOLD=0) or 1, 3 (columns left
// over after the last group) and 8 of them at a time, the gate form too.
func TestConformanceQ6K(t *testing.T) {
	for _, shape := range [][4]string{{"", "", "", ""}, {"", "", "1", ""}, {"4", "128", "1", ""}, {"2", "256", "1", ""},
		{"", "", "", "0"}, {"", "", "1", "1"}, {"", "", "", "3"}, {"", "", "1", "8"}} {
		t.Run("rows="+shape[0]+",wg="+shape[1]+",pairs_min="+shape[2]+",hold="+shape[3], func(t *testing.T) {
			t.Setenv("GGML_WGPU_Q6K_ROWS", shape[0])
			t.Setenv("GGML_WGPU_Q6K_WG", shape[1])
			t.Setenv("GGML_WGPU_Q6K_PAIRS_MIN", shape[2])
			t.Setenv("GGML_WGPU_Q6K_HOLD", shape[3])
			isolated(t, func(t *testing.T) {
				runSuite(t, openTestEnv(t), q6kCases())
			})
		})
	}
}

// TestConformanceQ6KHeads runs q6kCases in a child process whose library gives every
// Q6_K product of one column the output heads' form (GGML_WGPU_Q6K_XQ_ROWS=1 with
// GGML_WGPU_SWAR_MIN=1: the integer mat-vec's Q6K form on XQ, four rows a workgroup),
// checking that those products take it.
func TestConformanceQ6KHeads(t *testing.T) {
	env := openTestEnv(t)
	cs := q6kCases()
	// the library's limits under those variables, as the planner sees them
	limits := limitsWith(func(l *ops.Limits) { l.Q6KXQMinRows, l.SwarMin = 1, 1 })
	heads := 0
	for _, c := range cs {
		if c.Op != "MUL_MAT" || !strings.Contains(c.Name, ",n=1,") {
			continue
		}
		keys, err := env.KernelsUnder(c, limits)
		require.NoError(t, err, c.Name)
		require.Len(t, keys, 2, "%s: %v", c.Name, keys)
		require.True(t, strings.HasPrefix(keys[0], "mul_mat_vec_q4;") && strings.HasPrefix(keys[1], "mul_mat_vec_q4_act;"), "%s: %v", c.Name, keys)
		require.Contains(t, keys[0], ";Q6K=1;", c.Name)
		require.Contains(t, keys[0], ";ROWS=4;", c.Name)
		heads++
	}
	require.GreaterOrEqual(t, heads, 5)
	t.Setenv("GGML_WGPU_Q6K_XQ_ROWS", "1") // inherited by the child process
	t.Setenv("GGML_WGPU_SWAR_MIN", "1")
	isolated(t, func(t *testing.T) {
		runSuite(t, openTestEnv(t), cs)
	})
}

// TestConformanceQ6KSwarCols runs the several-column products of q6kCases on the integer
// mat-vec's Q6K form, each row's weights put in lanes once for every column, as products
// of 3 to 8 columns and 2^24 weights take it by default (here 2 to 8 columns of every
// size: GGML_WGPU_Q6K_SWAR_MIN_COLS=2, GGML_WGPU_SWAR_MIN=1), and checks that each takes
// it.
func TestConformanceQ6KSwarCols(t *testing.T) {
	env := openTestEnv(t)
	var cs []*Case
	for _, c := range q6kCases() {
		if c.Op == "MUL_MAT" && !strings.Contains(c.Name, ",n=1,") {
			cs = append(cs, c)
		}
	}
	limits := limitsWith(func(l *ops.Limits) { l.Q6KSwarMinCols, l.SwarMin = 2, 1 })
	for _, c := range cs {
		keys, err := env.KernelsUnder(c, limits)
		require.NoError(t, err, c.Name)
		require.Len(t, keys, 2, "%s: %v", c.Name, keys)
		require.True(t, strings.HasPrefix(keys[0], "mul_mat_vec_q4;") && strings.HasPrefix(keys[1], "mul_mat_vec_q4_act;"), "%s: %v", c.Name, keys)
		require.Contains(t, keys[0], ";COLS=1;", c.Name)
	}
	require.GreaterOrEqual(t, len(cs), 12)
	t.Setenv("GGML_WGPU_Q6K_SWAR_MIN_COLS", "2") // inherited by the child process
	t.Setenv("GGML_WGPU_SWAR_MIN", "1")
	isolated(t, func(t *testing.T) {
		runSuite(t, openTestEnv(t), cs)
	})
}
