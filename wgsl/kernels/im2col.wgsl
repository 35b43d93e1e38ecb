// IM2COL (ops/im2col.go): one invocation per element of dst {cols, OW, OH, N}; column
// (ic KH + ky) KW + kx of position (ox, oy) reads input (ox S0 + kx D0 - P0, oy S1 + ky D1
// - P1) of channel ic, or 0 outside it.
fn element(e: u32) {
  let c = coords(e, p.Ne);
  let kx = c.x % p.KW;
  let ky = (c.x / p.KW) % p.KH;
  let ic = c.x / (p.KW * p.KH);
  let ix = i32(c.y * p.S0 + kx * p.D0) - p.P0;
  let iy = i32(c.z * p.S1 + ky * p.D1) - p.P1;
  var v = 0.0;
  if (ix >= 0 && ix < i32(p.IW) && iy >= 0 && iy < i32(p.IH)) {
    v = src1_get(u32(ix) * p.B.x + u32(iy) * p.B.y + ic * p.B.z + c.w * p.B.w);
  }
  dst_set(offset4(c, p.D), v);
}

#include elementwise
