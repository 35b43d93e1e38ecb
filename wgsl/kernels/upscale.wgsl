// UPSCALE (ops/upscale.go): one invocation per element of dst. NEAREST reads index
// i / (ne / ne0) in every dimension; BILINEAR mixes the four neighbours in dims 0 and 1.
fn element(e: u32) {
  let c = coords(e, p.Ne);
  if (p.Bilinear == 0u) {
    let s = c / (p.Ne / p.Src);
    dst_set(offset4(c, p.D), src0_get(offset4(s, p.A)));
    return;
  }
  let y = (f32(c.y) + p.Offset) / p.Sf1 - p.Offset;
  let x = (f32(c.x) + p.Offset) / p.Sf0 - p.Offset;
  let y0 = clamp(i32(floor(y)), 0, i32(p.Src.y) - 1);
  let y1 = clamp(i32(floor(y)) + 1, 0, i32(p.Src.y) - 1);
  let x0 = clamp(i32(floor(x)), 0, i32(p.Src.x) - 1);
  let x1 = clamp(i32(floor(x)) + 1, 0, i32(p.Src.x) - 1);
  let dy = clamp(y - f32(y0), 0.0, 1.0);
  let dx = clamp(x - f32(x0), 0.0, 1.0);
  let base = c.z * p.A.z + c.w * p.A.w;
  let a = src0_get(base + u32(x0) * p.A.x + u32(y0) * p.A.y);
  let b = src0_get(base + u32(x1) * p.A.x + u32(y0) * p.A.y);
  let cc = src0_get(base + u32(x0) * p.A.x + u32(y1) * p.A.y);
  let d = src0_get(base + u32(x1) * p.A.x + u32(y1) * p.A.y);
  dst_set(offset4(c, p.D), a * (1.0 - dx) * (1.0 - dy) + b * dx * (1.0 - dy) + cc * (1.0 - dx) * dy + d * dx * dy);
}

#include elementwise
