package abi

import (
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// Package tensor's enums (generated from ggml.h) name every value as the real library
// does: ops, unary and GLU ops, types.
func TestTensorEnumsMatchLibrary(t *testing.T) {
	for op := tensor.Op(0); op < tensor.OpCount; op++ {
		require.Equal(t, OpName(int(op)), op.String(), "op %d", int(op))
	}
	for op := tensor.UnaryOp(0); op < tensor.UnaryOpCount; op++ {
		require.Equal(t, UnaryOpName(int(op)), op.String(), "unary op %d", int(op))
	}
	for op := tensor.GLUOp(0); op < tensor.GLUOpCount; op++ {
		require.Equal(t, GLUOpName(int(op)), op.String(), "glu op %d", int(op))
	}
	require.Equal(t, "ADD", OpName(int(tensor.OpAdd)))
	require.Equal(t, "FLASH_ATTN_EXT", OpName(int(tensor.OpFlashAttnExt)))
	require.Equal(t, "q4_K", TypeName(int(tensor.Q4_K)))
}

// Every type's block (elements and bytes) in package tensor equals ggml_blck_size and
// ggml_type_size, and the types ggml removed are absent.
func TestTensorBlocksMatchLibrary(t *testing.T) {
	listed := map[tensor.Type]bool{}
	for _, ty := range tensor.Types() {
		listed[ty] = true
		b, ok := ty.Block()
		require.True(t, ok)
		require.Equal(t, BlockSize(int(ty)), b.Elems, "block elements of %s", ty)
		require.Equal(t, TypeSize(int(ty)), b.Bytes, "block bytes of %s", ty)
		require.Equal(t, TypeName(int(ty)), ty.String(), "name of type %d", int(ty))
	}
	for ty := tensor.Type(0); ty < tensor.TypeCount; ty++ {
		if !listed[ty] {
			require.Zero(t, BlockSize(int(ty)), "type %d (%s) is defined by ggml but missing from package tensor", int(ty), TypeName(int(ty)))
		}
	}
	require.Len(t, tensor.Types(), 35)
}

// The offsets package tensor gives for struct ggml_tensor (used by the purego binding) are
// our header's, which the tests of this package check against the real library.
func TestTensorLayoutMatchesHeader(t *testing.T) {
	l := Layout()
	for field, off := range map[string]uintptr{
		"type": tensor.OffsetType, "buffer": tensor.OffsetBuffer, "ne": tensor.OffsetNe, "nb": tensor.OffsetNb,
		"op": tensor.OffsetOp, "op_params": tensor.OffsetOpParams, "flags": tensor.OffsetFlags, "src": tensor.OffsetSrc,
		"view_src": tensor.OffsetViewSrc, "view_offs": tensor.OffsetViewOffs, "data": tensor.OffsetData,
		"name": tensor.OffsetName, "extra": tensor.OffsetExtra,
	} {
		got, ok := l["ggml_tensor."+field]
		require.True(t, ok, "our header has no ggml_tensor.%s", field)
		require.Equal(t, got, off, "offset of ggml_tensor.%s", field)
	}
	require.Equal(t, l["sizeof(ggml_tensor)"], uintptr(tensor.TensorSize))
	require.Equal(t, TensorOverhead()-ggmlObjectSize, uintptr(tensor.TensorSize))
}
