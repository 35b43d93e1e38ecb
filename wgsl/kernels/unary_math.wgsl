// The functions of the element-wise ops of one source (ops/unary.go), shared by the unary
// kernel and the element-wise chains (elem_chain.wgsl); those with float parameters take
// them as arguments.

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
// xIELU with f = (alpha_n, alpha_p, beta, eps).
fn xielu(x: f32, f: vec4<f32>) -> f32 {
  if (x > 0.0) { return f.y * x * x + f.z * x; }
  return (expm1(min(x, f.w)) - x) * f.x + f.z * x;
}
fn op_sqr(x: f32) -> f32 { return x * x; }
// LEAKY_RELU with negative slope s.
fn leaky_relu(x: f32, s: f32) -> f32 { return select(0.0, x, x > 0.0) + s * select(0.0, x, x < 0.0); }
