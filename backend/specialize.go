package backend

import (
	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// Specialized pipelines. A kernel reads its dispatch's parameters (shapes, strides,
// operand offsets) from a uniform slot of the parameter arena before it can compute a
// single address: a memory round trip at the start of every dispatch, which a decode
// graph's chain of dependent dispatches pays in full (the slots are long evicted from the
// caches by the weights streaming through them). So a decode step's graph
// (ops.DecodeGraph: its matrix products of few columns) takes pipelines compiled for each
// of its dispatches with that dispatch's parameters built in as constants
// (wgsl.Spec.Constants): no parameter load, and the shader compiler sees the shapes. On
// an NVIDIA H100 (GGML_WGPU_PROFILE=1 GPU time per decode graph, alternating runs, uniform
// -> constants): 1B Q4_0 1,138, 1,140 -> 998, 996 µs; 1B F16 1,483 -> 1,346; 8B Q4_K_M
// 4,366, 4,362 -> 3,844, 3,851. Chains of dependent dispatches (perf cases named
// ",chain)", µs): Q4_K 2048 x 2048 7.22 -> 6.33, 4096 x 4096 14.0 -> 12.7, F16 2048 x
// 2048 7.84 -> 6.99, flash attention of a 1B's token over 256 positions 9.22 -> 7.70,
// SCALE of 2^20 floats 7.31 -> 6.08.
//
// Dispatches with identical kernels and parameters (a model's layers, whose tensors sit at
// the same offsets of their bindings) share one pipeline, so a decode graph compiles about
// as many as a layer has dispatches, about as many as its uniform kernel variants: its
// first run costs what it did. A decode graph made again for a longer cache compiles
// only the dispatches whose parameters changed (attention's). Prompt graphs keep the
// uniform slots: compute-bound, they would only pay the compiles (new ones for every
// prompt length). A first design specialized any graph on its third run instead: on that
// H100 the 1B's 12 pipelines then stalled that run 1.0 s with the driver's shader cache
// cold, 64 ms with it warm, inside a benchmark's measured repetitions.
//
// At most maxSpecialPipes specialized pipelines are compiled in a device's life; beyond
// it graphs keep the uniform slots.

// specializeMode says which graphs take specialized pipelines.
type specializeMode int

const (
	specializeAuto   specializeMode = iota // decode steps' graphs on a hardware adapter (the default)
	specializeDecode                       // decode steps' graphs
	specializeOff                          // none
	specializeAll                          // every graph (for tests and comparisons)
)

// specializeModeOf parses EnvSpecialize: "" the default, "decode", "0" off, "all".
func specializeModeOf(v string) specializeMode {
	switch v {
	case "decode":
		return specializeDecode
	case "0":
		return specializeOff
	case "all":
		return specializeAll
	}
	return specializeAuto
}

// specializes reports whether the graph of nodes takes specialized pipelines. A software
// adapter (lavapipe) gains nothing from them and pays their compiles (doubling the
// conformance suite's products), so by default it takes none.
func (d *Device) specializes(nodes []*tensor.Tensor) bool {
	switch d.specialize {
	case specializeAll:
		return true
	case specializeDecode:
		return ops.DecodeGraph(nodes)
	case specializeAuto:
		return !d.software && ops.DecodeGraph(nodes)
	}
	return false
}

// maxSpecialPipes bounds the specialized pipelines a device compiles (each some tens of
// KiB of driver memory): a long chat makes a new decode graph every 256 cached positions,
// a few new pipelines each time.
const maxSpecialPipes = 4096

// constantsSpec returns spec with its parameters built in: slot is the dispatch's encoded
// parameter slot.
func constantsSpec(spec *wgsl.Spec, slot []byte) *wgsl.Spec {
	c := *spec
	c.Constants = append([]byte(nil), slot...)
	return &c
}

// constantsSource writes a specialized pipeline's WGSL (tests replace it to make one fail).
var constantsSource = wgsl.Source

// specialPipeline compiles (or finds) the pipeline of a spec with constants, counting
// it against the device's budget. Called with d.mu held.
func (d *Device) specialPipeline(spec *wgsl.Spec) (*gpu.Pipeline, error) {
	before := d.exe.Pipelines()
	p, err := d.pipeline(spec, constantsSource)
	d.specialPipes += d.exe.Pipelines() - before
	return p, err
}

// specialized returns how many specialized pipelines the device has compiled.
func (d *Device) specialized() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.specialPipes
}
