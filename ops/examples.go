package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// Builders of the example nodes that every family and fusion row registers: small
// tensors, without data or buffers, that exercise each kernel variant. The compile test
// lowers every example and builds its kernels.

// f32 returns a contiguous F32 tensor of shape ne (missing dimensions are 1).
func f32(ne ...int64) *tensor.Tensor { return contiguous(tensor.F32, ne...) }

// contiguous returns a contiguous tensor of type ty and shape ne (missing dimensions are 1).
func contiguous(ty tensor.Type, ne ...int64) *tensor.Tensor {
	t := &tensor.Tensor{Type: ty, Ne: [4]int64{1, 1, 1, 1}}
	copy(t.Ne[:], ne)
	t.Nb[0] = t.TypeSize()
	for i := 1; i < 4; i++ {
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
