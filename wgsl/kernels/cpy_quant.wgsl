// CPY into or out of a block-quantized type; src0 and dst have the same number of
// elements, in row-major order, but may differ in shape and strides (quantized strides
// count the elements of whole blocks, see ops/quant_copy.go).
#if QUANT_DST
// dst quantized: one invocation per block of 32 elements of dst (p.N blocks), gathered
// from src0 element by element and quantized by dst's format routine.
fn element(k: u32) {
  let i = k * 32u;
  var x: array<f32, 32>;
  for (var j = 0u; j < 32u; j = j + 1u) {
    x[j] = src0_get(offset4(coords(i + j, p.Ae), p.A));
  }
  dst_set_block(offset4(coords(i, p.De), p.D), x);
}
#else
// src0 quantized: one invocation per eight elements of src0 (p.N groups), dequantized
// together by src0's format routine and scattered to dst element by element.
fn element(g: u32) {
  let i = g * 8u;
  let w = src0_get8(offset4(coords(i, p.Ae), p.A));
  for (var e = 0u; e < 4u; e = e + 1u) {
    dst_set(offset4(coords(i + e, p.De), p.D), w[0][e]);
    dst_set(offset4(coords(i + 4u + e, p.De), p.D), w[1][e]);
  }
}
#endif

#include elementwise
