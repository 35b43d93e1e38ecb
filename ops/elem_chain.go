package ops

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// Element-wise chains: two or three consecutive F32 nodes of one shape, each an
// activation (a UNARY op, SCALE, CLAMP, LEAKY_RELU, SQR, SQRT, LOG, SIN or COS) or a
// binary op (ADD, SUB, MUL, DIV), each after the first reading the one before it, computed
// by one dispatch that stores only the last (elem_chain.wgsl): what the recurrent layers of
// hybrid models build around their scans, such as Qwen3.5's gate softplus(alpha + dt) * a,
// its attention gate attn * sigmoid(cont(view of Q)) and its output gate
// norm * silu(z). The first node may also be a CONT (of a view, any strides, reshaped).
// Each binary op reads one more tensor besides the running value, on either side (broadcast
// where it is src1); the kernel reads at most three tensors. The rows come last in the
// fusion table, so that every specific row is tried first at each node, and a chain must
// hold an activation or a CONT (two binary ops are left to the rows that know them).

// chainParams are the parameters of elem_chain.wgsl: the result's shape and strides, each
// input's shape and strides (input 0 is read at the result's element in its own shape, so
// that a CONT may reshape; inputs 1 and 2 are broadcast over the result like src1 of a
// binary op), and each step's float parameters.
type chainParams struct {
	Ne, D      [4]uint32
	E0, A0     [4]uint32
	E1, A1     [4]uint32
	E2, A2     [4]uint32
	F0, F1, F2 [4]float32
	N          uint32
}

// chainActivations are the activations a chain's nodes may have (chainExpr); chainOps
// adds the binary ops, and chainHeadOps CONT for a chain's first node.
var (
	chainActivations = OpSet{tensor.OpUnary, tensor.OpScale, tensor.OpClamp, tensor.OpLeakyReLU, tensor.OpSqr,
		tensor.OpSqrt, tensor.OpLog, tensor.OpSin, tensor.OpCos}
	chainOps     = append(OpSet{tensor.OpAdd, tensor.OpSub, tensor.OpMul, tensor.OpDiv}, chainActivations...)
	chainHeadOps = append(OpSet{tensor.OpCont}, chainOps...)
)

// elemChainRows are the fusion rows of chains of three nodes and of two.
func elemChainRows() []Fusion {
	return []Fusion{
		{
			Name:    "elementwise chain of 3",
			Ops:     []OpSet{chainHeadOps, chainOps, chainOps},
			Private: []int{0, 1},
			Links:   chainLinked,
			Guard:   guardChain,
			Lower:   lowerChain,
			Example: func() []*tensor.Tensor {
				// softplus(alpha + dt) * a
				alpha := f32(8, 2)
				add := node(tensor.OpAdd, f32(8, 2), nil, alpha, f32(8))
				sp := node(tensor.OpUnary, f32(8, 2), []int32{int32(tensor.UnarySoftPlus)}, add)
				return []*tensor.Tensor{add, sp, node(tensor.OpMul, f32(8, 2), nil, sp, f32(8))}
			},
		},
		{
			Name:    "elementwise chain of 2",
			Ops:     []OpSet{chainHeadOps, chainOps},
			Private: []int{0},
			Links:   chainLinked,
			Guard:   guardChain,
			Lower:   lowerChain,
			Example: func() []*tensor.Tensor {
				// x * silu(z), the running value as the MUL's src1
				z := node(tensor.OpUnary, f32(8, 2), []int32{int32(tensor.UnarySILU)}, f32(8, 2))
				return []*tensor.Tensor{z, node(tensor.OpMul, f32(8, 2), nil, f32(8, 2), z)}
			},
		},
	}
}

// isBinary reports whether op is one of the chain's binary ops.
func isBinary(op tensor.Op) bool { _, ok := binarySymbol[op]; return ok }

// chainLinked reports whether each node after the first reads the node before it (once:
// as src0 of an activation, or on one side of a binary op), and at least one node is no
// binary op, the last no ADD (llama's residual sums start the norm rows).
func chainLinked(n []*tensor.Tensor) bool {
	if n[len(n)-1].Op == tensor.OpAdd {
		return false
	}
	activation := false
	for k, t := range n {
		if !isBinary(t.Op) {
			activation = true
		}
		if k == 0 {
			continue
		}
		prev := n[k-1]
		if t.Op == tensor.OpCont {
			return false
		}
		if isBinary(t.Op) {
			if (t.Src[0] == prev) == (t.Src[1] == prev) {
				return false // not read, or read on both sides
			}
		} else if t.Src[0] != prev {
			return false
		}
	}
	return activation
}

