// Flash attention for decoding over short caches (see ops/flash_attn_vec.go): one
// workgroup per query row (query i of head h), every KV position at once, no split and so
// no second dispatch. Three phases, each over all positions:
//  1. scores: thread t scores positions t, t + WG, ... (the scaled Q row in workgroup
//     memory; softcap, ALiBi-sloped mask; a masked position's K is never read), and the
//     workgroup's max by a tree;
//  2. weights exp(score - max) in place (0 where masked);
//  3. values: thread (cg, part) adds the weighted V columns 8 cg .. 8 cg + 7 of positions
//     part, part + PARTS, ... (a zero weight adds nothing, whatever V holds there) and the
//     weights; the PARTS partial rows are added up in workgroup memory and the row is
//     normalised (with the sink's logit where there is one) into dst.
// VP > 0: each thread loads its VP V rows before the scores, so that their latency
// overlaps phases 1 and 2 (the positions past NKV are not loaded).
const PARTS = {{PARTS}}u; // WG / (Dv / 8)
const MAXKV = {{MAXKV}}u;

var<workgroup> qs: array<vec4<f32>, {{QS}}>;        // the scaled Q row (D / 4)
var<workgroup> sc: array<f32, MAXKV>;               // scores, then weights
var<workgroup> red: array<f32, {{WG}}>;             // the max's tree
var<workgroup> accs: array<vec4<f32>, {{ACCS}}>;    // [PARTS][Dv / 4] partial rows
var<workgroup> lparts: array<f32, PARTS>;           // the weights' partial sums

#include flash_attn_io

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  formats_init(lid); // tables of quantized formats
  let g = wid.x + wid.y * nwg.x;
  if (g >= p.NQ * p.NHead * p.NSeq) { return; }
  let i = g % p.NQ;
  let h = (g / p.NQ) % p.NHead;
  let seq = g / (p.NQ * p.NHead);
  let kvh = h / p.RK2;
  let kbase = kvh * p.K.z + seq * p.K.w;
  let vbase = kvh * p.V.z + seq * p.V.w;
  let dq4 = p.D / 4u;
  let dv4 = p.Dv / 4u;
  let ncg = p.Dv / 8u;
  let cg = lid % ncg;
  let part = lid / ncg;

#if VP
  var vpre: array<mat2x4<f32>, {{VP}}>;
  for (var k = 0u; k < {{VP}}u; k = k + 1u) {
    let t = part + k * PARTS;
    vpre[k] = mat2x4<f32>();
    if (part < PARTS && t < p.NKV) { vpre[k] = v8(vbase + t * p.V.y + 8u * cg); }
  }
#endif
  for (var e = lid; e < dq4; e = e + {{WG}}u) {
    let b = i * p.Q.y + h * p.Q.z + seq * p.Q.w + 4u * e * p.Q.x;
    qs[e] = vec4<f32>(q_get(b), q_get(b + p.Q.x), q_get(b + 2u * p.Q.x), q_get(b + 3u * p.Q.x)) * p.Scale;
  }
  // ALiBi: slope m0^(h+1) for the first NHeadLog2 heads, m1^(2(h-NHeadLog2)+1) after; the
  // bases come as their log2 (0 without ALiBi: slope 1).
  let slope = exp2(select(p.L1 * f32(2u * (h - p.NHeadLog2) + 1u), p.L0 * f32(h + 1u), h < p.NHeadLog2));
  let mrow = i * p.M.y + (h % p.Me.z) * p.M.z + (seq % p.Me.w) * p.M.w;
  workgroupBarrier();

  // 1. scores and this thread's max
  var mx = neg_inf();
  for (var t = lid; t < p.NKV; t = t + {{WG}}u) {
    var mv = 0.0;
#if MASK
    mv = slope * mask_get(mrow + t);
#endif
    var x = neg_inf();
    if (!is_neg_inf(mv)) {
      let kb = kbase + t * p.K.y;
      var d = 0.0;
      for (var c = 0u; c < p.D / 8u; c = c + 1u) {
        let kk = k8(kb + 8u * c);
        d = d + dot(kk[0], qs[2u * c]) + dot(kk[1], qs[2u * c + 1u]);
      }
      if (p.Softcap != 0.0) { d = p.Softcap * tanh(d); }
      x = d + mv;
    }
    sc[t] = x;
    mx = max(mx, x);
  }
  red[lid] = mx;
  workgroupBarrier();
  for (var s = {{WG}}u / 2u; s > 0u; s = s / 2u) {
    if (lid < s) { red[lid] = max(red[lid], red[lid + s]); }
    workgroupBarrier();
  }
  let m = red[0];

  // 2. weights (every one 0 when every position is masked)
  for (var t = lid; t < p.NKV; t = t + {{WG}}u) {
    let x = sc[t];
    sc[t] = select(exp(x - m), 0.0, is_neg_inf(x));
  }
  workgroupBarrier();

  // 3. the weighted V rows of this thread's positions
  var a0 = vec4<f32>(0.0);
  var a1 = vec4<f32>(0.0);
  var l = 0.0;
  if (part < PARTS) {
#if VP
    for (var k = 0u; k < {{VP}}u; k = k + 1u) {
      let t = part + k * PARTS;
      if (t < p.NKV) {
        let w = sc[t];
        l = l + w;
        a0 = a0 + select(vec4<f32>(0.0), w * vpre[k][0], w != 0.0);
        a1 = a1 + select(vec4<f32>(0.0), w * vpre[k][1], w != 0.0);
      }
    }
#else
    for (var t = part; t < p.NKV; t = t + PARTS) {
      let w = sc[t];
      l = l + w;
      if (w != 0.0) {
        let vv = v8(vbase + t * p.V.y + 8u * cg);
        a0 = a0 + select(vec4<f32>(0.0), w * vv[0], w != 0.0);
        a1 = a1 + select(vec4<f32>(0.0), w * vv[1], w != 0.0);
      }
    }
#endif
    accs[part * dv4 + 2u * cg] = a0;
    accs[part * dv4 + 2u * cg + 1u] = a1;
    if (cg == 0u) { lparts[part] = l; }
  }
  workgroupBarrier();

  let row = (seq * p.NQ + i) * p.NHead + h; // dst row: [Dv, n_head, n_q, n_seq]
  for (var e = lid; e < dv4; e = e + {{WG}}u) {
    var o = vec4<f32>(0.0);
    var sum = 0.0;
    for (var q = 0u; q < PARTS; q = q + 1u) {
      o = o + accs[q * dv4 + e];
      sum = sum + lparts[q];
    }
#if SINKS
    // The sink: one more logit, with no value.
    let sk = sinks_get(h);
    let mn = max(m, sk);
    let a = select(exp(m - mn), 0.0, is_neg_inf(m));
    sum = sum * a + exp(sk - mn);
    o = o * a;
#endif
    let inv = select(1.0 / sum, 0.0, sum == 0.0);
    for (var k = 0u; k < 4u; k = k + 1u) { dst_set(row * p.Dv + 4u * e + k, o[k] * inv); }
  }
}
