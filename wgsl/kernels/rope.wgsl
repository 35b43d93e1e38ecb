// ROPE (NORMAL and NEOX modes, YaRN, optional frequency factors). One invocation per pair
// slot q of a row: slots below NDims/2 rotate a pair, the rest copy a pass-through pair.
// Each invocation reads its two elements before writing them, so dst may alias src0.
fn yarn_ramp(low: f32, high: f32, q: u32) -> f32 {
  let y = (f32(q) - low) / max(0.001, high - low);
  return 1.0 - min(1.0, max(0.0, y));
}

fn element(i: u32) {
  let half = p.Ne.x / 2u;
  let c = coords(i, vec4<u32>(half, p.Ne.y, p.Ne.z, p.Ne.w)); // c.x: pair slot q; c.y: i1; c.z: i2 (position); c.w: i3
  let q = c.x;
  let rc = vec4<u32>(0u, c.y, c.z, c.w);
  let a = offset4(rc, p.A);
  let d = offset4(rc, p.D);
  let nrot = p.NDims / 2u;
  if (q >= nrot) {
    let r = 2u * (q - nrot);
    var e = r;
    if (r >= p.NOffs) { e = r + p.NDims; }
    let x0 = src0_get(a + e * p.A.x);
    let x1 = src0_get(a + (e + 1u) * p.A.x);
    dst_set(d + e * p.D.x, x0);
    dst_set(d + (e + 1u) * p.D.x, x1);
    return;
  }
#if NEOX
  let e0 = p.NOffs + q;
  let e1 = p.NOffs + q + nrot;
#else
  let e0 = p.NOffs + 2u * q;
  let e1 = e0 + 1u;
#endif
  let pos = f32(pos_geti(c.z));
  var theta_extrap = pos * pow(p.ThetaScale, f32(q));
#if FREQ_FACTORS
  theta_extrap = theta_extrap / ff_get(q);
#endif
  let theta_interp = p.FreqScale * theta_extrap;
  var theta = theta_interp;
  var mscale = p.AttnFactor;
  if (p.ExtFactor != 0.0) {
    let mix = yarn_ramp(p.Corr0, p.Corr1, q) * p.ExtFactor;
    theta = theta_interp * (1.0 - mix) + theta_extrap * mix;
    mscale = mscale * (1.0 + 0.1 * log(1.0 / p.FreqScale));
  }
  let cs = cos(theta) * mscale;
  let sn = sin(theta) * mscale;
  let x0 = src0_get(a + e0 * p.A.x);
  let x1 = src0_get(a + e1 * p.A.x);
  dst_set(d + e0 * p.D.x, x0 * cs - x1 * sn);
  dst_set(d + e1 * p.D.x, x0 * sn + x1 * cs);
}

#include elementwise
