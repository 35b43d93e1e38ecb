package ggml

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// This file binds ggml's dequantization routines (dequantize_row_<type> of
// libggml-base), bound lazily per type on first use, so that the suite can read back
// tensors of quantized types that a case writes.

// dequantizers holds, per library, the bound dequantize_row_<type> functions by type.
var dequantizers sync.Map // *Lib -> *dequantFuncs

type dequantFuncs struct {
	mu  sync.Mutex
	fns map[tensor.Type]func(unsafe.Pointer, unsafe.Pointer, int64)
}

// Dequantize converts the blocks of the quantized type t in src (whole blocks) to float32
// with ggml's own routine (dequantize_row_<type name>).
func (l *Lib) Dequantize(t tensor.Type, src []byte) ([]float32, error) {
	be, bs := t.BlockElems(), t.Size()
	if !t.Quantized() || bs == 0 || len(src)%bs != 0 {
		return nil, fmt.Errorf("ggml: cannot dequantize %d bytes of %s", len(src), t)
	}
	v, _ := dequantizers.LoadOrStore(l, &dequantFuncs{fns: map[tensor.Type]func(unsafe.Pointer, unsafe.Pointer, int64){}})
	d := v.(*dequantFuncs)
	d.mu.Lock()
	fn, ok := d.fns[t]
	if !ok {
		if err := l.bindSym(&fn, "dequantize_row_"+l.TypeName(t)); err != nil {
			d.mu.Unlock()
			return nil, err
		}
		d.fns[t] = fn
	}
	d.mu.Unlock()
	dst := make([]float32, len(src)/bs*be)
	if len(dst) > 0 {
		fn(unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0]), int64(len(dst)))
	}
	return dst, nil
}
