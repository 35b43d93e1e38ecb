package main

/*
#include "shim.h"
*/
import "C"

import "github.com/ggml-wgpu/ggml-wgpu/ops"

type backendTensor = ops.Tensor

// reader converts ggml_tensor structs into ops.Tensor values, once per pointer.
type reader struct {
	seen map[*C.struct_ggml_tensor]*ops.Tensor
}

func newReader() *reader { return &reader{seen: map[*C.struct_ggml_tensor]*ops.Tensor{}} }

func (r *reader) tensor(t *C.struct_ggml_tensor) *ops.Tensor {
	if t == nil {
		return nil
	}
	if g, ok := r.seen[t]; ok {
		return g
	}
	g := &ops.Tensor{
		Type:  ops.Type(t._type),
		Op:    ops.Op(t.op),
		Flags: int32(t.flags),
		Name:  C.GoString(&t.name[0]),
	}
	r.seen[t] = g
	for i := 0; i < 4; i++ {
		g.Ne[i] = int64(t.ne[i])
		g.Nb[i] = uint64(t.nb[i])
	}
	for i := 0; i < 16; i++ {
		g.Params[i] = int32(t.op_params[i])
	}
	buf := t.buffer
	if t.view_src != nil {
		buf = t.view_src.buffer
	}
	if buf != nil && C.gw_buft_index(buf.buft) >= 0 && buf.context != nil && t.data != nil {
		g.Loc = ops.Loc{Buffer: uint64(uintptr(buf.context)), Addr: uint64(uintptr(t.data))}
	}
	for i := 0; i < len(g.Src); i++ {
		g.Src[i] = r.tensor(t.src[i])
	}
	return g
}
