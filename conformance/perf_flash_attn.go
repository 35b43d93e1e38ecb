package conformance

import (
	"fmt"
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
)

// perfFlashAttnCases: llama-8B-like attention (head size 128, 32 query heads over 8 KV
// heads, F16 caches, F16 mask), decoding (1 query) and prefill (512 queries) over 512 and
// 4096 KV positions.
func perfFlashAttnCases() []*PerfCase {
	var cs []*PerfCase
	for _, kv := range []int64{512, 4096} {
		for _, nq := range []int64{1, 512} {
			cs = append(cs, perfFlashAttn(128, 32, 8, kv, nq))
		}
	}
	return cs
}

func perfFlashAttn(hs, nh, nhkv, kv, nq int64) *PerfCase {
	return &PerfCase{
		Name: fmt.Sprintf("FLASH_ATTN_EXT(hsk=%d,hsv=%d,nh=%d,nh_kv=%d,kv=%d,nb=%d,type_KV=f16)", hs, hs, nh, nhkv, kv, nq),
		Op:   "FLASH_ATTN_EXT",
		Build: func(b *PerfBuilder) func() ggml.Tensor {
			q := b.New("q", f32, hs, nq, nh)
			k := b.New("k", f16, hs, kv, nhkv)
			v := b.New("v", f16, hs, kv, nhkv)
			m := b.New("m", f16, kv, (nq+7)/8*8)
			scale := float32(1 / math.Sqrt(float64(hs)))
			return func() ggml.Tensor {
				out := b.L.FlashAttnExt(b.Ctx, q, k, v, m, scale, 0, 0)
				b.L.PrecSetAcc(out, ggml.PrecF32)
				return out
			}
		},
	}
}
