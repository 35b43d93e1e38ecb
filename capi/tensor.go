package main

/*
#include "shim.h"
*/
import "C"

import (
	"bytes"
	"encoding/binary"
	"unsafe"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// reader converts ggml_tensor structs into tensor.Tensor values, once per pointer.
type reader struct {
	seen map[*C.struct_ggml_tensor]*tensor.Tensor
	// depth holds, for a reader limited in depth (node), the levels of sources below each
	// tensor read so far.
	depth map[*C.struct_ggml_tensor]int
}

func newReader() *reader { return &reader{seen: map[*C.struct_ggml_tensor]*tensor.Tensor{}} }

// tensor reads t with all its sources, theirs, and so on: a graph's nodes.
func (r *reader) tensor(t *C.struct_ggml_tensor) *tensor.Tensor { return r.read(t, -1) }

// supportsDepth is the levels of sources supports_op reads below a node: the node's
// sources and theirs. What an op family supports is decided by the node and its sources
// (ops.Supports); the fusion rows, which look further, see whole graphs.
const supportsDepth = 2

// node reads t with its sources to depth levels below it (1: its sources, without
// theirs). Reading every ancestor made supports_op cost the size of the graph above the
// node: ggml asks it for every node of a graph it splits anew, and a 16-layer hybrid's
// 838 nodes took ~90 ms of the host's on an H200's machine each time llama built its
// graph again (the first two tokens after a memory clear).
func (r *reader) node(t *C.struct_ggml_tensor, depth int) *tensor.Tensor {
	r.depth = map[*C.struct_ggml_tensor]int{}
	return r.read(t, depth)
}

// read reads t and its sources to depth levels (-1: all of them).
func (r *reader) read(t *C.struct_ggml_tensor, depth int) *tensor.Tensor {
	if t == nil {
		return nil
	}
	g, ok := r.seen[t]
	if ok && (r.depth == nil || r.depth[t] >= depth) {
		return g
	}
	if !ok {
		g = &tensor.Tensor{
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
	}
	if r.depth != nil {
		r.depth[t] = depth
		if depth == 0 {
			return g
		}
	}
	for i := 0; i < len(g.Src); i++ {
		g.Src[i] = r.read(t.src[i], depth-1)
	}
	return g
}

// A snapshot identifies a graph exactly: equal snapshots mean an identical graph (same
// ops, shapes, strides, parameters, data addresses and buffers), so a compiled plan can be
// reused. It holds the node pointers, the raw struct of every node, and the raw struct of
// every source that is not itself a node (weights, inputs, the KV cache), with where those
// sources are. A source that is a node is compared as that node: equal pointers and
// equal node structs (which hold the source pointers) make the same sources.
//
// Layout (little-endian uint64s): n, the n node pointers, k, the k places of the other
// sources (node index << 4 | source index), then the n nodes' structs and the k sources'.
// A 1B decode graph (501 nodes) holds 0.27 MiB, where every node's sources compared in
// full came to ~0.44 MiB; both compares took ~23-28 µs of the compute on an H100's host
// (the GPU waiting for them): reading the host's structs costs that, not the compare.

// snapshot appends the snapshot of the graph of nodes to out.
func snapshot(out []byte, nodes []*C.struct_ggml_tensor) []byte {
	isNode := make(map[*C.struct_ggml_tensor]bool, len(nodes))
	for _, t := range nodes {
		isNode[t] = true
	}
	var places []uint64
	for i, t := range nodes {
		for j, s := range t.src {
			if s != nil && !isNode[s] {
				places = append(places, uint64(i)<<4|uint64(j))
			}
		}
	}
	out = binary.LittleEndian.AppendUint64(out, uint64(len(nodes)))
	out = append(out, pointerBytes(nodes)...)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(places)))
	for _, p := range places {
		out = binary.LittleEndian.AppendUint64(out, p)
	}
	for _, t := range nodes {
		out = append(out, tensorBytes(t)...)
	}
	for _, p := range places {
		out = append(out, tensorBytes(nodes[p>>4].src[p&15])...)
	}
	return out
}

// snapshotEqual reports whether snapshot(nil, nodes) would equal cached, comparing in
// place (stopping at the first difference) instead of copying.
func snapshotEqual(cached []byte, nodes []*C.struct_ggml_tensor) bool {
	n := len(nodes)
	if len(cached) < 8 || binary.LittleEndian.Uint64(cached) != uint64(n) {
		return false
	}
	rest := cached[8:]
	pb := pointerBytes(nodes)
	if len(rest) < len(pb)+8 || !bytes.Equal(rest[:len(pb)], pb) {
		return false
	}
	rest = rest[len(pb):]
	k := binary.LittleEndian.Uint64(rest)
	rest = rest[8:]
	size := int(C.sizeof_struct_ggml_tensor)
	if k > uint64(len(rest))/8 || len(rest)-8*int(k) != (n+int(k))*size {
		return false
	}
	places := rest[:8*k]
	rest = rest[8*k:]
	for _, t := range nodes {
		if !bytes.Equal(rest[:size], tensorBytes(t)) {
			return false
		}
		rest = rest[size:]
	}
	for q := range int(k) {
		p := binary.LittleEndian.Uint64(places[8*q:])
		i, j := p>>4, p&15
		if i >= uint64(n) || j >= uint64(len(nodes[i].src)) || nodes[i].src[j] == nil {
			return false
		}
		if !bytes.Equal(rest[:size], tensorBytes(nodes[i].src[j])) {
			return false
		}
		rest = rest[size:]
	}
	return true
}

// pointerBytes is the bytes of the node pointers themselves.
func pointerBytes(nodes []*C.struct_ggml_tensor) []byte {
	if len(nodes) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&nodes[0])), len(nodes)*int(unsafe.Sizeof(nodes[0])))
}

// tensorBytes is the raw struct of t.
func tensorBytes(t *C.struct_ggml_tensor) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(t)), C.sizeof_struct_ggml_tensor)
}
