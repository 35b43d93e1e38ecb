package main

/*
#include "shim.h"
*/
import "C"

import (
	"bytes"
	"unsafe"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// reader converts ggml_tensor structs into tensor.Tensor values, once per pointer.
type reader struct {
	seen map[*C.struct_ggml_tensor]*tensor.Tensor
}

func newReader() *reader { return &reader{seen: map[*C.struct_ggml_tensor]*tensor.Tensor{}} }

func (r *reader) tensor(t *C.struct_ggml_tensor) *tensor.Tensor {
	if t == nil {
		return nil
	}
	if g, ok := r.seen[t]; ok {
		return g
	}
	g := &tensor.Tensor{
		Type:  tensor.Type(t._type),
		Op:    tensor.Op(t.op),
		Flags: tensor.Flag(t.flags),
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
		g.Loc = tensor.Loc{Buffer: uint64(uintptr(buf.context)), Addr: uint64(uintptr(t.data))}
	}
	for i := 0; i < len(g.Src); i++ {
		g.Src[i] = r.tensor(t.src[i])
	}
	return g
}

// snapshot appends to out the raw bytes of every node and of each node's sources: equal
// snapshots mean an identical graph (same ops, shapes, strides, parameters, data
// addresses and buffers), so a compiled plan can be reused.
func snapshot(out []byte, nodes []*C.struct_ggml_tensor) []byte {
	const size = C.sizeof_struct_ggml_tensor
	add := func(t *C.struct_ggml_tensor) {
		out = append(out, unsafe.Slice((*byte)(unsafe.Pointer(t)), size)...)
	}
	for _, t := range nodes {
		add(t)
		for _, s := range t.src {
			if s != nil {
				add(s)
			}
		}
	}
	return out
}

// snapshotEqual reports whether snapshot(nil, nodes) would equal cached, comparing the
// tensors' bytes in place (stopping at the first difference) instead of copying them.
func snapshotEqual(cached []byte, nodes []*C.struct_ggml_tensor) bool {
	const size = C.sizeof_struct_ggml_tensor
	off := 0
	same := func(t *C.struct_ggml_tensor) bool {
		if len(cached)-off < size {
			return false
		}
		ok := bytes.Equal(cached[off:off+size], unsafe.Slice((*byte)(unsafe.Pointer(t)), size))
		off += size
		return ok
	}
	for _, t := range nodes {
		if !same(t) {
			return false
		}
		for _, s := range t.src {
			if s != nil && !same(s) {
				return false
			}
		}
	}
	return off == len(cached)
}
