package ggml

import "sync"

// This file binds, lazily (see bindSym), ggml's graph allocator (ggml-alloc.h), which
// places a graph's computed tensors in one buffer, reusing the memory of results no later
// node reads, as llama.cpp's compute buffers are placed.

// Gallocr is a graph allocator (ggml_gallocr_t).
type Gallocr uintptr

type gallocFuncs struct {
	once sync.Once
	err  error

	newGallocr func(BufferType) Gallocr
	allocGraph func(Gallocr, Graph) bool
	free       func(Gallocr)
}

var gallocs sync.Map // *Lib -> *gallocFuncs

// ga returns l's functions of this file, binding them on the first call; it panics naming
// the first missing symbol when ggml lacks one.
func (l *Lib) ga() *gallocFuncs {
	v, _ := gallocs.LoadOrStore(l, &gallocFuncs{})
	f := v.(*gallocFuncs)
	f.once.Do(func() {
		for _, b := range []struct {
			fptr any
			name string
		}{{&f.newGallocr, "ggml_gallocr_new"}, {&f.allocGraph, "ggml_gallocr_alloc_graph"}, {&f.free, "ggml_gallocr_free"}} {
			if f.err = l.bindSym(b.fptr, b.name); f.err != nil {
				return
			}
		}
	})
	if f.err != nil {
		panic(f.err)
	}
	return f
}

// NewGallocr returns a graph allocator placing tensors in buffers of type buft
// (ggml_gallocr_new), 0 on failure.
func (l *Lib) NewGallocr(buft BufferType) Gallocr { return l.ga().newGallocr(buft) }

// GallocrAllocGraph places the tensors of g that have no memory yet in a buffer of the
// allocator's (ggml_gallocr_alloc_graph): a result no later node reads and that is no
// graph output gives its memory to later ones. It reports success.
func (l *Lib) GallocrAllocGraph(a Gallocr, g Graph) bool { return l.ga().allocGraph(a, g) }

// GallocrFree frees the allocator and its buffers (ggml_gallocr_free).
func (l *Lib) GallocrFree(a Gallocr) { l.ga().free(a) }
