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
#if MROPE
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

// RopeSlot is where one pair slot lies: the offsets of its two elements under the source's
// and the result's strides, its slot q in the row and its token (i2).
struct RopeSlot {
  src: vec2<u32>,
  dst: vec2<u32>,
  q: u32,
  t: u32,
}

// rope_slot places pair slot i of a tensor of shape ne (slots in order over rows of
// ne.x / 2, then dims 1, 2, 3) with source strides a and result strides d. A kernel that
// ropes two tensors with the same parameters (Q and K) places each with its own shape.
fn rope_slot(i: u32, ne: vec4<u32>, a: vec4<u32>, d: vec4<u32>) -> RopeSlot {
  let c = coords(i, vec4<u32>(ne.x / 2u, ne.y, ne.z, ne.w)); // c.x: pair slot q; c.y: i1; c.z: i2 (token); c.w: i3
  let q = c.x;
  let rc = vec4<u32>(0u, c.y, c.z, c.w);
  var e0 = 0u;
  var e1 = 0u;
  if (q >= p.NRot) {
    // pass-through pairs: those before the rotated window, then those after it
    let r = 2u * (q - p.NRot);
    e0 = r;
    if (r >= p.NOffs) { e0 = r + p.NDims; }
    e1 = e0 + 1u;
  } else {
#if NORMAL
    e0 = p.NOffs + 2u * q;
#else
    e0 = p.NOffs + q;
#endif
    e1 = e0 + p.Partner;
  }
  let sa = offset4(rc, a);
  let sd = offset4(rc, d);
  return RopeSlot(vec2<u32>(sa + e0 * a.x, sa + e1 * a.x), vec2<u32>(sd + e0 * d.x, sd + e1 * d.x), q, c.z);
}

// rope_rotate returns the two values x of slot s rotated by the slot's angle (pass-through
// slots keep them).
fn rope_rotate(s: RopeSlot, x: vec2<f32>) -> vec2<f32> {
  if (s.q >= p.NRot) { return x; }
  let base = rope_base(s.q, s.t);
  var theta_extrap = base.x * pow(p.ThetaScale, base.y);
#if FREQ_FACTORS
  theta_extrap = theta_extrap / ff_get(s.q);
#endif
  let theta_interp = p.FreqScale * theta_extrap;
  var theta = theta_interp;
  if (p.ExtFactor != 0.0) {
    let mix = yarn_ramp(p.Corr0, p.Corr1, s.q) * p.ExtFactor;
    theta = theta_interp * (1.0 - mix) + theta_extrap * mix;
  }
  let cs = cos(theta) * p.MScale;
  let sn = sin(theta) * p.MScale;
  return vec2<f32>(x.x * cs - x.y * sn, x.x * sn + x.y * cs);
}

#if ROPE_KV
// (the integer mat-vec's ROPE_KV form rotates values it holds: no rope_pair)
#else
// rope_pair computes pair slot i of the whole tensor p.Ne (src0 under p.A, the result under
// p.D). It reads both elements of src0 before returning, so a caller may store the result
// over them.
fn rope_pair(i: u32) -> RopePair {
  let s = rope_slot(i, p.Ne, p.A, p.D);
  let x = vec2<f32>(src0_get(s.src.x), src0_get(s.src.y));
  return RopePair(s.dst, rope_rotate(s, x));
}
#endif
