// dst[:, rows[i1, i2 % Be.y, i3 % Be.z], i2, i3] = src0[:, i1, i2, i3]; rows (shape Be,
// strides B) I32 or I64. A row index outside dst (negative or >= p.Rows) writes nothing.
fn element(i: u32) {
  let c = coords(i, p.Ne);
  let row = u32(src1_geti(offset4(vec4<u32>(c.y, c.z % p.Be.y, c.w % p.Be.z, 0u), p.B)));
  if (row >= p.Rows) { return; }
  dst_set(offset4(vec4<u32>(c.x, row, c.z, c.w), p.D), src0_get(offset4(c, p.A)));
}

#include elementwise
