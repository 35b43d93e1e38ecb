// The sum of a mixture of experts' slots (ops/moe_sum.go): dst[e, t] = src0[e, 0, t] +
// src0[e, 1, t] + ... + src0[e, SLOTS - 1, t], added in that order, as llama's chain of
// ADDs over the views of each slot adds them.
fn element(i: u32) {
  let c = coords(i, p.Ne);
  let a = c.x * p.A.x + c.y * p.A.z;
  var s = src0_get(a);
  for (var j = 1u; j < p.Slots; j = j + 1u) { s = s + src0_get(a + j * p.A.y); }
  dst_set(offset4(c, p.D), s);
}

#include elementwise
