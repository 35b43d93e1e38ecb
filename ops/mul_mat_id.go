package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// MUL_MAT_ID (ggml_mul_mat_id, mixture of experts): dst[i, s, t] = sum_k as[k, i, e] *
// b[k, s % ne11, t] with e = ids[s, t]: as holds one weight matrix per expert (F32, F16 or
// quantized, as MUL_MAT's src0), b the activations (F32; ne11 is the experts used per
// token, or 1 when every expert sees the same row), ids (I32) the experts chosen for slot
// s of token t.
//
// Three kernels take it:
//   - the vectorised mat-vec kernel of MUL_MAT, one workgroup per row block of one (slot,
//     token) pair reading that pair's expert, where the experts average fewer than
//     idMatVecPairs pairs (decode, short prompts; idRouted); for experts in Q4_0, Q4_1 and
//     Q4_K the integer mat-vec's IDS form instead (swarIDApplies);
//   - the routed prompt kernel for more (lowerMulMatIDBig): the pairs sorted by expert
//     into scratch memory (mul_mat_id_map.wgsl), then the prompt kernel's K loop over each
//     expert's column tiles of them (mul_mat_id_big.wgsl);
//   - where the routed kernel does not apply (more than idMaxExperts experts, too little
//     workgroup memory), the mat-vec up to idGroupedMinTokens tokens and past them the
//     grouped tiled kernel (mul_mat_id.wgsl): a workgroup owns one 64-row tile of one
//     expert's matrix; it scans ids and gathers, in workgroup memory, the pairs routed to
//     its expert, 64 at a time, and multiplies each such group as one tile of MUL_MAT's
//     64 x 64 kernel.

type mulMatIDParams struct {
	A, B, D, I       [4]uint32 // as, b, dst, ids strides (B, D: see lowerMulMatID)
	M, N, K, Batches uint32    // rows of an expert's matrix; 1; row length; slots x tokens
	Ne2              uint32    // slots (experts used per token)
	Ne11             uint32    // rows of b per token (1: broadcast)
	Experts          uint32
	// Tiles bounds the column tiles of the routed prompt kernel (mul_mat_id_big.wgsl): the
	// workgroups of its grid's y dimension (0 for the other kernels). See idTiles.
	Tiles uint32
}

// idMatVecPairs: where the experts average fewer (slot, token) pairs than this, the
// mat-vec kernel takes the product, else the routed prompt kernel. The mat-vec's time
// grows with the pairs, each reading its expert's matrix; the routed kernel's with the
// column tiles, at least one per expert chosen. On an H100 (µs; the routed kernel at 32
// columns a tile; ggml-vulkan in brackets), 128 experts of 768 x 2048 Q4_K, 8 used, by 32,
// 64, 128, 256 tokens (2, 4, 8, 16 pairs an expert): mat-vec 247, 468, 931, 1,794, routed
// 1,263, 1,264, 1,271, 1,286 (250, 302, 325, 270); 32 of 2880 x 2880 MXFP4, 4 used, by
// 32, 64, 128 tokens (4, 8, 16): mat-vec 687, 1,368, 2,697, routed ~870, 870, 875 (548,
// 546, 550). Alone these cross near 11 pairs an expert for the one and 5 for the other;
// but in generated models (mkmodel --experts) the mat-vec took ~2x its perf cases' time
// and the routed kernel its own: 4-layer model of 128 experts of 768 x 2048 Q4_K, 8 used,
// pp128 (8 pairs an expert), t/s: routed 6,315, mat-vec 4,531. Hence 4: the mat-vec up to
// 63 tokens for that model (64 before the routed kernel), up to 31 for the MXFP4 one.
const idMatVecPairs = 4

// idGroupedMinTokens: where the routed kernel does not apply, products of more tokens than
// this take the grouped kernel, fewer the mat-vec. On an H100 the grouped kernel took
// ~1.8 ms (Q4_K, above) and ~2.1 ms (MXFP4) whatever the tokens from 8 to 512.
const idGroupedMinTokens = 64

