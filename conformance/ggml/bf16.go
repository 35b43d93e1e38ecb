package ggml

import (
	"sync"
	"unsafe"
)

// This file binds ggml's bfloat16 row conversions (ggml.h), lazily as extra.go does: the
// suite encodes BF16 leaves and decodes BF16 results with them.

// bf16Funcs are the lazily bound conversions.
type bf16Funcs struct {
	once sync.Once
	err  error

	fp32ToBF16Row func(unsafe.Pointer, unsafe.Pointer, int64)
	bf16ToFP32Row func(unsafe.Pointer, unsafe.Pointer, int64)
}

var bf16s sync.Map // *Lib -> *bf16Funcs

// bf16 returns l's conversions, binding them on the first call; it panics naming the first
// missing symbol when ggml lacks one.
func (l *Lib) bf16() *bf16Funcs {
	v, _ := bf16s.LoadOrStore(l, &bf16Funcs{})
	f := v.(*bf16Funcs)
	f.once.Do(func() {
		if err := l.bindSym(&f.fp32ToBF16Row, "ggml_fp32_to_bf16_row_ref"); err != nil {
			f.err = err
			return
		}
		f.err = l.bindSym(&f.bf16ToFP32Row, "ggml_bf16_to_fp32_row")
	})
	if f.err != nil {
		panic(f.err)
	}
	return f
}

// FP32ToBF16 converts float32 values to bfloat16 bit patterns with ggml's reference
// rounding (ggml_fp32_to_bf16_row_ref: to nearest even, NaNs kept quiet).
func (l *Lib) FP32ToBF16(src []float32) []uint16 {
	dst := make([]uint16, len(src))
	if len(src) > 0 {
		l.bf16().fp32ToBF16Row(unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0]), int64(len(src)))
	}
	return dst
}

// BF16ToFP32 converts bfloat16 bit patterns to float32 (ggml_bf16_to_fp32_row).
func (l *Lib) BF16ToFP32(src []uint16) []float32 {
	dst := make([]float32, len(src))
	if len(src) > 0 {
		l.bf16().bf16ToFP32Row(unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0]), int64(len(src)))
	}
	return dst
}
