// POOL_1D, POOL_2D (ops/pool.go): one invocation per element of dst, its window's
// elements inside src read in order.
fn element(e: u32) {
  let c = coords(e, p.Ne);
  let x0 = i32(c.x * p.S0) - p.P0;
  let y0 = i32(c.y * p.S1) - p.P1;
  var acc = select(-3.40282347e+38, 0.0, p.Avg != 0u); // -FLT_MAX for MAX
  var count = 0u;
  for (var ky = 0u; ky < p.K1; ky = ky + 1u) {
    let y = y0 + i32(ky);
    if (y < 0 || y >= i32(p.IH)) { continue; }
    for (var kx = 0u; kx < p.K0; kx = kx + 1u) {
      let x = x0 + i32(kx);
      if (x < 0 || x >= i32(p.IW)) { continue; }
      let v = src0_get(u32(x) * p.A.x + u32(y) * p.A.y + c.z * p.A.z + c.w * p.A.w);
      if (p.Avg != 0u) { acc = acc + v; } else { acc = max(acc, v); }
      count = count + 1u;
    }
  }
  if (p.Avg != 0u) {
    if (p.InsideOnly != 0u) {
      acc = select(0.0, acc / f32(count), count > 0u);
    } else {
      acc = acc / f32(p.K0 * p.K1);
    }
  }
  dst_set(offset4(c, p.D), acc);
}

#include elementwise
