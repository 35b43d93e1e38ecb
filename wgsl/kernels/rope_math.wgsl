// The rotation of ROPE, every mode, shared by the ROPE kernel and the fused ROPE + SET_ROWS
// kernel (included by both; they bind the operands src0, pos and, with FREQ_FACTORS, ff,
// and their parameters start with ROPE's). Pair slot q of a row (ne0/2 slots): slots below
// p.NRot rotate the pair (e0, e0 + p.Partner), the rest carry a pass-through pair. The
// angle of slot q is pos * ThetaScale^q (divided by the frequency factor of q, then YaRN);
// the multi-section modes take pos from one of four positions per token, chosen by the
// slot's sector (q modulo the sections' total width).
fn yarn_ramp(low: f32, high: f32, q: u32) -> f32 {
  let y = (f32(q) - low) / max(0.001, high - low);
  return 1.0 - min(1.0, max(0.0, y));
}

// The position (before frequency scaling) and the power of ThetaScale of slot q of a row of
// token t.
fn rope_base(q: u32, t: u32) -> vec2<f32> {
#if MULTI
  let start = vec4<u32>(0u, p.Sec.x, p.Sec.x + p.Sec.y, p.Sec.x + p.Sec.y + p.Sec.z);
  let s = q % (start.w + p.Sec.w);
  var k = 0u; // 0: t, 1: h, 2: w, 3: e
#if IMROPE
  // interleaved: sectors cycle t, h, w over three times each section's width
  if (s % 3u == 1u && s < 3u * p.Sec.y) {
    k = 1u;
  } else if (s % 3u == 2u && s < 3u * p.Sec.z) {
    k = 2u;
  } else if (s % 3u == 0u && s < 3u * p.Sec.x) {
    k = 0u;
  } else {
    k = 3u;
  }
#else
  if (s >= start.w) {
    k = 3u;
  } else if (s >= start.z) {
    k = 2u;
  } else if (s >= start.y) {
    k = 1u;
  }
#endif
  var e = q;
#if VISION
  if (p.Reset[k] != 0u) { e = s - start[k]; }
#endif
  return vec2<f32>(f32(pos_geti(t + k * p.Ne.z)), f32(e));
#else
  return vec2<f32>(f32(pos_geti(t)), f32(q));
#endif
}

// RopePair is one pair slot's result: the offsets of its two elements under the result's
// strides p.D, and their values.
struct RopePair {
  at: vec2<u32>,
  v: vec2<f32>,
}

// rope_pair computes pair slot i of the whole tensor (slots in order over rows of
// p.Ne.x / 2, then dims 1, 2, 3). It reads both elements of src0 before returning, so a
// caller may store the result over them.
fn rope_pair(i: u32) -> RopePair {
  let half = p.Ne.x / 2u;
  let c = coords(i, vec4<u32>(half, p.Ne.y, p.Ne.z, p.Ne.w)); // c.x: pair slot q; c.y: i1; c.z: i2 (token); c.w: i3
  let q = c.x;
  let rc = vec4<u32>(0u, c.y, c.z, c.w);
  let a = offset4(rc, p.A);
  let d = offset4(rc, p.D);
  if (q >= p.NRot) {
    // pass-through pairs: those before the rotated window, then those after it
    let r = 2u * (q - p.NRot);
    var e = r;
    if (r >= p.NOffs) { e = r + p.NDims; }
    let x = vec2<f32>(src0_get(a + e * p.A.x), src0_get(a + (e + 1u) * p.A.x));
    return RopePair(vec2<u32>(d + e * p.D.x, d + (e + 1u) * p.D.x), x);
  }
#if NORMAL
  let e0 = p.NOffs + 2u * q;
#else
  let e0 = p.NOffs + q;
#endif
  let e1 = e0 + p.Partner;
  let base = rope_base(q, c.z);
  var theta_extrap = base.x * pow(p.ThetaScale, base.y);
#if FREQ_FACTORS
  theta_extrap = theta_extrap / ff_get(q);
#endif
  let theta_interp = p.FreqScale * theta_extrap;
  var theta = theta_interp;
  if (p.ExtFactor != 0.0) {
    let mix = yarn_ramp(p.Corr0, p.Corr1, q) * p.ExtFactor;
    theta = theta_interp * (1.0 - mix) + theta_extrap * mix;
  }
  let cs = cos(theta) * p.MScale;
  let sn = sin(theta) * p.MScale;
  let x0 = src0_get(a + e0 * p.A.x);
  let x1 = src0_get(a + e1 * p.A.x);
  return RopePair(vec2<u32>(d + e0 * p.D.x, d + e1 * p.D.x), vec2<f32>(x0 * cs - x1 * sn, x0 * sn + x1 * cs));
}
