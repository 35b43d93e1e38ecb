package ops

import (
	"math"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// SOFT_MAX: dst = softmax(src0 * scale + slope * mask) per row, f32; optional mask (src1,
// F32 or F16, broadcast over rows); ALiBi slopes when max_bias > 0; optional sinks (src2, F32,
// one logit per head i2 that joins each row's normalisation without an output of its own).

type softMaxParams struct {
	Ne, A, D        [4]uint32 // dst shape; src0, dst strides
	Me, M           [4]uint32 // mask shape (all 1 without a mask) and strides
	Rows, NHeadLog2 uint32
	Scale, MaxBias  float32
	L0, L1          float32 // log2 of the ALiBi slope bases (0 without ALiBi: every slope is 1)
	K               uint32  // the sinks' element stride
}

func init() {
	describeFamily("SOFT_MAX", "F32; mask F32 or F16", "scale, broadcast mask, ALiBi (max_bias), sinks")
	register(tensor.OpSoftMax, family{supports: supportsSoftMax, lower: lowerSoftMax, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{
			node(tensor.OpSoftMax, f32(7, 2), []int32{int32(f32bits(1))}, f32(7, 2)),
			node(tensor.OpSoftMax, f32(7, 2), []int32{int32(f32bits(1))}, f32(7, 2), contiguous(tensor.F16, 7, 2)), // masked
			node(tensor.OpSoftMax, f32(7, 2, 3), []int32{int32(f32bits(1))}, f32(7, 2, 3), nil, f32(3)),            // sinks
		}
	}})
}

func supportsSoftMax(t *tensor.Tensor, _ *Limits) bool {
	a, m := t.Src[0], t.Src[1]
	if a == nil || a.Type != tensor.F32 || t.Type != tensor.F32 || !tensor.SameShape(a, t) {
		return false
	}
	if k := t.Src[2]; k != nil && (k.Type != tensor.F32 || k.Ne[0] != a.Ne[2] || !elementAligned(k)) {
		return false
	}
	if m != nil {
		if !isFloat(m.Type) || m.Ne[0] != a.Ne[0] || m.Ne[1] < a.Ne[1] || !elementAligned(m) || m.Nb[0] != m.TypeSize() {
			return false
		}
		for i := 2; i < 4; i++ {
			if m.Ne[i] == 0 || a.Ne[i]%m.Ne[i] != 0 {
				return false
			}
		}
	}
	return elementAligned(a) && elementAligned(t)
}

func lowerSoftMax(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a, m := t.Src[0], t.Src[1]
	ne := dims(t)
	rows := uint64(ne[1]) * uint64(ne[2]) * uint64(ne[3])
	p := softMaxParams{
		Ne: ne, A: strides(a), D: strides(t), Me: [4]uint32{1, 1, 1, 1},
		Rows:    uint32(rows),
		Scale:   math.Float32frombits(uint32(t.Params[0])),
		MaxBias: math.Float32frombits(uint32(t.Params[1])),
	}
	if p.MaxBias > 0 {
		nHead := uint32(ne[2])
		nLog2 := uint32(1) << uint32(math.Floor(math.Log2(float64(nHead))))
		p.NHeadLog2 = nLog2
		// ggml's bases m0 and m1 in f32, as the CPU computes them; the kernel raises them
		// to a power as exp2(log2(base) * power).
		m0 := float32(math.Pow(2, -float64(p.MaxBias)/float64(nLog2)))
		m1 := float32(math.Pow(2, -float64(p.MaxBias/2)/float64(nLog2)))
		p.L0, p.L1 = float32(math.Log2(float64(m0))), float32(math.Log2(float64(m1)))
	}
	defs := map[string]string{"MASK": "0"}
	operands := []*tensor.Tensor{a, t}
	ops := []wgslOperand{in("src0", a), out("dst", t)}
	if m != nil {
		defs["MASK"] = "1"
		p.Me, p.M = dims(m), strides(m)
		operands = append(operands, m)
		ops = append(ops, in("mask", m))
	}
	defs["SINKS"] = "0"
	if k := t.Src[2]; k != nil {
		defs["SINKS"] = "1"
		p.K = strides(k)[0]
		operands = append(operands, k)
		ops = append(ops, in("sinks", k))
	}
	s := spec("soft_max", rowGroup(t.Ne[0], l), p, defs, ops...)
	return []Dispatch{{Spec: s, Tensors: operands, Params: p, Grid: grid1D(rows, l)}}, nil
}
