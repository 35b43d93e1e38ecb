package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// The prompt kernel (wgsl/kernels/flash_attn_tile.wgsl): a workgroup of BR*BC/16
// invocations takes BR query rows of one KV head against tiles of BC KV positions; Q
// (transposed, f32), the tile's scores and a staging buffer for K and V chunks sit in
// workgroup memory, each invocation computes a 4 x 4 block of scores and 4 rows of NV
// vec4 output columns in registers.

// faTiles is a shape of the prompt kernel.
type faTiles struct {
	br, bc int // query rows per workgroup, KV positions per tile
	dc     int // K elements staged at a time (divides D, a multiple of 8)
	vc     int // V rows staged at a time (a power of two dividing bc)
	nv     int // output vec4 columns per invocation and row
}

// faTileShapes are the (BR, BC) shapes tried, in order of preference.
var faTileShapes = [][2]int{{32, 64}, {16, 64}, {32, 32}, {16, 32}}

// faMaxKPre and faMaxVPreTile bound the K staging items (32 floats each) and V staging
// items (8 floats) an invocation loads ahead.
const (
	faMaxKPre     = 2
	faMaxVPreTile = 8
)

// faTileTargetGroups is the workgroups below which the prompt kernel splits the KV
// sequence too; faTileSplitMin is the fewest tiles a split takes.
const (
	faTileTargetGroups = 256
	faTileSplitMin     = 4
)

// faMaxAcc bounds the output accumulators per invocation (4 rows of NV vec4).
const faMaxAcc = 32

// faTileStorage returns the workgroup memory in bytes of the tiled kernel for head size d,
// wg invocations and a staging buffer of kvb floats.
func faTileStorage(d, br, bc, wg, kvb int) int {
	return 4 * (d*br + bc*br + kvb + wg + 2*br + 2)
}

// wg returns the workgroup size.
func (tl faTiles) wg() int { return tl.br * tl.bc / 16 }

// faTileFit sizes the staging chunks of shape (br, bc) for head sizes d and dv under the
// workgroup memory limit; ok is false when the shape does not fit with K chunks of at least
// 16 elements (32 when strict) and V chunks of at least 4 rows (8 when strict): smaller
// chunks cost more barriers than the previous kernel's.
func faTileFit(d, dv, br, bc int, l *Limits, strict bool) (faTiles, bool) {
	limit := l.workgroupStorage()
	groupLimit := l.MaxGroupSize
	if groupLimit <= 0 {
		groupLimit = 256
	}
	tl := faTiles{br: br, bc: bc, nv: (dv/4 + bc/4 - 1) / (bc / 4)}
	if tl.wg() > groupLimit || 4*tl.nv > faMaxAcc {
		return tl, false
	}
	budget := (limit - faTileStorage(d, br, bc, tl.wg(), 0)) / 4 // floats for the staging buffer
	for k := d / 8; k >= 1; k-- {
		if (d/8)%k == 0 && 8*k*bc <= budget {
			tl.dc = 8 * k
			break
		}
	}
	for vc := bc; vc >= 1; vc /= 2 {
		if vc*dv <= budget {
			tl.vc = vc
			break
		}
	}
	minDC, minVC := min(d, 16), 4
	if strict {
		minDC, minVC = min(d, 32), 8
	}
	if tl.dc < minDC || tl.vc < minVC {
		return tl, false
	}
	return tl, true
}

// faPromptTiles chooses the prompt kernel's shape for head sizes d and dv: the first of
// faTileShapes whose chunks are not small, else the first that fits at all; ok is false
// when the kernel does not apply (head sizes such as 576/512, whose Q rows leave no room:
// flash_attn.wgsl then computes the prompt).
func faPromptTiles(d, dv int64, l *Limits) (faTiles, bool) {
	for _, strict := range []bool{true, false} {
		for _, s := range faTileShapes {
			if tl, ok := faTileFit(int(d), int(dv), s[0], s[1], l, strict); ok {
				return tl, true
			}
		}
	}
	return faTiles{}, false
}

