// PAD_REFLECT_1D (ops/pad_reflect.go): one invocation per element of dst; element o of a
// row reads source element j = o - P0, reflected about the row's first and last elements.
fn element(e: u32) {
  let c = coords(e, p.Ne);
  var j = i32(c.x) - i32(p.P0);
  if (j < 0) {
    j = -j;
  } else if (j >= i32(p.Len)) {
    j = 2 * (i32(p.Len) - 1) - j;
  }
  dst_set(offset4(c, p.D), src0_get(offset4(vec4<u32>(u32(j), c.y, c.z, c.w), p.A)));
}

#include elementwise
