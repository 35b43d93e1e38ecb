package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// Builders of the example nodes that every family and fusion row registers: small
// tensors, without data or buffers, that exercise each kernel variant. The compile test
// lowers every example and builds its kernels.

// f32 returns a contiguous F32 tensor of shape ne (missing dimensions are 1).
func f32(ne ...int64) *tensor.Tensor { return contiguous(tensor.F32, ne...) }

// contiguous returns a contiguous tensor of type ty and shape ne (missing dimensions are 1;
// a quantized ne[0] is a multiple of the type's block).
func contiguous(ty tensor.Type, ne ...int64) *tensor.Tensor {
	t := &tensor.Tensor{Type: ty, Ne: [4]int64{1, 1, 1, 1}}
	copy(t.Ne[:], ne)
	t.Nb[0] = t.TypeSize()
	t.Nb[1] = t.Nb[0] * uint64(t.Ne[0]) / uint64(max(ty.BlockElems(), 1))
	for i := 2; i < 4; i++ {
		t.Nb[i] = t.Nb[i-1] * uint64(t.Ne[i-1])
	}
	return t
}

// node makes dst the result of op over src with the given op_params, and returns it.
func node(op tensor.Op, dst *tensor.Tensor, params []int32, src ...*tensor.Tensor) *tensor.Tensor {
	dst.Op = op
	copy(dst.Params[:], params)
	copy(dst.Src[:], src)
	return dst
}

// padded returns an F32 tensor of shape (ne0, ne1) whose rows lie pad elements apart
// beyond ne0, as a view of wider rows.
func padded(ne0, ne1, pad int64) *tensor.Tensor {
	t := f32(ne0, ne1)
	t.Nb[1] = 4 * uint64(ne0+pad)
	t.Nb[2] = t.Nb[1] * uint64(ne1)
	t.Nb[3] = t.Nb[2]
	return t
}
