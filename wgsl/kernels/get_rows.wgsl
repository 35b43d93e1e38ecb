// dst[i0, i1, i2, i3] = src0[i0, rows[i1, i2, i3], i2, i3]  (rows: src1, I32). A row
// index outside src0 (negative or >= p.Rows) gives zeros: nothing outside src0 is read.
fn element(i: u32) {
  let c = coords(i, p.Ne);
  let row = u32(src1_geti(offset4(vec4<u32>(c.y, c.z, c.w, 0u), p.B)));
  var v = 0.0;
  if (row < p.Rows) { v = src0_get(offset4(vec4<u32>(c.x, row, c.z, c.w), p.A)); }
  dst_set(offset4(c, p.D), v);
}

#include elementwise
