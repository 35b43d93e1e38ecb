// Package ops lowers ggml nodes into compute dispatches, one file per op family: each
// registers, for its ops, what it supports, how it lowers, and example nodes that cover its
// kernel variants (the compile test builds them all). Fusions of consecutive nodes are the
// rows of one table (fusion.go), which the scheduler tries at every node.
package ops

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"sort"
	"strings"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// Dispatch is one compute dispatch: the pipeline to run, the tensors bound to its storage
// operands (same order as Spec.Operands), the op's parameters and the workgroup grid.
type Dispatch struct {
	Spec    *wgsl.Spec
	Tensors []*tensor.Tensor
	Params  any
	Grid    [3]uint32
}

// withOutput returns d with define set to "1" and one more written operand, name bound to
// t: the form of a kernel that a fusion row makes store a further result (d's spec and
// tensors are copied, not modified).
func (d Dispatch) withOutput(define, name string, t *tensor.Tensor) Dispatch {
	s := *d.Spec
	s.Defines = maps.Clone(s.Defines)
	s.Defines[define] = "1"
	s.Operands = append(append([]wgslOperand{}, s.Operands...), out(name, t))
	d.Spec = &s
	d.Tensors = append(append([]*tensor.Tensor{}, d.Tensors...), t)
	return d
}

