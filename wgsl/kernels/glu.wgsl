// SWIGLU: dst = silu(a) * b. Fused form: a and b are the two halves of each src0 row
// (offsets AOff and BOff, in elements); split form: a from src0, b from src1.
fn element(i: u32) {
  let c = coords(i, p.Ne);
  let a = src0_get(p.AOff + offset4(c, p.A));
#if SPLIT
  let b = src1_get(p.BOff + offset4(c, p.B));
#else
  let b = src0_get(p.BOff + offset4(c, p.B));
#endif
  dst_set(offset4(c, p.D), silu(a) * b);
}

#include elementwise
