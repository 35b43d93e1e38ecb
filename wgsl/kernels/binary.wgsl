// dst = src0 OP src1, src1 broadcast (repeated) over every dimension of src0.
// One invocation per dst element; safe when dst aliases src0 or src1 at the same layout.
fn element(i: u32) {
  let c = coords(i, p.Ne);
  let a = src0_get(offset4(c, p.A));
  let b = src1_get(offset4(c % p.Be, p.B));
  dst_set(offset4(c, p.D), a {{OP}} b);
}

#include elementwise
