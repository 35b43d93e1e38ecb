package ops

import (
	"fmt"
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// FLASH_ATTN_EXT: dst[:, h, i, s] = softmax_j(score(i, j)) . V[:, j, h / r, s] with
// score = scale * q . k (or softcap * tanh(scale * q . k / softcap)) + slope(h) * mask[j, i],
// computed in f32 with the online softmax. q [D, n_q, n_head, n_seq] F32; k [D, n_kv,
// n_head_kv, n_seq] and v [Dv, n_kv, n_head_kv, n_seq] F32, F16 or a quantized format
// read by its routine (wgsl/formats.go), rows contiguous (whole blocks), any other strides;
// r = n_head / n_head_kv (grouped-query attention); optional mask (src3) F16 [>= n_kv,
// >= n_q, ...] broadcast over heads and sequences; ALiBi slopes from max_bias; optional
// sinks (src4) F32 [n_head], one extra logit per head with no value. Positions whose
// (sloped) mask is -inf are left out, as the CPU does (their K and V are never used).
//
// Prompts (n_q > faDecodeMaxQ) take the tiled kernel (flash_attn_tile.go): workgroups of
// 16 or 32 query rows of one KV head, register-blocked scores and output, the KV sequence
// whole in each workgroup, tiles hidden by the mask skipped; head sizes whose Q rows do
// not fit its workgroup memory (D 576) take the kernel below.
// That kernel (flash_attn.wgsl) computes a tile of R query rows that share a KV head
// against tiles of T KV positions: the scaled Q rows sit in workgroup memory, each K and
// V tile is read once for all R rows, the running max and sum per row in workgroup memory
// and the output accumulators in registers. Decoding (few queries) splits the KV sequence
// over workgroups as well (flash-decoding): each writes its rows' partial max, sum and
// accumulator to scratch memory (see ScratchBuffer) and a second dispatch combines them.

type flashAttnParams struct {
	Q, K, V   [4]uint32 // strides (elements; quantized K and V: see strides)
	M, Me     [4]uint32 // mask strides and shape (broadcast over dims 2, 3)
	D, Dv     uint32    // K and V head sizes
	NKV, NQ   uint32    // KV positions, queries
	NHead     uint32    // query heads
	NHeadKV   uint32    // KV heads
	NSeq      uint32    // sequences (dim 3)
	RK2       uint32    // query heads per KV head
	Rows      uint32    // query rows per KV head: NQ * RK2
	Groups    uint32    // row tiles per KV head: ceil(Rows / R)
	Splits    uint32    // KV splits (1: no split, the kernel writes dst)
	Chunk     uint32    // KV positions per split, a multiple of the tile
	NCGW      uint32    // accumulating threads per KV position (each CPT groups of eight V columns)
	TP        uint32    // KV positions accumulated at once: the workgroup size / NCGW
	Scale     float32   // scale, divided by the softcap when there is one
	Softcap   float32   // 0: none
	NHeadLog2 uint32
	L0, L1    float32 // log2 of the ALiBi slope bases (0 without ALiBi: every slope is 1)
}

// Kernel shape: workgroup size, KV positions per tile, threads per position when scoring.
const (
	faWG   = 128
	faTile = 32
	faPart = faWG / faTile
	// faDecodeMaxQ is the most queries that take the split (decoding) path.
	faDecodeMaxQ = 8
	// faTargetGroups is the workgroups the decoding path aims for (KV splits times row
	// tiles), chosen by measurement on an NVIDIA H100 (`wgpu-conformance -perf -device
	// WGPU0 -device Vulkan0 -filter FLASH_ATTN`; head 128, 32/8 heads, F16 K and V, one
	// query): at KV 4096, 256 took 51.8 µs where 1024 took 95.5; at KV 512 both 27 µs.
	// Splitting even short caches pays for the reduction's dispatch: one workgroup per row
	// group over all tiles (no split below 9, 17 or 33 tiles) took, on an H200, head 128 at
	// KV 256 from 12.1 to 34.1 µs, head 64 at KV 256 from 13.5 to 32.4, head 128 at KV 512
	// from 12.4 to 60.2, and a 1B Q4_K_M decode from 550, 507 to 439-461 t/s.
	// A later round (H100, `-filter "nb=1,type_KV=f16,chain)"`, µs, default -> one query
	// row a workgroup (GGML_WGPU_FA_ROWS=1) -> 1024 workgroups (GGML_WGPU_FA_GROUPS); ggml-
	// vulkan in brackets): head 64, 32/8 heads, KV 256 9.01 -> 8.72 -> 8.97 (10.2), KV 1024
	// 9.68 -> 13.5 -> 9.95 (11.9); head 128 KV 256 9.36 -> 9.19 -> 9.45 (10.4), KV 4096
	// 20.3 -> 40.0 -> 26.2 (18.1); a 1B Q4_0's GPU time per decode graph (tg64, KV 256)
	// 920.6, 921.2 -> 914.7, 917.2 -> 920.3, 920.8 µs. The defaults stay.
	faTargetGroups = 256
	// faMaxSplits bounds the KV splits (the reduction's workgroup memory holds a weight each).
	faMaxSplits = 256
	// faMaxVTColumns bounds the V head size whose tiles are staged in workgroup memory
	// (VT; 16 KiB at 128).
	faMaxVTColumns = 128
)

// faPrecisions are the accumulator precisions handled (op_params[3]): GGML_PREC_DEFAULT
// and GGML_PREC_F32, both computed in f32 like the CPU backend.
var faPrecisions = map[int32]bool{0: true, 10: true}

func init() {
	describeFamily("FLASH_ATTN_EXT", "Q F32; K, V F32, F16 or any quantized format of MUL_MAT; mask F16; sinks F32",
		"head sizes multiples of 8 (K and V may differ); GQA; mask broadcast; ALiBi; softcap; sinks; split KV for decoding")
	register(tensor.OpFlashAttnExt, family{supports: supportsFlashAttn, lower: lowerFlashAttn, examples: flashAttnExamples})
}

// flashAttnNode builds an example FLASH_ATTN_EXT node.
func flashAttnNode(d, dv, nq, nh, nhkv, nkv int64, kt, vt tensor.Type, mask, sinks bool, maxBias, softcap float32) *tensor.Tensor {
	q := f32(d, nq, nh)
	k := contiguous(kt, d, nkv, nhkv)
	v := contiguous(vt, dv, nkv, nhkv)
	src := []*tensor.Tensor{q, k, v, nil, nil}
	if mask {
		src[3] = contiguous(tensor.F16, nkv, nq+(8-nq%8)%8)
	}
	if sinks {
		src[4] = f32(nh)
	}
	params := []int32{int32(f32bits(1 / float32(math.Sqrt(float64(d))))), int32(f32bits(maxBias)), int32(f32bits(softcap)), 10}
	return node(tensor.OpFlashAttnExt, f32(dv, nh, nq), params, src...)
}

func flashAttnExamples() []*tensor.Tensor {
	ex := []*tensor.Tensor{
		flashAttnNode(64, 64, 1, 8, 2, 100, tensor.F16, tensor.F16, true, false, 0, 0),   // decode, split
		flashAttnNode(64, 64, 32, 4, 4, 100, tensor.F16, tensor.F16, true, true, 8, 0),   // prompt, sinks, ALiBi
		flashAttnNode(128, 128, 3, 4, 1, 40, tensor.F32, tensor.F32, false, true, 0, 10), // f32, softcap
		flashAttnNode(576, 512, 1, 16, 1, 64, tensor.F16, tensor.F16, true, false, 0, 0),
		flashAttnNode(40, 40, 9, 2, 2, 33, tensor.F16, tensor.F16, true, false, 0, 0),
	}
	// The tiled prompt kernel with quantized K and V, and with F32 ones.
	ex = append(ex,
		flashAttnNode(64, 64, 16, 4, 1, 50, tensor.Q4_0, tensor.Q8_0, true, false, 0, 0),
		flashAttnNode(96, 64, 12, 2, 2, 70, tensor.F32, tensor.F32, true, true, 0, 20),
		flashAttnNode(64, 64, 16, 4, 1, 2000, tensor.F16, tensor.F16, true, true, 0, 0), // split KV
	)
	// K and V element by element (rows not 16-byte aligned).
	for _, nq := range []int64{2, 16} { // decode and prompt
		odd := flashAttnNode(64, 64, nq, 2, 2, 20, tensor.F16, tensor.F16, false, false, 0, 0)
		odd.Src[1].Nb[1] += 2
		odd.Src[1].Nb[2] = odd.Src[1].Nb[1] * 20
		odd.Src[1].Nb[3] = odd.Src[1].Nb[2] * 2
		ex = append(ex, odd)
	}
	for _, q := range quantTypes {
		d := int64(max(64, q.BlockElems()))
		ex = append(ex, flashAttnNode(d, d, 1, 4, 1, 50, q, q, true, false, 0, 0))
	}
	return ex
}

// faKV reports whether a K or V operand can be read: F32 or F16 rows of contiguous
// elements, or quantized rows of whole blocks.
func faKV(t *tensor.Tensor) bool {
	if t == nil || !elementAligned(t) || t.Nb[0] != t.TypeSize() {
		return false
	}
	if quantized(t.Type) {
		return quantRows(t)
	}
	return isFloat(t.Type)
}

func supportsFlashAttn(t *tensor.Tensor, l *Limits) bool {
	q, k, v, m, s := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4]
	if q == nil || q.Type != tensor.F32 || !elementAligned(q) || t.Type != tensor.F32 || !t.Contiguous() || !faKV(k) || !faKV(v) {
		return false
	}
	for _, x := range t.Src[5:] {
		if x != nil {
			return false
		}
	}
	if !faPrecisions[t.Params[3]] {
		return false
	}
	d, dv := q.Ne[0], v.Ne[0]
	if d%8 != 0 || dv%8 != 0 || k.Ne[0] != d || v.Ne[1] != k.Ne[1] || v.Ne[2] != k.Ne[2] || v.Ne[3] != k.Ne[3] {
		return false
	}
	if k.Ne[2] == 0 || q.Ne[2]%k.Ne[2] != 0 || q.Ne[3] != k.Ne[3] {
		return false
	}
	if t.Ne != [4]int64{dv, q.Ne[2], q.Ne[1], q.Ne[3]} {
		return false
	}
	if m != nil {
		if m.Type != tensor.F16 || m.Nb[0] != 2 || !elementAligned(m) || m.Ne[0] < k.Ne[1] || m.Ne[1] < q.Ne[1] ||
			m.Ne[2] == 0 || m.Ne[3] == 0 || q.Ne[2]%m.Ne[2] != 0 || q.Ne[3]%m.Ne[3] != 0 {
			return false
		}
	} else if t.ParamF32(1) > 0 {
		return false // ALiBi needs the mask (ggml asserts it)
	}
	if s != nil && (s.Type != tensor.F32 || s.Ne[0] < q.Ne[2] || s.Nb[0] != 4) {
		return false
	}
	return faRows(d, dv, 1, l) >= 1
}

