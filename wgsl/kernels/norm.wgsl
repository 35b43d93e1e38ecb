// RMS_NORM / NORM over each row of src0; one workgroup per row. Every pass reads element j
// before the same invocation writes element j, so dst may alias src0. With MUL, the result
// is multiplied by w (repeated over the rows, like a binary MUL) before it is stored.

fn store(d: u32, j: u32, wrow: u32, y: f32) {
#if MUL
  dst_set(d + j * p.D0, y * w_get(wrow + (j % p.We0) * p.W0));
#else
  dst_set(d + j * p.D0, y);
#endif
}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = group_id(wid, nwg);
  if (row >= p.Rows) { return; }
  let c = coords(row, p.Ne1, p.Ne2, 1u << 31u);
  let a = c.x * p.A1 + c.y * p.A2 + c.z * p.A3;
  let d = c.x * p.D1 + c.y * p.D2 + c.z * p.D3;
  let n = f32(p.Ne0);
  var wrow = 0u;
#if MUL
  wrow = (c.x % p.We1) * p.W1 + (c.y % p.We2) * p.W2 + (c.z % p.We3) * p.W3;
#endif
#if RMS
  var sq = 0.0;
  for (var j = lid; j < p.Ne0; j = j + {{WG}}u) { let x = src0_get(a + j * p.A0); sq = sq + x * x; }
  let scale = 1.0 / sqrt(wg_sum(lid, sq) / n + p.Eps);
  for (var j = lid; j < p.Ne0; j = j + {{WG}}u) { store(d, j, wrow, src0_get(a + j * p.A0) * scale); }
#else
  var sum = 0.0;
  for (var j = lid; j < p.Ne0; j = j + {{WG}}u) { sum = sum + src0_get(a + j * p.A0); }
  let mean = wg_sum(lid, sum) / n;
  var sq = 0.0;
  for (var j = lid; j < p.Ne0; j = j + {{WG}}u) { let x = src0_get(a + j * p.A0) - mean; sq = sq + x * x; }
  let scale = 1.0 / sqrt(wg_sum(lid, sq) / n + p.Eps);
  for (var j = lid; j < p.Ne0; j = j + {{WG}}u) { store(d, j, wrow, (src0_get(a + j * p.A0) - mean) * scale); }
#endif
}
