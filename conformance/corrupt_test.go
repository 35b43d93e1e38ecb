package conformance

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// blockScales gives, for each quantized format whose block holds an f16 scale d, the byte
// offset of d in the block (ggml-common.h): at the start for the 32-element formats, Q4_K,
// Q5_K and the IQ formats with one, after the quants for Q2_K (d, dmin at 80), Q3_K (108),
// Q6_K (208) and the ternary formats (TQ1_0 52, TQ2_0 64).
var blockScales = map[tensor.Type]int{
	tensor.Q4_0: 0, tensor.Q4_1: 0, tensor.Q5_0: 0, tensor.Q5_1: 0, tensor.Q8_0: 0,
	tensor.Q1_0: 0, tensor.Q2_0: 0,
	tensor.Q2_K: 80, tensor.Q3_K: 108, tensor.Q4_K: 0, tensor.Q5_K: 0, tensor.Q6_K: 208,
	tensor.IQ2_XXS: 0, tensor.IQ2_XS: 0, tensor.IQ2_S: 0, tensor.IQ3_XXS: 0, tensor.IQ3_S: 0,
	tensor.IQ1_S: 0, tensor.IQ4_NL: 0, tensor.IQ4_XS: 0,
	tensor.TQ1_0: 52, tensor.TQ2_0: 64,
}

// The corrupt rows of a corruptScales weight: one block's d set to NaN in row corruptNaN,
// to +Inf in row corruptInf and to -Inf in row corruptNegInf; the other rows are intact.
const (
	corruptNaN    = 1
	corruptInf    = 3
	corruptNegInf = 5
	corruptRows   = 8
	corruptK      = 512
	// corruptExperts is the experts of the MUL_MAT_ID cases, each with the same corrupt
	// rows; half of them are used by the token.
	corruptExperts = 4
)

// corruptScales returns the patch that writes NaN, +Inf and -Inf (as f16) over the d of
// one block of rows corruptNaN, corruptInf and corruptNegInf of a contiguous weight of type
// ty with rows of corruptK elements: the second block, the last and the first.
func corruptScales(ty tensor.Type) func(raw []byte) {
	bb, be := ty.Size(), ty.BlockElems()
	perRow := corruptK / be
	at := func(row, blk int) int { return (row*perRow+blk)*bb + blockScales[ty] }
	return func(raw []byte) {
		binary.LittleEndian.PutUint16(raw[at(corruptNaN, 1%perRow):], 0x7e00)
		binary.LittleEndian.PutUint16(raw[at(corruptInf, perRow-1):], 0x7c00)
		binary.LittleEndian.PutUint16(raw[at(corruptNegInf, 0):], 0xfc00)
	}
}

// corruptCases are, per format of blockScales, products of a weight with corrupt scales
// by 1 column (the mat-vec kernels), 4 (the several-column mat-vec) and 9 (the tiled
// kernel), a decoding token's MUL_MAT_ID of corruptExperts such weights (the mat-vec
// kernels' expert forms), and GET_ROWS of its rows.
func corruptCases() []*Case {
	var cs []*Case
	for _, ty := range slices.Sorted(maps.Keys(blockScales)) {
		weight := func(b *Builder) ggml.Tensor {
			w := b.New("w", ty, corruptK, corruptRows)
			b.Patch(w, corruptScales(ty))
			return w
		}
		for _, n := range []int64{1, 4, 9} {
			cs = append(cs, &Case{Name: fmt.Sprintf("MUL_MAT(type_a=%s,corrupt_scales,n=%d)", ty, n), Op: "MUL_MAT",
				Types: ty.String() + " x f32", MaxNMSE: MulMatMaxNMSE,
				Build: func(b *Builder) ggml.Tensor {
					w := weight(b)
					return b.L.MulMat(b.Ctx, w, b.New("x", f32, corruptK, n))
				}})
		}
		cs = append(cs, &Case{Name: fmt.Sprintf("MUL_MAT_ID(type_a=%s,corrupt_scales,n=1)", ty), Op: "MUL_MAT_ID",
			Types: ty.String() + " x f32", MaxNMSE: MulMatMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				as := b.New("as", ty, corruptK, corruptRows, corruptExperts)
				b.Patch(as, func(raw []byte) {
					per := len(raw) / corruptExperts
					for e := range corruptExperts {
						corruptScales(ty)(raw[e*per : (e+1)*per])
					}
				})
				ids := b.New("ids", tensor.I32, corruptExperts/2, 1)
				b.Init(ids, cyclicRows(1, corruptExperts))
				return b.L.MulMatID(b.Ctx, as, b.New("x", f32, corruptK, 1, 1), ids)
			}})
		cs = append(cs, &Case{Name: fmt.Sprintf("GET_ROWS(type=%s,corrupt_scales)", ty), Op: "GET_ROWS",
			Types: ty.String(), MaxNMSE: 1e-7,
			Build: func(b *Builder) ggml.Tensor {
				w := weight(b)
				rows := b.New("rows", tensor.I32, corruptRows)
				b.Init(rows, cyclicRows(corruptNaN, corruptRows))
				return b.L.GetRows(b.Ctx, w, rows)
			}})
	}
	return cs
}

// cyclicRows fills row indices first, first + 1, .. modulo rows.
func cyclicRows(first, rows int) InitFunc {
	return func(_ *rand.Rand, n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32((i + first) % rows)
		}
		return v
	}
}

