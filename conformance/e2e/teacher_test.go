package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// teacherAllEnv, set to "all", runs TestTeacherForced over the whole cross product of
// weight formats, head sizes, flash attention and cache types (about fifteen minutes on
// lavapipe) instead of the table's few combinations.
const teacherAllEnv = "GGML_WGPU_E2E_TEACHER"

// Thresholds of a teacher-forced comparison: the NMSE of every step's logits, and the CPU's
// top-2 logit margin above which the greedy tokens must be the same.
const (
	teacherMaxNMSE   = 2e-3
	teacherMinMargin = 1e-2
	teacherSteps     = 64
)

// teacherCase is one teacher-forced comparison: a model (weight format, head size) and how
// llama runs it.
type teacherCase struct {
	typ   string // mkmodel's --type
	head  int    // head size: embd 256 with 256/head heads, half as many KV heads
	fa    string // flash attention: on or off
	kv    string // cache type: f16, or q8_0 (K and V with flash attention, K alone without)
	seqs  int    // sequences decoded together (0: one)
	shift int    // positions kept per sequence before a context shift (0: none)
	swar  bool   // every product the integer mat-vec reads on it, Q, K and V of several tokens too
}

func (c teacherCase) name() string {
	n := fmt.Sprintf("%s/head%d/fa-%s/kv-%s", c.typ, c.head, c.fa, c.kv)
	if c.seqs > 1 {
		n += fmt.Sprintf("/seqs%d", c.seqs)
	}
	if c.shift > 0 {
		n += fmt.Sprintf("/shift%d", c.shift)
	}
	if c.swar {
		n += "/swar"
	}
	return n
}

// args returns generate's arguments for the case's context.
func (c teacherCase) args() []string {
	a := []string{"--fa", c.fa}
	switch {
	case c.kv == "q8_0" && c.fa == "on":
		a = append(a, "--kv-type", "q8_0")
	case c.kv == "q8_0":
		a = append(a, "--type-k", "q8_0") // a quantized V cache needs flash attention
	}
	if c.seqs > 1 {
		a = append(a, "--seqs", strconv.Itoa(c.seqs))
	}
	if c.shift > 0 {
		a = append(a, "--shift", strconv.Itoa(c.shift))
	}
	return a
}

// teacherCases returns the table, or under GGML_WGPU_E2E_TEACHER=all the cross product.
func teacherCases() []teacherCase {
	if os.Getenv(teacherAllEnv) == "all" {
		var cs []teacherCase
		for _, typ := range []string{"f16", "q8_0", "q4_0", "q4_k_m", "iq4_xs"} {
			for _, head := range []int{64, 128} {
				for _, fa := range []string{"on", "off"} {
					for _, kv := range []string{"f16", "q8_0"} {
						cs = append(cs, teacherCase{typ: typ, head: head, fa: fa, kv: kv})
					}
					cs = append(cs, teacherCase{typ: typ, head: head, fa: fa, kv: "q8_0", shift: 32},
						teacherCase{typ: typ, head: head, fa: fa, kv: "f16", seqs: 3})
				}
			}
		}
		return cs
	}
	return []teacherCase{
		{typ: "f16", head: 64, fa: "off", kv: "f16"},
		{typ: "q8_0", head: 128, fa: "on", kv: "q8_0"},
		{typ: "q4_0", head: 64, fa: "on", kv: "f16"},
		{typ: "f16", head: 128, fa: "on", kv: "f16"},
		{typ: "q4_k_m", head: 128, fa: "off", kv: "q8_0"},
		{typ: "iq4_xs", head: 64, fa: "on", kv: "q8_0"},
		{typ: "f16", head: 128, fa: "on", kv: "q8_0", shift: 32},
		{typ: "q4_0", head: 64, fa: "off", kv: "f16", shift: 32},
		{typ: "q8_0", head: 64, fa: "on", kv: "f16", seqs: 3},
		{typ: "f16", head: 128, fa: "off", kv: "q8_0", seqs: 2},
	}
}

