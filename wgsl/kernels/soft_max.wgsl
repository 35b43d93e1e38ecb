// dst = softmax(src0 * scale + slope * mask) over each row; one workgroup per row.
// The mask row is broadcast: mask[j, i1 % Me.y, i2 % Me.z, i3 % Me.w].

// logit returns element j of the row at a, scaled and masked (mask row at m).
fn logit(a: u32, m: u32, j: u32, slope: f32) -> f32 {
  var v = src0_get(a + j * p.A.x) * p.Scale;
#if MASK
  v = v + slope * mask_get(m + j);
#endif
  return v;
}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = group_id(wid, nwg);
  if (row >= p.Rows) { return; }
  let c = row_coords(row, p.Ne);
  let a = offset4(c, p.A);
  let d = offset4(c, p.D);
  var slope = 1.0;
  if (p.MaxBias > 0.0) {
    let h = c.z;
    if (h < p.NHeadLog2) { slope = pow(p.M0, f32(h + 1u)); } else { slope = pow(p.M1, f32(2u * (h - p.NHeadLog2) + 1u)); }
  }
  var m = 0u;
#if MASK
  m = offset4(c % p.Me, p.M);
#endif
  var mx = -3.402823e38;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { mx = max(mx, logit(a, m, j, slope)); }
  mx = wg_max(lid, mx);
  var sum = 0.0;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) {
    let v = logit(a, m, j, slope);
    if (v > -3.402823e38) { sum = sum + exp(v - mx); }
  }
  sum = wg_sum(lid, sum);
  let inv = select(0.0, 1.0 / sum, sum > 0.0);
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) {
    let v = logit(a, m, j, slope);
    var e = 0.0;
    if (v > -3.402823e38) { e = exp(v - mx); }
    dst_set(d + j * p.D.x, e * inv);
  }
}
