// SWIGLU: dst = silu(a) * b. Fused form: a and b are the two halves of each src0 row
// (offsets AOff and BOff, in elements); split form: a from src0, b from src1.
fn element(i: u32) {
  let c = coords(i, p.Ne0, p.Ne1, p.Ne2);
  let a = src0_get(p.AOff + c.x * p.A0 + c.y * p.A1 + c.z * p.A2 + c.w * p.A3);
#if SPLIT
  let b = src1_get(p.BOff + c.x * p.B0 + c.y * p.B1 + c.z * p.B2 + c.w * p.B3);
#else
  let b = src0_get(p.BOff + c.x * p.B0 + c.y * p.B1 + c.z * p.B2 + c.w * p.B3);
#endif
  dst_set(c.x * p.D0 + c.y * p.D1 + c.z * p.D2 + c.w * p.D3, silu(a) * b);
}

#include elementwise