// TestTeacherForced writes small llama models (embd 256, 2 layers, grouped-query attention
// with two query heads per KV head, the built-in vocabulary; conformance/host/mkmodel) and
// feeds each the same 64 tokens on the CPU backend and on WGPU0, the prompt in one batch and
// the rest one token at a time (generate --teacher), with context shifts (the KV cache
// rotated in place by ROPE) and several sequences in one batch in some cases. Every step's
// logits must be within NMSE 2e-3 of the CPU's on the same model, and the greedy token the
// same as the CPU's on the same weights in F32 (mkmodel --dequantize) wherever that
// reference's top-2 margin exceeds 1e-2. The CPU rounds the activations of a quantized
// matrix product to 8 bits (Q8_0, Q8_K), which moves its logits of a 4-bit model by about
// NMSE 3e-4 (0.02 at most on logits of magnitude 1): enough to swap two tokens a hundredth
// apart, so its greedy tokens on the quantized model are no reference at that margin.
func TestTeacherForced(t *testing.T) {
	teacherRun(t, teacherCases(), nil)
}

// TestTeacherForcedSpecialized runs teacher-forced cases with decode graphs taking
// pipelines with their parameters built in on any adapter (GGML_WGPU_SPECIALIZE=decode:
// a GPU's default, which lavapipe's leaves off): every step's logits as TestTeacherForced
// requires them, and the profile counting the specialized pipelines compiled.
func TestTeacherForcedSpecialized(t *testing.T) {
	t.Setenv("GGML_WGPU_SPECIALIZE", "decode")
	t.Setenv("GGML_WGPU_PROFILE", "1")
	cases := []teacherCase{
		{typ: "q4_k_m", head: 128, fa: "off", kv: "q8_0"},
		{typ: "iq4_xs", head: 64, fa: "on", kv: "q8_0"},
		{typ: "f16", head: 128, fa: "on", kv: "q8_0", shift: 32},
		{typ: "q8_0", head: 64, fa: "on", kv: "f16", seqs: 3},
		{typ: "q4_k_m", head: 64, fa: "on", kv: "f16", seqs: 4, swar: true},
		{typ: "f16", head: 64, fa: "on", kv: "f16"},
	}
	teacherRun(t, cases, func(t *testing.T, c teacherCase, r teacherResult) {
		m := regexp.MustCompile(`WGPU0 profile: .*pipelines \d+ \((\d+) specialized\)`).FindStringSubmatch(r.log)
		require.NotNil(t, m, "the profile reports the specialized pipelines")
		n, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		require.Positive(t, n, "decode graphs specialized")
		if c.seqs > 1 && c.fa == "on" && c.kv == "f16" {
			// llama keeps each sequence's cells in a stream of its own and stores into a
			// reshape of the cache: the ropes and both stores in one dispatch all the same
			require.Contains(t, r.log, "rope+rope+set_rows+set_rows (streams)", "the fusion row of several streams")
		}
		if c.typ == "f16" && c.fa == "on" && c.kv == "f16" && c.seqs <= 1 {
			// one token's Q, V and K on the vectorised mat-vec with the ROPEs and the
			// stores in its dispatch, ROPE Q left in llama's order
			require.Regexp(t, `mul_mat\+view\+rope\+mul_mat\+view\+mul_mat\+view\+rope\+set_rows \d`, r.log,
				"the fusion row of the vectorised products with the ROPEs and the stores")
		}
		if c.swar && c.seqs > 1 {
			// Q, K and V of several tokens on the integer mat-vec's columns quantized by the
			// norm (ROPE Q moved next to ROPE K, out of their way)
			require.Regexp(t, `add\+norm\+mul\+qkv \d`, r.log, "the fusion row add+norm+mul+qkv")
		}
	})
}

