// dst[i0, i1, i2, i3] = src0[i0, rows[i1, i2, i3], i2, i3]  (rows: src1, I32). A row
// index outside src0 (negative or >= p.Rows) gives zeros: nothing outside src0 is read.
#if QUANT
// Quantized src0: one invocation per eight consecutive elements of a dst row (p.N
// groups), dequantized together by the format's routine.
fn element(g: u32) {
  let c = coords(g * 8u, p.Ne);
  let row = u32(src1_geti(offset4(vec4<u32>(c.y, c.z, c.w, 0u), p.B)));
  var w = mat2x4<f32>();
  if (row < p.Rows) { w = src0_get8(offset4(vec4<u32>(c.x, row, c.z, c.w), p.A)); }
  let o = offset4(c, p.D);
  for (var e = 0u; e < 4u; e = e + 1u) {
    dst_set(o + e * p.D.x, w[0][e]);
    dst_set(o + (4u + e) * p.D.x, w[1][e]);
  }
}
#else
fn element(i: u32) {
  let c = coords(i, p.Ne);
  let row = u32(src1_geti(offset4(vec4<u32>(c.y, c.z, c.w, 0u), p.B)));
#if INT
  // I32 rows (INT): copied as integers into an I32 dst.
  var v = 0;
  if (row < p.Rows) { v = src0_geti(offset4(vec4<u32>(c.x, row, c.z, c.w), p.A)); }
  dst_seti(offset4(c, p.D), v);
#else
  var v = 0.0;
  if (row < p.Rows) { v = src0_get(offset4(vec4<u32>(c.x, row, c.z, c.w), p.A)); }
  dst_set(offset4(c, p.D), v);
#endif
}
#endif

#include elementwise
