// Command graph computes one small transformer-style graph (embedding lookup, RMS norm,
// matrix products with F16 weights, RoPE, masked softmax, SiLU) with package ggml on a
// device (WGPU0 by default) and on ggml's CPU backend, prints both results and their
// largest difference, and exits with status 1 when they disagree.
//
//	go run ./examples/graph [-device WGPU0] [-lib .cache/ggml/lib] [-backend build/libggml-wgpu.so]
package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"

	"github.com/ggml-wgpu/ggml-wgpu/ggml"
)

// Sizes of the graph: an embedding table of vocab rows of dim, tokens looked up, heads of
// headDim for the attention scores.
const (
	vocab   = 50
	dim     = 64
	tokens  = 8
	heads   = 4
	headDim = dim / heads
)

func main() {
	device := flag.String("device", "WGPU0", "device to check against the CPU")
	libDir := flag.String("lib", envOr("GGML_LIB_DIR", ".cache/ggml/lib"), "folder of libggml-base.so and libggml.so")
	backend := flag.String("backend", envOr("GGML_WGPU_LIB", "build/libggml-wgpu.so"), "backend library that provides the device")
	tol := flag.Float64("tol", 1e-3, "largest allowed difference, relative to the largest magnitude")
	flag.Parse()
	if err := run(*device, *libDir, *backend, *tol); err != nil {
		fmt.Fprintln(os.Stderr, "graph:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(device, libDir, backend string, tol float64) error {
	lib, err := ggml.Open(ggml.Options{LibDir: libDir, Backends: []string{backend}})
	if err != nil {
		return err
	}
	for _, d := range lib.Devices() {
		fmt.Printf("device %-6s %-5s %s (%d MiB)\n", d.Name, d.Type, d.Description, d.TotalBytes>>20)
	}
	in := newInputs()
	got, err := compute(lib, device, in)
	if err != nil {
		return err
	}
	want, err := compute(lib, "CPU", in)
	if err != nil {
		return err
	}
	show(device, got)
	show("CPU", want)
	diff, scale := 0.0, 0.0
	for i := range want {
		diff = math.Max(diff, math.Abs(float64(got[i]-want[i])))
		scale = math.Max(scale, math.Abs(float64(want[i])))
	}
	fmt.Printf("max |%s - CPU| = %.3g over %d values (largest magnitude %.3g)\n", device, diff, len(want), scale)
	if !(diff <= tol*math.Max(scale, 1)) {
		return fmt.Errorf("%s disagrees with the CPU: max difference %.3g > %.3g", device, diff, tol*math.Max(scale, 1))
	}
	fmt.Println("OK")
	return nil
}

func show(name string, v []float32) {
	fmt.Printf("%-6s %8.5f ... %8.5f\n", name, v[:4], v[len(v)-4:])
}

// inputs holds the graph's input data, the same for every device.
type inputs struct {
	embd, norm, wq, wk []float32
	ids, pos           []int32
	mask               []float32
}

func newInputs() inputs {
	r := rand.New(rand.NewSource(1))
	fill := func(n int, s float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * s)
		}
		return v
	}
	in := inputs{
		embd: fill(vocab*dim, 1), norm: fill(dim, 0.5), wq: fill(dim*dim, 0.2), wk: fill(dim*dim, 0.2),
		mask: make([]float32, tokens*tokens),
	}
	for i := range tokens {
		in.ids = append(in.ids, int32(r.Intn(vocab)))
		in.pos = append(in.pos, int32(i))
		for j := range tokens {
			if j > i {
				in.mask[i*tokens+j] = float32(math.Inf(-1)) // causal
			}
		}
	}
	return in
}

// compute builds the graph on a new context, allocates it on the device, sets the inputs,
// computes and returns the result.
func compute(lib *ggml.Library, device string, in inputs) ([]float32, error) {
	b, err := lib.NewBackend(device)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	ctx, err := lib.NewContext(64)
	if err != nil {
		return nil, err
	}
	defer ctx.Close()
	var errs []error
	must := func(t *ggml.Tensor, err error) *ggml.Tensor {
		errs = append(errs, err)
		return t
	}
	embd := must(ctx.NewTensor(ggml.F32, dim, vocab))
	norm := must(ctx.NewTensor(ggml.F32, dim))
	wq := must(ctx.NewTensor(ggml.F16, dim, dim))
	wk := must(ctx.NewTensor(ggml.F16, dim, dim))
	ids := must(ctx.NewTensor(ggml.I32, tokens))
	pos := must(ctx.NewTensor(ggml.I32, tokens))
	mask := must(ctx.NewTensor(ggml.F32, tokens, tokens))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	x := must(ctx.GetRows(embd, ids))                   // [dim, tokens]
	x = must(ctx.Mul(must(ctx.RMSNorm(x, 1e-5)), norm)) // llama's attention norm
	q := must(ctx.Reshape(must(ctx.MulMat(wq, x)), headDim, heads, tokens))
	k := must(ctx.Reshape(must(ctx.MulMat(wk, x)), headDim, heads, tokens))
	rope := ggml.RopeParams{NDims: headDim, Mode: ggml.RopeNormal}
	q = must(ctx.Permute(must(ctx.Rope(q, pos, rope)), [4]int{0, 2, 1, 3})) // [headDim, tokens, heads]
	k = must(ctx.Permute(must(ctx.Rope(k, pos, rope)), [4]int{0, 2, 1, 3}))
	kq := must(ctx.MulMat(must(ctx.Cont(k)), must(ctx.Cont(q)))) // [tokens, tokens, heads]
	probs := must(ctx.SoftMaxMasked(kq, mask, float32(1/math.Sqrt(headDim))))
	out := must(ctx.SiLU(must(ctx.Scale(probs, 2))))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	g, err := ctx.NewGraph(out)
	if err != nil {
		return nil, err
	}
	if err := ctx.Allocate(b); err != nil {
		return nil, err
	}
	for _, set := range []error{
		embd.SetFloat32(in.embd), norm.SetFloat32(in.norm), wq.SetFloat32(in.wq), wk.SetFloat32(in.wk),
		ids.SetInt32(in.ids), pos.SetInt32(in.pos), mask.SetFloat32(in.mask),
	} {
		if set != nil {
			return nil, set
		}
	}
	if err := b.Compute(g); err != nil {
		return nil, err
	}
	fmt.Printf("%s: %d nodes, %d KiB buffer\n", b.Name(), g.Nodes(), ctx.BufferSize()>>10)
	return out.Float32()
}
