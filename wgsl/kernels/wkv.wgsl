// RWKV_WKV6, GATED_LINEAR_ATTN and RWKV_WKV7 (ops/wkv.go; the form WKV6, GLA or WKV7): a
// workgroup takes ROWS rows of one head h's state for one sequence sq, LANES invocations
// a row, each holding elements c = lane + LANES e of its row in registers over the
// sequence's tokens. Row r, element c is the state's r RowStride + c ElemStride.
#include row_lanes

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let gi = group_id(wid, nwg);
  if (gi >= p.Blocks * p.Heads * p.Seqs) { return; } // uniform: the whole workgroup
  let lane = lid % LANES;
  let row = (gi % p.Blocks) * ROWS + lid / LANES;
  let hs = gi / p.Blocks;
  let h = hs % p.Heads;
  let sq = hs / p.Heads;
  let row_ok = row < p.Size;
  let rc = min(row, p.Size - 1u);
  let width = p.Size * p.Heads; // a token's elements
  let state_base = (sq * p.Heads + h) * p.Size * p.Size + rc * p.RowStride;
  var m: array<f32, ELEMS>;
  var kk: array<f32, ELEMS>; // the token's k at the row's elements
  var dd: array<f32, ELEMS>; // its decay (td, g or w)
#if WKV7
  var bb: array<f32, ELEMS>;
#endif
  for (var e = 0u; e < ELEMS; e = e + 1u) {
    let c = lane + LANES * e;
    m[e] = 0.0;
    if (c < p.Size) { m[e] = state_get(state_base + c * p.ElemStride); }
  }
  let per_seq = p.Tokens / p.Seqs;
  for (var tt = 0u; tt < per_seq; tt = tt + 1u) {
    let tb = (sq * per_seq + tt) * width + h * p.Size; // the token's head
    var acc = vec4<f32>(0.0);
    for (var e = 0u; e < ELEMS; e = e + 1u) {
      let c = lane + LANES * e;
      kk[e] = 0.0;
      dd[e] = 0.0;
      if (c < p.Size) {
        let x = tb + c;
        kk[e] = k_get(x);
#if WKV6
        dd[e] = td_get(x);
        let rv = r_get(x);
        acc = acc + vec4<f32>(rv * m[e], rv * tf_get(h * p.Size + c) * kk[e], 0.0, 0.0);
#endif
#if GLA
        dd[e] = g_get(x);
        let qv = q_get(x) * p.Scale;
        acc = acc + vec4<f32>(m[e] * dd[e] * qv, kk[e] * qv, 0.0, 0.0);
#endif
#if WKV7
        dd[e] = w_get(x);
        bb[e] = b_get(x);
        let rv = r_get(x);
        acc = acc + vec4<f32>(a_get(x) * m[e], m[e] * dd[e] * rv, kk[e] * rv, bb[e] * rv);
#endif
      }
    }
    let sums = lanes_sum(lid, acc);
    let vr = v_get(tb + rc);
#if WKV7
    let y = sums.y + vr * sums.z + sums.x * sums.w;
    for (var e = 0u; e < ELEMS; e = e + 1u) { m[e] = m[e] * dd[e] + vr * kk[e] + sums.x * bb[e]; }
#else
    let y = sums.x + vr * sums.y;
    for (var e = 0u; e < ELEMS; e = e + 1u) { m[e] = m[e] * dd[e] + kk[e] * vr; }
#endif
    if (row_ok && lane == 0u) { dst_set(tb + row, y); }
  }
  if (row_ok) {
    let out = width * p.Tokens + state_base;
    for (var e = 0u; e < ELEMS; e = e + 1u) {
      let c = lane + LANES * e;
      if (c < p.Size) { dst_set(out + c * p.ElemStride, m[e]); }
    }
  }
}
