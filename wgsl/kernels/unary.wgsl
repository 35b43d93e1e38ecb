// dst = f(src0) element-wise, with arbitrary strides on both sides.
fn element(i: u32) {
  let c = coords(i, p.Ne);
  let x = src0_get(offset4(c, p.A));
#if SCALE
  let y = x * p.Scale + p.Bias;
#endif
#if SILU
  let y = silu(x);
#endif
#if GELU
  let y = gelu(x);
#endif
  dst_set(offset4(c, p.D), y);
}

#include elementwise
