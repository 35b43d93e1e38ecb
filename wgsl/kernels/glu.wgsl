// GLU: dst = OP(a, b), OP one of the functions below (a the gate, b the value; p.F holds
// (alpha, limit)). Fused form: a and b are the two halves of each src0 row (offsets AOff
// and BOff, in elements); split form: a from src0, b from src1.

fn glu_reglu(a: f32, b: f32) -> f32 { return select(0.0, a * b, a > 0.0); }
fn glu_geglu(a: f32, b: f32) -> f32 { return select(gelu(a) * b, 0.0, a <= -10.0); }
fn glu_swiglu(a: f32, b: f32) -> f32 { return silu(a) * b; }
fn glu_swiglu_oai(a: f32, b: f32) -> f32 {
  let x = min(a, p.F.y);
  let y = clamp(b, -p.F.y, p.F.y);
  return x / (1.0 + exp(p.F.x * -x)) * (y + 1.0);
}
fn glu_geglu_erf(a: f32, b: f32) -> f32 { return gelu_erf(a) * b; }
fn glu_geglu_quick(a: f32, b: f32) -> f32 { return gelu_quick(a) * b; }
fn glu_swiglu_clamp(a: f32, b: f32) -> f32 { return silu(min(a, p.F.y)) * clamp(b, -p.F.y, p.F.y); }

fn element(i: u32) {
  let c = coords(i, p.Ne);
  let a = src0_get(p.AOff + offset4(c, p.A));
#if SPLIT
  let b = src1_get(p.BOff + offset4(c, p.B));
#else
  let b = src0_get(p.BOff + offset4(c, p.B));
#endif
  dst_set(offset4(c, p.D), {{OP}}(a, b));
}

#include elementwise
