// dst = OP(src0) element-wise, with arbitrary strides on both sides; OP names one of the
// functions below or of unary_math.wgsl, or a WGSL builtin (exp, log, sqrt, sin, cos,
// floor, ceil, trunc). The float parameters of the op are p.F. DIAG_MASK: dst = -inf where
// i0 > n_past + i1 (p.K), src0 elsewhere. Safe when dst aliases src0 at the same layout.

#include unary_math

// The ops with float parameters, p.F.
fn op_xielu(x: f32) -> f32 { return xielu(x, p.F); } // (alpha_n, alpha_p, beta, eps)
fn op_clamp(x: f32) -> f32 { return max(min(x, p.F.y), p.F.x); } // (min, max)
fn op_leaky_relu(x: f32) -> f32 { return leaky_relu(x, p.F.x); } // the negative slope
fn op_fill(x: f32) -> f32 { return p.F.x; } // the value
fn op_scale(x: f32) -> f32 { return x * p.F.x + p.F.y; } // (scale, bias)

fn element(i: u32) {
  let c = coords(i, p.Ne);
  let x = src0_get(offset4(c, p.A));
#if DIAG_MASK
  let y = select(x, bitcast<f32>(0xff800000u), c.x > p.K + c.y);
#else
  let y = {{OP}}(x);
#endif
  dst_set(offset4(c, p.D), y);
}

#include elementwise