// teacherRun writes the models of cases and compares each case (compareTeacher), then
// calls check, where given, with its result.
func teacherRun(t *testing.T, cases []teacherCase, check func(t *testing.T, c teacherCase, r teacherResult)) {
	root := repoRoot(t)
	exe, libDir := buildGenerate(t, root)
	mk, _ := buildHost(t, root, "mkmodel")
	dir := t.TempDir()
	made := map[string]bool{} // models written, by format and head size
	for _, c := range cases {
		t.Run(c.name(), func(t *testing.T) {
			if c.swar {
				t.Setenv("GGML_WGPU_SWAR_MIN", "1")
				t.Setenv("GGML_WGPU_QKV_COLS", "8")
			}
			key := fmt.Sprintf("%s-h%d", c.typ, c.head)
			model, ref := filepath.Join(dir, key+".gguf"), filepath.Join(dir, key+"-f32.gguf")
			if !made[key] {
				heads := 256 / c.head
				for i, path := range []string{model, ref} {
					run(t, root, mk, "-o", path, "--type", c.typ, "--embd", "256", "--layers", "2", "--heads", strconv.Itoa(heads),
						"--kv-heads", strconv.Itoa(heads/2), "--ff", "512", "--ctx", "256", "--dequantize", strconv.Itoa(i))
				}
				made[key] = true
			}
			r := compareTeacher(t, root, exe, libDir, model, ref, c.args()...)
			if c.shift > 0 {
				require.Contains(t, r.log, "generate: context shift at step", "no context shift happened")
				require.Contains(t, r.log, "applying K-shift", "llama did not rotate the cache")
			}
			if c.kv == "q8_0" {
				require.Regexp(t, `K \(q8_0\)`, r.log, "the K cache must be Q8_0")
			}
			t.Logf("%s: %d steps x %d sequences, NMSE max %.3g (step %d of sequence %d), mean %.3g; against the F32 reference max %.3g; greedy tokens equal on %d/%d steps with margin > %g (the CPU on the quantized model differs from the reference on %d)",
				c.name(), teacherSteps, r.seqs, r.maxNMSE, r.worstStep, r.worstSeq, r.meanNMSE, r.maxRefNMSE, r.checked, r.steps, teacherMinMargin, r.cpuFlips)
			if check != nil {
				check(t, c, r)
			}
		})
	}
}

// teacherStep is one line of generate --teacher: the logits after feeding token at step of
// sequence seq.
type teacherStep struct {
	seq, step, token int
	logits           []float64
}

// parseTeacher reads generate --teacher's output, keyed by sequence and step.
func parseTeacher(t *testing.T, out string) map[[2]int]teacherStep {
	t.Helper()
	steps := map[[2]int]teacherStep{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		require.Greater(t, len(f), 4, "short line %q", line)
		var head [3]int
		for i := range head {
			v, err := strconv.Atoi(f[i])
			require.NoError(t, err)
			head[i] = v
		}
		s := teacherStep{seq: head[0], step: head[1], token: head[2], logits: make([]float64, len(f)-3)}
		for i, x := range f[3:] {
			v, err := strconv.ParseFloat(x, 64)
			require.NoError(t, err)
			s.logits[i] = v
		}
		k := [2]int{s.seq, s.step}
		_, dup := steps[k]
		require.False(t, dup, "sequence %d step %d printed twice", s.seq, s.step)
		steps[k] = s
	}
	return steps
}

// teacherResult summarizes a teacher-forced comparison.
type teacherResult struct {
	seqs, steps, checked int // sequences; steps over all sequences; steps whose greedy token was compared
	cpuFlips             int // steps checked where the CPU's greedy token on the quantized model differs
	maxNMSE, meanNMSE    float64
	maxRefNMSE           float64 // against the F32 reference
	worstSeq, worstStep  int
	log                  string // WGPU0's log
}

