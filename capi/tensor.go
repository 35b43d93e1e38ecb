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

// snapshotTensors calls visit on every node and then each of its sources, in the order
// of a snapshot's bytes, until visit returns false; it reports whether none did.
func snapshotTensors(nodes []*C.struct_ggml_tensor, visit func(t *C.struct_ggml_tensor) bool) bool {
	for _, t := range nodes {
		if !visit(t) {
			return false
		}
		for _, s := range t.src {
			if s != nil && !visit(s) {
				return false
			}
		}
	}
	return true
}

// tensorBytes is the raw struct of t.
func tensorBytes(t *C.struct_ggml_tensor) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(t)), C.sizeof_struct_ggml_tensor)
}

// snapshot appends to out the raw bytes of every node and of each node's sources: equal
// snapshots mean an identical graph (same ops, shapes, strides, parameters, data
// addresses and buffers), so a compiled plan can be reused.
func snapshot(out []byte, nodes []*C.struct_ggml_tensor) []byte {
	snapshotTensors(nodes, func(t *C.struct_ggml_tensor) bool {
		out = append(out, tensorBytes(t)...)
		return true
	})
	return out
}

// snapshotEqual reports whether snapshot(nil, nodes) would equal cached, comparing the
// tensors' bytes in place (stopping at the first difference) instead of copying them.
func snapshotEqual(cached []byte, nodes []*C.struct_ggml_tensor) bool {
	rest := cached
	same := snapshotTensors(nodes, func(t *C.struct_ggml_tensor) bool {
		b := tensorBytes(t)
		if len(rest) < len(b) || !bytes.Equal(rest[:len(b)], b) {
			return false
		}
		rest = rest[len(b):]
		return true
	})
	return same && len(rest) == 0
}
