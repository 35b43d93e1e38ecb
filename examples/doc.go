// Package examples holds the test that builds the example programs with CGO_ENABLED=0
// and runs them on WGPU0: graph (package ggml, checked against the CPU), generate
// (libllama through purego) and yzma (hybridgroup/yzma, its own module).
package examples
