// An element-wise chain (ops/elem_chain.go): dst = EXPR, the chain's nodes applied in turn
// to x0 (input 0 at dst's element, in its own shape: a CONT may reshape) and x1, x2
// (inputs 1 and 2, broadcast over dst like src1 of a binary op), with the steps' float
// parameters p.F0, p.F1, p.F2. One invocation per dst element; safe when dst aliases an
// input at the same layout.

#include unary_math

fn element(i: u32) {
  let c = coords(i, p.Ne);
  let x0 = src0_get(offset4(coords(i, p.E0), p.A0));
#if IN1
  let x1 = src1_get(offset4(c % p.E1, p.A1));
#endif
#if IN2
  let x2 = src2_get(offset4(c % p.E2, p.A2));
#endif
  dst_set(offset4(c, p.D), {{EXPR}});
}

#include elementwise