// lowerFlashAttnTile lowers a prompt to the tiled kernel (p: the parameters without the
// tiling).
func lowerFlashAttnTile(t *tensor.Tensor, p flashAttnParams, tl faTiles, l *Limits) []Dispatch {
	q, k, v, m, s := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4]
	d, dv := int(q.Ne[0]), int(v.Ne[0])
	wg := tl.wg()
	p.Groups = (p.Rows + uint32(tl.br) - 1) / uint32(tl.br)
	defs := map[string]string{
		"BR": fmt.Sprint(tl.br), "BC": fmt.Sprint(tl.bc), "HD": fmt.Sprint(d), "HDV": fmt.Sprint(dv),
		"DC": fmt.Sprint(tl.dc), "VC": fmt.Sprint(tl.vc), "NV": fmt.Sprint(tl.nv),
		"NO": fmt.Sprint(4 * tl.nv), "VCLAMP": "0",
		"QT": fmt.Sprint(d * tl.br / 4), "PT": fmt.Sprint(tl.bc * tl.br / 4), "RED": fmt.Sprint(wg),
		"KVB":   fmt.Sprint(max(tl.dc*tl.bc, tl.vc*dv) / 4),
		"VEC_K": "0", "VEC_V": "0", "MASK": "0", "SINKS": "0", "SPLIT": "0",
	}
	// Loads ahead (the next K chunk during the last V chunk, the first V chunk during the
	// softmax) where the registers they take are few.
	ki := (tl.bc/4*tl.dc/8 + wg - 1) / wg
	vi := (tl.vc*dv/8 + wg - 1) / wg
	defs["PRE"], defs["KI"], defs["VI"] = "0", fmt.Sprint(ki), fmt.Sprint(vi)
	if ki <= faMaxKPre && vi <= faMaxVPreTile {
		defs["PRE"] = "1"
	}
	if dv/4%(tl.bc/4) != 0 {
		defs["VCLAMP"] = "1" // some invocations' last output column is past Dv
	}
	ops, tensors := faOperands(&p, q, k, v, m, defs)
	groups := uint64(p.Groups) * uint64(p.NHeadKV) * uint64(p.NSeq)
	// Few row tiles (tens of queries) over a long KV sequence: the sequence is split over
	// workgroups too, a few tiles each at least, as for decoding.
	tiles := (p.NKV + uint32(tl.bc) - 1) / uint32(tl.bc)
	splits := uint32(1)
	dstRows := uint64(p.NHead) * uint64(p.NQ) * uint64(p.NSeq)
	if groups < faTileTargetGroups && tiles >= 2*faTileSplitMin {
		splits = min(uint32((faTileTargetGroups+groups-1)/groups), tiles/faTileSplitMin, faMaxSplits)
		for splits > 1 && 4*dstRows*uint64(splits)*uint64(p.Dv+2)+256 > l.MaxBinding {
			splits /= 2
		}
	}
	p.Chunk = (tiles + splits - 1) / splits * uint32(tl.bc)
	p.Splits = max((p.NKV+p.Chunk-1)/p.Chunk, 1)
	grid := grid1D(groups, l)
	grid[2] = p.Splits
	if p.Splits == 1 {
		if s != nil {
			defs["SINKS"] = "1"
			ops = append(ops, in("sinks", s))
			tensors = append(tensors, s)
		}
		sp := spec("flash_attn_tile", wg, p, defs, append(ops, out("dst", t))...)
		return []Dispatch{{Spec: sp, Tensors: append(tensors, t), Params: p, Grid: grid}}
	}
	part := scratch(dstRows * uint64(p.Splits) * uint64(p.Dv+2))
	defs["SPLIT"] = "1"
	sp := spec("flash_attn_tile", wg, p, defs, append(ops, out("part", part))...)
	return []Dispatch{
		{Spec: sp, Tensors: append(tensors, part), Params: p, Grid: grid},
		faReduce(t, p, part, nil, l),
	}
}
