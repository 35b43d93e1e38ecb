// Copies (and converts) src0 into dst element by element in row-major order. The two
// tensors have the same number of elements but may differ in shape and strides.
// SRC_INT, DST_INT: I32 source or destination (f32 to i32 truncates toward zero).
fn element(i: u32) {
  let s = coords(i, p.Ae);
  let d = coords(i, p.De);
#if SRC_INT
  let v = src0_geti(offset4(s, p.A));
#else
  let v = src0_get(offset4(s, p.A));
#endif
#if DST_INT
  dst_seti(offset4(d, p.D), i32(v));
#else
  dst_set(offset4(d, p.D), f32(v));
#endif
}

#include elementwise