// Limits are the device limits lowering must respect, and tuning choices.
type Limits struct {
	MaxBinding      uint64 // maxStorageBufferBindingSize
	MaxGroupsPerDim uint32
	MaxGroupSize    int // maxComputeInvocationsPerWorkgroup (0: assume 256)
	// MaxWorkgroupStorage is maxComputeWorkgroupStorageSize in bytes (0: assume WebGPU's
	// default, 16384).
	MaxWorkgroupStorage int
	// MatVecRows and MatVecWG override the vectorised mat-vec kernel's rows per workgroup
	// and workgroup size (0: chosen from the shape).
	MatVecRows, MatVecWG int
	// MatVecNoUnits turns off the mat-vec kernel's unit reads of quantized weights (for
	// comparisons): they are then read as any eight elements.
	MatVecNoUnits bool
	// DequantPromptOff makes the prompt kernel read quantized weights directly, each
	// 8-element group dequantized in its inner loop, instead of from F16 chunks
	// dequantized first (mul_mat_dequant.go), for comparisons.
	DequantPromptOff bool
	// DequantChunkBytes caps the F16 rows of one dequantized weight chunk (0: 32 MiB).
	DequantChunkBytes uint64
	// MulMatIDMaxTokens makes MUL_MAT_IDs of up to this many tokens take the mat-vec and
	// more the routed prompt kernel (0: by the pairs per expert, idMatVecPairs), and
	// MulMatIDGrouped keeps more tokens on the grouped tiled kernel (mul_mat_id.wgsl)
	// instead of the routed prompt kernel, for comparisons and tests.
	MulMatIDMaxTokens int
	MulMatIDGrouped   bool
	// MulMatIDCols overrides the routed prompt kernel's columns per workgroup (32, 64 or
	// 128; 0: chosen from the pairs per expert), for comparisons.
	MulMatIDCols int
	// MaxStorageBuffers is the most storage bindings a dispatch may have (the device's
	// maxStorageBuffersPerShaderStage, within the executor's own bound), for kernels that
	// bind more than WebGPU's default of 8 (0: not bounded here; compiling the plan checks
	// it).
	MaxStorageBuffers int
	// SwarOff turns off the integer mat-vec of 4-bit and Q6_K weights (mul_mat_vec_q4.go),
	// and SwarRows and SwarWG override its rows per workgroup and workgroup size (0: the
	// defaults), and SwarMin the fewest weights (M x K) a product needs to take it (0:
	// swarMinDefault), for comparisons and tuning (temporary). SwarCols caps the src1
	// columns it takes (0: swarMaxCols; 1: one column only, as before its several-column
	// form), and SwarColsMin is the fewest weights a product of several columns needs
	// (0: the one-column threshold).
	SwarOff          bool
	SwarRows, SwarWG int
	SwarMin          int
	SwarCols         int
	SwarColsMin      int
	// SwarXQ makes every single product of one column that takes the integer mat-vec take
	// its XQ form (the column quantized by a dispatch of its own), Q6_K's included, where
	// by default only those of swarXQMinRows rows do (Q6_K's: q6kXQMinRows), for
	// comparisons and tests.
	SwarXQ bool
	// SwarXQMinRows overrides swarXQMinRows, the fewest rows of a single product that takes
	// the XQ form (0: the default), for comparisons.
	SwarXQMinRows int
	// MatMultiOff keeps several products of one activation in their own dispatches (no
	// mul_mat_multi), for comparisons.
	MatMultiOff bool
	// Q6KOff turns off the Q6_K mat-vec (mul_mat_vec_q6k.go), and Q6KRows and Q6KWG
	// override its rows per workgroup and workgroup size (0: the defaults), for
	// comparisons and tuning (temporary).
	Q6KOff         bool
	Q6KRows, Q6KWG int
	// Q6KPairsOff keeps the Q6_K mat-vec from taking blocks a pair at a time, and
	// Q6KPairsMin overrides the fewest weights of a matrix that takes them so (0: the
	// default), for comparisons and tests.
	Q6KPairsOff bool
	Q6KPairsMin int
	// Q6KXQMinRows overrides q6kXQMinRows, the fewest rows of a single Q6_K product that
	// takes the integer mat-vec on XQ (0: the default), for comparisons.
	Q6KXQMinRows int
	// Q6KCols overrides the most src1 columns the Q6_K mat-vec takes (0: the default, 8;
	// 1: one column only), for comparisons.
	Q6KCols int
	// Q6KSwarCols and Q6KSwarMinCols override the most (0: the default, 8; 1: none) and
	// the fewest (0: the default, 3) src1 columns of a Q6_K product that the integer
	// mat-vec's Q6K form takes (q6kSwarCols), for comparisons and tests (temporary).
	Q6KSwarCols    int
	Q6KSwarMinCols int
	// Q6KHold, set, replaces the columns whose activations the Q6_K mat-vec's
	// several-column kernel holds at a time (q6kHold; -1: every column's, read first),
	// for comparisons (temporary).
	Q6KHold int
	// StorageAlign is the device's minStorageBufferOffsetAlignment, where a binding may
	// start (0: unknown).
	StorageAlign uint32
	// Q4KWideOff keeps Q4_K products off the mat-vec with 16-byte weight loads
	// (mul_mat_vec_q4k.go), for comparisons.
	Q4KWideOff bool
	// NormXQOff keeps norms from quantizing their result for the integer mat-vec after
	// them (the fusion rows add+norm+mul+gate and add+norm+mul+qkv: norm_gate.go).
	NormXQOff bool
	// FAXQOff keeps split flash attention from quantizing its result for the integer
	// mat-vec after it (the fusion row flash_attn+view+mul_mat: flash_attn_xq.go).
	FAXQOff bool
	// FADecodeRows bounds the query rows a decoding flash attention workgroup takes (0:
	// the rows sharing a KV head, at most 8), and FATargetGroups overrides faTargetGroups,
	// for comparisons.
	FADecodeRows, FATargetGroups int
	// RopeKVOff keeps the ROPEs and the KV store out of the products before them (the
	// fusion row add+norm+mul+qkv+rope+set_rows: norm_qkv_rope.go), for comparisons.
	RopeKVOff bool
	// QKVCols, set, lets the fusion row add+norm+mul+qkv take up to this many columns
	// (tokens; at most the integer mat-vec's) where it takes one by default
	// (normQKVCols), for comparisons and tests.
	QKVCols int
	// BigGroups, set, makes the prompt kernel split K by the workgroup count rule with
	// this many in place of matBigGroups (256) where ComputeUnits would choose the split
	// by waves, for comparisons and tuning (temporary).
	BigGroups int
	// GateTailOff leaves the down product to quantize its own column instead of the
	// feed-forward gate before it (the fusion row add+norm+mul+gate+down: gate_tail.go),
	// for comparisons.
	GateTailOff bool
	// GateTailGroups and GateTailRows, set, replace the bounds of the gate forms that
	// row takes (gateTailMaxGroups workgroups at most, gateTailRows rows a workgroup at
	// least), for comparisons (temporary).
	GateTailGroups, GateTailRows int
	// ComputeUnits is the device's multiprocessor count where it can be told (NVIDIA's
	// SMs; 0: unknown), from which the prompt kernel's split of K is chosen by waves
	// (bigSplitsByWaves).
	ComputeUnits uint32
}

// bigGroups returns BigGroups, or matBigGroups where unset.
func (l *Limits) bigGroups() uint64 {
	if l.BigGroups <= 0 {
		return matBigGroups
	}
	return uint64(l.BigGroups)
}

// workgroupStorage returns MaxWorkgroupStorage, or WebGPU's default (16384 bytes) where
// unset.
func (l *Limits) workgroupStorage() int {
	if l.MaxWorkgroupStorage <= 0 {
		return 16384
	}
	return l.MaxWorkgroupStorage
}

// groupsPerDim returns MaxGroupsPerDim, or WebGPU's default (65535) where unset.
func (l *Limits) groupsPerDim() uint32 {
	if l.MaxGroupsPerDim == 0 {
		return 65535
	}
	return l.MaxGroupsPerDim
}