// corruptProblems compares a MUL_MAT result with corrupt scales against the CPU's: every
// result of the row with the NaN scale NaN on both, those of the rows with infinite
// scales not finite on both (an infinity, or NaN where an infinity met a zero: the CPU
// multiplies quantized activations, so which of the two can differ), the others finite
// on both and within maxNMSE.
func corruptProblems(ref, got []float32, maxNMSE float64) []string {
	var problems []string
	var fr, fg []float32
	for i := range ref {
		row := i % corruptRows
		r, g := ref[i], got[i]
		cr, cg := fpClass(r), fpClass(g)
		switch row {
		case corruptNaN:
			if cr != "NaN" || cg != "NaN" {
				problems = append(problems, fmt.Sprintf("result %d (NaN scale): CPU %v, WGPU0 %v", i, r, g))
			}
		case corruptInf, corruptNegInf:
			if cr == "finite" || cg == "finite" {
				problems = append(problems, fmt.Sprintf("result %d (infinite scale): CPU %v, WGPU0 %v", i, r, g))
			}
		default:
			if cr != "finite" || cg != "finite" {
				problems = append(problems, fmt.Sprintf("result %d (intact row): CPU %v, WGPU0 %v", i, r, g))
				continue
			}
			fr, fg = append(fr, r), append(fg, g)
		}
	}
	if nmse, err := NMSE(fr, fg); err != nil || !(nmse <= maxNMSE) {
		problems = append(problems, fmt.Sprintf("intact rows: NMSE %.3g > %.0g (%v)", nmse, maxNMSE, err))
	}
	return problems
}

// TestCorruptScales checks that NaN and infinite block scales propagate as on the CPU
// backend, through every MUL_MAT kernel and GET_ROWS, for every format with an f16 scale
// (corruptCases); and, in a child process whose library takes the integer mat-vec for any
// size (GGML_WGPU_SWAR_MIN=1), through that kernel.
func TestCorruptScales(t *testing.T) {
	for _, swarMin := range []string{"", "1"} {
		t.Run("swar_min="+swarMin, func(t *testing.T) {
			t.Setenv("GGML_WGPU_SWAR_MIN", swarMin)
			isolated(t, func(t *testing.T) { corruptScalesRun(t) })
		})
	}
}

func corruptScalesRun(t *testing.T) {
	env, _, _, _ := openDevice(t)
	r := env.Runner
	for _, c := range corruptCases() {
		got, unsupported, err := r.eval(c, r.Test, true)
		if unsupported != "" || err != nil {
			t.Errorf("%s: WGPU0: %v %s", c.Name, err, unsupported)
			continue
		}
		ref, _, err := r.eval(c, r.Ref, false)
		if err != nil {
			t.Errorf("%s: CPU: %v", c.Name, err)
			continue
		}
		var problems []string
		if c.Op == "GET_ROWS" {
			problems, _ = compareSpecial(ref, got, corruptK, c.MaxNMSE)
		} else {
			problems = corruptProblems(ref, got, c.MaxNMSE)
		}
		for i, p := range problems {
			if i == 4 {
				t.Errorf("%s: ... %d problems in all", c.Name, len(problems))
				break
			}
			t.Errorf("%s: %s", c.Name, p)
		}
	}
}

// mxfp4BigCases are MXFP4 weights whose E8M0 exponents in the even rows are 241 to 246
// (scales 2^113 to 2^118, where the kernels' routine takes its values' 2^15 first: the
// scale times 2^15 would overflow), by 1, 4 and 9 columns of small activations (so that
// the sums stay finite; not so small that the CPU backend's f16 scales of its 8-bit
// activations underflow) and GET_ROWS of every row.
func mxfp4BigCases() []*Case {
	const k, rows = 512, 8
	weight := func(b *Builder) ggml.Tensor {
		w := b.New("w", tensor.MXFP4, k, rows)
		b.Patch(w, func(raw []byte) {
			bb, per := tensor.MXFP4.Size(), k/tensor.MXFP4.BlockElems()
			for r := 0; r < rows; r += 2 {
				for j := 0; j < per; j++ {
					raw[(r*per+j)*bb] = byte(241 + (r*per+j)%6)
				}
			}
		})
		return w
	}
	var cs []*Case
	for _, n := range []int64{1, 4, 9} {
		cs = append(cs, &Case{Name: fmt.Sprintf("MUL_MAT(type_a=mxfp4,big_exponents,n=%d)", n), Op: "MUL_MAT",
			Types: "mxfp4 x f32", MaxNMSE: MulMatMaxNMSE,
			Build: func(b *Builder) ggml.Tensor {
				w := weight(b)
				x := b.New("x", f32, k, n)
				b.Init(x, Uniform(-1e-2, 1e-2))
				return b.L.MulMat(b.Ctx, w, x)
			}})
	}
	return append(cs, &Case{Name: "GET_ROWS(type=mxfp4,big_exponents)", Op: "GET_ROWS", Types: "mxfp4", MaxNMSE: 1e-7,
		Build: func(b *Builder) ggml.Tensor {
			w := weight(b)
			ids := b.New("rows", tensor.I32, rows)
			b.Init(ids, cyclicRows(0, rows))
			return b.L.GetRows(b.Ctx, w, ids)
		}})
}

// TestMXFP4BigExponents runs mxfp4BigCases against the CPU backend: the results are
// finite and within the usual NMSE.
func TestMXFP4BigExponents(t *testing.T) {
	runSuite(t, openTestEnv(t), mxfp4BigCases())
}
