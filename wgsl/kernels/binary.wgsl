// dst = src0 OP src1, src1 broadcast (repeated) over every dimension of src0.
// One invocation per dst element; safe when dst aliases src0 or src1 at the same layout.
fn element(i: u32) {
  let c = coords(i, p.Ne0, p.Ne1, p.Ne2);
  let a = src0_get(c.x * p.A0 + c.y * p.A1 + c.z * p.A2 + c.w * p.A3);
  let b = src1_get((c.x % p.Be0) * p.B0 + (c.y % p.Be1) * p.B1 + (c.z % p.Be2) * p.B2 + (c.w % p.Be3) * p.B3);
  dst_set(c.x * p.D0 + c.y * p.D1 + c.z * p.D2 + c.w * p.D3, a {{OP}} b);
}

#include elementwise
