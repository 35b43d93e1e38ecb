// SET_ROWS into a block-quantized dst: dst[:, rows[i1, i2 % Be.y, i3 % Be.z], i2, i3] =
// src0[:, i1, i2, i3], one invocation per block of 32 elements of src0 (p.N blocks),
// quantized by dst's format routine (dst strides count the elements of whole blocks). A
// row index outside dst (negative or >= p.Rows) writes nothing.
fn element(k: u32) {
  let c = coords(k * 32u, p.Ne);
  let row = u32(src1_geti(offset4(vec4<u32>(c.y, c.z % p.Be.y, c.w % p.Be.z, 0u), p.B)));
  if (row >= p.Rows) { return; }
  let o = offset4(c, p.A);
  var x: array<f32, 32>;
  for (var j = 0u; j < 32u; j = j + 1u) {
    x[j] = src0_get(o + j * p.A.x);
  }
  dst_set_block(offset4(vec4<u32>(c.x, row, c.z, c.w), p.D), x);
}

#include elementwise
