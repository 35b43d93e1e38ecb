package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// Split flash attention that feeds the integer mat-vec (mul_mat_vec_q4.wgsl) on its XQ
// form: llama's FLASH_ATTN_EXT -> RESHAPE -> the attention output's product (wo). The
// split reduction's dispatch (flash_attn_reduce.wgsl with XQ) quantizes each combined
// row as the product reads its column (mul_mat_vec_xq_store.wgsl), in place of the
// product's own quantizing dispatch, and does not store the attention's result, which
// only the product reads: one dependent dispatch less a layer. On an H100 (an 8B-class
// Q4_K llama, GGML_WGPU_PROFILE=1 bench -fa on -p 0 -n 48, two alternating runs each, the
// row off -> on): GPU time per decode graph 3,025.9, 3,020.1 -> 2,948.7, 2,954.9 µs.

// flashAttnMulMatRow is the fusion row.
var flashAttnMulMatRow = Fusion{
	Name:    "flash_attn+view+mul_mat",
	Ops:     []OpSet{{tensor.OpFlashAttnExt}, viewOps, {tensor.OpMulMat}},
	Private: []int{0},
	Guard:   guardFlashAttnMulMat,
	Lower:   lowerFlashAttnMulMat,
	Example: func() []*tensor.Tensor { return flashAttnMulMatNodes(tensor.Q4_K, 128, 32, 8, 4096, 256) },
}

// flashAttnMulMatNodes returns llama's decode attention of one query: FLASH_ATTN_EXT of
// nh heads of size d over nkv positions of nhkv KV heads (F16), the RESHAPE of its result
// into one column and the product of that column by m x (d nh) weights of type ty.
func flashAttnMulMatNodes(ty tensor.Type, d, nh, nhkv, m, nkv int64) []*tensor.Tensor {
	fa := flashAttnNode(d, d, 1, nh, nhkv, nkv, tensor.F16, tensor.F16, true, false, 0, 0)
	col := node(tensor.OpReshape, f32(d*nh, 1), nil, fa)
	return []*tensor.Tensor{fa, col, node(tensor.OpMulMat, f32(m, 1), nil, contiguous(ty, d*nh, m), col)}
}

// guardFlashAttnMulMat admits the three nodes where the attention is supported and split
// (its rows combined by the reduction's register form), the view is its result as columns
// (a RESHAPE of rows of whole heads, no batches), the product reads the view and takes
// the integer mat-vec on XQ (faProduct), and the heads are whole groups of its layout.
func guardFlashAttnMulMat(n []*tensor.Tensor, l *Limits) bool {
	fa, col, mm := n[0], n[1], n[2]
	if l.FAXQOff || col.Op != tensor.OpReshape || col.Src[0] != fa || mm.Src[1] != col || !Supports(fa, l) || !Supports(mm, l) {
		return false
	}
	if col.Ne[0] != fa.Ne[0]*fa.Ne[1] || col.Ne[2] != 1 || col.Ne[3] != 1 || overlaps(mm, fa) {
		return false
	}
	w := mm.Src[0]
	wpg := int64(swarWPG(w))
	if w.Type == tensor.Q6_K || wpg == 0 || fa.Ne[0]%(8*wpg) != 0 {
		return false
	}
	if _, ok := faProduct(mm, l); !ok {
		return false
	}
	attn, err := lowerFlashAttn(fa, l)
	if err != nil || len(attn) != 2 {
		return false
	}
	wg, lanes, elems := faReduceGroup(int(fa.Ne[0]), int(attn[0].Params.(flashAttnParams).Splits), l)
	// the reduction's workgroup memory: the lanes' max and sum, each invocation's column,
	// the row, and the quantization's exchange (two 8-byte vectors an invocation)
	return elems > 0 && wg%int(wpg) == 0 && 8*lanes+4*wg+4*int(fa.Ne[0])+16*wg <= l.workgroupStorage()
}

// faProduct returns the integer mat-vec's dispatches of the product mm on XQ (the
// columns' quantizing dispatch, then the product's) where it reads mm's weights, not
// Q8_0 (which it takes for output heads only): every such product, also those that take
// another kernel otherwise (below the integer mat-vec's thresholds, and fewer rows than
// swarXQMinRows, which quantize their column in the kernel), as their column comes
// quantized for free. On an H100 (GPU time per decode graph, GGML_WGPU_PROFILE=1
// bench -fa on -p 0 -n 64, two alternating runs each, the row off -> on at the
// thresholds -> on for every product): a 1B Q4_K (its 2048 x 2048 products below the
// thresholds) 983.1, 984.6 -> 982.9, 985.1 -> 972.8, 974.5 µs; a 1B Q4_0 920.7, 923.9 ->
// 923.1, 923.4 -> 920.2, 919.8.
func faProduct(mm *tensor.Tensor, l *Limits) ([]Dispatch, bool) {
	if mm.Src[0].Type == tensor.Q8_0 {
		return nil, false
	}
	c := *l
	c.SwarXQ = true
	if c.SwarMin == 0 {
		c.SwarMin = 1
	}
	ds, err := lowerMulMat(mm, &c)
	if err != nil || len(ds) != 2 || ds[0].Spec.Kernel != "mul_mat_vec_q4_act" {
		return nil, false
	}
	return ds, true
}

// lowerFlashAttnMulMat lowers the three nodes as the attention's split dispatch, the
// reduction quantizing its rows after the partial results in scratch memory, and the
// product on them.
func lowerFlashAttnMulMat(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	fa, mm := n[0], n[2]
	attn, err := lowerFlashAttn(fa, l)
	if err != nil {
		return nil, err
	}
	prod, ok := faProduct(mm, l)
	if len(attn) != 2 || !ok {
		return nil, fmt.Errorf("flash_attn+view+mul_mat: %d attention dispatches, product on XQ %v", len(attn), ok)
	}
	split := attn[0]
	part := split.Tensors[len(split.Tensors)-1]
	cols := prod[0].Tensors[1]
	x := scratchAt(cols.Type, scratchEnd(part), cols.Ne[0])
	reduce := faReduce(fa, split.Params.(flashAttnParams), part, &xqOut{cols: x, weights: mm.Src[0]}, l)
	return []Dispatch{split, reduce, onColumn(prod[1], cols, x)}, nil
}

// onColumn returns the product's dispatch mv (of faProduct) reading its quantized column
// from x, which another dispatch writes, instead of cols, its own quantizing dispatch's.
func onColumn(mv Dispatch, cols, x *tensor.Tensor) Dispatch {
	mv.Tensors = append([]*tensor.Tensor(nil), mv.Tensors...)
	for i, t := range mv.Tensors {
		if t == cols {
			mv.Tensors[i] = x
		}
	}
	return mv
}
