package conformance

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// faDecodeCase matches the FLASH_ATTN_EXT cases of a few queries (the decoding paths).
var faDecodeCase = regexp.MustCompile(`^FLASH_ATTN_EXT\(.*,nb=[1-8],`)

// faDecodeCases are the suite's FLASH_ATTN_EXT cases of a few queries.
func faDecodeCases() []*Case {
	var cs []*Case
	for _, c := range Cases() {
		if faDecodeCase.MatchString(c.Name) {
			cs = append(cs, c)
		}
	}
	return cs
}

// TestFAVecPlans checks which decoding kernel the suite's decode cases take: the
// short-cache kernel up to 512 positions (head sizes up to 256), the split kernel and its
// reduction beyond, and the split kernel for all of them when the short-cache kernel is
// off (as TestConformanceFASplit runs them).
func TestFAVecPlans(t *testing.T) {
	env := openTestEnv(t)
	cs := faDecodeCases()
	require.Greater(t, len(cs), 40)
	kvOf, hskOf, hsvOf := regexp.MustCompile(`,kv=(\d+),`), regexp.MustCompile(`\(hsk?=(\d+),`), regexp.MustCompile(`(?:hsv|\(hs)=(\d+),`)
	vec, split := 0, 0
	for _, c := range cs {
		keys, err := env.Kernels(c)
		require.NoError(t, err, c.Name)
		require.NotEmpty(t, keys, c.Name)
		kv, hsk, hsv := caseInt(t, kvOf, c.Name), caseInt(t, hskOf, c.Name), caseInt(t, hsvOf, c.Name)
		short := kv <= 512 && hsk <= 256 && hsv <= 256
		joined := strings.Join(keys, " ")
		if short {
			require.Contains(t, joined, "flash_attn_vec;", c.Name)
			require.NotContains(t, joined, "flash_attn_reduce;", c.Name)
			vec++
		} else {
			require.NotContains(t, joined, "flash_attn_vec;", c.Name)
			split++
		}
	}
	require.Greater(t, vec, 30)
	require.Greater(t, split, 5)

	saved := quickLimits
	t.Cleanup(func() { quickLimits = saved })
	quickLimits = append(quickLimits[:0:0], saved...)
	for i := range quickLimits {
		quickLimits[i].FAVecMaxKV = -1
	}
	for _, c := range cs {
		keys, err := env.Kernels(c)
		require.NoError(t, err, c.Name)
		require.NotContains(t, strings.Join(keys, " "), "flash_attn_vec;", c.Name)
	}
}

// caseInt returns the number that re's group captures in a case name.
func caseInt(t *testing.T, re *regexp.Regexp, name string) int {
	m := re.FindStringSubmatch(name)
	require.NotNil(t, m, "%s: no %s", name, re)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

// TestConformanceFASplit runs the decode cases (faDecodeCases) in a child process whose
// library never takes the short-cache kernel (GGML_WGPU_FA_VEC_KV=-1, read at load time),
// so that the split kernel and its reduction keep the short caches' coverage too.
func TestConformanceFASplit(t *testing.T) {
	t.Setenv("GGML_WGPU_FA_VEC_KV", "-1") // inherited by the child process
	isolated(t, func(t *testing.T) {
		runSuite(t, openTestEnv(t), faDecodeCases())
	})
}
