// GATED_DELTA_NET (ops/gated_delta_net.go): a workgroup takes ROWS rows j of the state
// (transposed: row j is state[:, j]) of one head h and sequence sq, LANES invocations a
// row, each holding elements i = lane + LANES e (e < ELEMS) of its row in registers over
// every token. Per token one reduction over the row's lanes gives M[j] . k, M[j] . q and
// k . q after the decay; out[j] = (M[j] . q + delta (k . q)) scale is then M[j] . q after
// the update. With CACHE (one snapshot) the final state is stored into cache too, a
// sequence's state a row of p.CacheRow elements (the fusion row gated_delta_net+cpy).
#include row_lanes

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let gi = group_id(wid, nwg);
  if (gi >= p.Blocks * p.Heads * p.Seqs) { return; } // uniform: the whole workgroup
  let lane = lid % LANES;
  let r = lid / LANES;
  let j = (gi % p.Blocks) * ROWS + r;
  let hs = gi / p.Blocks;
  let h = hs % p.Heads;
  let sq = hs / p.Heads;
  let row_ok = j < p.Size;
  let jc = min(j, p.Size - 1u);
  var m: array<f32, ELEMS>;
  var kk: array<f32, ELEMS>;
  for (var e = 0u; e < ELEMS; e = e + 1u) {
    let i = lane + LANES * e;
    m[e] = 0.0;
    if (row_ok && i < p.Size) { m[e] = state_get(i * p.S.x + j * p.S.y + h * p.S.z + sq * p.S.w); }
  }
  let out_elems = p.Size * p.Heads * p.Tokens * p.Seqs;
  let snap_elems = p.Size * p.Size * p.Heads * p.Seqs;
  let qh = (h % p.QHeads) * p.Q.y + (sq / p.QSeqDiv) * p.Q.w;
  let kh = (h % p.KHeads) * p.K.y + (sq / p.KSeqDiv) * p.K.w;
  for (var t = 0u; t < p.Tokens; t = t + 1u) {
    let qb = qh + t * p.Q.z;
    let kb = kh + t * p.K.z;
    let gb = h * p.G.y + t * p.G.z + sq * p.G.w;
    var acc = vec4<f32>(0.0);
    for (var e = 0u; e < ELEMS; e = e + 1u) {
      let i = lane + LANES * e;
      var ki = 0.0;
      var qi = 0.0;
      var decay = 1.0;
      if (i < p.Size) {
        ki = k_get(kb + i * p.K.x);
        qi = q_get(qb + i * p.Q.x);
        decay = exp(g_get(gb + select(0u, i, p.GVec != 0u) * p.G.x));
      }
      kk[e] = ki;
      m[e] = m[e] * decay;
      acc = acc + vec4<f32>(m[e] * ki, m[e] * qi, ki * qi, 0.0);
    }
    let dots = lanes_sum(lid, acc);
    let beta = beta_get(h * p.B.y + t * p.B.z + sq * p.B.w);
    let delta = (v_get(jc * p.V.x + h * p.V.y + t * p.V.z + sq * p.V.w) - dots.x) * beta;
    for (var e = 0u; e < ELEMS; e = e + 1u) { m[e] = m[e] + kk[e] * delta; }
    if (row_ok && lane == 0u) {
      dst_set(j + p.Size * (h + p.Heads * (t + p.Tokens * sq)), (dots.y + delta * dots.z) * p.Scale);
    }
    let slot = p.Tokens - 1u - t;
    if (row_ok && slot < p.Snapshots) {
      let base = out_elems + slot * snap_elems + ((sq * p.Heads + h) * p.Size + j) * p.Size;
#if CACHE
      let cbase = sq * p.CacheRow + (h * p.Size + j) * p.Size; // the final state (slot 0 of one)
#endif
      for (var e = 0u; e < ELEMS; e = e + 1u) {
        let i = lane + LANES * e;
        if (i < p.Size) {
          dst_set(base + i, m[e]);
#if CACHE
          cache_set(cbase + i, m[e]);
#endif
        }
      }
    }
  }
}