func init() {
	describeFamily("MUL_MAT_ID", "F32, F16, "+quantNames()+" x F32; I32 ids",
		"mixture of experts: mat-vec where the experts average fewer than 4 (slot, token) pairs, else the pairs sorted by expert and the prompt kernel over each expert's (a grouped tiled kernel past 1024 experts); any strides (quantized experts: rows of whole blocks)")
	register(tensor.OpMulMatID, family{supports: supportsMulMatID, lower: lowerMulMatID, examples: func() []*tensor.Tensor {
		ex := []*tensor.Tensor{
			mulMatIDNode(contiguous(tensor.F16, 16, 3, 4), f32(16, 2, 1), 2),     // mat-vec
			mulMatIDNode(contiguous(tensor.F16, 16, 3, 4), f32(16, 1, 70), 2),    // routed (SLIM), broadcast b
			mulMatIDNode(contiguous(tensor.F16, 16, 3, 2), f32(16, 2, 70), 2),    // routed, 64-column tiles
			mulMatIDNode(f32(5, 3, 4), f32(5, 2, 70), 2),                         // routed, element loads
			mulMatIDNode(contiguous(tensor.F16, 16, 3, 2), f32(16, 1, 300), 1),   // routed, 128-column tiles
			mulMatIDNode(f32(5, 3, 4), f32(5, 2, 2), 2),                          // rows not vectors: tiled
			mulMatIDNode(contiguous(tensor.F16, 16, 3, 1100), f32(16, 2, 70), 2), // too many experts: grouped
			mulMatIDNode(contiguous(tensor.Q4_0, 64, 3, 4), padded(64, 2, 1), 2), // mat-vec, src1 strided
		}
		for _, q := range quantTypes {
			k := int64(max(64, unitElems(q))) // whole units: the mat-vec kernel's unit reads
			ex = append(ex,
				mulMatIDNode(contiguous(q, k, 3, 4), f32(k, 2, 1), 2),
				mulMatIDNode(contiguous(q, k, 3, 4), f32(k, 2, 70), 2))
		}
		return ex
	}})
}

// mulMatIDNode builds a MUL_MAT_ID node of experts as, activations b (b.Ne[2] tokens)
// and ids for `used` slots per token.
func mulMatIDNode(as, b *tensor.Tensor, used int64) *tensor.Tensor {
	tokens := b.Ne[2]
	return node(tensor.OpMulMatID, f32(as.Ne[1], used, tokens), nil, as, b, contiguous(tensor.I32, used, tokens))
}

func supportsMulMatID(t *tensor.Tensor, l *Limits) bool {
	a, b, ids := t.Src[0], t.Src[1], t.Src[2]
	if a == nil || b == nil || ids == nil || !(isFloat(a.Type) || quantized(a.Type)) || b.Type != tensor.F32 ||
		ids.Type != tensor.I32 || t.Type != tensor.F32 {
		return false
	}
	if quantized(a.Type) && !quantRows(a) {
		return false
	}
	if a.Ne[3] != 1 || b.Ne[3] != 1 || ids.Ne[2] != 1 || ids.Ne[3] != 1 || a.Ne[0] != b.Ne[0] || ids.Ne[1] != b.Ne[2] ||
		b.Ne[1] == 0 || ids.Ne[0]%b.Ne[1] != 0 {
		return false
	}
	if t.Ne != [4]int64{a.Ne[1], ids.Ne[0], b.Ne[2], 1} {
		return false
	}
	groups := uint64(l.groupsPerDim())
	if uint64(a.Ne[2]) > groups || uint64(a.Ne[1]+matTile-1)/matTile > groups {
		return false
	}
	return elementAligned(a) && elementAligned(b) && elementAligned(ids) && elementAligned(t)
}

func lowerMulMatID(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a, b, ids := t.Src[0], t.Src[1], t.Src[2]
	as, bs, ds, is := strides(a), strides(b), strides(t), strides(ids)
	// The kernels see slot s and token t as batch coordinates (b2, b3): b's and dst's
	// strides move up one place (x, 0, slot, token).
	p := mulMatIDParams{
		A: as, B: [4]uint32{bs[0], 0, bs[1], bs[2]}, D: [4]uint32{ds[0], 0, ds[1], ds[2]}, I: is,
		M: uint32(a.Ne[1]), N: 1, K: uint32(a.Ne[0]), Batches: uint32(ids.Ne[0] * ids.Ne[1]),
		Ne2: uint32(ids.Ne[0]), Ne11: uint32(b.Ne[1]), Experts: uint32(a.Ne[2]),
	}
	operands := []wgslOperand{in("src0", a), in("src1", b), in("ids", ids), out("dst", t)}
	tensors := []*tensor.Tensor{a, b, ids, t}
	mv, routed := matVec8Reads(a, b), idRouted(p, l)
	if !mv || routed {
		if ds, ok := lowerMulMatIDBig(t, p, l); ok {
			return ds, nil
		}
	}
	if mv && (!routed || b.Ne[2] <= idGroupedMinTokens) {
		if swarIDApplies(a, b, l) {
			return matVecQ4ID(a, b, ids, t, p, l), nil
		}
		v := matVec{m: p.M, k: p.K, batches: p.Batches, cols: 1, ids: true, vec1: vectorRows(b), units: unitRows(a, l)}
		s, grid := v.spec(p, operands, l)
		return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: grid}}, nil
	}
	defs := tiledLoads(a, b, operands)
	s := spec("mul_mat_id", 256, p, defs, operands...)
	grid := [3]uint32{(p.M + matTile - 1) / matTile, p.Experts, 1}
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: grid}}, nil
}

