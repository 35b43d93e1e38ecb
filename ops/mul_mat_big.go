package ops

import (
	"fmt"
	"os"
	"strings"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// The large tiled MUL_MAT with the next K slice prefetched into registers
// (wgsl/kernels/mul_mat_big2.wgsl), and split-K for products with few 128 x 128 tiles.

// EnvExperimentMM selects the large-tile MUL_MAT kernel. TEMPORARY: it exists so that one
// GPU run can compare the variants (wgpu-conformance -perf); once one is chosen, the
// variable and the variants not chosen go away. Values: "old" (mul_mat_big.wgsl: one
// buffer, no prefetch, 16-wide K slices; the 64 x 64 kernel below 256 tiles), or a
// variant of mul_mat_big2 (see bigVariants), optionally followed by "-nosplit" (few tiles
// keep the 64 x 64 kernel instead of splitting K). Unset or unknown: defaultMM.
const EnvExperimentMM = "GGML_WGPU_EXPERIMENT_MM"

// defaultMM is the variant used when EnvExperimentMM is unset.
const defaultMM = "a"

// bigVariant is one configuration of mul_mat_big2: the K slice width and whether the
// slices are double-buffered in shared memory.
type bigVariant struct {
	tk     int
	double bool
}

// bigVariants are the selectable variants: a, two 16-wide buffers (32 KiB); b, two 8-wide
// buffers (16 KiB; half of the invocations load each operand); c, one 32-wide buffer
// (32 KiB, two barriers per slice). A variant whose arrays and the format's tables exceed
// the device's workgroup memory falls back to b, then to the old kernels.
var bigVariants = map[string]bigVariant{
	"a": {tk: 16, double: true},
	"b": {tk: 8, double: true},
	"c": {tk: 32, double: false},
}

// matSplitMinK is the shortest part of K one split of a split-K product sums.
const matSplitMinK = 256

// matSplitMax bounds the splits of K.
const matSplitMax = 16

// experimentMM reads EnvExperimentMM: the variant's name ("old" or a key of bigVariants)
// and whether products with few tiles split K.
func experimentMM() (name string, split bool) {
	v := strings.ToLower(strings.TrimSpace(os.Getenv(EnvExperimentMM)))
	v, nosplit := strings.CutSuffix(v, "-nosplit")
	if _, ok := bigVariants[v]; !ok && v != "old" {
		v = defaultMM
	}
	return v, !nosplit
}

// bytes returns the workgroup memory of the variant's slice buffers.
func (v bigVariant) bytes() int {
	bufs := 1
	if v.double {
		bufs = 2
	}
	return 2 * bufs * v.tk * matBigTile * 4
}

// bigSplits returns how many parts of K a product of the given tiles (128 x 128 blocks
// times batches) splits into: enough for matBigGroups workgroups, each part at least
// matSplitMinK long, the partial sums within one binding and the grid; 1 when none.
func bigSplits(p mulMatParams, tiles uint64, l *Limits) uint32 {
	s := uint32(1)
	for tiles*uint64(s) < matBigGroups && s < matSplitMax {
		s *= 2
	}
	maxZ := uint64(l.MaxGroupsPerDim)
	if maxZ == 0 {
		maxZ = 65535
	}
	partial := func(s uint32) uint64 { return uint64(p.M) * uint64(p.N) * uint64(p.Batches) * uint64(s) }
	for s > 1 && (p.K/s < matSplitMinK || uint64(p.Batches)*uint64(s) > maxZ || 4*partial(s) > l.MaxBinding || partial(s) >= 1<<32) {
		s /= 2
	}
	return s
}

// lowerBigTiles lowers a product for the large tiled kernel mul_mat_big2 when the
// experiment's variant is one of it and the product is large enough: at least 128 rows
// and columns, and matBigGroups tiles, or K split into parts that give four times the
// workgroups of one tile each at least (split-K: the parts' partial sums go to scratch
// memory and mul_mat_big_reduce adds them). ok is false when the product takes the other
// kernels. defs and operands are tiledLoads' choice of loads.
func lowerBigTiles(p mulMatParams, defs map[string]string, operands []wgslOperand, tensors []*tensor.Tensor, l *Limits) (ds []Dispatch, ok bool) {
	name, split := experimentMM()
	v, known := bigVariants[name]
	if !known || p.M < matBigTile || p.N < matBigTile {
		return nil, false
	}
	limit := l.MaxWorkgroupStorage
	if limit <= 0 {
		limit = 16384
	}
	tables := wgsl.WorkgroupTableBytes(operands[0].Type)
	if v.bytes()+tables > limit {
		v = bigVariants["b"]
		if v.bytes()+tables > limit {
			return nil, false
		}
	}
	tiles := uint64((p.M+matBigTile-1)/matBigTile) * uint64((p.N+matBigTile-1)/matBigTile) * uint64(p.Batches)
	splits := uint32(1)
	if tiles < matBigGroups {
		if !split {
			return nil, false
		}
		splits = bigSplits(p, tiles, l)
		if splits < 4 && tiles*uint64(splits) < matBigGroups {
			return nil, false
		}
	}
	kdefs := map[string]string{}
	for k, d := range defs {
		kdefs[k] = d
	}
	bufs := 1
	if v.double {
		kdefs["DOUBLE"] = "1"
		bufs = 2
	}
	kdefs["TK"] = fmt.Sprint(v.tk)
	kdefs["SLICE"] = fmt.Sprint(v.tk * 32)
	kdefs["LEN"] = fmt.Sprint(v.tk * 32 * bufs)
	if v.tk == 8 {
		kdefs["HALF"] = "1"
	} else {
		kdefs["CPR"] = fmt.Sprint(v.tk / 8)
		kdefs["PER"] = fmt.Sprint(v.tk / 16)
		kdefs["RS"] = fmt.Sprint(256 / (v.tk / 8))
	}
	grid := [3]uint32{(p.M + matBigTile - 1) / matBigTile, (p.N + matBigTile - 1) / matBigTile, p.Batches}
	if splits == 1 {
		s := spec("mul_mat_big2", 256, p, kdefs, operands...)
		return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: grid}}, true
	}
	// Each split sums kper elements of K (whole slices); the last one may be shorter, and
	// no split is empty.
	tk := uint32(v.tk)
	kper := ((p.K+splits-1)/splits + tk - 1) / tk * tk
	splits = (p.K + kper - 1) / kper
	kdefs["SPLITK"], kdefs["SPLITS"], kdefs["KPER"] = "1", fmt.Sprint(splits), fmt.Sprint(kper)
	grid[2] = p.Batches * splits
	total := uint64(p.M) * uint64(p.N) * uint64(p.Batches)
	part := scratch(total * uint64(splits))
	kops := append(append([]wgslOperand{}, operands[:2]...), out("part", part))
	dst := tensors[2]
	s := spec("mul_mat_big2", 256, p, kdefs, kops...)
	r := spec("mul_mat_big_reduce", 256, p, map[string]string{"SPLITS": fmt.Sprint(splits)}, in("part", part), operands[2])
	return []Dispatch{
		{Spec: s, Tensors: []*tensor.Tensor{tensors[0], tensors[1], part}, Params: p, Grid: grid},
		{Spec: r, Tensors: []*tensor.Tensor{part, dst}, Params: p, Grid: grid1D((total+255)/256, l)},
	}, true
}
