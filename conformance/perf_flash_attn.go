package conformance

import (
	"fmt"
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
)

// perfFlashAttnCases: llama-8B-like attention (head size 128, 32 query heads over 8 KV
// heads, F16 caches, F16 mask), decoding (1 query) and prefill (512 queries) over 512 and
// 4096 KV positions; a 1B-like head of 64 over 1024 positions; and prefill with llama's
// causal mask (queries at the last 512 positions: the prompt kernel skips the tiles the
// mask hides); and decoding over the short caches of a benchmark's tg128 (256 positions,
// the cache padded) at both head sizes, and a 1B-like head over 1024.
func perfFlashAttnCases() []*PerfCase {
	var cs []*PerfCase
	for _, kv := range []int64{512, 4096} {
		for _, nq := range []int64{1, 512} {
			cs = append(cs, perfFlashAttn(128, 32, 8, kv, nq, false))
		}
	}
	cs = append(cs,
		perfFlashAttn(64, 32, 8, 1024, 512, false),
		perfFlashAttn(128, 32, 8, 512, 512, true),
		perfFlashAttn(128, 32, 8, 4096, 512, true),
		perfFlashAttn(64, 32, 8, 256, 1, false),
		perfFlashAttn(64, 32, 8, 1024, 1, false),
		perfFlashAttn(128, 32, 8, 256, 1, false),
	)
	return cs
}

func perfFlashAttn(hs, nh, nhkv, kv, nq int64, causal bool) *PerfCase {
	name := fmt.Sprintf("FLASH_ATTN_EXT(hsk=%d,hsv=%d,nh=%d,nh_kv=%d,kv=%d,nb=%d,type_KV=f16", hs, hs, nh, nhkv, kv, nq)
	if causal {
		name += ",causal"
	}
	return &PerfCase{
		Name: name + ")",
		Op:   "FLASH_ATTN_EXT",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			q := b.New("q", f32, hs, nq, nh)
			k := b.New("k", f16, hs, kv, nhkv)
			v := b.New("v", f16, hs, kv, nhkv)
			m := b.New("m", f16, kv, (nq+7)/8*8)
			if causal {
				// The causal mask, made once per graph (not per repetition): -Inf above the
				// diagonal of queries at positions kv-nq..kv-1, copied into the F16 mask.
				mf := b.New("mf", f32, kv, (nq+7)/8*8)
				m = b.L.Cpy(b.Ctx, b.L.DiagMaskInf(b.Ctx, mf, int(kv-nq), false), m)
			}
			scale := float32(1 / math.Sqrt(float64(hs)))
			return func() ggml.Tensor {
				out := b.L.FlashAttnExt(b.Ctx, q, k, v, m, scale, 0, 0)
				b.L.PrecSetAcc(out, ggml.PrecF32)
				return out
			}
		},
	}
}
