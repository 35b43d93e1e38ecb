// dst[i0, i1, i2, i3] = src0[i0, i1, i2, i3] + src1[i0, ids[i1, i2]]. One invocation per
// element; safe when dst aliases src0 at the same layout.
fn element(i: u32) {
  let c = coords(i, p.Ne);
  let r = u32(clamp(ids_geti(c.y * p.I.x + c.z * p.I.y), 0, i32(p.Rows) - 1));
  dst_set(offset4(c, p.D), src0_get(offset4(c, p.A)) + src1_get(c.x * p.B.x + r * p.B.y));
}

#include elementwise
