package wgsl

import (
	"sync"

	"github.com/ggml-wgpu/ggml-wgpu/backend/webgpu"
)

// Cache compiles each Spec once per device and keeps the pipeline.
type Cache struct {
	dev *webgpu.Device
	mu  sync.Mutex
	m   map[string]*webgpu.Pipeline
	bad map[string]error
}

// NewCache returns an empty pipeline cache for dev.
func NewCache(dev *webgpu.Device) *Cache {
	return &Cache{dev: dev, m: map[string]*webgpu.Pipeline{}, bad: map[string]error{}}
}

// Pipeline returns the compiled pipeline for s, compiling it on first use. A spec that
// failed to compile keeps failing with the same error.
func (c *Cache) Pipeline(s *Spec) (*webgpu.Pipeline, error) {
	key := s.Key()
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.m[key]; ok {
		return p, nil
	}
	if err, ok := c.bad[key]; ok {
		return nil, err
	}
	src, err := Source(s)
	if err == nil {
		var p *webgpu.Pipeline
		if p, err = c.dev.CreatePipeline(s.Kernel, src, len(s.Operands)); err == nil {
			c.m[key] = p
			return p, nil
		}
	}
	c.bad[key] = err
	return nil, err
}

// Len returns the number of compiled pipelines.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
