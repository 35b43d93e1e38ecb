package ops

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// The feed-forward gate that quantizes the down product's column: llama's ffn_inp,
// ffn_norm and gate (add+norm+mul+gate) followed by the down product of the SWIGLU's
// result. The gate form's workgroups (mul_mat_vec_q4.wgsl with TAIL) count the rows they
// store on an atomic counter per group of the down product's quantized column (the
// device's counters, wgsl.Spec.Counters); the workgroup that completes a group quantizes
// it there and then (xq_store) and sets its counter back to zero. The down product reads
// that column on XQ, in place of quantizing it itself: in a dispatch of its own from
// swarXQMinRows rows (one dependent dispatch less a layer), in each of its workgroups
// below (a 1B's 2048 rows).

// gateTailRows and gateTailMaxGroups bound the gate forms the row takes: two rows a
// workgroup or more, and at most 4096 workgroups. Every workgroup's count (an atomic add
// behind a device-wide store barrier) costs time, which grows with the workgroups, while
// the dispatch saved is one. H100, GPU time per 1B decode graph (GGML_WGPU_PROFILE=1 bench
// -fa on -p 0 -n 64 -r 2, two alternating runs, GGML_WGPU_GATE_TAIL=0 -> the row): Q4_K
// (8192 rows, two a workgroup: 4096 workgroups) 930.9, 929.5 -> 902.8, 902.7 µs; Q4_0 (one
// row a workgroup: 8192) 872.0, 874.6 -> 911.5, 911.5. An 8B's gates, where the row saves
// the down product's quantizing dispatch, lost too (GPU time per decode graph, another
// start, GGML_WGPU_GATE_TAIL_GROUPS and _ROWS lifting the bounds): Q4_K (14336 rows, two
// a workgroup: 7168 workgroups) 2,877.6, 2,879.0 -> 2,949.9, 2,948.5 µs; Q4_0 (one row:
// 14336 workgroups) 2,885.1, 2,876.3 -> 2,960.4, 2,952.8.
const (
	gateTailRows      = 2
	gateTailMaxGroups = 4096
)

// gateTailRow is the fusion row; it comes before add+norm+mul+gate.
var gateTailRow = Fusion{
	Name:    "add+norm+mul+gate+down",
	Ops:     append(append([]OpSet{}, addNormGateRow.Ops...), OpSet{tensor.OpMulMat}),
	Private: addNormGateRow.Private,
	Guard:   guardGateTail,
	Lower:   lowerGateTail,
	Example: func() []*tensor.Tensor { return gateTailNodes(tensor.Q4_K, 8192, 2048) },
}

// gateTailNodes returns normGateNodes(ty, m, k) followed by the down product of k x m
// weights of type ty by the SWIGLU's result.
func gateTailNodes(ty tensor.Type, m, k int64) []*tensor.Tensor {
	n := normGateNodes(ty, m, k)
	return append(n, node(tensor.OpMulMat, f32(k, 1), nil, contiguous(ty, m, k), n[5]))
}

// gateTailTypes are the weight formats the row takes (those its conformance cases cover).
var gateTailTypes = []tensor.Type{tensor.Q4_0, tensor.Q4_1, tensor.Q4_K}

// guardGateTail admits the seven nodes where add+norm+mul+gate admits the first six with
// a gate form within gateTailRows and gateTailMaxGroups (Limits' overrides), the down product reads
// the SWIGLU's result as its one column (whole rows, no batches), its weights are of the
// gate's type, one of gateTailTypes, and take the integer mat-vec on XQ (faProduct), the
// column's groups fit the counters, and not where Limits.GateTailOff.
func guardGateTail(n []*tensor.Tensor, l *Limits) bool {
	if l.GateTailOff || !guardAddNormGate(n[:6], l) {
		return false
	}
	glu, down := n[5], n[6]
	wg, wd := glu.Src[0].Src[0], down.Src[0]
	if down.Src[1] != glu || wd.Type != wg.Type || !slices.Contains(gateTailTypes, wd.Type) || !Supports(down, l) || overlaps(down, glu) {
		return false
	}
	head, err := lowerAddNormGate(n[:6], l)
	if err != nil {
		return false
	}
	gate := head[len(head)-1]
	least, most := gateTailRows, uint64(gateTailMaxGroups)
	if l.GateTailRows > 0 {
		least = l.GateTailRows
	}
	if l.GateTailGroups > 0 {
		most = uint64(l.GateTailGroups)
	}
	if rows, err := strconv.Atoi(gate.Spec.Defines["ROWS"]); err != nil || rows < least ||
		uint64(gate.Grid[0])*uint64(gate.Grid[1])*uint64(gate.Grid[2]) > most {
		return false
	}
	if glu.Ne[1] != 1 || glu.Ne[2] != 1 || glu.Ne[3] != 1 || glu.Type != tensor.F32 || glu.Nb[0] != 4 || down.Ne[1] != 1 {
		return false
	}
	group := int64(8 * swarWPG(wd))
	if group == 0 || glu.Ne[0]%group != 0 || glu.Ne[0]/group > wgsl.CounterSlots {
		return false
	}
	_, ok := faProduct(down, l)
	return ok
}

// lowerGateTail lowers the seven nodes as the norm's dispatch, the gate form's dispatch
// quantizing the down product's column after its own (in scratch memory) and the down
// product on it.
func lowerGateTail(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	head, err := lowerAddNormGate(n[:6], l)
	if err != nil {
		return nil, err
	}
	prod, ok := faProduct(n[6], l)
	if len(head) < 2 || !ok {
		return nil, fmt.Errorf("add+norm+mul+gate+down: %d dispatches, the down product on XQ %v", len(head), ok)
	}
	gate := head[len(head)-1]
	// the gate form's operands: src0, src0b, xq (its column), dst (the SWIGLU's result)
	in := gate.Tensors[2]
	cols := prod[0].Tensors[1]
	x := scratchAt(cols.Type, scratchEnd(in), cols.Ne[0])
	gate = gate.withOutput("TAIL", "xo", x)
	gate.Spec.Counters = true
	return append(head[:len(head)-1:len(head)-1], gate, onColumn(prod[1], cols, x)), nil
}
