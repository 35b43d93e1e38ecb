// Copies (and converts) src0 into dst element by element in row-major order. The two
// tensors have the same number of elements but may differ in shape and strides.
fn element(i: u32) {
  let s = coords(i, p.Ae0, p.Ae1, p.Ae2);
  let d = coords(i, p.De0, p.De1, p.De2);
  dst_set(d.x * p.D0 + d.y * p.D1 + d.z * p.D2 + d.w * p.D3,
          src0_get(s.x * p.A0 + s.y * p.A1 + s.z * p.A2 + s.w * p.A3));
}

#include elementwise
