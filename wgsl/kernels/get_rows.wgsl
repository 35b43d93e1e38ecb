// dst[i0, i1, i2, i3] = src0[i0, rows[i1, i2, i3], i2, i3]  (rows: src1, I32)
fn element(i: u32) {
  let c = coords(i, p.Ne);
  let row = u32(src1_geti(offset4(vec4<u32>(c.y, c.z, c.w, 0u), p.B)));
  dst_set(offset4(c, p.D), src0_get(offset4(vec4<u32>(c.x, row, c.z, c.w), p.A)));
}

#include elementwise
