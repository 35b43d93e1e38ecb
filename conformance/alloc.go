package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// allocInputsApart allocates the leaves of ctx (the tensors no op computes: inputs,
// weights, copy destinations) that apart admits (nil: all) in a buffer of their own on be,
// as llama.cpp keeps a model's weights apart from its compute buffer, and places the views
// of them; allocRest then places the rest in another. It returns 0 when no leaf goes apart.
func allocInputsApart(l *ggml.Lib, ctx ggml.Context, be ggml.Backend, apart func(ggml.Tensor) bool) (ggml.Buffer, error) {
	buft := l.DevBufferType(l.BackendDevice(be))
	align := max(l.BuftAlignment(buft), 1)
	var leaves []ggml.Tensor
	var offs []uint64
	var size uint64
	for _, t := range l.Tensors(ctx) {
		if t.Op() != tensor.OpNone || t.ViewSrc() != 0 || t.NElements() == 0 || (apart != nil && !apart(t)) {
			continue
		}
		leaves = append(leaves, t)
		offs = append(offs, size)
		size += (l.BuftAllocSize(buft, t) + align - 1) / align * align
	}
	if len(leaves) == 0 {
		return 0, nil
	}
	buf := l.BuftAllocBuffer(buft, size)
	if buf == 0 {
		return 0, fmt.Errorf("ggml_backend_buft_alloc_buffer(%d) for the inputs failed", size)
	}
	base := l.BufferBase(buf)
	for i, t := range leaves {
		if st := l.TensorAlloc(buf, t, base+uintptr(offs[i])); st != tensor.StatusSuccess {
			l.BufferFree(buf)
			return 0, fmt.Errorf("ggml_backend_tensor_alloc(%s) returned status %d", t.Name(), st)
		}
	}
	if err := initViews(l, ctx, func(v ggml.Tensor) bool { return v.Buffer() == buf }); err != nil {
		l.BufferFree(buf)
		return 0, err
	}
	return buf, nil
}

// initViews places the views of ctx not yet placed whose source is placed, where in
// admits the source (ggml_backend_view_init); views come after their sources in a context.
func initViews(l *ggml.Lib, ctx ggml.Context, in func(src ggml.Tensor) bool) error {
	for _, t := range l.Tensors(ctx) {
		if v := t.ViewSrc(); v != 0 && t.Data() == 0 && v.Data() != 0 && in(v) {
			if st := l.ViewInit(t); st != tensor.StatusSuccess {
				return fmt.Errorf("ggml_backend_view_init(%s) returned status %d", t.Name(), st)
			}
		}
	}
	return nil
}

// allocRest allocates the tensors of ctx not yet placed on be
// (ggml_backend_alloc_ctx_tensors). When none is left it returns 0 and no error.
func allocRest(l *ggml.Lib, ctx ggml.Context, be ggml.Backend) (ggml.Buffer, error) {
	if buf := l.AllocCtxTensors(ctx, be); buf != 0 {
		return buf, nil
	}
	for _, t := range l.Tensors(ctx) {
		if t.Data() == 0 && t.NElements() > 0 {
			return 0, fmt.Errorf("ggml_backend_alloc_ctx_tensors failed")
		}
	}
	return 0, nil
}
