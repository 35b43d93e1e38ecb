// Package ggml lets Go programs use ggml, and the WebGPU backend of this module, without
// cgo: it loads the ggml host libraries (libggml-base and libggml of ggml 0.25.1) and
// backend libraries such as libggml-wgpu.so at run time with purego, and wraps them in
// the types a Go programmer expects.
//
// A program opens the libraries, picks a device by name (WGPU0, CPU, ...), describes a
// computation in a Context (tensors and ops), allocates the context's tensors in a buffer
// of the device, sets the inputs, computes the graph and reads the results:
//
//	lib, err := ggml.Open(ggml.Options{LibDir: "path/to/ggml/lib", Backends: []string{"build/libggml-wgpu.so"}})
//	dev, err := lib.NewBackend("WGPU0")
//	defer dev.Close()
//	ctx, err := lib.NewContext(16)
//	defer ctx.Close()
//	a, err := ctx.NewTensor(ggml.F32, 4, 2)
//	b, err := ctx.NewTensor(ggml.F32, 4, 3)
//	c, err := ctx.MulMat(a, b) // 2x3
//	g, err := ctx.NewGraph(c)
//	err = ctx.Allocate(dev)
//	err = a.SetFloat32(...)
//	err = dev.Compute(g)
//	out, err := c.Float32()
//
// Every failure is a Go error, never a panic or an abort of the process: arguments that
// ggml would reject with GGML_ASSERT (and abort the process) are checked in Go before any
// call into C — nil and closed handles, tensors of another context, shapes an op cannot
// combine, types an op does not take, a full context, tensors without memory — and a
// graph is computed only when the device reports that it supports every node.
//
// Handles (Backend, Context, Tensor, Graph) are not safe for concurrent use; distinct
// contexts and backends may be used from distinct goroutines. The libraries stay loaded
// for the life of the process (ggml keeps its backend registry global).
package ggml
