// dst[:, rows[i1, i2 % Re1, i3 % Re2], i2, i3] = src0[:, i1, i2, i3]; rows I32 or I64.
fn element(i: u32) {
  let c = coords(i, p.Ne0, p.Ne1, p.Ne2);
  let row = u32(src1_geti(c.y * p.B0 + (c.z % p.Re1) * p.B1 + (c.w % p.Re2) * p.B2));
  dst_set(c.x * p.D0 + row * p.D1 + c.z * p.D2 + c.w * p.D3,
          src0_get(c.x * p.A0 + c.y * p.A1 + c.z * p.A2 + c.w * p.A3));
}

#include elementwise
