package ggml

import "sync"

// This file binds, lazily (see bindSym), what the residual-sum and norm graphs need beyond
// the core set: marking a tensor as a graph output.

// addNormFuncs are the lazily bound functions.
type addNormFuncs struct {
	once sync.Once
	err  error

	setOutput func(Tensor)
}

var addNorms sync.Map // *Lib -> *addNormFuncs

// an returns l's functions of this file, binding them on the first call; it panics naming
// the first missing symbol when ggml lacks one.
func (l *Lib) an() *addNormFuncs {
	v, _ := addNorms.LoadOrStore(l, &addNormFuncs{})
	f := v.(*addNormFuncs)
	f.once.Do(func() {
		f.err = l.bindSym(&f.setOutput, "ggml_set_output")
	})
	if f.err != nil {
		panic(f.err)
	}
	return f
}

// SetOutput marks t as a graph output (ggml_set_output): the host reads it back after the
// graph, so a backend must store it.
func (l *Lib) SetOutput(t Tensor) { l.an().setOutput(t) }
