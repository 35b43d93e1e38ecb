// ROLL (ops/roll.go): one invocation per element; the source index of dimension d is
// (i_d + Shift_d) mod ne_d.
fn element(e: u32) {
  let c = coords(e, p.Ne);
  let src = (c + p.Shift) % p.Ne;
  dst_set(offset4(c, p.D), src0_get(offset4(src, p.A)));
}

#include elementwise
