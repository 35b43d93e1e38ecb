package ops

import (
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// MUL_MAT_ID (ggml_mul_mat_id, mixture of experts): dst[i, s, t] = sum_k as[k, i, e] *
// b[k, s % ne11, t] with e = ids[s, t]: as holds one weight matrix per expert (F32, F16 or
// quantized, as MUL_MAT's src0), b the activations (F32; ne11 is the experts used per
// token, or 1 when every expert sees the same row), ids (I32) the experts chosen for slot
// s of token t.
//
// Up to mulMatIDMaxTokens tokens (decode, short prompts) take the vectorised mat-vec
// kernel of MUL_MAT, one workgroup per row block of one (slot, token) reading that pair's
// expert. More tokens take the grouped
// tiled kernel (mul_mat_id.wgsl): a workgroup owns one 64-row tile of one expert's matrix;
// it scans ids and gathers, in workgroup memory, the (slot, token) pairs routed to its
// expert, 64 at a time, and multiplies each such group of rows as one tile of MUL_MAT's
// tiled kernel. So each expert's weights are read once per 64 routed rows and no scratch
// memory is needed; experts nobody chose cost one scan of ids.

type mulMatIDParams struct {
	A, B, D, I       [4]uint32 // as, b, dst, ids strides (B, D: see lowerMulMatID)
	M, N, K, Batches uint32    // rows of an expert's matrix; 1; row length; slots x tokens
	Ne2              uint32    // slots (experts used per token)
	Ne11             uint32    // rows of b per token (1: broadcast)
	Experts          uint32
}

// mulMatIDMaxTokens is the largest token count that takes the mat-vec kernel. The grouped
// kernel, on the 64 x 64 tiled kernel's K loop, is slow enough that a mat-vec per (slot,
// token) pair, each reading its expert's matrix, wins up to here: on an H100, 128 experts
// of 768 x 2048 Q4_K, 8 used, by 8, 16, 32, 64 tokens 895, 1745, 1758, 1777 µs grouped
// against 64.5, 118, 237, 467 (ggml-vulkan 62.9, 237, 241, 242); 32 of 2880 x 2880 MXFP4, 4
// used, 2046, 2074, 2086, 2110 against 184, 362, 686, 1365 (132, 541, 547, 545). At 128
// tokens Q4_K still gained (1793 -> 920) but MXFP4 lost (2129 -> 2690).
const mulMatIDMaxTokens = 64

func init() {
	describeFamily("MUL_MAT_ID", "F32, F16, "+quantNames()+" x F32; I32 ids",
		"mixture of experts: mat-vec for up to 64 tokens, else rows grouped per expert in a tiled kernel; any strides (quantized experts: rows of whole blocks)")
	register(tensor.OpMulMatID, family{supports: supportsMulMatID, lower: lowerMulMatID, examples: func() []*tensor.Tensor {
		ex := []*tensor.Tensor{
			mulMatIDNode(contiguous(tensor.F16, 16, 3, 4), f32(16, 2, 1), 2),     // mat-vec
			mulMatIDNode(contiguous(tensor.F16, 16, 3, 4), f32(16, 1, 9), 2),     // tiled, broadcast b
			mulMatIDNode(f32(5, 3, 4), f32(5, 2, 9), 2),                          // tiled, element loads
			mulMatIDNode(f32(5, 3, 4), f32(5, 2, 2), 2),                          // rows not vectors: tiled
			mulMatIDNode(contiguous(tensor.Q4_0, 64, 3, 4), padded(64, 2, 1), 2), // mat-vec, src1 strided
		}
		for _, q := range quantTypes {
			k := int64(max(64, unitElems(q))) // whole units: the mat-vec kernel's unit reads
			ex = append(ex,
				mulMatIDNode(contiguous(q, k, 3, 4), f32(k, 2, 1), 2),
				mulMatIDNode(contiguous(q, k, 3, 4), f32(k, 2, 9), 2))
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
	groups := uint64(l.MaxGroupsPerDim)
	if groups == 0 {
		groups = 65535
	}
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
	if b.Ne[2] <= mulMatIDMaxTokens && matVec8Reads(a, b) {
		v := matVec{m: p.M, k: p.K, batches: p.Batches, cols: 1, ids: true, vec1: vectorRows(b), units: unitRows(a, l)}
		s, grid := v.spec(p, operands, l)
		return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: grid}}, nil
	}
	defs := tiledLoads(a, b, operands)
	s := spec("mul_mat_id", 256, p, defs, operands...)
	grid := [3]uint32{(p.M + matTile - 1) / matTile, p.Experts, 1}
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: grid}}, nil
}