// idRouted reports whether the product p takes the routed prompt kernel rather than the
// mat-vec: its experts average idMatVecPairs pairs or more, or, with
// Limits.MulMatIDMaxTokens, it has more tokens than that.
func idRouted(p mulMatIDParams, l *Limits) bool {
	if l.MulMatIDMaxTokens > 0 && p.Ne2 > 0 {
		return p.Batches/p.Ne2 > uint32(l.MulMatIDMaxTokens)
	}
	return p.Batches >= idMatVecPairs*p.Experts
}

// idSlim is the routed prompt kernel's narrowest column tile (its SLIM form: 4 x 4 sums
// an invocation).
const idSlim = 32

// idSlimMaxPairs: experts averaging fewer (slot, token) pairs take the routed prompt
// kernel's SLIM form (32 columns a tile), more its 64-column one, 128 pairs and more its
// 128-column one. On an H100 (µs, 32 against 64 columns a tile): MXFP4 (above) at 32 pairs
// an expert 898 against 1,312, at 64 1,651 against 1,351; Q4_K at 8 1,271 against 1,580,
// at 32 1,318 against 1,637. 128 columns lost where measured, up to 64 pairs an expert
// (Q4_K at 32 pairs 2,404, MXFP4 at 64 2,104); at 128 and more, where its tiles are full,
// it is not measured.
const idSlimMaxPairs = 48

// idTileWordBytes is the workgroup memory mul_mat_id_big.wgsl keeps beside the prompt
// kernels' slice buffers: its tile_word.
const idTileWordBytes = 4

// idMaxExperts is the most experts the routed prompt kernel takes: the counts that
// mul_mat_id_map.wgsl keeps in workgroup memory (its MAXE).
const idMaxExperts = 1024

// idTiles returns the most column tiles of tn pairs the routed prompt kernel can need for
// pairs (slot, token) pairs over experts: every expert's pairs fill whole tiles but its
// last one.
func idTiles(pairs, experts, tn uint32) uint32 {
	return (pairs+tn-1)/tn + min(experts, pairs)
}

// lowerMulMatIDBig lowers MUL_MAT_ID t (params p) for prompts as the routed prompt kernel:
// mul_mat_id_map.wgsl sorts the (slot, token) pairs by expert into scratch memory and cuts
// them into column tiles, then mul_mat_id_big.wgsl runs the prompt kernel's K loop on each
// expert's tiles (128 rows by 32, 64 or 128 columns a workgroup, by the pairs an expert
// averages: idSlimMaxPairs), reading quantized weights directly. ok is false where it does not apply:
// more than idMaxExperts experts, workgroup memory too small for the slice buffers and the
// format's tables, a grid beyond the device's, Limits.MulMatIDGrouped.
func lowerMulMatIDBig(t *tensor.Tensor, p mulMatIDParams, l *Limits) ([]Dispatch, bool) {
	a, b, ids := t.Src[0], t.Src[1], t.Src[2]
	if l.MulMatIDGrouped || p.Experts > idMaxExperts {
		return nil, false
	}
	if !bigFits(mustFormat(a), idTileWordBytes, l) {
		return nil, false
	}
	tn := uint32(idSlim)
	switch {
	case p.Batches >= matBigTile*p.Experts:
		tn = matBigTile
	case p.Batches >= idSlimMaxPairs*p.Experts:
		tn = matBigNarrow
	}
	if c := l.MulMatIDCols; c == idSlim || c == matBigNarrow || c == matBigTile {
		tn = uint32(c)
	}
	p.Tiles = idTiles(p.Batches, p.Experts, tn)
	groups := l.groupsPerDim()
	if (p.M+matBigTile-1)/matBigTile > groups || p.Tiles > groups {
		return nil, false
	}
	route := scratchAt(tensor.I32, 0, int64(2*p.Tiles+p.Batches))
	sort := spec("mul_mat_id_map", 256, p, map[string]string{"TN": fmt.Sprint(tn)}, in("ids", ids), out("route", route))
	operands := []wgslOperand{in("src0", a), in("src1", b), in("route", route), out("dst", t)}
	defs := bigDefs(tn, tiledLoads(a, b, operands), operands)
	s := spec("mul_mat_id_big", 256, p, defs, operands...)
	return []Dispatch{
		{Spec: sort, Tensors: []*tensor.Tensor{ids, route}, Params: p, Grid: [3]uint32{1, 1, 1}},
		{Spec: s, Tensors: []*tensor.Tensor{a, b, route, t}, Params: p, Grid: [3]uint32{(p.M + matBigTile - 1) / matBigTile, p.Tiles, 1}},
	}, true
}