// faHeadClass is the row length the kernel's workgroup arrays are sized for: 128, 256, or
// max(d, dv) rounded up to 64 (few head-size classes, few pipelines to compile).
func faHeadClass(d, dv int64) int {
	h := int(max(d, dv))
	switch {
	case h <= 128:
		return 128
	case h <= 256:
		return 256
	}
	return (h + 63) / 64 * 64
}

// faStorage returns the workgroup memory, in bytes, of the kernel with r rows per tile.
func faStorage(d, dv int64, r int) int {
	floats := r*faHeadClass(d, dv) + r*faWG + r*faTile + 3*r + faWG
	return 4*floats + 8*r
}

// faRows returns the query rows per workgroup: the rows sharing a KV head (want), rounded
// up to a power of two, at most 8 (16 for prompts), and as many as the device's workgroup
// memory holds (0 when not even one row fits).
func faRows(d, dv int64, want uint32, l *Limits) int {
	limit := l.workgroupStorage()
	r := 1
	for r < 16 && uint32(r) < want {
		r *= 2
	}
	for r >= 1 && faStorage(d, dv, r) > limit {
		r /= 2
	}
	return r
}

func lowerFlashAttn(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	q, k, v, m, s := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4]
	p := flashAttnParams{
		Q: strides(q), K: strides(k), V: strides(v), Me: [4]uint32{1, 1, 1, 1},
		D: uint32(q.Ne[0]), Dv: uint32(v.Ne[0]), NKV: uint32(k.Ne[1]), NQ: uint32(q.Ne[1]),
		NHead: uint32(q.Ne[2]), NHeadKV: uint32(k.Ne[2]), NSeq: uint32(q.Ne[3]),
		Scale: t.ParamF32(0), Softcap: t.ParamF32(2),
	}
	p.RK2 = p.NHead / p.NHeadKV
	p.Rows = p.NQ * p.RK2
	if p.Softcap != 0 {
		p.Scale /= p.Softcap
	}
	if maxBias := t.ParamF32(1); maxBias > 0 {
		nLog2 := uint32(1) << uint32(math.Floor(math.Log2(float64(p.NHead))))
		p.NHeadLog2 = nLog2
		// ggml's bases m0 and m1 in f32, as the CPU computes them (see soft_max.go).
		m0 := float32(math.Pow(2, -float64(maxBias)/float64(nLog2)))
		m1 := float32(math.Pow(2, -float64(maxBias/2)/float64(nLog2)))
		p.L0, p.L1 = float32(math.Log2(float64(m0))), float32(math.Log2(float64(m1)))
	}
	if p.NQ > faDecodeMaxQ {
		if tl, ok := faPromptTiles(q.Ne[0], v.Ne[0], l); ok {
			return lowerFlashAttnTile(t, p, tl, l), nil
		}
	}
	want := p.Rows
	if p.NQ <= faDecodeMaxQ {
		want = min(want, 8)
		if l.FADecodeRows > 0 {
			want = min(want, uint32(l.FADecodeRows))
		}
	}
	r := faRows(q.Ne[0], v.Ne[0], want, l)
	if r < 1 {
		return nil, fmt.Errorf("ops: flash attention head sizes %d/%d exceed workgroup memory", q.Ne[0], v.Ne[0])
	}
	p.Groups = (p.Rows + uint32(r) - 1) / uint32(r)
	groups := uint64(p.Groups) * uint64(p.NHeadKV) * uint64(p.NSeq)
	tiles := (p.NKV + faTile - 1) / faTile
	splits := uint32(1)
	dstRows := uint64(p.NHead) * uint64(p.NQ) * uint64(p.NSeq)
	target := uint64(faTargetGroups)
	if l.FATargetGroups > 0 {
		target = uint64(l.FATargetGroups)
	}
	if p.NQ <= faDecodeMaxQ && tiles > 1 && groups < target {
		splits = min(tiles, uint32((target+groups-1)/groups), faMaxSplits)
		// the partial results must fit one binding
		for splits > 1 && 4*dstRows*uint64(splits)*uint64(p.Dv+2)+256 > l.MaxBinding {
			splits /= 2
		}
	}
	perSplit := (tiles + splits - 1) / splits
	p.Chunk = perSplit * faTile
	p.Splits = max((p.NKV+p.Chunk-1)/p.Chunk, 1)

	ncg := int(p.Dv / 8)
	cpt, ncgw := 1, ncg
	if ncg > faWG {
		cpt = (ncg + faWG - 1) / faWG
		ncgw = (ncg + cpt - 1) / cpt
	}
	p.NCGW, p.TP = uint32(ncgw), uint32(faWG/ncgw)
	// V tiles staged in workgroup memory, each thread keeping whole output columns (VT):
	// heads of at most faMaxVTColumns V columns, where the tile fits beside the rest; the
	// others load V rows as they accumulate them.
	vt := int(p.Dv) <= faMaxVTColumns && faStorage(q.Ne[0], v.Ne[0], r)+faTile*int(p.Dv)*4 <= l.workgroupStorage()
	vp, opt, vts := 1, 1, 1
	if vt {
		vp = (faTile*ncg + faWG - 1) / faWG // the tile's groups of eight V elements a thread loads
		opt = (r*int(p.Dv)/4 + faWG - 1) / faWG
		vts = faTile * int(p.Dv) / 4
	}
	defs := map[string]string{
		"VT": flag(vt), "OPT": fmt.Sprint(opt), "VTS": fmt.Sprint(vts),
		"R": fmt.Sprint(r), "T": fmt.Sprint(faTile), "P": fmt.Sprint(faPart),
		"CPT": fmt.Sprint(cpt), "QS": fmt.Sprint(r * faHeadClass(q.Ne[0], v.Ne[0]) / 4), "RT": fmt.Sprint(r * faTile), "RTP": fmt.Sprint(r * faWG),
		"ACC": fmt.Sprint(2 * r * cpt),
		"VP":  fmt.Sprint(vp), "MP": fmt.Sprint((r*faTile + faWG - 1) / faWG),
		"VEC_K": "0", "VEC_V": "0", "MASK": "0", "SINKS": "0", "SPLIT": "0",
	}
	ops, tensors := faOperands(&p, q, k, v, m, defs)
	grid := grid1D(groups, l)
	grid[2] = p.Splits
	if p.Splits == 1 {
		if s != nil {
			defs["SINKS"] = "1"
			ops = append(ops, in("sinks", s))
			tensors = append(tensors, s)
		}
		sp := spec("flash_attn", faWG, p, defs, append(ops, out("dst", t))...)
		return []Dispatch{{Spec: sp, Tensors: append(tensors, t), Params: p, Grid: grid}}, nil
	}
	// Split: the partial results (max, sum, Dv accumulators per dst row and split) go to
	// scratch memory, and the reduction combines them (and the sinks) into dst.
	part := scratch(dstRows * uint64(p.Splits) * uint64(p.Dv+2))
	defs["SPLIT"] = "1"
	sp := spec("flash_attn", faWG, p, defs, append(ops, out("part", part))...)
	return []Dispatch{
		{Spec: sp, Tensors: append(tensors, part), Params: p, Grid: grid},
		faReduce(t, p, part, nil, l),
	}, nil
}

