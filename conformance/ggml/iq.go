package ggml

import (
	"sync"
	"unsafe"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// This file binds what the IQ formats need beyond the core set: whether ggml's quantizer
// demands an importance matrix for a type. It is bound on first use, as in extra.go.
// (Dequantize, which the WGSL lookup-table generator uses to read ggml's grids back, is in
// dequantize.go.)

// iqFuncs are the lazily bound functions.
type iqFuncs struct {
	once sync.Once
	err  error

	requiresImatrix func(tensor.Type) bool
}

var iqs sync.Map // *Lib -> *iqFuncs

func (l *Lib) iq() (*iqFuncs, error) {
	v, _ := iqs.LoadOrStore(l, &iqFuncs{})
	f := v.(*iqFuncs)
	f.once.Do(func() {
		f.err = l.bindSym(&f.requiresImatrix, "ggml_quantize_requires_imatrix")
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
