// llama's router of a mixture of experts in one dispatch (ops/moe_router.go), one
// workgroup per token: the softmax of the token's logits (src0 * Scale, through
// soft_max_row.wgsl as soft_max.wgsl, at its workgroup size) stored to probs; the
// experts sorted by probability, descending, equal ones in index order (as sort.wgsl),
// stored to sorted; the first K experts' probabilities stored to weights; with NORM, those
// divided by their sum clamped to [Lo, Hi] stored to norm. The logits are read once, into
// workgroup memory. With RANK (rows of few experts) each expert's place in the order is
// the count of those before it, every expert at once; else the bitonic network sorts them.
const NP = {{NP}}u; // the experts rounded up to a power of two
var<workgroup> row: array<f32, {{NP}}>; // the scaled logits, then the probabilities
var<workgroup> order: array<u32, {{NP}}>;

// precedes reports whether expert x comes before expert y in the sorted row (a unused:
// the row is in workgroup memory).
fn precedes(a: u32, x: u32, y: u32) -> bool {
  if (x >= p.E || y >= p.E) { return x < y; }
  let vx = row[x];
  let vy = row[y];
  return vx > vy || (vx == vy && x < y);
}

#include soft_max_row
#include bitonic

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = group_id(wid, nwg);
  if (t >= p.T) { return; }
  let a = t * p.A.y;
  for (var j = lid; j < p.E; j = j + {{WG}}u) { row[j] = src0_get(a + j * p.A.x) * p.Scale; }
  workgroupBarrier();
  let mx = row_max(lid, p.E, a, 0u, 0.0);
  let inv = 1.0 / row_sum(lid, p.E, a, 0u, 0.0, mx);
  // (the reductions end with a barrier: every logit has been read)
  for (var j = lid; j < NP; j = j + {{WG}}u) {
    if (j < p.E) {
      let v = exp(row[j] - mx) * inv;
      row[j] = v;
      probs_set(t * p.P.y + j * p.P.x, v);
    } else {
      row[j] = -1.0;
    }
    order[j] = j;
  }
  // The stores below may lie over the logits and the softmax of a single token
  // (guardMoERouter): every read of them and every softmax store comes first.
  storageBarrier();
  workgroupBarrier();
#if RANK
  // Expert j's place: the experts before it (larger, or equal and of a lower index), counted
  // for this invocation's RPT experts at once, U values read at a time (the padding past
  // the last expert holds -1, after every probability).
  var vj: array<f32, {{RPT}}>;
  var rank: array<u32, {{RPT}}>;
  for (var k = 0u; k < {{RPT}}u; k = k + 1u) {
    vj[k] = row[min(lid + k * {{WG}}u, p.E - 1u)];
    rank[k] = 0u;
  }
  for (var i = 0u; i < NP; i = i + {{U}}u) {
#for Q {{U}}
    let v{{Q}} = row[i + {{Q}}u];
#endfor
    for (var k = 0u; k < {{RPT}}u; k = k + 1u) {
      let j = lid + k * {{WG}}u;
#for Q {{U}}
      rank[k] = rank[k] + u32(v{{Q}} > vj[k] || (v{{Q}} == vj[k] && i + {{Q}}u < j));
#endfor
    }
  }
  for (var k = 0u; k < {{RPT}}u; k = k + 1u) {
    let j = lid + k * {{WG}}u;
    if (j < p.E) { order[rank[k]] = j; }
  }
  workgroupBarrier();
#else
  bitonic(lid, 0u);
#endif
  for (var j = lid; j < p.E; j = j + {{WG}}u) { sorted_seti(t * p.S.y + j * p.S.x, i32(order[j])); }
  if (lid == 0u) {
    var total = 0.0;
    for (var i = 0u; i < p.K; i = i + 1u) {
      let w = row[order[i]];
      weights_set(t * p.W.z + i * p.W.y, w);
      total = total + w;
    }
#if NORM
    let c = max(min(total, p.Hi), p.Lo);
    for (var i = 0u; i < p.K; i = i + 1u) {
      norm_set(t * p.N.y + i * p.N.x, row[order[i]] / c);
    }
#endif
  }
}
