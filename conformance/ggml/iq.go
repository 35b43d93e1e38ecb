package ggml

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// This file binds what the IQ formats need beyond the core set: whether ggml's quantizer
// demands an importance matrix for a type, and a type's own dequantization routine
// (ggml_get_type_traits(type)->to_float), which the WGSL lookup-table generator uses to
// read ggml's grids back. They are bound on first use, as in extra.go.

// iqFuncs are the lazily bound functions.
type iqFuncs struct {
	once sync.Once
	err  error

	requiresImatrix func(tensor.Type) bool
	typeTraits      func(tensor.Type) uintptr
}

var iqs sync.Map // *Lib -> *iqFuncs

// offToFloat is the offset of to_float in struct ggml_type_traits {const char *type_name;
// int64_t blck_size; int64_t blck_size_interleave; size_t type_size; bool is_quantized;
// ggml_to_float_t to_float; ...} on x86-64.
const offToFloat = 40

func (l *Lib) iq() (*iqFuncs, error) {
	v, _ := iqs.LoadOrStore(l, &iqFuncs{})
	f := v.(*iqFuncs)
	f.once.Do(func() {
		if err := l.bindSym(&f.requiresImatrix, "ggml_quantize_requires_imatrix"); err != nil {
			f.err = err
			return
		}
		f.err = l.bindSym(&f.typeTraits, "ggml_get_type_traits")
	})
	return f, f.err
}

// RequiresImatrix reports whether ggml_quantize_chunk needs an importance matrix for t
// (ggml_quantize_requires_imatrix).
func (l *Lib) RequiresImatrix(t tensor.Type) (bool, error) {
	f, err := l.iq()
	if err != nil {
		return false, err
	}
	return f.requiresImatrix(t), nil
}

// importance returns the importance matrix Quantize passes for t: nil, or perRow ones when
// ggml requires one (as test-backend-ops does).
func (l *Lib) importance(t tensor.Type, perRow int) (unsafe.Pointer, []float32, error) {
	need, err := l.RequiresImatrix(t)
	if err != nil || !need {
		return nil, nil, err
	}
	ones := make([]float32, perRow)
	for i := range ones {
		ones[i] = 1
	}
	return unsafe.Pointer(&ones[0]), ones, nil
}

// Dequantize converts whole blocks of the quantized type t to float32 with ggml's own
// routine (the to_float of ggml_get_type_traits(t)).
func (l *Lib) Dequantize(t tensor.Type, blocks []byte) ([]float32, error) {
	be, bs := t.BlockElems(), t.Size()
	if !t.Quantized() || len(blocks)%bs != 0 {
		return nil, fmt.Errorf("ggml: cannot dequantize %d bytes of %s", len(blocks), t)
	}
	f, err := l.iq()
	if err != nil {
		return nil, err
	}
	traits := f.typeTraits(t)
	if traits == 0 {
		return nil, fmt.Errorf("ggml: no type traits for %s", t)
	}
	fn := *(*uintptr)(at(traits + offToFloat))
	if fn == 0 {
		return nil, fmt.Errorf("ggml: %s has no to_float", t)
	}
	out := make([]float32, len(blocks)/bs*be)
	if len(out) == 0 {
		return out, nil
	}
	var toFloat func(unsafe.Pointer, unsafe.Pointer, int64)
	purego.RegisterFunc(&toFloat, fn)
	toFloat(unsafe.Pointer(&blocks[0]), unsafe.Pointer(&out[0]), int64(len(out)))
	return out, nil
}