// family is what each op file registers for an op.
type family struct {
	supports func(t *tensor.Tensor, l *Limits) bool
	lower    func(t *tensor.Tensor, l *Limits) ([]Dispatch, error)
	// examples returns nodes of the op, together covering every kernel variant its
	// lowering produces; the compile test lowers them and builds the kernels.
	examples func() []*tensor.Tensor
}

var (
	families = map[tensor.Op]family{}
	docs     []doc
)

// doc is one row of the supported-ops table.
type doc struct{ ops, types, notes string }

func register(op tensor.Op, f family) { families[op] = f }

func init() {
	describeFamily("NONE, VIEW, RESHAPE, PERMUTE, TRANSPOSE", "any", "no work: skipped")
}

// describeFamily adds a row to the supported-ops table (see Table).
func describeFamily(ops, types, notes string) { docs = append(docs, doc{ops, types, notes}) }

// Table returns the supported ops as a Markdown table, generated from the registrations
// (README.md embeds it; a test keeps the two equal).
func Table() string {
	rows := append([]doc(nil), docs...)
	sort.Slice(rows, func(i, j int) bool { return rows[i].ops < rows[j].ops })
	var b strings.Builder
	b.WriteString("| op | types | notes |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.ops, r.types, r.notes)
	}
	return b.String()
}

// Supports reports whether the node can be computed. It reads only the node and its
// sources' types, shapes and strides, never data or buffers.
func Supports(t *tensor.Tensor, l *Limits) bool {
	if t.Op.IsView() {
		return true
	}
	f, ok := families[t.Op]
	if !ok || !f.supports(t, l) {
		return false
	}
	if !fits(t, l) {
		return false
	}
	for _, s := range t.Src {
		if s != nil && !fits(s, l) {
			return false
		}
	}
	return true
}

// fits reports whether a tensor can be bound: its extent (plus the worst alignment slack)
// within one binding, and every index within 32 bits.
func fits(t *tensor.Tensor, l *Limits) bool {
	ext := t.Extent()
	return ext+256 <= l.MaxBinding && ext/max(t.TypeSize(), 1)*uint64(max(t.Type.BlockElems(), 1)) < math.MaxUint32/2
}

// Lower turns a node into dispatches. View-only nodes lower to nothing.
func Lower(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	if t.Op.IsView() || t.Empty() {
		return nil, nil
	}
	f, ok := families[t.Op]
	if !ok || !f.supports(t, l) || !fits(t, l) {
		return nil, fmt.Errorf("ops: unsupported node %q (%s)", t.Name, describe(t))
	}
	return f.lower(t, l)
}

func describe(t *tensor.Tensor) string {
	s := fmt.Sprintf("op %d type %d ne %v", t.Op, t.Type, t.Ne)
	for i, src := range t.Src {
		if src != nil {
			s += fmt.Sprintf(", src%d type %d ne %v", i, src.Type, src.Ne)
		}
	}
	return s
}

// format maps a tensor type to the storage format the kernels use.
func format(t tensor.Type) (wgsl.Format, bool) {
	switch t {
	case tensor.F32:
		return wgsl.F32, true
	case tensor.F16:
		return wgsl.F16, true
	case tensor.I32:
		return wgsl.I32, true
	case tensor.I64:
		return wgsl.I64, true
	case tensor.BF16:
		return wgsl.BF16, true
	}
	if t.Quantized() {
		// the formats of wgsl/formats.go, by ggml's type name
		return wgsl.QuantFormat(t.String())
	}
	return 0, false
}

// quantTypes are the quantized types the kernels read (see format), in enum order.
var quantTypes = func() []tensor.Type {
	var ts []tensor.Type
	for _, t := range tensor.Types() {
		if quantized(t) {
			ts = append(ts, t)
		}
	}
	return ts
}()

// quantNames lists quantTypes by their names in capitals (e.g. "Q4_0, Q4_1, ..."), for
// the README's op table.
func quantNames() string {
	names := make([]string, len(quantTypes))
	for i, t := range quantTypes {
		names[i] = strings.ToUpper(t.String())
	}
	return strings.Join(names, ", ")
}

// quantized reports whether t is of a quantized type the kernels read.
func quantized(t tensor.Type) bool {
	f, ok := format(t)
	return ok && f.Quantized()
}

// quantRows reports whether a quantized tensor can be read by its format's routine: rows
// of whole blocks (ne[0] a multiple of the block, nb[0] the block's bytes, as ggml lays
// quantized tensors out) and rows, planes and batches that start at whole blocks.
func quantRows(t *tensor.Tensor) bool {
	f, ok := format(t.Type)
	if !ok || !f.Quantized() || t.Type.BlockElems() != f.BlockElems() || int(t.TypeSize()) != f.BlockBytes() {
		return false
	}
	return t.Ne[0]%int64(f.BlockElems()) == 0 && t.Nb[0] == t.TypeSize() && elementAligned(t)
}