// guardChain admits nodes that chainLinked links (the rows' Links, which Matches asks
// before any guard) when they are F32 nodes of the last one's shape, each supported, whose
// result overlaps no input but one it lies exactly over (each element is read and written
// by one invocation).
func guardChain(n []*tensor.Tensor, l *Limits) bool {
	last := n[len(n)-1]
	for _, t := range n {
		if t.Type != tensor.F32 || !tensor.SameShape(t, last) || !Supports(t, l) {
			return false
		}
		for _, s := range t.Src[:2] {
			if s != nil && s.Type != tensor.F32 {
				return false
			}
		}
	}
	for _, r := range chainInputs(n) {
		if overlaps(last, r) && !sameLayout(last, r) {
			return false
		}
	}
	return true
}

// chainInputs returns the tensors a chain reads, in the kernel's order: the first node's
// sources (src0, and src1 of a binary op), then the other side of each later binary op.
func chainInputs(n []*tensor.Tensor) []*tensor.Tensor {
	in := []*tensor.Tensor{n[0].Src[0]}
	if isBinary(n[0].Op) {
		in = append(in, n[0].Src[1])
	}
	for k := 1; k < len(n); k++ {
		t := n[k]
		if !isBinary(t.Op) {
			continue
		}
		if t.Src[0] == n[k-1] {
			in = append(in, t.Src[1])
		} else {
			in = append(in, t.Src[0])
		}
	}
	return in
}

// chainExpr returns the WGSL expression of node t's result from v, its running operand's
// value, and o, the other operand's (a binary op's); f names the step's float parameters.
func chainExpr(t *tensor.Tensor, v, o, f string, vLeft bool) (string, error) {
	if sym, ok := binarySymbol[t.Op]; ok {
		if vLeft {
			return fmt.Sprintf("(%s %s %s)", v, sym, o), nil
		}
		return fmt.Sprintf("(%s %s %s)", o, sym, v), nil
	}
	switch t.Op {
	case tensor.OpCont:
		return v, nil
	case tensor.OpScale: // scale, bias
		return fmt.Sprintf("(%s * %s.x + %s.y)", v, f, f), nil
	case tensor.OpClamp: // min, max
		return fmt.Sprintf("max(min(%s, %s.y), %s.x)", v, f, f), nil
	case tensor.OpLeakyReLU: // negative slope
		return fmt.Sprintf("leaky_relu(%s, %s.x)", v, f), nil
	case tensor.OpUnary:
		if t.UnaryOp() == tensor.UnaryXIELU {
			return fmt.Sprintf("xielu(%s, %s)", v, f), nil
		}
		if fn, ok := unaryFuncs[t.UnaryOp()]; ok {
			return fmt.Sprintf("%s(%s)", fn, v), nil
		}
	default:
		if fn, ok := unaryOpFuncs[t.Op]; ok && t.Op != tensor.OpFill && t.Op != tensor.OpDiagMaskInf {
			return fmt.Sprintf("%s(%s)", fn, v), nil
		}
	}
	return "", fmt.Errorf("%s has no element-wise expression", t.Op)
}

// lowerChain lowers a chain as one dispatch of elem_chain.wgsl whose expression (EXPR)
// applies every node in turn to the inputs x0, x1, x2 (chainInputs).
func lowerChain(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	last := n[len(n)-1]
	inputs := chainInputs(n)
	if len(inputs) > 3 {
		return nil, fmt.Errorf("elementwise chain reads %d tensors", len(inputs))
	}
	p := chainParams{Ne: dims(last), D: strides(last), N: uint32(last.Elems())}
	shapes := []*[4]uint32{&p.E0, &p.E1, &p.E2}
	strs := []*[4]uint32{&p.A0, &p.A1, &p.A2}
	floats := []*[4]float32{&p.F0, &p.F1, &p.F2}
	for i, t := range inputs {
		*shapes[i], *strs[i] = dims(t), strides(t)
	}
	v, next := "x0", 1
	var err error
	for k, t := range n {
		*floats[k] = unaryFloats(t)
		f := fmt.Sprintf("p.F%d", k)
		switch {
		case k == 0 && isBinary(t.Op):
			v, err = chainExpr(t, "x0", "x1", f, true)
			next = 2
		case isBinary(t.Op):
			v, err = chainExpr(t, v, fmt.Sprintf("x%d", next), f, t.Src[0] == n[k-1])
			next++
		default:
			v, err = chainExpr(t, v, "", f, true)
		}
		if err != nil {
			return nil, err
		}
	}
	operands := []wgslOperand{in("src0", inputs[0])}
	tensors := []*tensor.Tensor{inputs[0]}
	for i, t := range inputs[1:] {
		operands = append(operands, in(fmt.Sprintf("src%d", i+1), t))
		tensors = append(tensors, t)
	}
	operands = append(operands, out("dst", last))
	tensors = append(tensors, last)
	defs := map[string]string{"EXPR": v, "IN1": flag(len(inputs) > 1), "IN2": flag(len(inputs) > 2)}
	s := spec("elem_chain", wgElementwise, p, defs, operands...)
	return []Dispatch{{Spec: s, Tensors: tensors, Params: p, Grid: gridElems(last.Elems(), l)}}, nil
}
