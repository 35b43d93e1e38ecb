// Copies (and converts) src0 into dst element by element in row-major order. The two
// tensors have the same number of elements but may differ in shape and strides.
fn element(i: u32) {
  let s = coords(i, p.Ae);
  let d = coords(i, p.De);
  dst_set(offset4(d, p.D), src0_get(offset4(s, p.A)));
}

#include elementwise
