// SSM_CONV: dst[i, t, s] = POST(sum_{j < Width} src0[t + j, i, s] * src1[j, i]), one
// invocation per element of dst, the products added in j's order; POST is the identity or
// an activation fused after the convolution (with float parameters p.F).

#include unary_math
fn element(e: u32) {
  let c = coords(e, p.Ne); // (i, t, s)
  let w = (c.y * p.A.x) + c.x * p.A.y + c.z * p.A.z;
  let k = c.x * p.C.y;
  var sum = 0.0;
  for (var j = 0u; j < p.Width; j = j + 1u) {
    sum = sum + src0_get(w + j * p.A.x) * src1_get(k + j * p.C.x);
  }
  dst_set(offset4(c, p.D), {{POST}});
}

#include elementwise
