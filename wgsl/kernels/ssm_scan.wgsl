// SSM_SCAN (ops/ssm_scan.go): a workgroup takes ROWS rows (i, h) (row r = i + dim h) of
// one sequence sq, LANES invocations a row, each holding states c = lane + LANES e of its
// row in registers over every token; per token one reduction over the row's lanes gives
// y. dst holds y, then each sequence's last state, then the snapshots.
#include row_lanes

fn softplus(v: f32) -> f32 { return select(log(1.0 + exp(v)), v, v > 20.0); }

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let gi = group_id(wid, nwg);
  if (gi >= p.Blocks * p.Seqs) { return; } // uniform: the whole workgroup
  let lane = lid % LANES;
  let rows = p.Dim * p.Heads;
  let row = (gi % p.Blocks) * ROWS + lid / LANES;
  let sq = gi / p.Blocks;
  let row_ok = row < rows;
  let rc = min(row, rows - 1u);
  let i = rc % p.Dim;
  let h = rc / p.Dim;
  let g = h / p.GroupHeads;
  let src = u32(clamp(ids_geti(sq), 0, i32(p.StateRows) - 1)); // the sequence's row of states
  var st: array<f32, ELEMS>;
  for (var e = 0u; e < ELEMS; e = e + 1u) {
    let c = lane + LANES * e;
    st[e] = 0.0;
    if (c < p.State) { st[e] = s_get(c * p.S.x + i * p.S.y + h * p.S.z + src * p.S.w); }
  }
  let y_elems = rows * p.Tokens * p.Seqs;
  let state_elems = p.State * rows; // a sequence's
  for (var t = 0u; t < p.Tokens; t = t + 1u) {
    let dtp = softplus(dt_get(h * p.DT.x + t * p.DT.y + sq * p.DT.z));
    let xdt = x_get(i * p.X.x + h * p.X.y + t * p.X.z + sq * p.X.w) * dtp;
    let bc = g * p.B.y + t * p.B.z + sq * p.B.w;
    let cc = g * p.C.y + t * p.C.z + sq * p.C.w;
    var y = 0.0;
    for (var e = 0u; e < ELEMS; e = e + 1u) {
      let c = lane + LANES * e;
      if (c < p.State) {
        let decay = exp(dtp * a_get(select(0u, c, p.AVec != 0u) * p.A.x + h * p.A.y));
        st[e] = st[e] * decay + b_get(bc + c * p.B.x) * xdt;
        y = y + st[e] * c_get(cc + c * p.C.x);
      }
    }
    let sum = lanes_sum(lid, vec4<f32>(y, 0.0, 0.0, 0.0)).x;
    if (row_ok && lane == 0u) { dst_set(rc + rows * (t + p.Tokens * sq), sum); }
    let slot = p.Tokens - 1u - t; // 0: the last state
    if (row_ok && slot < p.Snapshots) {
      let base = y_elems + (slot * p.Seqs + sq) * state_elems + rc * p.State;
      for (var e = 0u; e < ELEMS; e = e + 1u) {
        let c = lane + LANES * e;
        if (c < p.State) { dst_set(base + c, st[e]); }
      }
    }
  }
}
