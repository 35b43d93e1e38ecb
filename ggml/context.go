package ggml

import (
	"fmt"
)

// MaxContextTensors is the largest tensor count a Context may hold.
const MaxContextTensors = 1 << 16

// graphsPerContext is how many graphs a Context has room for.
const graphsPerContext = 4

// Context describes a computation: the tensors, and the ops that produce them (a
// ggml_context without data: the tensors get memory from Allocate). Close frees it and
// its buffer.
type Context struct {
	lib        *Library
	ptr        uintptr
	pool       uintptr // the C memory of the context's objects
	buffer     uintptr // the backend buffer of Allocate
	backend    *Backend
	maxTensors int
	tensors    int
	graphs     int
}

// NewContext creates a context with room for maxTensors tensors (inputs and op results
// alike, 1..MaxContextTensors) and four graphs of up to maxTensors nodes.
func (l *Library) NewContext(maxTensors int) (*Context, error) {
	if l == nil {
		return nil, ErrNil
	}
	if maxTensors < 1 || maxTensors > MaxContextTensors {
		return nil, fmt.Errorf("%w: %d tensors (1..%d)", ErrContext, maxTensors, MaxContextTensors)
	}
	size := uint64(maxTensors)*uint64(l.fn.tensorOverhead()) +
		graphsPerContext*uint64(l.fn.graphOverhead(uintptr(maxTensors), false))
	pool, err := cAlloc(size)
	if err != nil {
		return nil, err
	}
	ptr := l.fn.initCtx(initParams{memSize: uintptr(size), memBuffer: pool, noAlloc: true})
	if ptr == 0 {
		cFree(pool)
		return nil, fmt.Errorf("%w: ggml_init failed", ErrAlloc)
	}
	return &Context{lib: l, ptr: ptr, pool: pool, maxTensors: maxTensors}, nil
}

// Close frees the context, its tensors' buffer and its graphs; a second Close returns
// ErrClosed. Tensors and graphs of the context are unusable afterwards.
func (c *Context) Close() error {
	if err := c.check(); err != nil {
		return err
	}
	if c.buffer != 0 {
		c.lib.fn.bufferFree(c.buffer)
		c.buffer = 0
	}
	c.lib.fn.freeCtx(c.ptr)
	c.ptr = 0
	cFree(c.pool)
	c.pool = 0
	c.backend = nil
	return nil
}

func (c *Context) check() error {
	if c == nil || c.lib == nil {
		return fmt.Errorf("%w: context", ErrNil)
	}
	if c.ptr == 0 {
		return fmt.Errorf("%w: context", ErrClosed)
	}
	return nil
}

// room checks that the context's pool has space for n more bytes, as ggml would abort.
func (c *Context) room(n uint64) error {
	used, size := uint64(c.lib.fn.usedMem(c.ptr)), uint64(c.lib.fn.memSize(c.ptr))
	if used+n > size {
		return fmt.Errorf("%w: full (%d tensors)", ErrContext, c.maxTensors)
	}
	return nil
}

// newTensorRoom checks that one more tensor fits and that the context takes no more
// tensors after Allocate (they would have no memory).
func (c *Context) newTensorRoom() error {
	if err := c.check(); err != nil {
		return err
	}
	if c.backend != nil {
		return fmt.Errorf("%w: the context is allocated already; create every tensor and op before Allocate", ErrContext)
	}
	if c.tensors >= c.maxTensors {
		return fmt.Errorf("%w: full (%d tensors)", ErrContext, c.maxTensors)
	}
	return c.room(uint64(c.lib.fn.tensorOverhead()))
}

// Allocate gives every tensor of the context memory in one buffer of the backend's
// device (ggml_backend_alloc_ctx_tensors). Call it once, after creating the tensors and
// ops; the graph of the context then computes on that backend.
func (c *Context) Allocate(b *Backend) error {
	if err := c.check(); err != nil {
		return err
	}
	if err := b.check(); err != nil {
		return err
	}
	if c.backend != nil {
		return fmt.Errorf("%w: the context is allocated already (on %s)", ErrAlloc, c.backend.device.Name)
	}
	if c.lib != b.lib {
		return fmt.Errorf("%w: the backend comes from another Library", ErrContext)
	}
	buf := c.lib.fn.allocCtxTensors(c.ptr, b.ptr)
	if buf == 0 {
		return fmt.Errorf("%w: ggml_backend_alloc_ctx_tensors on %s failed (no tensors, or not enough device memory; see ggml's log)", ErrAlloc, b.device.Name)
	}
	c.buffer, c.backend = buf, b
	return nil
}

// BufferSize returns the bytes of the buffer that Allocate made (0 before).
func (c *Context) BufferSize() uint64 {
	if c.check() != nil || c.buffer == 0 {
		return 0
	}
	return uint64(c.lib.fn.bufferSize(c.buffer))
}

// Graph is a computation graph: the ops needed for its outputs, in order.
type Graph struct {
	ctx *Context
	ptr uintptr
}

// NewGraph builds the graph that computes the outputs (and every op they depend on).
func (c *Context) NewGraph(outputs ...*Tensor) (*Graph, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if len(outputs) == 0 {
		return nil, fmt.Errorf("%w: a graph needs an output", ErrShape)
	}
	for _, t := range outputs {
		if err := c.owns(t); err != nil {
			return nil, err
		}
	}
	if c.graphs >= graphsPerContext {
		return nil, fmt.Errorf("%w: room for %d graphs only", ErrContext, graphsPerContext)
	}
	if err := c.room(uint64(c.lib.fn.graphOverhead(uintptr(c.maxTensors), false))); err != nil {
		return nil, err
	}
	g := c.lib.fn.newGraph(c.ptr, uintptr(c.maxTensors), false)
	if g == 0 {
		return nil, fmt.Errorf("%w: ggml_new_graph_custom failed", ErrContext)
	}
	c.graphs++
	for _, t := range outputs {
		c.lib.fn.buildForward(g, t.ptr)
	}
	return &Graph{ctx: c, ptr: g}, nil
}

func (g *Graph) check() error {
	if g == nil {
		return fmt.Errorf("%w: graph", ErrNil)
	}
	return g.ctx.check()
}

// Nodes returns the number of op nodes of the graph (0 once its context is closed).
func (g *Graph) Nodes() int {
	if g.check() != nil {
		return 0
	}
	return int(g.ctx.lib.fn.graphNNodes(g.ptr))
}

// owns checks that t is a live tensor of c.
func (c *Context) owns(t *Tensor) error {
	if err := t.check(); err != nil {
		return err
	}
	if t.ctx != c {
		return fmt.Errorf("%w: tensor %q belongs to another context", ErrContext, t.Name())
	}
	return nil
}
