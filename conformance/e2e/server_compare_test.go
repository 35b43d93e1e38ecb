package e2e

import (
	"encoding/json"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/llamaserver"
	"github.com/stretchr/testify/require"
)

// answer builds a chat response from (token id, top-2 margin) pairs.
func answer(t *testing.T, text string, ids []int, margins []float64) *llamaserver.ChatResponse {
	t.Helper()
	var toks []map[string]any
	for i, id := range ids {
		toks = append(toks, map[string]any{
			"id": id, "token": "t", "logprob": -1.0,
			"top_logprobs": []map[string]any{
				{"id": id, "token": "t", "logprob": -1.0},
				{"id": id + 1, "token": "u", "logprob": -1.0 - margins[i]},
			},
		})
	}
	data, err := json.Marshal(map[string]any{"choices": []map[string]any{{
		"message":  map[string]any{"role": "assistant", "content": text},
		"logprobs": map[string]any{"content": toks},
	}}})
	require.NoError(t, err)
	var r llamaserver.ChatResponse
	require.NoError(t, json.Unmarshal(data, &r))
	return &r
}

// TestCompareGreedy checks the server test's rule: identical answers pass, a difference
// passes only where the CPU's top-2 margin is under serverMarginLimit.
func TestCompareGreedy(t *testing.T) {
	m := []float64{1, 1, 0.001, 1}
	cpu := answer(t, "a b c d", []int{5, 6, 7, 8}, m)

	n, parted, err := compareGreedy(cpu, answer(t, "a b c d", []int{5, 6, 7, 8}, m))
	require.NoError(t, err)
	require.Equal(t, 4, n)
	require.False(t, parted)

	n, parted, err = compareGreedy(cpu, answer(t, "a b x y", []int{5, 6, 9, 9}, m))
	require.NoError(t, err, "a close call may go either way")
	require.Equal(t, 2, n)
	require.True(t, parted)

	_, _, err = compareGreedy(cpu, answer(t, "a x c d", []int{5, 9, 7, 8}, m))
	require.Error(t, err, "a clear choice must agree")

	_, _, err = compareGreedy(cpu, answer(t, "a b", []int{5, 6}, m))
	require.Error(t, err, "an answer cut short")

	_, _, err = compareGreedy(cpu, answer(t, "a b c e", []int{5, 6, 7, 8}, m))
	require.Error(t, err, "same tokens must give the same text")
}
