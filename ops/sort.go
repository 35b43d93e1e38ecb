package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// ARGSORT (dst[:, row] = the indices that sort the row, ascending or descending by
// op_params[0]) and TOP_K (dst[0..k) = the indices of the row's k largest values, which
// ggml leaves in no particular order: here the descending order): F32 rows of up to
// sortMaxRow elements (rows evenly spaced, as ggml's CPU reads them: row i at i * nb[1]),
// I32 results. One workgroup sorts a row's indices in
// workgroup memory with a bitonic network over the next power of two (sort.wgsl); equal
// values keep their index order.

type sortParams struct {
	Ne, A, D [4]uint32 // src0 shape; src0, dst strides
	Rows     uint32
	Out      uint32 // indices written per row: ne0 (ARGSORT) or k (TOP_K)
}

// sortMaxRow is the longest row sorted: its indices (4 bytes each, padded to a power of
// two) fill 16 KiB of workgroup memory.
const sortMaxRow = 4096

func init() {
	describeFamily("ARGSORT, TOP_K", "F32 to I32", "rows up to 4096, evenly spaced; ascending or descending; TOP_K in descending order")
	register(tensor.OpArgSort, family{supports: supportsSort, lower: lowerSort, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{
			node(tensor.OpArgSort, contiguous(tensor.I32, 7, 3), []int32{0}, f32(7, 3)),
			node(tensor.OpArgSort, contiguous(tensor.I32, 300, 2), []int32{1}, f32(300, 2)),
		}
	}})
	register(tensor.OpTopK, family{supports: supportsSort, lower: lowerSort, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{node(tensor.OpTopK, contiguous(tensor.I32, 2, 3), nil, f32(7, 3))}
	}})
}

func supportsSort(t *tensor.Tensor, _ *Limits) bool {
	a := t.Src[0]
	if a == nil || a.Type != tensor.F32 || t.Type != tensor.I32 || a.Ne[0] > sortMaxRow || !elementAligned(a) || !elementAligned(t) {
		return false
	}
	// ggml's CPU finds row i at i * nb[1]: rows must be evenly spaced across dims 2, 3.
	if a.Nb[0] != 4 || a.Nb[2] != a.Nb[1]*uint64(a.Ne[1]) || a.Nb[3] != a.Nb[2]*uint64(a.Ne[2]) {
		return false
	}
	if t.Op == tensor.OpArgSort {
		return tensor.SameShape(a, t) && (t.Params[0] == 0 || t.Params[0] == 1)
	}
	return t.Ne[0] <= a.Ne[0] && t.Ne[1] == a.Ne[1] && t.Ne[2] == a.Ne[2] && t.Ne[3] == a.Ne[3]
}

// pow2Ceil returns the least power of two no smaller than n (1 for n <= 1): the length of
// a bitonic network's row (sort.wgsl, moe_router.wgsl).
func pow2Ceil(n int64) int {
	np := 1
	for int64(np) < n {
		np *= 2
	}
	return np
}

func lowerSort(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a := t.Src[0]
	p := sortParams{Ne: dims(a), A: strides(a), D: strides(t), Rows: uint32(a.Ne[1] * a.Ne[2] * a.Ne[3]), Out: uint32(t.Ne[0])}
	np := pow2Ceil(a.Ne[0])
	desc := "0"
	if t.Op == tensor.OpTopK || t.Params[0] == 1 {
		desc = "1"
	}
	wg := min(max(np/2, 64), 256)
	s := spec("sort", wg, p, map[string]string{"NP": fmt.Sprint(np), "DESC": desc}, in("src0", a), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, t}, Params: p, Grid: grid1D(uint64(p.Rows), l)}}, nil
}