func mustFormat(t *tensor.Tensor) wgsl.Format {
	f, _ := format(t.Type)
	return f
}

// strides returns the tensor's strides in elements. For a quantized tensor (quantRows)
// they count the elements of whole blocks: element i of the operand is element i % E of
// its block i / E, E the block's elements (see wgsl's quantized accessors), so the row
// stride is nb[1] / block bytes * E and the stride along a row 1.
func strides(t *tensor.Tensor) [4]uint32 {
	es := t.TypeSize()
	if quantized(t.Type) {
		be := uint64(t.Type.BlockElems())
		return [4]uint32{1, uint32(t.Nb[1] / es * be), uint32(t.Nb[2] / es * be), uint32(t.Nb[3] / es * be)}
	}
	return [4]uint32{uint32(t.Nb[0] / es), uint32(t.Nb[1] / es), uint32(t.Nb[2] / es), uint32(t.Nb[3] / es)}
}

// elementAligned reports whether every stride is a whole number of elements.
func elementAligned(t *tensor.Tensor) bool {
	es := t.TypeSize()
	if es == 0 {
		return false
	}
	for _, nb := range t.Nb {
		if nb%es != 0 {
			return false
		}
	}
	return true
}

// dims returns the tensor's shape. With strides, it fills the [4]uint32 shape and stride
// fields of the parameter structs (vec4<u32> in the kernels).
func dims(t *tensor.Tensor) [4]uint32 {
	return [4]uint32{uint32(t.Ne[0]), uint32(t.Ne[1]), uint32(t.Ne[2]), uint32(t.Ne[3])}
}

// Workgroup sizes: element-wise kernels and the element-wise mat-vec.
const (
	wgElementwise = 256
	wgMatVec      = 64
)

// rowGroup is the workgroup size of a kernel that reduces rows of n elements with one
// workgroup per row (norms, softmax): about four elements per invocation, so a single row
// (decode) is not a long serial loop, between 64 and the device's largest workgroup.
func rowGroup(n int64, l *Limits) int {
	limit := l.MaxGroupSize
	if limit <= 0 {
		limit = 256
	}
	wg := 64
	for wg < 1024 && wg*2 <= limit && int64(wg)*4 < n {
		wg *= 2
	}
	return wg
}

// grid1D spreads n workgroups over x and y so that no dimension exceeds max.
func grid1D(n uint64, l *Limits) [3]uint32 {
	m := uint64(l.groupsPerDim())
	if n <= m {
		return [3]uint32{uint32(max(n, 1)), 1, 1}
	}
	y := (n + m - 1) / m
	if y <= m {
		return [3]uint32{uint32(m), uint32(y), 1}
	}
	z := (y + m - 1) / m
	return [3]uint32{uint32(m), uint32(m), uint32(z)}
}

// gridElems covers n elements with one invocation each.
func gridElems(n int64, l *Limits) [3]uint32 {
	return grid1D((uint64(n)+wgElementwise-1)/wgElementwise, l)
}

func spec(kernel string, wg int, params any, defines map[string]string, operands ...wgsl.Operand) *wgsl.Spec {
	var pt reflect.Type
	if params != nil {
		pt = reflect.TypeOf(params)
	}
	return &wgsl.Spec{Kernel: kernel, Defines: defines, Operands: operands, Params: pt, Workgroup: wg}
}

type wgslOperand = wgsl.Operand

func in(name string, t *tensor.Tensor) wgsl.Operand {
	return wgsl.Operand{Name: name, Type: mustFormat(t)}
}
func out(name string, t *tensor.Tensor) wgsl.Operand {
	return wgsl.Operand{Name: name, Type: mustFormat(t), Written: true}
}

// overlaps reports whether two tensors' bytes intersect. A fused kernel writes a result
// that ggml allocated after the fused pattern's first node ran, possibly over memory of
// that node's inputs; such a kernel must check its reads against its write.
func overlaps(a, b *tensor.Tensor) bool {
	if a.Loc.Buffer == 0 || a.Loc.Buffer != b.Loc.Buffer {
		return false
	}
	return a.Loc.Addr < b.Loc.Addr+b.Extent() && b.Loc.Addr < a.Loc.Addr+a.Extent()
}

// exactlyOver reports whether a's bytes are exactly b's: the same place and extent.
func exactlyOver(a, b *tensor.Tensor) bool {
	return a.Loc.Buffer != 0 && a.Loc == b.Loc && a.Extent() == b.Extent()
}

// sameLayout reports whether a and b are the same elements of the same memory.
func sameLayout(a, b *tensor.Tensor) bool {
	return a.Loc == b.Loc && a.Type == b.Type && a.Ne == b.Ne && a.Nb == b.Nb
}

func f32frombits(b uint32) float32 { return math.Float32frombits(b) }

func f32bits(f float32) uint32 { return math.Float32bits(f) }
