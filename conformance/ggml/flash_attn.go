package ggml

import "sync"

// This file binds ggml's flash attention (ggml_flash_attn_ext, its sinks and its
// accumulator precision), lazily as extra.go does.

type flashAttnFuncs struct {
	once sync.Once
	err  error

	flashAttnExt func(Context, Tensor, Tensor, Tensor, Tensor, float32, float32, float32) Tensor
	addSinks     func(Tensor, Tensor)
	precSetAcc   func(Tensor, int32) bool
}

var flashAttns sync.Map // *Lib -> *flashAttnFuncs

func (l *Lib) fa() *flashAttnFuncs {
	v, _ := flashAttns.LoadOrStore(l, &flashAttnFuncs{})
	f := v.(*flashAttnFuncs)
	f.once.Do(func() {
		reg := func(fptr any, name string) {
			if err := l.bindSym(fptr, name); err != nil && f.err == nil {
				f.err = err
			}
		}
		reg(&f.flashAttnExt, "ggml_flash_attn_ext")
		reg(&f.addSinks, "ggml_flash_attn_ext_add_sinks")
		reg(&f.precSetAcc, "ggml_prec_set_acc")
	})
	if f.err != nil {
		panic(f.err)
	}
	return f
}

// Precisions of ggml_prec_set_acc (enum ggml_prec).
const (
	PrecDefault int32 = 0
	PrecF32     int32 = 10
)

// FlashAttnExt is ggml_flash_attn_ext: q [D, n_q, n_head, n_seq], k [D, n_kv, n_head_kv,
// n_seq], v [Dv, n_kv, n_head_kv, n_seq], mask F16 [n_kv, >= n_q, ...] or 0; the result
// is [Dv, n_head, n_q, n_seq].
func (l *Lib) FlashAttnExt(ctx Context, q, k, v, mask Tensor, scale, maxBias, softcap float32) Tensor {
	return l.fa().flashAttnExt(ctx, q, k, v, mask, scale, maxBias, softcap)
}

// FlashAttnAddSinks is ggml_flash_attn_ext_add_sinks: sinks F32 [n_head].
func (l *Lib) FlashAttnAddSinks(a, sinks Tensor) { l.fa().addSinks(a, sinks) }

// PrecSetAcc is ggml_prec_set_acc: the accumulator precision of a MUL_MAT or
// FLASH_ATTN_EXT node (PrecDefault, PrecF32, ...).
func (l *Lib) PrecSetAcc(a Tensor, prec int32) bool { return l.fa().precSetAcc(a, prec) }