// compareTeacher runs generate --teacher 64 on model on the CPU backend and on WGPU0, and on
// ref (the same weights in F32) on the CPU backend (one CPU thread each: the CPU's own
// threads would spin against the other's on a small machine), and requires, per sequence
// and step, the same token fed, finite logits within NMSE 2e-3 of the CPU's on model, and
// the same greedy token as on ref where ref's top-2 margin exceeds 1e-2.
func compareTeacher(t *testing.T, root, exe, libDir, model, ref string, extra ...string) teacherResult {
	t.Helper()
	prompt := "The quick brown fox jumps over the lazy dog because"
	args := append([]string{"-L", libDir, "-m", model, "-p", prompt, "-t", "1", "--teacher", strconv.Itoa(teacherSteps)}, extra...)
	cpuOut, _ := run(t, root, exe, append(args, "-d", "CPU")...)
	refArgs := append([]string{}, args...)
	refArgs[3] = ref
	refOut, _ := run(t, root, exe, append(refArgs, "-d", "CPU")...)
	gpuOut, gpuLog := run(t, root, exe, append(args, "-d", "WGPU0")...)
	require.Contains(t, gpuLog, "offloaded 3/3 layers to GPU", "the model's layers must run on WGPU0")
	require.Regexp(t, `WGPU0 (KV|RS) buffer`, gpuLog, "the KV cache (or a recurrent model's states) must be on WGPU0")
	cpu, gpu, refs := parseTeacher(t, cpuOut), parseTeacher(t, gpuOut), parseTeacher(t, refOut)
	require.Equal(t, len(cpu), len(gpu), "steps printed")
	require.Equal(t, len(cpu), len(refs), "steps printed")

	r := teacherResult{log: gpuLog, maxNMSE: -1}
	seqs := map[int]bool{}
	for k, c := range cpu {
		g, ok := gpu[k]
		require.True(t, ok, "WGPU0 printed no sequence %d step %d", k[0], k[1])
		f, ok := refs[k]
		require.True(t, ok, "the reference printed no sequence %d step %d", k[0], k[1])
		require.Equal(t, c.token, g.token, "token fed at sequence %d step %d", k[0], k[1])
		require.Len(t, g.logits, len(c.logits))
		seqs[k[0]] = true
		var num, den float64
		for i := range c.logits {
			require.False(t, math.IsNaN(g.logits[i]) || math.IsInf(g.logits[i], 0),
				"sequence %d step %d logit %d is %v", k[0], k[1], i, g.logits[i])
			d := c.logits[i] - g.logits[i]
			num += d * d
			den += c.logits[i] * c.logits[i]
		}
		require.Greater(t, den, 0.0, "sequence %d step %d: the CPU's logits are all zero", k[0], k[1])
		nmse := num / den
		r.maxRefNMSE = max(r.maxRefNMSE, nmseOf(g.logits, f.logits))
		require.LessOrEqual(t, nmse, teacherMaxNMSE, "logits NMSE at sequence %d step %d", k[0], k[1])
		r.meanNMSE += nmse
		if nmse > r.maxNMSE {
			r.maxNMSE, r.worstSeq, r.worstStep = nmse, k[0], k[1]
		}
		r.steps++
		best, second := top2(f.logits)
		if f.logits[best]-f.logits[second] > teacherMinMargin {
			require.Equal(t, best, argmax(g.logits), "greedy token at sequence %d step %d (reference margin %.3g)",
				k[0], k[1], f.logits[best]-f.logits[second])
			r.checked++
			if argmax(c.logits) != best {
				r.cpuFlips++
			}
		}
	}
	r.seqs = len(seqs)
	require.Equal(t, teacherSteps*r.seqs, r.steps, "every sequence must print every step")
	r.meanNMSE /= float64(r.steps)
	require.GreaterOrEqual(t, 2*r.checked, r.steps, "the greedy tokens were compared on too few steps (CPU margins too small)")
	return r
}

// nmseOf is the NMSE of got against want.
func nmseOf(got, want []float64) float64 {
	var num, den float64
	for i := range want {
		d := got[i] - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	return num / den
}

// top2 returns the indices of the largest and the second largest values of v.
func top2(v []float64) (best, second int) {
	best, second = 0, 1
	if v[1] > v[0] {
		best, second = 1, 0
	}
	for i := 2; i < len(v); i++ {
		switch {
		case v[i] > v[best]:
			best, second = i, best
		case v[i] > v[second]:
			second = i
		}
	}
	return best, second
}
