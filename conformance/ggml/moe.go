package ggml

import "sync"

// This file binds the graph builders of the mixture-of-experts and reduction ops
// (ggml_mul_mat_id, ggml_add_id, ggml_argsort, ggml_top_k, ggml_argmax, ggml_cumsum,
// ggml_sum, ggml_sum_rows, ggml_mean, ggml_soft_max_add_sinks), lazily as extra.go does.

type moeFuncs struct {
	once sync.Once
	err  error

	mulMatID     func(Context, Tensor, Tensor, Tensor) Tensor
	addID        func(Context, Tensor, Tensor, Tensor) Tensor
	argsort      func(Context, Tensor, int32) Tensor
	topK         func(Context, Tensor, int32) Tensor
	argmax       func(Context, Tensor) Tensor
	cumsum       func(Context, Tensor) Tensor
	sum          func(Context, Tensor) Tensor
	sumRows      func(Context, Tensor) Tensor
	mean         func(Context, Tensor) Tensor
	softMaxSinks func(Tensor, Tensor)
}

var moes sync.Map // *Lib -> *moeFuncs

// moe returns l's mixture-of-experts and reduction builders, binding them on first use;
// it panics naming the first missing symbol.
func (l *Lib) moe() *moeFuncs {
	v, _ := moes.LoadOrStore(l, &moeFuncs{})
	m := v.(*moeFuncs)
	m.once.Do(func() {
		reg := func(fptr any, name string) {
			if err := l.bindSym(fptr, name); err != nil && m.err == nil {
				m.err = err
			}
		}
		reg(&m.mulMatID, "ggml_mul_mat_id")
		reg(&m.addID, "ggml_add_id")
		reg(&m.argsort, "ggml_argsort")
		reg(&m.topK, "ggml_top_k")
		reg(&m.argmax, "ggml_argmax")
		reg(&m.cumsum, "ggml_cumsum")
		reg(&m.sum, "ggml_sum")
		reg(&m.sumRows, "ggml_sum_rows")
		reg(&m.mean, "ggml_mean")
		reg(&m.softMaxSinks, "ggml_soft_max_add_sinks")
	})
	if m.err != nil {
		panic(m.err)
	}
	return m
}

// SortOrder is ggml_sort_order.
type SortOrder int32

// Sort orders of ARGSORT.
const (
	SortAsc  SortOrder = 0
	SortDesc SortOrder = 1
)

// MulMatID is ggml_mul_mat_id: for slot s of token t, the product of expert ids[s, t] of
// as with row s % b.ne[1] of b's token t.
func (l *Lib) MulMatID(ctx Context, as, b, ids Tensor) Tensor {
	return l.moe().mulMatID(ctx, as, b, ids)
}

// AddID is ggml_add_id: a[:, i1, i2] + b[:, ids[i1, i2]].
func (l *Lib) AddID(ctx Context, a, b, ids Tensor) Tensor { return l.moe().addID(ctx, a, b, ids) }

// Argsort is ggml_argsort: the indices that sort each row.
func (l *Lib) Argsort(ctx Context, a Tensor, order SortOrder) Tensor {
	return l.moe().argsort(ctx, a, int32(order))
}

// TopK is ggml_top_k: the indices of the k largest elements of each row, in no
// particular order.
func (l *Lib) TopK(ctx Context, a Tensor, k int) Tensor { return l.moe().topK(ctx, a, int32(k)) }

// Argmax is ggml_argmax: the index of each row's largest element.
func (l *Lib) Argmax(ctx Context, a Tensor) Tensor { return l.moe().argmax(ctx, a) }

// Cumsum is ggml_cumsum: the inclusive prefix sums of each row.
func (l *Lib) Cumsum(ctx Context, a Tensor) Tensor { return l.moe().cumsum(ctx, a) }

// Sum is ggml_sum: the sum of all elements.
func (l *Lib) Sum(ctx Context, a Tensor) Tensor { return l.moe().sum(ctx, a) }

// SumRows is ggml_sum_rows: the sum of each row.
func (l *Lib) SumRows(ctx Context, a Tensor) Tensor { return l.moe().sumRows(ctx, a) }

// Mean is ggml_mean: the mean of each row.
func (l *Lib) Mean(ctx Context, a Tensor) Tensor { return l.moe().mean(ctx, a) }

// SoftMaxAddSinks is ggml_soft_max_add_sinks: gives the SOFT_MAX node a its per-head
// sink logits.
func (l *Lib) SoftMaxAddSinks(a, sinks Tensor) { l.moe().softMaxSinks(a, sinks) }
