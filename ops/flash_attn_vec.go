package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The short-cache decoding kernel (wgsl/kernels/flash_attn_vec.wgsl): one workgroup per
// query row takes every KV position at once, so that no split and no reduction dispatch
// follow. It serves decoding (few queries) over caches of at most faVecMaxKV positions
// with head sizes up to faVecMaxHead; longer caches take the split kernel, whose
// workgroups each take a share of the positions.

const (
	// faVecWG is the kernel's workgroup size.
	faVecWG = 256
	// faVecMaxKV is the longest cache the kernel takes by default (its scores sit in
	// workgroup memory, faVecMaxKV floats), overridden by Limits.FAVecMaxKV up to
	// faVecKVCap.
	faVecMaxKV = 512
	faVecKVCap = 2048
	// faVecMaxHead bounds the head sizes (D and Dv).
	faVecMaxHead = 256
	// faVecMaxVPre bounds the V rows a thread loads before the scores.
	faVecMaxVPre = 8
)

// faVecStorage returns the kernel's workgroup memory in bytes for head sizes d, dv and a
// score array of kv floats.
func faVecStorage(d, dv int64, kv int) int {
	parts := faVecWG / int(dv/8)
	return 4 * (int(d) + kv + faVecWG + parts*int(dv) + parts)
}

// faVecKV returns the longest cache the kernel takes (0: the kernel is off).
func faVecKV(l *Limits) int {
	switch {
	case l.FAVecMaxKV < 0:
		return 0
	case l.FAVecMaxKV > 0:
		return min(l.FAVecMaxKV, faVecKVCap)
	}
	return faVecMaxKV
}

// faVecApplies reports whether the FLASH_ATTN_EXT of parameters p with head sizes d and dv
// takes the short-cache kernel.
func faVecApplies(p *flashAttnParams, l *Limits) bool {
	kv := faVecKV(l)
	if p.NQ > faDecodeMaxQ || int(p.NKV) > kv || p.D > faVecMaxHead || p.Dv > faVecMaxHead {
		return false
	}
	limit := l.MaxWorkgroupStorage
	if limit <= 0 {
		limit = 16384
	}
	return faVecStorage(int64(p.D), int64(p.Dv), faVecScores(p.NKV)) <= limit
}

// faVecScores is the score array's length for a cache of nkv positions: nkv rounded up to
// 256, so that caches that grow share a pipeline.
func faVecScores(nkv uint32) int { return int((max(nkv, 1) + 255) / 256 * 256) }

// lowerFlashAttnVec lowers t (parameters p) to the short-cache kernel.
func lowerFlashAttnVec(t *tensor.Tensor, p flashAttnParams, l *Limits) []Dispatch {
	q, k, v, m, s := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4]
	p.Splits, p.Groups = 1, 1
	ncg := int(p.Dv / 8)
	parts := faVecWG / ncg
	vp := (int(p.NKV) + parts - 1) / parts
	if vp > faVecMaxVPre {
		vp = 0
	}
	defs := map[string]string{
		"PARTS": fmt.Sprint(parts), "MAXKV": fmt.Sprint(faVecScores(p.NKV)),
		"QS": fmt.Sprint(p.D / 4), "ACCS": fmt.Sprint(parts * int(p.Dv) / 4), "VP": fmt.Sprint(vp),
		"VEC_K": "0", "VEC_V": "0", "MASK": "0", "SINKS": "0",
	}
	ops, tensors := faOperands(&p, q, k, v, m, defs)
	if s != nil {
		defs["SINKS"] = "1"
		ops = append(ops, in("sinks", s))
		tensors = append(tensors, s)
	}
	sp := spec("flash_attn_vec", faVecWG, p, defs, append(ops, out("dst", t))...)
	groups := uint64(p.NQ) * uint64(p.NHead) * uint64(p.NSeq)
	return []Dispatch{{Spec: sp, Tensors: append(tensors, t), Params: p, Grid: grid1D(groups, l)}}
}
