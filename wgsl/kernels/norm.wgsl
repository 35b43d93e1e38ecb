// RMS_NORM / NORM / L2_NORM over each row of src0; one workgroup per row. Every pass reads element j
// before the same invocation writes element j, so dst may alias src0. With MUL, the result
// is multiplied by w (repeated over the rows, like a binary MUL) before it is stored.

fn store(d: u32, j: u32, wrow: u32, y: f32) {
#if MUL
  dst_set(d + j * p.D.x, y * w_get(wrow + (j % p.We.x) * p.W.x));
#else
  dst_set(d + j * p.D.x, y);
#endif
}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = group_id(wid, nwg);
  if (row >= p.Rows) { return; }
  let c = row_coords(row, p.Ne);
  let a = offset4(c, p.A);
  let d = offset4(c, p.D);
  let n = f32(p.Ne.x);
  var wrow = 0u;
#if MUL
  wrow = offset4(c % p.We, p.W);
#endif
#if L2
  var sq = 0.0;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { let x = src0_get(a + j * p.A.x); sq = sq + x * x; }
  let scale = 1.0 / max(sqrt(wg_sum(lid, sq)), p.Eps);
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { store(d, j, wrow, src0_get(a + j * p.A.x) * scale); }
#else
#if RMS
  var sq = 0.0;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { let x = src0_get(a + j * p.A.x); sq = sq + x * x; }
  let scale = 1.0 / sqrt(wg_sum(lid, sq) / n + p.Eps);
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { store(d, j, wrow, src0_get(a + j * p.A.x) * scale); }
#else
  var sum = 0.0;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { sum = sum + src0_get(a + j * p.A.x); }
  let mean = wg_sum(lid, sum) / n;
  var sq = 0.0;
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { let x = src0_get(a + j * p.A.x) - mean; sq = sq + x * x; }
  let scale = 1.0 / sqrt(wg_sum(lid, sq) / n + p.Eps);
  for (var j = lid; j < p.Ne.x; j = j + {{WG}}u) { store(d, j, wrow, (src0_get(a + j * p.A.x) - mean) * scale); }
#endif
#endif
}
