// dst = OP(src0) element-wise, with arbitrary strides on both sides; OP names one of the
// functions below or a WGSL builtin (exp, log, sqrt, sin, cos, floor, ceil, trunc). The
// float parameters of the op are p.F. DIAG_MASK: dst = -inf where i0 > n_past + i1 (p.K),
// src0 elsewhere. Safe when dst aliases src0 at the same layout.

fn op_abs(x: f32) -> f32 { return abs(x); }
fn op_sgn(x: f32) -> f32 { return select(select(0.0, -1.0, x < 0.0), 1.0, x > 0.0); }
fn op_neg(x: f32) -> f32 { return -x; }
fn op_step(x: f32) -> f32 { return select(0.0, 1.0, x > 0.0); }
// tanh is +-1 in f32 beyond |x| = 9; clamping keeps exp-based implementations finite.
fn op_tanh(x: f32) -> f32 { return tanh(clamp(x, -15.0, 15.0)); }
fn op_elu(x: f32) -> f32 { return select(expm1(x), x, x > 0.0); }
fn op_relu(x: f32) -> f32 { return select(0.0, x, x > 0.0); }
fn op_sigmoid(x: f32) -> f32 { return 1.0 / (1.0 + exp(-x)); }
fn op_hardsigmoid(x: f32) -> f32 { return min(1.0, max(0.0, (x + 3.0) / 6.0)); }
fn op_hardswish(x: f32) -> f32 { return x * op_hardsigmoid(x); }
// The CPU's EXPM1 op is exp(x) - 1 (ELU and XIELU use the accurate expm1).
fn op_expm1(x: f32) -> f32 { return exp(x) - 1.0; }
fn op_softplus(x: f32) -> f32 { return select(log(1.0 + exp(x)), x, x > 20.0); }
// Rounds half away from zero (C's roundf; WGSL's round goes to even).
fn op_round(x: f32) -> f32 {
  let t = trunc(x);
  return select(t, t + sign(x), abs(x - t) >= 0.5);
}
// xIELU with F = (alpha_n, alpha_p, beta, eps).
fn op_xielu(x: f32) -> f32 {
  if (x > 0.0) { return p.F.y * x * x + p.F.z * x; }
  return (expm1(min(x, p.F.w)) - x) * p.F.x + p.F.z * x;
}
fn op_sqr(x: f32) -> f32 { return x * x; }
// F = (min, max).
fn op_clamp(x: f32) -> f32 { return max(min(x, p.F.y), p.F.x); }
// F.x: the negative slope.
fn op_leaky_relu(x: f32) -> f32 { return select(0.0, x, x > 0.0) + p.F.x * select(0.0, x, x < 0.0); }
// F.x: the value.
fn op_fill(x: f32) -> f32 { return p.F.x; }
// F = (scale, bias).
fn op_scale(x: f32) -> f32 { return x * p.F.x + p.F.y; }

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