// faOperands returns the operands and tensors both attention kernels read first: Q, K
// and V (K and V eight elements at a time where their rows allow, VEC_K and VEC_V, raw
// F16 words loaded ahead, RAW_K and RAW_V), then
// the mask when there is one (MASK, its shape and strides in p).
func faOperands(p *flashAttnParams, q, k, v, m *tensor.Tensor, defs map[string]string) ([]wgslOperand, []*tensor.Tensor) {
	ops := []wgslOperand{in("q", q), in("key", k), in("val", v)}
	tensors := []*tensor.Tensor{q, k, v}
	if quantized(k.Type) || vectorRows(k) {
		ops[1].Vec, defs["VEC_K"] = true, "1"
	}
	if quantized(v.Type) || vectorRows(v) {
		ops[2].Vec, defs["VEC_V"] = true, "1"
	}
	// F16 K and V read eight elements at a time and loaded ahead stay raw words until they
	// are used (RAW_K, RAW_V: flash_attn_io.wgsl).
	defs["RAW_K"] = flag(defs["VEC_K"] == "1" && k.Type == tensor.F16)
	defs["RAW_V"] = flag(defs["VEC_V"] == "1" && v.Type == tensor.F16)
	if m != nil {
		p.Me, p.M = dims(m), strides(m)
		defs["MASK"] = "1"
		ops = append(ops, in("mask", m))
		tensors = append(tensors, m)
	}
	return ops, tensors
}

