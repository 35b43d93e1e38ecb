// CONV_2D, CONV_2D_DW (ops/conv2d.go): one invocation per element (ox, oy, oc, n) of dst,
// summing its window over the input channels (depthwise: channel oc alone).
fn element(e: u32) {
  let c = coords(e, p.Ne);
  let x0 = i32(c.x * p.S0) - p.P0;
  let y0 = i32(c.y * p.S1) - p.P1;
  var acc = 0.0;
  for (var ic = 0u; ic < p.Channels; ic = ic + 1u) {
    let ch = select(ic, c.z, p.Depthwise != 0u); // the input's channel
    let kb = select(ic, 0u, p.Depthwise != 0u) * p.A.z + c.z * p.A.w;
    let ib = ch * p.B.z + c.w * p.B.w;
    for (var ky = 0u; ky < p.KH; ky = ky + 1u) {
      let y = y0 + i32(ky * p.D1);
      if (y < 0 || y >= i32(p.IH)) { continue; }
      for (var kx = 0u; kx < p.KW; kx = kx + 1u) {
        let x = x0 + i32(kx * p.D0);
        if (x < 0 || x >= i32(p.IW)) { continue; }
        acc = acc + src0_get(kb + kx * p.A.x + ky * p.A.y) * src1_get(ib + u32(x) * p.B.x + u32(y) * p.B.y);
      }
    }
  }
  dst_set(offset4(c, p.D), acc);
}

#include elementwise
