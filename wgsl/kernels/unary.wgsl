// dst = f(src0) element-wise, with arbitrary strides on both sides.
fn element(i: u32) {
  let c = coords(i, p.Ne0, p.Ne1, p.Ne2);
  let x = src0_get(c.x * p.A0 + c.y * p.A1 + c.z * p.A2 + c.w * p.A3);
#if SCALE
  let y = x * p.Scale + p.Bias;
#endif
#if SILU
  let y = silu(x);
#endif
#if GELU
  let y = gelu(x);
#endif
  dst_set(c.x * p.D0 + c.y * p.D1 + c.z * p.D2 + c.w * p.D3, y);
}

#include elementwise