// The register form of the split reduction: each invocation holds a column of at most
// faReduceMaxElems splits, loaded up front.
const (
	// faReduceElems is the splits per invocation the lanes are chosen for.
	faReduceElems = 8
	// faReduceMaxElems is the most splits per invocation of the register form.
	faReduceMaxElems = 16
)

// faReduceGroup returns the workgroup of the split reduction's register form for rows of
// dv columns combined from splits splits: lanes of dv invocations (a workgroup of about 256
// invocations, more, up to the device's limit and 1024, to hold faReduceElems splits an
// invocation), each lane elems of the splits. elems is 0 where that does not fit: columns
// beyond the workgroup limit, or more than faReduceMaxElems splits an invocation.
func faReduceGroup(dv, splits int, l *Limits) (wg, lanes, elems int) {
	limit := l.MaxGroupSize
	if limit <= 0 {
		limit = 256
	}
	limit = min(limit, 1024)
	if dv <= 0 || dv > limit || splits < 1 {
		return 0, 0, 0
	}
	most := limit / dv
	lanes = min(max(1, 256/dv), splits, most)
	if (splits+lanes-1)/lanes > faReduceElems {
		lanes = min((splits+faReduceElems-1)/faReduceElems, most)
	}
	elems = (splits + lanes - 1) / lanes
	if elems > faReduceMaxElems {
		return 0, 0, 0
	}
	return lanes * dv, lanes, elems
}

