package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// Cost estimates the work of one node for profiles: the bytes it reads and writes and its
// floating point operations. The estimates (ggml's semantics, not what our kernels do):
//   - bytes: every source's extent plus the destination's, except GET_ROWS (the selected
//     rows of the table), SET_ROWS (the rows written, not the whole destination), CPY
//     (src[1] is the destination itself) and MUL_MAT_ID (only the experts that ids can
//     name: at most one per id); views move nothing;
//   - FLOP: MUL_MAT 2·K per output element (2·M·N·K per matrix), MUL_MAT_ID likewise per
//     selected row, OUT_PROD 2·K per output element; FLASH_ATTN_EXT 2·(D + Dv)·KV per
//     query row and head (Q·Kᵀ and P·V: about 4·D·KV·queries·heads, the softmax left
//     out); ops that only move data (copies, GET_ROWS, SET_ROWS, CONCAT, REPEAT, PAD,
//     ROLL, views) none; every other op one per output element.
func Cost(n *tensor.Tensor) (bytes, flop uint64) {
	if n == nil || n.Empty() {
		return 0, 0
	}
	dst := uint64(n.Elems())
	switch n.Op {
	case tensor.OpNone, tensor.OpView, tensor.OpReshape, tensor.OpPermute, tensor.OpTranspose:
		return 0, 0
	case tensor.OpGetRows:
		rows := dst / uint64(max(n.Ne[0], 1))
		return rows*rowBytes(n.Src[0]) + extent(n.Src[1]) + n.Extent(), 0
	case tensor.OpSetRows:
		rows := uint64(n.Src[0].Elems()) / uint64(max(n.Src[0].Ne[0], 1))
		return extent(n.Src[0]) + extent(n.Src[1]) + rows*rowBytes(n), 0
	case tensor.OpCpy, tensor.OpDup, tensor.OpCont:
		return extent(n.Src[0]) + n.Extent(), 0
	case tensor.OpMulMat:
		return allBytes(n), 2 * dst * uint64(n.Src[0].Ne[0])
	case tensor.OpMulMatID:
		as, ids := n.Src[0], n.Src[2]
		experts := uint64(as.Ne[2])
		if ids != nil {
			experts = min(experts, uint64(ids.Elems()))
		}
		b := experts*as.Nb[2] + extent(n.Src[1]) + extent(ids) + n.Extent()
		return b, 2 * dst * uint64(as.Ne[0])
	case tensor.OpOutProd:
		return allBytes(n), 2 * dst * uint64(n.Src[0].Ne[1])
	case tensor.OpFlashAttnExt:
		q, k, v := n.Src[0], n.Src[1], n.Src[2]
		if q == nil || k == nil || v == nil {
			return allBytes(n), 0
		}
		rows := uint64(q.Ne[1] * q.Ne[2] * q.Ne[3])
		return allBytes(n), 2 * uint64(q.Ne[0]+v.Ne[0]) * uint64(k.Ne[1]) * rows
	case tensor.OpConcat, tensor.OpRepeat, tensor.OpPad, tensor.OpRoll, tensor.OpSet, tensor.OpFill:
		return allBytes(n), 0
	}
	return allBytes(n), dst
}

// allBytes is the extents of a node's sources and of the node.
func allBytes(n *tensor.Tensor) uint64 {
	b := n.Extent()
	for _, s := range n.Src {
		b += extent(s)
	}
	return b
}

func extent(t *tensor.Tensor) uint64 {
	if t == nil {
		return 0
	}
	return t.Extent()
}

// rowBytes is the bytes of one dense row of t (whole blocks of a quantized type).
func rowBytes(t *tensor.Tensor) uint64 {
	if t == nil {
		return 0
	}
	return uint64(t.Ne[0]) / uint64(max(t.Type.BlockElems(), 1)) * t.TypeSize()
}

// CostFused estimates the work of a fused pattern's nodes (in order, the last the
// result): their FLOP added up, the bytes of the sources from outside the pattern and of
// the written results (Fusion.Written; the other intermediate results stay in the
// kernel; a nil written counts the last node's result only). A SET_ROWS writes its rows
// (as Cost counts them), wherever it is in the pattern, and its destination base is not
// read.
func CostFused(nodes, written []*tensor.Tensor) (bytes, flop uint64) {
	if len(nodes) == 0 {
		return 0, 0
	}
	inside := map[*tensor.Tensor]bool{}
	for _, n := range nodes {
		inside[n] = true
	}
	seen := map[*tensor.Tensor]bool{}
	for _, n := range nodes {
		_, f := Cost(n)
		flop += f
		for i, s := range n.Src {
			if n.Op == tensor.OpSetRows && i == 2 {
				continue
			}
			if s != nil && !inside[s] && !seen[s] {
				seen[s] = true
				bytes += s.Extent()
			}
		}
		if n.Op == tensor.OpSetRows && !n.Empty() {
			bytes += uint64(n.Src[0].Elems()) / uint64(max(n.Src[0].Ne[0], 1)) * rowBytes(n)
		}
	}
	if written == nil {
		written = nodes[len(nodes)-1:]
	}
	for _, t := range written {
		if t.Op != tensor.OpSetRows {
			bytes += t.Extent()
		}
	}
	return bytes, flop
}
