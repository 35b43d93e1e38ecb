// POOL_1D, POOL_2D (ops/pool.go): one invocation per element of dst, its window's
// elements inside src read in order (the loops cover those alone).
fn element(e: u32) {
  let c = coords(e, p.Ne);
  let x0 = i32(c.x * p.S0) - p.P0;
  let y0 = i32(c.y * p.S1) - p.P1;
  var acc = select(-3.40282347e+38, 0.0, p.Avg != 0u); // -FLT_MAX for MAX
  var count = 0u;
  // the window's rows and columns inside src only: at most the input's, whatever K0, K1
  let ky1 = u32(clamp(i32(p.IH) - y0, 0, i32(p.K1)));
  let kx1 = u32(clamp(i32(p.IW) - x0, 0, i32(p.K0)));
  for (var ky = u32(max(-y0, 0)); ky < ky1; ky = ky + 1u) {
    let y = u32(y0 + i32(ky));
    for (var kx = u32(max(-x0, 0)); kx < kx1; kx = kx + 1u) {
      let x = u32(x0 + i32(kx));
      let v = src0_get(x * p.A.x + y * p.A.y + c.z * p.A.z + c.w * p.A.w);
      if (p.Avg != 0u) { acc = acc + v; } else { acc = max(acc, v); }
      count = count + 1u;
    }
  }
  if (p.Avg != 0u) {
    if (p.InsideOnly != 0u) {
      acc = select(0.0, acc / f32(count), count > 0u);
    } else {
      acc = acc / (f32(p.K0) * f32(p.K1));
    }
  }
  dst_set(offset4(c, p.D), acc);
}

#include elementwise
