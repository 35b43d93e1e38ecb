// The sum of a mixture of experts' slots (ops/moe_sum.go): dst[e, t] = src0[e, 0, t] +
// src0[e, 1, t] + ... + src0[e, Slots - 1, t], added in that order, as llama's chain of
// ADDs over the views of each slot adds them.
// With MUL the slots are first weighted: x[e, j, t] = src0[e, j, t] * src1[0, j, t] for
// each of the XSlots slots, stored to x (each invocation reads and writes its own elements
// only, so x may lie in place over src0), the first Slots of them summed.
fn element(i: u32) {
  let c = coords(i, p.Ne);
  let a = c.x * p.A.x + c.y * p.A.z;
#if MUL
  let wb = c.y * p.B.z;
  let xb = c.x * p.X.x + c.y * p.X.z;
  var s = 0.0;
  for (var j = 0u; j < p.XSlots; j = j + 1u) {
    let v = src0_get(a + j * p.A.y) * src1_get(wb + j * p.B.y);
    x_set(xb + j * p.X.y, v);
    if (j == 0u) {
      s = v;
    } else if (j < p.Slots) {
      s = s + v;
    }
  }
#else
  var s = src0_get(a);
  for (var j = 1u; j < p.Slots; j = j + 1u) { s = s + src0_get(a + j * p.A.y); }
#endif
  dst_set(offset4(c, p.D), s);
}

#include elementwise
