// llama's router of a mixture of experts in one dispatch (ops/moe_router.go), one
// workgroup per token: the softmax of the token's logits (src0 * Scale, as soft_max.wgsl
// computes it: the same workgroup size and order of operations) stored to probs; the
// experts sorted by probability, descending, equal ones in index order (as sort.wgsl),
// stored to sorted; the first K experts' probabilities stored to weights; with NORM, those
// divided by their sum clamped to [Lo, Hi] stored to norm.
const NP = {{NP}}u; // the experts rounded up to a power of two
var<workgroup> prob: array<f32, {{NP}}>;
var<workgroup> order: array<u32, {{NP}}>;

// precedes reports whether expert x comes before expert y in the sorted row (a unused:
// the row is in prob).
fn precedes(a: u32, x: u32, y: u32) -> bool {
  if (x >= p.E || y >= p.E) { return x < y; }
  let vx = prob[x];
  let vy = prob[y];
  return vx > vy || (vx == vy && x < y);
}

#include bitonic

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = group_id(wid, nwg);
  if (t >= p.T) { return; }
  let a = t * p.A.y;
  var mx = bitcast<f32>(0xff800000u); // -Inf
  for (var j = lid; j < p.E; j = j + {{WG}}u) { mx = max(mx, src0_get(a + j * p.A.x) * p.Scale); }
  mx = wg_max(lid, mx);
  var sum = 0.0;
  for (var j = lid; j < p.E; j = j + {{WG}}u) { sum = sum + exp(src0_get(a + j * p.A.x) * p.Scale - mx); }
  let inv = 1.0 / wg_sum(lid, sum);
  for (var j = lid; j < NP; j = j + {{WG}}u) {
    if (j < p.E) {
      let v = exp(src0_get(a + j * p.A.x) * p.Scale - mx) * inv;
      prob[j] = v;
      probs_set(t * p.P.y + j * p.P.x, v);
    }
    order[j] = j;
  }
  workgroupBarrier();
  bitonic(lid, 0u);
  for (var j = lid; j < p.E; j = j + {{WG}}u) { sorted_seti(t * p.S.y + j * p.S.x, i32(order[j])); }
  if (lid == 0u) {
    var total = 0.0;
    for (var i = 0u; i < p.K; i = i + 1u) {
      let w = prob[order[i]];
      weights_set(t * p.W.z + i * p.W.y, w);
      total = total + w;
    }
#if NORM
    let c = max(min(total, p.Hi), p.Lo);
    for (var i = 0u; i < p.K; i = i + 1u) {
      norm_set(t * p.N.y + i * p.N.x, prob[order[i]] / c);
    }
#endif
  }
}