// faReduce is the dispatch that combines the splits' partial results in part (and the
// sinks) into dst, or with xq (the register form only: flash_attn_xq.go) into the
// quantized columns xq.cols instead.
func faReduce(t *tensor.Tensor, p flashAttnParams, part *tensor.Tensor, xq *xqOut, l *Limits) Dispatch {
	s := t.Src[4]
	wg, lanes, elems := faReduceGroup(int(p.Dv), int(p.Splits), l)
	rdefs := map[string]string{"SINKS": "0", "MAXS": fmt.Sprint(faMaxSplits), "REG": "0", "P": fmt.Sprint(lanes), "E": fmt.Sprint(elems), "XQ": flag(xq != nil)}
	if elems > 0 {
		rdefs["REG"] = "1"
	} else {
		wg = 64
	}
	rops := []wgslOperand{in("part", part)}
	rtensors := []*tensor.Tensor{part}
	if s != nil {
		rdefs["SINKS"] = "1"
		rops = append(rops, in("sinks", s))
		rtensors = append(rtensors, s)
	}
	result := t
	if xq != nil {
		xq.rowDefines(rdefs, int64(p.Dv))
		rops = append(rops, out("xq", xq.cols))
		result = xq.cols
	} else {
		rops = append(rops, out("dst", t))
	}
	rs := spec("flash_attn_reduce", wg, p, rdefs, rops...)
	dstRows := uint64(p.NHead) * uint64(p.NQ) * uint64(p.NSeq)
	return Dispatch{Spec: rs, Tensors: append(rtensors, result), Params: p, Grid: grid1D(dstRows, l)}
}
